"""Mixed-type tables with holes: NMI against the known groups, and seconds per iteration.

Parts (``--parts``; each merges its figures into ``results/tables.json``):

* ``tables``: on each real table of ``tables_data.py`` (penguins, Cleveland heart,
  carnivore scat) with 0, 10, 30 and 50 % of its cells removed completely at random
  (``punch_holes``; never a whole row or column), the NMI against the known groups of

  - ``dpclust``: ``DPMixture(family="auto", random_state=0)`` on the table with its holes;
  - ``dpclust complete cases``: the same model on the rows without a missing cell only
    (NMI on those rows; none are left at 30 % of holes in 13 columns);
  - ``k-prototypes`` (``kmodes``) with the true number of groups: it takes no missing
    cell, so each is imputed by its column's mean (Gaussian and count columns, which are
    then standardised) or mode (binary and categorical columns);
  - ``StepMix`` with the true number of groups and its missing-value measurement models
    (``continuous_nan`` for Gaussian and count columns, StepMix has no Poisson model;
    ``binary_nan``; ``categorical_nan``).

  Each hole fraction is drawn ``--repeats`` times (seeds 0, 1, ...); the figures are means.
* ``speed``: seconds per iteration of ``DPMixture(family="auto")`` with
  ``sampler="gibbs"`` and ``sampler="subcluster"`` on a generated table of 10^5 rows x 50
  columns (two fifths Gaussian, a fifth each binary, categorical and count; 10 clusters).

A method whose call raises (``family="auto"`` before the mixed model exists, a package
that is not installed) is recorded with its error and the others go on.
``--dp-family gaussian`` checks the harness before then: dpclust fits its Gaussian family
on the (standardised) Gaussian columns only, which cannot take holes; such figures are not
the benchmark's.

Usage: ``.venv/bin/python benchmarks/bench_tables.py [--parts tables speed] [--quick]``;
writes ``benchmarks/results/tables.{json,md}`` (``tables_quick`` with ``--quick``).
Needs the ``bench`` extra (``pip install -e .[bench]``: the tables' packages, kmodes and
stepmix).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))
from _common import run_parts  # noqa: E402
from tables_data import TABLES, column_kinds, make_mixed_table, punch_holes  # noqa: E402

RESULTS = HERE / "results"
PARTS = ("tables", "speed")
FRACTIONS = (0.0, 0.1, 0.3, 0.5)
METHODS = ("dpclust", "dpclust complete cases", "k-prototypes", "StepMix")
#: fewer complete rows than this: no complete-case fit
MIN_COMPLETE_ROWS = 10


def _nmi(y, labels) -> float:
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(y, labels))


def _numeric_block(X: pd.DataFrame, columns) -> np.ndarray:
    """``X[columns]`` as float64, NaN where missing."""
    return X[list(columns)].astype("float64").to_numpy(na_value=np.nan)


def _standardise(A: np.ndarray) -> np.ndarray:
    sd = np.nanstd(A, axis=0)
    return (A - np.nanmean(A, axis=0)) / np.where(sd > 0, sd, 1.0)


# ------------------------------------------------------------------------ methods
def fit_dpclust(X: pd.DataFrame, family: str, n_iter: int, sampler: str = "auto"):
    """Fit ``DPMixture`` and return ``(labels, n_clusters, model)``.

    Parameters
    ----------
    X : DataFrame
        A table with the dtypes of ``tables_data`` (its kinds), holes as missing values.
    family : {"auto", "gaussian"}
        ``"auto"`` passes the table as it is; ``"gaussian"`` (a check of this harness only)
        fits the standardised Gaussian columns.
    n_iter : int
    sampler : str, default="auto"
    """
    from dpclust import DPMixture

    if family == "gaussian":
        gauss = [c for c, k in column_kinds(X).items() if k == "gaussian"]
        data = _standardise(_numeric_block(X, gauss))
    else:
        data = X
        # whole numbers are read as real numbers unless declared counts
        counts = {c: "poisson" for c, k in column_kinds(X).items() if k == "count"}
        family = counts or "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(family=family, sampler=sampler, n_iter=n_iter,
                          random_state=0, n_chains=1).fit(data)
    return np.asarray(model.labels_), int(model.n_clusters_), model


def fit_kprototypes(X: pd.DataFrame, n_clusters: int, seed: int) -> np.ndarray:
    """k-prototypes (``kmodes.KPrototypes``, Cao initialisation) on ``X`` with each missing
    cell imputed by its column's mean (Gaussian, count) or mode (binary, categorical); the
    numeric columns are standardised after imputation."""
    from kmodes.kprototypes import KPrototypes

    kinds = column_kinds(X)
    numeric = [c for c, k in kinds.items() if k in ("gaussian", "count")]
    nominal = [c for c, k in kinds.items() if k in ("binary", "categorical")]
    A = _numeric_block(X, numeric)
    A = _standardise(np.where(np.isnan(A), np.nanmean(A, axis=0), A))
    B = np.column_stack([X[c].fillna(X[c].mode().iloc[0]).astype(str).to_numpy()
                         for c in nominal])
    data = np.concatenate([A.astype(object), B], axis=1)
    model = KPrototypes(n_clusters=n_clusters, init="Cao", n_init=10, random_state=seed,
                        n_jobs=1)
    return model.fit_predict(data, categorical=list(range(len(numeric), data.shape[1])))


def fit_stepmix(X: pd.DataFrame, n_clusters: int, seed: int) -> np.ndarray:
    """StepMix latent class / mixture model with its missing-value measurement models:
    ``continuous_nan`` (diagonal Gaussian; also for counts), ``binary_nan`` and
    ``categorical_nan`` (integer codes)."""
    from stepmix.stepmix import StepMix

    kinds = column_kinds(X)
    blocks, descriptor = [], {}
    for model, wanted in (("continuous_nan", ("gaussian", "count")),
                          ("binary_nan", ("binary",)),
                          ("categorical_nan", ("categorical",))):
        cols = [c for c, k in kinds.items() if k in wanted]
        if not cols:
            continue
        if model == "categorical_nan":
            codes = np.column_stack([X[c].cat.codes.to_numpy() for c in cols])
            block = np.where(codes < 0, np.nan, codes).astype(np.float64)
        else:
            block = _numeric_block(X, cols)
            if model == "continuous_nan":
                block = _standardise(block)
        blocks.append(block)
        descriptor[model] = {"model": model, "n_columns": len(cols)}
    data = np.concatenate(blocks, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StepMix(n_components=n_clusters, measurement=descriptor, n_init=5,
                        random_state=seed, verbose=0, progress_bar=0)
        model.fit(data)
        return model.predict(data)


def _run(method, X, y, n_clusters, seed, dp_family, n_iter) -> dict:
    """One method on one holed table: NMI, seconds (and rows, clusters) or the error."""
    t0 = time.perf_counter()
    out = {}
    try:
        if method == "dpclust":
            labels, out["n_clusters"], _ = fit_dpclust(X, dp_family, n_iter)
        elif method == "dpclust complete cases":
            rows = X.notna().all(axis=1).to_numpy()
            out["rows"] = int(rows.sum())
            if out["rows"] < MIN_COMPLETE_ROWS:
                return {**out, "nmi": None, "skipped": f"{out['rows']} complete rows"}
            X, y = X[rows], y[rows]
            labels, out["n_clusters"], _ = fit_dpclust(X, dp_family, n_iter)
        elif method == "k-prototypes":
            labels = fit_kprototypes(X, n_clusters, seed)
        else:
            labels = fit_stepmix(X, n_clusters, seed)
    except Exception as exc:  # a missing package or model: record it, go on
        return {**out, "nmi": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
    out.setdefault("n_clusters", int(np.unique(labels).size))  # 1: a degenerate fit
    return {**out, "nmi": _nmi(y, labels), "seconds": time.perf_counter() - t0}


def part_tables(quick: bool, repeats: int, dp_family: str, n_iter: int) -> dict:
    tables = {}
    for name, loader in TABLES.items():
        try:
            X, y, _ = loader()
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            print(f"{name}: skipped ({exc})", flush=True)
            tables[name] = {"error": str(exc)}
            continue
        k = len(np.unique(y))
        rec = {"rows": X.shape[0], "columns": X.shape[1], "groups": k,
               "kinds": column_kinds(X), "missing_in_source": int(X.isna().sum().sum()),
               "runs": {}}
        print(f"\n{name}: {X.shape[0]} rows x {X.shape[1]} columns, {k} groups", flush=True)
        for fraction in FRACTIONS:
            runs = []
            for seed in range(repeats if fraction > 0 else 1):
                H = punch_holes(X, fraction, np.random.default_rng([seed, int(100 * fraction)]))
                runs.append({m: _run(m, H, y, k, seed, dp_family, n_iter) for m in METHODS})
            rec["runs"][str(fraction)] = runs
            print(f"  {fraction:4.0%} holes: " + "; ".join(
                f"{m} {_mean_nmi(runs, m)}" for m in METHODS), flush=True)
        tables[name] = rec
    return {"tables": tables, "dp_family": dp_family, "n_iter": n_iter, "repeats": repeats}


def _mean_nmi(runs, method) -> str:
    values = [r[method]["nmi"] for r in runs if r[method].get("nmi") is not None]
    if not values:
        return "-"
    return f"{np.mean(values):.3f}" + ("" if len(values) == len(runs) else f" ({len(values)}/"
                                       f"{len(runs)})")


# -------------------------------------------------------------------------- speed
def part_speed(quick: bool, dp_family: str, n_iter: int) -> dict:
    """Seconds per iteration of collapsed Gibbs and of the sub-cluster sampler on a
    generated mixed table, complete and with 20 % of its cells removed, beside a bare pass
    measured in the same run: the NumPy log-likelihood of every row under ten components
    (the least one iteration must do), so that the figures are ratios to it."""
    n_rows, n_cols, k = (10_000, 50, 10) if quick else (100_000, 50, 10)
    X, y = make_mixed_table(n_rows, n_cols, k, np.random.default_rng(0))
    out = {"rows": n_rows, "columns": n_cols, "clusters": k, "n_iter": n_iter,
           "dp_family": dp_family, "samplers": {}, "bare_pass": {}}
    for holes in (0.0, 0.2):
        H = X if not holes else X.mask(np.random.default_rng(1).random(X.shape) < holes)
        out["bare_pass"][str(holes)] = _bare_pass(H)
        for sampler in ("gibbs", "subcluster"):
            t0 = time.perf_counter()
            try:
                labels, n_found, model = fit_dpclust(H, dp_family, n_iter, sampler=sampler)
            except Exception as exc:
                rec = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            else:
                wall = time.perf_counter() - t0
                seconds = np.diff(np.asarray(model.trace_.seconds[0]), prepend=0.0)[2:]
                rec = {"seconds_per_iteration": float(np.median(seconds)),
                       "fit_seconds": wall, "nmi": _nmi(y, labels), "n_clusters": n_found,
                       "family": type(model.family_).__name__,
                       "ratio_to_bare_pass": float(np.median(seconds))
                       / out["bare_pass"][str(holes)]}
            out["samplers"][f"{sampler}, {holes:.0%} holes"] = rec
            print(f"  {sampler}, {holes:.0%} holes: {rec}", flush=True)
    return out


def _bare_pass(X: pd.DataFrame) -> float:
    """Seconds of one NumPy log-likelihood of every row under ten components (the median
    of three), the table family's own ``log_likelihood``."""
    from dpclust.families import TableFamily

    counts = {c: "poisson" for c, k in column_kinds(X).items() if k == "count"}
    fam = TableFamily(kinds=counts, covariance="diagonal")
    Xw = fam.validate(X)
    fam = fam.resolve(Xw)
    params = fam.sample_prior(np.random.default_rng(0), 10)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fam.log_likelihood(Xw, params)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


# ----------------------------------------------------------------------- markdown
def write_markdown(payload: dict, path: Path) -> None:
    m = payload["machine"]
    md = ["# Mixed-type tables with holes", "",
          f"Machine: {m['cpu_model']}, {m['cpus_available']} cores; {m['date']}"
          + (" (quick run)" if payload.get("quick") else "") + ".", ""]
    tab = payload.get("tables")
    if tab:
        md += [f"## NMI against the known groups (dpclust family `{tab['dp_family']}`, "
               f"{tab['n_iter']} iterations; mean of {tab['repeats']} draws of the holes)", "",
               "k-prototypes takes no missing cell: each is imputed by its column's mean or "
               "mode. StepMix uses its `*_nan` measurement models (counts as continuous). "
               "Complete cases: NMI on the rows without a missing cell (their number in "
               "brackets). Both baselines are given the true number of groups; \"(1 cluster)\" "
               "marks a fit that put every row in one cluster.", ""]
        for name, rec in tab["tables"].items():
            if "runs" not in rec:
                md += [f"### {name}: skipped ({rec['error']})", ""]
                continue
            kinds = pd.Series(rec["kinds"]).value_counts().to_dict()
            md += [f"### {name}: {rec['rows']} rows x {rec['columns']} columns {kinds}, "
                   f"{rec['groups']} groups, {rec['missing_in_source']} cells missing in "
                   "the source", "",
                   "| method | " + " | ".join(f"{float(f):.0%} holes" for f in rec["runs"])
                   + " | seconds (0 %) |", "|---|" + "---:|" * (len(rec["runs"]) + 1)]
            for method in METHODS:
                cells = []
                for runs in rec["runs"].values():
                    cell = _mean_nmi(runs, method)
                    if any(r[method].get("n_clusters") == 1 for r in runs):
                        cell += " (1 cluster)"
                    if method == "dpclust complete cases":
                        cell += f" [{np.mean([r[method].get('rows', 0) for r in runs]):.0f}]"
                    cells.append(cell)
                secs = rec["runs"]["0.0"][0][method].get("seconds")
                md.append(f"| {method} | " + " | ".join(cells)
                          + f" | {'-' if secs is None else f'{secs:.2f}'} |")
            errors = {r[meth]["error"] for runs in rec["runs"].values() for r in runs
                      for meth in METHODS if r[meth].get("error")}
            md += [""] + [f"- error: `{e}`" for e in sorted(errors)] + [""]
    sp = payload.get("speed")
    if sp:
        md += [f"## Seconds per iteration, {sp['rows']:,} rows x {sp['columns']} mixed columns "
               f"({sp['clusters']} clusters; family `{sp['dp_family']}`, {sp['n_iter']} "
               "iterations, median after the first two)", "",
               "The bare pass, measured in the same run, is one NumPy log-likelihood of "
               "every row under ten components: "
               + ", ".join(f"{v:.3f} s ({float(h):.0%} holes)"
                           for h, v in sp.get("bare_pass", {}).items()) + ".", "",
               "| sampler | family | s / iteration | × bare pass | fit s | NMI | K |",
               "|---|---|---:|---:|---:|---:|---:|"]
        for sampler, r in sp["samplers"].items():
            md.append(f"| {sampler} | " + (
                f"{r.get('family', '')} | {r['seconds_per_iteration']:.3f} | "
                f"{r.get('ratio_to_bare_pass', float('nan')):.1f} | {r['fit_seconds']:.1f} | "
                f"{r['nmi']:.3f} | {r['n_clusters']} |" if "error" not in r
                else f"`{r['error']}` | | | | | |"))
        md.append("")
    path.write_text("\n".join(md) + "\n")


def warm_up(dp_family: str) -> None:
    """Compile (or load from cache) both samplers' kernels on a tiny table, before any
    timing."""
    X, _ = make_mixed_table(300, 5, 2, np.random.default_rng(1))
    for sampler in ("gibbs", "subcluster"):
        try:
            fit_dpclust(X, dp_family, 3, sampler=sampler)
        except Exception as exc:
            print(f"DPMixture(family={dp_family!r}, sampler={sampler!r}) on a small table "
                  f"raised {type(exc).__name__}: {str(exc)[:200]}", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: one draw of the holes, "
                   "fewer iterations, 10^4 rows in the speed part")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--repeats", type=int, help="draws of the holes (default 3; --quick 1)")
    p.add_argument("--n-iter", type=int, help="dpclust iterations on the real tables "
                   "(default 200; --quick 40)")
    p.add_argument("--speed-iter", type=int, help="iterations timed in the speed part "
                   "(default 20; --quick 5)")
    p.add_argument("--dp-family", choices=("auto", "gaussian"), default="auto",
                   help="'gaussian' checks the harness on the Gaussian columns only")
    args = p.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    n_iter = args.n_iter or (40 if args.quick else 200)
    speed_iter = args.speed_iter or (5 if args.quick else 20)

    def run_part(part):
        if part == "tables":
            return part_tables(args.quick, repeats, args.dp_family, n_iter)
        return part_speed(args.quick, args.dp_family, speed_iter)

    stem = RESULTS / ("tables" if args.dp_family == "auto" else "tables_gaussian_check")
    run_parts(args.parts, run_part, stem, args.quick, lambda: warm_up(args.dp_family),
              write_markdown)


if __name__ == "__main__":
    main()
