"""The multi-way moves (:mod:`.multiway`) on data in partitions: on a Dask cluster, and
in-process with its partition layout.  The same proposals and ratios; the allocation visits
the partitions in turn (:mod:`dpclust.samplers._partitioned_moves`), a split's further
anchors are the members with the smallest point keys (an ordered uniform sample), and the
labels change on the partitions, in one relabelling pass to the canonical order.
"""

from __future__ import annotations

import math

import numpy as np

from ...families.base import take
from .._partitioned_moves import SequentialSpec
from .multiway import (MULTIWAY_SPLIT, choose_merge_set, merge_slots, multiway_ratio,
                       split_log_ratio, split_slots)
from .schedule import data_side
from .slots import _pairs_combined
from .state import _state_of_clusters


def multiway_move_parts(cfg, rng, model, state):
    """One multi-way split or merge on partitioned data; returns ``(state, n_splits,
    n_merges)``."""
    fam = model.family
    K = len(state.age)
    stats = _pairs_combined(fam, state.sub_stats, K)
    n = np.rint(fam.count(stats)).astype(np.int64)
    if rng.random() < MULTIWAY_SPLIT:
        return _split(cfg, rng, model, state, stats, n)
    return _merge(cfg, rng, model, state, stats, n)


def _allocate(rng, data, state, move_of, side_of, pins, moving):
    """The sequential allocation of one move with sides anchored at ``pins`` (``moving``
    points): ``(labels, codes, counts, log q, the sides' statistics and first rows)``."""
    m = len(pins)
    n_parts = len(data.rows)
    spec = SequentialSpec(move_of, side_of, np.array([m], dtype=np.int64),
                          np.asarray(pins, dtype=np.int64)[None, :],
                          np.array([rng.integers(n_parts)], dtype=np.int64),
                          int(rng.integers(2**63)), n_parts)
    labels, codes, _, carry, sides = data.propose(None, spec, state.labels, None,
                                                  data.seed(spec), moving)
    return labels, codes, carry.counts[0, :m], float(carry.logq[0]), sides


def _split(cfg, rng, model, state, stats, n):
    """Split a uniformly chosen cluster into m parts (m uniform on 3 .. ``multiway``): its
    anchor and m - 1 further uniform members (ordered) anchor the sides."""
    fam = model.family
    data = data_side(cfg, model)
    K = len(state.age)
    c = int(rng.integers(K))
    m = int(rng.integers(3, int(cfg.multiway) + 1))
    if n[c] < m:
        return state, 0, 0
    anchor = int(state.anchors[c])
    others = data.sample_members(state.labels, c, anchor, m - 1, int(rng.integers(2**63)))
    pins = np.concatenate([[anchor], others]).astype(np.int64)
    move_of = np.full(K, -1, dtype=np.int64)
    move_of[c] = 0
    labels, codes, counts, log_q, sides = _allocate(rng, data, state, move_of,
                                                    np.full(K, -1, dtype=np.int64), pins, n[c])
    parts = sides.stats
    log_r = split_log_ratio(cfg, fam, stats, n, c, parts, counts, fam.log_marginal(parts),
                            log_q, state.alpha)
    if log_r is None or not math.log(rng.random()) < log_r:
        return state, 0, 0
    new_ids = np.concatenate([[c], K + np.arange(m - 1)]).astype(np.int64)
    first = np.concatenate([sides.clusters, np.zeros(m - 1, dtype=np.int64)])
    first[new_ids] = sides.first
    slots, anchors = split_slots(stats, parts, state.anchors, c, pins)
    new_id = _canonical(first)
    labels, sub = data.relabel_split(labels, codes, c, new_id[new_ids],
                                     new_id[np.arange(K)])
    return _state(fam, state, labels, sub, slots, anchors, new_id), 1, 0


def _merge(cfg, rng, model, state, stats, n):
    """Merge a set of 3 .. ``multiway`` clusters grown around a uniformly chosen one,
    scoring its current split by a sequential allocation in a uniform order of its sides."""
    fam = model.family
    data = data_side(cfg, model)
    K = len(state.age)
    chosen = choose_merge_set(cfg, rng, fam, stats, n, state.alpha)
    if chosen is None:
        return state, 0, 0
    members, order, log_set = chosen
    m = len(members)
    move_of = np.full(K, -1, dtype=np.int64)
    move_of[order] = 0
    side_of = np.full(K, -1, dtype=np.int64)
    side_of[order] = np.arange(m)
    pins = state.anchors[order].astype(np.int64)
    _, _, counts, log_q, sides = _allocate(rng, data, state, move_of, side_of, pins,
                                           n[order].sum())
    slots, both, keep = merge_slots(fam, stats, order)
    logf_c = float(fam.log_marginal(both)[0])
    log_r = -multiway_ratio(cfg, counts, fam.log_marginal(sides.stats), logf_c, log_q,
                            K - m + 1, log_set, state.alpha)
    if not math.log(rng.random()) < log_r:
        return state, 0, 0
    label_map = np.arange(K, dtype=np.int64)
    label_map[order] = keep
    # clusters are numbered by first member: the union's is that of its lowest number
    first = np.arange(K, dtype=np.int64)
    first[order] = -1
    first[keep] = members.min()
    new_id = _canonical(first)
    labels, sub = data.relabel_split(state.labels, None, -1, None, new_id[label_map])
    return _state(fam, state, labels, sub, slots, state.anchors, new_id), 0, 1


def _canonical(first) -> np.ndarray:
    """New number of each slot in the order of first members (-1: an empty slot)."""
    first = np.asarray(first, dtype=np.int64)
    live = np.flatnonzero(first >= 0)
    order = live[np.argsort(first[live], kind="stable")]
    new_id = np.full(len(first), -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    return new_id


def _state(fam, state, labels, sub, slot_stats, anchors, new_id):
    """The state after a multi-way move, its slots in the canonical order ``new_id``."""
    order = np.argsort(np.where(new_id >= 0, new_id, len(new_id)), kind="stable")
    order = order[:int((new_id >= 0).sum())]
    return _state_of_clusters(fam, labels, sub, state.alpha, take(slot_stats, order),
                              np.asarray(anchors, dtype=np.int64)[order])
