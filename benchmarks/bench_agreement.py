"""Every sampler against long collapsed-Gibbs chains on a posterior that is genuinely
uncertain: a few thousand points from overlapping Gaussian clusters.

The reference is several long collapsed-Gibbs chains (exact, and simple enough to trust
when run long); each sampler then runs its own chains for the same number of iterations.
Compared: the posterior of the number of clusters holding at least 2 % of the points
(E[K] and P(K = k)), and the co-clustering matrix (mean absolute difference from the
reference over all pairs).  The reference's own Monte Carlo error is the difference between
its chains split in two halves.

Usage: ``.venv/bin/python benchmarks/bench_agreement.py [--quick]``; writes
``benchmarks/results/agreement.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, write_results  # noqa: E402

SAMPLERS = (("explicit", True), ("fsd", False), ("gibbs+sams", True), ("subcluster", True),
            ("subcluster-approx", False))


def large_k(draws, share=0.02):
    """Clusters holding at least ``share`` of the points, per draw."""
    n = draws.shape[1]
    return np.array([(np.bincount(d) >= share * n).sum() for d in draws])


def similarity(draws):
    from dpclust.partitions import posterior_similarity

    pick = np.unique(np.linspace(0, len(draws) - 1, 400).round().astype(int))  # evenly
    return posterior_similarity(draws[pick], max_samples=draws.shape[1])


def run(sampler, X, n_iter, n_chains, seed):
    from dpclust import DPMixture

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(sampler=sampler, n_iter=n_iter, n_chains=n_chains, n_jobs=2,
                      store_labels=True, init="random", random_state=seed).fit(X)
    secs = time.perf_counter() - t0
    draws = np.asarray(m.trace_.labels).reshape(-1, X.shape[0])
    return draws, secs, m.convergence_["converged"]


def summary(draws, ref_sim=None):
    k = large_k(draws)
    out = {"E_K": float(k.mean()),
           "P_K": {str(int(v)): float((k == v).mean()) for v in np.unique(k)}}
    sim = similarity(draws)
    if ref_sim is not None:
        out["co_clustering_diff"] = float(np.abs(sim - ref_sim).mean())
    return out, sim


def main(argv=None) -> int:
    from dpclust.datasets import make_gaussian_mixture

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n = 600 if args.quick else 2000
    ref_iter = 600 if args.quick else 4000
    n_iter = 300 if args.quick else 2000
    X, _ = make_gaussian_mixture(n, 3, separation=1.0, random_state=7)
    out = {"machine": machine_info(), "n_samples": n, "reference_iterations": ref_iter,
           "iterations": n_iter, "chains": 4, "runs": []}

    draws, secs, conv = run("gibbs", X, ref_iter, 4, 0)
    ref, ref_sim = summary(draws)
    half = len(draws) // 2  # chains 0-1 against chains 2-3
    a, sim_a = summary(draws[:half])
    b, sim_b = summary(draws[half:])
    ref["mc_error_E_K"] = abs(a["E_K"] - b["E_K"])
    ref["mc_error_co_clustering"] = float(np.abs(sim_a - sim_b).mean())
    out["reference"] = dict(ref, seconds=secs, converged=conv, n_draws=int(len(draws)))
    print(f"reference (collapsed Gibbs, 4 x {ref_iter}): E[K>=2%] {ref['E_K']:.2f} "
          f"(chains 0-1 against 2-3 {ref['mc_error_E_K']:.3f}; co-clustering "
          f"{ref['mc_error_co_clustering']:.4f}) in {secs:.0f} s, converged={conv}", flush=True)
    for name, exact in SAMPLERS:
        draws, secs, conv = run(name, X, n_iter, 4, 1)
        res, _ = summary(draws, ref_sim)
        res.update(sampler=name, exact=exact, seconds=secs, converged=conv)
        out["runs"].append(res)
        print(f"{name:18s} E[K>=2%] {res['E_K']:.2f} (reference {ref['E_K']:.2f}), mean "
              f"|co-clustering diff| {res['co_clustering_diff']:.4f}, {secs:.0f} s, "
              f"converged={conv}", flush=True)

    body = [f"{n:,} points from three 2-D Gaussians (`make_gaussian_mixture(separation=1)`, "
            f"overlapping), alpha = 1. Reference: 4 collapsed-Gibbs chains of {ref_iter:,} "
            f"iterations; each sampler: 4 chains of {n_iter:,} iterations from random "
            "starting clusters, the second half of each kept. K counts the clusters with at "
            "least 2 % of the points.", "",
            f"Reference: E[K] = {ref['E_K']:.3f}, P(K) = {ref['P_K']}; Monte Carlo error (its "
            f"chains 0-1 against 2-3): E[K] {ref['mc_error_E_K']:.3f}, co-clustering "
            f"{ref['mc_error_co_clustering']:.4f}.", "",
            "| sampler | exact | E[K] | mean abs co-clustering difference | converged "
            "(R-hat, ESS) | seconds |", "|---|---|---|---|---|---|"]
    for r in out["runs"]:
        body.append(f"| {r['sampler']} | {'yes' if r['exact'] else 'no'} | {r['E_K']:.3f} | "
                    f"{r['co_clustering_diff']:.4f} | {'yes' if r['converged'] else 'no'} | "
                    f"{r['seconds']:.0f} |")
    write_results("agreement", args.quick, out,
                  "Every sampler against long collapsed-Gibbs chains", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
