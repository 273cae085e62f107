"""The sub-cluster sampler in-process against a local Dask cluster of two worker processes.

Parts (``--parts``, default both):

* ``n1e6_d2``: N = 10⁶ points in 2 dimensions;
* ``n4e6_d8``: N = 4·10⁶ points in 8 dimensions.

Each part draws ten Gaussians (``make_gaussian_mixture``), writes them as 8 ``.npy`` shards
(one partition each) and runs the same chain twice: in-process with ``partitions=`` the
shards' sizes, on all cores, and on a ``LocalCluster`` of 2 worker processes with 1 thread
each, reading the shards on the workers (the client never holds the data).  Both start from
10 random clusters with alpha = 10, ``random_state=0``.  Figures: wall seconds per
iteration (median over the iterations after the first five, from ``trace_.seconds``),
the bytes of cluster parameters sent and statistics gathered per iteration
(``DPMixture.transfer_``), the final number of clusters, and whether the two runs are the
same chain (identical labels at every kept iteration).

Printed, and written to ``benchmarks/results/distributed.{json,md}`` (``--quick``: a
smaller N, ``distributed_quick.*``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_parts

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture

RESULTS = Path(__file__).resolve().parent / "results"
PARTS = {"n1e6_d2": (1_000_000, 2), "n4e6_d8": (4_000_000, 8)}
N_SHARDS = 8
N_WORKERS = 2


def _per_iteration(model, skip=5):
    seconds = np.diff(np.concatenate([[0.0], model.trace_.seconds]))
    return float(np.median(seconds[skip:])), seconds.tolist()


def run_part(part, quick, n_iter):
    from dpclust.distributed import local_client

    n, d = PARTS[part]
    if quick:
        n //= 20
    t0 = time.perf_counter()
    X, _ = make_gaussian_mixture(n_samples=n, n_clusters=10, n_features=d, random_state=0)
    print(f"  data: {n:,} x {d} ({X.nbytes / 2**20:.0f} MiB) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    kw = {"sampler": "subcluster", "alpha": 10.0, "n_iter": n_iter, "burn_in": n_iter - 3,
          "init": "random", "init_clusters": 10, "random_state": 0, "store_labels": True}
    with tempfile.TemporaryDirectory() as tmp:
        shards = np.array_split(X, N_SHARDS)
        for p, part_x in enumerate(shards):
            np.save(Path(tmp) / f"part-{p:02d}.npy", part_x)
        rows = [len(s) for s in shards]
        del shards
        t0 = time.perf_counter()
        local = DPMixture(partitions=rows, **kw).fit(X)
        local_fit = time.perf_counter() - t0
        local_it, local_all = _per_iteration(local)
        print(f"  in-process: {local_it * 1e3:.0f} ms per iteration, fit {local_fit:.1f} s, "
              f"K = {local.n_clusters_}", flush=True)
        del X
        client = local_client(N_WORKERS, threads_per_worker=1)
        try:
            # numba's cached kernels load once per worker process: not part of the chain
            DPMixture(backend="dask", client=client, n_iter=2, sampler="subcluster",
                      partitions=N_WORKERS).fit(np.random.default_rng(0).normal(size=(500, d)))
            t0 = time.perf_counter()
            dist = DPMixture(backend="dask", client=client, **kw).fit(tmp)
            dist_fit = time.perf_counter() - t0
        finally:
            cluster = client._dpclust_cluster
            client.close()
            cluster.close()
    dist_it, dist_all = _per_iteration(dist)
    t = dist.transfer_
    n_passes = len(t["params_bytes"])
    sent = float(np.sum(t["params_bytes"]) * min(N_WORKERS, N_SHARDS)) / n_iter
    received = float(np.sum(t["stats_bytes"])) / n_iter
    same = bool(np.array_equal(local.trace_.labels, dist.trace_.labels)
                and np.array_equal(local.labels_, dist.labels_))
    print(f"  dask ({N_WORKERS} workers x 1 thread, {N_SHARDS} shards): "
          f"{dist_it * 1e3:.0f} ms per iteration, fit {dist_fit:.1f} s, K = "
          f"{dist.n_clusters_}; per iteration {sent / 1024:.1f} KiB of parameters sent, "
          f"{received / 1024:.1f} KiB of statistics gathered ({n_passes} passes); "
          f"same chain: {same}", flush=True)
    return {"n": n, "d": d, "n_iter": n_iter, "n_shards": N_SHARDS, "n_workers": N_WORKERS,
            "local_s_per_iter": local_it, "local_fit_s": local_fit, "local_K": local.n_clusters_,
            "dask_s_per_iter": dist_it, "dask_fit_s": dist_fit, "dask_K": dist.n_clusters_,
            "bytes_sent_per_iter": sent, "bytes_received_per_iter": received,
            "passes": n_passes, "same_chain": same,
            "local_seconds": local_all, "dask_seconds": dist_all,
            "K_trace": local.trace_.n_clusters.tolist()}


def write_markdown(results, path):
    lines = ["# Sub-cluster sampler: in-process against a 2-worker local Dask cluster", "",
             ("| N | d | in-process s/iter | Dask s/iter | ratio | parameters sent / iter | "
              "statistics gathered / iter | final K | same chain |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for part in PARTS:
        r = results.get(part)
        if not r:
            continue
        lines.append(
            f"| {r['n']:,} | {r['d']} | {r['local_s_per_iter']:.3f} | "
            f"{r['dask_s_per_iter']:.3f} | {r['dask_s_per_iter'] / r['local_s_per_iter']:.2f} | "
            f"{r['bytes_sent_per_iter'] / 1024:.1f} KiB | "
            f"{r['bytes_received_per_iter'] / 1024:.1f} KiB | {r['dask_K']} | "
            f"{'yes' if r['same_chain'] else 'NO'} |")
    m = results.get("machine", {})
    lines += ["", (f"Machine: {m.get('cpu_model')}, {m.get('cpus_available')} CPUs; "
              f"{N_WORKERS} worker processes x 1 thread against in-process on all CPUs; "
              f"{N_SHARDS} `.npy` shards read by the workers; alpha = 10, 10 random starting "
              "clusters, seed 0.  Seconds per iteration: median after the first five.")]
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="N / 20, 10 iterations")
    p.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    p.add_argument("--iters", type=int, default=30)
    args = p.parse_args(argv)
    n_iter = 10 if args.quick else args.iters

    def warm_up():
        DPMixture(sampler="subcluster", n_iter=2, partitions=2).fit(
            np.random.default_rng(0).normal(size=(500, 2)))

    run_parts(args.parts, lambda part: run_part(part, args.quick, n_iter),
              RESULTS / "distributed", args.quick, warm_up, write_markdown)


if __name__ == "__main__":
    main()
