"""Small numba linear-algebra kernels shared by the families (no allocation in the loops)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False)
def chol_update(L, v):
    """In place: ``L L^T + v v^T`` for a lower-triangular ``L``; overwrites ``v``. O(d^2).

    Returns ``prod_k r_k / L_kk``, the square root of ``|L' L'^T| / |L L^T|``.
    """
    d = L.shape[0]
    ratio = 1.0
    for k in range(d):
        lkk = L[k, k]
        r = math.sqrt(lkk * lkk + v[k] * v[k])
        inv_l = 1.0 / lkk
        c = r * inv_l
        s = v[k] * inv_l
        inv_c = lkk / r
        ratio *= c
        L[k, k] = r
        for j in range(k + 1, d):
            L[j, k] = (L[j, k] + s * v[j]) * inv_c
            v[j] = c * v[j] - s * L[j, k]
    return ratio


@njit(cache=True, _nrt=False)
def chol_downdate(L, v):
    """In place: ``L L^T - v v^T`` for a lower-triangular ``L``; overwrites ``v``. O(d^2).

    The result must be positive definite; rounding that would make a pivot non-positive
    is clamped to a tiny positive value (the collapsed samplers rebuild every factor from
    scratch periodically, so such drift never accumulates).  Returns the determinant ratio
    as :func:`chol_update` does.
    """
    d = L.shape[0]
    ratio = 1.0
    for k in range(d):
        lkk = L[k, k]
        r2 = lkk * lkk - v[k] * v[k]
        if r2 <= 1e-300 + 1e-14 * lkk * lkk:
            r2 = 1e-14 * lkk * lkk + 1e-300
        r = math.sqrt(r2)
        inv_l = 1.0 / lkk
        c = r * inv_l
        s = v[k] * inv_l
        inv_c = lkk / r
        ratio *= c
        L[k, k] = r
        for j in range(k + 1, d):
            L[j, k] = (L[j, k] - s * v[j]) * inv_c
            v[j] = c * v[j] - s * L[j, k]
    return ratio


@njit(cache=True, _nrt=False)
def log_det_chol(L):
    """``log |L L^T|`` from a lower Cholesky factor."""
    s = 0.0
    for j in range(L.shape[0]):
        s += math.log(L[j, j])
    return 2.0 * s


@njit(cache=True, _nrt=False)
def log_multigamma(a, d):
    """``log Gamma_d(a) = d(d-1)/4 log(pi) + sum_{j=1..d} lgamma(a + (1 - j)/2)``."""
    s = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(d):
        s += math.lgamma(a - 0.5 * j)
    return s


@njit(cache=True)
def solve_lower(L, B):
    """``L^{-1} B`` for lower-triangular ``L`` (d, d) and ``B`` (d, m), by forward substitution."""
    d, m = B.shape
    Y = np.empty((d, m))
    for c in range(m):
        for j in range(d):
            s = B[j, c]
            for l in range(j):
                s -= L[j, l] * Y[l, c]
            Y[j, c] = s / L[j, j]
    return Y
