"""The sub-cluster sampler under each prior on partitions, at a million points: seconds per
iteration of a Pitman–Yor and an MFM fit against the Dirichlet process's, in the same run.

One chain per prior, in this process, on the same 10^6 × 2 points (ten Gaussians,
``make_gaussian_mixture(separation=4)``), started from one cluster at the same seed, with
the sampler's default configuration (``SubclusterSplitMerge()``).  Only ``step`` is timed.  For each prior: the median seconds of the last half of the
iterations (the first ones split the single cluster and cost more), its ratio to the DP's,
the number of clusters and the NMI against the true labels at the end, and when the
chain first reached every true cluster (NMI >= 0.99).

The priors: DP(alpha = 1), Pitman–Yor(discount 0.25, strength 1) and MFM(gamma = 1,
K - 1 ~ Poisson(3)).  Under a prior other than the DP the round's moves are accepted one
after another with the number of clusters the earlier ones left, and the multi-way moves
are left out (written with the DP's algebra): the ratio shows what that costs.

Usage: ``.venv/bin/python benchmarks/bench_prior_scale.py [--n 1000000] [--n-iter 40]``;
writes ``benchmarks/results/prior_scale.{json,md}``.  About five minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import machine_info, write_results  # noqa: E402

#: (label, prior, sampler options); the DP again without the multi-way moves, which the
#: other priors leave out
PRIORS = (("DP(1)", "dp", {}), ("DP(1), no multi-way moves", "dp", {"multiway": 0}),
          ("Pitman-Yor(0.25, 1)", "pitman-yor:0.25,1", {}),
          ("MFM(1, K - 1 ~ Poisson(3))", "mfm:1,poisson:3", {}))


def one_prior(X, y, spec, n_iter, seed, options):
    from dpclust.families import NormalInverseWishart
    from dpclust.metrics import nmi
    from dpclust.priors import get_prior
    from dpclust.samplers import MixtureModel, SubclusterSplitMerge

    prior = get_prior(spec)
    model = MixtureModel(NormalInverseWishart().resolve(X), X, prior=prior)
    seconds, scores = [], []
    sampler = SubclusterSplitMerge(**options)
    rng = np.random.default_rng(seed)
    state = sampler.init(rng, model, n_clusters=1, alpha=prior.alpha_start)
    total, reached = 0.0, None
    for it in range(n_iter):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        seconds.append(time.perf_counter() - t0)
        total += seconds[-1]
        score = nmi(y, np.asarray(state.labels))
        scores.append(score)
        if reached is None and score >= 0.99:
            reached = it + 1
    tail = seconds[n_iter // 2:]
    return {"prior": spec, "options": options, "median_seconds": float(np.median(tail)),
            "mean_seconds": float(np.mean(tail)), "total_seconds": total,
            "n_clusters": int(info.n_clusters), "nmi": float(scores[-1]),
            "first_iteration_nmi_0.99": reached}


def table(out) -> list:
    dp = out["runs"][0]["median_seconds"]
    lines = [f"{out['n_iter']} iterations of N = {out['n']:,} × 2 points, one chain each, "
             "same run; median seconds of the second half.", "",
             "| prior | s / iteration | ratio to DP | K | NMI | first iteration NMI ≥ 0.99 |",
             "|---|---|---|---|---|---|"]
    for label, r in zip(out["labels"], out["runs"]):
        lines.append(f"| {label} | {r['median_seconds']:.3f} | "
                     f"{r['median_seconds'] / dp:.2f} | {r['n_clusters']} | {r['nmi']:.3f} | "
                     f"{r['first_iteration_nmi_0.99']} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--n-iter", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from dpclust.datasets import make_gaussian_mixture

    X, y = make_gaussian_mixture(args.n, 10, separation=4.0, random_state=args.seed)
    out = {"n": args.n, "n_iter": args.n_iter, "machine": machine_info(),
           "labels": [label for label, _, _ in PRIORS], "runs": []}
    for label, spec, options in PRIORS:
        r = one_prior(X, y, spec, args.n_iter, args.seed, options)
        out["runs"].append(r)
        print(f"{label}: {r['median_seconds']:.3f} s/it, K {r['n_clusters']}, "
              f"NMI {r['nmi']:.3f}, NMI >= 0.99 from iteration "
              f"{r['first_iteration_nmi_0.99']}", flush=True)
    body = table(out)
    print("\n".join(body))
    write_results("prior_scale", args.n != 1_000_000, out,
                  "The sub-cluster sampler under each prior on partitions", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
