"""Simulation-based calibration of every sampler (Talts et al. 2018) at N in the hundreds.

For each sampler, data sets drawn from the model's own prior (Gaussian 2-D with a fixed
Normal-Inverse-Wishart prior, documents with a fixed Dirichlet prior, top-3 rankings of 6
items under the Generalized Mallows prior and under Plackett–Luce worths with Dir(1) prior; the ddCRP mixture with a window decay of 10 over
positions 0..N-1; tables of two real, a yes/no, a three-level category and a count column
with a fifth of the cells missing completely at random, under the product family and, with
the real columns complete, the full-covariance table family), the rank of the truth's statistics among
thinned posterior draws, and a chi-square test of uniform ranks
(:func:`dpclust.calibration.simulation_based_calibration`).  Exact samplers should pass
(p > 0.001 for every statistic); approximate ones may not, and the table says which are
approximate.

Usage: ``.venv/bin/python benchmarks/bench_sbc.py [--quick] [--only NAME ...]``; writes
``benchmarks/results/sbc.json``, ``sbc.md`` and one rank-histogram figure per sampler.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, write_results  # noqa: E402


def families():
    from dpclust.families import (DirichletMultinomial, GeneralizedMallows,
                                  NormalInverseWishart, PlackettLuce, TableFamily)
    from dpclust.rankings.data import Rankings

    gauss = NormalInverseWishart(mean=np.zeros(2), kappa=0.1, dof=4.0,
                                 scale=np.eye(2)).resolve(np.zeros((3, 2)))
    docs = DirichletMultinomial(concentration=0.5).resolve(np.ones((2, 20)))
    ranks = GeneralizedMallows().resolve(Rankings(np.array([[0, 1, 2]]), 6))
    worths = PlackettLuce().resolve(Rankings(np.array([[0, 1, 2]]), 6))
    tables = {f"{name} (holes)": TableFamily(kinds={"n": "poisson"}, covariance=cov,
                                              kappa=1.0).resolve(_pilot_table())
              for name, cov in (("table", "diagonal"), ("gaussian table", "full"))}
    return {"gaussian": gauss, "documents": docs, "rankings": ranks,
            "rankings (plackett-luce)": worths, **tables}


def _pilot_table():
    """The fixed table the table families are resolved on (their hyperparameters never
    depend on the simulated data): two real columns, a yes/no, a three-level category and
    a count column."""
    import pandas as pd

    rng = np.random.default_rng(2024)
    n = 12
    return pd.DataFrame({"x1": rng.normal(0.0, 1.0, n), "x2": rng.normal(0.0, 1.0, n),
                         "yes": rng.random(n) < 0.5,
                         "cat": pd.Categorical(rng.choice(list("abc"), n)),
                         "n": rng.poisson(3.0, n)})


def observers():
    """What the sampler sees of a family's data sets, where not all of them: holes punched
    completely at random in a fifth of the cells (the full-covariance family needs its
    real columns complete, so only the others)."""
    from dpclust.calibration import MissingCompletelyAtRandom

    return {"table (holes)": MissingCompletelyAtRandom(0.2),
            "gaussian table (holes)": MissingCompletelyAtRandom(0.2, ("code", "count"))}


def samplers():
    """(name, family, sampler, exact, points per data set, ddCRP window or None)."""
    from dpclust.ddcrp import DDCRPGibbs
    from dpclust.samplers import (BetaGibbs, CollapsedGibbs, ExplicitGibbs,
                                  FiniteSymmetricDirichlet, GibbsSAMS, SliceGibbs,
                                  SubclusterSplitMerge)

    return [
        ("gibbs", "gaussian", CollapsedGibbs(), True, 200, None),
        ("explicit", "gaussian", ExplicitGibbs(), True, 200, None),
        ("fsd", "gaussian", FiniteSymmetricDirichlet(n_components=20), False, 200, None),
        ("gibbs+sams", "gaussian", GibbsSAMS(), True, 200, None),
        ("subcluster", "gaussian", SubclusterSplitMerge(), True, 200, None),
        ("subcluster-approx", "gaussian", SubclusterSplitMerge.approximate(), False, 200,
         None),
        ("gibbs (documents)", "documents", CollapsedGibbs(), True, 200, None),
        ("subcluster (documents)", "documents", SubclusterSplitMerge(), True, 200, None),
        ("slice-gibbs", "rankings", SliceGibbs(), True, 100, None),
        ("beta-gibbs", "rankings", BetaGibbs(), False, 100, None),
        ("explicit (plackett-luce)", "rankings (plackett-luce)", ExplicitGibbs(), True, 100,
         None),
        ("ddcrp (window 10)", "gaussian", DDCRPGibbs(), True, 200, 10.0),
        ("gibbs (table, holes)", "table (holes)", CollapsedGibbs(), True, 100, None),
        ("explicit (table, holes)", "table (holes)", ExplicitGibbs(), True, 100, None),
        ("gibbs (gaussian table, holes)", "gaussian table (holes)", CollapsedGibbs(), True,
         100, None),
    ]


def main(argv=None) -> int:
    from dpclust.calibration import simulation_based_calibration

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    args = ap.parse_args(argv)
    fams = families()
    observe = observers()
    settings = (dict(n_replicates=40, n_draws=19, thin=2, burn_in=30, n_bins=5) if args.quick
                else dict(n_replicates=200, n_draws=49, thin=4, burn_in=100, n_bins=10))
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    out = {"machine": machine_info(), "settings": settings, "runs": []}
    previous = results / f"sbc{suffix}.json"
    if args.only and previous.is_file():  # the other samplers' last figures stay
        kept = json.loads(previous.read_text())
        if kept.get("settings") == settings:
            out["runs"] = [r for r in kept["runs"] if r["sampler"] not in args.only]
    for name, fam, sampler, exact, n, window in samplers():
        if args.only and name not in args.only:
            continue
        n = 40 if args.quick else n
        candidates = None
        if window is not None:  # the ddCRP over positions 0 .. n - 1
            from dpclust.ddcrp import Window, link_candidates

            candidates = link_candidates(Window(window), n=n,
                                         positions=np.arange(n, dtype=float))
        t0 = time.perf_counter()
        r = simulation_based_calibration(fams[fam], sampler, n_samples=n, random_state=0,
                                         n_jobs=-1, candidates=candidates,
                                         observe=observe.get(fam), **settings)
        secs = time.perf_counter() - t0
        slug = (name.replace(" ", "_").replace("(", "").replace(")", "").replace("+", "_")
                .replace(",", ""))
        r.plot(results / f"sbc_{slug}{suffix}.png", title=f"{name}, N = {n}")
        run = {"sampler": name, "family": fam, "exact": exact, "n_samples": n,
               "date": out["machine"]["date"],
               "seconds": secs, "p_values": r.p_values, "calibrated": r.calibrated(0.001),
               "histograms": {k: r.histogram(k).tolist() for k in r.ranks},
               "figure": f"sbc_{slug}{suffix}.png"}
        out["runs"].append(run)
        ps = ", ".join(f"{k} {v:.3g}" for k, v in r.p_values.items())
        print(f"{name:24s} N={n}: {'calibrated' if run['calibrated'] else 'NOT calibrated'} "
              f"({ps}) in {secs:.0f} s", flush=True)
    body = [f"{settings['n_replicates']} data sets per sampler drawn from the model's prior "
            f"(alpha = 1), {settings['n_draws']} posterior draws each, {settings['thin']} "
            f"steps apart after {settings['burn_in']} from one cluster; chi-square test of "
            f"uniform ranks over {settings['n_bins']} bins. Calibrated: every p > 0.001.", "",
            "| sampler | family | exact | N | n_clusters | size_entropy | co_clustering | "
            "log_likelihood | verdict | seconds |", "|---|---|---|---|---|---|---|---|---|---|"]
    for run in out["runs"]:
        p = run["p_values"]
        body.append(f"| {run['sampler']} | {run['family']} | {'yes' if run['exact'] else 'no'}"
                    f" | {run['n_samples']} | " + " | ".join(
                        f"{p[k]:.3g}" for k in ("n_clusters", "size_entropy", "co_clustering",
                                                "log_likelihood"))
                    + f" | {'calibrated' if run['calibrated'] else '**not calibrated**'}"
                    f" | {run['seconds']:.0f} |")
    body += ["", "Rank histograms (grey: where 99 % of a calibrated sampler's bins fall):", ""]
    body += [f"![{run['sampler']}]({run['figure']})" for run in out["runs"]]
    write_results("sbc", args.quick, out, "Simulation-based calibration", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
