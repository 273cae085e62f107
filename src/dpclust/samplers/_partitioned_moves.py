"""Sequential allocations of the sub-cluster sampler's moves on data split into partitions.

A sequential move (Dahl 2003) allocates its points one at a time, each to a side with
probability proportional to the side's size times its collapsed predictive given the points
already there.  On partitioned data a move's points are in several partitions, and only the
sides' statistics need to travel: a move visits the partitions one after another (a
*hop* each), allocating the points it has there in a uniformly random order, and hands its
sides' statistics, sizes, ``log q`` and random stream to the next.  The order of the points
is an auxiliary variable of the same law for a move and its reverse (the partitions in a
cyclic order from a uniformly chosen one, the points of each in a uniform order), so the
moves stay exact.  Moves start at different partitions, so that in every hop each partition
works on its share of the moves: ``P`` hops of ``P`` tasks, all partitions busy.

Every function here is pure and gives the same numbers wherever it runs: in this process
(:class:`~dpclust.samplers._partitioned.LocalPartitions`) or on the workers of a Dask
cluster (:mod:`dpclust.distributed`).

References
----------
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, University of Wisconsin (sequential allocation).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..kernels import subcluster as _sk
from ..utils.threads import serial_when_small


#: a round's sequential moves collect their points on the workers that allocate them while
#: those points' data stay under this many bytes (one task level instead of a hop per
#: partition: the same numbers), else their statistics hop from partition to partition;
#: the scan moves run only in a collected round
COLLECT_BYTES = 64 * 2**20


def collects(moving, n_total: int, row_bytes: float) -> bool:
    """Whether a round's sequential moves collect their points in one place: while the data
    of their ``moving`` points (their number, or each move's; None: all ``n_total``), at
    ``row_bytes`` a row, stay under :data:`COLLECT_BYTES`.  Every data side decides by this
    rule, so that a Dask cluster and its in-process twin make the same moves."""
    moving = int(n_total) if moving is None else int(np.sum(moving))
    return moving * row_bytes <= COLLECT_BYTES


def data_bytes(X) -> int:
    """Bytes of a partition's rows in working form (what collecting them elsewhere would
    move)."""
    if hasattr(X, "indptr"):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    if hasattr(X, "nbytes"):
        return int(X.nbytes)
    import pickle

    return len(pickle.dumps(X, protocol=pickle.HIGHEST_PROTOCOL))


class SequentialSpec(NamedTuple):
    """What every partition receives for the sequential moves of one round.

    ``move_of`` (K,): the move of each cluster (-1: none); ``side_of`` (K,): the side that a
    merge's cluster gives its points (-1: drawn, a split); ``n_sides`` (B,): sides of each
    move (2, or m for a multi-way move); ``pins`` (B, M): the global rows that start each
    side (-1 past ``n_sides``); ``rot`` (B,): the partition where each move starts;
    ``key``: the stream key of the orders and draws; ``n_parts``: the number of partitions;
    ``scans`` (B,): a two-sided move's restricted Gibbs scans (Jain & Neal), made when the
    round's points are collected in one place (:func:`collected_allocation`); -1 (None:
    every move) for a sequential allocation.
    """

    move_of: np.ndarray
    side_of: np.ndarray
    n_sides: np.ndarray
    pins: np.ndarray
    rot: np.ndarray
    key: int
    n_parts: int
    scans: np.ndarray | None = None

    @property
    def scanning(self) -> bool:
        """Whether a move of the round is a scan move (it needs its points in one place)."""
        return self.scans is not None and bool(np.any(np.asarray(self.scans) >= 0))

    @property
    def n_moves(self) -> int:
        return len(self.n_sides)

    @property
    def slot0(self) -> np.ndarray:
        """First slot of each move's sides when they are laid out one move after another."""
        return np.concatenate([[0], np.cumsum(self.n_sides)[:-1]]).astype(np.int64)

    @property
    def nbytes(self) -> int:
        return int(sum(np.asarray(a).nbytes for a in self[:5]))


class Carry(NamedTuple):
    """Moves handed from one hop to the next: ``moves`` (b,), their sides' collapsed
    statistics ``kstats`` (slots one move after another), sizes ``counts`` (b, M), ``logq``
    (b,) and random streams ``states`` (b,)."""

    moves: np.ndarray
    kstats: tuple
    counts: np.ndarray
    logq: np.ndarray
    states: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.kstats) + self.counts.nbytes + self.logq.nbytes
                   + self.states.nbytes + self.moves.nbytes)


class SideStats(NamedTuple):
    """One partition's (or the whole data set's) statistics of every move's sides (family
    statistics, slots one move after another), each side's smallest global row, and each
    cluster's smallest global row before the moves (``clusters``; -1: none there), which the
    canonical numbering after the moves needs."""

    stats: tuple
    first: np.ndarray
    clusters: np.ndarray


def _strided_slots(spec: SequentialSpec, moves):
    """Slots of the sides of ``moves`` when move a's start at ``SLOT_STRIDE * a`` (moves on
    different threads then never share a cache line)."""
    n = spec.n_sides[moves]
    base = _sk.SLOT_STRIDE * np.arange(len(moves), dtype=np.int64)
    return np.concatenate([b + np.arange(k) for b, k in zip(base, n)]).astype(np.int64) \
        if len(moves) else np.zeros(0, np.int64)


def merge_carries(spec: SequentialSpec, carries, moves) -> Carry:
    """The moves ``moves`` (in that order) out of several carries."""
    carries = [c for c in carries if len(c.moves)] or list(carries[:1])
    allm = np.concatenate([c.moves for c in carries])
    kstats = tuple(np.concatenate([c.kstats[i] for c in carries])
                   for i in range(len(carries[0].kstats)))
    counts = np.concatenate([c.counts for c in carries])
    logq = np.concatenate([c.logq for c in carries])
    states = np.concatenate([c.states for c in carries])
    where = np.full(spec.n_moves, -1, dtype=np.int64)
    where[allm] = np.arange(len(allm))
    at = where[moves]
    if np.any(at < 0):
        raise RuntimeError("a sequential move's statistics were lost between partitions")
    offset = np.concatenate([[0], np.cumsum(spec.n_sides[allm])]).astype(np.int64)
    slots = (np.concatenate([np.arange(offset[a], offset[a + 1]) for a in at]).astype(np.int64)
             if len(at) else np.zeros(0, np.int64))
    return Carry(np.asarray(moves, dtype=np.int64), tuple(a[slots] for a in kstats),
                 counts[at], logq[at], states[at])


def _run(kern, spec, carry: Carry, rows, start, fixed, seed=False, scans=None):
    """Allocate ``rows`` (grouped by the carry's moves, ``start``) from the carry's state
    (``scans``: the moves' restricted Gibbs scans, None: sequential allocations); returns
    the new carry and the sides given to the rows."""
    moves = carry.moves
    work = kern.alloc(_sk.SLOT_STRIDE * max(len(moves), 1))
    dest = _strided_slots(spec, moves)
    for w, c in zip(work, carry.kstats):
        w[dest] = c
    counts, logq, states = carry.counts.copy(), carry.logq.copy(), carry.states.copy()
    sides = _sk.continue_allocation(kern, work, rows, start, fixed,
                                    _sk.SLOT_STRIDE * np.arange(len(moves), dtype=np.int64),
                                    spec.n_sides[moves], states, counts, logq, seed=seed,
                                    scans=scans)
    return Carry(moves, tuple(w[dest] for w in work), counts, logq, states), sides


def seed_carry(kern, spec: SequentialSpec, pin_rows) -> Carry:
    """Every move's sides started from their anchors: ``pin_rows[t]``, the row of ``kern``
    holding the t-th anchor of ``spec.pins`` (row by row, the first ``n_sides`` of each)."""
    B = spec.n_moves
    width = spec.pins.shape[1]
    moves = np.arange(B, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(spec.n_sides)]).astype(np.int64)
    fixed = np.concatenate([np.arange(k) for k in spec.n_sides]).astype(np.int64)
    states = _sk.chunk_seeds(spec.key, (spec.n_parts + 1) * B)[spec.n_parts * B:].copy()
    S = int(spec.n_sides.sum())
    empty = Carry(moves, tuple(np.zeros((S,) + a.shape[1:]) for a in kern.alloc(0)),
                  np.zeros((B, width)), np.zeros(B), states)
    with serial_when_small(len(pin_rows)):
        carry, _ = _run(kern, spec, empty, pin_rows, start, fixed, seed=True)
    return carry


def small_ints(values, bound: int):
    """``values`` (in ``0 .. bound - 1``) as int16 where they fit: numpy's stable sort of
    16-bit integers is a radix sort (500,000 rows: 2.9 ms against 13 ms as int64), with
    the same order."""
    return values.astype(np.int16) if bound <= np.iinfo(np.int16).max else values


def move_rows(spec: SequentialSpec, labels, row0: int, p: int, moves):
    """``(rows, start, fixed)``: the local rows of partition ``p`` (global rows ``row0
    ..``) holding points of ``moves`` other than the anchors, grouped by move (``start``)
    in the uniform order in which a move allocates them (drawn from the move's stream of
    this partition), and the side each is fixed to (-1: drawn)."""
    P = spec.n_parts
    B = spec.n_moves
    labels = np.asarray(labels, dtype=np.int64)
    local = np.full(B, -1, dtype=np.int64)
    local[moves] = np.arange(len(moves))
    move_of = np.where(spec.move_of >= 0, local[np.maximum(spec.move_of, 0)], -1)
    a_of = move_of[labels]
    keep = a_of >= 0
    pins = spec.pins.ravel() - row0
    pins = pins[(spec.pins.ravel() >= 0) & (pins >= 0) & (pins < len(labels))]
    keep[pins] = False
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(small_ints(a_of[rows], len(moves)), kind="stable")]
    start = np.concatenate([[0], np.cumsum(np.bincount(a_of[rows], minlength=len(moves)))])
    start = start.astype(np.int64)
    fixed = np.ascontiguousarray(spec.side_of[labels[rows]], dtype=np.int64)
    if len(rows):
        seeds = _sk.chunk_seeds(spec.key, (P + 1) * B)[p * B + np.asarray(moves, np.int64)]
        with serial_when_small(len(rows)):
            lanes = _sk.move_lanes(np.diff(start), numba.get_num_threads())
            _sk.shuffle_moves(rows, fixed, start, seeds, *lanes)
    return rows, start, fixed


def sequential_hop(kern, family, spec: SequentialSpec, labels, row0: int, base: int, p: int,
                   h: int, carries):
    """Hop ``h`` on partition ``p`` (global rows ``row0 ..``, rows ``base ..`` of
    ``kern``): the moves that start at partition ``(p - h) mod P`` allocate their points
    here, from the carries of the previous hop.  Returns ``(carry, piece)`` with ``piece =
    (moves, start, local rows, sides)``; the caller chooses the thread count."""
    moves = np.flatnonzero((spec.rot + h) % spec.n_parts == p).astype(np.int64)
    carry = merge_carries(spec, carries, moves)
    rows, start, fixed = move_rows(spec, labels, row0, p, moves)
    carry, sides = _allocate_rows(family, kern, spec, carry, rows + base, start, fixed)
    return carry, (moves, start, rows, sides)


def _allocate_rows(family, kern, spec: SequentialSpec, carry: Carry, krows, start, fixed,
                   scans=None):
    """The carry's moves go on allocating rows ``krows`` of ``kern`` (grouped by move,
    ``start``; ``scans``: as :func:`_run`), from a copy of those rows in that order where
    the family makes one: ``(carry, sides as int8)``."""
    if len(krows) == 0:
        return carry, np.zeros(0, np.int8)
    with serial_when_small(len(krows)):
        gathered = family.gathered_kernel(kern, krows)
        if gathered is not None:
            kern, krows = gathered, np.arange(len(krows), dtype=np.int64)
        carry, sides = _run(kern, spec, carry, krows, start, fixed, scans=scans)
    return carry, sides.astype(np.int8)


# ------------------------------------------------------- the moves' points collected
class MovePoints(NamedTuple):
    """One partition's points of every sequential move (:func:`move_rows` with all the
    moves): where each move's start (``start``, (B + 1,)), their fixed sides and their
    data rows in working form, in allocation order."""

    start: np.ndarray
    fixed: np.ndarray
    X: object


def collect_points(family, X, spec: SequentialSpec, labels, row0: int, base: int, p: int):
    """This partition's :class:`MovePoints` (rows of ``X`` from ``base``)."""
    rows, start, fixed = move_rows(spec, labels, row0, p, np.arange(spec.n_moves))
    return MovePoints(start, fixed, family.subset(X, rows + base))


def collected_allocation(family, spec: SequentialSpec, n_total: int, carry: Carry, points,
                         moves, hyper=None):
    """The sequential allocation of ``moves`` from the points of every partition collected
    in one place (``points``: a :class:`MovePoints` per partition): hop by hop as
    :func:`sequential_hop` runs them, each move taking in hop h its points of partition
    ``(rot + h) mod P``, so that its points, order, random stream and arithmetic are those
    of the hops and the result is the same to the last bit, with no hand-over between
    partitions.  The scan moves (``spec.scans``) take all their points at once, in that
    order (an order of the same law for a move and its reverse).  Returns ``(carry of
    moves, sides)`` with ``sides[q]`` the sides of partition q's points of ``moves``, move
    by move.  ``hyper``: the collapsed kernel's hyperparameters for ``n_total`` points when
    the caller has them (a Gaussian's count tables cost 57 ms at 10^6 points), else made
    here."""
    P = spec.n_parts
    moves = np.asarray(moves, dtype=np.int64)
    offset = np.concatenate([[0], np.cumsum([family.n_points(pt.X) for pt in points])])
    stacked = family.stack_rows([pt.X for pt in points])
    if hyper is None:
        kern = family.partition_kernel(stacked, n_total)
    else:  # tables by a cluster's size for one point: the caller's are for n_total
        kern = family.partition_kernel(stacked, 1)._replace(hyper=hyper)
    out = [[None] * len(moves) for _ in range(P)]
    scans = (np.full(spec.n_moves, -1, dtype=np.int64) if spec.scans is None
             else np.asarray(spec.scans, dtype=np.int64))
    carries = []
    for scan in (False, True):
        at = np.flatnonzero((scans[moves] >= 0) == scan)
        if not len(at):
            continue
        some = moves[at]
        hops = []  # per hop: each move's partition and its points there
        for h in range(P):
            where = (spec.rot[some] + h) % P
            lo = np.array([points[q].start[b] for q, b in zip(where, some)], dtype=np.int64)
            hi = np.array([points[q].start[b + 1] for q, b in zip(where, some)],
                          dtype=np.int64)
            hops.append((where, lo, hi))
        carry_of = merge_carries(spec, [carry], some)
        if not scan:
            for where, lo, hi in hops:
                carry_of, sides = _hop_rows(family, kern, spec, carry_of, points, offset,
                                            where, lo, hi)
                _deal(out, at, where, lo, hi, sides, np.arange(len(some)))
        else:  # each move's points of every hop, in hop order, in one call
            order = [(a, h) for a in range(len(some)) for h in range(P)]
            where = np.array([hops[h][0][a] for a, h in order], dtype=np.int64)
            lo = np.array([hops[h][1][a] for a, h in order], dtype=np.int64)
            hi = np.array([hops[h][2][a] for a, h in order], dtype=np.int64)
            krows, fixed = _pieces(points, offset, where, lo, hi)
            start = np.concatenate([[0], np.cumsum((hi - lo).reshape(len(some), P).sum(1))])
            carry_of, sides = _allocate_rows(family, kern, spec, carry_of, krows,
                                             start.astype(np.int64), fixed, scans[some])
            _deal(out, at, where, lo, hi, sides, np.repeat(np.arange(len(some)), P))
        carries.append(carry_of)
    carry = merge_carries(spec, carries or [carry], moves)
    return carry, [np.concatenate(o) if o else np.zeros(0, np.int8) for o in out]


def _pieces(points, offset, where, lo, hi):
    """Rows of the stacked points (and their fixed sides) of the pieces ``points[q].X[lo:hi]``
    for each ``(q, lo, hi)``, one after another."""
    krows = np.concatenate([offset[q] + np.arange(u, v)
                            for q, u, v in zip(where, lo, hi)]).astype(np.int64)
    fixed = np.concatenate([points[q].fixed[u:v]
                            for q, u, v in zip(where, lo, hi)]).astype(np.int64)
    return krows, fixed


def _hop_rows(family, kern, spec, carry, points, offset, where, lo, hi):
    """One hop of the collected allocation: each carried move takes its points of partition
    ``where[a]`` (``lo[a]:hi[a]``)."""
    krows, fixed = _pieces(points, offset, where, lo, hi)
    start = np.concatenate([[0], np.cumsum(hi - lo)]).astype(np.int64)
    return _allocate_rows(family, kern, spec, carry, krows, start, fixed)


def _deal(out, at, where, lo, hi, sides, move):
    """Hand the sides of consecutive pieces (piece t: ``hi[t] - lo[t]`` points of partition
    ``where[t]``, of the move ``at[move[t]]``; a move has one piece a partition) to their
    partitions' lists ``out[q][a]``."""
    pos = 0
    for t, q in enumerate(where):
        n = int(hi[t] - lo[t])
        out[q][at[move[t]]] = sides[pos:pos + n]
        pos += n


def collected_piece(spec: SequentialSpec, labels, row0: int, p: int, groups):
    """Partition ``p``'s piece for :func:`sequential_finish` from the collected
    allocations ``groups`` (``(moves, sides)`` pairs, ``sides`` this partition's, move by
    move): its rows of every move and their sides, as one hop would give them."""
    B = spec.n_moves
    rows, start, _ = move_rows(spec, labels, row0, p, np.arange(B))
    sides = np.zeros(len(rows), dtype=np.int8)
    for moves, part in groups:
        at = 0
        for b in moves:
            lo, hi = start[b], start[b + 1]
            sides[lo:hi] = part[at:at + hi - lo]
            at += hi - lo
    return (np.arange(B, dtype=np.int64), start, rows, sides)


def sequential_finish(family, X, spec: SequentialSpec, labels, codes, pieces, row0: int,
                      base: int):
    """A partition's codes once every hop is done (the sides of the moves' points, their
    anchors' sides; ``codes`` None: zeros elsewhere) and its :class:`SideStats`
    (statistics read from ``X`` at rows ``base ..``, in increasing row order; the first
    rows of the clusters of ``labels``)."""
    n = len(labels)
    codes = np.zeros(n, dtype=np.int8) if codes is None else np.array(codes, dtype=np.int8)
    S = int(spec.n_sides.sum())
    slot0 = spec.slot0
    slot_of = np.full(n, -1, dtype=np.int64)  # each row's side slot (-1: in no move)
    for moves, start, local, sides in pieces:
        codes[local] = sides
        slot_of[local] = slot0[np.repeat(moves, np.diff(start))] + sides
    pins = spec.pins - row0
    b, a = np.nonzero((spec.pins >= 0) & (pins >= 0) & (pins < n))
    codes[pins[b, a]] = a
    slot_of[pins[b, a]] = slot0[b] + a
    rows = np.flatnonzero(slot_of >= 0)  # increasing, without a sort
    slots = slot_of[rows]
    with serial_when_small(len(rows)):
        stats = family.stats_at(X, rows + base, slots, S)
    # rows are increasing: a slot's first row is where it first appears
    at = first_rows(slots, S, 0)
    first = np.where(at >= 0, rows[np.maximum(at, 0)] + row0, -1) if len(rows) else at
    return codes, SideStats(stats, first, first_rows(labels, len(spec.move_of), row0))


def combine_sides(family, parts) -> SideStats:
    """The partitions' :class:`SideStats` in partition order."""
    stats = parts[0].stats
    for p in parts[1:]:
        stats = family.combine(stats, p.stats)
    return SideStats(stats, combine_first([p.first for p in parts]),
                     combine_first([p.clusters for p in parts]))


# ------------------------------------------------------------ multi-way moves' helpers
def sample_members(labels, c: int, anchor: int, count: int, key: int, row0: int):
    """``(keys, rows)``: the ``count`` members of cluster ``c`` other than ``anchor`` (global
    rows) with the smallest point keys among this partition's rows."""
    rows = np.flatnonzero(np.asarray(labels) == c).astype(np.int64) + row0
    rows = rows[rows != anchor]
    keys = _sk.point_keys(np.uint64(key), rows)
    pick = np.argsort(keys, kind="stable")[:count]
    return keys[pick], rows[pick]


def combine_members(parts, count: int) -> np.ndarray:
    """The ``count`` rows with the smallest keys over the partitions' :func:`sample_members`,
    in the order of their keys (an ordered uniform sample without replacement)."""
    keys = np.concatenate([p[0] for p in parts])
    rows = np.concatenate([p[1] for p in parts])
    return rows[np.argsort(keys, kind="stable")[:count]]


def first_rows(labels, n_clusters: int, row0: int) -> np.ndarray:
    """The smallest global row of each cluster in this partition (-1: none)."""
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    first = np.full(n_clusters, len(labels), dtype=np.int64)
    _sk.first_members(labels, first)
    return np.where(first < len(labels), first + row0, -1)


def combine_first(parts) -> np.ndarray:
    """:func:`first_rows` of several partitions, in partition order."""
    first = parts[0].copy()
    for p in parts[1:]:
        take = (first < 0) | ((p >= 0) & (p < first))
        first = np.where(take, p, first)
    return first


def relabel_split(labels, codes, c: int, side_map, label_map):
    """Labels after a multi-way move: ``label_map[z]``, and for the points of cluster ``c``
    (c >= 0: a split) ``side_map[code]``; sub-labels zero."""
    labels = np.asarray(labels, dtype=np.int64)
    z = np.asarray(label_map, dtype=np.int64)[labels]
    if c >= 0:
        mask = labels == c
        z[mask] = np.asarray(side_map, dtype=np.int64)[np.asarray(codes)[mask]]
    return z, np.zeros(len(z), dtype=np.int8)
