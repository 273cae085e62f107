"""What runs on the workers: one partition's rows, labels and passes.

Every function here is pure: it takes a partition (:class:`Part`) and the thin broadcast
parameters and returns new arrays, so that Dask can run it again, on another worker, after a
failure and get the same result.  The heavy lifting is the shared code of
:mod:`dpclust.samplers._partitioned`, the same that runs in-process.
"""

from __future__ import annotations

import hashlib
from functools import cached_property, wraps

import numpy as np

from ..families.identical import row_digests as digests_of
from ..utils.checks import DataError
from ..samplers import _partitioned as _p
from ..samplers import _partitioned_moves as _m
from ..utils.safe_io import data_fingerprint


class Part:
    """One partition on a worker: its rows in the family's working form, where they start
    in the whole data set, and (once the family is resolved) the pass kernel and the
    number of rows of the whole data set."""

    def __init__(self, name: str, row0: int, X, family, pk=None, n_total: int = 0):
        self.name = name
        self.row0 = int(row0)
        self.X = X
        self.family = family
        self.pk = pk
        self.n_total = int(n_total)

    @property
    def n(self) -> int:
        return self.family.n_points(self.X)

    @cached_property
    def kernel(self):
        """The family's collapsed kernel of these rows (the sequential moves), made once
        on the worker that holds them."""
        return self.family.partition_kernel(self.X, self.n_total)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("kernel", None)  # made again where the partition lands
        return state


def _worker_threads():
    """Threads a worker's passes use: the worker's own thread count."""
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


def on_worker_threads(fn):
    """Run ``fn``'s numba and BLAS work on the worker's own thread count.

    numba starts as many threads as the machine has cores in every worker process, so
    two one-thread workers on two cores ran four threads wherever a task left the count
    as it was (collecting the moves' points and writing their sides took 73 and 100 ms
    an iteration at 10^6 points, against 51 and 83 ms on one thread each).  The thread
    count never changes a result."""
    @wraps(fn)
    def wrapped(*args, **kwargs):
        n = _worker_threads()
        if n is None:  # not on a task's thread: the caller set the count (an actor's)
            return fn(*args, **kwargs)
        with _p.threads(n):
            return fn(*args, **kwargs)

    return wrapped


@on_worker_threads
def prepare(source, family, row0: int, block=None) -> Part:
    """Load and validate one partition (errors name the partition)."""
    raw = source.load(block) if block is not None else source.load()
    try:
        X = family.validate(raw)
    except (DataError, ValueError, TypeError) as exc:
        raise DataError(f"{source.name}: {exc}") from None
    part = Part(source.name, row0, X, family)
    if part.n == 0:
        raise DataError(f"{source.name}: has no rows")
    return part


def describe(part: Part):
    """``(rows, summary, fingerprint, empty rows, bytes)``: what the client needs to know."""
    fam, X = part.family, part.X
    return (part.n, fam.summarize(X), data_fingerprint(X), fam.subset(X, np.zeros(0, np.int64)),
            data_bytes(part))


@on_worker_threads
def with_kernel(part: Part, family, summary, n_total: int = 0) -> Part:
    """The partition with the resolved family, its pass kernel and the whole data set's
    number of rows."""
    return Part(part.name, part.row0, part.X, family, family.pass_kernel(part.X, summary),
                n_total)


@on_worker_threads
def start(part: Part, key: int, n_clusters: int, bounds, chunk0: int, labels=None):
    return _p.start_partition(key, n_clusters, part.n, bounds, chunk0, labels)


@on_worker_threads
def init_sample(part: Part, key: int, rate: float):
    """This partition's rows in the k-means start's sample (working form)."""
    local = _p.sample_partition(part.n, part.row0, key, rate)
    return part.family.subset(part.X, local)


@on_worker_threads
def nearest(part: Part, box, reference):
    """This partition's starting labels: each row's nearest of the centres ``box.value``
    (:func:`dpclust.samplers._partitioned.start_labels`; ``reference``: the sample)."""
    return _p.start_labels(part.family, part.X, box.value, reference.value)


def restore(part: Part, labels, sub):
    """Labels and sub-labels given by the client (a resumed run)."""
    if len(labels) != part.n:
        raise ValueError(f"{part.name}: {len(labels)} labels for {part.n} rows")
    return np.asarray(labels, dtype=np.int64), np.asarray(sub, dtype=np.int8)


def held(part: Part, labels):
    """A kept draw given by the client (a resumed run, or a lineage cut at a checkpoint)."""
    if len(labels) != part.n:
        raise ValueError(f"{part.name}: {len(labels)} labels for {part.n} rows")
    return np.asarray(labels, dtype=np.int32)


@on_worker_threads
def run_pass(part: Part, box, state, bounds, chunk0: int):
    """``(labels, codes, PartStats)`` of one pass; ``state[0]``/``state[1]`` are the labels
    and sub-labels (or codes) left by the previous step."""
    spec = box.value
    return _p.pass_partition(part.pk, spec, state[0], state[1], part.row0, bounds, chunk0)


@on_worker_threads
def launch_pass(part: Part, box, state, bounds, chunk0: int, before=None):
    """``(labels, codes, PartStats)`` of one launch pass of the split-merge moves
    (``before``: the result of the previous stage, whose sides are kept)."""
    spec = box.value
    return _p.launch_partition(part.pk, spec, np.asarray(state[0], dtype=np.int64),
                               part.row0, bounds, chunk0,
                               None if before is None else before[1])


@on_worker_threads
def select(part: Part, state, thresholds, anchors, key: int, key2: int, want=None):
    """``(global rows, labels, rows, best_key, best_row, (global rows, rows))`` of this
    partition's points in the launch subsamples, its candidates for the second anchors, and
    the data of those candidates and of the rows ``want`` (global) that it holds."""
    local, best_key, best_row = _p.select_partition(state[0], thresholds, anchors, key, key2,
                                                    part.row0)
    extra = np.concatenate([best_row[best_row >= 0],
                            np.asarray([] if want is None else want, dtype=np.int64)])
    extra = np.unique(extra[(extra >= part.row0) & (extra < part.row0 + part.n)])
    return (local + part.row0, np.asarray(state[0])[local], part.family.subset(part.X, local),
            best_key, best_row, (extra, part.family.subset(part.X, extra - part.row0)))


@on_worker_threads
def sequential_hop(part: Part, box, state, p: int, h: int, carries):
    """Hop ``h`` of the sequential moves on this partition (partition ``p``; ``state[0]``:
    its labels): :func:`~dpclust.samplers._partitioned_moves.sequential_hop`."""
    carries = [c.value if isinstance(c, Box) else c for c in carries]
    return _m.sequential_hop(part.kernel, part.family, box.value, state[0], part.row0, 0,
                             p, h, carries)


@on_worker_threads
def collect_points(part: Part, box, state, p: int):
    """This partition's points of every sequential move, in allocation order, with their
    data (:func:`~dpclust.samplers._partitioned_moves.collect_points`)."""
    return _m.collect_points(part.family, part.X, box.value, state[0], part.row0, 0, p)


@on_worker_threads
def collected_allocation(part: Part, box, carry_box, moves, *points):
    """The sequential allocation of ``moves`` from every partition's points (:func:`~dpclust.
    samplers._partitioned_moves.collected_allocation`): ``(carry, sides per partition)``.
    It runs beside ``part``, one of the partitions, whose kernel (made once on its worker)
    gives the hyperparameters for the whole data set."""
    return _m.collected_allocation(part.family, box.value, part.n_total, carry_box.value,
                                   points, moves, part.kernel.hyper)


@on_worker_threads
def collected_finish(part: Part, box, state, coded, code_index: int, p: int, *groups):
    """``(labels, codes, SideStats)`` of this partition from the collected allocations."""
    spec = box.value
    piece = _m.collected_piece(spec, state[0], part.row0, p,
                               [(g[0].moves, g[1][p]) for g in groups])
    codes = None if coded is None else coded[code_index]
    codes, sides = _m.sequential_finish(part.family, part.X, spec, state[0], codes, [piece],
                                        part.row0, 0)
    return state[0], codes, sides


def data_bytes(part: Part) -> int:
    """Bytes of this partition's rows (what collecting them elsewhere would move)."""
    return _m.data_bytes(part.X)


def carry_of(hop):
    """What a hop hands to the next: its moves' statistics (a few kilobytes)."""
    return hop[0]


@on_worker_threads
def sequential_finish(part: Part, box, state, coded, code_index: int, hops):
    """``(labels, codes, SideStats)`` once every hop has visited this partition
    (``coded[code_index]``: the codes kept elsewhere; ``coded`` None: zeros)."""
    codes = None if coded is None else coded[code_index]
    codes, sides = _m.sequential_finish(part.family, part.X, box.value, state[0], codes,
                                        [h[1] for h in hops], part.row0, 0)
    return state[0], codes, sides


@on_worker_threads
def sample_members(part: Part, state, index: int, c: int, anchor: int, count: int, key: int):
    """This partition's candidates (:func:`~dpclust.samplers._partitioned_moves.
    sample_members`: keys and global rows), and ``(global rows, data)`` of them and of
    ``anchor`` where it is here: the move's anchors then cost no round trip."""
    keys, rows = _m.sample_members(state[index], c, anchor, count, key, part.row0)
    extra = np.append(rows, anchor) if part.row0 <= anchor < part.row0 + part.n else rows
    return keys, rows, (extra, part.family.subset(part.X, extra - part.row0))


@on_worker_threads
def relabel_split(state, index: int, coded, code_index: int, c: int, side_map, label_map):
    return _m.relabel_split(state[index], coded[code_index], c, side_map, label_map)


def part_stats(result):
    return result[2]


@on_worker_threads
def relabel(result, label_map, sub_map):
    return _p.relabel_partition(result[0], result[1], label_map, sub_map)


@on_worker_threads
def rows(part: Part, local_index):
    return part.family.subset(part.X, np.asarray(local_index, dtype=np.int64))


def keep(state):
    """A kept draw: the labels as int32."""
    return state[0].astype(np.int32)


def labels_of(state):
    return state[0], state[1]


def draw_tables(draws, n_clusters):
    """For the kept draws of one partition: cluster sizes of each, a hash of each, and the
    contingency table of every pair (i <= j) as a dense ``K_i x K_j`` count array."""
    sizes = [np.bincount(z, minlength=k) for z, k in zip(draws, n_clusters)]
    hashes = [hashlib.sha1(np.ascontiguousarray(z).tobytes()).hexdigest() for z in draws]
    tables = {}
    for i in range(len(draws)):
        for j in range(i, len(draws)):
            ki, kj = n_clusters[i], n_clusters[j]
            code = draws[i].astype(np.int64) * kj + draws[j]
            tables[i, j] = np.bincount(code, minlength=ki * kj).reshape(ki, kj)
    return sizes, hashes, tables


@on_worker_threads
def row_digests(part: Part):
    """Each row's 16-byte digest (:func:`~dpclust.families.identical.row_digests` of the
    family's ``row_keys``), or None for a family that takes every row as distinct."""
    keys = part.family.row_keys(part.X)
    return None if keys is None else digests_of(keys)


@on_worker_threads
def cluster_stats(part: Part, draw, n_clusters: int):
    """The family's statistics of the clusters of ``draw`` in this partition."""
    return part.family.stats(part.X, np.asarray(draw, dtype=np.int64), int(n_clusters))


class Box:
    """Wraps a value so that Dask ships it as it is (no traversal of its contents)."""

    def __init__(self, value):
        self.value = value


def unbox(box):
    return box
