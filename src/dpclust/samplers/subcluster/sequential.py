"""Sequential allocation for the sub-cluster sampler's exact moves (Dahl 2003): the proposal
of the pairwise sequential moves, one thread per move, and the row copies and side statistics
that the pairwise and multi-way moves share.

References
----------
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, University of Wisconsin (sequential allocation).
"""

from __future__ import annotations

import numba
import numpy as np

from ...families.base import take
from ...kernels import subcluster as _sk
from .._partitioned import threads
from .slots import _pair_rows
from .state import LaunchResult


def sequential_proposal(cfg, rng, model, data, labels, run, moves, seq, side_of, pins):
    """The sequential moves ``seq`` (indices into ``moves``): each move's points other
    than its anchors in a uniformly random order (an auxiliary variable drawn afresh,
    the same law for a move and its reverse), allocated by :func:`~dpclust.kernels.
    subcluster.sequential_move` (or, for the moves with ``scans >= 0``, restricted Gibbs
    scans, :func:`~dpclust.kernels.subcluster.scan_move`), one thread per move.  Returns
    ``run`` with their sides (codes), counts, ``logq`` and the sides' log marginals (``logf``), and a
    :class:`_SequentialSides` that counts a side's statistics when a move needs them."""
    K = len(side_of)
    move_of = np.full(K, -1, dtype=np.int64)
    for a, b in enumerate(seq):
        for c in moves[b].members:
            move_of[c] = a
    spins = np.ascontiguousarray(pins[seq], dtype=np.int64)
    with threads(cfg.n_threads, len(labels)):  # all rows read; the moves' rows below
        rows, start, fixed = _sk.rows_by_move(np.asarray(labels, dtype=np.int64), move_of,
                                              np.asarray(side_of, dtype=np.int64), spins)
    B = len(seq)
    order_seeds = _sk.chunk_seeds(int(rng.integers(2**63)), B)
    seeds = _sk.chunk_seeds(int(rng.integers(2**63)), B)
    with threads(cfg.n_threads, len(rows)):
        lanes = _sk.move_lanes(np.diff(start), numba.get_num_threads())
        _sk.shuffle_moves(rows, fixed, start, order_seeds, *lanes)
        kern, local_rows, local_pins, copied = _copied_rows(model, rows, spins)
        scans = np.array([moves[b].scans for b in seq], dtype=np.int64)
        sides, logq, counts, logf = _sk.sequential_allocation(
            kern, local_rows, start, fixed, local_pins, seeds, lanes, scans)
    codes = np.array(run.codes)
    codes[rows] = sides
    codes[spins[:, 0]] = 0
    codes[spins[:, 1]] = 1
    rows2 = _pair_rows(seq)
    cnt = run.counts.copy()
    cnt[K + rows2] = counts
    lq = run.logq.copy()
    lq[2 * np.asarray(seq)] = logq
    lf = np.full(len(run.logq), np.nan)
    lf[rows2] = logf
    sides_of = _SequentialSides(model.family, data, rows, start, sides, spins, seq, copied)
    return run._replace(codes=codes, counts=cnt, logq=lq, logf=lf), sides_of


class _SequentialSides:
    """The sides drawn by the sequential moves ``seq`` (rows grouped by move as
    :func:`~dpclust.kernels.subcluster.rows_by_move` gives them, the anchors
    apart); ``halves(b)`` counts move b's two sides' statistics and first members, from
    ``copied`` where the family copied the moves' rows in their order (a move's rows, then
    every move's two anchors: one contiguous read), else from the data."""

    def __init__(self, fam, data, rows, start, sides, pins, seq, copied=None):
        self.fam, self.data, self.copied = fam, data, copied
        self.rows, self.start, self.sides, self.pins = rows, start, sides, pins
        self.at = {int(b): a for a, b in enumerate(seq)}

    def __contains__(self, b) -> bool:
        return int(b) in self.at

    def halves(self, b):
        a = self.at[int(b)]
        lo, hi = self.start[a], self.start[a + 1]
        rows = np.concatenate([self.rows[lo:hi], self.pins[a]])
        sides = np.concatenate([self.sides[lo:hi], [0, 1]])
        local = np.concatenate([np.arange(lo, hi), len(self.rows) + 2 * a + np.arange(2)])
        stats = _rows_stats(self.fam, self.data, self.copied, rows, local, sides, 2)
        return stats, (int(rows[sides == 0].min()), int(rows[sides == 1].min()))


def _copied_rows(model, rows, pins):
    """``(kern, local_rows, local_pins, copied)``: the collapsed kernel over ``rows`` and then
    ``pins`` copied in that order where the family copies rows (a long scan in a random
    order then reads memory in sequence; 10^6 points: about half the time), with the rows'
    and pins' indices into the copy and the copy itself; else the model's kernel, the rows
    and pins as given, and None."""
    pins = np.asarray(pins, dtype=np.int64)
    kern = model.family.gathered_kernel(model.kernel, np.concatenate([rows, pins.ravel()]))
    if kern is None:
        return model.kernel, rows, pins, None
    local_pins = len(rows) + np.arange(pins.size, dtype=np.int64).reshape(pins.shape)
    return kern, np.arange(len(rows), dtype=np.int64), local_pins, kern.data[0]


def _rows_stats(fam, data, copied, rows, local, labels, n_clusters):
    """Statistics of the data rows ``rows`` in clusters ``labels``, read from ``copied`` at
    ``local`` where :func:`_copied_rows` made a copy (one contiguous read), else from the
    data."""
    if copied is None:
        return data.stats_at(rows, labels, n_clusters)
    return fam.stats_at(copied, local, labels, n_clusters)


def partitioned_proposal(cfg, rng, model, data, run, moves, seq, side_of, pins):
    """:func:`sequential_proposal` on data in partitions (a Dask cluster, or this process
    with its partition layout): each move visits the partitions in a cyclic order from a
    uniformly chosen one, its points in a uniform order within each (see
    :mod:`dpclust.samplers._partitioned_moves`).  Returns ``run`` with the moves' sides
    (codes), counts, ``logq`` and the sides' log marginals, and a :class:`_PartitionSides`."""
    spec = _sequential_spec(rng, data, moves, seq, side_of, pins, None)
    labels, codes, carry, sides = data.sequential(spec, run.labels, run.codes,
                                                  data.seed(spec))
    return _with_sides(model.family, run._replace(labels=labels, codes=codes), carry, sides,
                       seq, len(side_of))


def partitioned_round(rng, model, data, labels, params, log_w, block_of, side_of, pins, moves,
                      seq, n):
    """The proposal of one round of moves on partitioned data in one call of the data side
    (one round trip on a Dask cluster): the launch pass of the launched moves (the one
    stage of :func:`~dpclust.samplers.subcluster.launch.staged_proposal`, left out when
    there are none) beside the sequential moves ``seq`` (:func:`partitioned_proposal`).
    The same random draws and the same result as the one after the other.  Returns
    ``(run, sides)`` (``sides`` None without sequential moves); ``n``: the clusters'
    sizes."""
    from .launch import launch_result, launch_spec

    K = len(block_of)
    B = log_w.shape[0]
    stage_key = int(rng.integers(2**63))
    launch = launch_spec(rng, log_w, block_of, side_of, pins, 2, np.tile([0.0, 2.0], (B, 1)),
                         stage_key)
    # without launched moves the pass is left out (its counts come with the sequential
    # moves' sides); a round with neither keeps it, to count the clusters
    launched = np.any(block_of >= 0) or not len(seq)
    launch = launch._replace(kparams=data.pack(params)) if launched else None
    spec = carry = None
    moving = 0
    if len(seq):
        move_of = _move_of(moves, seq, len(side_of))
        on = move_of >= 0
        moving = np.bincount(move_of[on], weights=np.asarray(n)[on],
                             minlength=len(seq)).astype(np.int64)  # each move's points
        spec = _sequential_spec(rng, data, moves, seq, side_of, pins, moving)
        carry = data.seed(spec)
    labels, codes, part, carry, sides = data.propose(launch, spec, labels, None, carry,
                                                     moving)
    if part is not None:
        run = launch_result(data, labels, codes, part)
    else:  # what a launch pass that moves no point counts: every point in its cluster
        run = LaunchResult(labels, codes, model.family.empty_stats(2 * B),
                           np.concatenate([n, np.zeros(2 * B, np.int64)]),
                           np.concatenate([sides.clusters, np.full(2 * B, -1, np.int64)]),
                           np.full(K + 2 * B, -1, np.int64), np.zeros(2 * B),
                           np.ones(K + 2 * B))
    if spec is None:
        return run, None
    return _with_sides(model.family, run, carry, sides, seq, K)


def _move_of(moves, seq, K):
    """Each cluster's sequential move (its index in ``seq``), or -1."""
    move_of = np.full(K, -1, dtype=np.int64)
    for a, b in enumerate(seq):
        for c in moves[b].members:
            move_of[c] = a
    return move_of


def _sequential_spec(rng, data, moves, seq, side_of, pins, moving):
    """The :class:`~dpclust.samplers._partitioned_moves.SequentialSpec` of the pairwise
    sequential moves ``seq`` (draws each move's first partition and the stream key).  The
    scan moves keep their scans when the data side collects the round's points in one place
    (``moving``: each move's number of points, None: all the points; numbers the moves do
    not change, so a move and its reverse are made alike), else they allocate
    sequentially."""
    from .._partitioned_moves import SequentialSpec

    B = len(seq)
    move_of = _move_of(moves, seq, len(side_of))
    fixed_side = np.where(move_of >= 0, side_of, -1).astype(np.int64)
    n_parts = len(data.rows)
    scans = np.array([moves[b].scans for b in seq], dtype=np.int64)
    scans = scans if np.any(scans >= 0) and data.collects(moving) else None
    return SequentialSpec(move_of, fixed_side, np.full(B, 2, dtype=np.int64),
                          np.ascontiguousarray(pins[seq], dtype=np.int64),
                          rng.integers(n_parts, size=B).astype(np.int64),
                          int(rng.integers(2**63)), n_parts, scans)


def _with_sides(fam, run, carry, sides, seq, K):
    """``run`` with the sequential moves' counts, ``logq`` and sides' log marginals, and
    their :class:`_PartitionSides`."""
    rows2 = _pair_rows(seq)
    cnt = run.counts.copy()
    cnt[K + rows2] = np.rint(carry.counts[:, :2]).astype(cnt.dtype).ravel()
    lq = run.logq.copy()
    lq[2 * np.asarray(seq)] = carry.logq
    lf = np.full(len(run.logq), np.nan)
    lf[rows2] = fam.log_marginal(sides.stats)
    return (run._replace(counts=cnt, logq=lq, logf=lf), _PartitionSides(sides, seq))


class _PartitionSides:
    """The sides drawn by the sequential moves ``seq`` on partitioned data: their statistics
    and first members, counted on the partitions (:class:`~dpclust.samplers.
    _partitioned_moves.SideStats`, two slots a move)."""

    def __init__(self, sides, seq):
        self.sides = sides
        self.at = {int(b): a for a, b in enumerate(seq)}

    def __contains__(self, b) -> bool:
        return int(b) in self.at

    def halves(self, b):
        a = self.at[int(b)]
        first = self.sides.first
        return (take(self.sides.stats, [2 * a, 2 * a + 1]),
                (int(first[2 * a]), int(first[2 * a + 1])))
