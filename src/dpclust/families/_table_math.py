"""NumPy face of the table families: statistics, marginals, posteriors, likelihoods.

Per cluster and column, over the column's observed cells ``x_i`` with row weights ``w_i``:

* real column, Normal–Gamma prior ``mu | tau ~ N(m0, 1 / (kappa0 tau))``, ``tau ~ Gamma(a0,
  rate b0)``: statistics ``n = sum w``, the weighted mean and ``m2 = sum w (x - mean)^2``;
  ``kappa_n = kappa0 + n``, ``a_n = a0 + n / 2``, ``b_n = b0 + m2 / 2 + kappa0 n (mean -
  m0)^2 / (2 kappa_n)`` and ``log f = a0 log b0 - lgamma(a0) + lgamma(a_n) - a_n log b_n +
  log(kappa0 / kappa_n) / 2 - n log(2 pi) / 2``;
* category column (yes/no columns are the case of two levels: Beta = Dirichlet), prior
  ``Dir(alpha)``: level totals ``n_c``, ``log f = lgamma(A) - lgamma(A + n) + sum_c
  lgamma(alpha_c + n_c) - lgamma(alpha_c)``;
* count column, ``lambda ~ Gamma(a, rate b)``: ``n = sum w``, ``s = sum w x``, ``log f = a
  log b - lgamma(a) + lgamma(a + s) - (a + s) log(b + n) - sum w log x!``.

These are Bernardo & Smith's (1994) conjugate marginals with every count weighted: a row of
weight ``w`` contributes ``f(x; theta)^w``, which for ``w = 1`` is the ordinary model.
A missing cell contributes nothing: under missing-at-random that is the marginal of the
observed cells, exactly, since the columns are independent given the cluster.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from ._table_kernels import table_stats_kernel
from .base import log_gamma

_LOG_2PI = float(np.log(2.0 * np.pi))


class TableStats(NamedTuple):
    """Statistics of K clusters of table rows (see the module's docstring).

    ``rows`` (K,) number of rows; ``gn``, ``gmean``, ``gm2`` (K, dg) weighted count, mean
    and centred sum of squares of each real column's observed cells; ``cn`` (K, dc)
    weighted count of each coded column's observed cells and ``cc`` (K, C) of each level;
    ``pn``, ``ps`` (K, dp) weighted count and sum of each count column's cells; ``plf``
    (K,) the weighted sum of ``log x!`` over the count cells.
    """

    rows: np.ndarray
    gn: np.ndarray
    gmean: np.ndarray
    gm2: np.ndarray
    cn: np.ndarray
    cc: np.ndarray
    pn: np.ndarray
    ps: np.ndarray
    plf: np.ndarray


class TableParams(NamedTuple):
    """Parameters of K components: ``mean``, ``precision`` (K, dg) of the real columns,
    ``log_prob`` (K, C) of the levels (normalised per column), ``log_rate`` (K, dp) of the
    count columns."""

    mean: np.ndarray
    precision: np.ndarray
    log_prob: np.ndarray
    log_rate: np.ndarray


class Hyper(NamedTuple):
    """Resolved prior: real columns ``m0``, ``kappa0``, ``a0``, ``b0`` (dg,); levels
    ``alpha`` (C,) with ``offsets`` (dc + 1,); count columns ``shape``, ``rate`` (dp,)."""

    m0: np.ndarray
    kappa0: np.ndarray
    a0: np.ndarray
    b0: np.ndarray
    alpha: np.ndarray
    offsets: np.ndarray
    shape: np.ndarray
    rate: np.ndarray

    @property
    def alpha_sum(self) -> np.ndarray:
        return np.add.reduceat(self.alpha, self.offsets[:-1]) if len(self.offsets) > 1 \
            else np.zeros(0)


def segment_sums(a: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sums of ``a`` (K, C) over each coded column's levels, shape (K, dc)."""
    if len(offsets) <= 1:
        return np.zeros((a.shape[0], 0))
    return np.add.reduceat(a, offsets[:-1], axis=1)


def level_column(offsets: np.ndarray) -> np.ndarray:
    """The coded column of each level, shape (C,)."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


# ------------------------------------------------------------------ statistics
def table_stats(X, labels, n_clusters, offsets) -> TableStats:
    """Statistics of the rows of ``X`` (:class:`~dpclust.tables.TableData`) per cluster
    (one compiled pass, :func:`~dpclust.families._table_kernels.table_stats_kernel`)."""
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    out = empty_stats(int(n_clusters), X.real.shape[1], X.code.shape[1], int(offsets[-1]),
                      X.count.shape[1])
    f64 = np.float64
    table_stats_kernel(np.ascontiguousarray(X.real, dtype=f64),
                       np.ascontiguousarray(X.code, dtype=np.int64),
                       np.ascontiguousarray(X.count, dtype=f64),
                       np.ascontiguousarray(X.weight, dtype=f64),
                       np.ascontiguousarray(X.log_fact, dtype=f64),
                       np.ascontiguousarray(offsets, dtype=np.int64), labels, *out)
    return out


def weighted_stats(X, W, h: Hyper) -> TableStats:
    """Statistics with row ``i`` counted ``W[i, k]`` times (times its own weight) in
    component ``k``, shape (n, K), from matrix products over the rows: the real columns
    centred about the prior mean (:meth:`~dpclust.tables.TableData.centred`; the centred
    sum of squares as ``sum w x^2 - (sum w x)^2 / sum w``), the levels through the sparse
    level matrix (:meth:`~dpclust.tables.TableData.level_matrix`)."""
    Ww = X.weight[:, None] * W
    dg = X.real.shape[1]
    x, x2, seen = X.centred(h.m0)
    gn = (seen.T @ Ww).T if seen is not None else np.repeat(Ww.sum(axis=0)[:, None], dg, 1)
    s1 = (x.T @ Ww).T
    mean = np.divide(s1, gn, out=np.zeros_like(s1), where=gn > 0)
    gm2 = np.maximum((x2.T @ Ww).T - s1 * mean, 0.0)
    cc = np.asarray(X.level_matrix(h.offsets).T @ Ww).T
    pseen = ~np.isnan(X.count)
    pn = (pseen.astype(np.float64).T @ Ww).T
    ps = (np.where(pseen, X.count, 0.0).T @ Ww).T
    return TableStats(W.sum(axis=0), gn, np.where(gn > 0, h.m0 + mean, 0.0), gm2,
                      segment_sums(cc, h.offsets), cc, pn, ps, X.log_fact @ Ww)


def empty_stats(K, dg, dc, C, dp) -> TableStats:
    z = np.zeros
    return TableStats(z(K), z((K, dg)), z((K, dg)), z((K, dg)), z((K, dc)), z((K, C)),
                      z((K, dp)), z((K, dp)), z(K))


def combine(a: TableStats, b: TableStats) -> TableStats:
    gn = a.gn + b.gn
    delta = b.gmean - a.gmean
    frac = np.divide(b.gn, gn, out=np.zeros_like(gn), where=gn > 0)
    gmean = a.gmean + frac * delta
    gm2 = a.gm2 + b.gm2 + delta * delta * a.gn * frac
    return TableStats(a.rows + b.rows, gn, gmean, gm2, a.cn + b.cn, a.cc + b.cc, a.pn + b.pn,
                      a.ps + b.ps, a.plf + b.plf)


def subtract(a: TableStats, b: TableStats) -> TableStats:
    gn = a.gn - b.gn
    if np.any(a.rows - b.rows < 0) or np.any(gn < -1e-9):
        raise ValueError("cannot remove more rows than a cluster holds")
    live = gn > 1e-12
    gmean = np.divide(a.gn * a.gmean - b.gn * b.gmean, gn, out=np.zeros_like(gn), where=live)
    gm2 = np.where(live, np.maximum(a.gm2 - b.gm2 - b.gn * (b.gmean - gmean) * (b.gmean - a.gmean),
                                    0.0), 0.0)
    return TableStats(a.rows - b.rows, np.where(live, gn, 0.0), gmean, gm2, a.cn - b.cn,
                      a.cc - b.cc, a.pn - b.pn, a.ps - b.ps, a.plf - b.plf)


def reweight(s: TableStats, factor) -> TableStats:
    """The same rows counted ``factor`` times (per cluster): means unchanged."""
    f = np.asarray(factor, dtype=np.float64)
    f1 = f[:, None]
    return TableStats(s.rows * f, s.gn * f1, s.gmean, s.gm2 * f1, s.cn * f1, s.cc * f1,
                      s.pn * f1, s.ps * f1, s.plf * f)


# -------------------------------------------------------------- posteriors
def normal_gamma_posterior(s: TableStats, h: Hyper):
    """``(m_n, kappa_n, a_n, b_n)`` of every cluster and real column."""
    kn = h.kappa0 + s.gn
    mn = h.m0 + s.gn * (s.gmean - h.m0) / kn
    an = h.a0 + 0.5 * s.gn
    d = np.where(s.gn > 0, s.gmean - h.m0, 0.0)
    bn = h.b0 + 0.5 * s.gm2 + 0.5 * h.kappa0 * s.gn * d * d / kn
    return mn, kn, an, bn


def log_marginal(s: TableStats, h: Hyper) -> np.ndarray:
    """``log f(X_k)`` per cluster, shape (K,)."""
    _, kn, an, bn = normal_gamma_posterior(s, h)
    real = (h.a0 * np.log(h.b0) - gammaln(h.a0) + gammaln(an) - an * np.log(bn)
            + 0.5 * np.log(h.kappa0 / kn) - 0.5 * s.gn * _LOG_2PI)
    real = np.where(s.gn > 0, real, 0.0).sum(axis=1)
    A = h.alpha_sum
    levels = segment_sums(gammaln(h.alpha + s.cc) - gammaln(h.alpha), h.offsets)
    coded = (gammaln(A) - gammaln(A + s.cn) + levels).sum(axis=1)
    a = h.shape + s.ps
    counts = (h.shape * np.log(h.rate) - gammaln(h.shape) + gammaln(a)
              - a * np.log(h.rate + s.pn))
    counts = np.where(s.pn > 0, counts, 0.0).sum(axis=1)
    return real + coded + counts - s.plf


def log_predictive(X, s: TableStats, h: Hyper) -> np.ndarray:
    """``log f(x_i | X_k)`` for every row and cluster, shape (n, K): per observed cell the
    ratio of the cluster's marginals with and without it (the row counted ``w_i`` times)."""
    w = X.weight[:, None]
    out = np.zeros((len(X), len(s.rows))) - w * X.log_fact[:, None]
    _, kn, an, bn = normal_gamma_posterior(s, h)
    for j in range(X.real.shape[1]):
        x = X.real[:, j][:, None]
        seen = ~np.isnan(x)
        n = s.gn[:, j]
        mean = s.gmean[:, j]
        n1 = n + w
        mean1 = mean + w * (x - mean) / n1
        m21 = s.gm2[:, j] + w * (x - mean) * (x - mean1)
        kn1 = h.kappa0[j] + n1
        an1 = an[:, j] + 0.5 * w
        d1 = mean1 - h.m0[j]
        bn1 = h.b0[j] + 0.5 * m21 + 0.5 * h.kappa0[j] * n1 * d1 * d1 / kn1
        term = (gammaln(an1) - gammaln(an[:, j]) + an[:, j] * np.log(bn[:, j])
                - an1 * np.log(bn1) + 0.5 * np.log(kn[:, j] / kn1) - 0.5 * w * _LOG_2PI)
        out += np.where(seen, term, 0.0)
    A = h.alpha_sum
    for j in range(X.code.shape[1]):
        c = X.code[:, j]
        seen = (c >= 0)[:, None]
        col = h.offsets[j] + np.maximum(c, 0)
        a = h.alpha[col][:, None] + s.cc[:, col].T
        t = A[j] + s.cn[:, j]
        term = gammaln(a + w) - gammaln(a) - gammaln(t + w) + gammaln(t)
        out += np.where(seen, term, 0.0)
    for j in range(X.count.shape[1]):
        x = X.count[:, j][:, None]
        seen = ~np.isnan(x)
        x = np.where(seen, x, 0.0)
        a = h.shape[j] + s.ps[:, j]
        b = h.rate[j] + s.pn[:, j]
        term = (gammaln(a + w * x) - gammaln(a) + a * np.log(b) - (a + w * x) * np.log(b + w))
        out += np.where(seen, term, 0.0)
    return out


def sample_posterior(s: TableStats, h: Hyper, rng) -> TableParams:
    """One exact draw per cluster: ``tau ~ Gamma(a_n, b_n)``, ``mu ~ N(m_n, 1 / (kappa_n
    tau))``; level log-probabilities from ``Dir(alpha + n_c)`` drawn in log space; log rates
    from ``Gamma(a + s, b + n)``."""
    mn, kn, an, bn = normal_gamma_posterior(s, h)
    tau = rng.standard_gamma(an) / bn
    mu = mn + rng.standard_normal(mn.shape) / np.sqrt(kn * tau)
    log_prob = normalise_levels(log_gamma(rng, h.alpha + s.cc), h.offsets)
    log_rate = log_gamma(rng, h.shape + s.ps) - np.log(h.rate + s.pn)
    return TableParams(mu, tau, log_prob, log_rate)


def normalise_levels(log_w: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Log weights normalised within each coded column's levels (last axis)."""
    if log_w.shape[-1] == 0:
        return log_w
    cols = level_column(offsets)
    m = np.maximum.reduceat(log_w, offsets[:-1], axis=-1)
    z = np.add.reduceat(np.exp(log_w - m[..., cols]), offsets[:-1], axis=-1)
    return log_w - (m + np.log(z))[..., cols]


def point_params(s: TableStats, h: Hyper) -> TableParams:
    """The posterior means of ``mu``, ``tau``, the level probabilities and the rates."""
    mn, kn, an, bn = normal_gamma_posterior(s, h)
    conc = h.alpha + s.cc
    log_prob = np.log(conc) - np.log(segment_sums(conc, h.offsets))[:, level_column(h.offsets)]
    return TableParams(mn, an / bn, log_prob, np.log(h.shape + s.ps) - np.log(h.rate + s.pn))


def log_posterior_density(p: TableParams, s: TableStats, h: Hyper) -> np.ndarray:
    """``log p(theta_k | X_k)`` per component (Normal–Gamma, Dirichlet and Gamma densities)."""
    mn, kn, an, bn = normal_gamma_posterior(s, h)
    tau = p.precision
    real = (an * np.log(bn) - gammaln(an) + (an - 1.0) * np.log(tau) - bn * tau
            + 0.5 * (np.log(kn * tau) - _LOG_2PI) - 0.5 * kn * tau * (p.mean - mn) ** 2)
    conc = h.alpha + s.cc
    coded = (gammaln(segment_sums(conc, h.offsets)).sum(axis=1) - gammaln(conc).sum(axis=1)
             + ((conc - 1.0) * p.log_prob).sum(axis=1))
    a = h.shape + s.ps
    b = h.rate + s.pn
    # density of log lambda: Gamma density times lambda
    counts = a * np.log(b) - gammaln(a) + a * p.log_rate - b * np.exp(p.log_rate)
    return real.sum(axis=1) + coded + counts.sum(axis=1)


# -------------------------------------------------------------- likelihoods
def log_likelihood(X, p: TableParams, h: Hyper) -> np.ndarray:
    """``log f(x_i; theta_k)`` for every row and component, shape (n, K)."""
    x, x2, seen = X.centred(h.m0)
    mu = p.mean - h.m0
    tau = p.precision
    # per observed cell: log N(x; mu, 1/tau) = 0.5 (log tau - log 2 pi) - 0.5 tau (x - mu)^2
    per_cell = 0.5 * (np.log(tau) - _LOG_2PI) - 0.5 * tau * mu * mu
    out = (seen @ per_cell.T if seen is not None
           else np.broadcast_to(per_cell.sum(axis=1), (len(X), len(tau))).copy())
    out -= 0.5 * (x2 @ tau.T) - x @ (tau * mu).T
    if X.code.shape[1]:
        out += X.level_matrix(h.offsets) @ p.log_prob.T
    if X.count.shape[1]:
        pseen = ~np.isnan(X.count)
        cnt = np.where(pseen, X.count, 0.0)
        out += cnt @ p.log_rate.T - pseen.astype(np.float64) @ np.exp(p.log_rate).T
        out -= X.log_fact[:, None]
    return X.weight[:, None] * out
