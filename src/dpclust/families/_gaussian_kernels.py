"""Numba kernel face of the gaussian family: per-point operations on cluster slots.

See :class:`dpclust.families.base.FamilyKernel` for the contract and
:mod:`dpclust.families.gaussian` for the model.
"""

from __future__ import annotations

import math

from numba import njit

from ._linalg import chol_downdate, chol_update, log_multigamma


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
