"""Profiles of a table's clusters: per cluster and column, what its rows hold.

:func:`column_profiles` describes each cluster of a partition of a :class:`TableData` from
the data themselves (not from the model's parameters), column by column, beside the same
description of all the rows (the *overall* profile), as PReMiuM's profile plots do:

* every column: the rows of the cluster with the cell observed, and the share missing;
* real and count columns: the mean, the standard deviation and the quartiles of the
  observed cells;
* yes/no and category columns: the share of each level among the observed cells;

and, per column, how strongly the clusters differ in it (:func:`separation`): the
correlation ratio eta for real and count columns (the share of the column's variance
between clusters, square-rooted) and Cramér's V for coded ones; both lie in [0, 1].

Row weights (:attr:`TableData.weight`, a power on a row's likelihood) count as frequency
weights in the means, spreads, quartiles and level shares; the observed counts and the
missing shares count rows, and so does the separation in weighing the clusters.

References
----------
Liverani, S. et al. (2015). PReMiuM: an R package for profile regression mixture models
    using Dirichlet processes. J. Stat. Softw. 64(7), §4 (profile plots).
Cramér, H. (1946). Mathematical Methods of Statistics, §21.9 (V).
"""

from __future__ import annotations

import numpy as np

from .data import TableData

__all__ = ["as_summary", "column_profiles", "separation", "weighted_quartiles"]


def weighted_quartiles(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The quartiles (25, 50, 75 %) of ``x`` under weights ``w``, shape (3,); NaN when
    ``x`` is empty.

    NumPy's default quantiles (linear, Hyndman & Fan type 7) of the data with each value
    repeated as often as its weight: the k-th smallest value spans the positions from the
    weight below it to that plus ``max(w_k - 1, 0)``, the positions are scaled so that the
    last is 1, and the quantiles interpolate linearly between them.  Whole weights give
    the quartiles of the repeated data, weights of one those of the data.
    """
    if x.size == 0:
        return np.full(3, np.nan)
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    lo = np.concatenate([[0.0], np.cumsum(w)[:-1]])
    hi = lo + np.maximum(w - 1.0, 0.0)
    at = np.column_stack([lo, hi]).ravel()
    if at[-1] <= 0:
        return np.full(3, x[-1])
    return np.interp([0.25, 0.5, 0.75], at / at[-1], np.repeat(x, 2))


def _moments(x: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted mean and standard deviation (frequency weights: divided by the weight less
    one, NaN at a weight of one or less)."""
    total = w.sum()
    if total <= 0:
        return np.nan, np.nan
    mean = float((w * x).sum() / total)
    if total <= 1.0:
        return mean, np.nan
    return mean, float(np.sqrt((w * (x - mean) ** 2).sum() / (total - 1.0)))


def _numeric(values: np.ndarray, labels: np.ndarray, weight: np.ndarray, K: int) -> dict:
    seen = ~np.isnan(values)
    out = {"mean": np.full(K, np.nan), "sd": np.full(K, np.nan),
           "quartiles": np.full((K, 3), np.nan)}
    for k in range(K):
        rows = seen & (labels == k)
        x, w = values[rows], weight[rows]
        out["mean"][k], out["sd"][k] = _moments(x, w)
        out["quartiles"][k] = weighted_quartiles(x, w)
    return out


def _shares(codes: np.ndarray, n_levels: int, labels: np.ndarray, weight: np.ndarray,
            K: int) -> np.ndarray:
    """Weighted share of each level among each cluster's observed cells, shape (K, L)
    (NaN for a cluster with none)."""
    seen = codes >= 0
    counts = np.zeros((K, n_levels))
    np.add.at(counts, (labels[seen], codes[seen]), weight[seen])
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.full_like(counts, np.nan), where=total > 0)


def _profile(X: TableData, labels: np.ndarray, K: int) -> list[dict]:
    """One dict per column of the schema, in its order (see :func:`column_profiles`)."""
    hole = X.missing()
    rows = np.bincount(labels, minlength=K)
    observed = np.zeros((K, hole.shape[1]), dtype=np.int64)
    np.add.at(observed, labels, (~hole).astype(np.int64))
    missing = np.divide(rows[:, None] - observed, rows[:, None],
                        out=np.full(observed.shape, np.nan), where=rows[:, None] > 0)
    place = {c.name: j for j, c in enumerate(X.schema.columns)}
    out = [None] * len(place)
    arrays = ((X.schema.real, X.real), (X.schema.counts, X.count))
    for columns, values in arrays:
        for j, c in enumerate(columns):
            out[place[c.name]] = _numeric(values[:, j], labels, X.weight, K)
    for j, c in enumerate(X.schema.coded):
        out[place[c.name]] = {"levels": [str(v) for v in c.levels],
                              "shares": _shares(X.code[:, j], len(c.levels), labels,
                                                X.weight, K)}
    for i, c in enumerate(X.schema.columns):
        out[i] = {"column": c.name, "kind": c.kind, "observed": observed[:, i],
                  "missing": missing[:, i], **out[i]}
    return out


def column_profiles(X: TableData, labels, n_clusters: int) -> dict:
    """Per cluster and column, what the cluster's rows hold (see the module's docstring).

    Parameters
    ----------
    X : TableData of n rows
        The table (the training data of a fit).
    labels : array-like of int, shape (n,)
        Each row's cluster, ``0 .. n_clusters - 1``.
    n_clusters : int
        Number of clusters (a cluster without rows gets NaN statistics).

    Returns
    -------
    profiles : dict
        ``sizes`` (n_clusters,) rows per cluster, ``weights`` (n_clusters,) their total
        weight, and ``columns``: one dict per column of ``X.schema`` in its order with
        ``column``, ``kind``, ``observed`` (n_clusters,) rows with the cell observed,
        ``missing`` (n_clusters,) their share missing, ``separation`` (a float in [0, 1],
        :func:`separation`); real and count columns ``mean``, ``sd`` (n_clusters,) and
        ``quartiles`` (n_clusters, 3); coded columns ``levels`` (their labels as text)
        and ``shares`` (n_clusters, n_levels); and ``overall``, the same statistics of all
        the rows (arrays of one cluster, the first axis dropped).
    """
    labels = np.asarray(labels, dtype=np.intp)
    K = int(n_clusters)
    if labels.shape != (len(X),):
        raise ValueError(f"labels must have one entry per row ({len(X)}), got shape "
                         f"{labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= K):
        raise ValueError(f"labels must lie in 0 .. {K - 1}")
    per_cluster = _profile(X, labels, K)
    overall = _profile(X, np.zeros(len(X), dtype=np.intp), 1)
    columns = []
    for c, a in zip(per_cluster, overall):
        whole = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in a.items()
                 if k not in ("column", "kind", "levels")}
        columns.append({**c, "separation": separation(c, whole), "overall": whole})
    return {"sizes": np.bincount(labels, minlength=K),
            "weights": np.bincount(labels, weights=X.weight, minlength=K),
            "columns": columns}


def separation(column: dict, overall: dict) -> float:
    """How strongly the clusters differ in one column, in [0, 1] (0: alike, 1: each
    cluster's cells all alike and the clusters apart), from a column's profile
    (:func:`column_profiles`) and its overall profile.

    Real and count columns: the correlation ratio ``eta = sqrt(SS_between / SS_total)``,
    from the clusters' weighted means and the overall mean and spread. Coded columns:
    Cramér's ``V = sqrt(chi2 / (n min(K - 1, L - 1)))`` of the clusters by levels table
    of weighted shares. Clusters without an observed cell take no part.
    """
    n = np.asarray(column["observed"], dtype=np.float64)
    if "shares" in column:
        p = np.asarray(column["shares"], dtype=np.float64)
        q = np.asarray(overall["shares"], dtype=np.float64)
        ok = n > 0
        live = q > 0
        k, m = int(ok.sum()), int(live.sum())
        if min(k, m) < 2:
            return 0.0
        diff = (p[ok][:, live] - q[live]) ** 2 / q[live]
        v2 = float((n[ok] * diff.sum(axis=1)).sum() / n[ok].sum() / (min(k, m) - 1))
        return float(np.sqrt(min(max(v2, 0.0), 1.0)))
    mean = np.asarray(column["mean"], dtype=np.float64)
    sd = float(overall["sd"])
    total = float(overall["observed"])
    ok = (n > 0) & np.isfinite(mean)
    if total < 2 or not (np.isfinite(sd) and sd > 0):
        return 0.0
    between = float((n[ok] * (mean[ok] - float(overall["mean"])) ** 2).sum())
    return float(np.sqrt(min(between / (sd ** 2 * (total - 1.0)), 1.0)))


#: the summary's profiles keep a coded column's most common levels (over all the rows),
#: the others merged into one "(other levels)" share
MAX_SUMMARY_LEVELS = 12
#: and per-cluster statistics of at most this many (cluster, column) pairs: beyond it,
#: those of the columns that separate the clusters most (every column keeps its overall
#: profile and separation)
MAX_SUMMARY_CELLS = 20_000
OTHER_LEVELS = "(other levels)"


def _json(values, digits: int = 4):
    """Floats to ``digits`` significant digits as (nested) lists, NaN as None."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim == 0:
        return float(f"{float(a):.{digits}g}") if np.isfinite(a) else None
    return [_json(v, digits) for v in a]


def as_summary(profiles: dict, *, max_levels: int = MAX_SUMMARY_LEVELS,
               max_cells: int = MAX_SUMMARY_CELLS) -> dict:
    """The run summary's ``profiles`` block: :func:`column_profiles` as JSON, numbers to
    four significant digits (None where undefined), bounded for wide tables.

    A coded column keeps its ``max_levels`` most common levels (``levels_merged``: how
    many others are summed in an :data:`OTHER_LEVELS` share); when the clusters times the
    columns exceed ``max_cells``, only the columns that separate the clusters most keep
    their per-cluster statistics (``per_cluster: false`` on the others, and
    ``columns_per_cluster`` says how many kept them).
    """
    sizes = np.asarray(profiles["sizes"])
    K = len(sizes)
    columns = profiles["columns"]
    keep = len(columns) if K * len(columns) <= max_cells else max(max_cells // max(K, 1), 1)
    ranked = sorted(range(len(columns)), key=lambda i: -columns[i]["separation"])
    detailed = set(ranked[:keep])
    out = []
    for i, c in enumerate(columns):
        whole = c["overall"]
        entry = {"column": c["column"], "kind": c["kind"],
                 "separation": _json(c["separation"], 3)}
        per = {"observed": np.asarray(c["observed"]).tolist(), "missing": _json(c["missing"], 3)}
        all_rows = {"observed": int(whole["observed"]), "missing": _json(whole["missing"], 3)}
        if "shares" in c:
            order = np.argsort(-np.nan_to_num(whole["shares"]), kind="stable")
            top = np.sort(order[:max_levels])
            rest = np.setdiff1d(np.arange(len(c["levels"])), top)
            entry["levels"] = [c["levels"][t] for t in top] + ([OTHER_LEVELS] if rest.size
                                                               else [])
            if rest.size:
                entry["levels_merged"] = int(rest.size)

            def cut(s):
                s = np.atleast_2d(s)
                parts = [s[:, top]] + ([s[:, rest].sum(axis=1, keepdims=True)]
                                       if rest.size else [])
                return np.hstack(parts)

            per["shares"] = _json(cut(c["shares"]), 3)
            all_rows["shares"] = _json(cut(whole["shares"])[0], 3)
        else:
            for key in ("mean", "sd", "quartiles"):
                per[key] = _json(c[key])
                all_rows[key] = _json(whole[key])
        entry["overall"] = all_rows
        if i in detailed:
            entry.update(per)
        else:
            entry["per_cluster"] = False
        out.append(entry)
    block = {"source": "the training data, rows grouped by the point estimate",
             "sizes": sizes.tolist(), "columns": out}
    if keep < len(columns):
        block["columns_per_cluster"] = keep
    return block
