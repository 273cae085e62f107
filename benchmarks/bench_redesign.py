"""Speed of this tree against another revision, in the same run: collapsed Gibbs throughput
and the sub-cluster sampler on 10^6 points.

The layered redesign moved the Gibbs sweeps' prior terms into tables that the partition
prior provides and split the sampler modules; this script checks that neither costs speed.
It checks the other revision out into a temporary git worktree, then alternates the two
trees (A B A B ...) in fresh processes, so that drift in the machine's speed hits both alike,
and reports the median of each and their ratio:

* **gibbs**: :class:`~dpclust.samplers.CollapsedGibbs` sweeps on 20,000 2-D points from 10
  Gaussians, one numba thread, after warm-up sweeps; point-updates per second.
* **subcluster**: ``DPMixture(sampler="subcluster")`` on 10^6 2-D points from 12 Gaussians,
  30 iterations, two threads, after a warm-up fit on small data; seconds per fit, and NMI.

Usage: ``.venv/bin/python benchmarks/bench_redesign.py --against REV [--repeats 3]``;
writes ``benchmarks/results/redesign.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def measure(which: str) -> dict:
    """Run one measurement in this process (its dpclust is whatever PYTHONPATH gives)."""
    import numpy as np

    from dpclust import DPMixture
    from dpclust.datasets import make_gaussian_mixture
    from dpclust.families import NormalInverseWishart
    from dpclust.metrics import nmi
    from dpclust.samplers import CollapsedGibbs, MixtureModel

    if which == "gibbs":
        X, _ = make_gaussian_mixture(20_000, 10, random_state=0)
        fam = NormalInverseWishart().resolve(X)
        model = MixtureModel(fam, X)
        sampler = CollapsedGibbs()
        rng = np.random.default_rng(0)
        state = sampler.init(rng, model, n_clusters=10)
        for _ in range(3):
            state, _ = sampler.step(rng, state, model)
        sweeps, t0 = 10, time.perf_counter()
        for _ in range(sweeps):
            state, _ = sampler.step(rng, state, model)
        secs = time.perf_counter() - t0
        return {"points_per_second": 20_000 * sweeps / secs}
    X, y = make_gaussian_mixture(1_000_000, 12, random_state=1)
    DPMixture(sampler="subcluster", n_iter=3, random_state=0, n_chains=1).fit(X[:20_000])  # compile
    t0 = time.perf_counter()
    m = DPMixture(sampler="subcluster", n_iter=30, random_state=0, n_chains=1).fit(X)
    return {"seconds": time.perf_counter() - t0, "nmi": float(nmi(y, m.labels_)),
            "n_clusters": int(m.n_clusters_)}


def _run(src: Path, which: str) -> dict:
    threads = "1" if which == "gibbs" else "2"
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_NUM_THREADS=threads,
               OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    out = subprocess.run([sys.executable, __file__, "--measure", which], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="the git revision to compare with")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--measure", choices=("gibbs", "subcluster"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    sys.path.insert(0, str(HERE))
    from _common import machine_info, write_results

    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "other"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(other),
                        args.against], check=True, capture_output=True)
        try:
            trees = {"before": other / "src", "after": ROOT / "src"}
            for src in trees.values():  # each tree's kernels compiled and cached first
                for which in ("gibbs", "subcluster"):
                    _run(src, which)
            runs = {(t, w): [] for t in trees for w in ("gibbs", "subcluster")}
            for r in range(args.repeats):
                for which in ("gibbs", "subcluster"):
                    for tree, src in trees.items():
                        res = _run(src, which)
                        runs[tree, which].append(res)
                        print(f"repeat {r}: {which:10s} {tree:6s} {res}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(other)], check=False)
    key = {"gibbs": "points_per_second", "subcluster": "seconds"}
    med = {(t, w): statistics.median(x[key[w]] for x in v) for (t, w), v in runs.items()}
    gibbs_ratio = med["after", "gibbs"] / med["before", "gibbs"]
    sub_ratio = med["after", "subcluster"] / med["before", "subcluster"]
    out = {"machine": machine_info(), "against": args.against, "repeats": args.repeats,
           "runs": {f"{t}/{w}": v for (t, w), v in runs.items()},
           "gibbs_throughput_ratio": gibbs_ratio, "subcluster_time_ratio": sub_ratio}
    print(f"gibbs throughput after/before {gibbs_ratio:.3f}; subcluster time after/before "
          f"{sub_ratio:.3f}")
    nmis = {t: [x["nmi"] for x in runs[t, "subcluster"]] for t in trees}
    body = [f"This tree against `{args.against}`, alternating the two in fresh processes, "
            f"{args.repeats} repeats; medians.", "",
            "| measure | before | after | after / before |", "|---|---|---|---|",
            f"| collapsed Gibbs, 20,000 2-D points, 1 thread (point-updates/s) | "
            f"{med['before', 'gibbs']:,.0f} | {med['after', 'gibbs']:,.0f} | "
            f"{gibbs_ratio:.3f} |",
            f"| sub-cluster sampler, 10^6 2-D points, 30 iterations, 2 threads (s) | "
            f"{med['before', 'subcluster']:.2f} | {med['after', 'subcluster']:.2f} | "
            f"{sub_ratio:.3f} |", "",
            f"Sub-cluster NMI before {nmis['before']}, after {nmis['after']} (the same chains: "
            "the reference-chain test checks them draw for draw)."]
    write_results("redesign", False, out, "Speed before and after the layered redesign", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
