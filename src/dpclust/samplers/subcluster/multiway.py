"""The sub-cluster sampler's multi-way moves (``multiway``, with sequential moves): a split of
one cluster into m = 3 .. ``multiway`` parts by a sequential allocation among m sides, or a
merge of a set of 3 .. ``multiway`` clusters grown around a uniform one from the pairs'
merge ratios.  A Gaussian cut early into several overlapping fragments is often mergeable
only all at once.  Exact: the ratio is :func:`multiway_ratio` (and the parameter's
documentation in :class:`~dpclust.samplers.subcluster.SubclusterSplitMerge`).

References
----------
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, University of Wisconsin (sequential allocation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from ...families.base import concatenate, take
from ...kernels import subcluster as _sk
from .ratios import _merge_log_ratios, _pairs_max
from .schedule import data_side
from .sequential import _copied_rows, _rows_stats
from .slots import _pairs_combined, _stats_of, _with_rows
from .state import SubclusterState, _state_of_clusters

#: least (and 1 - most) probability that a cluster joins a multi-way merge set (``multiway``)
MULTIWAY_JOIN_MIN = 0.02
#: probability that an iteration makes a multi-way move (``multiway``)
MULTIWAY_RATE = 0.5
#: probability that the multi-way move of an iteration is a split (else a merge): a split
#: allocates a whole cluster among m sides, a merge only when its set has 3 or more clusters
MULTIWAY_SPLIT = 0.25


def join_probs(fam, stats, n, alpha):
    """``P[u, v]``: the probability that cluster v joins a multi-way merge set grown
    around u, ``exp(min(s_uv, 0))`` within ``[MULTIWAY_JOIN_MIN, 1 - MULTIWAY_JOIN_MIN]``
    (``multiway``); None where the clusters' pairs exceed the pair-score budget."""
    K = len(n)
    if math.comb(K, 2) > _pairs_max(stats) or K < 2:
        return None
    i, j = np.triu_indices(K, 1)
    merge = _merge_log_ratios(fam, stats, n, alpha, i, j)
    p = np.clip(np.exp(np.minimum(merge, 0.0)), MULTIWAY_JOIN_MIN, 1.0 - MULTIWAY_JOIN_MIN)
    P = np.zeros((K, K))
    P[i, j] = p
    P[j, i] = p
    return P


def log_set_prob(P, members) -> float:
    """``log P(set)`` of the multi-way merge set ``members`` under join probabilities
    ``P``: ``(1/K) sum_(u in set) prod_(v in set, v != u) P[u, v] prod_(v not in set)
    (1 - P[u, v])``."""
    K = P.shape[0]
    inside = np.zeros(K, dtype=bool)
    inside[list(members)] = True
    out = ~inside
    terms = []
    for u in members:
        mine = inside.copy()
        mine[u] = False
        terms.append(np.log(P[u, mine]).sum() + np.log1p(-P[u, out]).sum())
    return float(logsumexp(terms) - math.log(K))


def multiway_ratio(cfg, n_parts, logf_parts, logf_c, log_q, K_before, log_set, alpha):
    """Log Hastings ratio of splitting a cluster (one of ``K_before``) into the m parts
    (the reverse merge's set has log probability ``log_set`` after the split)."""
    m = len(n_parts)
    n_c = float(np.sum(n_parts))
    target = ((m - 1) * math.log(alpha) + float(gammaln(n_parts).sum())
              - float(gammaln(n_c)) + float(np.sum(logf_parts)) - logf_c)
    anchors = math.log(n_c) - float(np.log(n_parts).sum())
    forward = (math.log(MULTIWAY_SPLIT) - math.log(K_before)
               - math.log(int(cfg.multiway) - 2)
               - sum(math.log(n_c - t) for t in range(1, m)) + log_q)
    reverse = math.log(1.0 - MULTIWAY_SPLIT) + log_set - float(gammaln(m + 1))
    return target + anchors + reverse - forward


def split_log_ratio(cfg, fam, stats, n, c, parts, counts, logf, log_q, alpha):
    """Log Hastings ratio of splitting cluster ``c`` into ``parts`` (their statistics, sizes
    ``counts`` and log marginals ``logf``; ``log_q`` of the allocation), or None where the
    reverse merge would not be proposed (the pairs exceed the pair-score budget)."""
    K = len(n)
    rest = np.delete(np.arange(K), c)
    post = concatenate(take(stats, rest), parts)
    P = join_probs(fam, post, np.concatenate([n[rest], counts]).astype(float), alpha)
    if P is None:
        return None
    m = len(counts)
    log_set = log_set_prob(P, list(range(K - 1, K - 1 + m)))
    logf_c = float(fam.log_marginal(take(stats, [c]))[0])
    return multiway_ratio(cfg, counts, logf, logf_c, log_q, K, log_set, alpha)


def split_slots(stats, parts, anchors, c, pins):
    """Slot statistics and anchors after splitting cluster ``c`` into ``parts``: part 0 in
    c's slot, the others appended, anchored at ``pins``."""
    m = len(pins)
    anchors = np.concatenate([anchors, pins[1:]])
    anchors[c] = pins[0]
    slots = concatenate(stats, take(parts, np.arange(1, m)))
    return _with_rows(slots, [c], take(parts, [0])), anchors


def choose_merge_set(cfg, rng, fam, stats, n, alpha):
    """A multi-way merge set grown around a uniformly chosen cluster: ``(members, order,
    log P(set))`` with ``order`` its clusters in a uniform order (side s is ``order[s]``),
    or None (fewer than 3 or more than ``multiway`` clusters, or too many pairs)."""
    K = len(n)
    if K < 3:
        return None
    P = join_probs(fam, stats, n.astype(float), alpha)
    if P is None:
        return None
    u = int(rng.integers(K))
    joins = rng.random(K) < P[u]
    joins[u] = True
    members = np.flatnonzero(joins)
    m = len(members)
    if m < 3 or m > int(cfg.multiway):
        return None
    log_set = log_set_prob(P, members.tolist())
    return members, members[rng.permutation(m)], log_set


def merge_slots(fam, stats, order):
    """``(slot statistics, the union's statistics, keep)`` after merging the clusters
    ``order`` into ``keep = order[0]`` (whose anchor, side 0's, the union keeps)."""
    keep = int(order[0])
    both = _stats_of(fam, stats, order)
    return _with_rows(stats, [keep], both), both, keep


def multiway_move(cfg, rng, model, state: SubclusterState):
    """One multi-way split or merge on all the clusters (``multiway``); returns ``(state,
    n_splits, n_merges)``."""
    fam = model.family
    K = len(state.age)
    stats = _pairs_combined(fam, state.sub_stats, K)
    n = np.rint(fam.count(stats)).astype(np.int64)
    labels = np.asarray(state.labels)
    seed = int(rng.integers(2**63))
    if rng.random() < MULTIWAY_SPLIT:
        return _multiway_split(cfg, rng, model, state, stats, n, labels, seed)
    return _multiway_merge(cfg, rng, model, state, stats, n, labels, seed)


def _multiway_split(cfg, rng, model, state, stats, n, labels, seed):
    """Split a uniformly chosen cluster into m parts (m uniform on 3 .. ``multiway``): its
    anchor and m - 1 further uniform members anchor the sides, the rest is allocated
    sequentially among them (stream ``seed``)."""
    fam = model.family
    K = len(state.age)
    alpha = state.alpha
    c = int(rng.integers(K))
    m = int(rng.integers(3, int(cfg.multiway) + 1))
    if n[c] < m:
        return state, 0, 0
    members = np.flatnonzero(labels == c)
    others = members[members != state.anchors[c]]
    pins = np.concatenate([[state.anchors[c]],
                           rng.choice(others, size=m - 1, replace=False)])
    rows = rng.permutation(others[~np.isin(others, pins)])
    kern, local_rows, local_pins, copied = _copied_rows(model, rows, pins)
    sides, log_q, counts, logf = _sk.multiway_allocation(
        kern, local_rows, np.full(len(rows), -1, dtype=np.int64), local_pins, seed)
    parts = _rows_stats(fam, data_side(cfg, model), copied, np.concatenate([rows, pins]),
                        np.concatenate([local_rows, local_pins]),
                        np.concatenate([sides, np.arange(m)]), m)
    log_r = split_log_ratio(cfg, fam, stats, n, c, parts, counts, logf, log_q, alpha)
    if log_r is None or not math.log(rng.random()) < log_r:
        return state, 0, 0
    new = labels.copy()
    new_ids = np.concatenate([[c], K + np.arange(m - 1)])
    new[rows] = new_ids[sides]
    new[pins] = new_ids
    slots, anchors = split_slots(stats, parts, state.anchors, c, pins)
    return canonical_state(fam, state, new, slots, anchors), 1, 0


def _multiway_merge(cfg, rng, model, state, stats, n, labels, seed):
    """Merge a set of 3 .. ``multiway`` clusters grown around a uniformly chosen one,
    scoring its current split by a sequential allocation in a uniform order of its sides
    (stream ``seed``)."""
    fam = model.family
    K = len(state.age)
    alpha = state.alpha
    chosen = choose_merge_set(cfg, rng, fam, stats, n, alpha)
    if chosen is None:
        return state, 0, 0
    members, order, log_set = chosen
    m = len(members)
    side_of = np.full(K, -1, dtype=np.int64)
    side_of[order] = np.arange(m)
    sides_all = side_of[labels]
    pins = state.anchors[order].astype(np.int64)
    rows = np.flatnonzero(sides_all >= 0)
    rows = rng.permutation(rows[~np.isin(rows, pins)])
    kern, local_rows, local_pins, _ = _copied_rows(model, rows, pins)
    _, log_q, counts, logf = _sk.multiway_allocation(kern, local_rows, sides_all[rows],
                                                     local_pins, seed)
    slots, both, keep = merge_slots(fam, stats, order)
    logf_c = float(fam.log_marginal(both)[0])
    log_r = -multiway_ratio(cfg, counts, logf, logf_c, log_q, K - m + 1, log_set, alpha)
    if not math.log(rng.random()) < log_r:
        return state, 0, 0
    label_map = np.arange(K, dtype=np.int64)
    label_map[order] = keep
    return canonical_state(fam, state, label_map[labels], slots, state.anchors), 0, 1


def canonical_state(fam, state, labels, slot_stats, anchors):
    """The state after a multi-way move: ``labels`` (ids of the clusters of
    ``slot_stats``, some perhaps empty) numbered in the canonical order (by first
    member), as :func:`~dpclust.samplers.subcluster.pairwise.apply_launch_moves` leaves
    it."""
    n_slots = len(anchors)
    first = np.full(n_slots, len(labels), dtype=np.int64)
    _sk.first_members(labels, first)
    live = np.flatnonzero(first < len(labels))
    order = live[np.argsort(first[live], kind="stable")]
    new_id = np.full(n_slots, -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    return _state_of_clusters(fam, new_id[labels], np.zeros_like(state.sublabels),
                              state.alpha, take(slot_stats, order),
                              np.asarray(anchors, dtype=np.int64)[order])
