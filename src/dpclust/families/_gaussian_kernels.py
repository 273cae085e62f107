"""Numba kernel face of the gaussian family: per-point operations on cluster slots.

See :class:`dpclust.families.base.FamilyKernel` for the contract and
:mod:`dpclust.families.gaussian` for the model.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._linalg import (chol_downdate, chol_update, gram_upper, log_multigamma, lower_times,
                      padded)


# --------------------------------------------------------------------- kernels
# kstats = (n, kappa, nu, mean, chol, cst, logdet, work, fac, half), all slot-first:
#   chol[k] is the lower Cholesky factor of S_n; logdet[k] = log|S_n|;
#   cst[k] is the Student-t log-normaliser, fac[k] = kappa_n / (kappa_n + 1) and
#   half[k] = (nu_n + 1) / 2, so that
#   log f(x | X_k) = cst[k] - half[k] * log1p(fac[k] * |chol^{-1}(x - m_n)|^2);
#   work[k] is scratch space for the slot's updates.
# khyper = (m0, L0, [kappa0, nu0, log|S0|], tables) with the count-only factors of
# _count_tables.

@njit(cache=True, parallel=True)
def gather_rows(X, rows, out):
    """``out[t] = X[rows[t]]``, in parallel (many independent reads in flight)."""
    for t in prange(rows.shape[0]):
        for a in range(X.shape[1]):
            out[t, a] = X[rows[t], a]


@njit(cache=True)
def rows_stats(X, rows, slots, n, mean, scatter):
    """Count, mean and centred scatter of the points ``X[rows[t]]`` in slots ``slots[t]``,
    added to zeroed ``n`` (K,), ``mean`` (K, d) and ``scatter`` (K, d, d): sums first, then
    the scatter about each slot's mean (the two-pass form of :meth:`NormalInverseWishart.
    stats`), reading the rows where they are."""
    d = X.shape[1]
    for t in range(rows.shape[0]):
        k = slots[t]
        n[k] += 1.0
        for a in range(d):
            mean[k, a] += X[rows[t], a]
    for k in range(n.shape[0]):
        if n[k] > 0.0:
            for a in range(d):
                mean[k, a] /= n[k]
    c = np.empty(d)
    for t in range(rows.shape[0]):
        k = slots[t]
        for a in range(d):
            c[a] = X[rows[t], a] - mean[k, a]
        for a in range(d):
            for b in range(a + 1):
                scatter[k, a, b] += c[a] * c[b]
    for k in range(n.shape[0]):
        for a in range(d):
            for b in range(a):
                scatter[k, b, a] = scatter[k, a, b]


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


@njit(cache=True)
def _niw_log_join_gain(kstats, a, b, khyper):
    """``log f(X_a ∪ X_b) - log f(X_a) - log f(X_b)`` from the two slots' posteriors.

    The union's scale matrix is ``S_a + S_b - S_0`` plus the weighted scatter of the three
    means ``m_a`` (weight kappa_a), ``m_b`` (kappa_b) and ``m_0`` (-kappa_0) about the
    union's mean, which avoids the cancellation of expanding ``kappa m m^T`` terms.
    O(d³), independent of the number of points.
    """
    n, kappa, nu, mean, chol, cst, logdet, work, fac, half = kstats
    m0, L0, h, table = khyper
    if n[a] == 0.0 or n[b] == 0.0:
        return 0.0
    d = mean.shape[1]
    k0 = h[0]
    ka = kappa[a]
    kb = kappa[b]
    kap = ka + kb - k0
    n_ab = n[a] + n[b]
    nu_ab = h[1] + n_ab
    m = np.empty(d)
    for j in range(d):
        m[j] = (ka * mean[a, j] + kb * mean[b, j] - k0 * m0[j]) / kap
    S = np.empty((d, d))
    La = chol[a]
    Lb = chol[b]
    for r in range(d):
        ya = mean[a, r] - m[r]
        yb = mean[b, r] - m[r]
        y0 = m0[r] - m[r]
        for c in range(r + 1):
            v = 0.0
            for t in range(c + 1):
                v += La[r, t] * La[c, t] + Lb[r, t] * Lb[c, t] - L0[r, t] * L0[c, t]
            v += (ka * ya * (mean[a, c] - m[c]) + kb * yb * (mean[b, c] - m[c])
                  - k0 * y0 * (m0[c] - m[c]))
            S[r, c] = v
    # Cholesky of S in place (lower triangle) for log|S|
    ld = 0.0
    for j in range(d):
        s = S[j, j]
        for t in range(j):
            s -= S[j, t] * S[j, t]
        s = math.sqrt(max(s, 1e-300))
        S[j, j] = s
        ld += 2.0 * math.log(s)
        for r in range(j + 1, d):
            v = S[r, j]
            for t in range(j):
                v -= S[r, t] * S[j, t]
            S[r, j] = v / s
    log_ab = (-0.5 * n_ab * d * math.log(math.pi)
              + log_multigamma(0.5 * nu_ab, d) - log_multigamma(0.5 * h[1], d)
              + 0.5 * h[1] * h[2] - 0.5 * nu_ab * ld
              + 0.5 * d * (math.log(k0) - math.log(kap)))
    return log_ab - _niw_log_marginal(kstats, a, khyper) - _niw_log_marginal(kstats, b, khyper)


# ------------------------------------------------------- instantiated-parameter pass
# kdata = (X, shift): raw statistics are accumulated about ``shift`` (the data mean) so that
#   the scatter recovered from plain sums keeps its precision;
# kparams = (mean (K, d), prec (K, d, d), const (K,), cs (K, d), shift (d,)):
#   prec[k] is the lower-triangular inverse of the Cholesky factor of Sigma_k and const[k] =
#   -(d log 2 pi + log|Sigma_k|) / 2, so that log f(x; theta_k) = const[k] - |prec[k] (x -
#   mean[k])|^2 / 2; cs[k] = prec[k] (mean[k] - shift) serves the blocked form,
#   log f(x; theta_k) = const[k] - |prec[k] (x - shift) - cs[k]|^2 / 2;
#   in two dimensions kparams = (flat (K, 6),) with rows [m0, m1, p00, p10, p11, const],
#   48 bytes a component;
# raw statistics row = [n, sum (x - shift) (d), upper triangle of sum (x - shift)(x - shift)^T].

@njit(cache=True, _nrt=False)
def _gauss_log_likelihood(kdata, i, kparams, k):
    X = kdata[0]
    mean, prec, const = kparams[0], kparams[1], kparams[2]
    d = X.shape[1]
    q = 0.0
    for a in range(d):
        z = 0.0
        for b in range(a + 1):
            z += prec[k, a, b] * (X[i, b] - mean[k, b])
        q += z * z
    return const[k] - 0.5 * q


@njit(cache=True, _nrt=False)
def _gauss_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    """``out[a] = log f(x_i; theta_{comps[start + a]})`` for ``a < m``."""
    for a in range(m):
        out[a] = _gauss_log_likelihood(kdata, i, kparams, comps[start + a])


@njit(cache=True, _nrt=False)
def _gauss_accumulate(kdata, i, acc, slot):
    X, shift = kdata
    d = X.shape[1]
    acc[slot, 0] += 1.0
    idx = 1 + d
    for a in range(d):
        ya = X[i, a] - shift[a]
        acc[slot, 1 + a] += ya
        for b in range(a, d):
            acc[slot, idx] += ya * (X[i, b] - shift[b])
            idx += 1


@njit(cache=True)
def _gauss_score_block(kdata, kparams, rows, s, e, comps, c0, c1, out, col0, base):
    """``out[rows[r] - base, col0 + a - c0] = log f(x_{rows[r]}; theta_{comps[a]})`` for
    ``s <= r < e``, ``c0 <= a < c1``: the rows gathered once (transposed, ``Y^T``, d x n,
    rows padded: see :func:`~dpclust.families._linalg.padded`),
    then one triangular product per component, ``Z = prec[k] Y^T`` (BLAS ``trmm``: half the
    flops of a general GEMM, ``prec[k]`` being the inverse of a lower Cholesky factor), and
    the columns' ``|Z - cs[k]|^2`` summed feature by feature over contiguous rows of Z
    (vectorised: no chain of dependent adds).

    A row's score does not depend on the other rows of its call (the product's sum over the
    features runs in the same order for each output), up to the BLAS kernel chosen for the
    call's shape, which depends on the chunking only."""
    X = kdata[0]
    prec, const, cs, shift = kparams[1], kparams[2], kparams[3], kparams[4]
    n = e - s
    d = X.shape[1]
    ld = padded(n)
    Yt = np.empty((d, ld))
    for r in range(n):
        i = rows[s + r]
        for a in range(d):
            Yt[a, r] = X[i, a] - shift[a]
    Z = np.empty((d, ld))
    q = np.empty(n)
    for a in range(c0, c1):
        k = comps[a]
        Z[:, :] = Yt
        lower_times(prec[k], Z, n)
        for r in range(n):
            q[r] = 0.0
        for b in range(d):
            c = cs[k, b]
            for r in range(n):
                z = Z[b, r] - c
                q[r] += z * z
        col = col0 + a - c0
        for r in range(n):
            out[rows[s + r] - base, col] = const[k] - 0.5 * q[r]


@njit(cache=True)
def unpack_raw_stats(acc, shift, n, mean, scatter):
    """Counts, means and scatters from the passes' raw statistics ``acc[k] = (n, sum of y,
    upper triangle of sum of y y^T)`` about ``shift`` (``y = x - shift``), into ``n`` (K,),
    ``mean`` (K, d) and ``scatter`` (K, d, d): ``scatter = sum y y^T - n ybar ybar^T``,
    symmetrised; empty slots get zeros."""
    K = acc.shape[0]
    d = shift.shape[0]
    cm = np.empty(d)
    for k in range(K):
        nk = acc[k, 0]
        n[k] = nk
        safe = nk if nk > 1.0 else 1.0
        for a in range(d):
            cm[a] = acc[k, 1 + a] / safe
            mean[k, a] = cm[a] + shift[a] if nk > 0.0 else 0.0
        idx = 1 + d
        for a in range(d):
            for b in range(a, d):
                second = acc[k, idx]
                idx += 1
                if nk == 0.0:
                    scatter[k, a, b] = 0.0
                    scatter[k, b, a] = 0.0
                    continue
                v = second - nk * cm[a] * cm[b]
                w = second - nk * cm[b] * cm[a]
                scatter[k, a, b] = 0.5 * (v + w)
                scatter[k, b, a] = 0.5 * (w + v)


@njit(cache=True)
def _gauss_accumulate_block(kdata, rows, s, e, acc, slot):
    """:func:`_gauss_accumulate` of the points ``rows[s:e]`` at once: the scatter about
    ``shift`` as one symmetric rank-n update ``Y^T Y`` of the gathered rows (BLAS ``syrk``,
    its upper triangle only)."""
    X, shift = kdata
    n = e - s
    d = X.shape[1]
    Y = np.empty((n, d))
    col = np.zeros(d)
    for r in range(n):
        i = rows[s + r]
        for a in range(d):
            y = X[i, a] - shift[a]
            Y[r, a] = y
            col[a] += y
    S = np.empty((d, d))
    gram_upper(Y, S)
    acc[slot, 0] += n
    for a in range(d):
        acc[slot, 1 + a] += col[a]
    idx = 1 + d
    for a in range(d):
        for b in range(a, d):
            acc[slot, idx] += S[a, b]
            idx += 1


# Two dimensions: the same two functions unrolled, kept apart from the general ones so that
# each stays small (a function with both paths costs the pass twice as much per point).

@njit(cache=True, _nrt=False)
def _gauss2_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    """:func:`_gauss_log_likelihoods` for d = 2, from the packed rows of ``kparams[0]``."""
    X = kdata[0]
    flat = kparams[0]
    x0 = X[i, 0]
    x1 = X[i, 1]
    for a in range(m):
        k = comps[start + a]
        y0 = x0 - flat[k, 0]
        y1 = x1 - flat[k, 1]
        z0 = flat[k, 2] * y0
        z1 = flat[k, 3] * y0 + flat[k, 4] * y1
        out[a] = flat[k, 5] - 0.5 * (z0 * z0 + z1 * z1)


@njit(cache=True, _nrt=False)
def _gauss2_accumulate(kdata, i, acc, slot):
    """:func:`_gauss_accumulate` for d = 2."""
    X, shift = kdata
    y0 = X[i, 0] - shift[0]
    y1 = X[i, 1] - shift[1]
    acc[slot, 0] += 1.0
    acc[slot, 1] += y0
    acc[slot, 2] += y1
    acc[slot, 3] += y0 * y0
    acc[slot, 4] += y0 * y1
    acc[slot, 5] += y1 * y1
