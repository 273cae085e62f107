"""The sub-cluster sampler in-process against a local Dask cluster of two worker processes.

Parts (``--parts``, default both):

* ``n2e4_d3``: N = 2·10⁴ points in 3 dimensions, 2 shards (one per worker);
* ``n1e6_d2``: N = 10⁶ points in 2 dimensions, 8 shards;
* ``n4e6_d8``: N = 4·10⁶ points in 8 dimensions, 8 shards.

``--shards N`` gives every part N shards instead (``distributed_shards<N>.*``): how the
number of partitions a worker holds changes the cost of an iteration.

Each part draws ten Gaussians (``make_gaussian_mixture``), writes them as ``.npy`` shards
(one partition each) and runs the same chain twice: in-process with ``partitions=`` the
shards' sizes, on all cores, and on a ``LocalCluster`` of 2 worker processes with 1 thread
each, reading the shards on the workers (the client never holds the data).  Both start from
10 random clusters with alpha = 10, ``random_state=0``.  Figures: wall seconds per
iteration (median over the iterations after the first five, from ``trace_.seconds``),
also of the in-process default without partitions, the round trips (the client waits for
the workers) and tasks per iteration, the bytes of cluster parameters sent and statistics
gathered per iteration (``DPMixture.transfer_``), the final number of clusters, and whether
the two runs are the same chain (identical labels at every kept iteration).

Printed, and written to ``benchmarks/results/distributed.{json,md}`` (``--quick``: a
smaller N, ``distributed_quick.*``).

``--lineage``: the scheduler over a long run of the tasks design instead
(:func:`run_lineage`): 2,000 points,
2,000 iterations on 2 workers, with a checkpoint every 50 iterations (after which the chain's
tasks are cut to new roots) and without; every 50 iterations the number of tasks the
scheduler holds and its process's resident memory (the scheduler runs in a process of its
own, ``dask scheduler``).  Written to ``benchmarks/results/distributed_lineage.{json,md}``
(``--quick``: 200 iterations, a probe every 20).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _dask_timeline as _timeline
from _common import run_parts

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture

RESULTS = Path(__file__).resolve().parent / "results"
#: N, d and the number of shards (partitions) of each part
PARTS = {"n2e4_d3": (20_000, 3, 2), "n1e6_d2": (1_000_000, 2, 8),
         "n4e6_d8": (4_000_000, 8, 8)}
N_WORKERS = 2


@contextlib.contextmanager
def _design(name):
    """Fits on a Dask cluster in the design ``name``: ``"actors"`` (the default) or
    ``"tasks"`` (futures of pure tasks through the scheduler, the design before actors)."""
    from dpclust.distributed import loading

    load = loading.load_partitions
    loading.load_partitions = functools.partial(load, actors=name == "actors")
    try:
        yield
    finally:
        loading.load_partitions = load


def _per_iteration(model, skip=5):
    """(median seconds per iteration after the first ``skip``, every iteration's seconds)
    of a one-chain fit."""
    seconds = np.diff(np.concatenate([[0.0], model.trace_.seconds[0]]))
    return float(np.median(seconds[skip:])), seconds.tolist()


def run_part(part, quick, n_iter, scheduler_process=False, shards=None):
    """One part; ``scheduler_process``: the scheduler in a process of its own, as on a real
    cluster, rather than in the client's (a ``LocalCluster``'s), where the client's work
    holds the scheduler back; ``shards``: that many shards instead of the part's."""
    from distributed import get_task_stream

    from dpclust.distributed import local_client

    n, d, n_shards = PARTS[part]
    n_shards = n_shards if shards is None else int(shards)
    if quick:
        n //= 20
    t0 = time.perf_counter()
    X, _ = make_gaussian_mixture(n_samples=n, n_clusters=10, n_features=d, random_state=0)
    print(f"  data: {n:,} x {d} ({X.nbytes / 2**20:.0f} MiB) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    kw = {"sampler": "subcluster", "alpha": 10.0, "n_iter": n_iter, "burn_in": n_iter - 3,
          "init": "random", "init_clusters": 10, "random_state": 0, "store_labels": True,
          "n_chains": 1}
    with tempfile.TemporaryDirectory() as tmp:
        shards = np.array_split(X, n_shards)
        for p, part_x in enumerate(shards):
            np.save(Path(tmp) / f"part-{p:02d}.npy", part_x)
        rows = [len(s) for s in shards]
        del shards
        t0 = time.perf_counter()
        local = DPMixture(partitions=rows, **kw).fit(X)
        local_fit = time.perf_counter() - t0
        local_it, local_all = _per_iteration(local)
        default_it = _per_iteration(DPMixture(**kw).fit(X))[0]
        print(f"  in-process default (no partitions): {default_it * 1e3:.0f} ms per "
              f"iteration", flush=True)
        print(f"  in-process: {local_it * 1e3:.0f} ms per iteration, fit {local_fit:.1f} s, "
              f"K = {local.n_clusters_}", flush=True)
        del X
        if scheduler_process:
            client, close = _scheduler_process(tmp)
        else:
            client = local_client(N_WORKERS, threads_per_worker=1)

            def close():
                client.close()
                client._dpclust_cluster.close()
        try:
            # numba's cached kernels load once per worker process: not part of the chain
            DPMixture(executor=client, n_iter=2, sampler="subcluster",
                      partitions=N_WORKERS,
                      n_chains=1).fit(np.random.default_rng(0).normal(size=(500, d)))
            # the tasks design (futures through the scheduler), then actors (the default)
            ends, cpu = [], []  # wall clock (to cut the task stream) and the client's CPU

            def mark(it, state, info):
                ends.append(time.time())
                cpu.append(time.thread_time())

            with get_task_stream(client) as stream, _design("tasks"):
                t0 = time.perf_counter()
                tasks = DPMixture(executor=client, callback=mark, **kw).fit(tmp)
                tasks_fit = time.perf_counter() - t0
            spent = _timeline.breakdown(stream.data, ends, N_WORKERS, client_cpu=cpu)
            bare = _timeline.latency(client)
            t0 = time.perf_counter()
            dist = DPMixture(executor=client, **kw).fit(tmp)
            dist_fit = time.perf_counter() - t0
        finally:
            close()
    tasks_it, tasks_all = _per_iteration(tasks)
    tasks_same = bool(np.array_equal(local.trace_.labels, tasks.trace_.labels)
                      and np.array_equal(local.labels_, tasks.labels_))
    tt = tasks.transfer_
    print(f"  dask, tasks through the scheduler: {tasks_it * 1e3:.0f} ms per iteration, fit "
          f"{tasks_fit:.1f} s, {tt['round_trips'] / n_iter:.1f} round trips and "
          f"{tt['tasks'] / n_iter:.0f} tasks an iteration; same chain: {tasks_same}",
          flush=True)
    dist_it, dist_all = _per_iteration(dist)
    t = dist.transfer_
    n_passes = len(t["params_bytes"])
    sent = float(np.sum(t["params_bytes"])) / n_iter
    received = float(np.sum(t["stats_bytes"])) / n_iter
    trips = t.get("round_trips", np.nan) / n_iter
    n_tasks = t.get("tasks", np.nan) / n_iter
    calls = t.get("calls", np.nan) / n_iter
    same = bool(np.array_equal(local.trace_.labels, dist.trace_.labels)
                and np.array_equal(local.labels_, dist.labels_))
    print(f"  dask on actors ({N_WORKERS} workers x 1 thread, {n_shards} shards): "
          f"{dist_it * 1e3:.0f} ms per iteration ({dist_it / local_it:.2f}x in-process, "
          f"{dist_it / tasks_it:.2f}x tasks), fit {dist_fit:.1f} s, K = "
          f"{dist.n_clusters_}; per iteration {sent / 1024:.1f} KiB of parameters sent, "
          f"{received / 1024:.1f} KiB of statistics gathered ({n_passes} passes), "
          f"{trips:.1f} round trips, {calls:.1f} actor calls, {n_tasks:.0f} tasks; "
          f"same chain: {same}; direct connections: {t.get('direct')}", flush=True)
    if spent:
        top = ", ".join(f"{k} {v:.0f}" for k, v in list(spent["compute_ms"].items())[:5])
        print(f"  where a Dask iteration goes: no worker computing {spent['none_ms']:.0f} ms "
              f"(the client computing {spent['client_ms']:.0f} ms), "
              f"some {spent['some_ms']:.0f} ms, all {spent['all_ms']:.0f} ms; workers' "
              f"compute ms: {top}", flush=True)
    print(f"  bare task graphs on the same cluster: one task {bare['one_task']:.1f} ms, "
          f"a chain of 10 {bare['chain_of_10']:.1f} ms, 8 tasks in 2 levels "
          f"{bare['eight_in_2_levels']:.1f} ms", flush=True)
    return {"n": n, "d": d, "n_iter": n_iter, "n_shards": n_shards, "n_workers": N_WORKERS,
            "local_s_per_iter": local_it, "local_fit_s": local_fit, "local_K": local.n_clusters_,
            "dask_s_per_iter": dist_it, "dask_fit_s": dist_fit, "dask_K": dist.n_clusters_,
            "bytes_sent_per_iter": sent, "bytes_received_per_iter": received,
            "passes": n_passes, "same_chain": same, "round_trips_per_iter": trips,
            "tasks_per_iter": n_tasks, "calls_per_iter": calls, "direct": t.get("direct"),
            "local_default_s_per_iter": default_it,
            "tasks_s_per_iter": tasks_it, "tasks_fit_s": tasks_fit, "tasks_same_chain": tasks_same,
            "tasks_round_trips_per_iter": tt["round_trips"] / n_iter,
            "tasks_tasks_per_iter": tt["tasks"] / n_iter, "tasks_seconds": tasks_all,
            "local_seconds": local_all, "dask_seconds": dist_all,
            "dask_iteration_ms": spent, "bare_graph_ms": bare,
            "K_trace": local.trace_.n_clusters[0].tolist()}


def write_markdown(results, path, scheduler_process=False):
    lines = ["# Sub-cluster sampler: in-process against a 2-worker local Dask cluster", "",
             ("| N | d | shards | in-process s/iter (same partitions) | Dask on actors "
              "s/iter | ratio | Dask, tasks s/iter | ratio | in-process default s/iter | "
              "actors: ratio to it | sent / iter | gathered / iter | round trips / iter | "
              "actor calls / iter | tasks: round trips, tasks / iter | final K | same chain "
              "(actors, tasks) |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for part in PARTS:
        r = results.get(part)
        if not r or "tasks_s_per_iter" not in r:
            continue  # a run from before these columns: run the part again
        local = r["local_s_per_iter"]
        lines.append(
            f"| {r['n']:,} | {r['d']} | {r['n_shards']} | {local:.3f} | "
            f"{r['dask_s_per_iter']:.3f} | {r['dask_s_per_iter'] / local:.2f} | "
            f"{r['tasks_s_per_iter']:.3f} | {r['tasks_s_per_iter'] / local:.2f} | "
            f"{r['local_default_s_per_iter']:.3f} | "
            f"{r['dask_s_per_iter'] / r['local_default_s_per_iter']:.2f} | "
            f"{r['bytes_sent_per_iter'] / 1024:.1f} KiB | "
            f"{r['bytes_received_per_iter'] / 1024:.1f} KiB | {r['round_trips_per_iter']:.1f} | "
            f"{r['calls_per_iter']:.1f} | {r['tasks_round_trips_per_iter']:.1f}, "
            f"{r['tasks_tasks_per_iter']:.0f} | {r['dask_K']} | "
            f"{'yes' if r['same_chain'] else 'NO'}, "
            f"{'yes' if r['tasks_same_chain'] else 'NO'} |")
    m = results.get("machine", {})
    lines += ["", (f"Machine: {m.get('cpu_model')}, {m.get('cpus_available')} CPUs; "
              f"{N_WORKERS} worker processes x 1 thread against in-process on all CPUs; "
              "`.npy` shards read by the workers; alpha = 10, 10 random starting "
              "clusters, seed 0.  Seconds per iteration: median after the first five."
              + ("  The scheduler in a process of its own (`dask scheduler`)."
                 if scheduler_process else "  The scheduler in the client's process "
                 "(a `LocalCluster`)."))]
    lines += _time_spent_lines(results)
    path.write_text("\n".join(lines) + "\n")


def _time_spent_lines(results):
    """The table of where a Dask iteration's time goes (runs that recorded it)."""
    rows = [(part, results[part]) for part in PARTS
            if isinstance(results.get(part), dict) and results[part].get("dask_iteration_ms")]
    if not rows:
        return []
    lines = ["", "## Where an iteration of the tasks design goes", "",
             ("| N | d | tasks ms/iter | no worker computing | some | all | workers' compute "
              "(ms an iteration) | the client's CPU | bare graphs: 1 task / chain of 10 / 8 "
              "in 2 levels |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in rows:
        t, b = r["dask_iteration_ms"], r["bare_graph_ms"]
        top = ", ".join(f"{k} {v:.0f}" for k, v in list(t["compute_ms"].items())[:5])
        lines.append(f"| {r['n']:,} | {r['d']} | {r['tasks_s_per_iter'] * 1e3:.0f} | "
                     f"{t['none_ms']:.0f} | {t['some_ms']:.0f} | {t['all_ms']:.0f} | {top} | "
                     f"{t['client_ms']:.0f} | "
                     f"{b['one_task']:.1f} / {b['chain_of_10']:.1f} / "
                     f"{b['eight_in_2_levels']:.1f} ms |")
    lines += ["", ("From Dask's task stream, over the iterations after the first five (mean "
                   "milliseconds an iteration): the time when no worker computed (the "
                   "client's own work, and Dask's latency: messages, the scheduler, round "
                   "trips), when some but not all of the workers did, and when all did; "
                   "the workers' computing time by task function; the CPU time of the "
                   "client's thread (the sampler's own logic and the submission of its "
                   "tasks; with a `LocalCluster` the scheduler runs in another thread of "
                   "the same process).  Bare graphs: tasks that "
                   "do nothing, submitted and gathered on the same cluster after the run "
                   "(medians of 100): Dask's latency alone.")]
    return lines


def _scheduler_process(tmp):
    """A ``dask scheduler`` process and ``N_WORKERS`` worker processes of 1 thread, and a
    client; returns ``(client, close)``."""
    import os
    import subprocess

    from distributed import Client

    bin_dir = Path(sys.executable).parent
    dask_cli = str(bin_dir / "dask") if (bin_dir / "dask").exists() else "dask"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    file = str(Path(tmp) / "scheduler.json")
    procs = [subprocess.Popen([dask_cli, "scheduler", "--scheduler-file", file, "--port", "0",
                               "--dashboard-address", ":0", "--no-show"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for _ in range(50):
        if Path(file).exists():
            break
        time.sleep(0.2)
    procs.append(subprocess.Popen([dask_cli, "worker", "--scheduler-file", file, "--nworkers",
                                   str(N_WORKERS), "--nthreads", "1", "--no-dashboard"],
                                  env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL))
    client = Client(scheduler_file=file)
    client.wait_for_workers(N_WORKERS, timeout=120)

    def close():
        client.close()
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=30)

    return client, close


def _scheduler_probe(dask_scheduler):
    """``(tasks, resident bytes, task groups held by the spans, entries of Dask's cache of
    key names, records of the spans' metadata)`` of the scheduler.  ``dask.utils.key_split``
    caches the name of every key it has seen, up to 100,000 (an LRU): about 800 bytes of
    scheduler memory a key until it is full.  A span keeps a metadata record per
    ``submit`` (``{"type": "Future"}``), which the client folds every
    ``FOLD_EVERY`` round trips.  The resident bytes are read after a garbage collection
    and ``malloc_trim``, so that memory freed but not yet returned is not counted."""
    import ctypes
    import gc

    import psutil
    from dask.utils import key_split

    spans = dask_scheduler.extensions.get("spans")
    groups = -1 if spans is None else sum(len(s.groups) for s in spans.spans.values())
    records = -1 if spans is None else sum(
        len((getattr(s, "_metadata", None) or {}).get("collections", ()))
        for s in spans.spans.values())
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    return (len(dask_scheduler.tasks), psutil.Process().memory_info().rss, groups,
            key_split.cache_info().currsize, records)


def run_lineage(quick, cuts=(False, True)):
    """The scheduler's tasks and memory over a long run with and without checkpoints
    (``cuts``: which of the two runs), in the tasks design (on actors the scheduler holds
    the loading tasks and the actors only, whatever the run's length)."""
    n, n_iter, every = 2_000, (200 if quick else 2_000), (20 if quick else 50)
    X, _ = make_gaussian_mixture(n_samples=n, n_clusters=4, random_state=0)
    out = {"n": n, "n_iter": n_iter, "every": every, "n_workers": N_WORKERS, "partitions": 2}
    runs = {}
    for cut in cuts:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), \
                _design("tasks"):
            warnings.simplefilter("ignore", UserWarning)  # short chains have not converged
            client, close = _scheduler_process(tmp)
            try:
                # the workers load the compiled kernels once: not part of the run
                DPMixture(executor=client, n_iter=2, partitions=2,
                          n_chains=1).fit(X[:500])
                probes = [(0, *client.run_on_scheduler(_scheduler_probe))]

                def probe(it, state, info):
                    if (it + 1) % every == 0:
                        probes.append((it + 1, *client.run_on_scheduler(_scheduler_probe)))

                t0 = time.perf_counter()
                m = DPMixture(executor=client, partitions=2, n_iter=n_iter,
                              random_state=0, callback=probe,
                              checkpoint=Path(tmp) / "chain.ckpt" if cut else None,
                              checkpoint_every=every if cut else None, n_chains=1).fit(X)
                fit_s = time.perf_counter() - t0
            finally:
                close()
        name = "checkpoints" if cut else "no_checkpoints"
        its, tasks, rss, groups, names, records = (list(c) for c in zip(*probes))
        runs[name] = {"iterations": its, "tasks": tasks, "scheduler_rss": rss,
                      "span_groups": groups, "key_names": names, "span_records": records,
                      "fit_s": fit_s, "K": int(m.n_clusters_),
                      "log_joint": m.trace_.log_joint[0].tolist(), "labels": m.labels_}
        print(f"  {name}: fit {fit_s:.0f} s, K = {m.n_clusters_}; scheduler tasks "
              f"{tasks[1]} -> {tasks[-1]} (max {max(tasks)}), memory "
              f"{rss[1] / 2**20:.0f} -> {rss[-1] / 2**20:.0f} MiB, task groups in spans "
              f"{groups[1]} -> {groups[-1]}", flush=True)
    if len(runs) == 2:
        a, b = runs["checkpoints"], runs["no_checkpoints"]
        out["same_chain"] = bool(np.array_equal(a["log_joint"], b["log_joint"])
                                 and np.array_equal(a["labels"], b["labels"]))
        print(f"  same chain with and without the cuts: {out['same_chain']}", flush=True)
    for run in runs.values():
        run.pop("labels")
    out.update(runs)
    return out


def _at(run, name, j):
    values = run.get(name)
    return "?" if values is None else values[j]


def write_lineage_markdown(results, path):
    r = results.get("lineage")
    if not r:
        return
    names = [n for n in ("no_checkpoints", "checkpoints") if n in r]
    said = {"no_checkpoints": "without checkpoints", "checkpoints": "with checkpoints"}
    same = ("" if "same_chain" not in r else
            f"  Same chain with and without: {'yes' if r['same_chain'] else 'NO'}.")
    lines = ["# The Dask scheduler over a long run: lineage cut at checkpoints", "",
             (f"{r['n']:,} points, {r['n_iter']:,} iterations, {r['n_workers']} workers x 1 "
              f"thread, {r['partitions']} partitions; "
              + " and ".join(said[n] for n in names)
              + f" (a checkpoint every {r['every']} iterations: the chain's state and kept "
              "draws rebuilt as new root tasks from what was written)." + same), ""]
    cols = [("tasks", "tasks", str), ("scheduler MiB", "scheduler_rss",
                                      lambda v: f"{v / 2**20:.0f}"),
            ("key names cached", "key_names", str), ("span records", "span_records", str)]
    lines += ["| iteration | " + " | ".join(f"{c}, {said[n]}" for c, _, _ in cols
                                            for n in names) + " |",
              "|---|" + "---|" * (len(cols) * len(names))]
    first = r[names[0]]
    step = max(1, (len(first["iterations"]) - 1) // 10)
    for j in sorted(set(range(0, len(first["iterations"]), step))
                    | {len(first["iterations"]) - 1}):
        cells = []
        for _, key, fmt in cols:
            for n in names:
                v = _at(r[n], key, j)
                cells.append(v if v == "?" else fmt(v))
        lines.append(f"| {first['iterations'][j]} | " + " | ".join(cells) + " |")
    fits = "; ".join(f"{r[n]['fit_s']:.0f} s {said[n]} (K = {r[n]['K']})" for n in names)
    lines += ["", (f"Fit: {fits}.  Iteration 0: after a 2-iteration warm-up fit on the same "
                   "scheduler.  Memory: the resident set of the `dask scheduler` process "
                   "after a garbage collection and `malloc_trim`.  Key names cached: "
                   "`dask.utils.key_split`'s LRU of the names of the keys the scheduler has "
                   "seen, at most 100,000 entries (about 800 bytes of scheduler memory "
                   "each), which fills over the first iterations of a long run whether or "
                   "not its tasks are cut; the client empties it every `FOLD_EVERY` round "
                   "trips.  Span records: "
                   "the metadata Dask's spans keep, a record per `submit`; the client folds "
                   "its repeats every `FOLD_EVERY` round trips "
                   "(`DaskPartitions._fold_span_metadata`; without it, about 145 records and "
                   "36 KiB of scheduler memory an iteration for the life of the scheduler).")]
    m = results.get("machine", {})
    lines += ["", f"Machine: {m.get('cpu_model')}, {m.get('cpus_available')} CPUs."]
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="N / 20, 10 iterations")
    p.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--lineage", action="store_true",
                   help="the scheduler's tasks and memory over a long run, with and without "
                        "checkpoints (instead of the parts)")
    p.add_argument("--checkpoints-only", action="store_true",
                   help="with --lineage: the run with checkpoints alone (half the time), "
                        "written to distributed_lineage_checkpoints.{json,md}")
    p.add_argument("--scheduler-process", action="store_true",
                   help="the scheduler in a process of its own (as on a real cluster), "
                        "written to distributed_scheduler.{json,md}")
    p.add_argument("--shards", type=int, default=None,
                   help="this many shards (partitions) in every part instead of its own, "
                        "written to distributed_shards<N>.{json,md}")
    args = p.parse_args(argv)
    n_iter = 10 if args.quick else args.iters
    if args.lineage:
        cuts = (True,) if args.checkpoints_only else (False, True)
        stem = "distributed_lineage" + ("_checkpoints" if args.checkpoints_only else "")
        run_parts(["lineage"], lambda part: run_lineage(args.quick, cuts),
                  RESULTS / stem, args.quick, lambda: None,
                  write_lineage_markdown)
        return

    def warm_up():
        DPMixture(sampler="subcluster", n_iter=2, partitions=2, n_chains=1).fit(
            np.random.default_rng(0).normal(size=(500, 2)))

    stem = "distributed_scheduler" if args.scheduler_process else "distributed"
    stem += f"_shards{args.shards}" if args.shards else ""
    run_parts(args.parts, lambda part: run_part(part, args.quick, n_iter,
                                                args.scheduler_process, args.shards),
              RESULTS / stem, args.quick, warm_up,
              functools.partial(write_markdown, scheduler_process=args.scheduler_process))


if __name__ == "__main__":
    main()
