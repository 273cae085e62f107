"""The sub-cluster sampler's data side, split into partitions of rows.

The sub-cluster sampler (:mod:`dpclust.samplers.subcluster`) touches the data in three
places only: the data pass (labels in, labels and per-slot statistics out), the
relabelling after its moves, and a few rows for seeding sub-clusters.  Everything here is a
pure function of one partition's rows, labels and the broadcast pass parameters, so that the
same code runs in-process (:class:`LocalPartitions`) or on the workers of a Dask cluster
(:mod:`dpclust.distributed`), and gives the same numbers in both.

**Why the result does not depend on where a partition runs.**  A partition of ``n_p`` rows
is cut into chunks whose boundaries depend only on ``n_p`` (and the chunk size and the
number of slots); chunk c of the whole data set draws from the SplitMix64 stream seeded by
the iteration's key and c (:func:`~dpclust.kernels.subcluster.chunk_seeds`).  A
partition sums its chunks' statistics in chunk order (:func:`reduce_chunks`), and the
partitions' sums are added in partition order (:func:`combine_parts`): the same floating
point operations in the same order wherever they run.  A slot's uniformly chosen member
carries its random key, so members merge by the smaller key, with no random number drawn at
the merge.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numba
import numpy as np

from ..kernels import subcluster as _sk
from ..kernels.entry_points import entry_point
from ..utils.threads import SERIAL_ROWS, serial_when_small
from .kmeans import kmeans_centres

#: the accumulators of one pass are kept under this many bytes by using fewer chunks
ACC_BUDGET = 256 * 2**20


class PassSpec(NamedTuple):
    """What every partition receives for one data pass: the thin cluster parameters.

    ``kparams``: the K cluster then 2K sub-cluster parameters (labels-only passes,
    ``update`` 3: the K clusters' alone) packed by the family's pass
    kernel; ``anchors``: global row index of each cluster's anchor; ``update``: 0 keeps the
    labels, 1 draws sub-labels, 2 draws both, 3 labels alone; ``rand_c``/``rand_p``: the random split
    proposal (-1: none); ``key``: the iteration's stream key; ``n_slots``: ``2K + 2``.
    """

    kparams: tuple
    log_pi: np.ndarray
    log_pibar: np.ndarray
    fresh: np.ndarray
    group_of: np.ndarray
    group_start: np.ndarray
    group_members: np.ndarray
    anchors: np.ndarray
    update: int
    rand_c: int
    rand_p: float
    key: int
    n_slots: int

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays shipped (what one pass sends to each partition)."""
        arrays = list(self.kparams) + [self.log_pi, self.log_pibar, self.fresh, self.group_of,
                                       self.group_start, self.group_members, self.anchors]
        return int(sum(np.asarray(a).nbytes for a in arrays))


class LaunchSpec(NamedTuple):
    """What every partition receives for one launch pass of the exact split-merge moves.

    ``kparams``: the 2B launch components packed by the family's pass kernel (side s of
    move b at ``2b + s``); ``log_w`` (B, 2): their log weights; ``block_of`` (K,): the move of
    each cluster (-1: none); ``side_of`` (K,): -1 for a cluster that a move splits, else the
    side that a merge move gives its points; ``pins`` (B, 2): the global rows that a move
    keeps on side 0 and side 1 and leaves out of the proposal's probability (-1: none);
    ``stages`` (B, 2): the key range of the points that this pass allocates (None: all);
    ``stage_key``: the key of that range; ``mode``: 0 refines the launch (an EM step), 1
    proposes, 2 proposes and counts every point in its cluster's slot (the last stage);
    ``key``: the pass's stream key; ``n_slots``: ``K + 2B``.
    """

    kparams: tuple
    log_w: np.ndarray
    block_of: np.ndarray
    side_of: np.ndarray
    pins: np.ndarray
    mode: int
    key: int
    n_slots: int
    stages: np.ndarray | None = None
    stage_key: int = 0

    @property
    def n_moves(self) -> int:
        return int(self.log_w.shape[0])

    @property
    def nbytes(self) -> int:
        arrays = list(self.kparams) + [self.log_w, self.block_of, self.side_of, self.pins]
        return int(sum(np.asarray(a).nbytes for a in arrays))


class PartStats(NamedTuple):
    """One partition's (or the whole data set's) per-slot results of a pass.

    ``acc``: raw statistics (S, n_stats); ``cnt``: points; ``first``: smallest global row
    (-1: empty); ``rkey``/``res``: key and global row of a uniformly chosen member
    (key 1 and row -1 when empty); ``ll``: summed sub-cluster log-likelihoods.
    """

    acc: np.ndarray
    cnt: np.ndarray
    first: np.ndarray
    rkey: np.ndarray
    res: np.ndarray
    ll: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self))


def chunk_bounds(n_rows: int, chunk_size: int, n_slots: int, n_stats: int,
                 n_partitions: int = 1) -> np.ndarray:
    """Chunk boundaries (local, ``0 .. n_rows``) of one partition of ``n_rows`` rows.

    About ``chunk_size`` rows a chunk, fewer chunks when their accumulators (``n_slots x
    n_stats`` floats each) would pass :data:`ACC_BUDGET` over all partitions.
    """
    n_chunks = max(1, -(-n_rows // int(chunk_size)))
    per_chunk = n_slots * n_stats * 8
    cap = max(1, ACC_BUDGET // (per_chunk * max(n_partitions, 1)))
    n_chunks = max(1, min(n_chunks, cap))
    return np.linspace(0, n_rows, n_chunks + 1).round().astype(np.int64)


def partition_layout(rows, chunk_size: int, n_slots: int, n_stats: int):
    """For partitions of ``rows`` rows each: ``(local bounds, first global chunk index)`` of
    every partition."""
    out, offset = [], 0
    for n_p in rows:
        b = chunk_bounds(int(n_p), chunk_size, n_slots, n_stats, len(rows))
        out.append((b, offset))
        offset += len(b) - 1
    return out


def empty_chunks(n_chunks: int, n_slots: int, n_stats: int):
    """Zeroed per-chunk outputs of a pass: ``acc, cnt, first, rkey, res, ll``."""
    return (np.zeros((n_chunks, n_slots, n_stats)), np.zeros((n_chunks, n_slots), np.int64),
            np.full((n_chunks, n_slots), -1, np.int64), np.ones((n_chunks, n_slots)),
            np.full((n_chunks, n_slots), -1, np.int64), np.zeros((n_chunks, n_slots)))


def reduce_chunks(acc, cnt, first, rkey, res, ll, row0: int = 0) -> PartStats:
    """One partition's results from its chunks' (rows numbered from ``row0``)."""
    big = np.iinfo(np.int64).max
    f = np.where(first < 0, big, first).min(axis=0)
    f = np.where(f == big, -1, f + row0)
    j = np.argmin(rkey, axis=0)
    cols = np.arange(rkey.shape[1])
    key = rkey[j, cols]
    member = res[j, cols]
    member = np.where(member >= 0, member + row0, -1)
    return PartStats(acc.sum(axis=0), cnt.sum(axis=0), f, key, member, ll.sum(axis=0))


def combine_parts(parts) -> PartStats:
    """The partitions' results added in partition order (the same order everywhere)."""
    parts = list(parts)
    acc = parts[0].acc.copy()
    cnt = parts[0].cnt.copy()
    ll = parts[0].ll.copy()
    first = parts[0].first.copy()
    rkey = parts[0].rkey.copy()
    res = parts[0].res.copy()
    for p in parts[1:]:
        acc += p.acc
        cnt += p.cnt
        ll += p.ll
        take = (first < 0) | ((p.first >= 0) & (p.first < first))
        first = np.where(take, p.first, first)
        smaller = p.rkey < rkey
        rkey = np.where(smaller, p.rkey, rkey)
        res = np.where(smaller, p.res, res)
    return PartStats(acc, cnt, first, rkey, res, ll)


def pass_function(pk):
    """The family's compiled pass (its cached entry point, or the generic one) and the extra
    arguments it needs."""
    return entry_point(pk, "data_pass", _sk.data_pass, _generic_extra(pk), (int(pk.block),))


def _generic_extra(pk):
    """The family's functions for the generic compiled passes."""
    if pk.score_block is None:
        return (pk.log_likelihood, pk.accumulate, 0, _sk.no_score_block,
                _sk.no_accumulate_block)
    return (pk.log_likelihood, pk.accumulate, int(pk.block), pk.score_block,
            pk.accumulate_block)


def run_chunks(pk, spec: PassSpec, labels, sub, bounds, seeds, anchors, labels_out, codes,
               outputs):
    """Run the compiled pass over the chunks ``bounds`` (indices into ``pk.data``)."""
    fn, extra = pass_function(pk)
    acc, cnt, first, rkey, res, ll = outputs
    fn(pk.data, spec.kparams, spec.log_pi, spec.log_pibar, spec.fresh, spec.group_of,
       spec.group_start, spec.group_members, labels, sub, anchors, int(spec.update),
       int(spec.rand_c), float(spec.rand_p), bounds, seeds, labels_out, codes, acc, cnt, first,
       rkey, res, ll, *extra)


def pass_partition(pk, spec: PassSpec, labels, sub, row0: int, bounds, chunk0: int):
    """The data pass over one partition whose rows are ``pk.data`` (global rows ``row0 ..``).

    ``bounds`` are its local chunk boundaries and ``chunk0`` the global index of its first
    chunk.  Returns ``(labels, codes, PartStats)``; the caller runs it under the thread
    count it wants.
    """
    n_chunks = len(bounds) - 1
    seeds = _sk.chunk_seeds(spec.key, chunk0 + n_chunks)[chunk0:]
    n_stats = pk.n_stats
    outputs = empty_chunks(n_chunks, spec.n_slots, n_stats)
    labels_out = np.empty(len(labels), dtype=np.int64)
    codes = np.empty(len(labels), dtype=np.int8)
    anchors = np.ascontiguousarray(spec.anchors - row0, dtype=np.int64)
    run_chunks(pk, spec, labels, sub, bounds, seeds, anchors, labels_out, codes, outputs)
    return labels_out, codes, reduce_chunks(*outputs, row0=row0)


def launch_function(pk):
    """The family's compiled launch pass and the extra arguments it needs."""
    return entry_point(pk, "launch_pass", _sk.launch_pass, _generic_extra(pk),
                       (int(pk.block),))


def launch_outputs(n_chunks: int, spec: LaunchSpec, n_stats: int):
    """Zeroed per-chunk outputs of a launch pass: ``acc, cnt, first, rkey, res, logq``."""
    acc, cnt, first, rkey, res, _ = empty_chunks(n_chunks, spec.n_slots, 0)
    B2 = 2 * spec.n_moves
    return (np.zeros((n_chunks, B2, n_stats)), cnt, first, rkey, res, np.zeros((n_chunks, B2)))


def run_launch_chunks(pk, spec: LaunchSpec, labels, bounds, seeds, codes, outputs,
                      row0: int = 0):
    """Run the compiled launch pass over the chunks ``bounds`` (indices into ``pk.data``,
    whose first row is global row ``row0``)."""
    fn, extra = launch_function(pk)
    acc, cnt, first, rkey, res, logq = outputs
    pins = np.asarray(spec.pins, dtype=np.int64)
    pins = np.where(pins >= 0, pins - row0, -1)
    stages = spec.stages
    if stages is None:  # every point, pinned ones included
        stages = np.tile([0.0, 2.0], (spec.n_moves, 1))
    fn(pk.data, spec.kparams, np.ascontiguousarray(spec.log_w, dtype=np.float64), labels,
       np.ascontiguousarray(spec.block_of, dtype=np.int64),
       np.ascontiguousarray(spec.side_of, dtype=np.int64), pins,
       np.ascontiguousarray(stages, dtype=np.float64), np.uint64(spec.stage_key), int(row0),
       int(spec.mode), bounds, seeds, codes, acc, cnt, first, rkey, res, logq, *extra)


def launch_partition(pk, spec: LaunchSpec, labels, row0: int, bounds, chunk0: int,
                     codes=None):
    """The launch pass over one partition (global rows ``row0 ..``): ``(labels, codes,
    PartStats)`` with ``PartStats.acc`` the sides' statistics and ``PartStats.ll`` their
    ``logq`` (see :func:`~dpclust.kernels.subcluster.launch_chunk`)."""
    n_chunks = len(bounds) - 1
    seeds = _sk.chunk_seeds(spec.key, chunk0 + n_chunks)[chunk0:]
    outputs = launch_outputs(n_chunks, spec, pk.n_stats)
    codes = np.zeros(len(labels), dtype=np.int8) if codes is None else np.array(codes)
    run_launch_chunks(pk, spec, labels, bounds, seeds, codes, outputs, row0)
    return labels, codes, reduce_chunks(*outputs, row0=row0)


def select_partition(labels, thresholds, anchors, key: int, key2: int, row0: int,
                     chunk_size: int = 65536):
    """One partition's part of the launch subsamples and second anchors: ``(local rows of the
    subsample, best_key, best_row)`` with ``best_key[k]``/``best_row[k]`` the smallest second
    key of a point of cluster k other than its anchor and its global row (2 and -1 if none);
    partitions combine them by the smaller key (:func:`combine_second`)."""
    n = len(labels)
    n_chunks = max(1, -(-n // chunk_size))
    bounds = np.linspace(0, n, n_chunks + 1).round().astype(np.int64)
    K = len(thresholds)
    mask = np.zeros(n, dtype=np.bool_)
    best_key = np.full((n_chunks, K), 2.0)
    best_row = np.full((n_chunks, K), -1, dtype=np.int64)
    with serial_when_small(n):
        _sk.select_points(np.asarray(labels, dtype=np.int64),
                          np.ascontiguousarray(thresholds, dtype=np.float64),
                          np.ascontiguousarray(anchors, dtype=np.int64), np.uint64(key),
                          np.uint64(key2), int(row0), bounds, mask, best_key, best_row)
    j = np.argmin(best_key, axis=0)
    cols = np.arange(K)
    return np.flatnonzero(mask), best_key[j, cols], best_row[j, cols]


def combine_second(parts):
    """The second anchors of several partitions (``(best_key, best_row)`` pairs), in
    partition order: the smaller key wins."""
    key, row = parts[0]
    key, row = key.copy(), row.copy()
    for k2, r2 in parts[1:]:
        smaller = k2 < key
        key = np.where(smaller, k2, key)
        row = np.where(smaller, r2, row)
    return row


def start_partition(key: int, n_clusters: int, n_rows: int, bounds, chunk0: int, labels=None):
    """Starting labels (uniform over ``n_clusters``, unless given) and sub-labels of one
    partition, from the streams of its chunks."""
    n_chunks = len(bounds) - 1
    seeds = _sk.chunk_seeds(key, chunk0 + n_chunks)[chunk0:]
    z = np.empty(n_rows, dtype=np.int64)
    s = np.empty(n_rows, dtype=np.int8)
    _sk.random_labels(bounds, seeds, int(n_clusters), z, s)
    if labels is not None:
        z = np.asarray(labels, dtype=np.int64)
    return z, s


#: rows of the sample that the k-means start of partitioned data runs on
KMEANS_SAMPLE = 20_000


class StartLabels(NamedTuple):
    """A starting labelling held by the data side (an array in-process, one future a
    partition on a Dask cluster) over ``n_clusters`` labels, some of which may be empty."""

    labels: object
    n_clusters: int


def sample_rate(n_rows: int, sample_size: int) -> float:
    """The share of the rows that a uniform sample of about ``sample_size`` rows keeps."""
    return min(1.0, float(sample_size) / max(int(n_rows), 1))


def sample_partition(n_rows: int, row0: int, key: int, rate: float) -> np.ndarray:
    """Local rows of one partition (global rows ``row0 ..``) in the start's sample: those
    whose uniform key (:func:`~dpclust.kernels.streams.point_key` of ``key`` and the global
    row) is below ``rate``, so that the sample does not depend on the partitions."""
    rows = np.arange(int(row0), int(row0) + int(n_rows), dtype=np.int64)
    return np.flatnonzero(_sk.point_keys(np.uint64(key), rows) < rate)


def nearest_centre(features, centres, chunk: int = 4096) -> np.ndarray:
    """The nearest centre (squared Euclidean distance; the first of ties) of every row of
    ``features`` (dense or sparse).  Each row's distances are computed from that row alone,
    in the same operations whatever rows come with it, so a partition's labels do not
    depend on the partitions."""
    import scipy.sparse as sp

    centres = np.asarray(centres, dtype=np.float64)
    n = features.shape[0]
    out = np.empty(n, dtype=np.int64)
    if sp.issparse(features):
        F = sp.csr_matrix(features, dtype=np.float64)
        norms = np.asarray(F.multiply(F).sum(axis=1)).ravel()
        d2 = norms[:, None] - 2.0 * np.asarray(F @ centres.T) + (centres ** 2).sum(axis=1)
        out[:] = np.argmin(d2, axis=1)
        return out
    F = np.asarray(features, dtype=np.float64)
    k, d = centres.shape
    step = max(1, min(chunk, (1 << 22) // max(k * d, 1)))
    for a in range(0, n, step):
        diff = F[a:a + step, None, :] - centres[None, :, :]
        out[a:a + step] = np.argmin((diff * diff).sum(axis=2), axis=1)
    return out


def kmeans_start(rng, data, family, n_clusters: int, sample_size: int = KMEANS_SAMPLE):
    """The k-means start of partitioned data (in-process or on a Dask cluster, the same
    labels): k-means++ seeds and Lloyd iterations
    (:func:`~dpclust.samplers.kmeans.kmeans_centres`) on a uniform sample of about
    ``sample_size`` rows gathered from the partitions (``family.init_features`` of the
    sample), then every row to its nearest centre where it lies.  Returns a
    :class:`StartLabels`, or None when the family has no features for k-means."""
    key = int(rng.integers(2**63))
    sample = data.init_sample(key, sample_rate(sum(data.rows), sample_size))
    features = family.init_features(sample)
    if features is None:
        return None
    centres = kmeans_centres(rng, features, n_clusters)
    if len(centres) == 0:  # no row in the sample: one cluster
        return StartLabels(data.nearest(np.zeros((1, features.shape[1])), sample), 1)
    return StartLabels(data.nearest(centres, sample), len(centres))


def start_labels(family, X, centres, reference) -> np.ndarray:
    """Rows ``X``'s nearest ``centres`` in the features of k-means, on the scale that
    ``family.init_features_like`` gives them beside the sample ``reference``."""
    return nearest_centre(family.init_features_like(X, reference), centres)


def relabel_partition(labels, codes, label_map, sub_map):
    """Labels and sub-labels after the moves: ``label_map[4 z + code]`` (see
    :func:`~dpclust.kernels.subcluster.relabel_pass`)."""
    z = np.empty(len(labels), dtype=np.int64)
    s = np.empty(len(labels), dtype=np.int8)
    _sk.relabel_pass(labels, codes, label_map, sub_map, z, s)
    return z, s


class LocalPartitions:
    """The data side of the sub-cluster sampler in this process (threads over chunks).

    Parameters
    ----------
    model : MixtureModel
    rows : sequence of int or None
        Rows per partition (None: one partition).  Two runs with the same partitions and
        ``random_state`` give the same labels, here or on a Dask cluster.
    """

    def __init__(self, model, rows=None):
        self.model = model
        self._chunk_size, self._n_jobs = 4096, None
        n = model.n_samples
        self.rows = [n] if rows is None else [int(r) for r in rows]
        if sum(self.rows) != n or min(self.rows) < 1:
            raise ValueError(f"partitions of {self.rows} rows do not cover the {n:,} points")
        self.row0 = np.concatenate([[0], np.cumsum(self.rows)]).astype(np.int64)

    @property
    def pass_kernel(self):
        return self.model.pass_kernel

    def _layout(self, n_slots):
        pk = self.pass_kernel
        n_stats = 1 if pk is None else pk.n_stats
        layout = partition_layout(self.rows, self._chunk_size, n_slots, n_stats)
        bounds = np.concatenate(
            [b[:-1] + self.row0[p] for p, (b, _) in enumerate(layout)] + [[self.row0[-1]]])
        return layout, bounds.astype(np.int64)

    def configure(self, chunk_size: int, n_jobs):
        self._chunk_size = int(chunk_size)
        self._n_jobs = n_jobs
        return self

    def _threads(self):
        """``n_jobs`` threads, or one on a few thousand points, where a parallel region
        costs more than its work (the thread count never changes a result)."""
        return threads(self._n_jobs, int(self.row0[-1]))

    def start(self, key: int, n_clusters: int, labels=None, n_slots: int = 4):
        """Starting labels and sub-labels (whole data set)."""
        _, bounds = self._layout(n_slots)
        return start_partition(key, n_clusters, int(self.row0[-1]), bounds, 0, labels)

    def init_sample(self, key: int, rate: float):
        """The rows of the k-means start's sample (:func:`sample_partition`), in the
        family's working form, in the order of the data."""
        parts = [sample_partition(b - a, a, key, rate) + a
                 for a, b in zip(self.row0[:-1], self.row0[1:])]
        return self.rows_of(np.concatenate(parts))

    def nearest(self, centres, reference):
        """Every row's nearest centre (:func:`start_labels`), partition by partition."""
        fam, X = self.model.family, self.model.X
        return np.concatenate([
            start_labels(fam, fam.subset(X, np.arange(a, b)), centres, reference)
            for a, b in zip(self.row0[:-1], self.row0[1:])])

    def run_pass(self, spec: PassSpec, labels, sub):
        """``(labels, codes, PartStats)`` of the whole data set."""
        pk = self.pass_kernel
        layout, bounds = self._layout(spec.n_slots)
        n = len(labels)
        seeds = _sk.chunk_seeds(spec.key, len(bounds) - 1)
        outputs = empty_chunks(len(bounds) - 1, spec.n_slots, pk.n_stats)
        labels_out = np.empty(n, dtype=np.int64)
        codes = np.empty(n, dtype=np.int8)
        anchors = np.ascontiguousarray(spec.anchors, dtype=np.int64)
        with self._threads():
            run_chunks(pk, spec, labels, sub, bounds, seeds, anchors, labels_out, codes,
                       outputs)
        parts = []
        for b, c0 in layout:
            c1 = c0 + len(b) - 1
            parts.append(reduce_chunks(*(a[c0:c1] for a in outputs)))
        return labels_out, codes, combine_parts(parts)

    def relabel(self, labels, codes, label_map, sub_map):
        return relabel_partition(labels, codes, label_map, sub_map)

    def select(self, key: int, key2: int, thresholds, anchors, labels):
        """``(global rows, their labels, the rows in working form, second)`` of the launch
        subsamples (every point whose key falls below its cluster's threshold) and, for every
        cluster with a positive threshold, a uniform member other than its anchor
        (``second[k]``, -1 if none), chosen by independent keys."""
        parts = []
        for p in range(len(self.rows)):
            a, b = self.row0[p], self.row0[p + 1]
            local, best_key, best_row = select_partition(labels[a:b], thresholds, anchors, key,
                                                         key2, a)
            parts.append((local + a, best_key, best_row))
        index = np.concatenate([p[0] for p in parts])
        second = combine_second([(p[1], p[2]) for p in parts])
        return index, np.asarray(labels)[index], self.rows_of(index), second

    def launch_pass(self, spec: LaunchSpec, labels, codes=None):
        """``(labels, codes, PartStats)`` of a launch pass over the whole data set
        (``codes``: the sides of an earlier stage, kept where this pass allocates none)."""
        pk = self.pass_kernel
        layout = partition_layout(self.rows, self._chunk_size, 2 * spec.n_moves, pk.n_stats)
        bounds = np.concatenate(
            [b[:-1] + self.row0[p] for p, (b, _) in enumerate(layout)] + [[self.row0[-1]]])
        bounds = bounds.astype(np.int64)
        seeds = _sk.chunk_seeds(spec.key, len(bounds) - 1)
        outputs = launch_outputs(len(bounds) - 1, spec, pk.n_stats)
        codes = np.zeros(len(labels), dtype=np.int8) if codes is None else np.array(codes)
        with self._threads():
            run_launch_chunks(pk, spec, labels, bounds, seeds, codes, outputs)
        parts = []
        for b, c0 in layout:
            c1 = c0 + len(b) - 1
            parts.append(reduce_chunks(*(a[c0:c1] for a in outputs)))
        return labels, codes, combine_parts(parts)

    def rows_of(self, index):
        """The data rows ``index`` (global), in the family's working form."""
        return self.model.family.subset(self.model.X, np.asarray(index, dtype=np.int64))

    def stats_at(self, index, labels, n_clusters):
        """Statistics of the data rows ``index`` (global) in clusters ``labels``."""
        return self.model.family.stats_at(self.model.X, np.asarray(index, dtype=np.int64),
                                          labels, n_clusters)

    def pack(self, params):
        return self.pass_kernel.pack(params)

    def unpack(self, acc):
        return self.pass_kernel.unpack(acc)

    # ------------------------------------------------ sequential moves (_partitioned_moves)
    def seed(self, spec):
        """Every sequential move's sides started from its anchors (a :class:`~dpclust.
        samplers._partitioned_moves.Carry`)."""
        from ._partitioned_moves import seed_carry

        pins = np.concatenate([spec.pins[b, :k] for b, k in enumerate(spec.n_sides)])
        return seed_carry(self.model.kernel, spec, pins)

    def propose(self, launch, spec, labels, codes, carry, moving=None):
        """One round's proposal: the launch pass ``launch`` (a :class:`LaunchSpec`; None: no
        launched move) and the sequential moves of ``spec`` from ``carry`` (None: none),
        hop by hop over the partitions as on a Dask cluster.  Returns ``(labels, codes,
        PartStats of the launch or None, carry, SideStats)`` (the last two None without
        sequential moves); ``codes``: the sides kept where neither allocates (None:
        zeros); ``moving``: each move's number of points (how a cluster chooses to run
        them; the result is the same)."""
        part = None
        if launch is not None:
            labels, codes, part = self.launch_pass(launch, labels, codes)
        if spec is None:
            return labels, codes, part, None, None
        labels, codes, carry, sides = self.sequential(spec, labels, codes, carry)
        return labels, codes, part, carry, sides

    def collects(self, moving=None) -> bool:
        """Whether a Dask cluster would collect the points of a round's sequential moves in
        one place (:meth:`dpclust.distributed.DaskPartitions.collects`).

        The rule is :func:`~dpclust.samplers._partitioned_moves.collects`, with the bytes
        of a row measured partition by partition as there."""
        from ._partitioned_moves import collects

        return collects(moving, int(self.row0[-1]), self._row_bytes)

    @functools.cached_property
    def _row_bytes(self) -> float:
        from ._partitioned_moves import data_bytes

        fam, X = self.model.family, self.model.X
        total = sum(data_bytes(fam.subset(X, np.arange(a, b)))
                    for a, b in zip(self.row0[:-1], self.row0[1:]))
        return total / max(int(self.row0[-1]), 1)

    def sequential(self, spec, labels, codes, carry):
        """The sequential moves of ``spec`` from ``carry``, hop by hop over the partitions as
        on a Dask cluster, or with their points collected in one place when a move scans
        (the same numbers for the others): ``(labels, codes, carry, SideStats)``."""
        from ._partitioned_moves import combine_sides, merge_carries, sequential_finish

        fam = self.model.family
        P = len(self.rows)
        edges = self.row0
        with self._threads():
            prev, pieces = (self._collected(spec, labels, carry) if spec.scanning
                            else self._hops(spec, labels, carry))
        new_codes, sides = [], []
        for p in range(P):
            a, b = int(edges[p]), int(edges[p + 1])
            c, s = sequential_finish(fam, self.model.X, spec, labels[a:b],
                                     None if codes is None else codes[a:b], pieces[p], a, a)
            new_codes.append(c)
            sides.append(s)
        final = merge_carries(spec, prev, np.arange(spec.n_moves))
        return labels, np.concatenate(new_codes), final, combine_sides(fam, sides)

    def _hops(self, spec, labels, carry):
        """The moves hop by hop: the last hop's carries and each partition's pieces."""
        from ._partitioned_moves import sequential_hop

        fam, kern = self.model.family, self.model.kernel
        P = len(self.rows)
        prev = [carry]
        pieces = [[] for _ in range(P)]
        for h in range(P):
            outs = []
            for p in range(P):
                a, b = int(self.row0[p]), int(self.row0[p + 1])
                out, piece = sequential_hop(kern, fam, spec, labels[a:b], a, a, p, h, prev)
                outs.append(out)
                pieces[p].append(piece)
            prev = outs
        return prev, pieces

    def _collected(self, spec, labels, carry):
        """The moves with their points collected in one place (as a Dask cluster runs a
        round that scans): the carry and each partition's piece."""
        from ._partitioned_moves import collect_points, collected_allocation, collected_piece

        fam, X = self.model.family, self.model.X
        edges = [(int(a), int(b)) for a, b in zip(self.row0[:-1], self.row0[1:])]
        every = np.arange(spec.n_moves)
        points = [collect_points(fam, X, spec, labels[a:b], a, a, p)
                  for p, (a, b) in enumerate(edges)]
        carry, sides = collected_allocation(fam, spec, int(self.row0[-1]), carry, points,
                                            every, self.model.kernel.hyper)
        return [carry], [[collected_piece(spec, labels[a:b], a, p, [(every, sides[p])])]
                         for p, (a, b) in enumerate(edges)]

    def sample_members(self, labels, c, anchor, count, key):
        """``count`` uniform members of cluster ``c`` other than ``anchor``, in a uniform
        order (the smallest point keys)."""
        from ._partitioned_moves import combine_members, sample_members

        return combine_members([sample_members(labels, c, anchor, count, key, 0)], count)

    def relabel_split(self, labels, codes, c, side_map, label_map):
        from ._partitioned_moves import relabel_split

        return relabel_split(labels, codes, c, side_map, label_map)


class threads:
    """Run numba's parallel regions on ``n_jobs`` threads (None or -1: all; one when the
    work covers fewer than :data:`~dpclust.utils.threads.SERIAL_ROWS` rows, ``n_rows``:
    :mod:`dpclust.utils.threads`), with BLAS on one thread inside them: the blocked passes
    call BLAS from every numba thread, and a BLAS that started threads of its own there
    would oversubscribe the cores.  The thread count never changes a result."""

    def __init__(self, n_jobs, n_rows: int | None = None):
        if n_rows is not None and n_rows < SERIAL_ROWS:
            n_jobs = 1
        self.n = numba.config.NUMBA_NUM_THREADS if n_jobs in (None, -1) else min(
            int(n_jobs), numba.config.NUMBA_NUM_THREADS)

    def __enter__(self):
        self.old = numba.get_num_threads()
        numba.set_num_threads(self.n)
        self.blas = [(lib, lib.num_threads) for lib in _blas_libraries()]
        for lib, n in self.blas:
            if n != 1:
                lib.set_num_threads(1)

    def __exit__(self, *exc: object):
        for lib, n in self.blas:
            if n != 1:
                lib.set_num_threads(n)
        numba.set_num_threads(self.old)


@functools.lru_cache(maxsize=1)
def _blas_libraries() -> tuple:
    """The process's BLAS libraries' controllers, found once (the search walks the loaded
    libraries); setting their thread count directly costs a microsecond, where
    ``ThreadpoolController.limit`` asks every library for its state first."""
    import scipy.linalg  # noqa: F401  (loads the BLAS that numba's np.dot calls)
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)
