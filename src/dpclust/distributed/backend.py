"""The client side of a sub-cluster chain on a Dask cluster.

:class:`DaskPartitions` is the sampler's data side (the interface of
:class:`~dpclust.samplers._partitioned.LocalPartitions`) with every partition on a worker:
per iteration the client sends the thin pass parameters (:class:`PassSpec`, one task) and
gathers per-slot statistics (:class:`PartStats`, a few kilobytes a partition); labels,
sub-labels and kept draws stay on the workers, as futures.  :class:`DaskModel` is the
estimator's model (the interface of :class:`~dpclust.samplers.MixtureModel`).

**Failures.**  Every partition's state is the result of a chain of pure tasks that starts
from its source (a file, a dask array block, or rows shipped with the task), so when a
worker dies Dask recomputes what it held on the others: the data are read again and the
lost iterations replayed with the same random streams, and the chain goes on exactly as it
would have.  A checkpoint cuts that chain (:func:`dpclust.chains.trace.cut_lineage`): the
state and kept draws just written become new root tasks holding their labels (5 and 4
bytes a row on the scheduler), the scheduler forgets the tasks before them, and a loss
after it replays from there.  If that is impossible (the source is gone, a task keeps
killing its workers) the run stops with :class:`WorkerLost`, after writing the last
complete iteration to the checkpoint when one was asked for.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..samplers import _partitioned as _p
from ..samplers.base import SEARCH_SECONDS, ChainData, MixtureModel
from . import worker as _w


#: :meth:`DaskPartitions.rows_of` reads at most this many rows through the rows kept on
#: the client (more are fetched directly), and keeps at most ``ROW_CACHE_SIZE``
ROW_CACHE_READ = 4096
ROW_CACHE_SIZE = 65536


#: seconds between two batched messages on the chain's connections
#: (:meth:`DaskPartitions.tune_latency`; Dask's defaults are 2 to 10 ms)
BATCH_INTERVAL = 0.0

#: values sent to every partition travel inside the tasks up to this many bytes in all
#: (:meth:`DaskPartitions._ship`)
EMBED_BYTES = 4 << 20

#: every this many round trips the client folds what the scheduler keeps of the run's
#: submissions (:meth:`DaskPartitions._fold_span_metadata`)
FOLD_EVERY = 256


class WorkerLost(RuntimeError):
    """The cluster lost state it cannot recompute; the run stopped (see the message)."""


class StateLost(WorkerLost):
    """A worker holding the chain's state was lost; the state can be rebuilt from the last
    recovery point (the runner does: :meth:`.actors.ActorPartitions.rebuild`)."""


#: without a checkpoint, the client gathers the chains' state every this many iterations
#: (a recovery point; the kept draws are gathered once each)
RECOVER_EVERY = 25


class Handle:
    """Element ``index`` (0: labels, 1: sub-labels or codes) of per-partition futures."""

    def __init__(self, futures, index: int):
        self.futures = list(futures)
        self.index = index


class HeldDraw:
    """A kept partition, held on the workers as int32 labels (one future a partition);
    ``root``: made from labels sent by the client (no chain of tasks behind it);
    ``array``: its labels once gathered (a kept draw never changes)."""

    def __init__(self, futures, n_clusters: int, root: bool = False, array=None):
        self.futures = list(futures)
        self.n_clusters = int(n_clusters)
        self.root = bool(root)
        self.array = array


class Traffic:
    """Bytes of cluster parameters sent and statistics received, per pass, and the round
    trips (gathers: the client waits for the workers), tasks, calls to the workers' actors
    (:mod:`.actors`: one per worker per stage of a gather) and rebuilds after a lost worker
    of the whole run."""

    def __init__(self):
        self.sent = []
        self.received = []
        self.round_trips = 0
        self.tasks = 0
        self.calls = 0
        self.rebuilds = 0

    def add(self, sent: int, received: int):
        self.sent.append(int(sent))
        self.received.append(int(received))


def _dask():
    try:
        import distributed
    except ImportError:
        raise ImportError("a Dask executor needs Dask: pip install 'dpclust[dask]'") from None
    return distributed


def task_key(fn) -> tuple:
    """A new task's key: ``("dpclust", "<function>-<uuid>")``.

    Dask groups tasks by a key's first element, so every task of a run is in one task
    group, which the partitions' tasks keep alive.  With keys of their own (Dask's
    ``"<function>-<uuid>"``) a group ends whenever its last task is forgotten and the next
    task of that function opens a new one, and the scheduler's spans keep every group
    ever opened (dask/distributed#7977): a few a round trip, a scheduler that grows over a
    long run however its tasks are cut."""
    import uuid

    return ("dpclust", f"{getattr(fn, '__name__', 'task')}-{uuid.uuid4().hex}")


def _lost_errors():
    distributed = _dask()
    out = [distributed.client.FutureCancelledError, distributed.scheduler.KilledWorker]
    try:
        from distributed.comm.core import CommClosedError
        out.append(CommClosedError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(out)


class DaskPartitions:
    """The sub-cluster sampler's data side on a Dask cluster.

    Build it with :func:`load_partitions`.
    """

    def __init__(self, client, parts, rows, summary, family, empty):
        self.client = client
        self.parts = parts
        self.rows = [int(r) for r in rows]
        self.row0 = np.concatenate([[0], np.cumsum(self.rows)]).astype(np.int64)
        self.summary = summary
        self.family = family
        self._empty = empty
        self._chunk_size = 4096
        self.traffic = Traffic()
        self._row_cache = {}
        self.row_bytes = 8.0  # bytes of a row, measured when the data are loaded
        self._workers_seen = None  # asked again every FOLD_EVERY round trips

    @cached_property
    def pass_kernel(self):
        """The family's pass kernel on no rows: packs parameters and unpacks statistics."""
        return self.family.pass_kernel(self._empty, self.summary)

    def configure(self, chunk_size: int, n_jobs):
        self._chunk_size = int(chunk_size)
        return self

    def _layout(self, n_slots):
        return _p.partition_layout(self.rows, self._chunk_size, n_slots,
                                   self.pass_kernel.n_stats)

    def _submit(self, fn, *args, **kwargs):
        self.traffic.tasks += 1
        return self.client.submit(fn, *args, key=task_key(fn), **kwargs)

    def _ship(self, value, nbytes: int):
        """``(argument, bytes sent)``: a value every partition's task reads.  Up to
        :data:`EMBED_BYTES` in all it travels inside each task (no task of its own for the
        others to wait for and fetch from another worker), else as one task that the
        workers fetch."""
        if nbytes * len(self.parts) <= EMBED_BYTES:
            return _w.Box(value), int(nbytes) * len(self.parts)
        return self._submit(_w.unbox, _w.Box(value)), int(nbytes)

    @property
    def _n_workers(self) -> int:
        """The cluster's workers, asked again every :data:`FOLD_EVERY` round trips."""
        if self._workers_seen is None:
            self._workers_seen = max(1, len(self.client.scheduler_info().get("workers", {})))
        return self._workers_seen

    def _gather(self, futures):
        self.traffic.round_trips += 1
        if self.traffic.round_trips % FOLD_EVERY == 0:
            self._fold_span_metadata()
            self.tune_latency()
            self._workers_seen = None
        try:
            return self.client.gather(futures)
        except _lost_errors() as exc:
            raise WorkerLost(f"the Dask cluster lost the state of a partition and could not "
                             f"recompute it ({type(exc).__name__}: {exc})") from exc

    def tune_latency(self):
        """Send the chain's messages without waiting to batch them.

        Dask batches the messages of each connection: after one message, the next waits
        until an interval has passed (10 ms from the client, 5 ms from the scheduler to a
        worker, 2 ms from a worker), so that many small messages go as one.  A chain
        sends few messages and waits for each answer, so on an idle link every task that
        depends on another pays those intervals: on two local workers a chain of ten
        tasks took 66 ms with them and 35 ms without.  The intervals are set to
        :data:`BATCH_INTERVAL` on the client's connection, the scheduler's connections to
        its workers and the workers' to the scheduler (again every :data:`FOLD_EVERY`
        round trips, for workers that joined since).  Messages are still batched while
        one is being written.  Nothing of the chain is touched; a cluster that refuses
        ``run`` keeps its intervals."""
        interval = BATCH_INTERVAL

        def on_scheduler(dask_scheduler):
            for stream in dask_scheduler.stream_comms.values():
                stream.interval = interval

        def on_worker(dask_worker):
            stream = getattr(dask_worker, "batched_stream", None)
            if stream is not None:
                stream.interval = interval

        comm = getattr(self.client, "scheduler_comm", None)
        if comm is not None and hasattr(comm, "interval"):
            comm.interval = interval
        try:
            self.client.run_on_scheduler(on_scheduler)
            self.client.run(on_worker)
        except Exception:  # an older or locked-down cluster keeps its intervals
            pass

    def _fold_span_metadata(self):
        """Keep the scheduler from growing with the run's length.  Two of Dask's records
        grow with every task a run submits, whether or not its tasks are forgotten:

        - the span that Dask files the tasks under keeps a metadata record per
          ``update_graph`` (``{"type": "Future"}``), for the life of the scheduler: those
          repeats are folded into one;
        - ``dask.utils.key_split`` caches the name of every key it is asked about, up to
          100,000 (an LRU of about 800 bytes a key, 80 MiB when full, which a run of
          2,000 points fills in 800 iterations): the cache is emptied (names are computed
          again when asked for).

        Nothing of the chain is touched; a scheduler that refuses ``run_on_scheduler``
        grows as before.  The function travels by value (a local function), so the
        scheduler needs no dpclust."""
        def fold(dask_scheduler):
            from dask.utils import key_split

            key_split.cache_clear()
            spans = getattr(dask_scheduler.extensions.get("spans"), "spans", {})
            folded = 0
            for span in list(spans.values()):
                meta = getattr(span, "_metadata", None)
                items = meta.get("collections") if isinstance(meta, dict) else None
                if isinstance(items, list) and len(items) > 1:
                    unique = []
                    for item in items:
                        if item not in unique:
                            unique.append(item)
                    folded += len(items) - len(unique)
                    items[:] = unique
            return folded

        try:
            self.client.run_on_scheduler(fold)
        except Exception:  # an older or locked-down scheduler: nothing to fold there
            pass

    # ------------------------------------------------------------ the sampler
    def start(self, key, n_clusters, labels=None, n_slots=4):
        """Starting labels (uniform over ``n_clusters``, or ``labels``: one future a
        partition, as :meth:`nearest` gives them, or an array of all rows) and sub-labels."""
        if labels is None:
            labels = [None] * len(self.parts)
        elif isinstance(labels, np.ndarray):
            labels = [labels[a:b] for a, b in zip(self.row0[:-1], self.row0[1:])]
        states = [self._submit(_w.start, part, int(key), int(n_clusters), b, c0, z)
                  for part, (b, c0), z in zip(self.parts, self._layout(n_slots), labels)]
        return Handle(states, 0), Handle(states, 1)

    def init_sample(self, key: int, rate: float):
        """The rows of the k-means start's sample gathered from the partitions, in the
        order of the data (:meth:`LocalPartitions.init_sample`)."""
        pieces = self._gather([self._submit(_w.init_sample, part, int(key), float(rate))
                               for part in self.parts])
        return self.family.stack_rows(pieces)

    def nearest(self, centres, reference):
        """Every partition's starting labels (one future each): its rows' nearest
        ``centres`` on the scale of the sample ``reference``."""
        # once a fit: one task each, fetched by the workers, rather than in every task
        box = self._submit(_w.unbox, _w.Box(np.asarray(centres)))
        ref = self._submit(_w.unbox, _w.Box(reference))
        return [self._submit(_w.nearest, part, box, ref) for part in self.parts]

    def run_pass(self, spec, labels, sub):
        box, sent = self._ship(spec, spec.nbytes)
        results = [self._submit(_w.run_pass, part, box, state, b, c0)
                   for part, state, (b, c0) in zip(self.parts, labels.futures,
                                                   self._layout(spec.n_slots))]
        stats = self._gather([self._submit(_w.part_stats, r) for r in results])
        self.traffic.add(sent, sum(s.nbytes for s in stats))
        return Handle(results, 0), Handle(results, 1), _p.combine_parts(stats)

    def relabel(self, labels, codes, label_map, sub_map):
        states = [self._submit(_w.relabel, r, label_map, sub_map) for r in labels.futures]
        return Handle(states, 0), Handle(states, 1)

    def select(self, key, key2, thresholds, anchors, labels):
        """The launch subsamples' global rows, labels and rows, gathered in partition order,
        and the second anchors (what :meth:`LocalPartitions.select` returns).  Each
        partition sends with them the rows of its candidates for the second anchors and of
        the anchors the client has not seen, which the moves' launches then read from
        :meth:`rows_of` without another round trip."""
        anchors = np.asarray(anchors, dtype=np.int64)
        want = np.array([a for a in anchors[np.asarray(thresholds) > 0].tolist()
                         if a not in self._row_cache], dtype=np.int64)
        futures = [self._submit(_w.select, part, state, thresholds, anchors, int(key),
                                int(key2), want)
                   for part, state in zip(self.parts, labels.futures)]
        pieces = self._gather(futures)
        rows = [p[2] for p in pieces]
        stacked = self.family.stack_rows(rows)
        for p in pieces:
            self._remember(*p[5])
        self.traffic.add(2 * np.asarray(thresholds).nbytes * len(self.parts),
                         sum(p[0].nbytes + p[1].nbytes + p[3].nbytes + p[4].nbytes
                             for p in pieces))
        second = _p.combine_second([(p[3], p[4]) for p in pieces])
        return (np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]),
                stacked, second)

    def launch_pass(self, spec, labels, codes=None):
        results, sent = self._launch_tasks(spec, labels, codes)
        stats = self._gather([self._submit(_w.part_stats, r) for r in results])
        self.traffic.add(sent, sum(s.nbytes for s in stats))
        return Handle(results, 0), Handle(results, 1), _p.combine_parts(stats)

    def _launch_tasks(self, spec, labels, codes=None):
        """The launch pass's task on each partition (``codes``: a Handle of the sides that
        an earlier stage left) and the bytes sent."""
        box, sent = self._ship(spec, spec.nbytes)
        layout = _p.partition_layout(self.rows, self._chunk_size, 2 * spec.n_moves,
                                     self.pass_kernel.n_stats)
        before = [None] * len(self.parts) if codes is None else codes.futures
        return [self._submit(_w.launch_pass, part, box, state, b, c0, prev)
                for part, state, (b, c0), prev in zip(self.parts, labels.futures, layout,
                                                      before)], sent

    def stats_at(self, index, labels, n_clusters):
        """Statistics of the data rows ``index`` (global) in clusters ``labels``."""
        return self.family.stats(self.rows_of(index), labels, n_clusters)

    def rows_of(self, index):
        """The data rows ``index`` (global) in the family's working form.  A few rows (the
        moves' anchors) are read from the rows kept on the client, fetched when missing;
        the data never change, so what is kept stays right."""
        index = np.asarray(index, dtype=np.int64)
        if len(index) > ROW_CACHE_READ:
            return self._fetch_rows(index)
        missing = np.unique([r for r in index.tolist() if r not in self._row_cache])
        if len(missing):
            self._remember(missing, self._fetch_rows(missing))
        return self.family.stack_rows([self._row_cache[r] for r in index.tolist()])

    def _remember(self, index, rows):
        """Keep the data rows ``index`` (global; ``rows`` their working form), at most
        :data:`ROW_CACHE_SIZE` of them."""
        if len(self._row_cache) + len(index) > ROW_CACHE_SIZE:
            self._row_cache.clear()
        for i, r in enumerate(np.asarray(index, dtype=np.int64).tolist()):
            self._row_cache[r] = self.family.subset(rows, np.array([i]))

    def _fetch_rows(self, index):
        which = np.searchsorted(self.row0, index, side="right") - 1
        futures, order = [], []
        for p in np.unique(which):
            sel = np.flatnonzero(which == p)
            futures.append(self._submit(_w.rows, self.parts[p], index[sel] - self.row0[p]))
            order.append(sel)
        pieces = self._gather(futures)
        pos = np.argsort(np.concatenate(order), kind="stable")
        stacked = self.family.stack_rows(pieces)
        return stacked[pos]

    def pack(self, params):
        return self.pass_kernel.pack(params)

    def unpack(self, acc):
        return self.pass_kernel.unpack(acc)

    # ------------------------------------------------ sequential moves (_partitioned_moves)
    @cached_property
    def _kernel_hyper(self):
        """The collapsed kernel's hyperparameters for the whole data set's size (what the
        anchors' kernel on the client needs; the same on every partition)."""
        return self.family.partition_kernel(self._empty, sum(self.rows)).hyper

    def seed(self, spec):
        """Every sequential move's sides started from its anchors, on the client from the
        anchors' rows (:meth:`LocalPartitions.seed`)."""
        from ..samplers._partitioned_moves import seed_carry

        pins = np.concatenate([spec.pins[b, :k] for b, k in enumerate(spec.n_sides)])
        X = self.rows_of(pins)
        kern = self.family.partition_kernel(X, len(pins))._replace(hyper=self._kernel_hyper)
        return seed_carry(kern, spec, np.arange(len(pins), dtype=np.int64))

    def propose(self, launch, spec, labels, codes, carry, moving=None):
        """One round's proposal in one round trip (:meth:`LocalPartitions.propose`): the
        launch pass (one task a partition), and beside it the sequential moves: their
        points collected where they are allocated while the data of the ``moving`` points
        (each move's number of points; None: all the points) stay under ``COLLECT_BYTES``
        (:meth:`collects`, :meth:`_collected`), else ``P`` hops of one task a partition
        (:meth:`_hops`);
        then one task a partition writes the codes (the launch pass's where it ran) and
        counts the sides.  One gather of the statistics."""
        from ..samplers._partitioned_moves import combine_sides, merge_carries

        P = len(self.parts)
        wanted, stats, results = [], [], None
        sent = 0
        if launch is not None:
            results, launch_sent = self._launch_tasks(launch, labels, codes)
            stats = [self._submit(_w.part_stats, r) for r in results]
            codes = Handle(results, 1)
            sent += launch_sent
            wanted += stats
        if spec is not None:
            box, spec_sent = self._ship(spec, spec.nbytes)
            carry_box, carry_sent = self._ship(carry, carry.nbytes)
            if self.collects(moving):
                carries, finals = self._collected(box, spec, carry_box, labels, codes,
                                                  moving)
            else:
                carries, finals = self._hops(box, carry_box, labels, codes)
            sent += spec_sent + carry_sent
            wanted += carries + [self._submit(_side_stats, f) for f in finals]
        pieces = self._gather(wanted)
        part = _p.combine_parts(pieces[:len(stats)]) if stats else None
        received = sum(s.nbytes for s in pieces[:len(stats)])
        if spec is None:
            self.traffic.add(sent, received)
            return Handle(results, 0), Handle(results, 1), part, None, None
        carries, sides = pieces[len(stats):len(pieces) - P], pieces[len(pieces) - P:]
        self.traffic.add(sent, received + sum(c.nbytes for c in carries)
                         + sum(sum(np.asarray(a).nbytes for a in s.stats) + s.first.nbytes
                               + s.clusters.nbytes for s in sides))
        final = merge_carries(spec, carries, np.arange(spec.n_moves))
        return (Handle(finals, 0), Handle(finals, 1), part, final,
                combine_sides(self.family, sides))

    def collects(self, moving=None) -> bool:
        """Whether a round's sequential moves collect their points in one place.

        They do while the data of their ``moving`` points (None: all) stay under 64 MiB,
        by the rule that :meth:`LocalPartitions.collects` applies too
        (:func:`~dpclust.samplers._partitioned_moves.collects`)."""
        from ..samplers._partitioned_moves import collects

        return collects(moving, sum(self.rows), self.row_bytes)

    def _hops(self, box, carry_box, labels, codes):
        """The sequential moves hop by hop: each move visits the partitions in turn, its
        statistics handed on worker to worker.  Returns the last hop's carries and the
        finishing tasks."""
        P = len(self.parts)
        prev = [carry_box]
        hops = [[] for _ in range(P)]
        for h in range(P):
            outs = []
            for p in range(P):
                hop = self._submit(_w.sequential_hop, self.parts[p], box, labels.futures[p],
                                   p, h, prev)
                hops[p].append(hop)
                outs.append(self._submit(_w.carry_of, hop))
            prev = outs
        finals = [self._submit(_w.sequential_finish, self.parts[p], box, labels.futures[p],
                               None if codes is None else codes.futures[p],
                               0 if codes is None else codes.index, hops[p])
                  for p in range(P)]
        return prev, finals

    def _collected(self, box, spec, carry_box, labels, codes, moving=None):
        """The sequential moves with their points collected: each partition sends its
        points of the moves, a task per worker allocates a share of the moves in their
        partitions' order (the same numbers as the hops; shares of about equal numbers of
        points, ``moving`` the moves' numbers of points), and each partition writes its
        sides.  Three task levels whatever the number of partitions."""
        P = len(self.parts)
        points = [self._submit(_w.collect_points, self.parts[p], box, labels.futures[p], p)
                  for p in range(P)]
        shares = balanced_shares(moving, spec.n_moves, self._n_workers)
        beside = np.linspace(0, P, len(shares), endpoint=False).astype(int)  # spread out
        groups = [self._submit(_w.collected_allocation, self.parts[q], box, carry_box, moves,
                               *points)
                  for q, moves in zip(beside, shares)]
        finals = [self._submit(_w.collected_finish, self.parts[p], box, labels.futures[p],
                               None if codes is None else codes.futures[p],
                               0 if codes is None else codes.index, p, *groups)
                  for p in range(P)]
        return [self._submit(_w.carry_of, g) for g in groups], finals

    def sequential(self, spec, labels, codes, carry):
        """The sequential moves of ``spec`` alone (:meth:`LocalPartitions.sequential`)."""
        labels, codes, _, carry, sides = self.propose(None, spec, labels, codes, carry)
        return labels, codes, carry, sides

    def sample_members(self, labels, c, anchor, count, key):
        """:meth:`LocalPartitions.sample_members`, from each partition's smallest keys.
        The candidates' data come with them and are kept (:meth:`rows_of`), so that the
        move's seeding costs no round trip."""
        from ..samplers._partitioned_moves import combine_members

        parts = self._gather([self._submit(_w.sample_members, part, s, labels.index, int(c),
                                           int(anchor), int(count), int(key))
                              for part, s in zip(self.parts, labels.futures)])
        for p in parts:
            self._remember(*p[2])
        return combine_members([p[:2] for p in parts], count)

    def relabel_split(self, labels, codes, c, side_map, label_map):
        codes = codes if codes is not None else labels
        states = [self._submit(_w.relabel_split, s, labels.index, k, codes.index, int(c),
                               side_map, label_map)
                  for s, k in zip(labels.futures, codes.futures)]
        return Handle(states, 0), Handle(states, 1)

    # ------------------------------------------------------------ the estimator
    def keep(self, labels: Handle, n_clusters: int) -> HeldDraw:
        return HeldDraw([self._submit(_w.keep, s) for s in labels.futures], n_clusters)

    def gather_labels(self, labels) -> np.ndarray:
        """The whole labelling (Handle or HeldDraw) as one array on the client."""
        if isinstance(labels, Handle):
            futs = [self._submit(_w.labels_of, s) for s in labels.futures]
            return np.concatenate([p[labels.index] for p in self._gather(futs)])
        if labels.array is None:
            labels.array = np.concatenate(self._gather(labels.futures))
        return labels.array

    def scatter_state(self, labels, sub):
        """Labels and sub-labels from the client onto their partitions (a resumed run)."""
        labels = np.asarray(labels, dtype=np.int32)  # the task holds them: 5 bytes a row
        states = [self._submit(_w.restore, part, labels[a:b], sub[a:b])
                  for part, a, b in zip(self.parts, self.row0[:-1], self.row0[1:])]
        return Handle(states, 0), Handle(states, 1)

    def scatter_draw(self, labels, n_clusters):
        """A kept draw from the client onto its partitions, as int32 labels in the task
        (a new root: a lost worker gets it back from the scheduler)."""
        labels = np.asarray(labels, dtype=np.int32)
        draws = [self._submit(_w.held, part, labels[a:b])
                 for part, a, b in zip(self.parts, self.row0[:-1], self.row0[1:])]
        return HeldDraw(draws, n_clusters, root=True, array=labels)

    def cluster_stats(self, draw: HeldDraw):
        fam = self.family
        parts = self._gather([self._submit(_w.cluster_stats, part, d, draw.n_clusters)
                              for part, d in zip(self.parts, draw.futures)])
        out = parts[0]
        for p in parts[1:]:
            out = fam.combine(out, p)
        return out

    def row_digests(self) -> np.ndarray | None:
        """Every row's digest, in order (:meth:`~dpclust.families.base.ConjugateFamily.row_keys`),
        16 bytes a row; None for a family that takes every row as distinct."""
        parts = self._gather([self._submit(_w.row_digests, part) for part in self.parts])
        return None if parts[0] is None else np.concatenate(parts)

    def point_estimate(self, draws, loss: str):
        """The kept draw with least expected loss, from contingency tables made on the
        workers (the numbers of :func:`dpclust.partitions.point_estimate`, added in
        another order: equal up to rounding)."""
        ks = [d.n_clusters for d in draws]
        per_part = self._gather([
            self._submit(_w.draw_tables, [d.futures[p] for d in draws], ks)
            for p in range(len(self.parts))])
        return expected_loss_choice(per_part, ks, sum(self.rows), loss)


def balanced_shares(moving, n_moves: int, n_shares: int) -> list:
    """The moves ``0 .. n_moves - 1`` in at most ``n_shares`` shares of about equal numbers
    of points (``moving``: each move's; None: equal shares by index), each in increasing
    order: the largest move first to the share with the fewest points.  Each move is
    allocated alone, so the shares change when and where, not what."""
    n_shares = max(1, min(int(n_shares), int(n_moves)))
    if moving is None or np.ndim(moving) == 0:
        return [np.arange(g, n_moves, n_shares) for g in range(n_shares)]
    sizes = np.asarray(moving, dtype=np.int64)
    load = np.zeros(n_shares, dtype=np.int64)
    share = np.empty(n_moves, dtype=np.int64)
    for b in np.argsort(-sizes, kind="stable"):
        g = int(np.argmin(load))
        share[b] = g
        load[g] += sizes[b]
    return [np.flatnonzero(share == g) for g in range(n_shares) if np.any(share == g)]


def _side_stats(final):
    return final[2]


def expected_loss_choice(per_part, ks, n, loss):
    """``(chosen draw, expected loss)`` from per-partition sizes, hashes and tables."""
    from ..partitions import as_loss, first_minimum
    from ..partitions.losses import loss_value

    loss = as_loss(loss)
    f = loss.table(n)
    n_draws = len(ks)
    sizes = [sum(p[0][s] for p in per_part) for s in range(n_draws)]
    keys = [tuple(p[1][s] for p in per_part) for s in range(n_draws)]
    first, inverse, seen = [], [], {}
    for s, key in enumerate(keys):
        if key not in seen:
            seen[key] = len(first)
            first.append(s)
        inverse.append(seen[key])
    counts = np.bincount(inverse)
    terms = []
    for s in first:
        total = 0.0
        for m in sizes[s]:
            total += f[m]
        terms.append(total)

    def table(a, b):
        if a <= b:
            return sum(p[2][a, b] for p in per_part)
        return sum(p[2][b, a] for p in per_part).T

    values = np.empty(len(first))
    weight = float(counts.sum())
    for c, sc in enumerate(first):
        acc = 0.0
        for d, sd in enumerate(first):
            t = np.ascontiguousarray(table(sc, sd)).ravel()
            cross = 0.0
            for m in t[t > 0]:
                cross += f[m]
            value = loss_value(loss.code, loss.a, float(n), terms[c], terms[d], cross)
            acc += float(counts[d]) * value
        values[c] = acc / weight
    best = first_minimum(values)
    return first[best], float(values[best])


class DaskModel:
    """The estimator's model when the data live on a Dask cluster.

    The same interface as :class:`~dpclust.samplers.MixtureModel` for the sub-cluster
    sampler and the estimator: ``family``, ``n_samples``, ``partitions``, ``update_alpha``,
    and the hooks that keep kept draws on the workers.
    """

    X = None

    def __init__(self, family, partitions: DaskPartitions, alpha_prior=None,
                 fingerprint: str = "", prior=None):
        self.family = family
        self.partitions = partitions
        self.alpha_prior = alpha_prior
        self.prior = prior
        self.n_samples = int(sum(partitions.rows))
        self._fingerprint = fingerprint

    @property
    def pass_kernel(self):
        return self.partitions.pass_kernel

    @property
    def data_summary(self):
        return self.partitions.summary

    update_alpha = MixtureModel.update_alpha  # needs partition_prior and n_samples only

    @property
    def recovers(self) -> bool:
        """Whether a lost worker's state is rebuilt from a recovery point that the runner
        keeps (actors: :mod:`.actors`), rather than recomputed by Dask from the lineage of
        its tasks."""
        return not getattr(self.partitions, "lineage", True)

    @property
    def recover_every(self) -> int:
        """Iterations between two recovery points when no checkpoint is written."""
        return RECOVER_EVERY

    def state_lost(self, exc) -> bool:
        """Whether ``exc`` says that a worker holding the chain's state was lost, and the
        state can be rebuilt (:meth:`rebuild`)."""
        return isinstance(exc, StateLost)

    def rebuild(self):
        """Hold the partitions again after a lost worker (actors); the chain's state is
        the runner's to put back."""
        self.partitions.rebuild()

    @property
    def partition_prior(self):
        """The prior on partitions (``prior``); when none was given, the Dirichlet process,
        with alpha's prior when it is resampled."""
        prior = getattr(self, "prior", None)
        if prior is not None:
            return prior
        from ..priors import DirichletProcess

        return DirichletProcess(1.0 if self.alpha_prior is None else self.alpha_prior)

    # hooks of the estimator
    def fingerprint(self) -> str:
        return self._fingerprint

    def keep_labels(self, labels, n_clusters: int):
        return self.partitions.keep(labels, n_clusters)

    def hold_labels(self, labels, n_clusters: int):
        return self.partitions.scatter_draw(labels, n_clusters)

    def as_array(self, labels) -> np.ndarray:
        return self.partitions.gather_labels(labels)

    def point_estimate(self, draws, loss: str, max_time: float = SEARCH_SECONDS):
        """The searched estimate, as in-process
        (:meth:`~dpclust.samplers.base.ChainData.point_estimate`), from the best kept draw
        that the workers find from contingency tables; the kept draws are gathered for the
        search (``max_draws`` bounds their size)."""
        from ..samplers.base import searched_estimate

        chosen, _ = self.partitions.point_estimate(draws, loss)
        pool = np.array([self.as_array(d) for d in draws])
        return searched_estimate(pool, loss, pool[chosen], max_time, self.estimate_groups)

    @cached_property
    def estimate_groups(self) -> np.ndarray | None:
        """Identical rows, which the point estimate keeps in one cluster as in-process
        (:attr:`~dpclust.samplers.MixtureModel.estimate_groups`), found from the digests of
        the rows on the workers; None where every row is distinct."""
        digests = self.partitions.row_digests()
        if digests is None:
            return None
        _, inverse, counts = np.unique(digests, return_inverse=True, return_counts=True)
        return inverse.reshape(-1) if len(counts) < self.n_samples else None

    default_loss = ChainData.default_loss

    def cluster_stats(self, draw, n_clusters: int):
        return self.partitions.cluster_stats(draw)

    def detach(self, state):
        """A copy of a sampler state or kept draw with its handles gathered into arrays
        (what a checkpoint holds)."""
        if isinstance(state, HeldDraw):
            return self.as_array(state)
        labels = self.as_array(state.labels)
        sub = self.as_array(state.sublabels)
        return state._replace(labels=labels, sublabels=sub)

    def attach(self, state, n_clusters: int | None = None):
        """The inverse of :meth:`detach`: arrays back onto their partitions."""
        if isinstance(state, np.ndarray):
            return self.partitions.scatter_draw(state, n_clusters)
        labels, sub = self.partitions.scatter_state(state.labels, state.sublabels)
        return state._replace(labels=labels, sublabels=sub)


__all__ = ["DaskModel", "DaskPartitions", "HeldDraw", "RECOVER_EVERY", "StateLost", "WorkerLost",
           "balanced_shares",
           "expected_loss_choice", "task_key"]
