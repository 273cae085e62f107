"""The clusters after an iteration's data pass, as the moves made from statistics alone (the
approximate moves of :mod:`~dpclust.samplers.subcluster.approximate`) change them, and the
relabelling that gives them back as a state in the canonical order (by first member).
"""

from __future__ import annotations

import numpy as np

from ...families.base import concatenate, take
from .schedule import data_side
from .slots import _pairs_combined
from .state import SubclusterState


class _Cluster:
    """A cluster after the moves of one iteration, built from keys ``4k + code`` of the pass."""

    __slots__ = ("age", "anchor", "anchor_key", "best", "first", "keys", "loglik", "n",
                 "stats", "sub", "sub_keys")

    def __init__(self, keys, stats, n, first, anchor, age, sub, sub_keys, loglik,
                 best=-np.inf, anchor_key=1.0):
        self.keys = keys          # pass keys (4k + code) whose points form this cluster
        self.stats = stats        # its statistics (one row)
        self.n = n
        self.first = first
        self.anchor = anchor      # a uniform member, the one with the smallest key
        self.anchor_key = anchor_key
        self.age = age
        self.sub = sub            # statistics of its two sub-clusters (two rows) or None
        self.sub_keys = sub_keys  # (keys of sub-cluster 0, of 1) when sub-labels are reassigned
        self.loglik = loglik
        self.best = best          # highest log ratio of its sub-cluster split so far

    def restart_subclusters(self):
        """New sub-clusters from seeds at the next pass."""
        self.age, self.sub, self.loglik, self.best = 0, None, (-np.inf, -np.inf), -np.inf


def clusters_after_pass(fam, run, K, age, state, accepted):
    """The K clusters of the pass ``run`` (sub-clusters, anchors, burn-in records); ``age``
    and ``accepted`` say whether the pass moved the labels."""
    clusters = []
    ll = run.loglik.reshape(K, 2).sum(axis=1)
    whole = _pairs_combined(fam, run.stats, K)
    best = (state.split_best if state.split_best is not None
            else np.full(K, -np.inf))
    for k in range(K):
        sub = take(run.stats, [2 * k, 2 * k + 1])
        n0, n1 = int(run.counts[2 * k]), int(run.counts[2 * k + 1])
        firsts = [f for f in (run.first[2 * k], run.first[2 * k + 1]) if f >= 0]
        anchor, anchor_key = _smaller_key(run, 2 * k, 2 * k + 1)
        if not accepted:
            loglik = (float(state.sub_loglik[k]), -np.inf)
        elif state.age[k] == 0:  # this pass drew its sub-labels afresh
            loglik = (-np.inf, -np.inf)
        else:
            loglik = (float(ll[k]), float(state.sub_loglik[k]))
        clusters.append(_Cluster(
            keys=[4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3],
            stats=take(whole, [k]), n=n0 + n1,
            first=min(firsts), anchor=anchor, age=int(age[k]), sub=sub, sub_keys=None,
            loglik=loglik, best=-np.inf if state.age[k] == 0 else float(best[k]),
            anchor_key=anchor_key))
    return clusters


def merge_into(cfg, clusters, i, j, both):
    """Cluster i becomes i ∪ j, with the two old clusters as its sub-clusters."""
    ci, cj = clusters[i], clusters[j]
    low = ci if ci.anchor_key <= cj.anchor_key else cj  # a uniform member of the union
    clusters[i] = _Cluster(ci.keys + cj.keys, both, ci.n + cj.n, min(ci.first, cj.first),
                           low.anchor, cfg.split_delay, concatenate(ci.stats, cj.stats),
                           (ci.keys, cj.keys), (-np.inf, -np.inf),
                           anchor_key=low.anchor_key)
    clusters[j] = None


def relabel(cfg, model, run, clusters, K, alpha) -> SubclusterState:
    """Step 4 of an iteration: the state of the live ``clusters`` in the canonical order (by
    first member), with the labels relabelled once (or kept where nothing moved)."""
    live = [c for c in clusters if c is not None]
    order = sorted(range(len(live)), key=lambda a: live[a].first)
    label_map = np.empty(4 * K, dtype=np.int64)
    sub_map = np.full(4 * K, 2, dtype=np.int8)
    identity = True
    for new_id, a in enumerate(order):
        c = live[a]
        label_map[c.keys] = new_id
        if c.sub_keys is not None:
            sub_map[c.sub_keys[0]] = 0
            sub_map[c.sub_keys[1]] = 1
            identity = False
        if c.keys != [4 * new_id, 4 * new_id + 1, 4 * new_id + 2, 4 * new_id + 3]:
            identity = False
    live = [live[a] for a in order]
    if identity and run.counts[2 * K:].sum() == 0:  # no random-split codes either
        labels, sub = run.labels, run.codes
    else:
        labels, sub = data_side(cfg, model).relabel(run.labels, run.codes, label_map, sub_map)
    # a cluster whose sub-clusters start afresh keeps its statistics in its first slot
    fam = model.family
    sub_stats = concatenate(*(c.sub if c.sub is not None
                              else concatenate(c.stats, fam.empty_stats(1)) for c in live))
    age = np.array([c.age for c in live], dtype=np.int64)
    anchors = np.array([c.anchor for c in live], dtype=np.int64)
    sub_ll = np.array([c.loglik[0] for c in live])
    best = np.array([c.best for c in live])
    return SubclusterState(labels, sub, alpha, age, sub_stats, anchors, sub_ll, best)


def _smaller_key(run, a, b):
    """``(member, key)`` of the union of slots a and b: the member with the smaller key (a
    uniform member of the union, since each slot's is the smallest of uniform keys)."""
    j = a if run.member_key[a] <= run.member_key[b] else b
    return int(run.member[j]), float(run.member_key[j])


def _new_cluster(run, keys, stats, slot):
    """A cluster made of pass slot ``slot``, with new sub-clusters."""
    return _Cluster(keys, stats, int(run.counts[slot]), int(run.first[slot]),
                    int(run.member[slot]), 0, None, None, (-np.inf, -np.inf),
                    anchor_key=float(run.member_key[slot]))
