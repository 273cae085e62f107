"""One round of the sub-cluster sampler's exact pairwise split-merge moves: random groups of
clusters, one split or merge per group, all groups at once, each accepted with its full
Hastings ratio (the module notes of :mod:`dpclust.samplers.subcluster` give every term).

A move's proposal is a sequential allocation in-process (:mod:`.sequential`) or a launch
and an independent allocation on partitioned data (:mod:`.launch`); either way the move
acts on a set S of points that is the same before and after it, and is anchored by two
points.

References
----------
Williamson, S. A., Dubey, A. & Xing, E. P. (2013). Parallel Markov chain Monte Carlo for
    nonparametric mixture models. ICML (the DP as a mixture of DPs: groups with alpha / P).
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, University of Wisconsin (sequential allocation).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from ...families.base import concatenate, take
from ..base import split_target
from .launch import _ONE_SIDED, launch_components, staged_proposal
from .ratios import _log_anchored_split, _merge_log_ratios, _p_split, _pairs_max
from .schedule import (data_side, group_count, partitioned, pinch_probability,
                       scan_probability, sequential_here)
from .sequential import partitioned_proposal, partitioned_round, sequential_proposal
from .slots import _pairs_combined
from .state import SubclusterState, _state_of_clusters


class _Move(NamedTuple):
    """One split-merge move: ``kind`` "split" (``members = (c,)``) or "merge" (two
    clusters, side 0 and side 1), the size ``k_g`` of its group, its launch: "em"
    (symmetric), "grow" or "pinch" (side 1 grown from one point, j), the clusters of its
    group, and for a merge the log probability of choosing its pair."""

    kind: str
    members: tuple
    k_g: int
    launch: str
    group: tuple = ()
    log_pair: float = 0.0  # a merge's: log P(its pair | its group)
    scans: int = -1  # a sequential move's restricted Gibbs scans (-1: sequential allocation)


def targeted_pairs_max(cfg, stats) -> int:
    """The most pairs a group scores for ``merge_pairs="targeted"`` (0 for uniform):
    :func:`~dpclust.samplers.subcluster.ratios._pairs_max`."""
    return 0 if cfg.merge_pairs == "uniform" else _pairs_max(stats)


def pair_log_probs(cfg, fam, stats, n, alpha, groups):
    """``log P(pair)`` of every pair in each group of ``groups`` (lists of rows of
    ``stats``/``n``), as ``(first, second, log_p)`` arrays, pairs in group order and
    ``i < j`` within a group (see ``merge_pairs``)."""
    firsts, seconds, sizes = [], [], []
    for members in groups:
        m = np.asarray(members, dtype=np.int64)
        a, b = np.triu_indices(len(m), 1)
        firsts.append(m[a])
        seconds.append(m[b])
        sizes.append(len(a))
    first = np.concatenate(firsts)
    second = np.concatenate(seconds)
    log_p = np.empty(len(first))
    most = targeted_pairs_max(cfg, stats)
    targeted = np.zeros(len(first), dtype=bool)
    start = 0
    for members, size in zip(groups, sizes):
        if size > most:
            log_p[start:start + size] = -math.log(size)
        else:
            targeted[start:start + size] = True
        start += size
    if targeted.any():
        merge = _merge_log_ratios(fam, stats, n, alpha, first[targeted],
                                  second[targeted])
        log_w = np.minimum(merge, 0.0)
        part = log_p[targeted]
        start = 0
        at = 0
        for members, size in zip(groups, sizes):
            if size <= most:
                w = log_w[at:at + size]
                part[at:at + size] = np.logaddexp(-math.log(2.0 * size),
                                                  w - logsumexp(w) - math.log(2.0))
                at += size
        log_p[targeted] = part
    return first, second, log_p


def choose_moves(cfg, rng, fam, stats, n, alpha, n_groups: int, sequential: bool = False,
                 pinch: float = 0.5, scan: float = 0.0):
    """Each cluster joins one of ``n_groups`` groups uniformly; each non-empty group of
    ``K_g`` clusters proposes one move: a split of a uniformly chosen cluster (always
    when ``K_g = 1``, else with probability 1/2) or the merge of a uniformly chosen
    pair, whose side 0 (the cluster whose anchor the merged cluster keeps) is chosen
    uniformly (the smaller for the one-sided launches).  Each move's launch is a pinch
    with probability ``pinch``, a grow with probability ``grow``, else sequential (with
    ``sequential``; with probability ``scan`` a restricted Gibbs scan move of ``scans``
    intermediate scans) or EM.  The pair is uniform, or targeted (``merge_pairs``)."""
    K = len(n)
    group = rng.integers(n_groups, size=K)
    moves = []
    merging = []
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        k_g = len(members)
        u = rng.random()
        launch = ("pinch" if u < pinch else "grow" if u < pinch + cfg.grow
                  else "sequential" if sequential else "em")
        # the scan moves: a share ``scan`` of the sequential moves, from the same draw
        scans = (int(cfg.scans) if launch == "sequential"
                 and u >= 1.0 - scan * (1.0 - pinch - cfg.grow) else -1)
        if k_g == 1 or rng.random() < _p_split(k_g):
            c = int(members[rng.integers(k_g)])
            if n[c] >= 2:  # a single point cannot be split (nor can the reverse merge)
                moves.append(_Move("split", (c,), k_g, launch, tuple(members.tolist()),
                                   scans=scans))
        else:
            merging.append(len(moves))
            moves.append(_Move("merge", (), k_g, launch, tuple(members.tolist()),
                               scans=scans))
    if merging:
        first, second, log_p = pair_log_probs(
            cfg, fam, stats, n, alpha / n_groups, [moves[b].group for b in merging])
        start = 0
        for b in merging:
            move = moves[b]
            size = move.k_g * (move.k_g - 1) // 2
            cdf = np.cumsum(np.exp(log_p[start:start + size]))
            pick = start + min(int(np.searchsorted(cdf, rng.random() * cdf[-1],
                                                   side="right")), size - 1)
            pair = [int(first[pick]), int(second[pick])]
            if rng.random() < 0.5:
                pair.reverse()  # side 0 (whose anchor the union keeps) is uniform
            if move.launch in _ONE_SIDED and n[pair[1]] != n[pair[0]]:
                pair.sort(key=lambda c: -n[c])  # side 1, the grown side, is the smaller
            moves[b] = move._replace(members=tuple(pair), log_pair=float(log_p[pick]))
            start += size
    return moves


def launch_moves(cfg, rng, model, state: SubclusterState):
    """One round of exact split-merge moves (the module notes give the ratio); returns
    ``(state, n_splits, n_merges)``.

    Every move is anchored by two points, i on side 0 and j on side 1: a merge's are
    the anchors of its two clusters; a split's i is its cluster's anchor and j the
    other point with the smallest of independent keys (uniform over them).  The launch
    is a function of the move's points, i and j.
    """
    fam = model.family
    data = data_side(cfg, model)
    K = len(state.age)
    alpha = state.alpha
    stats = _pairs_combined(fam, state.sub_stats, K)
    n = np.rint(fam.count(stats)).astype(np.int64)
    n_groups = group_count(cfg, rng, model)
    moves = choose_moves(cfg, rng, fam, stats, n, alpha, n_groups,
                         sequential_here(cfg, model), pinch_probability(cfg, model.n_samples),
                         scan_probability(cfg, model))
    if not moves:
        return state, 0, 0
    block_of, side_of, pins, size = _move_layout(moves, state.anchors, n, K)
    moving = block_of >= 0
    kind = np.array([m.launch for m in moves])
    # sequential moves need no subsample, only their second anchors
    rate = np.where(kind == "sequential", 1e-300, np.minimum(1.0, cfg.launch_size / size))
    thresholds = np.zeros(K)
    thresholds[moving] = rate[block_of[moving]]

    # the launch subsamples, and the second anchor of each split (a uniform member of
    # the cluster other than its anchor, chosen by keys independent of the subsample)
    index, sub_labels, rows, second = data.select(
        int(rng.integers(2**63)), int(rng.integers(2**63)), thresholds, state.anchors,
        state.labels)
    for b, move in enumerate(moves):
        if move.kind == "split":
            pins[b, 1] = second[move.members[0]]
    ready = pins[:, 1] >= 0
    params, log_w, seeds = launch_components(cfg, rng, model, data, state.labels, stats, moves,
                                             kind, ready, block_of, side_of, pins, size, rows,
                                             sub_labels)

    # the proposal: splits drawn, merges scored, every point counted
    seq = ready & (kind == "sequential")
    launched = ready & ~seq
    block_of = np.where(moving & launched[np.maximum(block_of, 0)], block_of, -1)
    if partitioned(model) and int(cfg.stages) == 1:
        run, seq_sides = partitioned_round(rng, model, data, state.labels, params, log_w,
                                           block_of, side_of, pins, moves,
                                           np.flatnonzero(seq), n)
        return apply_launch_moves(cfg, rng, model, data, state, run, moves, stats, n,
                                  n_groups, alpha, pins, ready, seq_sides)
    run = staged_proposal(cfg, rng, model, data, state.labels, params, log_w, block_of,
                          side_of, pins, seeds, size, kind == "pinch")
    seq_sides = None
    if seq.any():
        propose = partitioned_proposal if partitioned(model) else _local_proposal
        run, seq_sides = propose(cfg, rng, model, data, run, moves, np.flatnonzero(seq),
                                 side_of, pins)
    return apply_launch_moves(cfg, rng, model, data, state, run, moves, stats, n, n_groups,
                              alpha, pins, ready, seq_sides)


def _local_proposal(cfg, rng, model, data, run, moves, seq, side_of, pins):
    """:func:`~dpclust.samplers.subcluster.sequential.sequential_proposal` on the run's
    labels (the points in this process)."""
    return sequential_proposal(cfg, rng, model, data, run.labels, run, moves, seq, side_of,
                               pins)


def _move_layout(moves, anchors, n, K):
    """``(block_of, side_of, pins, size)``: each cluster's move (-1: none) and side in a
    merge (-1: none), each move's anchors (side 1 of a split still -1: drawn next) and
    number of points."""
    B = len(moves)
    block_of = np.full(K, -1, dtype=np.int64)
    side_of = np.full(K, -1, dtype=np.int64)
    pins = np.full((B, 2), -1, dtype=np.int64)
    size = np.zeros(B)
    for b, move in enumerate(moves):
        for side, c in enumerate(move.members):
            block_of[c] = b
            pins[b, side] = anchors[c]
            if move.kind == "merge":
                side_of[c] = side
        size[b] = n[list(move.members)].sum()
    return block_of, side_of, pins, size


def apply_launch_moves(cfg, rng, model, data, state, run, moves, stats, n, n_groups, alpha,
                       pins, ready, seq_sides=None):
    """Accept or reject every move with its ratio (module notes); relabel once.
    ``seq_sides``: the sequential moves' sides (:class:`~dpclust.samplers.subcluster.
    sequential._SequentialSides`)."""
    fam = model.family
    round_ = _Round(fam, state, run, stats, n, n_groups, alpha, pins, seq_sides,
                    model.partition_prior, model.n_samples)
    split_pair = _split_pair_log_probs(cfg, round_, moves, ready, stats, n, n_groups)
    splits = merges = 0
    for b, move in enumerate(moves):
        if not ready[b]:
            continue
        if move.kind == "split":
            splits += round_.split(rng, b, move, split_pair[b])
        else:
            merges += round_.merge(rng, b, move)
    if splits == 0 and merges == 0:
        return state, 0, 0
    return round_.state(data), splits, merges


def _split_pair_log_probs(cfg, round_, moves, ready, stats, n, n_groups):
    """A split's reverse: ``log P(pair)`` of its two sides as a pair of its group after the
    split (0: the only pair of a group of one cluster), per split move."""
    K = len(n)
    alpha = round_.alpha
    split_pair = {b: 0.0 for b, m in enumerate(moves) if m.kind == "split"}
    proposed = [b for b, m in enumerate(moves)
                if ready[b] and m.kind == "split" and m.k_g > 1]
    if proposed:
        run = round_.run
        pool = concatenate(stats, *(round_.halves(b)[0] for b in proposed))
        n_pool = np.concatenate([np.asarray(n, dtype=np.float64)]
                                + [run.counts[K + 2 * b:K + 2 * b + 2] for b in proposed])
        after = [tuple(c for c in moves[b].group if c != moves[b].members[0])
                 + (K + 2 * a, K + 2 * a + 1) for a, b in enumerate(proposed)]
        _, _, pair_p = pair_log_probs(cfg, round_.fam, pool, n_pool, alpha / n_groups,
                                      after)
        ends = np.cumsum([len(g) * (len(g) - 1) // 2 for g in after])
        split_pair.update({b: float(pair_p[end - 1]) for b, end in zip(proposed, ends)})
    return split_pair


class _Round:
    """The accept-or-reject step of one round of moves: the clusters as the accepted moves
    leave them, per cluster ``[stats, first member, anchor]`` (None: merged away; an
    accepted split appends its side 1), the map from the launch pass's keys ``4k + code``
    to them, and the sides of each split, counted once (a sequential move's only for the
    moves that need them)."""

    def __init__(self, fam, state, run, stats, n, n_groups, alpha, pins, seq_sides, prior,
                 n_samples):
        self.fam, self.run, self.n, self.alpha, self.pins = fam, run, n, alpha, pins
        self.K = K = len(n)
        # the moves are decided one after another, each with the clusters the earlier ones
        # left: a prior other than the Dirichlet process weighs a split by their number
        self.prior, self.n_samples, self.n_clusters = prior, int(n_samples), K
        self.log_p = math.log(n_groups)
        self.seq_sides = seq_sides
        self.records = []
        for k in range(K):
            self.records.append([take(stats, [k]), int(run.first[k]), int(state.anchors[k])])
        self.label_map = np.repeat(np.arange(K, dtype=np.int64), 4)
        self._halves = {}

    def sequential(self, b) -> bool:
        """Whether move b is a sequential move (its sides counted by :attr:`seq_sides`)."""
        return self.seq_sides is not None and b in self.seq_sides

    def halves(self, b):
        """The sides' statistics and first members of split b (a sequential move's are
        counted here, only for the moves that need them)."""
        if b not in self._halves:
            if self.sequential(b):
                self._halves[b] = self.seq_sides.halves(b)
            else:
                run, K = self.run, self.K
                self._halves[b] = (take(run.stats, [2 * b, 2 * b + 1]),
                                   (int(run.first[K + 2 * b]), int(run.first[K + 2 * b + 1])))
        return self._halves[b]

    def split(self, rng, b, move, log_pair) -> int:
        """Accept or reject split b of cluster ``move.members[0]`` (1: accepted);
        ``log_pair``: the reverse merge's ``log P(pair)``."""
        fam, run, K, records = self.fam, self.run, self.K, self.records
        k_g = move.k_g
        log_q = float(run.logq[2 * b])  # the allocation of all but the two anchors
        c = move.members[0]
        n_a, n_b = int(run.counts[K + 2 * b]), int(run.counts[K + 2 * b + 1])
        if move.launch in _ONE_SIDED and n_b > n_a:
            return 0  # its reverse merge would grow the other cluster
        if self.sequential(b):
            # the sides' log marginals from the allocation itself
            logf_c = float(fam.log_marginal(records[c][0])[0])
            logf = (float(run.logf[2 * b]), float(run.logf[2 * b + 1]), logf_c)
        else:
            halves = self.halves(b)[0]
            logf = fam.log_marginal(concatenate(take(halves, [0]), take(halves, [1]),
                                                records[c][0]))
        target = self.target(n_a, n_b, logf, self.n_clusters)
        log_ratio = (target - self.log_p
                     + _log_anchored_split(n_a, n_b, k_g, log_q,
                                           move.launch in _ONE_SIDED, log_pair))
        if not math.log(rng.random()) < log_ratio:
            return 0
        halves, first = self.halves(b)
        records[c] = [take(halves, [0]), int(first[0]), int(self.pins[b, 0])]
        records.append([take(halves, [1]), int(first[1]), int(self.pins[b, 1])])
        self.label_map[4 * c + 1] = len(records) - 1
        self.n_clusters += 1
        return 1

    def target(self, n_a, n_b, logf, n_clusters) -> float:
        """:func:`~dpclust.samplers.base.split_target` of a split into sides of ``n_a`` and
        ``n_b`` points when there are ``n_clusters`` clusters before it, under this round's
        prior; the groups' ``- log P`` is the caller's."""
        return split_target(self.prior, n_a, n_b, n_clusters, self.n_samples, self.alpha,
                            logf)

    def merge(self, rng, b, move) -> int:
        """Accept or reject merge b of clusters ``move.members`` (side 0, side 1; 1:
        accepted)."""
        fam, run, records = self.fam, self.run, self.records
        k_g = move.k_g
        log_q = float(run.logq[2 * b])  # the allocation of all but the two anchors
        left, right = move.members  # side 0, side 1
        s_l, s_r = records[left][0], records[right][0]
        both = fam.combine(s_l, s_r)
        n_l, n_r = int(self.n[left]), int(self.n[right])
        logf = fam.log_marginal(concatenate(s_l, s_r, both))
        # the reverse split starts from the merged state: one cluster fewer
        log_ratio = -(self.target(n_l, n_r, logf, self.n_clusters - 1) - self.log_p
                      + _log_anchored_split(n_l, n_r, k_g - 1, log_q,
                                            move.launch in _ONE_SIDED, move.log_pair))
        if not math.log(rng.random()) < log_ratio:
            return 0
        self.n_clusters -= 1
        records[left] = [both, min(records[left][1], records[right][1]),
                         int(self.pins[b, 0])]
        records[right] = None
        self.label_map[4 * right:4 * right + 4] = left
        return 1

    def state(self, data) -> SubclusterState:
        """The state after the accepted moves, relabelled once in the canonical order."""
        fam, run, K, records = self.fam, self.run, self.K, self.records
        live = [a for a, r in enumerate(records) if r is not None]
        order = sorted(live, key=lambda a: records[a][1])
        new_id = np.full(len(records), -1, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        label_map = new_id[self.label_map]
        labels, sub = data.relabel(run.labels, run.codes, label_map,
                                   np.zeros(4 * K, dtype=np.int8))
        cluster_stats = concatenate(*(records[a][0] for a in order))
        anchors = np.array([records[a][2] for a in order], dtype=np.int64)
        return _state_of_clusters(fam, labels, sub, self.alpha, cluster_stats, anchors)
