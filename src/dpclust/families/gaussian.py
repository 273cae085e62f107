"""Gaussian clusters with full covariance and a conjugate Normal-Inverse-Wishart prior.

References
----------
Murphy, K. P. (2007). Conjugate Bayesian analysis of the Gaussian distribution, section 9.
Paisley, J. (2015). Lecture notes on DP mixtures (Normal-Wishart form; Mathematics §1
    corrects the typo in the update of B').
Gelman et al. (2013). Bayesian Data Analysis, 3rd ed., section 3.6.
Fraley, C. & Raftery, A. E. (2007). Bayesian regularization for normal mixture estimation and
    model-based clustering. Journal of Classification 24 (the default scale).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy.special import gammaln

from ..utils.checks import check_dense, check_scale
from ..utils.threads import serial_when_small
from ._grid import grid_widths
from ._linalg import log_det_chol, lower_inverses, solve_lower
from . import _gaussian_kernels as _k
from ._gaussian_entry import ENTRY_POINTS, ENTRY_POINTS_2D
from .base import (CLUSTER_PARAMS_FILE, ClusterColumn, ClusterSummary, ClusterTable,
                   ConjugateFamily, FamilyKernel, HyperParameter, PassKernel,
                   register_family)
from .identical import array_row_keys, distinct_rows

_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)
#: from this many features the sub-cluster passes score points by blocks of BLOCK_ROWS rows,
#: one triangular product (BLAS trmm) per block and component (measured: below 8 features
#: the scalar loop is as fast).  2,048 rows: the per-cluster sub-blocks of a block (its
#: sub-cluster scores and statistics) stay large enough for BLAS on ~10 clusters (N = 5e4,
#: d = 64: the data pass 50 -> 43 ms from 256 rows)
BLOCKED_MIN_FEATURES = 8
BLOCK_ROWS = 2048
#: the sub-cluster sampler's pass is collapsed up to COLLAPSED_PASS_MAX points and, from
#: BLOCKED_MIN_FEATURES features, while N (1 + rounds) (d^2 + COLLAPSED_POINT_WORK) is within
#: COLLAPSED_WORK_MAX (a point's work besides its O(d^2) solves, in units of d^2: on one
#: thread the collapsed path cost 2.9 times as much at d = 50 as at d = 10, N = 4,000)
COLLAPSED_PASS_MAX = 10_000
COLLAPSED_WORK_MAX = 10_000_000
COLLAPSED_POINT_WORK = 1_000
#: above this many features the run summary lists the first ones of each cluster's mean and
#: leaves the means and variances to :data:`~dpclust.families.base.CLUSTER_PARAMS_FILE`
MAX_SUMMARY_FEATURES = 50
#: coordinates of each cluster's mean that the report's cluster table shows
MAX_TABLE_COORDS = 5


class GaussianStats(NamedTuple):
    """Sufficient statistics of K clusters: count, mean and scatter about the mean.

    ``n`` (K,), ``mean`` (K, d), ``scatter`` (K, d, d) = sum_i (x_i - mean)(x_i - mean)^T.
    The centred form combines stably (Chan, Golub & LeVeque 1979).
    """

    n: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray


class DataSummary(NamedTuple):
    """What the data-driven defaults need: the number of points, their mean and scatter
    matrix ``sum_i (x_i - mean)(x_i - mean)^T``; with ``rounding="auto"``, each column's
    recording grid (:func:`~dpclust.families.gaussian_rounded.grid_widths`)."""

    n: int
    mean: np.ndarray
    scatter: np.ndarray
    widths: Any = None


class NIWPosterior(NamedTuple):
    """NIW(mean, kappa, dof, scale) hyperparameters of K clusters, with Cholesky of scale."""

    mean: np.ndarray
    kappa: np.ndarray
    dof: np.ndarray
    scale: np.ndarray
    scale_chol: np.ndarray


class GaussianParams(NamedTuple):
    """Parameters of K Gaussians: ``mean`` (K, d), ``cov`` (K, d, d), ``chol`` (K, d, d)."""

    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray


#: how a family with ``rounding`` resolves to the family of rounded values: filled by
#: :mod:`dpclust.families.gaussian_rounded` (which the package imports), whose family is
#: this one's subclass
ROUNDED: dict = {}


@register_family
class NormalInverseWishart(ConjugateFamily):
    """Multivariate Gaussian likelihood with a Normal-Inverse-Wishart prior.

    ``Sigma ~ InvWishart(dof, scale)``, ``mu | Sigma ~ N(mean, Sigma / kappa)``.

    Parameters
    ----------
    mean : array-like of shape (n_features,), optional
        Prior mean of the cluster means ``m0``. Default: the data mean.
    kappa : float or GammaPrior, optional
        Prior pseudo-count for the mean ``kappa0``; a :class:`~dpclust.priors.GammaPrior`
        learns it from the data (resampled every iteration given the partition, from the
        clusters' statistics). Default ``0.01`` (Fraley & Raftery 2007):
        the prior on a cluster mean, ``N(m0, Sigma / kappa0)``, is ten cluster widths wide in
        every direction.  Larger values make new clusters cheaper (the prior predictive of a
        lone point is sharper), which in many dimensions lets points scatter into singletons.
    dof : float, optional
        Degrees of freedom ``nu0 > n_features - 1``. Default ``n_features + 2``, the
        smallest whole value for which the prior mean of ``Sigma`` exists.
    scale : array-like of shape (n_features, n_features) or GammaPrior, optional
        Scale matrix ``S0`` (symmetric positive definite).  A
        :class:`~dpclust.priors.GammaPrior` learns a factor ``s`` of the default scale,
        ``S0 = s × default``, under that prior (how wide clusters are, from the data).
        Default
        ``max(dof - n_features - 1, 1) * C / 10 ** (2 / n_features)`` with ``C`` the empirical
        covariance of the data (plus a small ridge when it is singular): a priori a cluster
        fills a tenth of the data's volume (Fraley & Raftery 2007), so the prior mean of
        ``Sigma`` is ``C / 10`` in two dimensions and close to ``C`` in fifty, where clusters
        differ by their position in many directions more than by their spread in each.
    rounding : None, "auto", float or array-like of shape (n_features,), default=None
        Whether the data are values rounded to a grid: None reads them as exact; a width
        (or one per column, 0 for a column recorded exactly) makes each value a latent
        real number within its cell, ``[x - w/2, x + w/2]``, fitted exactly given the
        latent values (:class:`~dpclust.families.gaussian_rounded.RoundedGaussian`);
        ``"auto"`` (what ``family="auto"`` gives a table of numbers) reads a column as
        rounded to ``10^-p`` when all its values are multiples of it and at most half of
        them are distinct.  On whole-number tables the exact Gaussian posterior puts
        small clusters on the ties; the rounded model does not.

    Notes
    -----
    Posterior (Mathematics §1): ``kappa_n = kappa0 + n``, ``nu_n = nu0 + n``,
    ``m_n = (kappa0 m0 + n xbar) / kappa_n``,
    ``S_n = S0 + scatter + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T``.
    The posterior predictive is a multivariate Student-t with ``nu_n - d + 1`` degrees of
    freedom, location ``m_n`` and scale ``S_n (kappa_n + 1) / (kappa_n (nu_n - d + 1))``.
    The kernels keep a Cholesky factor of ``S_n`` per cluster and update it by rank one when
    a point is added or removed, so each Gibbs move costs O(d^2).
    """

    name = "gaussian"
    describes = "real-valued features"
    data_kind = "dense"
    learnable = ("kappa", "scale")
    hyperparameters = (
        HyperParameter("rounding", lambda text: parse_rounding(text),
                       "values recorded to a grid: 'auto' (what --family auto gives a table "
                       "of numbers) reads a column as rounded to 10^-p when its values are "
                       "multiples of it with ties the rule; a width, or widths by column "
                       "separated by commas (0: exact); 'none': every value exact",
                       metavar="W"),
    )

    def __init__(self, mean=None, kappa=None, dof=None, scale=None, rounding=None):
        self.mean = mean
        self.kappa = kappa
        self.dof = dof
        self.scale = scale
        self.rounding = rounding

    def get_params(self, deep: bool = True) -> dict:
        return {"mean": self.mean, "kappa": self.kappa, "dof": self.dof, "scale": self.scale,
                "rounding": self.rounding}

    # ------------------------------------------------------------------ set-up
    def validate(self, X, *, what="X"):
        d = None
        if self.is_resolved:
            d = self.n_features()
        X = check_dense(X, what=what, n_features=d)
        check_scale(X, what=what)
        return X

    @property
    def is_resolved(self) -> bool:
        return all(v is not None for v in (self.mean, self.kappa, self.dof, self.scale))

    def n_features(self) -> int:
        if self.mean is None:
            raise ValueError("the family has no dimension until it is resolved on data")
        return int(np.asarray(self.mean).shape[0])

    def summarize(self, X) -> DataSummary:
        """Count, mean and scatter matrix of the rows of ``X``."""
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        mean = X.sum(axis=0) / max(n, 1)
        centred = X - mean
        widths = None
        if isinstance(self.rounding, str) and self.rounding == "auto":
            widths = grid_widths(X)
        return DataSummary(n, mean, centred.T @ centred, widths)

    def merge_summaries(self, a: DataSummary, b: DataSummary) -> DataSummary:
        """Chan, Golub & LeVeque's pairwise update of a mean and scatter matrix."""
        n = a.n + b.n
        if a.n == 0 or b.n == 0:
            return b if a.n == 0 else a
        delta = b.mean - a.mean
        mean = a.mean + delta * (b.n / n)
        scatter = a.scatter + b.scatter + np.outer(delta, delta) * (a.n * b.n / n)
        widths = None  # a column is rounded where every partition found it so (the coarser)
        if a.widths is not None and b.widths is not None:
            widths = np.where((a.widths > 0) & (b.widths > 0),
                              np.maximum(a.widths, b.widths), 0.0)
        return DataSummary(n, mean, scatter, widths)

    def resolve(self, X) -> "NormalInverseWishart":
        X = np.asarray(X, dtype=np.float64)
        return self.resolve_summary(self.summarize(X))

    def resolve_summary(self, summary: DataSummary) -> "NormalInverseWishart":
        d = summary.mean.shape[0]
        mean = (summary.mean.copy() if self.mean is None
                else np.asarray(self.mean, dtype=np.float64))
        if mean.shape != (d,):
            raise ValueError(f"mean has shape {mean.shape}, expected ({d},) for {d} features")
        if not np.all(np.isfinite(mean)):
            raise ValueError("mean must be finite (no NaN or inf)")
        learned = self.hyperpriors()
        kappa = (learned["kappa"].start if "kappa" in learned
                 else 0.01 if self.kappa is None else float(self.kappa))
        if not (kappa > 0 and np.isfinite(kappa)):
            raise ValueError(f"kappa must be positive and finite, got {kappa}")
        dof = float(d + 2) if self.dof is None else float(self.dof)
        if not np.isfinite(dof):
            raise ValueError(f"dof must be finite, got {dof}")
        if not dof > d - 1:
            raise ValueError(f"dof must exceed n_features - 1 = {d - 1}, got {dof}")
        if self.scale is None or "scale" in learned:
            if summary.n > 1:
                C = summary.scatter / (summary.n - 1)
            else:
                C = np.eye(d)
            ridge = 1e-6 * max(np.trace(C) / d, 1e-12)
            C = C + ridge * np.eye(d)
            if not np.all(np.isfinite(C)) or np.trace(C) <= 1e-300:
                C = np.eye(d)
            # a priori a cluster fills a tenth of the data's volume (Fraley & Raftery 2007)
            scale = max(dof - d - 1.0, 1.0) * C / 10.0 ** (2.0 / d)
        else:
            scale = np.array(self.scale, dtype=np.float64)
            if scale.shape != (d, d):
                raise ValueError(f"scale has shape {scale.shape}, expected ({d}, {d})")
            if not np.all(np.isfinite(scale)):
                raise ValueError("scale must be finite (no NaN or inf)")
            if not np.allclose(scale, scale.T):
                raise ValueError("scale must be symmetric")
        try:
            np.linalg.cholesky(scale)
        except np.linalg.LinAlgError:
            raise ValueError("scale must be positive definite") from None
        factor = learned["scale"].start if "scale" in learned else 1.0
        out = type(self)(mean=mean, kappa=kappa, dof=dof, scale=scale * factor)
        out._scale_base, out._scale_factor = scale, factor
        out = self._keep_hyperpriors(out)
        if self.rounding is None:
            return out
        return ROUNDED["resolve"](self, out, summary)

    def at(self, values: dict) -> "NormalInverseWishart":
        """This resolved family with ``kappa`` and the factor of the default ``scale`` at
        ``values`` (those learned)."""
        out = type(self)(mean=self.mean, kappa=values.get("kappa", self.kappa), dof=self.dof,
                         scale=self.scale, rounding=self.rounding)
        out.__dict__.update({k: v for k, v in self.__dict__.items()
                             if k.startswith("_")})
        if "scale" in values:
            out._scale_factor = float(values["scale"])
            out.scale = self._scale_base * out._scale_factor
        return out

    def kernel_hyper(self, kernel, n_max: int | None = None):
        """The collapsed kernel's ``hyper``: the prior and the count tables of clusters of up
        to ``n_max`` points (``kernel``'s, when given)."""
        m0, kappa0, nu0, S0 = self._hyper()
        L0 = np.linalg.cholesky(S0)
        if kernel is not None:
            n_max = kernel.hyper[3].shape[1] - 2
        return (m0, L0, np.array([kappa0, nu0, log_det_chol(L0)]),
                _count_tables(kappa0, nu0, m0.shape[0], n_max))

    def learned_values(self) -> dict:
        learned = self.hyperpriors()
        return {name: float(self.kappa if name == "kappa" else self._scale_factor)
                for name in learned}

    def _hyper(self):
        m0 = np.asarray(self.mean, dtype=np.float64)
        S0 = np.asarray(self.scale, dtype=np.float64)
        return m0, float(self.kappa), float(self.dof), S0

    # ------------------------------------------------------------ statistics
    def stats(self, X, labels=None, n_clusters=None) -> GaussianStats:
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        if labels is None:
            labels = np.zeros(n, dtype=np.intp)
            n_clusters = 1
        labels = np.asarray(labels)
        if n_clusters is None:
            n_clusters = int(labels.max()) + 1 if n else 0
        counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        sums = np.zeros((n_clusters, d))
        np.add.at(sums, labels, X)
        safe = np.maximum(counts, 1.0)
        mean = sums / safe[:, None]
        centred = X - mean[labels]
        scatter = np.zeros((n_clusters, d, d))
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(n_clusters + 1))
        for k in range(n_clusters):
            rows = centred[order[bounds[k]:bounds[k + 1]]]
            scatter[k] = rows.T @ rows
        return GaussianStats(counts, mean, scatter)

    def stats_at(self, X, rows, labels, n_clusters: int) -> GaussianStats:
        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        if d >= BLOCKED_MIN_FEATURES or not X.flags.c_contiguous:
            return self.stats(X[rows], labels, n_clusters)  # BLAS for the scatter
        n = np.zeros(n_clusters)
        mean = np.zeros((n_clusters, d))
        scatter = np.zeros((n_clusters, d, d))
        _k.rows_stats(X, np.ascontiguousarray(rows, dtype=np.int64),
                      np.ascontiguousarray(labels, dtype=np.int64), n, mean, scatter)
        return GaussianStats(n, mean, scatter)

    def empty_stats(self, n_clusters=1) -> GaussianStats:
        d = self.n_features()
        return GaussianStats(np.zeros(n_clusters), np.zeros((n_clusters, d)),
                             np.zeros((n_clusters, d, d)))

    def combine(self, a: GaussianStats, b: GaussianStats) -> GaussianStats:
        n = a.n + b.n
        w = np.divide(b.n, n, out=np.zeros_like(n), where=n > 0)
        delta = b.mean - a.mean
        mean = a.mean + w[:, None] * delta
        c = np.divide(a.n * b.n, n, out=np.zeros_like(n), where=n > 0)
        scatter = a.scatter + b.scatter + c[:, None, None] * delta[:, :, None] * delta[:, None, :]
        return GaussianStats(n, mean, scatter)

    def subtract(self, a: GaussianStats, b: GaussianStats) -> GaussianStats:
        n = a.n - b.n
        if np.any(n < -1e-9):
            raise ValueError("cannot remove more points than a cluster holds")
        n = np.maximum(n, 0.0)
        mean = np.divide(a.n[:, None] * a.mean - b.n[:, None] * b.mean, n[:, None],
                         out=np.zeros_like(a.mean), where=n[:, None] > 0)
        delta = b.mean - a.mean
        c = np.divide(a.n * b.n, n, out=np.zeros_like(n), where=n > 0)
        scatter = a.scatter - b.scatter - c[:, None, None] * delta[:, :, None] * delta[:, None, :]
        scatter[n == 0] = 0.0
        return GaussianStats(n, mean, scatter)

    def reweight(self, stats: GaussianStats, factor) -> GaussianStats:
        """Statistics of the same points counted ``factor`` times (per cluster)."""
        factor = np.asarray(factor, dtype=np.float64)
        return GaussianStats(stats.n * factor, stats.mean, stats.scatter * factor[:, None, None])

    def count(self, stats: GaussianStats) -> np.ndarray:
        return np.asarray(stats.n)

    # -------------------------------------------------------------- posterior
    def posterior(self, stats: GaussianStats) -> NIWPosterior:
        m0, kappa0, nu0, S0 = self._hyper()
        n = stats.n
        kappa = kappa0 + n
        dof = nu0 + n
        mean = (kappa0 * m0[None, :] + n[:, None] * stats.mean) / kappa[:, None]
        diff = stats.mean - m0[None, :]
        c = kappa0 * n / kappa
        scale = S0[None] + stats.scatter + c[:, None, None] * diff[:, :, None] * diff[:, None, :]
        scale = 0.5 * (scale + np.swapaxes(scale, 1, 2))
        return NIWPosterior(mean, kappa, dof, scale, np.linalg.cholesky(scale))

    def log_marginal(self, stats: GaussianStats) -> np.ndarray:
        """``log f(X_k)``: Mathematics §1 (Murphy 2007, eq. 266)."""
        m0, kappa0, nu0, S0 = self._hyper()
        d = m0.shape[0]
        post = self.posterior(stats)
        logdet_n = 2.0 * np.log(np.diagonal(post.scale_chol, axis1=1, axis2=2)).sum(axis=1)
        logdet_0 = np.linalg.slogdet(S0)[1]
        return (-0.5 * stats.n * d * _LOG_PI
                + multigammaln_vec(0.5 * post.dof, d) - float(multigammaln_vec(0.5 * nu0, d))
                + 0.5 * nu0 * logdet_0 - 0.5 * post.dof * logdet_n
                + 0.5 * d * (np.log(kappa0) - np.log(post.kappa)))

    def log_predictive(self, X, stats: GaussianStats) -> np.ndarray:
        """Multivariate Student-t log densities, shape (n, K)."""
        X = np.asarray(X, dtype=np.float64)
        post = self.posterior(stats)
        d = X.shape[1]
        df = post.dof - d + 1.0
        factor = (post.kappa + 1.0) / (post.kappa * df)
        chol = post.scale_chol * np.sqrt(factor)[:, None, None]
        out = np.empty((X.shape[0], len(df)))
        for k, (maha, logdet) in enumerate(_mahalanobis(X, post.mean, chol)):
            out[:, k] = (gammaln(0.5 * (df[k] + d)) - gammaln(0.5 * df[k])
                         - 0.5 * d * math.log(df[k] * math.pi) - 0.5 * logdet
                         - 0.5 * (df[k] + d) * np.log1p(maha / df[k]))
        return out

    def sample_posterior(self, stats: GaussianStats, rng) -> GaussianParams:
        """``Sigma ~ InvWishart(nu_n, S_n)``, ``mu | Sigma ~ N(m_n, Sigma / kappa_n)``.

        The inverse-Wishart draw uses the Bartlett decomposition: with ``S_n = L L^T`` and
        ``A`` lower triangular, ``A_jj^2 ~ chi2(nu - j)`` (j = 0..d-1), ``A_ij ~ N(0, 1)``
        below the diagonal, ``Sigma = (L A^{-T})(L A^{-T})^T``.
        """
        post = self.posterior(stats)
        K, d = post.mean.shape
        A = np.tril(rng.standard_normal((K, d, d)), -1)
        diag = np.sqrt(rng.chisquare(post.dof[:, None] - np.arange(d)[None, :]))
        A[:, np.arange(d), np.arange(d)] = diag
        z = rng.standard_normal((K, d))
        if K == 0:
            return GaussianParams(np.zeros((0, d)), np.zeros((0, d, d)), np.zeros((0, d, d)))
        # G = L A^{-T}: solve A G^T = L^T  ->  G^T = A^{-1} L^T (batched over clusters)
        Gt = np.linalg.solve(A, np.swapaxes(post.scale_chol, 1, 2))
        covs = np.swapaxes(Gt, 1, 2) @ Gt
        covs = 0.5 * (covs + np.swapaxes(covs, 1, 2))
        chols = np.linalg.cholesky(covs)
        means = post.mean + np.einsum("kab,kb->ka", chols, z) / np.sqrt(post.kappa)[:, None]
        return GaussianParams(means, covs, chols)

    def point_params(self, stats: GaussianStats, rng=None) -> GaussianParams:
        """``(m_n, S_n / (nu_n - d - 1))``: the posterior means of ``mu`` and ``Sigma`` (the
        divisor is kept at 1 or more where the mean of ``Sigma`` is undefined)."""
        post = self.posterior(stats)
        d = post.mean.shape[1]
        div = np.maximum(post.dof - d - 1.0, 1.0)
        return GaussianParams(post.mean, post.scale / div[:, None, None],
                              post.scale_chol / np.sqrt(div)[:, None, None])

    def log_likelihood(self, X, params: GaussianParams) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        K, d = params.mean.shape
        out = np.empty((X.shape[0], K))
        for k, (maha, logdet) in enumerate(_mahalanobis(X, params.mean, params.chol)):
            out[:, k] = -0.5 * (d * _LOG_2PI + logdet + maha)
        return out

    # ------------------------------------------------- coarsened posteriors
    def log_prior(self, params: GaussianParams) -> np.ndarray:
        """``log NIW(mu_k, Sigma_k | m0, kappa0, nu0, S0)`` per component."""
        return self.log_posterior_density(params, self.empty_stats(len(params.mean)))

    def weighted_stats(self, X, weights) -> GaussianStats:
        """Weighted count, mean and scatter per column of ``weights`` (BLAS products).

        Each column's statistics are taken over the rows whose weight is at least
        ``1e-14`` of the column's largest (:func:`_weighted_rows`).  The rows left out change
        them by less than a part in 10^14 of one point, and which rows are kept is a
        function of the weights alone, so a proposal that conditions on these statistics
        has a well-defined density and its Hastings ratio stays exact.
        """
        X = np.asarray(X, dtype=np.float64)
        W = np.asarray(weights, dtype=np.float64)
        K, d = W.shape[1], X.shape[1]
        n, mean = np.zeros(K), np.zeros((K, d))
        scatter = np.zeros((K, d, d))
        for k in range(K):
            rows, w = _weighted_rows(W[:, k])
            if w.size == 0:
                continue
            Xk = X[rows] if rows is not None else X
            n[k] = w.sum()
            mean[k] = (w @ Xk) / n[k]
            Y = (Xk - mean[k]) * np.sqrt(w)[:, None]
            scatter[k] = Y.T @ Y
        return GaussianStats(n, mean, 0.5 * (scatter + np.swapaxes(scatter, 1, 2)))

    def log_posterior_density(self, params: GaussianParams, stats: GaussianStats) -> np.ndarray:
        """``log N(mu | m_n, Sigma / kappa_n) + log IW(Sigma | nu_n, S_n)`` per component."""
        post = self.posterior(stats)
        d = post.mean.shape[1]
        chol = np.asarray(params.chol, dtype=np.float64)
        out, log_gamma_d = np.empty(len(chol)), multigammaln_vec(0.5 * post.dof, d)
        for k in range(len(chol)):
            logdet_sigma = 2.0 * np.log(np.diag(chol[k])).sum()
            logdet_scale = 2.0 * np.log(np.diag(post.scale_chol[k])).sum()
            A = _solve_lower(chol[k], post.scale_chol[k])  # tr(S Sigma^-1) = |L^-1 L_S|^2
            y = _solve_lower(chol[k], (params.mean[k] - post.mean[k])[:, None])[:, 0]
            nu, kappa = post.dof[k], post.kappa[k]
            out[k] = (0.5 * nu * logdet_scale - 0.5 * nu * d * math.log(2.0)
                      - log_gamma_d[k] - 0.5 * (nu + d + 1.0) * logdet_sigma
                      - 0.5 * float((A * A).sum())
                      - 0.5 * d * _LOG_2PI + 0.5 * d * math.log(kappa) - 0.5 * logdet_sigma
                      - 0.5 * kappa * float(y @ y))
        return out

    def distinct(self, X):
        return distinct_rows(np.asarray(X, dtype=np.float64))

    def row_keys(self, X) -> list[bytes]:
        return array_row_keys(np.asarray(X, dtype=np.float64))

    def sample_data(self, params: GaussianParams, components, rng) -> np.ndarray:
        components = np.asarray(components, dtype=np.intp)
        d = params.mean.shape[1]
        z = rng.standard_normal((len(components), d))
        return params.mean[components] + np.einsum("nij,nj->ni", params.chol[components], z)

    def mean_params(self, stats: GaussianStats) -> dict:
        """Posterior means: ``E[mu] = m_n`` and ``E[Sigma] = S_n / (nu_n - d - 1)``.

        Where ``nu_n <= d + 1`` the mean of Sigma does not exist and ``S_n / nu_n`` (the
        inverse of the mean precision) is reported instead.
        """
        post = self.posterior(stats)
        d = post.mean.shape[1]
        denom = np.where(post.dof > d + 1, post.dof - d - 1.0, post.dof)
        return {"means": post.mean, "covariances": post.scale / denom[:, None, None]}

    # ---------------------------------------------------------------- kernels
    def collapsed_pass(self, n_samples: int, n_rounds: int = 1) -> bool:
        """By modelled cost: ``N <= COLLAPSED_PASS_MAX`` and, from ``BLOCKED_MIN_FEATURES``
        features (the instantiated pass on BLAS, the collapsed one O(d^2) scalar work a
        point with ``n_rounds`` rounds of sequential moves), ``N (1 + n_rounds) (d^2 +
        COLLAPSED_POINT_WORK) <= COLLAPSED_WORK_MAX``: ~1,500 points at d = 10, ~700 at d =
        50.  On N alone, 7,000 PCA-50 images took 7x the time of 21,000; seconds an
        iteration collapsed / instantiated, d = 50: 0.36 / 0.14 at N = 1,000, 1.48 / 0.11 at
        4,000 (two loaded cores).  ``benchmarks/bench_default_cost.py``: 0.10-0.20 of the old
        time at 7,000-10,000 rows, d = 10 and 50 (0.059 on 5,000 MNIST digits at PCA-50); in
        the same time NMI 0.868 against 0.868 (d = 10), 0.997 against 1.000 (d = 50).  In
        equal time the collapsed pass can be further (digits at PCA-50, 30 s: log joint
        -2.013e5 against -2.117e5): ``data_pass="collapsed"`` keeps it."""
        n, d = int(n_samples), self.n_features()
        work = n * (1 + max(int(n_rounds), 0)) * (d * d + COLLAPSED_POINT_WORK)
        return n <= COLLAPSED_PASS_MAX and (d < BLOCKED_MIN_FEATURES or work <= COLLAPSED_WORK_MAX)

    def kernel(self, X, n_max: int | None = None) -> FamilyKernel:
        """The collapsed kernel; its count tables cover clusters of up to ``n_max`` points
        (None: all of ``X``)."""
        d = np.asarray(self.mean).shape[0]
        n_max = self.n_points(X) if n_max is None else int(n_max)
        hyper = self.kernel_hyper(None, n_max)

        def alloc(capacity: int):
            return (np.zeros(capacity), np.zeros(capacity), np.zeros(capacity),
                    np.zeros((capacity, d)), np.zeros((capacity, d, d)),
                    np.zeros(capacity), np.zeros(capacity), np.zeros((capacity, 2, d)),
                    np.zeros(capacity), np.zeros(capacity))

        return FamilyKernel(data=(np.ascontiguousarray(X, dtype=np.float64),), hyper=hyper,
                            alloc=alloc, reset=_k._niw_reset, add=_k._niw_add,
                            remove=_k._niw_remove, log_predictive=_k._niw_log_predictive,
                            log_marginal=_k._niw_log_marginal, entry_points=ENTRY_POINTS,
                            log_join_gain=_k._niw_log_join_gain)

    def partition_kernel(self, X, n_total: int) -> FamilyKernel:
        return self.kernel(X, n_max=n_total)

    def gathered_kernel(self, kern: FamilyKernel, rows) -> FamilyKernel:
        X, out = kern.data[0], np.empty((len(rows), kern.data[0].shape[1]))
        with serial_when_small(len(rows)):
            _k.gather_rows(X, np.ascontiguousarray(rows, dtype=np.int64), out)
        return kern._replace(data=(out,))

    def pass_kernel(self, X, summary=None) -> PassKernel:
        X = np.ascontiguousarray(X, dtype=np.float64)
        d = X.shape[1]
        # raw statistics are sums about the data's mean (no cancellation in the scatter)
        if summary is not None:
            shift = np.asarray(summary.mean, dtype=np.float64)
        else:
            shift = X.mean(axis=0) if X.shape[0] else np.zeros(d)

        def pack(params: GaussianParams):
            K = params.mean.shape[0]
            prec = _lower_inverses(params.chol)
            logdet = 2.0 * np.log(np.diagonal(params.chol, axis1=1, axis2=2)).sum(axis=1)
            const = -0.5 * (d * _LOG_2PI + logdet)
            if d == 2:  # every argument costs each call in the pass: one array only
                flat = np.empty((K, 6))
                flat[:, :2] = params.mean
                flat[:, 2] = prec[:, 0, 0]
                flat[:, 3] = prec[:, 1, 0]
                flat[:, 4] = prec[:, 1, 1]
                flat[:, 5] = const
                return (flat,)
            # the blocked pass's form: cs[k] = prec[k] (mean[k] - shift), so that the z's of
            # rows X_B are prec[k] (X_B - shift)^T - cs[k] (one triangular product)
            mean = np.ascontiguousarray(params.mean)
            cs = np.einsum("kab,kb->ka", prec, mean - shift)
            return (mean, prec, const, cs, shift)

        def unpack(acc):
            acc = np.ascontiguousarray(acc, dtype=np.float64)
            K = acc.shape[0]
            n, mean, scatter = np.empty(K), np.empty((K, d)), np.empty((K, d, d))
            _k.unpack_raw_stats(acc, shift, n, mean, scatter)
            return GaussianStats(n, mean, scatter)

        if d == 2:
            fns = (_k._gauss2_log_likelihoods, _k._gauss2_accumulate, ENTRY_POINTS_2D)
        else:
            fns = (_k._gauss_log_likelihoods, _k._gauss_accumulate, ENTRY_POINTS)
        blocked = d >= BLOCKED_MIN_FEATURES
        return PassKernel(data=(X, shift), n_stats=1 + d + d * (d + 1) // 2, pack=pack,
                          unpack=unpack, log_likelihood=fns[0], accumulate=fns[1],
                          entry_points=fns[2], block=BLOCK_ROWS if blocked else 0,
                          score_block=None if d == 2 else _k._gauss_score_block,
                          accumulate_block=None if d == 2 else _k._gauss_accumulate_block)

    def seed_subclusters(self, stats: GaussianStats, rng) -> GaussianParams:
        """A random hyperplane through each cluster: one draw ``(mu, Sigma)`` from its
        posterior, and seeds ``(mu + v / 2, Sigma)``, ``(mu - v / 2, Sigma)`` with
        ``v ~ N(0, Sigma)``, so that the hyperplane tends to cut across the cluster's longest
        axes (where a merged pair of clusters lies)."""
        params = self.sample_posterior(stats, rng)
        K, d = params.mean.shape
        v = 0.5 * np.einsum("kab,kb->ka", params.chol, rng.standard_normal((K, d)))
        mean = np.empty((2 * K, d))
        mean[0::2] = params.mean + v
        mean[1::2] = params.mean - v
        two = np.repeat(np.arange(K), 2)
        return GaussianParams(mean, params.cov[two], params.chol[two])

    # ------------------------------------------------------- describing itself
    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """Means and covariances as nested lists; above :data:`MAX_SUMMARY_FEATURES`
        features (K d x d covariances would be gigabytes) the first coordinates of the means
        in the summary, and the means and variances (the covariances' diagonals) as arrays
        for :data:`~dpclust.families.base.CLUSTER_PARAMS_FILE`."""
        means = np.asarray(params.get("means", np.zeros((0, 0))))
        if not (means.ndim == 2 and means.shape[1] > MAX_SUMMARY_FEATURES):
            return super().describe_clusters(params, feature_names=feature_names)
        variances = np.diagonal(np.asarray(params["covariances"]), axis1=1, axis2=2)
        block = {"file": f"{CLUSTER_PARAMS_FILE} (means, variances)",
                 "n_features": int(means.shape[1]),
                 "means": means[:, :MAX_SUMMARY_FEATURES].tolist(),
                 "means_features_listed": MAX_SUMMARY_FEATURES}
        return ClusterSummary(block, {"means": means, "variances": variances})

    @classmethod
    def cluster_table(cls, block: dict) -> ClusterTable:
        """Each cluster's mean, its first :data:`MAX_TABLE_COORDS` coordinates."""
        means = block.get("means")
        if means is None:
            return ClusterTable()
        return ClusterTable((ClusterColumn("mean", lambda k: _mean_text(means, k), "mono"),),
                            f" Means show at most the first {MAX_TABLE_COORDS} coordinates.")

    def divergence(self, params: GaussianParams) -> np.ndarray:
        """``J(k, m) = KL(k || m) + KL(m || k)`` between Gaussians:
        ``(tr(S_m^-1 S_k) + tr(S_k^-1 S_m) - 2d + dmu^T (S_k^-1 + S_m^-1) dmu) / 2``."""
        mean, cov = params.mean, params.cov
        K, d = mean.shape
        inv = np.linalg.inv(cov)
        tr = np.einsum("mab,kba->km", inv, cov)  # tr(S_m^-1 S_k)
        dmu = mean[:, None, :] - mean[None, :, :]
        quad = (np.einsum("kma,kab,kmb->km", dmu, inv, dmu)
                + np.einsum("kma,mab,kmb->km", dmu, inv, dmu))
        return 0.5 * (tr + tr.T - 2 * d + quad)

    def hellinger(self, params: GaussianParams) -> np.ndarray:
        """Hellinger distance between every pair of Gaussians, shape (K, K), in closed form.

        With ``S = (S_k + S_m) / 2`` and ``dmu = mu_k - mu_m``, in log space::

            log BC = (log|S_k| + log|S_m|) / 4 - log|S| / 2 - dmu^T S^-1 dmu / 8,
            H = sqrt(1 - BC)   (computed as sqrt(-expm1(log BC)), exact near H = 0).

        References
        ----------
        Kailath, T. (1967). The divergence and Bhattacharyya distance measures in signal
            selection. IEEE Transactions on Communication Technology 15(1) (the
            Bhattacharyya distance ``-log BC`` of two normals).
        Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized
            densities. JASA (arXiv 2304.00074): the distance between localized Gaussians.
        """
        mean = np.asarray(params.mean, dtype=np.float64)
        cov = np.asarray(params.cov, dtype=np.float64)
        K = mean.shape[0]
        chol = np.linalg.cholesky(cov) if params.chol is None else np.asarray(params.chol)
        log_det = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        out = np.zeros((K, K))
        for k in range(K - 1):  # one row at a time: K x d x d memory, not K^2 x d x d
            avg_chol = np.linalg.cholesky(0.5 * (cov[k] + cov[k + 1:]))
            y = np.linalg.solve(avg_chol, (mean[k + 1:] - mean[k])[:, :, None])[:, :, 0]
            log_det_avg = 2.0 * np.log(np.diagonal(avg_chol, axis1=1, axis2=2)).sum(axis=1)
            log_bc = (0.25 * (log_det[k] + log_det[k + 1:]) - 0.5 * log_det_avg
                      - 0.125 * np.einsum("ij,ij->i", y, y))
            out[k, k + 1:] = np.sqrt(np.clip(-np.expm1(np.minimum(log_bc, 0.0)), 0.0, 1.0))
        return out + out.T


def _mean_text(means, k: int) -> str:
    """Cluster ``k``'s mean as ``(x, y, …)``, its first :data:`MAX_TABLE_COORDS` coordinates
    to three significant digits ("—" where there is none)."""
    try:
        mean = np.asarray(means[k], dtype=float).ravel()
    except (IndexError, TypeError, ValueError):
        return "—"
    coords = ", ".join(f"{v:.3g}" for v in mean[:MAX_TABLE_COORDS])
    return f"({coords}{', …' if mean.size > MAX_TABLE_COORDS else ''})"


def _count_tables(kappa0, nu0, d, n_max):
    """Everything in a Gaussian cluster's updates that depends on its count n only.

    Row 0: ``lgamma((nu_n + 1)/2) - lgamma(df/2) - d/2 log(df pi) - d/2 log((kappa_n + 1)/(kappa_n df))``,
    so that the Student-t log-normaliser of a cluster of n points is ``row0[n] - log|S_n| / 2``;
    row 1: ``kappa_n / (kappa_n + 1)``; row 2: ``(nu_n + 1) / 2``; rows 3-4:
    ``sqrt(kappa_n / (kappa_n + 1))`` and ``1 / (kappa_n + 1)`` (adding a point); rows 5-6:
    ``sqrt(kappa_n / (kappa_n - 1))`` and ``1 / (kappa_n - 1)`` (removing one), with
    ``kappa_n = kappa0 + n``, ``nu_n = nu0 + n``, ``df = nu_n - d + 1``.  Looking these up
    keeps divisions and square roots off the dependency chain of a Gibbs move.
    """
    n = np.arange(n_max + 2, dtype=np.float64)
    kappa = kappa0 + n
    nu = nu0 + n
    df = nu - d + 1.0
    out = np.empty((7, len(n)))
    out[0] = (gammaln(0.5 * (nu + 1.0)) - gammaln(0.5 * df) - 0.5 * d * np.log(df * math.pi)
              - 0.5 * d * np.log((kappa + 1.0) / (kappa * df)))
    out[1] = kappa / (kappa + 1.0)
    out[2] = 0.5 * (nu + 1.0)
    out[3] = np.sqrt(kappa / (kappa + 1.0))
    out[4] = 1.0 / (kappa + 1.0)
    km = np.where(kappa > 1.0, kappa - 1.0, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[5] = np.sqrt(kappa / km)
        out[6] = 1.0 / km
    return out


def multigammaln_vec(a, d):
    """``log Gamma_d`` applied elementwise."""
    a = np.asarray(a, dtype=np.float64)
    return 0.25 * d * (d - 1) * _LOG_PI + gammaln(a[..., None] - 0.5 * np.arange(d)).sum(-1)


def _lower_inverses(chol):
    """``inv(chol[k])`` for a stack of lower-triangular factors (LAPACK ``trtri``: a third
    of the work of a general solve, and no identity to broadcast), in one compiled loop."""
    chol = np.ascontiguousarray(chol, dtype=np.float64)
    out = np.empty_like(chol)
    bad = lower_inverses(chol, out)
    if bad >= 0:
        raise np.linalg.LinAlgError(f"singular Cholesky factor (component {bad})")
    return out


def _mahalanobis(X, means, chols):
    """``(|L_k^{-1} (x_i - m_k)|^2 over i, log det(L_k L_k^T))`` for each component ``k``:
    the inverse factor by LAPACK ``trtri`` and the rows by one matrix product."""
    inverses = _lower_inverses(chols)
    for k in range(len(inverses)):
        maha, factor = np.empty(len(X)), np.ascontiguousarray(inverses[k].T)
        for start in range(0, len(X), BLOCK_ROWS):  # blocks that stay in cache: twice as fast
            Z = (X[start:start + BLOCK_ROWS] - means[k]) @ factor
            maha[start:start + BLOCK_ROWS] = np.einsum("ij,ij->i", Z, Z)
        yield maha, log_det_chol(np.ascontiguousarray(chols[k]))


def _weighted_rows(w, relative: float = 1e-14):
    """``(rows, weights)`` of a column of weights: the rows (None: all of them) whose
    weight is at least ``relative`` times the largest, and their weights."""
    top = w.max() if w.size else 0.0
    if not top > 0:
        return None, w[:0]
    keep = w >= relative * top
    if keep.mean() > 0.8:
        return None, np.where(keep, w, 0.0)
    rows = np.flatnonzero(keep)
    return rows, w[rows]


def _solve_lower(L, B):
    return solve_lower(np.ascontiguousarray(L), np.ascontiguousarray(B))


def parse_rounding(text: str):
    """``--rounding``: ``auto``, ``none``, a width or widths separated by commas."""
    word = text.strip().lower()
    if word in ("auto", "none"):
        return 0.0 if word == "none" else "auto"  # a width of 0: every value exact
    try:
        widths = [float(t) for t in word.split(",")]
    except ValueError:
        raise ValueError(f"expected auto, none, a width or widths separated by commas, got "
                         f"{text!r}") from None
    if any(not (w >= 0 and math.isfinite(w)) for w in widths):
        raise ValueError(f"rounding widths must be finite and >= 0, got {text!r}")
    return widths[0] if len(widths) == 1 else widths
