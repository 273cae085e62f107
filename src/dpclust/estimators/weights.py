"""Sample weights of :class:`~dpclust.DPMixture`: whole-number weights as repeated rows, or
a power on each row's likelihood.

``fit(X, sample_weight=w)`` fits the model to the *model rows*: under ``"repeat"`` the row
``i`` repeated ``w_i`` times (each copy its own customer of the partition prior), under
``"power"`` the row ``i`` once with its likelihood raised to ``w_i``.  Rows of weight 0 are
left out under both (scikit-learn's convention: a weight of 0 is the row removed).  A
:class:`WeightPlan` says which original row each model row is (:attr:`WeightPlan.rows`);
:func:`fold_labels` and :func:`fold_mean` turn what the chains say of the model rows back
into one value per original row.

The posteriors, with ``z`` the partition of the model rows and ``p(z)`` the partition
prior:

* ``"repeat"``: ``p(z | X_rep) ∝ p(z) ∏_k ∫ ∏_{t in k} f(x_t | θ) p(θ) dθ`` over the rows
  of ``X_rep``, ``X`` with row ``i`` repeated ``w_i`` times: exactly the posterior of the
  repeated data (the copies of a row may sit in different clusters);
* ``"power"``: ``p(z | X, w) ∝ p(z) ∏_k ∫ ∏_{i in k} f(x_i | θ)^{w_i} p(θ) dθ``, a
  generalised (power) posterior (Bissiri, Holmes & Walker 2016, with the loss
  ``-w_i log f(x_i | θ)``); all ``w_i = 1`` give the ordinary posterior.  It is not the
  posterior of repeated rows: a row of weight 3 counts as three copies held in one
  cluster, while the partition prior counts it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..families import FAMILIES

#: the choices of ``sample_weight_mode``
MODES = ("auto", "repeat", "power")
#: the most model rows ``"repeat"`` makes
MAX_COPIES = 10_000_000
#: the most copies per row, on average, ``"auto"`` makes before it asks for a choice
MAX_COPIES_PER_ROW = 50


class WeightedData(NamedTuple):
    """The data as given to ``fit`` with their ``sample_weight`` (unchecked): what a chain
    worker or a resumed run rebuilds the model from."""

    X: object
    sample_weight: object


@dataclass(frozen=True)
class WeightPlan:
    """How the model rows are made from the rows of the data.

    Attributes
    ----------
    mode : {"repeat", "power"}
    weight : ndarray of shape (n_samples,)
        The checked weights, one per row of the data.
    rows : ndarray of shape (n_model_rows,)
        The row of the data each model row is (a row repeated under ``"repeat"``; rows of
        weight 0 appear nowhere).
    """

    mode: str
    weight: np.ndarray
    rows: np.ndarray

    @property
    def n_samples(self) -> int:
        return len(self.weight)

    @property
    def copies(self) -> np.ndarray | None:
        """The row each model row copies under ``"repeat"`` (the point estimate keeps a
        row's copies in one cluster), None under ``"power"`` or where no row repeats."""
        return self.rows if self.mode == "repeat" and self.weight.max() > 1 else None

    @property
    def dropped(self) -> np.ndarray:
        """The rows of weight 0, which the model leaves out."""
        return np.flatnonzero(self.weight == 0)

    def apply(self, family, Xw):
        """The model rows of ``Xw`` (the data in ``family``'s working form)."""
        n = family.n_points(Xw)
        if n != self.n_samples:
            raise ValueError(f"sample_weight has {self.n_samples} entries but X has {n} "
                             f"rows: give one weight per row")
        out = family.subset(Xw, self.rows)
        if self.mode == "power":
            out = out.with_weight(out.weight * self.weight[self.rows])
        return out


def weighted_families() -> list[str]:
    """The registered families whose likelihood takes a power per row."""
    return [name for name, cls in FAMILIES.items() if cls.supports_weights]


def check_sample_weight(sample_weight) -> np.ndarray:
    """``sample_weight`` as a new 1-D float array of finite weights >= 0, not all 0."""
    try:
        w = np.array(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must be numbers, one per row of X") from None
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be one number per row, shape (n_samples,); "
                         f"got shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w))
    if len(bad):
        raise ValueError(f"sample_weight holds {len(bad)} value(s) that are NaN or infinite "
                         f"(first: row {bad[0]})")
    bad = np.flatnonzero(w < 0)
    if len(bad):
        raise ValueError(f"sample_weight holds {len(bad)} negative weight(s) (first: row "
                         f"{bad[0]}, {w[bad[0]]:g}); weights must be >= 0")
    if len(w) == 0 or not np.any(w > 0):
        raise ValueError("sample_weight is zero for every row: nothing is left to fit")
    return w


def check_mode(mode) -> str:
    """``sample_weight_mode``, checked."""
    if mode not in MODES:
        raise ValueError(f"sample_weight_mode must be one of {MODES}, got {mode!r}")
    return mode


def make_plan(sample_weight, mode: str, family) -> WeightPlan:
    """The plan for ``sample_weight`` under ``mode`` (``"auto"``: whole numbers repeat,
    others are a power) for ``family`` (which must take powers, for ``"power"``)."""
    check_mode(mode)
    w = check_sample_weight(sample_weight)
    whole = np.floor(w) == w
    if mode == "auto":
        mode = "repeat" if whole.all() else "power"
        if mode == "repeat" and w.sum() > MAX_COPIES_PER_ROW * len(w):
            raise ValueError(
                f"sample_weight sums to {w.sum():.0f}, {w.sum() / len(w):.0f} copies per "
                f"row on average: whole-number weights repeat rows, and the model would "
                f"hold {w.sum():.0f} rows.  If they are counts of identical rows, ask for "
                f"them with sample_weight_mode='repeat'; if they are relative weights, "
                f"scale them down or use sample_weight_mode='power'")
    if mode == "repeat":
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise ValueError(f"sample_weight_mode='repeat' repeats each row w times and "
                             f"needs whole numbers; row {i} has {w[i]:g} (use 'power' or "
                             f"'auto')")
        if w.sum() > MAX_COPIES:
            raise ValueError(f"sample_weight sums to {w.sum():.0f}: repeating rows would "
                             f"make more than {MAX_COPIES:,} rows; scale the weights down "
                             f"or use sample_weight_mode='power'")
        rows = np.repeat(np.arange(len(w)), w.astype(np.int64))
        return WeightPlan("repeat", w, rows)
    if not getattr(family, "supports_weights", False):
        name = getattr(family, "name", type(family).__name__)
        raise ValueError(
            f"the {name!r} family does not take a power per row, which weights that are not "
            f"whole numbers (or sample_weight_mode='power') need; the families "
            f"{weighted_families()} do.  Whole-number weights work for every family "
            f"(each row counted as that many rows)")
    return WeightPlan("power", w, np.flatnonzero(w > 0))


def fold_labels(rows, n_samples: int, labels) -> tuple[np.ndarray, np.ndarray]:
    """Each row's label from the ``labels`` of the model rows (model row ``t`` is row
    ``rows[t]`` of the data): the cluster that holds most of its model rows (ties: the
    lower label), and the share of them it holds.  Rows without model rows (weight 0) get
    label -1 and share 0."""
    labels = np.asarray(labels, dtype=np.int64)
    K = int(labels.max()) + 1 if len(labels) else 1
    table = np.zeros((n_samples, K), dtype=np.int64)
    np.add.at(table, (rows, labels), 1)
    total = table.sum(axis=1)
    out = np.argmax(table, axis=1)
    share = np.divide(table[np.arange(n_samples), out], total,
                      out=np.zeros(n_samples), where=total > 0)
    out[total == 0] = -1
    return out, share


def fold_mean(rows, n_samples: int, values) -> np.ndarray:
    """Each row's mean of ``values`` over its model rows (NaN for rows of weight 0)."""
    values = np.asarray(values, dtype=np.float64)
    total = np.bincount(rows, weights=values, minlength=n_samples)
    count = np.bincount(rows, minlength=n_samples)
    return np.divide(total, count, out=np.full(n_samples, np.nan), where=count > 0)


def first_model_rows(rows, n_samples: int) -> np.ndarray:
    """The first model row of each row of the data (-1 for rows of weight 0)."""
    first = np.full(n_samples, -1, dtype=np.int64)
    first[rows[::-1]] = np.arange(len(rows))[::-1]
    return first


# ------------------------------------------------------------- the fitted estimator
def summarise_rows(est, plan: WeightPlan | None, dropped_X) -> None:
    """Turn the per-model-row summaries of a fitted ``est`` into per-row ones.

    Sets ``sample_weight_mode_`` and ``label_share_``; keeps the model rows' point estimate
    as ``_model_labels`` and their rows as ``_model_rows`` (None without weights); folds
    ``labels_``, ``certainty_`` and the credible ball's bounds to one value per row
    (:func:`fold_labels`, :func:`fold_mean`).  A row of weight 0 (its data ``dropped_X``) gets the cluster
    ``predict`` gives it and a certainty of NaN.
    """
    est.sample_weight_mode_ = None if plan is None else plan.mode
    if plan is None:
        est._model_rows = est._model_labels = est.label_share_ = None
        return
    n = plan.n_samples
    est._model_rows = plan.rows
    est._model_labels = est.labels_
    est.labels_, est.label_share_ = fold_labels(plan.rows, n, est.labels_)
    if est.certainty_ is not None:
        est.certainty_ = fold_mean(plan.rows, n, est.certainty_)
    ball = getattr(est, "credible_ball_", None)
    if ball is not None:  # its bounds as partitions of the rows, as labels_ is
        est.credible_ball_ = ball._replace(**{
            name: getattr(ball, name)._replace(
                labels=fold_labels(plan.rows, n, getattr(ball, name).labels)[0])
            for name in ("horizontal", "upper_vertical", "lower_vertical")})
    if dropped_X is not None:
        est.labels_[plan.dropped] = np.argmax(est._proba(dropped_X), axis=1)


def row_similarity(P, rows, n_samples: int) -> np.ndarray:
    """The co-clustering matrix of the rows from that of the model rows ``P``: rows ``i``
    and ``j`` by their first model rows (the copies of a row are exchangeable, so any copy
    gives the same probability); NaN for rows of weight 0."""
    first = first_model_rows(rows, n_samples)
    kept = np.flatnonzero(first >= 0)
    out = np.full((n_samples, n_samples), np.nan)
    out[np.ix_(kept, kept)] = P[np.ix_(first[kept], first[kept])]
    return out


def fold_fused(rows, n_samples: int, model_labels, model_fused, labels) -> np.ndarray:
    """Each row's fused cluster from those of the model rows (:func:`fold_labels`); a row
    of weight 0 takes the fused cluster most model rows of its cluster ``labels[i]`` are
    in."""
    out, _ = fold_labels(rows, n_samples, model_fused)
    missing = np.flatnonzero(out < 0)
    if len(missing):
        model_labels = np.asarray(model_labels, dtype=np.int64)
        model_fused = np.asarray(model_fused, dtype=np.int64)
        table = np.zeros((int(model_labels.max()) + 1, int(model_fused.max()) + 1), np.int64)
        np.add.at(table, (model_labels, model_fused), 1)
        out[missing] = np.argmax(table, axis=1)[np.asarray(labels)[missing]]
    return out
