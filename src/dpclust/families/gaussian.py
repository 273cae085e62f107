"""Gaussian clusters with full covariance and a conjugate Normal-Inverse-Wishart prior.

References
----------
Murphy, K. P. (2007). Conjugate Bayesian analysis of the Gaussian distribution, section 9.
Paisley, J. (2015). Lecture notes on DP mixtures (Normal-Wishart form; ALGORITHMS.md section 1
    corrects the typo in the update of B').
Gelman et al. (2013). Bayesian Data Analysis, 3rd ed., section 3.6.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.special import gammaln, multigammaln

from .._validation import check_dense
from ._linalg import chol_downdate, chol_update, log_det_chol, log_multigamma, solve_lower
from .base import ConjugateFamily, FamilyKernel

_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)


class GaussianStats(NamedTuple):
    """Sufficient statistics of K clusters: count, mean and scatter about the mean.

    ``n`` (K,), ``mean`` (K, d), ``scatter`` (K, d, d) = sum_i (x_i - mean)(x_i - mean)^T.
    The centred form combines stably (Chan, Golub & LeVeque 1979).
    """

    n: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray


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


class NormalInverseWishart(ConjugateFamily):
    """Multivariate Gaussian likelihood with a Normal-Inverse-Wishart prior.

    ``Sigma ~ InvWishart(dof, scale)``, ``mu | Sigma ~ N(mean, Sigma / kappa)``.

    Parameters
    ----------
    mean : array-like of shape (n_features,), optional
        Prior mean of the cluster means ``m0``. Default: the data mean.
    kappa : float, optional
        Prior pseudo-count for the mean ``kappa0``. Default ``0.1``, so that the prior on
        a cluster mean, ``N(m0, Sigma / kappa0)``, with the default ``scale`` below, has
        about the spread of the whole data set.
    dof : float, optional
        Degrees of freedom ``nu0 > n_features - 1``. Default ``n_features + 2``, the
        smallest whole value for which the prior mean of ``Sigma`` exists.
    scale : array-like of shape (n_features, n_features), optional
        Scale matrix ``S0`` (symmetric positive definite). Default
        ``(dof - n_features - 1) * C / 10`` with ``C`` the empirical covariance of the data
        (plus a small ridge when it is singular): a priori a cluster covers a tenth of the
        data's variance in every direction; the data soon dominate (weight ``dof``).

    Notes
    -----
    Posterior (ALGORITHMS.md section 1): ``kappa_n = kappa0 + n``, ``nu_n = nu0 + n``,
    ``m_n = (kappa0 m0 + n xbar) / kappa_n``,
    ``S_n = S0 + scatter + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T``.
    The posterior predictive is a multivariate Student-t with ``nu_n - d + 1`` degrees of
    freedom, location ``m_n`` and scale ``S_n (kappa_n + 1) / (kappa_n (nu_n - d + 1))``.
    The kernels keep a Cholesky factor of ``S_n`` per cluster and update it by rank one when
    a point is added or removed, so each Gibbs move costs O(d^2).
    """

    name = "gaussian"

    def __init__(self, mean=None, kappa=None, dof=None, scale=None):
        self.mean = mean
        self.kappa = kappa
        self.dof = dof
        self.scale = scale

    def get_params(self) -> dict:
        return {"mean": self.mean, "kappa": self.kappa, "dof": self.dof, "scale": self.scale}

    # ------------------------------------------------------------------ set-up
    def validate(self, X, *, what="X"):
        d = None
        if self.is_resolved:
            d = self.n_features()
        return check_dense(X, what=what, n_features=d)

    @property
    def is_resolved(self) -> bool:
        return all(v is not None for v in (self.mean, self.kappa, self.dof, self.scale))

    def n_features(self) -> int:
        if self.mean is None:
            raise ValueError("the family has no dimension until it is resolved on data")
        return int(np.asarray(self.mean).shape[0])

    def resolve(self, X) -> "NormalInverseWishart":
        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        mean = X.mean(axis=0) if self.mean is None else np.asarray(self.mean, dtype=np.float64)
        if mean.shape != (d,):
            raise ValueError(f"mean has shape {mean.shape}, expected ({d},) for {d} features")
        kappa = 0.1 if self.kappa is None else float(self.kappa)
        if not kappa > 0:
            raise ValueError(f"kappa must be positive, got {kappa}")
        dof = float(d + 2) if self.dof is None else float(self.dof)
        if not dof > d - 1:
            raise ValueError(f"dof must exceed n_features - 1 = {d - 1}, got {dof}")
        if self.scale is None:
            if X.shape[0] > 1:
                C = np.atleast_2d(np.cov(X, rowvar=False))
            else:
                C = np.eye(d)
            ridge = 1e-6 * max(np.trace(C) / d, 1e-12)
            C = C + ridge * np.eye(d)
            if not np.all(np.isfinite(C)) or np.trace(C) <= 1e-300:
                C = np.eye(d)
            scale = max(dof - d - 1.0, 1.0) * C / 10.0
        else:
            scale = np.array(self.scale, dtype=np.float64)
            if scale.shape != (d, d):
                raise ValueError(f"scale has shape {scale.shape}, expected ({d}, {d})")
            if not np.allclose(scale, scale.T):
                raise ValueError("scale must be symmetric")
        try:
            np.linalg.cholesky(scale)
        except np.linalg.LinAlgError:
            raise ValueError("scale must be positive definite") from None
        return NormalInverseWishart(mean=mean, kappa=kappa, dof=dof, scale=scale)

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
        """``log f(X_k)``: ALGORITHMS.md section 1 (Murphy 2007, eq. 266)."""
        m0, kappa0, nu0, S0 = self._hyper()
        d = m0.shape[0]
        post = self.posterior(stats)
        logdet_n = 2.0 * np.log(np.diagonal(post.scale_chol, axis1=1, axis2=2)).sum(axis=1)
        logdet_0 = np.linalg.slogdet(S0)[1]
        return (-0.5 * stats.n * d * _LOG_PI
                + multigammaln_vec(0.5 * post.dof, d) - multigammaln(0.5 * nu0, d)
                + 0.5 * nu0 * logdet_0 - 0.5 * post.dof * logdet_n
                + 0.5 * d * (np.log(kappa0) - np.log(post.kappa)))

    def log_predictive(self, X, stats: GaussianStats) -> np.ndarray:
        """Multivariate Student-t log densities, shape (n, K)."""
        X = np.asarray(X, dtype=np.float64)
        post = self.posterior(stats)
        d = X.shape[1]
        df = post.dof - d + 1.0
        out = np.empty((X.shape[0], len(df)))
        for k in range(len(df)):
            factor = (post.kappa[k] + 1.0) / (post.kappa[k] * df[k])
            L = post.scale_chol[k] * math.sqrt(factor)
            y = _solve_lower(L, (X - post.mean[k]).T)
            maha = np.einsum("ij,ij->j", y, y)
            logdet = 2.0 * np.log(np.diag(L)).sum()
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
        means = np.empty((K, d))
        covs = np.empty((K, d, d))
        chols = np.empty((K, d, d))
        z = rng.standard_normal((K, d))
        for k in range(K):
            # G = L A^{-T}: solve A G^T = L^T  ->  G^T = A^{-1} L^T
            Gt = _solve_lower(A[k], post.scale_chol[k].T)
            cov = Gt.T @ Gt
            cov = 0.5 * (cov + cov.T)
            covs[k] = cov
            chols[k] = np.linalg.cholesky(cov)
            means[k] = post.mean[k] + chols[k] @ z[k] / math.sqrt(post.kappa[k])
        return GaussianParams(means, covs, chols)

    def log_likelihood(self, X, params: GaussianParams) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        K, d = params.mean.shape
        out = np.empty((X.shape[0], K))
        for k in range(K):
            y = _solve_lower(params.chol[k], (X - params.mean[k]).T)
            logdet = 2.0 * np.log(np.diag(params.chol[k])).sum()
            out[:, k] = -0.5 * (d * _LOG_2PI + logdet + np.einsum("ij,ij->j", y, y))
        return out

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
    def kernel(self, X) -> FamilyKernel:
        m0, kappa0, nu0, S0 = self._hyper()
        L0 = np.linalg.cholesky(S0)
        d = m0.shape[0]
        hyper = (m0, L0, np.array([kappa0, nu0, log_det_chol(L0)]),
                 _count_tables(kappa0, nu0, d, self.n_points(X)))

        def alloc(capacity: int):
            return (np.zeros(capacity), np.zeros(capacity), np.zeros(capacity),
                    np.zeros((capacity, d)), np.zeros((capacity, d, d)),
                    np.zeros(capacity), np.zeros(capacity), np.zeros((capacity, 2, d)),
                    np.zeros(capacity), np.zeros(capacity))

        return FamilyKernel(data=(np.ascontiguousarray(X, dtype=np.float64),), hyper=hyper,
                            alloc=alloc, reset=_niw_reset, add=_niw_add, remove=_niw_remove,
                            log_predictive=_niw_log_predictive, log_marginal=_niw_log_marginal)


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


def _solve_lower(L, B):
    return solve_lower(np.ascontiguousarray(L), np.ascontiguousarray(B))


# --------------------------------------------------------------------- kernels
# kstats = (n, kappa, nu, mean, chol, cst, logdet, work, fac, half), all slot-first:
#   chol[k] is the lower Cholesky factor of S_n; logdet[k] = log|S_n|;
#   cst[k] is the Student-t log-normaliser, fac[k] = kappa_n / (kappa_n + 1) and
#   half[k] = (nu_n + 1) / 2, so that
#   log f(x | X_k) = cst[k] - half[k] * log1p(fac[k] * |chol^{-1}(x - m_n)|^2);
#   work[k] is scratch space for the slot's updates.
# khyper = (m0, L0, [kappa0, nu0, log|S0|], tables) with the count-only factors of
# _count_tables.

@njit(cache=True, _nrt=False)
def _chol2_rank_one(L, v0, v1, sign):
    """2 x 2 case of :func:`chol_update` (sign +1) / :func:`chol_downdate` (sign -1)."""
    a = L[0, 0]
    r0 = math.sqrt(max(a * a + sign * v0 * v0, 1e-14 * a * a + 1e-300))
    inv_a = 1.0 / a
    c0 = r0 * inv_a
    s0 = v0 * inv_a
    b = (L[1, 0] + sign * s0 * v1) * (a / r0)
    w1 = c0 * v1 - s0 * b
    e = L[1, 1]
    r1 = math.sqrt(max(e * e + sign * w1 * w1, 1e-14 * e * e + 1e-300))
    L[0, 0] = r0
    L[1, 0] = b
    L[1, 1] = r1
    return c0 * r1 / e


@njit(cache=True, _nrt=False)
def _niw_refresh(kstats, k, khyper):
    """Recompute the slot's Student-t constants from its count and ``logdet``."""
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    table = khyper[3]
    m = int(n[k])
    cst[k] = table[0, m] - 0.5 * logdet[k]
    fac[k] = table[1, m]
    half[k] = table[2, m]


@njit(cache=True, _nrt=False)
def _niw_reset(kstats, k, khyper):
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    m0, L0, h, table = khyper
    n[k] = 0.0
    kappa[k] = h[0]
    nu[k] = h[1]
    d = m0.shape[0]
    for a in range(d):
        mean[k, a] = m0[a]
        for b in range(d):
            chol[k, a, b] = L0[a, b]
    logdet[k] = h[2]
    _niw_refresh(kstats, k, khyper)


@njit(cache=True, _nrt=False)
def _niw_add(kdata, i, kstats, k, khyper):
    X = kdata[0]
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    d = X.shape[1]
    table = khyper[3]
    m = int(n[k])
    # S' = S + kappa/(kappa+1) (x - m)(x - m)^T ;  m' = m + (x - m)/(kappa + 1)
    c = table[3, m]
    inv = table[4, m]
    if d == 2:
        # unrolled: with the dimension fixed the compiler keeps everything in registers
        d0 = X[i, 0] - mean[k, 0]
        d1 = X[i, 1] - mean[k, 1]
        mean[k, 0] += d0 * inv
        mean[k, 1] += d1 * inv
        ratio = _chol2_rank_one(chol[k], c * d0, c * d1, 1.0)
    else:
        v = work[k, 0]
        for j in range(d):
            diff = X[i, j] - mean[k, j]
            v[j] = c * diff
            mean[k, j] += diff * inv
        ratio = chol_update(chol[k], v)
    logdet[k] += 2.0 * math.log(ratio)
    n[k] += 1.0
    kappa[k] += 1.0
    nu[k] += 1.0
    _niw_refresh(kstats, k, khyper)


@njit(cache=True, _nrt=False)
def _niw_remove(kdata, i, kstats, k, khyper):
    X = kdata[0]
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    if n[k] <= 1.0:
        _niw_reset(kstats, k, khyper)
        return
    d = X.shape[1]
    table = khyper[3]
    m = int(n[k])
    kp = kappa[k]
    # S' = S - kappa/(kappa-1) (x - m)(x - m)^T ;  m' = (kappa m - x)/(kappa - 1)
    c = table[5, m]
    inv = table[6, m]
    if d == 2:
        d0 = X[i, 0] - mean[k, 0]
        d1 = X[i, 1] - mean[k, 1]
        mean[k, 0] = (kp * mean[k, 0] - X[i, 0]) * inv
        mean[k, 1] = (kp * mean[k, 1] - X[i, 1]) * inv
        ratio = _chol2_rank_one(chol[k], c * d0, c * d1, -1.0)
    else:
        v = work[k, 0]
        for j in range(d):
            diff = X[i, j] - mean[k, j]
            v[j] = c * diff
            mean[k, j] = (kp * mean[k, j] - X[i, j]) * inv
        ratio = chol_downdate(chol[k], v)
    logdet[k] += 2.0 * math.log(ratio)
    n[k] -= 1.0
    kappa[k] = kp - 1.0
    nu[k] -= 1.0
    _niw_refresh(kstats, k, khyper)


@njit(cache=True, _nrt=False)
def _niw_log_predictive(kdata, i, kstats, k, khyper):
    X = kdata[0]
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    d = X.shape[1]
    L = chol[k]
    if d == 2:
        y0 = (X[i, 0] - mean[k, 0]) / L[0, 0]
        y1 = (X[i, 1] - mean[k, 1] - L[1, 0] * y0) / L[1, 1]
        return cst[k] - half[k] * math.log1p(fac[k] * (y0 * y0 + y1 * y1))
    y = work[k, 1]
    q = 0.0
    for j in range(d):
        s = X[i, j] - mean[k, j]
        for l in range(j):
            s -= L[j, l] * y[l]
        yj = s / L[j, j]
        y[j] = yj
        q += yj * yj
    return cst[k] - half[k] * math.log1p(fac[k] * q)


@njit(cache=True, _nrt=False)
def _niw_log_marginal(kstats, k, khyper):
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    m0, L0, h, table = khyper
    d = mean.shape[1]
    kappa0 = h[0]
    nu0 = h[1]
    return (-0.5 * n[k] * d * math.log(math.pi)
            + log_multigamma(0.5 * nu[k], d) - log_multigamma(0.5 * nu0, d)
            + 0.5 * nu0 * h[2] - 0.5 * nu[k] * logdet[k]
            + 0.5 * d * (math.log(kappa0) - math.log(kappa[k])))
