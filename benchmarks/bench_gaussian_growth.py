"""How the number of clusters of a Gaussian mixture grows with N on real data (the "before"
figures for a coarsened posterior).

On nested random subsets (20 %, 50 %, 100 % of the rows; ``gaussian_data.nested_subsets``)
of a real data set (``gaussian_data.load_diamonds`` by default), this script fits

* ``DPMixture(family="gaussian", sampler="auto", random_state=0)``, the exact DP Gaussian
  mixture with its defaults (alpha = 1, NIW prior from the data, sub-cluster sampler from
  5,000 points, ten k-means clusters to start), for ``--n-iter`` iterations or until
  ``--budget`` seconds have passed (a callback stops the chain; the iterations run are
  recorded).  Reported: E[K] and E[K >= 1 %] (clusters holding at least 1 % of the points,
  ``trace_.n_large_clusters``) over the second half of the iterations run, K at a few fixed
  iterations (to compare the fractions at equal chain lengths) and the seconds;
* scikit-learn's ``BayesianGaussianMixture`` (30 components, full covariances,
  ``weight_concentration_prior_type="dirichlet_process"``, its default concentration
  1/30, k-means start, ``--bgm-max-iter`` EM iterations, 300 by default) for each seed of ``--bgm-seeds``: the number of
  components with weight >= 1 %, whether EM converged, and the seconds.

Run: ``.venv/bin/python benchmarks/bench_gaussian_growth.py [--quick]`` (about 25 minutes
on two cores, most of it scikit-learn's; the diamonds need ``pip install plotnine``, or
``pip install --no-deps plotnine``, and the script says so and skips without it).  Writes
``results/gaussian_growth_<data>.json`` (``--quick``: ``..._quick.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import numpy as np
from _common import machine_info

from gaussian_data import load_diamonds, load_sample_image_pixels, nested_subsets

LOADERS = {"diamonds": load_diamonds,
           "china": lambda **kw: load_sample_image_pixels("china.jpg", **kw),
           "flower": lambda **kw: load_sample_image_pixels("flower.jpg", **kw)}
CHECKPOINTS = (10, 25, 50, 100, 150, 200, 300, 400)


def fit_dp(X, n_iter, budget, seed):
    from dpclust import DPMixture

    t0 = time.perf_counter()

    def stop_after_budget(it, state, info):
        return time.perf_counter() - t0 < budget

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a chain this short fails the convergence rule
        m = DPMixture(family="gaussian", sampler="auto", n_iter=n_iter, burn_in=0,
                      max_draws=20, random_state=seed, callback=stop_after_budget,
                      n_chains=1).fit(X)
    seconds = time.perf_counter() - t0
    tr = m.trace_  # one chain: chain 0
    k = np.asarray(tr.n_clusters[0])
    large = np.asarray(tr.n_large_clusters[0])
    ran = len(k)
    half = k[ran // 2:]
    return {
        "n_iter_run": int(ran), "seconds": round(seconds, 1),
        "seconds_per_iter_last_half": (round(float(np.diff(tr.seconds[0])[ran // 2:].mean()), 3)
                                       if ran >= 4 else None),
        "E_K_second_half": round(float(half.mean()), 2),
        "E_K1pct_second_half": round(float(large[ran // 2:].mean()), 2),
        "K_last": int(k[-1]), "K1pct_last": int(large[-1]),
        "K_at": {int(c): int(k[c - 1]) for c in CHECKPOINTS if c <= ran},
        "K1pct_at": {int(c): int(large[c - 1]) for c in CHECKPOINTS if c <= ran},
        "K_every_10": k[9::10].tolist(), "K1pct_every_10": large[9::10].tolist(),
        "accepted_splits": int(np.sum(tr.n_accepted_splits[0])),
        "accepted_merges": int(np.sum(tr.n_accepted_merges[0])),
    }


def fit_bgm(X, seed, n_components=30, max_iter=300):
    from sklearn.mixture import BayesianGaussianMixture

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bgm = BayesianGaussianMixture(
            n_components=n_components, covariance_type="full",
            weight_concentration_prior_type="dirichlet_process", max_iter=max_iter,
            random_state=seed).fit(X)
    return {"seed": seed, "seconds": round(time.perf_counter() - t0, 1),
            "n_weight_ge_1pct": int(np.sum(bgm.weights_ >= 0.01)),
            "n_weight_ge_0.1pct": int(np.sum(bgm.weights_ >= 0.001)),
            "converged": bool(bgm.converged_), "n_iter": int(bgm.n_iter_),
            "lower_bound": float(bgm.lower_bound_)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=sorted(LOADERS), default="diamonds")
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.2, 0.5, 1.0])
    ap.add_argument("--n-iter", type=int, default=400)
    ap.add_argument("--budget", type=float, default=270.0, help="seconds per DP fit")
    ap.add_argument("--bgm-seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--bgm-max-iter", type=int, default=300)
    ap.add_argument("--dp-seed", type=int, default=0)
    ap.add_argument("--skip-dp", action="store_true")
    ap.add_argument("--skip-bgm", action="store_true")
    ap.add_argument("--no-dequantize", action="store_true",
                    help="keep the values as recorded (rounded), ties and all")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 50 iterations (10 s) per DP fit, one 50-iteration BGM fit")
    args = ap.parse_args()
    if args.quick:
        args.n_iter, args.budget = 50, min(args.budget, 10.0)
        args.bgm_seeds, args.bgm_max_iter = args.bgm_seeds[:1], 50

    try:
        X, columns = LOADERS[args.data](dequantize=not args.no_dequantize)
    except ModuleNotFoundError as exc:  # an optional data package: skip, saying why
        print(f"skipped: {exc}")
        return
    subsets = nested_subsets(len(X), tuple(args.fractions), seed=0)
    out = args.out or HERE / "results" / (f"gaussian_growth_{args.data}"
                                          f"{'_quick' if args.quick else ''}.json")
    record = {"machine": machine_info(), "data": args.data, "columns": columns,
              "n_rows": int(len(X)), "args": {k: str(v) for k, v in vars(args).items()},
              "bgm": {}, "dp": {}}
    out.parent.mkdir(exist_ok=True)
    if not args.skip_dp:
        for f in args.fractions:
            Xs = X[subsets[f]]
            res = fit_dp(Xs, args.n_iter, args.budget, seed=args.dp_seed)
            res["n"] = int(len(Xs))
            record["dp"][str(f)] = res
            print(f"DP   {f:4.0%} N={len(Xs):6d}: {res}", flush=True)
            out.write_text(json.dumps(record, indent=1))
    for f in [] if args.skip_bgm else args.fractions:
        Xs = X[subsets[f]]
        rows = [fit_bgm(Xs, s, max_iter=args.bgm_max_iter) for s in args.bgm_seeds]
        record["bgm"][str(f)] = {"n": int(len(Xs)), "fits": rows}
        print(f"BGM  {f:4.0%} N={len(Xs):6d}: weights>=1% "
              f"{[r['n_weight_ge_1pct'] for r in rows]}, converged "
              f"{[r['converged'] for r in rows]}, s {[r['seconds'] for r in rows]}", flush=True)
        out.write_text(json.dumps(record, indent=1))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
