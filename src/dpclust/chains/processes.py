"""Chains in parallel processes (``n_chains`` with ``n_jobs``).

Each worker is a spawned process that owns some of the chains for the whole run: it builds
the model from the data once (its compiled kernels loaded from numba's cache), then
advances its chains on request, one iteration of each in turn, exactly as the estimator
does in-process (:meth:`~dpclust.chains.runner.ChainEstimator._step_chain`), and sends back a
short message after every iteration (for the progress bar) and the chains' consistent
records at the end of each block.  A chain's result depends on its random stream only, not
on the process or the number of threads that runs it, so the same ``random_state`` gives
the same chains whatever ``n_jobs`` is.

Workers ignore Ctrl-C; on an interrupt the parent asks each of them to stop after its
current iteration and to send its chains back, so the checkpoint holds every chain's last
complete iteration and a resumed run is the uninterrupted one.  Like every use of
``multiprocessing`` with spawned processes, a script that fits with ``n_jobs > 1`` must
start its work under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import ast
import contextlib
import multiprocessing as mp
import os
import signal
import sys
import traceback
from multiprocessing.connection import wait

import numpy as np

#: environment variables that set a worker's thread count (numba's pool and BLAS)
_THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "MKL_NUM_THREADS")


def available_cores() -> int:
    """Cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def can_start_processes() -> bool:
    """Whether spawned processes for the chains can start from here.

    A spawned process imports the program's main module again (as ``__mp_main__``): a
    script whose call to ``fit`` is not under ``if __name__ == "__main__":`` would run
    again in it.  So: yes in an interactive session, a notebook or ``python -c`` (no main
    file), and where the statement of the main module that is running now is such a
    guard (a script's guarded ``main()``, the ``dpclust`` and ``pytest`` commands); no in
    a process that is itself starting up or is a daemon (which may not have children), or
    when ``fit`` runs in another thread.
    """
    proc = mp.current_process()
    if proc.daemon or getattr(proc, "_inheriting", False):
        return False
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None:
        return True
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>"
                                     and frame.f_globals is vars(main)):
        frame = frame.f_back
    if frame is None:
        return False
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return False
    line = frame.f_lineno
    for stmt in tree.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            return _is_main_guard(stmt)
    return False


def _is_main_guard(stmt) -> bool:
    """Whether ``stmt`` is ``if __name__ == "__main__":`` (either way round)."""
    if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
            and len(stmt.test.ops) == 1 and isinstance(stmt.test.ops[0], ast.Eq)):
        return False
    sides = [stmt.test.left, stmt.test.comparators[0]]
    return ({type(x).__name__ for x in sides} == {"Name", "Constant"}
            and any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


@contextlib.contextmanager
def _thread_environment(n_threads: int):
    """The thread-count variables set to ``n_threads`` while workers start (a spawned
    process reads them when it imports numba and NumPy)."""
    saved = {k: os.environ.get(k) for k in _THREAD_VARIABLES}
    try:
        for k in _THREAD_VARIABLES:
            os.environ[k] = str(n_threads)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _worker(conn):
    """A worker's loop: receive its work, build the model, then ``advance`` / ``close`` on
    request."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt does
    try:
        est, recipe, chains, capacity = conn.recv()
        data, family_, prior = recipe
        model = (est._target(data) if family_ is None
                 else est._resume_model(data, family_, prior))
        sampler = est._make_sampler(model.n_samples, model.family)
        progs = dict(chains)
        rngs = {}
        for c, prog in progs.items():
            rngs[c] = np.random.default_rng()
            rngs[c].bit_generator.state = prog.snapshot.rng_state
        conn.send(("ready",))
        while True:
            msg = conn.recv()
            if msg[0] == "close":
                break
            if msg[0] == "burn_in":
                for prog in progs.values():
                    prog.burn_in = msg[1]
                continue
            if msg[0] != "advance":
                continue  # a halt that arrived after its block ended
            target, halted = msg[1], False
            while not halted:
                it = min(p.snapshot.iteration for p in progs.values())
                if it >= target:
                    break
                for c, prog in progs.items():
                    if prog.snapshot.iteration != it:
                        continue
                    info = est._step_chain(model, sampler, rngs[c], prog, capacity)
                    conn.send(("tick", c, int(info.n_clusters), float(info.log_joint),
                               prog.records[-1]))
                while conn.poll():
                    if conn.recv()[0] == "halt":
                        halted = True
            conn.send(("chains", {c: p.consistent() for c, p in progs.items()}))
    except BaseException as exc:  # noqa: BLE001 -- reported to the parent, which raises it
        with contextlib.suppress(Exception):
            conn.send(("error", exc, traceback.format_exc()))
    finally:
        conn.close()


class ChainWorkers:
    """The chains ``progs`` (a list the workers' results are written back into) on
    ``n_workers`` spawned processes, chain c on worker ``c % n_workers``.

    Parameters
    ----------
    est : the estimator (its settings; no callback)
    recipe : ``(data, family_, prior)``: the data as given to ``fit``, with ``family_``
        None for a new run (the model is ``est._target(data)``) or the checkpoint's family
        for a resumed one (``est._resume_model``)
    progs : list of the chains' progress records
    n_workers : int
    capacity : int
        Kept draws held per chain.
    """

    def __init__(self, est, recipe, progs, n_workers: int, capacity: int):
        self.progs = progs
        ctx = mp.get_context("spawn")
        threads = max(1, available_cores() // n_workers)
        self.workers = []
        with _thread_environment(threads):
            for w in range(n_workers):
                mine = [(c, progs[c]) for c in range(len(progs)) if c % n_workers == w]
                parent, child = ctx.Pipe()
                # the work goes over the pipe, not as the process's arguments: those are
                # written to the new process while this one still holds the reading end,
                # so a process that dies on start-up (a script without a main guard) would
                # leave the write of a large payload blocked for ever
                proc = ctx.Process(target=_worker, args=(child,), daemon=True,
                                   name=f"dpclust-chains-{w}")
                proc.start()
                child.close()
                self.workers.append((proc, parent))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    parent.send((est, recipe, mine, capacity))  # a dead worker: see below
        try:
            for proc, conn in self.workers:
                self._expect(conn, proc, "ready", starting=True)
        except BaseException:
            self.close()  # the other workers too
            raise

    def _expect(self, conn, proc, kind, starting=False):
        msg = _receive(conn, proc, starting)
        if msg[0] == "error":
            raise _from_worker(msg)
        if msg[0] != kind:
            raise RuntimeError(f"chain worker: expected {kind!r}, got {msg[0]!r}")
        return msg

    def advance(self, target: int, tick=None) -> None:
        """Advance every chain to ``target`` iterations; ``tick(chain, K, log_joint,
        record)`` after each iteration.  On Ctrl-C the workers stop after their current
        iteration and the chains are brought back before the interrupt goes on."""
        conns = {conn: proc for proc, conn in self.workers}
        for conn in conns:
            conn.send(("advance", int(target)))
        pending = set(conns)
        try:
            self._collect(pending, conns, tick)
        except KeyboardInterrupt:
            for conn in pending:
                with contextlib.suppress(OSError):
                    conn.send(("halt",))
            with _interrupts_deferred():
                self._collect(pending, conns, None)
            raise

    def _collect(self, pending, conns, tick):
        while pending:
            # a worker's process sentinel as well as its pipe: a worker that dies while
            # another process still holds its end of the pipe sends no end-of-file
            ready = wait([*pending, *(conns[conn].sentinel for conn in pending)])
            for conn in [c for c in pending if c in ready or conns[c].sentinel in ready]:
                try:
                    msg = _receive(conn, conns[conn])
                except RuntimeError:
                    pending.discard(conn)
                    raise
                if msg[0] == "tick":
                    if tick is not None:
                        tick(*msg[1:])
                elif msg[0] == "chains":
                    for c, prog in msg[1].items():
                        self.progs[c] = prog
                    pending.discard(conn)
                elif msg[0] == "error":
                    pending.discard(conn)
                    raise _from_worker(msg)

    def set_burn_in(self, burn_in: int) -> None:
        """Move every worker's chains' burn-in (a run that goes on until it converges)."""
        for _, conn in self.workers:
            conn.send(("burn_in", int(burn_in)))

    def close(self) -> None:
        for proc, conn in self.workers:
            with contextlib.suppress(OSError, ValueError):
                conn.send(("close",))
            conn.close()
        for proc, _ in self.workers:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()


def _receive(conn, proc, starting=False):
    """The worker's next message; RuntimeError once the worker has stopped without one.

    Waits on the pipe and on the process sentinel together: a worker that dies while
    another process (a spawned helper of its own) still holds its end of the pipe sends no
    end-of-file, and waiting on the pipe alone would never return.
    """
    while True:
        ready = wait([conn, proc.sentinel])
        if conn in ready or conn.poll():
            try:
                return conn.recv()
            except EOFError:
                break
        if proc.sentinel in ready:
            break
    proc.join(timeout=1.0)
    hint = ""
    if starting:
        hint = (" before it was ready. With n_jobs > 1 the chains run in spawned processes, "
                "which import the script that calls fit: start its work under `if __name__ "
                "== \"__main__\":` (the worker's own error is printed above), or pass "
                "n_jobs=1")
    raise RuntimeError(f"a chain worker stopped unexpectedly (exit code {proc.exitcode})"
                       + hint)


def _from_worker(msg):
    """The exception a worker sent, with the worker's traceback as a note."""
    exc = msg[1]
    exc.add_note("raised in a chain worker process:\n" + msg[2])
    return exc


@contextlib.contextmanager
def _interrupts_deferred():
    """A second Ctrl-C while the chains are being brought back is held until they are."""
    caught = []
    try:
        previous = signal.signal(signal.SIGINT, lambda *a: caught.append(a))
    except ValueError:  # not the main thread: nothing to defer
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
