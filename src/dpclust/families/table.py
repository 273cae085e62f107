"""Tables of independent columns: real, yes/no, category and count columns side by side.

Within a cluster the columns are independent, so the likelihood of a row is the product of
one family per column (a product family): Normal–Gamma for real columns (a diagonal
Gaussian), Beta–Bernoulli for yes/no columns, Dirichlet–categorical for categories and
Gamma–Poisson for counts.  Every factor is conjugate, so the product is: its log marginal
is the sum of the columns' (:mod:`dpclust.families._table_math`), and the collapsed and
sub-cluster samplers run on it unchanged.

* :class:`TableFamily` (``family="table"``, and what ``family="auto"`` picks for a
  DataFrame) reads a kind per column from the data (:func:`dpclust.tables.infer_schema`);
* :class:`DiagonalGaussian`, :class:`BetaBernoulli`, :class:`DirichletCategorical` and
  :class:`GammaPoisson` are the same family with every column of one kind.

**Missing cells** (NaN, None, empty) are left out of the likelihood: under
missing-at-random that is exact, the marginal of the observed cells in closed form.
**Row weights** (``sample_weight``) raise each row's likelihood to its weight.

References
----------
Bernardo, J. M. & Smith, A. F. M. (1994). Bayesian Theory (the conjugate pairs).
Little, R. J. A. & Rubin, D. B. (2019). Statistical Analysis with Missing Data, 3rd ed.
    (ignorability under missing-at-random).
Liverani, S. et al. (2015). PReMiuM: profile regression mixtures. J. Stat. Softw. 64(7)
    (mixtures of mixed covariates, the profile plots).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import gammaln

from ..tables import Schema, TableData, check_table
from ..tables.axes import PrincipalAxes, takes_axes, turned
from ..utils.checks import check_scale
from . import _table_kernels as _k
from . import _table_math as _m
from ._table_entry import ENTRY_POINTS
from .gaussian import MAX_SUMMARY_FEATURES, NormalInverseWishart
from .base import (CLUSTER_PARAMS_FILE, ClusterSummary, ConjugateFamily, FamilyKernel,
                   HyperParameter, PassKernel, positive_or_gamma, register_family, rounded, take)
from ._table_math import TableParams, TableStats
from .identical import array_row_keys, distinct_keys

_LOG_2PI = float(np.log(2.0 * np.pi))


#: ``"resolve"``: the function that makes a table whose real columns take one
#: full-covariance Gaussian into that family, ``(table, summary) -> family``; registered by
#: :mod:`~dpclust.families.gaussian_table_holes`
FULL_COVARIANCE: dict = {}


class TableSummary(NamedTuple):
    """What the data-driven defaults need, mergeable across parts of the data: the schema,
    rows, and per real column the observed count, mean and centred sum of squares, per count
    column the observed count and sum."""

    schema: Schema
    n: int
    gn: np.ndarray
    gmean: np.ndarray
    gm2: np.ndarray
    pn: np.ndarray
    ps: np.ndarray
    #: the real columns' count, mean and scatter (the Gaussian family's summary) where they
    #: have no holes, else None
    real: Any = None
    #: whether some row weighs other than 1
    weighted: bool = False
    #: the Gaussian family's summary of the rows whose real columns are complete (the
    #: correlations of the full covariance's default scale when some cells are missing)
    complete_real: Any = None


def _axes_option(text: str) -> str | None:
    """The command line's ``--axes``: ``principal``, ``auto`` or ``none`` (the columns as
    given)."""
    if text not in ("principal", "auto", "none"):
        raise ValueError(f"expected 'principal', 'auto' or 'none', got {text!r}")
    return text


@register_family
class TableFamily(ConjugateFamily):
    """Rows of a table whose columns are independent within a cluster, each with its
    conjugate family; missing cells left out exactly.

    Parameters
    ----------
    kinds : dict of str to str, optional
        A kind per column name (``"gaussian"``, ``"bernoulli"``, ``"categorical"``,
        ``"poisson"``, ``"drop"``) overriding what the data suggest
        (:func:`dpclust.tables.infer_schema`).
    kappa : float or GammaPrior, default=0.01
        Prior pseudo-count of a real column's cluster mean, as for the Gaussian family: the
        prior on a cluster mean is ten cluster widths wide.  A
        :class:`~dpclust.priors.GammaPrior` learns it.
    shape : float, default=1.5
        ``a0`` of the Gamma prior on a real column's precision (1.5: the precision of one
        column of a three-degree-of-freedom Inverse-Wishart).
    concentration : float or GammaPrior, default=1.0
        The Dirichlet (Beta) prior on each category (yes/no) column's shares, per level:
        1 is uniform.  A :class:`~dpclust.priors.GammaPrior` learns it from the data (one
        value for every level).
    scale : GammaPrior, optional
        Learn a factor of the real columns' default prior variance (below) under this
        prior: how wide clusters are, from the data.  None: the factor is 1.
    count_shape : float, default=1.0
        Shape of the Gamma prior on a count column's rate; its mean is the column's mean.
    axes : {None, "none", "principal", "auto"}, default=None
        ``"principal"``: the real columns standardised and turned to their principal axes
        before they are clustered (:mod:`dpclust.tables.axes`; complete rows only, diagonal
        covariance).  Every cluster then shares the data's orientation, with its own
        spread along each axis: where the columns grow together, diagonal clusters no
        longer have to cut the one elongated cloud into slices.  Cluster means, variances
        (and ``cluster_params_["covariances"]``) and densities are reported in the columns
        as given.  ``"auto"`` (what ``family="auto"`` gives a table): the principal axes
        where the training rows' real columns are complete, their covariance diagonal, and
        :func:`~dpclust.tables.axes.takes_axes` holds (2 to 150 columns, at least three
        rows a column and fewer than the columns squared); else the columns as given.
        ``"none"`` is None (the command line's ``--axes none``).

    Notes
    -----
    Data-driven defaults, as the Gaussian family's (Fraley & Raftery 2007): a real column's
    prior mean is its observed mean and the prior mean of its variance within a cluster is
    ``v / 10 ** (2 / dg)``, ``v`` its observed variance and ``dg`` the number of real
    columns (a cluster fills a tenth of the data's volume); a count column's rate has prior
    mean equal to the column's mean.
    """

    name = "table"
    title = "Table of independent columns"
    describes = "tables of mixed columns with holes"
    data_kind = "table"
    #: below 5,000 rows ``sampler="auto"`` takes Gibbs with ten merge-split proposals a sweep:
    #: categories make clusters of a few percent (an island's birds of one sex) that come
    #: and go over thousands of iterations.  Palmer penguins, four chains until the rule
    #: passes: 54 s with ten, 78 s with three, not within 50,000 iterations with one
    auto_sampler_options = {"gibbs+sams": {"n_proposals": 10}}
    noun = "row"
    #: every column of this kind (the single-kind families), or None: a kind per column
    kind: str | None = None
    hyperparameters = (
        HyperParameter("kappa", positive_or_gamma, metavar="K",
                       help="prior pseudo-count of a cluster's mean (default: 0.01; "
                            "gamma:SHAPE,RATE learns it)"),
        HyperParameter("concentration", positive_or_gamma, default=1.0, metavar="BETA",
                       help="prior Dirichlet concentration of each category or yes/no "
                            "column, per level (default: 1.0; gamma:SHAPE,RATE learns it)"),
        HyperParameter("axes", _axes_option, metavar="principal|auto|none",
                       help="'principal': the real columns standardised and turned to their "
                            "principal axes (complete rows; diagonal clusters sharing the "
                            "data's orientation); 'auto' (with --family auto): so where the "
                            "real columns are complete, with 3 to d-1 rows a column for d "
                            "of them; 'none' (otherwise the default): the columns as given"),
    )
    supports_weights = True

    learnable = ("kappa", "scale", "concentration")

    def __init__(self, kinds=None, covariance="auto", kappa=None, shape=1.5, concentration=1.0,
                 count_shape=1.0, scale=None, axes=None):
        self.kinds = kinds
        self.axes = axes
        self.covariance = covariance
        self.scale = scale
        self.kappa = kappa
        self.shape = shape
        self.concentration = concentration
        self.count_shape = count_shape
        self.schema_ = None
        self.hyper_ = None

    def get_params(self, deep: bool = True) -> dict:
        return {"kinds": self.kinds, "covariance": self.covariance, "kappa": self.kappa,
                "shape": self.shape, "concentration": self.concentration,
                "count_shape": self.count_shape, "scale": self.scale, "axes": self.axes}

    # ------------------------------------------------------------------ set-up
    def validate(self, X, *, what="X") -> TableData:
        if self.schema_ is not None:
            data = check_table(X, self.schema_, what=what)
        else:
            data = check_table(X, kinds=self.kinds, kind=self.kind, what=what)
        # the real columns' sums of squares, as the Gaussian family's
        check_scale(data.real, what=what, names=[c.name for c in data.schema.real])
        return self._turned(data, what) if self._takes_axes(data) else data

    def _takes_axes(self, data: TableData) -> bool:
        """Whether ``data``'s real columns are turned: ``axes="principal"``; under
        ``"auto"`` as the resolved family was, or before it is resolved (the training rows)
        where :func:`~dpclust.tables.axes.takes_axes` holds of complete real columns fitted
        with diagonal clusters."""
        if self.axes not in (None, "none", "principal", "auto"):
            raise ValueError(f"axes must be None ('none'), 'principal' or 'auto', got "
                             f"{self.axes!r}")
        if self.axes != "auto":
            return self.axes == "principal"
        if self.schema_ is not None:
            return self.schema_.axes is not None
        return (self.covariance in ("auto", "diagonal") and not np.isnan(data.real).any()
                and takes_axes(*data.real.shape))

    def _turned(self, data: TableData, what: str) -> TableData:
        """``data`` with its real columns in their principal axes: this family's once
        resolved, else the axes of ``data`` itself (the training rows)."""
        if data.schema.axes is not None:  # already turned
            return data
        fitted = None if self.schema_ is None else self.schema_.axes
        return turned(data, fitted if fitted is not None else PrincipalAxes.of(data.real, what))

    def settings(self) -> dict:
        """The base class's, with ``axes="auto"`` shown as the fit resolved it
        (``"principal"`` or None)."""
        out = super().settings()
        if self.axes == "auto" and self.schema_ is not None:
            out["axes"] = "principal" if self.schema_.axes is not None else None
        return out

    @property
    def log_jacobian(self) -> float:
        return 0.0 if self.schema_ is None or self.schema_.axes is None \
            else self.schema_.axes.log_jacobian

    @property
    def is_resolved(self) -> bool:
        return self.hyper_ is not None

    def n_features(self) -> int:
        if self.schema_ is None:
            raise ValueError("the family has no columns until it is resolved on data")
        return len(self.schema_.columns)

    @property
    def feature_names(self) -> list[str]:
        return self.schema_.names

    def summarize(self, X: TableData) -> TableSummary:
        s = _m.table_stats(X, np.zeros(len(X), dtype=np.intp), 1, X.schema.offsets)
        real = complete_real = None
        dg = X.real.shape[1]
        if self.kind is None and (self.covariance == "full"
                                  or (self.covariance == "auto" and 2 <= dg < 50)):
            complete = ~np.isnan(X.real).any(axis=1)
            complete_real = NormalInverseWishart().summarize(X.real[complete])
            real = complete_real if complete.all() else None
        return TableSummary(X.schema, len(X), s.gn[0], s.gmean[0], s.gm2[0], s.pn[0], s.ps[0],
                            real, bool(np.any(X.weight != 1.0)), complete_real)

    def merge_summaries(self, a: TableSummary, b: TableSummary) -> TableSummary:
        if not a.schema.same_columns(b.schema):
            raise ValueError("parts of the data have different columns or levels")
        if a.schema.axes is not b.schema.axes:
            raise ValueError("principal axes (axes='principal') are found from every row at "
                             "once; parts of the data validated apart have axes of their own")
        one = _m.combine(*(_m.TableStats(np.array([s.n], float), s.gn[None], s.gmean[None],
                                         s.gm2[None], np.zeros((1, 0)), np.zeros((1, 0)),
                                         s.pn[None], s.ps[None], np.zeros(1)) for s in (a, b)))
        real = (NormalInverseWishart().merge_summaries(a.real, b.real)
                if a.real is not None and b.real is not None else None)
        complete = (NormalInverseWishart().merge_summaries(a.complete_real, b.complete_real)
                    if a.complete_real is not None and b.complete_real is not None else None)
        return TableSummary(a.schema, a.n + b.n, one.gn[0], one.gmean[0], one.gm2[0],
                            one.pn[0], one.ps[0], real, a.weighted or b.weighted, complete)

    def resolve(self, X) -> "TableFamily":
        if not isinstance(X, TableData):
            X = self.validate(X)
        return self.resolve_summary(self.summarize(X))

    def full_covariance(self, summary: TableSummary) -> bool:
        """Whether the real columns take one full-covariance Gaussian (``covariance="full"``,
        with holes in them too (:mod:`~dpclust.families.gaussian_table_holes`), or ``"auto"``
        with 2 to 49 real columns, none with holes, at least as many rows as their number
        squared, and no power weights: the rule of
        :func:`~dpclust.families.numbers_family`)."""
        cov = self.covariance if self.kind is None else "diagonal"
        if cov not in ("auto", "full", "diagonal"):
            raise ValueError(f"covariance must be 'auto', 'full' or 'diagonal', got {cov!r}")
        if cov == "full":
            return True
        return (cov == "auto" and summary.real is not None and not summary.weighted
                and 2 <= len(summary.schema.real) < 50
                and summary.n >= len(summary.schema.real) ** 2)

    def resolve_summary(self, summary: TableSummary) -> "TableFamily":
        if self.full_covariance(summary):
            if summary.schema.axes is not None:
                raise ValueError("axes='principal' turns real columns for diagonal clusters; "
                                 "give covariance='diagonal' (or use the full covariance "
                                 "without axes)")
            # the full-covariance families build on this module, which so imports neither:
            # ``dpclust.families`` imports them, and they register their resolver
            return self._keep_hyperpriors(FULL_COVARIANCE["resolve"](self, summary))
        return self._keep_hyperpriors(
            self._resolve_columns(summary, n_real=len(summary.schema.real)))

    def _resolve_columns(self, summary: TableSummary, n_real: int) -> "TableFamily":
        schema = summary.schema
        dg = n_real
        var = np.divide(summary.gm2, summary.gn - 1.0, out=np.ones(dg), where=summary.gn > 1.5)
        scale = np.where(np.isfinite(var) & (var > 0), var, 1.0)
        scale = np.maximum(scale, 1e-12 * max(float(scale.mean()) if dg else 1.0, 1e-300))
        learned = self.hyperpriors()
        start = {name: prior.start for name, prior in learned.items()}
        kappa = start.get("kappa", 0.01 if self.kappa is None else self.kappa)
        kappa = float(kappa)
        shape = float(self.shape)
        for value, what in ((kappa, "kappa"), (shape, "shape"),
                            (float(self.count_shape), "count_shape")):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{what} must be positive and finite, got {value}")
        # prior mean of the variance b0 / (a0 - 1) = var / 10 ** (2 / dg) (for a0 > 1)
        b0 = max(shape - 1.0, 0.5) * scale / 10.0 ** (2.0 / max(dg, 1))
        offsets = schema.offsets
        conc = np.asarray(start.get("concentration", self.concentration), dtype=np.float64)
        alpha = np.full(int(offsets[-1]), float(conc)) if conc.ndim == 0 else conc
        if alpha.shape != (int(offsets[-1]),) or not np.all(np.isfinite(alpha)) \
                or np.any(alpha <= 0):
            raise ValueError(f"concentration must be a positive number (or one per level, "
                             f"{int(offsets[-1])} in all)")
        mean_count = np.divide(summary.ps, summary.pn, out=np.ones(len(summary.ps)),
                               where=summary.pn > 0)
        cshape = np.full(len(schema.counts), float(self.count_shape))
        out = type(self)(**self.get_params())
        out.schema_ = schema
        if self.scale is not None and "scale" not in learned:
            raise ValueError("a table's scale is a factor of its real columns' default prior "
                             "variance: give a GammaPrior (to learn it) or leave it None")
        out._base_hyper = _m.Hyper(np.asarray(summary.gmean, dtype=np.float64),
                                   np.full(dg, kappa), np.full(dg, shape), b0, alpha, offsets,
                                   cshape, cshape / np.maximum(mean_count, 1e-3))
        out._learned = {}
        return out.at(start) if learned else out._set_hyper()

    def _set_hyper(self) -> "TableFamily":
        """``hyper_`` from the resolved prior with the learned values of ``_learned``."""
        h, v = self._base_hyper, self._learned
        self.hyper_ = h._replace(
            kappa0=np.full(len(h.m0), v["kappa"]) if "kappa" in v else h.kappa0,
            b0=h.b0 * v.get("scale", 1.0),
            alpha=np.full(len(h.alpha), v["concentration"]) if "concentration" in v
            else h.alpha)
        return self

    def at(self, values: dict) -> "TableFamily":
        """This resolved family with the learned ``kappa``, ``scale`` (the factor of the
        real columns' default prior variance) and ``concentration`` (every level's) at
        ``values``; a full-covariance block's Gaussian follows ``kappa`` and ``scale``."""
        out = type(self)(**self.get_params())
        out.__dict__.update(self.__dict__)
        out._learned = {**self._learned, **{k: float(v) for k, v in values.items()}}
        niw = getattr(self, "niw_", None)
        if niw is not None and niw.hyperpriors():
            out.niw_ = niw.at({k: v for k, v in out._learned.items() if k in ("kappa", "scale")})
        return out._set_hyper()

    def learned_values(self) -> dict:
        return {name: float(self._learned[name]) for name in self.hyperpriors()}

    def kernel_hyper(self, kernel):
        return self._khyper() if getattr(self, "niw_", None) is None else None

    @property
    def hyper(self) -> _m.Hyper:
        if self.hyper_ is None:
            raise ValueError("the family has no prior until it is resolved on data")
        return self.hyper_

    def _dims(self):
        s = self.schema_
        return len(s.real), len(s.coded), int(s.offsets[-1]), len(s.counts)

    # ------------------------------------------------------------ statistics
    def stats(self, X, labels=None, n_clusters=None) -> TableStats:
        n = len(X)
        if labels is None:
            labels = np.zeros(n, dtype=np.intp)
            n_clusters = 1
        labels = np.asarray(labels, dtype=np.intp)
        if n_clusters is None:
            n_clusters = int(labels.max()) + 1 if n else 0
        return _m.table_stats(X, labels, n_clusters, self.hyper.offsets)

    def empty_stats(self, n_clusters=1) -> TableStats:
        return _m.empty_stats(n_clusters, *self._dims())

    def combine(self, a, b):
        return _m.combine(a, b)

    def subtract(self, a, b):
        return _m.subtract(a, b)

    def reweight(self, stats, factor):
        return _m.reweight(stats, factor)

    def count(self, stats) -> np.ndarray:
        return np.asarray(stats.rows)

    def n_points(self, X) -> int:
        return len(X)

    def subset(self, X, index):
        return X[np.asarray(index) if not isinstance(index, slice) else index]

    def distinct(self, X):
        return distinct_keys(self.row_keys(X))

    def row_keys(self, X) -> list[bytes]:
        """Each row's cells and weight as bytes, a hole equal to a hole in the same column:
        the people of a frequency table's row, or a survey's identical answers."""
        cells = np.hstack([X.real, X.code.astype(np.float64), X.count,
                           np.asarray(X.weight, dtype=np.float64)[:, None]])
        return array_row_keys(np.where(np.isnan(cells), np.nan, cells))

    def stack_rows(self, parts: list) -> TableData:
        return TableData.stack(parts)

    # -------------------------------------------------------------- posterior
    def posterior(self, stats):
        mn, kn, an, bn = _m.normal_gamma_posterior(stats, self.hyper)
        h = self.hyper
        return {"mean": mn, "kappa": kn, "shape": an, "rate": bn,
                "concentration": h.alpha + stats.cc, "count_shape": h.shape + stats.ps,
                "count_rate": h.rate + stats.pn}

    def log_marginal(self, stats) -> np.ndarray:
        return _m.log_marginal(stats, self.hyper)

    def log_predictive(self, X, stats) -> np.ndarray:
        return _m.log_predictive(X, stats, self.hyper)

    def sample_posterior(self, stats, rng) -> TableParams:
        return _m.sample_posterior(stats, self.hyper, rng)

    def point_params(self, stats, rng=None) -> TableParams:
        return _m.point_params(stats, self.hyper)

    def log_likelihood(self, X, params) -> np.ndarray:
        return _m.log_likelihood(X, params, self.hyper)

    def log_prior(self, params) -> np.ndarray:
        return self.log_posterior_density(params, self.empty_stats(len(params.mean)))

    def weighted_stats(self, X, weights) -> TableStats:
        """Statistics with row ``i`` counted ``weights[i, k]`` times in component ``k``."""
        W = np.asarray(weights, dtype=np.float64)
        return _m.weighted_stats(X, W, self.hyper)

    def log_posterior_density(self, params, stats) -> np.ndarray:
        return _m.log_posterior_density(params, stats, self.hyper)

    def sample_data(self, params: TableParams, components, rng) -> TableData:
        """One row per entry (no holes, weight 1)."""
        comps = np.asarray(components, dtype=np.intp)
        n = len(comps)
        real = params.mean[comps] + rng.standard_normal((n, params.mean.shape[1])) \
            / np.sqrt(params.precision[comps])
        offsets = self.hyper.offsets
        code = np.empty((n, len(offsets) - 1), dtype=np.int64)
        for j in range(len(offsets) - 1):
            p = np.exp(params.log_prob[comps, offsets[j]:offsets[j + 1]])
            u = rng.random(n)[:, None]
            code[:, j] = np.minimum((np.cumsum(p, axis=1) < u * p.sum(axis=1, keepdims=True))
                                    .sum(axis=1), offsets[j + 1] - offsets[j] - 1)
        count = rng.poisson(np.exp(params.log_rate[comps])).astype(np.float64)
        return TableData(real, code, count, np.ones(n), self.schema_)

    def mean_params(self, stats) -> dict:
        mn, kn, an, bn = _m.normal_gamma_posterior(stats, self.hyper)
        conc = self.hyper.alpha + stats.cc
        probs = conc / _m.segment_sums(conc, self.hyper.offsets)[:, _m.level_column(
            self.hyper.offsets)]
        out = {"means": mn, "variances": bn / np.maximum(an - 1.0, 0.5),
               "probabilities": probs,
               "rates": (self.hyper.shape + stats.ps) / (self.hyper.rate + stats.pn)}
        axes = None if self.schema_ is None else self.schema_.axes
        if axes is not None:  # in the columns as given
            out.update(means=axes.backward(mn), variances=axes.column_variances(out["variances"]),
                       covariances=axes.covariances(out["variances"]))
        return out

    # ---------------------------------------------------------------- kernels
    def _kdata(self, X: TableData) -> tuple:
        code = np.where(X.code >= 0, X.code + self.hyper.offsets[:-1][None, :], -1)
        return (np.ascontiguousarray(X.real - self.hyper.m0, dtype=np.float64),
                np.ascontiguousarray(code, dtype=np.int64),
                np.ascontiguousarray(X.count, dtype=np.float64),
                np.ascontiguousarray(X.weight, dtype=np.float64),
                np.ascontiguousarray(X.log_fact, dtype=np.float64))

    def _khyper(self) -> tuple:
        h = self.hyper
        g = np.vstack([h.kappa0, h.a0, h.b0, h.a0 * np.log(h.b0) - gammaln(h.a0)]) \
            if len(h.m0) else np.zeros((4, 0))
        p = np.vstack([h.shape, h.rate, h.shape * np.log(h.rate) - gammaln(h.shape)]) \
            if len(h.shape) else np.zeros((3, 0))
        return (np.ascontiguousarray(g), np.ascontiguousarray(h.alpha, dtype=np.float64),
                np.ascontiguousarray(h.alpha_sum, dtype=np.float64),
                np.ascontiguousarray(h.offsets, dtype=np.int64), np.ascontiguousarray(p))

    def kernel(self, X) -> FamilyKernel:
        dg, dc, C, dp = self._dims()

        def alloc(capacity: int):
            z = np.zeros
            return (z(capacity), z((capacity, dg)), z((capacity, dg)), z((capacity, dg)),
                    z((capacity, dc)), z((capacity, C)), z((capacity, dp)), z((capacity, dp)),
                    z(capacity), z((capacity, dg)), z((capacity, dg)), z((capacity, dg)),
                    z((capacity, dg)))

        return FamilyKernel(data=self._kdata(X), hyper=self._khyper(), alloc=alloc,
                            reset=_k._tab_reset, add=_k._tab_add, remove=_k._tab_remove,
                            log_predictive=_k._tab_log_predictive,
                            log_marginal=_k._tab_log_marginal, entry_points=ENTRY_POINTS,
                            log_join_gain=_k._tab_log_join_gain)

    def pass_kernel(self, X, summary=None) -> PassKernel:
        dg, dc, C, dp = self._dims()
        m0 = self.hyper.m0

        def pack(params: TableParams):
            tau = params.precision
            return (np.ascontiguousarray(params.mean - m0),
                    np.ascontiguousarray(0.5 * (np.log(tau) - _LOG_2PI)),
                    np.ascontiguousarray(0.5 * tau),
                    np.ascontiguousarray(params.log_prob),
                    np.ascontiguousarray(params.log_rate),
                    np.ascontiguousarray(np.exp(params.log_rate)))

        def unpack(acc):
            acc = np.asarray(acc, dtype=np.float64)
            gn = acc[:, 1:1 + dg]
            gs = acc[:, 1 + dg:1 + 2 * dg]
            gq = acc[:, 1 + 2 * dg:1 + 3 * dg]
            mean = np.divide(gs, gn, out=np.zeros_like(gs), where=gn > 0)
            m2 = np.maximum(gq - mean * gs, 0.0)
            b = 1 + 3 * dg
            return TableStats(acc[:, 0].copy(), gn.copy(), mean + m0, m2,
                              acc[:, b:b + dc].copy(), acc[:, b + dc:b + dc + C].copy(),
                              acc[:, b + dc + C:b + dc + C + dp].copy(),
                              acc[:, b + dc + C + dp:b + dc + C + 2 * dp].copy(),
                              acc[:, -1].copy())

        return PassKernel(data=self._kdata(X), n_stats=2 + 3 * dg + dc + C + 2 * dp, pack=pack,
                          unpack=unpack, log_likelihood=_k._tab_log_likelihoods,
                          accumulate=_k._tab_accumulate, entry_points=ENTRY_POINTS)

    def init_features(self, X: TableData) -> np.ndarray:
        """Real columns standardised (holes at the column mean), levels one-hot, counts as
        standardised ``log(1 + x)``: a matrix k-means can start from."""
        return self.init_features_like(X, X)

    def init_features_like(self, X: TableData, reference: TableData) -> np.ndarray:
        """:meth:`init_features` of ``X`` standardised by the columns of ``reference``."""
        parts = []
        if X.real.shape[1]:
            parts.append(_standardise(X.real, reference.real))
        offsets = self.hyper.offsets
        if len(offsets) > 1:
            hot = np.zeros((len(X), int(offsets[-1])))
            for j in range(len(offsets) - 1):
                c = X.code[:, j]
                rows = np.flatnonzero(c >= 0)
                hot[rows, offsets[j] + c[rows]] = np.sqrt(0.5)
            parts.append(hot)
        if X.count.shape[1]:
            parts.append(_standardise(np.log1p(X.count), np.log1p(reference.count)))
        return np.hstack(parts)

    def seed_subclusters(self, stats, rng):
        """Two draws per cluster from its posterior given two rows' worth of evidence."""
        weak = self.reweight(stats, np.minimum(1.0, 2.0 / np.maximum(stats.rows, 1.0)))
        return self.sample_posterior(take(weak, np.repeat(np.arange(len(stats.rows)), 2)), rng)

    # ------------------------------------------------------------- distances
    def hellinger(self, params: TableParams) -> np.ndarray:
        """Hellinger distance between components' row densities: ``H = sqrt(1 - BC)`` with
        the Bhattacharyya coefficient the product of the columns' (independent columns)."""
        log_bc = _pairwise_log_bc(params, self.hyper.offsets)
        return np.sqrt(np.clip(1.0 - np.exp(log_bc), 0.0, 1.0))

    def divergence(self, params: TableParams) -> np.ndarray:
        """Symmetric KL divergence, the sum of the columns'."""
        var = 1.0 / params.precision
        mu = params.mean
        d2 = (mu[:, None, :] - mu[None, :, :]) ** 2
        v1, v2 = var[:, None, :], var[None, :, :]
        real = 0.5 * (v1 / v2 + v2 / v1 - 2.0 + d2 * (1.0 / v1 + 1.0 / v2)).sum(axis=2)
        lp = params.log_prob
        p = np.exp(lp)
        coded = (p[:, None, :] - p[None, :, :]) * (lp[:, None, :] - lp[None, :, :])
        lr = params.log_rate
        r = np.exp(lr)
        counts = (r[:, None, :] - r[None, :, :]) * (lr[:, None, :] - lr[None, :, :])
        return real + coded.sum(axis=2) + counts.sum(axis=2)

    # ------------------------------------------------------- describing itself
    def describe(self) -> list[dict]:
        """What the model read each column as: one dict per column of the table (name,
        kind, levels, why), those left out last with the reason."""
        if self.schema_ is None:
            raise ValueError("the family has no columns until it is resolved on data")
        rows = [{"column": c.name, "kind": c.kind,
                 "levels": None if c.levels is None else len(c.levels), "why": c.why}
                for c in self.schema_.columns]
        rows += [{"column": name, "kind": "left out", "levels": None, "why": why}
                 for name, why in self.schema_.dropped]
        return rows

    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """Per real column the clusters' means and standard deviations, per coded column
        the level shares, per count column the rates (what each column was read as is the
        summary's ``table`` block).  A table of more than :data:`MAX_SUMMARY_FEATURES`
        columns lists its first ones (real, then coded, then counts) and leaves every
        column's parameters to :data:`~dpclust.families.base.CLUSTER_PARAMS_FILE`."""
        s = self.schema_
        n_columns = len(s.real) + len(s.coded) + len(s.counts)
        # the first MAX_SUMMARY_FEATURES columns in the order real, coded, counts
        real = list(enumerate(s.real[:MAX_SUMMARY_FEATURES]))
        coded = list(enumerate(s.coded[:MAX_SUMMARY_FEATURES - len(real)]))
        counts = list(enumerate(s.counts[:MAX_SUMMARY_FEATURES - len(real) - len(coded)]))
        block: dict = {}
        if real:
            block["means"] = {c.name: rounded(params["means"][:, j]) for j, c in real}
            block["sds"] = {c.name: rounded(np.sqrt(params["variances"][:, j]))
                            for j, c in real}
        offsets = self.hyper.offsets
        if coded:
            block["shares"] = {c.name: {str(level): rounded(params["probabilities"][:, offsets[j] + t])
                                        for t, level in enumerate(c.levels)}
                               for j, c in coded}
        if counts:
            block["rates"] = {c.name: rounded(params["rates"][:, j]) for j, c in counts}
        if n_columns <= MAX_SUMMARY_FEATURES:
            return ClusterSummary(block)
        arrays = {name: np.asarray(params[name]) for name in
                  ("means", "variances", "probabilities", "rates") if name in params}
        block.update(file=f"{CLUSTER_PARAMS_FILE} ({', '.join(arrays)})",
                     n_features=n_columns, features_listed=MAX_SUMMARY_FEATURES)
        return ClusterSummary(block, arrays)


def _standardise(a: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """``a`` standardised by the columns' mean and deviation in ``reference`` (default:
    ``a``), holes at 0."""
    reference = a if reference is None else reference
    mean = np.nanmean(reference, axis=0)
    sd = np.nanstd(reference, axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return np.where(np.isnan(a), 0.0, (a - mean) / sd)


def _pairwise_log_bc(p: TableParams, offsets) -> np.ndarray:
    var = 1.0 / p.precision
    v1, v2 = var[:, None, :], var[None, :, :]
    d2 = (p.mean[:, None, :] - p.mean[None, :, :]) ** 2
    real = (0.5 * np.log(2.0 * np.sqrt(v1 * v2) / (v1 + v2)) - 0.25 * d2 / (v1 + v2)).sum(axis=2)
    half = 0.5 * p.log_prob
    K = p.log_prob.shape[0]
    coded = np.zeros((K, K))
    for j in range(len(offsets) - 1):
        seg = np.exp(half[:, offsets[j]:offsets[j + 1]])
        coded += np.log(np.clip(seg @ seg.T, 1e-300, 1.0))
    r = np.exp(0.5 * p.log_rate)
    counts = -0.5 * ((r[:, None, :] - r[None, :, :]) ** 2).sum(axis=2)
    return real + coded + counts


# ------------------------------------------------------ the single-kind families
@register_family
class DiagonalGaussian(TableFamily):
    """Real vectors with independent coordinates within a cluster: a Normal–Gamma prior per
    coordinate (mean and variance), the fast choice in many dimensions (O(d) per row and
    cluster against O(d^2) for a full covariance).  Missing coordinates (NaN) are left out
    exactly.  See :class:`TableFamily` for the parameters."""

    name = "diagonal"
    title = "Diagonal Gaussian"
    describes = "real vectors, independent coordinates (fast in many dimensions)"
    data_kind = "dense"
    noun = "point"
    kind = "gaussian"


@register_family
class BetaBernoulli(TableFamily):
    """Vectors of yes/no answers (0/1, booleans, two-level text), each a Bernoulli within a
    cluster with a Beta(concentration, concentration) prior; missing answers left out
    exactly.  See :class:`TableFamily` for the parameters."""

    name = "bernoulli"
    title = "Beta–Bernoulli"
    describes = "yes/no (0/1) vectors"
    data_kind = "dense"
    kind = "bernoulli"


@register_family
class DirichletCategorical(TableFamily):
    """Vectors of categories (codes or text), each categorical within a cluster with a
    symmetric Dirichlet prior; missing cells left out exactly.  See :class:`TableFamily`."""

    name = "categorical"
    title = "Dirichlet–categorical"
    describes = "vectors of categories"
    data_kind = "dense"
    kind = "categorical"


@register_family
class GammaPoisson(TableFamily):
    """Vectors of counts, each Poisson within a cluster with a Gamma prior on its rate
    (shape ``count_shape``, mean the column's mean); missing cells left out exactly.  See
    :class:`TableFamily` for the parameters."""

    name = "poisson"
    title = "Gamma–Poisson"
    describes = "vectors of counts (whole numbers >= 0)"
    data_kind = "dense"
    kind = "poisson"
