"""What a user gets on a Dask cluster against in-process: clusters found, NMI and time.

Parts (``--parts``, default both):

* ``six``: 20,000 points, 3-D, six Gaussians (the data of the issue that asked for this):
  the in-process default (k-means start, in-process moves), the same chain as a Dask
  cluster's run in-process with ``partitions=2``, and on a ``LocalCluster`` of 2 worker
  processes x 1 thread, after 30 and 100 iterations; **before**: the partitioned moves as
  they were (EM launches, no sequential or multi-way moves, random start:
  ``SubclusterSplitMerge(sequential=False)``, ``init="random"``), in the same run.
  Seconds per iteration are medians after the first five (``trace_.seconds``).
* ``million``: the twelve data sets of ``bench_subcluster.py``'s speed part (10⁶ points, 2-D,
  ten Gaussians, alpha = 10, 100 iterations from one cluster): NMI and K in-process and
  with 2 partitions (the chain that 2 Dask workers run: tests/test_distributed.py checks
  that the two are the same), and before (EM launches on the partitions).

Printed, and written to ``benchmarks/results/distributed_mixing.{json,md}`` (``--quick``:
N / 10, fewer iterations and data sets, ``distributed_mixing_quick.*``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_parts

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.metrics import nmi
from dpclust.samplers import SubclusterSplitMerge

RESULTS = Path(__file__).resolve().parent / "results"
PARTS = ("six", "million")
N_WORKERS = 2


def _median_step(model, skip=5):
    """Median seconds of a chain's iteration after its first ``skip`` (every chain's
    iterations pooled; ``trace_.seconds`` is of shape (n_chains, n_iter))."""
    cumulative = np.asarray(model.trace_.seconds, dtype=float)
    seconds = np.diff(cumulative, axis=1, prepend=0.0)
    return (float(np.median(seconds[:, skip:])) if seconds.shape[1] > skip
            else float(np.median(seconds)))


def _fit(label, X, y, **kw):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short chains: convergence warnings
        m = DPMixture(random_state=0, **{"n_chains": 1, **kw}).fit(X)
    row = {"run": label, "n_iter": kw.get("n_iter"), "K": int(m.n_clusters_),
           "nmi": float(nmi(m.labels_, y)), "fit_s": time.perf_counter() - t0,
           "s_per_iter": _median_step(m)}
    print(f"  {label:<58} K = {row['K']:>3}  NMI {row['nmi']:.3f}  fit {row['fit_s']:6.1f} s  "
          f"{row['s_per_iter'] * 1e3:6.0f} ms/iter", flush=True)
    return row


BEFORE = dict(sampler=SubclusterSplitMerge(sequential=False), init="random")


def run_six(quick):
    from dpclust.distributed import local_client

    n = 2_000 if quick else 20_000
    X, y = make_gaussian_mixture(n_samples=n, n_clusters=6, n_features=3, random_state=0)
    short, long = (10, 30) if quick else (30, 100)
    rows = [_fit("in-process default", X, y, n_iter=short),
            _fit("in-process, partitions=2 (= Dask's chain)", X, y, n_iter=short,
                 partitions=N_WORKERS),
            _fit("before: in-process, partitions=2, EM launches, random start", X, y,
                 n_iter=short, partitions=N_WORKERS, **BEFORE)]
    client = local_client(N_WORKERS, threads_per_worker=1)
    try:
        # the workers load the compiled kernels once: not part of the runs
        DPMixture(executor=client, n_iter=3, partitions=N_WORKERS,
                  n_chains=1).fit(X[:500])
        for n_iter in (short, long):
            rows.append(_fit(f"Dask, {N_WORKERS} workers", X, y, n_iter=n_iter,
                             executor=client, partitions=N_WORKERS))
        rows.append(_fit(f"before: Dask, {N_WORKERS} workers, EM launches, random start", X, y,
                         n_iter=short, executor=client, partitions=N_WORKERS,
                         **BEFORE))
    finally:
        cluster = client._dpclust_cluster
        client.close()
        cluster.close()
    return {"n": n, "rows": rows}


def run_million(quick):
    n = 100_000 if quick else 1_000_000
    n_iter = 30 if quick else 100
    sets = 3 if quick else 12
    runs = []
    for s in range(sets):
        X, y = make_gaussian_mixture(n, 10, random_state=s)
        kw = dict(alpha=10.0, n_iter=n_iter, init_clusters=1, init="random", burn_in=n_iter - 1,
                  n_chains=1)
        r = {"seed": s}
        for label, extra in (("in-process", {}), ("partitions", {"partitions": N_WORKERS}),
                             ("before", dict(partitions=N_WORKERS,
                                             sampler=SubclusterSplitMerge(sequential=False)))):
            row = _fit(f"seed {s}: {label}", X, y, **kw, **extra)
            r[label] = row
        runs.append(r)
    summary = {}
    for label in ("in-process", "partitions", "before"):
        nmis = [r[label]["nmi"] for r in runs]
        summary[label] = {"min_nmi": min(nmis), "at_least_099": int(sum(v >= 0.99 for v in nmis)),
                          "median_fit_s": float(np.median([r[label]["fit_s"] for r in runs]))}
        print(f"  {label}: NMI >= 0.99 on {summary[label]['at_least_099']} of {len(runs)}, "
              f"lowest {summary[label]['min_nmi']:.4f}", flush=True)
    return {"n": n, "n_iter": n_iter, "runs": runs, "summary": summary}


def write_markdown(results, path):
    lines = ["# Dask against in-process: what a user gets", ""]
    six = results.get("six")
    if six:
        lines += [f"## {six['n']:,} points, 3-D, six Gaussians", "",
                  "| run | iterations | K | NMI | fit s | ms / iteration |",
                  "|---|---|---|---|---|---|"]
        for r in six["rows"]:
            lines.append(f"| {r['run']} | {r['n_iter']} | {r['K']} | {r['nmi']:.3f} | "
                         f"{r['fit_s']:.1f} | {r['s_per_iter'] * 1e3:.0f} |")
        lines.append("")
    mil = results.get("million")
    if mil:
        lines += [f"## {mil['n']:,} points, 2-D, ten Gaussians, alpha = 10, {mil['n_iter']} "
                  "iterations from one cluster", "",
                  "| data set | in-process K / NMI | 2 partitions K / NMI | before K / NMI |",
                  "|---|---|---|---|"]
        for r in mil["runs"]:
            cells = [f"{r[k]['K']} / {r[k]['nmi']:.4f}" for k in ("in-process", "partitions",
                                                                   "before")]
            lines.append(f"| {r['seed']} | " + " | ".join(cells) + " |")
        s = mil["summary"]
        lines += ["", "NMI >= 0.99: " + ", ".join(
            f"{k} {v['at_least_099']} of {len(mil['runs'])} (lowest {v['min_nmi']:.4f})"
            for k, v in s.items()), ""]
    m = results.get("machine", {})
    lines.append(f"Machine: {m.get('cpu_model')}, {m.get('cpus_available')} CPUs; Dask: "
                 f"{N_WORKERS} worker processes x 1 thread.  Seed 0 unless stated.")
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller data, fewer iterations")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = p.parse_args(argv)

    def warm_up():
        DPMixture(n_iter=2, partitions=2,
                  n_chains=1).fit(np.random.default_rng(0).normal(size=(500, 2)))

    run = {"six": run_six, "million": run_million}
    run_parts(args.parts, lambda part: run[part](args.quick), RESULTS / "distributed_mixing",
              args.quick, warm_up, write_markdown)


if __name__ == "__main__":
    main()
