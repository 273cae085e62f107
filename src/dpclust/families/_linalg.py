"""Small numba linear-algebra kernels shared by the families (no allocation in the loops)."""

from __future__ import annotations

import math

import llvmlite.binding as _llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address


def _bind(library: str, name: str, n_args: int):
    """SciPy's BLAS or LAPACK routine ``name`` (the library NumPy's and numba's ``np.dot``
    use) as a numba external function of ``n_args`` pointers.  It is bound by symbol name,
    registered at every import, so that the kernels that call it are cached on disk like the
    others (a ctypes pointer would pin an address)."""
    symbol = f"dpclust_{name}"
    _llvm.add_symbol(symbol, get_cython_function_address(f"scipy.linalg.cython_{library}",
                                                         name))
    return types.ExternalFunction(symbol, types.void(*([types.intp] * n_args)))


_dtrmm = _bind("blas", "dtrmm", 11)
_TRMM_OPTS = np.frombuffer(b"RUNN", dtype=np.uint8)  # side, uplo, trans, diag
_dsyrk = _bind("blas", "dsyrk", 10)
_SYRK_OPTS = np.frombuffer(b"LN", dtype=np.uint8)  # uplo, trans
_dtrtri = _bind("lapack", "dtrtri", 6)
_TRTRI_OPTS = np.frombuffer(b"UN", dtype=np.uint8)  # uplo, diag


@njit(cache=True)
def lower_times(P, Z, n):
    """In place: ``Z[:, :n] := P Z[:, :n]`` for a lower-triangular ``P`` (d, d) and ``Z``
    (d, ld), ``ld >= n``, both C-contiguous: BLAS ``dtrmm``, half the flops of the general
    product ``np.dot(P, Z)``.

    Read column-major, ``Z`` is ``Z^T`` (n, d) with leading dimension ``ld`` and ``P`` is
    ``P^T`` (upper), so the call is ``Z^T := Z^T P^T`` (side R, upper, no transpose).  Only
    the lower triangle of ``P`` is read.  An output's sum over the features runs in an order
    set by the BLAS kernel for the call's shape, not by the other columns' values.  (Give
    ``Z`` a row length that is not a multiple of 512: rows 4 KiB apart share cache sets, and
    filling such a ``Z`` column by column is several times slower; see :func:`padded`.)
    """
    d = P.shape[0]
    if n == 0 or d == 0:
        return
    dims = np.empty(4, dtype=np.int32)
    dims[0] = n
    dims[1] = d
    dims[2] = d
    dims[3] = Z.shape[1]
    one = np.ones(1)
    opts = _TRMM_OPTS
    _dtrmm(opts[0:].ctypes.data, opts[1:].ctypes.data, opts[2:].ctypes.data,
           opts[3:].ctypes.data, dims[0:].ctypes.data, dims[1:].ctypes.data, one.ctypes.data,
           P.ctypes.data, dims[2:].ctypes.data, Z.ctypes.data, dims[3:].ctypes.data)


@njit(cache=True)
def padded(n):
    """A row length of at least ``n`` doubles, a whole number of 64-byte cache lines and not
    a multiple of 4 KiB (so that the rows of a (d, n) scratch array do not share cache
    sets)."""
    ld = ((n + 7) // 8) * 8 + 8
    if ld % 512 == 0:
        ld += 8
    return ld


@njit(cache=True)
def gram_upper(Y, S):
    """``S := Y^T Y`` on and above the diagonal (row-major; the rest of ``S`` is left as
    it was) for C-contiguous ``Y`` (n, d) and ``S`` (d, d): BLAS ``dsyrk``, half the flops
    of ``np.dot(Y.T, Y)``.

    Read column-major, ``Y`` is ``Y^T`` (d, n) and the upper triangle of ``S`` is the lower
    triangle of its transpose: the call is ``S^T := Y^T Y`` (lower, no transpose).
    """
    n = Y.shape[0]
    d = Y.shape[1]
    if d == 0:
        return
    dims = np.empty(4, dtype=np.int32)
    dims[0] = d
    dims[1] = n
    dims[2] = d
    dims[3] = d
    coef = np.array([1.0, 0.0])
    opts = _SYRK_OPTS
    _dsyrk(opts[0:].ctypes.data, opts[1:].ctypes.data, dims[0:].ctypes.data,
           dims[1:].ctypes.data, coef[0:].ctypes.data, Y.ctypes.data, dims[2:].ctypes.data,
           coef[1:].ctypes.data, S.ctypes.data, dims[3:].ctypes.data)


@njit(cache=True)
def lower_inverses(chol, out):
    """``out[k] = inv(chol[k])`` for a C-contiguous stack of lower-triangular factors (K, d,
    d), by LAPACK ``dtrtri`` (a third of the work of a general inverse); the strict upper
    triangles of ``out`` are zero.  Returns the first k whose factor is singular, or -1.

    Read column-major, ``chol[k]`` is its transpose, upper triangular, and the inverse of
    the transpose is the transpose of the inverse.
    """
    K = chol.shape[0]
    d = chol.shape[1]
    dims = np.empty(3, dtype=np.int32)
    dims[0] = d
    dims[1] = max(d, 1)
    opts = _TRTRI_OPTS
    for k in range(K):
        for a in range(d):
            for b in range(d):
                out[k, a, b] = chol[k, a, b] if b <= a else 0.0
        dims[2] = 0
        if d > 0:
            _dtrtri(opts[0:].ctypes.data, opts[1:].ctypes.data, dims[0:].ctypes.data,
                    out[k].ctypes.data, dims[1:].ctypes.data, dims[2:].ctypes.data)
        if dims[2] != 0:
            return k
    return -1


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
