"""Partitions held by Dask actors: the chain's tasks run where their partition lives, called
directly from the client.

:class:`ActorPartitions` is :class:`~.backend.DaskPartitions` with another executor under
it.  The sampler's side of the backend submits the same pure tasks of :mod:`.worker`, but
they are not sent to the scheduler one by one: each becomes a :class:`Ref` and waits on the
client until the sampler needs a result (a *gather*).  Then every worker's actor
(:class:`PartitionStore`, one a worker, holding its partitions and the values the chain left
there) gets the tasks of its partitions in one call and runs them in the order they were
submitted.  A task that reads a value made on another worker (the moves' collected points,
the hops' statistics) waits for it there, and the worker that makes it pushes it over as
soon as it is made (:meth:`PartitionStore.put`): a gather costs one call a worker, however
many partitions and levels of dependent tasks it runs, where a task through the scheduler
cost 5-6 ms and every dependent level another.  The calls and pushes go on direct
connections (:mod:`.channel`, about 0.3 ms a call) where the workers listen on plain TCP,
else by Dask's actor calls (about 3 ms).  A task never waits for a later one, so the
actors cannot wait for each other in a circle.

**Failures.**  An actor's values live only in its worker's memory.  The partitions' data
stay futures of pure tasks, so Dask recomputes a lost one on another worker from its
source; the chain's state is rebuilt from the last *recovery point*, the state and kept
draws that the run last gathered onto the client (at every checkpoint, and every
:data:`~.backend.RECOVER_EVERY` iterations without one), and the iterations since are run again from
the random stream saved with it: the run ends with the labels of an uninterrupted one.
"""

from __future__ import annotations

import itertools
import os
import time

import numpy as np

from . import channel
from . import worker as _w
from .backend import RECOVER_EVERY, DaskPartitions, StateLost, WorkerLost, _dask, _lost_errors



class Missing(LookupError):
    """An actor was asked for a value it does not hold (it was made again by the
    scheduler after its worker died), or stopped waiting for one."""


class PartitionStore:
    """The actor on one worker: its partitions and the values the chain left there, by key.

    ``parts`` maps a partition's key to its :class:`~.worker.Part`.  Values another actor
    needs are pushed to it (:meth:`put`, which runs on the worker's event loop while
    :meth:`run` computes on the actor's thread), so that a gather costs one call a worker
    whatever its tasks read from where."""

    def __init__(self, parts: dict, key: bytes | None = None):
        import threading

        self.values = dict(parts)
        self.inbox = {}  # values pushed here by the other actors
        self.ready = threading.Condition()
        self.peers, self.peer_conns = [], []
        self.stopped = False
        self.key = key
        self.nthreads, host = None, None
        try:
            from distributed import get_worker

            worker = get_worker()
            self.nthreads = int(worker.state.nthreads)
            host = channel.host_of(worker.address)
        except (ImportError, ValueError, AttributeError):
            pass
        self.listening = None
        if key is not None and host is not None:
            try:
                self.listening = channel.Listening(host, key, self._call, self._deliver)
            except OSError:  # no port: Dask's calls only
                pass

    def direct_address(self):
        """Where the client may connect directly (None: Dask's calls only)."""
        return None if self.listening is None else self.listening.address

    def set_peers(self, peers, addresses=None, me: int = 0):
        """The chain's actors, in the client's order (this one, ``me``, among them), and
        where each listens (None: pushes go by Dask's calls)."""
        self.peers = list(peers)
        self.peer_conns = [None] * len(self.peers)
        for i, address in enumerate(addresses or ()):
            if i != me and address is not None:
                try:
                    conn = channel.connect(address, self.key)
                    channel.send(conn, "peer")
                    self.peer_conns[i] = conn
                except (OSError, EOFError):
                    pass  # that actor's values come by Dask's calls

    def _call(self, message):
        """A call on the direct connection (its own thread: the worker's thread count)."""
        from ..samplers._partitioned import threads

        with threads(self.nthreads or 1):
            return self.run(*message)

    def _deliver(self, message):
        key, value = message
        with self.ready:
            self.inbox[key] = value
            self.ready.notify_all()

    async def put(self, key, value):
        """A value made by another actor for a task here."""
        self._deliver((key, value))

    async def stop(self):
        """Stop waiting for pushed values (the chain lost a worker: they will not come)."""
        with self.ready:
            self.stopped = True
            self.ready.notify_all()

    def run(self, release, tasks, pushes, wanted):
        """Forget ``release``; push the values of ``pushes`` (key: the actors that read
        it) held already; run ``tasks`` (``(key, function, args, kwargs)``, in order; a
        :class:`Ref` in the arguments is read from the store, or waited for when another
        actor makes it), pushing each value in ``pushes`` once made; return the values of
        ``wanted``."""
        for key in release:
            self.values.pop(key, None)
        made = {t[0] for t in tasks}
        for key, targets in pushes.items():
            if key not in made:
                self._push(key, targets)
        read = set()
        try:
            for key, fn, args, kwargs in tasks:
                values = self._resolve(list(args) + list(kwargs.values()), read)
                self.values[key] = fn(*values[:len(args)],
                                      **dict(zip(kwargs, values[len(args):])))
                if key in pushes:
                    self._push(key, pushes[key])
            return [self._get(k, read) for k in wanted]
        finally:
            with self.ready:  # pushed for this call only
                for key in read:
                    self.inbox.pop(key, None)

    def _push(self, key, targets):
        value = self.values[key]
        for t in targets:
            conn = self.peer_conns[t] if t < len(self.peer_conns) else None
            if conn is not None:
                channel.send(conn, (key, value))
            else:
                self.peers[t].put(key, value)  # sent by the worker's event loop

    def _resolve(self, args, read):
        out = []
        for a in args:
            if isinstance(a, Ref):
                out.append(self._get(a.key, read))
            elif isinstance(a, (list, tuple)) and any(isinstance(b, Ref) for b in a):
                out.append(type(a)(self._resolve(a, read)) if isinstance(a, list)
                           else tuple(self._resolve(a, read)))
            else:
                out.append(a)
        return out

    def _get(self, key, read):
        if key in self.values:
            return self.values[key]
        if key[0] != "v":
            raise Missing(f"no value {key} on this worker")
        with self.ready:  # made by another actor: pushed here
            if not self.ready.wait_for(lambda: key in self.inbox or self.stopped,
                                       timeout=WAIT_SECONDS) or self.stopped:
                raise Missing(f"value {key} did not come from the other workers")
            read.add(key)
            return self.inbox[key]


#: an actor waits at most this long for a value from another worker
WAIT_SECONDS = 600.0

#: after a lost worker, the partitions are loaded again within this many seconds, or the
#: run stops (:class:`~.backend.WorkerLost`)
LOAD_SECONDS = 120.0


class Ref:
    """A value held by an actor (what a future is for tasks): its ``key`` and the
    ``actor`` (index) that holds it.  When the client forgets it, so does the actor, at the
    next call."""

    __slots__ = ("key", "actor", "generation", "_owner", "__weakref__")

    def __init__(self, key, actor: int, owner=None, generation: int = 0):
        self.key = key
        self.actor = actor
        self.generation = generation
        self._owner = owner

    def __reduce__(self):  # what travels to a worker: the key only
        return (Ref, (self.key, self.actor))

    def __del__(self):
        owner = self._owner
        if owner is not None:
            try:
                owner.release(self)
            except Exception:  # pragma: no cover - interpreter shutdown
                pass


def _refs_in(args):
    for a in args:
        if isinstance(a, Ref):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (b for b in a if isinstance(b, Ref))


class ActorExecutor:
    """Tasks submitted as :class:`Ref` objects, run at a gather by the workers' actors: one
    call each, the values one reads from another pushed between them."""

    def __init__(self, client, actors, addresses, key: bytes | None = None):
        self.client = client
        self.key = key
        self.generation = -1
        self.calls = 0
        self.conns = None
        self.renew(actors, addresses)

    def submit(self, fn, args, kwargs) -> Ref:
        refs = list(_refs_in(list(args) + list(kwargs.values())))
        self._check(refs)
        actor = refs[0].actor if refs else 0  # where its first argument is held
        ref = Ref(("v", next(self._counter)), actor, self, self.generation)
        self._pending.append((ref, fn, tuple(args), dict(kwargs)))
        return ref

    def release(self, ref: Ref):
        if ref.generation == self.generation and ref.actor < len(self._released):
            self._released[ref.actor].append(ref.key)

    def _check(self, refs):
        for r in refs:
            if r.generation != self.generation:
                raise StateLost("a value from before the cluster lost a worker was used")

    def gather(self, refs):
        """The values of ``refs``: every pending task runs on its actor, one call each."""
        refs = list(refs)
        self._check(refs)
        pending, self._pending = self._pending, []
        n = len(self.actors)
        tasks = [[] for _ in range(n)]
        pushes = [{} for _ in range(n)]
        wanted = [[] for _ in range(n)]
        for ref, fn, args, kwargs in pending:
            tasks[ref.actor].append((ref.key, fn, args, kwargs))
            for d in _refs_in(list(args) + list(kwargs.values())):
                if d.actor != ref.actor:
                    pushes[d.actor].setdefault(d.key, set()).add(ref.actor)
        for r in refs:
            if r.key not in wanted[r.actor]:
                wanted[r.actor].append(r.key)
        calls = []
        for a in range(n):
            release, self._released[a] = self._released[a], []
            if tasks[a] or pushes[a] or wanted[a]:
                calls.append((a, (release, tasks[a],
                                  {k: sorted(v) for k, v in pushes[a].items()}, wanted[a])))
            else:
                self._released[a] = release  # sent with the next call
        self.calls += len(calls)
        try:
            answers = self._direct(calls) if self.conns is not None else [
                self._result(f) for f in [self.actors[a].run(*m) for a, m in calls]]
        except BaseException:
            self.stop()  # the others may wait for what will not come
            self._close()
            raise
        got = {}
        for (a, _), values in zip(calls, answers):
            got.update(zip(wanted[a], values))
        return [got[r.key] for r in refs]

    def _direct(self, calls):
        """The calls on the direct connections (:mod:`.channel`)."""
        from multiprocessing.connection import wait

        answers = {}
        try:
            for a, message in calls:
                channel.send(self.conns[a], message)
            waiting = {id(self.conns[a]): a for a, _ in calls}
            while waiting:  # as they come: a lost worker is seen while the others wait
                for conn in wait([self.conns[a] for a in waiting.values()]):
                    a = waiting.pop(id(conn))
                    status, value = channel.receive(conn)
                    if status == "error":
                        if isinstance(value, Missing):
                            raise StateLost(f"a worker's state was lost ({value})") from value
                        raise value
                    answers[a] = value
        except (EOFError, OSError) as exc:
            raise StateLost(f"a worker holding the chain's state was lost "
                            f"({type(exc).__name__}: {exc})") from exc
        return [answers[a] for a, _ in calls]

    def _result(self, future):
        try:
            return future.result()
        except Missing as exc:
            raise StateLost(f"a worker was replaced and its state lost ({exc})") from exc
        except _lost_errors() + (OSError, TimeoutError) as exc:
            raise StateLost(f"a worker holding the chain's state was lost "
                            f"({type(exc).__name__}: {exc})") from exc

    def _close(self):
        """Close the direct connections (an actor whose client connection closes closes
        its listener); later calls go by Dask."""
        for conn in self.conns or ():
            try:
                conn.close()
            except OSError:  # pragma: no cover
                pass
        self.conns = None

    @property
    def direct(self) -> bool:
        """Whether the calls go on direct connections (:mod:`.channel`)."""
        return self.conns is not None

    def stop(self):
        """Tell the actors still reachable to stop waiting for values (a worker was lost,
        and what it would have pushed will not come)."""
        for actor in self.actors:
            try:
                actor.stop()
            except Exception:  # pragma: no cover - its worker is gone
                pass

    def renew(self, actors, addresses):
        """New actors (a loss, or the start): every value held before is gone.  The client
        connects to them directly where they listen, else calls them through Dask."""
        self._close()
        self.actors = list(actors)
        self.addresses = list(addresses)
        self.generation += 1
        self._counter = itertools.count()
        self._pending = []
        self._released = [[] for _ in self.actors]
        direct = [a.direct_address() for a in self.actors]
        direct = [f.result() for f in direct]
        if all(d is not None for d in direct):
            try:
                conns = [channel.connect(d, self.key) for d in direct]
                for c in conns:
                    channel.send(c, "client")
                self.conns = conns
            except (OSError, EOFError):  # unreachable from here: Dask's calls
                direct = [None] * len(direct)
        else:
            direct = [None] * len(direct)
        for future in [a.set_peers(self.actors, direct, i) for i, a in enumerate(self.actors)]:
            future.result()


def _workers(dask_scheduler):
    """The workers the scheduler knows now (the client's copy lags behind a loss)."""
    return list(dask_scheduler.workers)


def balanced_holders(rows, holder, workers) -> list:
    """The worker that holds each partition's actor: about equal numbers of rows on every
    worker, partitions kept where they are while their worker is under its share (a
    partition moved to another worker is copied there once).  Without this, Dask's own
    placement of the loading tasks could leave five of eight partitions on one of two
    workers, which then sets the pace of every pass."""
    rows = np.asarray(rows, dtype=np.int64)
    share = rows.sum() / max(len(workers), 1)
    load = dict.fromkeys(workers, 0)
    out = [None] * len(rows)
    for p in np.argsort(-rows, kind="stable"):  # the largest partitions first
        w = holder[p]
        if load[w] + rows[p] > share * 1.0001 + 0.5:
            w = min(workers, key=lambda v: (load[v], workers.index(v)))
        out[p] = w
        load[w] += rows[p]
    return out


class ActorPartitions(DaskPartitions):
    """:class:`~.backend.DaskPartitions` on actors: the same tasks, run in one call per
    worker per gather (:class:`ActorExecutor`)."""

    lineage = False  # nothing to cut at a checkpoint: the state is not a chain of tasks

    def __init__(self, client, part_futures, rows, summary, family, empty, direct=True):
        super().__init__(client, [], rows, summary, family, empty)
        self.part_futures = list(part_futures)
        self.executor = None
        self._key = None if not direct else os.urandom(32)  # the direct connections' key
        self._place()

    def _place(self):
        """One actor on every worker that holds partitions, holding them; ``self.parts``
        are their :class:`Ref` objects."""
        distributed = _dask()
        deadline = time.monotonic() + LOAD_SECONDS
        try:
            for f in self.part_futures:  # a lost one is loaded again; a source gone raises
                f.result(timeout=max(1.0, deadline - time.monotonic()))
            who = self.client.who_has(self.part_futures)
        except (TimeoutError, distributed.TimeoutError, *_lost_errors()) as exc:
            raise WorkerLost(f"the Dask cluster lost a partition and could not load it "
                             f"again ({type(exc).__name__}: {exc})") from exc
        alive = sorted(self.client.run_on_scheduler(_workers))
        holder = [min(who.get(f.key, ()) or alive) for f in self.part_futures]
        workers = sorted(set(holder) | set(alive))
        where = [workers.index(w) for w in balanced_holders(self.rows, holder, workers)]
        used = sorted(set(where))
        workers = [workers[a] for a in used]
        where = [used.index(a) for a in where]
        futures = []
        for a, w in enumerate(workers):
            mine = {("part", p): f for p, f in enumerate(self.part_futures) if where[p] == a}
            # where its partitions are, or elsewhere if that worker is gone by then
            futures.append(self.client.submit(PartitionStore, mine, self._key, actor=True,
                                              workers=[w], allow_other_workers=True,
                                              pure=False))
        actors = self.client.gather(futures)
        self._actor_futures = futures
        if self.executor is None:
            self.executor = ActorExecutor(self.client, actors, workers, self._key)
        else:
            self.executor.stop()
            self.executor.renew(actors, workers)
        self.parts = [Ref(("part", p), where[p], None, self.executor.generation)
                      for p in range(len(self.part_futures))]

    def rebuild(self):
        """New actors after a lost worker, on the partitions Dask loads again; raises
        :class:`~.backend.WorkerLost` when they cannot be loaded."""
        self._workers_seen = None
        self.traffic.rebuilds += 1
        self._place()

    @property
    def direct(self) -> bool:
        """Whether the client calls the actors on direct connections (:mod:`.channel`)."""
        return self.executor.direct

    @property
    def _n_workers(self) -> int:
        return len(self.executor.actors)

    def _submit(self, fn, *args, **kwargs):
        if fn is _w.unbox:  # a value for every task that reads it: it travels with them
            return args[0]
        self.traffic.tasks += 1
        return self.executor.submit(fn, args, kwargs)

    def _ship(self, value, nbytes: int):
        """Values for every partition travel inside the calls, once an actor."""
        return _w.Box(value), int(nbytes) * len(self.executor.actors)

    def _gather(self, futures):
        before = self.executor.calls
        out = self.executor.gather(futures)
        self.traffic.round_trips += 1
        self.traffic.calls += self.executor.calls - before
        return out


__all__ = ["ActorPartitions", "PartitionStore", "balanced_holders"]
