"""Which model fits the data better: held-out log predictive density of several mixture
models fitted to the same training rows and scored on the same held-out rows.

:func:`compare_models` splits the data once at random (or into ``n_splits`` folds), fits a
copy of each candidate estimator on the training rows and scores every held-out row with
:meth:`~dpclust.DPMixture.score_samples`, the log posterior predictive density of a new
point averaged over the kept draws.  The answer, :class:`ModelComparison`, is a table sorted
best first (mean held-out log density per point in nats, its standard error, the paired
difference to the best model and the standard error of that difference), and a sentence
("plackett-luce fits the held-out rankings better by 0.41 ± 0.02 nats per ranking").

The comparison never looks at the family: any estimator with ``fit`` and ``score_samples``
is a candidate, so a family registered later (Plackett–Luce) is compared as it is.

References
----------
Vehtari, A., Gelman, A. & Gabry, J. (2017). Practical Bayesian model evaluation using
    leave-one-out cross-validation and WAIC. Statistics and Computing 27, 1413–1432
    (eqs. 4 and 23–24: the expected log pointwise predictive density of held-out data,
    its standard error, and the paired standard error of a difference).
Miller, J. W. & Dunson, D. B. (2019). Robust Bayesian inference via coarsening. JASA 114
    (a coarsened posterior's predictive is scored as any other).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping

import numpy as np
from ..families import get_family
from ..utils.checks import DataError
from .summary import chains_of

__all__ = ["ModelComparison", "compare_models", "paired_difference", "train_test_indices"]

#: columns of :attr:`ModelComparison.table`, in order
COLUMNS = ("model", "elpd", "se", "elpd_diff", "se_diff", "n_test", "n_clusters",
           "n_large_clusters", "converged", "fit_seconds")

#: a difference larger than this many standard errors is called a difference in the sentence
CLEAR_SE = 2.0


@dataclasses.dataclass(frozen=True)
class ModelComparison:
    """The answer of :func:`compare_models`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model, best first, with the columns of :data:`COLUMNS`: ``elpd`` the
        mean held-out log predictive density per point (nats), ``se`` its standard error,
        ``elpd_diff`` the mean paired difference to the best model (0 for the best, negative
        for the others), ``se_diff`` the standard error of that paired difference,
        ``n_test`` the held-out points, ``n_clusters`` the clusters of the point estimate
        (mean over folds), ``n_large_clusters`` the posterior mean number of clusters with
        at least 1 % of the training points (mean over folds; NaN when the estimator has no
        trace of it), ``converged`` whether every fit passed its convergence rule
        (``convergence_["converged"]``; a comparison of chains that have not converged
        compares the chains, not the models) and ``fit_seconds`` the time to fit (summed
        over folds).
    pointwise : dict of str to ndarray of shape (n_test,)
        Each model's held-out log predictive density of every held-out point, in the order
        of ``test_index``.
    test_index : ndarray of shape (n_test,)
        Row numbers of the held-out points in ``X`` (all rows, fold by fold, with
        ``n_splits``).
    fold : ndarray of shape (n_test,)
        The fold each held-out point was held out in (all 0 for one split).
    estimators : dict of str to list of estimators
        The fitted copies of each model, one per fold.
    noun : str
        What one data point is, from the first model's family ("point", "ranking").
    """

    table: object
    pointwise: dict
    test_index: np.ndarray
    fold: np.ndarray
    estimators: dict
    noun: str = "point"

    @property
    def best(self) -> str:
        """The name of the model with the highest held-out density."""
        return str(self.table["model"].iloc[0])

    @property
    def n_splits(self) -> int:
        return int(self.fold.max()) + 1

    def summary(self) -> str:
        """One sentence: which model fits the held-out points better, by how many nats."""
        return comparison_sentence(self.to_dict())

    def to_frame(self):
        """:attr:`table`, a copy."""
        return self.table.copy()

    def to_dict(self) -> dict:
        """The table and the split as plain Python (for JSON): ``models`` (a list of rows),
        ``n_test``, ``n_splits``, ``noun``."""
        rows = [{k: _plain(v) for k, v in row.items()}
                for row in self.table.to_dict(orient="records")]
        return {"models": rows, "n_test": int(len(self.test_index)),
                "n_splits": self.n_splits, "noun": self.noun}

    def __repr__(self) -> str:
        return f"ModelComparison({self.summary()})\n{self.table.to_string(index=False)}"


def _fit_and_score(name, est, X_train, X_test, noun):
    """``est`` fitted on ``X_train``, its log predictive density of each row of ``X_test``
    and the seconds of the fit."""
    t0 = time.perf_counter()
    est.fit(X_train)
    took = time.perf_counter() - t0
    try:
        scores = np.asarray(est.score_samples(X_test), dtype=np.float64)
    except DataError as exc:
        raise DataError(f"model {name!r} cannot score the held-out {noun}s: {exc}") from None
    return est, scores, took


def compare_models(X, models, *, test_size=None, n_splits=None, random_state=None,
                   ) -> ModelComparison:
    """Compare models by the log predictive density of held-out data.

    Each model is fitted (a fresh copy made from its ``get_params``) to the same training
    rows and scores the same held-out rows with its ``score_samples``: the log posterior
    predictive density ``log p(x | X_train)`` of each held-out point, averaged over the kept
    draws.  Its mean over the held-out points (the expected log pointwise predictive density
    per point, elpd, in nats) is larger for the model that predicts new data better.  The
    models are compared *pointwise on the same held-out points*: the standard error of a
    difference is that of the paired per-point differences, much smaller than the two
    standard errors combined, because the points that are hard for one model are hard for
    the other (Vehtari, Gelman & Gabry 2017, eq. 24, as ``arviz.compare`` reports it).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), sparse matrix, or Rankings
        The data, in the form every model's ``fit`` takes (a
        :class:`~dpclust.rankings.Rankings` or lists of rankings for families of rankings).
    models : mapping of str to estimator
        At least two named candidates, unfitted (they are copied, and left as they are), e.g.
        ``{"mallows": DPMixture(family="mallows"), "plackett-luce":
        DPMixture(family="plackett-luce")}``.  Any estimator with ``fit`` and
        ``score_samples`` will do: other families, priors, samplers, or coarsened fits
        (``coarsening=ALPHA_C``), whose held-out density is still their posterior predictive
        and so a fair yardstick beside the exact posterior's.  The models must read the same
        kind of data (their families' ``data_kind``).
    test_size : float or int, default=None
        The share of rows held out (a float in (0, 1)) or their number (an int from 2 to
        ``n_samples - 2``), for one split; None is 0.2.  Give ``test_size`` or ``n_splits``,
        not both.
    n_splits : int or None, default=None
        K-fold cross-validation instead of one split: the rows in ``n_splits`` random folds
        of (nearly) equal size, every model fitted ``n_splits`` times, each row held out
        once; the table then scores all ``n_samples`` rows.
    random_state : int, Generator or None, default=None
        Seeds the split and every model whose own ``random_state`` is None (from
        independent streams spawned from it, :class:`numpy.random.SeedSequence`); a model
        with a ``random_state`` of its own keeps it.  The same seed gives the same split
        and the same table.

    Returns
    -------
    ModelComparison
        ``.table`` (a pandas DataFrame, best first), ``.summary()`` (one sentence),
        ``.pointwise`` (per-point densities), ``.test_index`` and the fitted copies.

    Raises
    ------
    ValueError
        Fewer than two models, a model that is not an estimator, an unknown family, models
        that read different kinds of data, ``test_size`` or ``n_splits`` out of range, or
        both given.
    DataError
        When a model cannot score a held-out point (said with the model's name).

    Notes
    -----
    **One split by default.**  Each fit is an MCMC run; K-fold costs K runs per model.
    With thousands of held-out points the paired standard error is already small, and a
    single split answers the question asked ("which family predicts new ballots better,
    by how much?") at the cost of one fit per model.  The standard errors describe the
    variation over held-out points for the one training set; ``n_splits`` also averages
    over training sets and uses every row once.

    **Why held-out density and not PSIS-LOO.**  Pareto-smoothed importance-sampling LOO
    (``arviz.loo``) needs the log likelihood of every training point under every kept draw,
    ``log p(x_i | theta^s)``, which the estimators do not keep (n_samples x n_draws floats,
    for families whose parameters are integrated out a different quantity per draw), and
    its importance weights are unreliable exactly where mixtures live: a point that sits in
    a cluster of its own changes the posterior a lot when left out (Pareto k above 0.7).
    Under ``coarsening`` the draws are of the coarsened posterior, so the weights
    ``1 / p(x_i | theta)`` would not even target the leave-one-out posterior.  Held-out
    density needs only ``score_samples`` and one pass over the held-out points, is the
    same for every family, prior and coarsening, and is exact for the split drawn.

    **Units.**  The densities must be of the same data on the same scale for the numbers to
    compare: the families of rankings give probability masses of a top-t ranking given its
    length t, so nats per ranking compare across them.  Two models of different data
    kinds (Gaussian against rankings) are refused.

    References
    ----------
    Vehtari, Gelman & Gabry (2017), eqs. 4, 23 and 24.

    Examples
    --------
    >>> from dpclust import DPMixture, compare_models
    >>> from dpclust.datasets import make_gaussian_mixture
    >>> X, _ = make_gaussian_mixture(n_samples=300, n_clusters=3, random_state=0)
    >>> result = compare_models(X, {"dp": DPMixture(n_iter=50),
    ...                             "one cluster": DPMixture(prior="finite:1", init_clusters=1,
    ...                                                      n_iter=50)},
    ...                         random_state=0)  # doctest: +SKIP
    >>> result.best  # doctest: +SKIP
    'dp'
    """
    models = _check_models(models, X)
    X = _validated(X, next(iter(models.values())))
    n_samples = _n_rows(X)
    seeds = np.random.SeedSequence(_entropy(random_state))
    split_seed, model_seed = seeds.spawn(2)
    folds = _folds(n_samples, test_size, n_splits, np.random.default_rng(split_seed))
    names = list(models)
    streams = dict(zip(names, model_seed.spawn(len(names))))
    pointwise = {name: [] for name in names}
    fitted = {name: [] for name in names}
    seconds = dict.fromkeys(names, 0.0)
    noun = _noun(next(iter(models.values())), X)
    for k, (train, test) in enumerate(folds):
        X_train, X_test = take_rows(X, train), take_rows(X, test)
        for name in names:
            est, scores, took = _fit_and_score(name, _prepared(models[name], streams[name], k),
                                               X_train, X_test, noun)
            seconds[name] += took
            pointwise[name].append(scores)
            fitted[name].append(est)
    return _comparison(folds, pointwise, fitted, seconds, noun)


def _comparison(folds, pointwise, fitted, seconds, noun) -> ModelComparison:
    """The :class:`ModelComparison` of the folds' scores (held-out rows in fold order)."""
    test_index = np.concatenate([test for _, test in folds])
    fold = np.concatenate([np.full(len(test), k) for k, (_, test) in enumerate(folds)])
    pointwise = {name: np.concatenate(parts) for name, parts in pointwise.items()}
    return ModelComparison(table=_table(pointwise, fitted, seconds), pointwise=pointwise,
                           test_index=test_index, fold=fold, estimators=fitted, noun=noun)


# -------------------------------------------------------------------------------- the maths


def paired_difference(a, b) -> tuple[float, float]:
    """Mean per-point difference ``a - b`` and its standard error.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Two models' log predictive densities of the same n points.

    Returns
    -------
    diff : float
        ``mean(a - b)``, nats per point.
    se : float
        ``sqrt(n * var(a - b)) / n``: the standard error of the summed difference (as
        ``arviz.compare``'s ``dse``, Vehtari, Gelman & Gabry 2017, eq. 24), per point.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    return float(d.mean()), float(math.sqrt(n * d.var()) / n)


def _elpd(pointwise) -> tuple[float, float]:
    """Mean log predictive density per point and its standard error (eq. 23 per point)."""
    p = np.asarray(pointwise, dtype=np.float64)
    return float(p.mean()), float(math.sqrt(p.size * p.var()) / p.size)


def _table(pointwise: dict, fitted: dict, seconds: dict):
    import pandas as pd

    order = sorted(pointwise, key=lambda name: -float(np.mean(pointwise[name])))
    best = pointwise[order[0]]
    rows = []
    for name in order:
        elpd, se = _elpd(pointwise[name])
        diff, se_diff = paired_difference(pointwise[name], best)
        rows.append({"model": name, "elpd": elpd, "se": se, "elpd_diff": diff,
                     "se_diff": se_diff, "n_test": int(pointwise[name].size),
                     "n_clusters": _mean(getattr(e, "n_clusters_", np.nan) for e in fitted[name]),
                     "n_large_clusters": _mean(_large_clusters(e) for e in fitted[name]),
                     "converged": all(bool(getattr(e, "convergence_", {}).get("converged", True))
                                      for e in fitted[name]),
                     "fit_seconds": seconds[name]})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _large_clusters(est) -> float:
    """Posterior mean number of clusters with at least 1 % of the points (NaN: no trace)."""
    trace = getattr(est, "trace_", None)
    large = getattr(trace, "n_large_clusters", None)
    if large is None:
        return float("nan")
    kept = chains_of(large)[:, trace.kept]
    return float(kept.mean()) if kept.size else float("nan")


def _mean(values) -> float:
    values = [float(v) for v in values]
    return float(np.mean(values)) if values else float("nan")


def comparison_sentence(result: Mapping) -> str:
    """The sentence of a comparison (its :meth:`ModelComparison.to_dict`): the best model
    against the runner-up, by how many nats per point, and on how many held-out points."""
    rows, noun = result["models"], result.get("noun", "point")
    best, second = rows[0], rows[1]
    n = int(result["n_test"])
    gap, se = -float(second["elpd_diff"]), float(second["se_diff"])
    held = (f"{n:,} held-out {noun}s" if int(result.get("n_splits", 1)) == 1
            else f"{n:,} {noun}s, each held out once in {result['n_splits']} folds")
    by = _plus_minus(gap, se)
    if gap > CLEAR_SE * se:
        text = (f"{best['model']} fits the held-out {noun}s better than {second['model']} by "
                f"{by} nats per {noun} ({held})")
    else:
        text = (f"{best['model']} and {second['model']} fit the held-out {noun}s about as "
                f"well: {best['model']} is ahead by {by} nats per {noun}, within "
                f"{CLEAR_SE:g} standard errors ({held})")
    if len(rows) > 2:
        text += f"; {len(rows) - 2} more model{'s' if len(rows) > 3 else ''} behind"
    return text


def _plus_minus(value: float, se: float) -> str:
    """``value ± se`` with the standard error to two significant digits and the value to
    the same decimals (at least two): ``0.41 ± 0.02``, ``2.505 ± 0.076``."""
    digits = 2 if not se > 0 else min(6, max(2, 1 - math.floor(math.log10(se))))
    return f"{value:.{digits}f} ± {se:.{digits}f}"


# ------------------------------------------------------------------------ split and checks


def train_test_indices(n_samples: int, *, test_size=None, n_splits=None, random_state=None):
    """The (train, test) row numbers of each split :func:`compare_models` makes.

    Parameters
    ----------
    n_samples : int
    test_size, n_splits, random_state
        As for :func:`compare_models`; here ``random_state`` seeds the split alone.

    Returns
    -------
    list of (ndarray, ndarray)
        Sorted training and held-out row numbers, one pair per split.
    """
    rng = np.random.default_rng(np.random.SeedSequence(_entropy(random_state)).spawn(2)[0])
    return _folds(n_samples, test_size, n_splits, rng)


def _folds(n_samples, test_size, n_splits, rng) -> list:
    if test_size is not None and n_splits is not None:
        raise ValueError("give test_size (one split) or n_splits (K-fold), not both")
    order = rng.permutation(n_samples)
    if n_splits is not None:
        if (isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer))
                or not 2 <= n_splits <= n_samples // 2):
            raise ValueError(f"n_splits must be an int from 2 to n_samples // 2 = "
                             f"{n_samples // 2}, got {n_splits!r}")
        parts = np.array_split(order, int(n_splits))
    else:
        n_test = _n_test(n_samples, 0.2 if test_size is None else test_size)
        parts = [order[:n_test]]
    out = []
    for test in parts:
        train = np.setdiff1d(order, test)
        out.append((train, np.sort(test)))
    return out


def _n_test(n_samples: int, test_size) -> int:
    """The number of held-out rows: at least 2 held out and 2 to train on."""
    if isinstance(test_size, bool):
        raise ValueError(f"test_size must be a float in (0, 1) or an int, got {test_size!r}")
    if isinstance(test_size, (int, np.integer)):
        n_test = int(test_size)
    elif isinstance(test_size, (float, np.floating)) and 0 < test_size < 1:
        n_test = int(math.ceil(float(test_size) * n_samples))
    else:
        raise ValueError(f"test_size must be a float in (0, 1) (the share held out) or an "
                         f"int (the number held out), got {test_size!r}")
    if not 2 <= n_test <= n_samples - 2:
        raise ValueError(f"test_size={test_size!r} holds out {n_test} of {n_samples} rows; "
                         f"hold out at least 2 and leave at least 2 to fit on")
    return n_test


def _check_models(models, X) -> dict:
    if not isinstance(models, Mapping):
        raise ValueError(f"models must be a mapping of names to estimators, e.g. "
                         f"{{'mallows': DPMixture(family='mallows'), ...}}; got "
                         f"{type(models).__name__}")
    if len(models) < 2:
        raise ValueError(f"compare at least 2 models; got {len(models)}")
    kinds = {}
    for name, est in models.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"model names must be non-empty strings, got {name!r}")
        if not (hasattr(est, "fit") and hasattr(est, "score_samples")
                and hasattr(est, "get_params")):
            raise ValueError(f"model {name!r} is not an estimator with fit and "
                             f"score_samples (got {type(est).__name__})")
        family = getattr(est, "family", None)
        if family is not None:
            try:
                kinds[name] = get_family(family, X).data_kind
            except ValueError as exc:
                raise ValueError(f"model {name!r}: {exc}") from None
    if len(set(kinds.values())) > 1:
        said = ", ".join(f"{name!r} reads {kind}" for name, kind in kinds.items())
        raise ValueError(f"the models must read the same kind of data to be scored on the "
                         f"same held-out rows: {said}")
    return dict(models)


def _prepared(model, stream: np.random.SeedSequence, fold: int):
    """A fresh, unfitted copy of ``model`` for fold ``fold``, seeded from ``stream`` when it
    has no ``random_state`` of its own.

    The copy is made from ``get_params(deep=False)``, as :func:`sklearn.base.clone` makes
    it but without cloning the parameters: a family object passed as ``family`` is shared,
    which is safe because ``fit`` works on a copy of it (and ``clone`` cannot copy a
    family, whose ``get_params`` takes no ``deep``)."""
    params = model.get_params(deep=False)
    est = type(model)(**params)
    if "random_state" in params and params["random_state"] is None:
        seed = int(np.random.SeedSequence(stream.entropy, spawn_key=(*stream.spawn_key, fold)
                                          ).generate_state(1)[0])
        est.set_params(random_state=seed)
    return est


def _entropy(random_state):
    """``random_state`` as entropy for a SeedSequence (a Generator gives a draw of its own)."""
    if random_state is None or isinstance(random_state, (int, np.integer)) and not isinstance(
            random_state, bool) and random_state >= 0:
        return None if random_state is None else int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63))
    raise ValueError(f"random_state must be None, a non-negative int or a "
                     f"numpy.random.Generator, got {random_state!r}")


def _validated(X, model):
    """``X`` in the working form of the first model's family (checked once, before it is
    split: lists of rankings by name become one :class:`~dpclust.rankings.Rankings` over
    every item, so that the training and held-out parts share the items)."""
    family = getattr(model, "family", None)
    return X if family is None else get_family(family, X).validate(X)


def _noun(model, X) -> str:
    family = getattr(model, "family", None)
    if family is None:
        return "point"
    return getattr(get_family(family, X), "noun", "point")


def _n_rows(X) -> int:
    shape = getattr(X, "shape", None)
    n = int(shape[0]) if shape is not None and len(shape) >= 1 else len(X)
    if n < 4:
        raise DataError(f"comparing models needs at least 4 rows (2 to fit, 2 held out), "
                        f"got {n}")
    return n


def take_rows(X, index):
    """The rows ``index`` of ``X``: an array, a sparse matrix, a
    :class:`~dpclust.rankings.Rankings`, a DataFrame or a list."""
    if hasattr(X, "iloc"):
        return X.iloc[index]
    if isinstance(X, (list, tuple)):
        return [X[i] for i in index]
    return X[index]


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
