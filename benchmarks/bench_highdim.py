"""The sub-cluster sampler in many dimensions: the blocked (BLAS) data pass against the scalar one.

From 8 features the sub-cluster passes score a block of points against a component with one
triangular product (BLAS ``trmm`` with the inverse Cholesky factor) and add the block's
statistics with a symmetric rank-n update (``syrk``) (``dpclust.families.gaussian``,
``BLOCKED_MIN_FEATURES``).  This script measures, on two cores:

* the machine's GEMM throughput (float64, NumPy, all cores), the ceiling for the pass;
* seconds per iteration of ``SubclusterSplitMerge(sequential=False)`` (the default's moves
  from 8 features) at N = 10^5, K = 10 and d = 8 ... 64, started at the true partition, with
  the blocked pass and point by point (``block=0``, the pass before blocking), and the data
  pass's rate against the GEMM throughput, two ways: GEMM-equivalent (the ``2 N K d^2``
  scoring and ``2 N d^2`` statistics flops of general products over its time; above 100 %
  where the triangular and symmetric products save work) and the flops it executes
  (``N K d^2 + N d^2``);
* ``DPMixture(sampler="subcluster", n_iter=50)`` against scikit-learn's
  ``BayesianGaussianMixture`` (20 components, 50 iterations) on N = 5 x 10^4, d = 64, in the
  same run, twice (seeds 0 and 1): the ratio of their times, and each one's NMI against the
  truth.

Figures are printed and written to ``benchmarks/results/highdim.{json,md}`` (``--quick``:
``highdim_quick.*``, smaller data).

Run: ``.venv/bin/python benchmarks/bench_highdim.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import _load_average, machine_info, save_results

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.families import NormalInverseWishart
from dpclust.metrics import nmi
from dpclust.samplers import MixtureModel, SubclusterSplitMerge


class _PointByPoint(NormalInverseWishart):
    """The Gaussian family with the scalar pass in any dimension (the pass before
    blocking)."""

    def pass_kernel(self, X, summary=None):
        return super().pass_kernel(X, summary)._replace(block=0)


def gemm_throughput(n=2048, repeats=5):
    """Best GFLOP/s of an n x n float64 matrix product over ``repeats`` tries."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    a @ b
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def per_iteration(X, y, family_cls, n_iter):
    """Seconds per iteration and the data pass's share, from the true partition."""
    import cProfile
    import pstats

    model = MixtureModel(family_cls().resolve(X), X)
    sampler = SubclusterSplitMerge(sequential=False)  # the same moves for both passes
    rng = np.random.default_rng(0)
    state = sampler.init(rng, model, labels=y, alpha=1.0)
    for _ in range(2):
        state, _ = sampler.step(rng, state, model)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(n_iter):
        state, _ = sampler.step(rng, state, model)
    prof.disable()
    secs = (time.perf_counter() - t0) / n_iter
    stats = pstats.Stats(prof).stats
    data_pass = sum(v[3] for k, v in stats.items() if k[2].startswith("_subcluster_pass"))
    return secs, data_pass / n_iter


def part_per_iteration(quick, peak):
    n = 20_000 if quick else 100_000
    dims = [8, 32] if quick else [8, 16, 32, 64]
    rows = []
    for d in dims:
        X, y = make_gaussian_mixture(n, 10, d, random_state=0)
        blocked, pass_b = per_iteration(X, y, NormalInverseWishart, 5 if quick else 10)
        scalar, pass_s = per_iteration(X, y, _PointByPoint, 3 if quick else 5)
        flops = 2.0 * n * 10 * d * d + 2.0 * n * d * d
        frac = flops / pass_b / 1e9 / peak
        rows.append({"n_samples": n, "n_features": d, "blocked_s": blocked,
                     "point_by_point_s": scalar, "data_pass_blocked_s": pass_b,
                     "data_pass_point_by_point_s": pass_s, "gemm_fraction": frac,
                     "flop_fraction": frac / 2.0})
        print(f"  N={n:,} d={d:>2}: {blocked * 1e3:7.1f} ms / iteration blocked "
              f"(data pass {pass_b * 1e3:.1f} ms, {frac:.0%} of GEMM peak GEMM-equivalent, "
              f"{frac / 2:.0%} in flops executed), "
              f"{scalar * 1e3:7.1f} ms point by point (data pass {pass_s * 1e3:.1f} ms)",
              flush=True)
    return rows


def _timed_fits(X, seed, n_iter=50, sklearn=True):
    """``DPMixture(sampler="subcluster")`` and scikit-learn's ``BayesianGaussianMixture``
    (20 components) fitted to ``X`` with ``n_iter`` iterations each, and their seconds.  Their
    warnings are silenced: so few iterations are not meant to pass our convergence rule, nor
    to converge for scikit-learn."""
    from sklearn.mixture import BayesianGaussianMixture

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        m = DPMixture(sampler="subcluster", n_iter=n_iter, random_state=seed, n_chains=1).fit(X)
        ours = time.perf_counter() - t0
        if not sklearn:
            return m, ours, None, None
        t0 = time.perf_counter()
        bgm = BayesianGaussianMixture(n_components=20, max_iter=n_iter, random_state=seed,
                                      weight_concentration_prior_type="dirichlet_process")
        bgm.fit(X)
        theirs = time.perf_counter() - t0
    return m, ours, bgm, theirs


def part_sklearn(quick, repeats=2):
    n = 10_000 if quick else 50_000
    X, y = make_gaussian_mixture(n, 10, 64, random_state=0)
    # load the compiled kernels and the modules a fit imports (diagnostics) first
    _timed_fits(X[:2000], 0, n_iter=4, sklearn=False)
    runs = []
    for seed in range(repeats):
        m, ours, bgm, theirs = _timed_fits(X, seed)
        run = {"seed": seed, "dpclust_s": ours, "sklearn_s": theirs, "ratio": ours / theirs,
               "dpclust_nmi": float(nmi(m.labels_, y)), "dpclust_k": int(m.n_clusters_),
               "sklearn_nmi": float(nmi(bgm.predict(X), y))}
        runs.append(run)
        print(f"  N={n:,} d=64, 50 iterations, seed {seed}: DPMixture(sampler='subcluster') "
              f"{ours:.2f} s (K={run['dpclust_k']}, NMI {run['dpclust_nmi']:.3f}); sklearn "
              f"BayesianGaussianMixture(20) {theirs:.2f} s (NMI {run['sklearn_nmi']:.3f}): "
              f"ratio {run['ratio']:.3f}", flush=True)
    return {"n_samples": n, "n_features": 64, "runs": runs,
            "ratio_max": max(r["ratio"] for r in runs)}


def write_markdown(d, path):
    md = ["# The sub-cluster sampler in many dimensions", "",
          f"Machine: {d['machine'].get('cpu_model', '?')}, "
          f"{d['machine'].get('cpus_available', '?')} cores. GEMM (float64, 2048^3, all cores): {d['gemm_gflops']:.0f} GFLOP/s.", "",
          "Seconds per iteration from the true partition (10 clusters), blocked data pass "
          "against point by point (the pass before blocking). The data pass's rate against "
          "the GEMM figure above: `GEMM-eq.` counts the flops of general products for its "
          "scoring and statistics (2NKd² + 2Nd²; above 100 % where the triangular and "
          "symmetric products save work), `executed` the flops it runs (NKd² + Nd²).", "",
          "| N | d | blocked (s / iter) | data pass | GEMM-eq. | executed | point by point "
          "(s / iter) | data pass |", "|---|---|---|---|---|---|---|---|"]
    for r in d["per_iteration"]:
        md.append(f"| {r['n_samples']:,} | {r['n_features']} | {r['blocked_s']:.3f} | "
                  f"{r['data_pass_blocked_s']:.3f} | {r['gemm_fraction']:.0%} | "
                  f"{r.get('flop_fraction', r['gemm_fraction']):.0%} | "
                  f"{r['point_by_point_s']:.3f} | {r['data_pass_point_by_point_s']:.3f} |")
    s = d["sklearn"]
    md += ["", f"`DPMixture(sampler='subcluster', n_iter=50)` on N = {s['n_samples']:,}, d = 64 "
           "(fit included: k-means start, point estimate) against scikit-learn's "
           "`BayesianGaussianMixture(n_components=20, max_iter=50)`, in the same run:", "",
           "| seed | dpclust (s) | K | NMI | scikit-learn (s) | NMI | ratio |",
           "|---|---|---|---|---|---|---|"]
    for r in s["runs"]:
        md.append(f"| {r['seed']} | {r['dpclust_s']:.2f} | {r['dpclust_k']} | "
                  f"{r['dpclust_nmi']:.3f} | {r['sklearn_s']:.2f} | {r['sklearn_nmi']:.3f} | "
                  f"{r['ratio']:.3f} |")
    md += ["", f"Largest ratio: {s['ratio_max']:.3f}.", ""]
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on smaller data")
    args = p.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": machine_info(), "quick": args.quick}
    peak = gemm_throughput(1024 if args.quick else 2048)
    payload["gemm_gflops"] = peak
    print(f"GEMM throughput: {peak:.0f} GFLOP/s", flush=True)
    print("\n== seconds per iteration", flush=True)
    payload["per_iteration"] = part_per_iteration(args.quick, peak)
    print("\n== against scikit-learn", flush=True)
    payload["sklearn"] = part_sklearn(args.quick)
    payload["machine"]["load_average_end"] = _load_average()
    save_results(RESULTS / ("highdim_quick" if args.quick else "highdim"), payload,
                 write_markdown)


if __name__ == "__main__":
    main()
