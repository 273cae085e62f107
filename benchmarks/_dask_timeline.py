"""Where a Dask iteration's time goes: the workers' task stream cut into iterations, and the
latency of a few bare task graphs on the same cluster (``bench_distributed.py``).

An iteration's wall time splits into the time when no worker computes (the client's own
work and Dask's latency: messages, the scheduler, round trips), when some but not all
compute (one worker waits for another), and when all compute.  A bare task graph costs
the latency alone: its tasks do nothing.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np


def _task_name(key) -> str:
    """The function of a task key: ``("dpclust", "<function>-<id>")`` or ``"<function>-<id>"``."""
    name = key[1] if isinstance(key, tuple) and len(key) > 1 else str(key)
    return str(name).rsplit("-", 1)[0]


def _computes(records):
    """``(start, stop, worker, function)`` of every computation in a task stream."""
    out = []
    for r in records:
        for s in r.get("startstops", ()):
            if s.get("action") == "compute":
                out.append((float(s["start"]), float(s["stop"]), r.get("worker"),
                            _task_name(r.get("key"))))
    return out


def breakdown(records, ends, n_workers: int, skip: int = 5, client_cpu=None) -> dict:
    """Per iteration (those after the first ``skip``; ``ends``: wall-clock ``time.time()``
    at the end of each iteration), milliseconds when no worker, some workers and all
    ``n_workers`` workers computed, each task function's computing milliseconds, and the
    client thread's CPU milliseconds (``client_cpu``: ``time.thread_time()`` at the same
    ends)."""
    ends = np.asarray(ends, dtype=np.float64)
    if len(ends) <= skip + 1:
        return {}
    lo, hi = ends[skip], ends[-1]
    n_its = len(ends) - 1 - skip
    events, by_function = [], defaultdict(float)
    for start, stop, _, name in _computes(records):
        start, stop = max(start, lo), min(stop, hi)
        if stop <= start:
            continue
        events += [(start, 1), (stop, -1)]
        by_function[name] += stop - start
    level, last = 0, lo
    spans = np.zeros(3)  # none, some, all
    for t, step in sorted(events):
        spans[0 if level == 0 else 2 if level >= n_workers else 1] += t - last
        last, level = t, level + step
    spans[0] += hi - last
    per = 1e3 / n_its
    client = np.nan if client_cpu is None else (client_cpu[-1] - client_cpu[skip]) * per
    by_time = sorted(by_function.items(), key=lambda kv: -kv[1])
    return {"client_ms": float(client), "none_ms": float(spans[0] * per),
            "some_ms": float(spans[1] * per), "all_ms": float(spans[2] * per),
            "compute_ms": {k: v * per for k, v in by_time}}


def _noop(*args):
    return 0


def latency(client, repeats: int = 100) -> dict:
    """Median milliseconds of bare task graphs, submitted and gathered as the chain's are
    (one ``submit`` a task): one task; a chain of ten tasks (each waits for the one before);
    four tasks and four that each wait for one of them (two levels, eight tasks)."""
    from dpclust.distributed.backend import task_key

    def submit(*args):
        return client.submit(_noop, *args, key=task_key(_noop))

    root = submit()
    client.gather(root)

    def one():
        client.gather(submit(root))

    def chain():
        f = root
        for _ in range(10):
            f = submit(f)
        client.gather(f)

    def two_levels():
        client.gather([submit(f) for f in [submit(root, j) for j in range(4)]])

    out = {}
    for name, graph in (("one_task", one), ("chain_of_10", chain), ("eight_in_2_levels",
                                                                     two_levels)):
        graph()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            graph()
            times.append(time.perf_counter() - t)
        out[name] = float(np.median(times)) * 1e3
    return out
