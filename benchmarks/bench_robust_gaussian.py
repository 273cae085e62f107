"""The Gaussian part of ``bench_robust.py``: a real data set at 20 % / 50 % / 100 % of its
rows, four answers side by side.

ggplot2's diamonds (53,940 rows; log carat, log price, depth %, table %; read from the CSV
inside the ``plotnine`` wheel, see ``gaussian_data.py``) is clustered by

* the exact DP posterior (``sampler="auto"``: the sub-cluster sampler from 5,000 rows);
* the fused clusters of that posterior (FOLD, ``DPMixture.fuse``);
* the coarsened posterior at one alpha_c, chosen once by the elbow rule on all rows
  (:func:`dpclust.estimators.coarsening.calibrate`) and kept for every N (the tolerance is
  a property of the data and the family, not of N);
* scikit-learn's ``BayesianGaussianMixture`` (30 components, a Dirichlet-process weight
  prior, variational inference), three seeds.

For each: the number of clusters holding at least 1 % of the rows.  The nested subsets
(``nested_subsets``) keep the 20 % inside the 50 %, so a change with N is not a change of
rows.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from gaussian_data import load_diamonds, nested_subsets

FRACTIONS = (0.2, 0.5, 1.0)


def _large_share(labels) -> int:
    counts = np.bincount(np.asarray(labels))
    return int((counts >= 0.01 * counts.sum()).sum())


def _coarsened_row(Xf, alpha_c: float, n_iter: int) -> dict:
    """The coarsened posterior's row for the rows ``Xf``: its clusters with at least 1 % of
    the rows and K, averaged over the second half of one chain."""
    from dpclust import DPMixture

    t = time.perf_counter()
    tr = DPMixture(coarsening=alpha_c, n_iter=n_iter, random_state=1, n_chains=1).fit(Xf).trace_
    kept = slice(tr.n_clusters.shape[1] // 2, None)  # one chain: chain 0
    return {"n": len(Xf), "answer": f"coarsened posterior (alpha_c = {alpha_c:g})",
            "large": float(np.mean(tr.n_large_clusters[0, kept])),
            "K": float(np.mean(tr.n_clusters[0, kept])), "seconds": time.perf_counter() - t}


def gaussian_part(quick: bool, alpha_c: float | None = None, previous: dict | None = None
                  ) -> dict:
    """The diamonds rows of every answer, or with ``alpha_c`` and ``previous`` (the last
    ``gaussian`` record) only the coarsened posterior's at that ``alpha_c``, the other
    answers' rows and the calibration kept from ``previous`` (for a change to the coarsened
    sampler alone)."""
    from sklearn.mixture import BayesianGaussianMixture

    from dpclust import DPMixture
    from dpclust.estimators.coarsening import calibrate

    X, columns = load_diamonds()
    subsets = nested_subsets(len(X), FRACTIONS, seed=0)
    n_iter = 60 if quick else 400
    rows = []
    t0 = time.perf_counter()
    only_coarsened = alpha_c is not None and previous is not None
    if only_coarsened:
        calibration = previous.get("calibration")
    else:
        cal = calibrate(DPMixture(coarsening="auto", random_state=0, n_chains=1, n_iter=200),
                        X[subsets[0.2]] if quick else X, n_iter=30 if quick else 100)
        alpha_c = cal.chosen
        calibration = {**cal.as_dict(), "seconds": time.perf_counter() - t0}
        print("gaussian calibration:", calibration, flush=True)
    for f in FRACTIONS[:2] if quick else FRACTIONS:
        Xf = X[subsets[f]]
        n = len(Xf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if only_coarsened:
                rows += [r for r in previous["rows"] if r["n"] == n
                         and not r["answer"].startswith("coarsened")]
                rows.append(_coarsened_row(Xf, alpha_c, n_iter))
                print("gaussian:", rows[-1], flush=True)
                continue
            t = time.perf_counter()
            exact = DPMixture(n_iter=n_iter, random_state=1, n_chains=1).fit(Xf)
            tr = exact.trace_
            kept = slice(tr.n_clusters.shape[1] // 2, None)  # one chain: chain 0
            rows.append({"n": n, "answer": "exact DP posterior",
                         "large": float(np.mean(tr.n_large_clusters[0, kept])),
                         "K": float(np.mean(tr.n_clusters[0, kept])),
                         "seconds": time.perf_counter() - t})
            t = time.perf_counter()
            fusion = exact.fuse()
            rows.append({"n": n, "answer": "fused clusters (FOLD) of the exact posterior",
                         "large": float(_large_share(fusion.labels)),
                         "K": float(fusion.n_clusters), "seconds": time.perf_counter() - t})
            rows.append(_coarsened_row(Xf, alpha_c, n_iter))
            for seed in (0, 1, 2):
                t = time.perf_counter()
                bgm = BayesianGaussianMixture(
                    n_components=30, weight_concentration_prior_type="dirichlet_process",
                    covariance_type="full", max_iter=100 if quick else 500,
                    random_state=seed).fit(Xf)
                rows.append({"n": n, "answer": f"BayesianGaussianMixture (seed {seed})",
                             "large": float((bgm.weights_ >= 0.01).sum()), "K": 30.0,
                             "seconds": time.perf_counter() - t,
                             "converged": bool(bgm.converged_)})
        for r in rows[-6:]:
            print("gaussian:", r, flush=True)
    note = ("Clusters with at least 1 % of the rows. The exact DP's grow with N; "
            "BayesianGaussianMixture's weights come from variational inference (not a "
            "posterior), 30 components.")
    if only_coarsened:
        note += (" The coarsened rows were refitted alone (--alpha-c) after a change to the "
                 "coarsened sampler; the other rows are from the last full run.")
    return {"gaussian": {"dataset": f"diamonds ({len(X):,} rows; {', '.join(columns)})",
                         "note": note,
                         "alpha_c": alpha_c, "calibration": calibration, "rows": rows}}
