"""Plackett–Luce against Generalized Mallows on the Dublin West ballots (``bench_ballots.py
--part families``).

For each family of rankings and each posterior (the exact DP posterior with the family's
default sampler; the coarsened posterior at ``alpha_c``, a finite mixture of 30 components),
one chain on 90 % of the ballots (the same random split for all), scored on the held-out
10 % by the log posterior predictive density (:meth:`dpclust.DPMixture.score_samples`):
nats per held-out ballot, and the paired difference of every model to the best with its
standard error (:func:`dpclust.estimators.comparison.paired_difference`).  Beside it: the
posterior mean of K and of the clusters holding at least 1 % of the ballots, and the time
per iteration.  The fits run two at a time, one process (core) each.
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

#: the models compared: (name, family, posterior)
MODELS = (("mallows, exact", "mallows", "exact"),
          ("plackett-luce, exact", "plackett-luce", "exact"),
          ("mallows, coarsened", "mallows", "coarsened"),
          ("plackett-luce, coarsened", "plackett-luce", "coarsened"))
#: the coarsened fits' finite mixture
PRIOR = "finite:30"


def _fit_and_score(args):
    family, posterior, alpha_c, n_iter, train, test, seed = args
    import numba

    from dpclust import DPMixture
    from dpclust.datasets import load_dublin_west

    numba.set_num_threads(1)
    X = load_dublin_west()
    kw = dict(coarsening=alpha_c, prior=PRIOR) if posterior == "coarsened" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPMixture(family=family, n_iter=n_iter, random_state=seed, n_chains=1,
                        **kw).fit(X[train])
    fit_seconds = time.perf_counter() - t0
    scores = est.score_samples(X[test])
    tr = est.trace_  # one chain: chain 0
    kept = np.asarray(tr.kept)
    return {"pointwise": scores.tolist(), "fit_seconds": fit_seconds,
            "seconds_per_iteration": float(np.diff(tr.seconds[0]).mean()),
            "E_K": float(tr.n_clusters[0, kept].mean()),
            "E_large": float(tr.n_large_clusters[0, kept].mean()),
            "converged": bool(est.convergence_["converged"])}


def run(alpha_c: float, n_iter: int, quick: bool) -> dict:
    """Fit the :data:`MODELS` and compare them on the held-out ballots."""
    from dpclust.datasets import load_dublin_west
    from dpclust.estimators.comparison import paired_difference, train_test_indices

    n = len(load_dublin_west())
    (train, test), = train_test_indices(n, test_size=0.1, random_state=0)
    if quick:
        train, test = train[:3000], test[:500]
        n_iter = min(n_iter, 60)
    jobs = [(family, posterior, alpha_c, n_iter, train, test, 1)
            for _, family, posterior in MODELS]
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        fits = list(pool.map(_fit_and_score, jobs))
    elpd = {name: float(np.mean(f["pointwise"])) for (name, _, _), f in zip(MODELS, fits)}
    best = max(elpd, key=elpd.get)
    best_points = fits[[m[0] for m in MODELS].index(best)]["pointwise"]
    rows = []
    for (name, family, posterior), f in zip(MODELS, fits):
        diff, se = paired_difference(f["pointwise"], best_points)
        p = np.asarray(f["pointwise"])
        rows.append({"model": name, "family": family, "posterior": posterior,
                     "elpd": float(p.mean()), "se": float(p.std() / np.sqrt(p.size)),
                     "elpd_diff": diff, "se_diff": se,
                     **{k: v for k, v in f.items() if k != "pointwise"}})
        print("families:", rows[-1], flush=True)
    return {"alpha_c": alpha_c, "n_iter": n_iter, "n_train": int(len(train)),
            "n_test": int(len(test)), "best": best, "rows": rows}


def markdown(rec: dict) -> list:
    """The section of ``ballots.md``."""
    lines = ["## Plackett–Luce against Generalized Mallows", "",
             f"One chain of {rec['n_iter']} iterations per model on {rec['n_train']:,} "
             f"ballots; held-out log predictive density of the other {rec['n_test']:,} "
             f"(nats per ballot; the coarsened posteriors at alpha_c = {rec['alpha_c']:g}, "
             f"a finite mixture of 30). Difference to the best ({rec['best']}) with its paired "
             "standard error.", "",
             "| model | held-out nats / ballot (se) | difference to the best (se) | E[K] | "
             "E[clusters >= 1 %] | s / iteration | converged |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for r in rec["rows"]:
        lines.append(f"| {r['model']} | {r['elpd']:.4f} ({r['se']:.4f}) | "
                     f"{r['elpd_diff']:.4f} ({r['se_diff']:.4f}) | {r['E_K']:.1f} | "
                     f"{r['E_large']:.1f} | {r['seconds_per_iteration']:.3f} | "
                     f"{'yes' if r['converged'] else 'no'} |")
    return lines + [""]
