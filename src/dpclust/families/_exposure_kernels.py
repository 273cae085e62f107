"""Numba kernel face of the Gamma–Poisson family with exposures
(:mod:`dpclust.families.exposure`): per-point operations on cluster slots.

See :class:`dpclust.families.base.FamilyKernel` for the contract.  Per column ``j`` a
cluster holding counts ``C_j`` over exposures ``E_j`` has the log marginal

``a log b - lgamma(a) + lgamma(a + C_j) - (a + C_j) log(b + E_j)``

(a count's ``- log c!``, which does not depend on the partition, is left out: see the
family's notes).
"""

from __future__ import annotations

import math

from numba import njit

# --------------------------------------------------------------------- kernels
# kdata  = (counts (N, n), exposure (N, n))
# kstats = (n_rows (cap,), C (cap, n), E (cap, n))
# khyper = (h,) with h = [a, b, a log b - lgamma(a)]


@njit(cache=True, _nrt=False)
def _pe_reset(kstats, k, khyper):
    n, C, E = kstats
    n[k] = 0.0
    for j in range(C.shape[1]):
        C[k, j] = 0.0
        E[k, j] = 0.0


@njit(cache=True, _nrt=False)
def _pe_add(kdata, i, kstats, k, khyper):
    counts, exposure = kdata
    n, C, E = kstats
    n[k] += 1.0
    for j in range(C.shape[1]):
        C[k, j] += counts[i, j]
        E[k, j] += exposure[i, j]


@njit(cache=True, _nrt=False)
def _pe_remove(kdata, i, kstats, k, khyper):
    counts, exposure = kdata
    n, C, E = kstats
    if n[k] <= 1.0:
        _pe_reset(kstats, k, khyper)
        return
    n[k] -= 1.0
    for j in range(C.shape[1]):
        C[k, j] -= counts[i, j]
        E[k, j] = max(E[k, j] - exposure[i, j], 0.0)


@njit(cache=True, _nrt=False)
def _column(a, b, c, e):
    """One column's log marginal of counts ``c`` over exposure ``e``, less ``a log b -
    lgamma(a)``."""
    return math.lgamma(a + c) - (a + c) * math.log(b + e)


@njit(cache=True, _nrt=False)
def _pe_log_predictive(kdata, i, kstats, k, khyper):
    """``log f(x_i | X_k)``: per column the ratio of the marginals with and without row
    ``i`` (a count of 0 or 1, the Plackett–Luce latents', without a ``lgamma``)."""
    counts, exposure = kdata
    C, E = kstats[1], kstats[2]
    h = khyper[0]
    a, b = h[0], h[1]
    s = 0.0
    for j in range(C.shape[1]):
        shape = a + C[k, j]
        rate = b + E[k, j]
        c = counts[i, j]
        e = exposure[i, j]
        s -= shape * math.log1p(e / rate)
        if c == 1.0:
            s += math.log(shape) - math.log(rate + e)
        elif c != 0.0:
            s += math.lgamma(shape + c) - math.lgamma(shape) - c * math.log(rate + e)
    return s


@njit(cache=True, _nrt=False)
def _pe_log_marginal(kstats, k, khyper):
    n, C, E = kstats
    h = khyper[0]
    if n[k] == 0.0:
        return 0.0
    s = 0.0
    for j in range(C.shape[1]):
        s += h[2] + _column(h[0], h[1], C[k, j], E[k, j])
    return s


@njit(cache=True, _nrt=False)
def _pe_log_join_gain(kstats, a, b, khyper):
    """``log f(X_a ∪ X_b) - log f(X_a) - log f(X_b)`` from the two slots."""
    n, C, E = kstats
    h = khyper[0]
    if n[a] == 0.0 or n[b] == 0.0:
        return 0.0
    s = 0.0
    for j in range(C.shape[1]):
        s += (_column(h[0], h[1], C[a, j] + C[b, j], E[a, j] + E[b, j])
              - _column(h[0], h[1], C[a, j], E[a, j]) - _column(h[0], h[1], C[b, j], E[b, j])
              - h[2])
    return s


# ------------------------------------------------------- instantiated-parameter pass
# kdata as above; kparams = (log_rate (K, n), rate (K, n));
# raw statistics row = [n_rows, counts (n), exposures (n)].

@njit(cache=True, _nrt=False)
def _pe_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    """``out[a] = sum_j c_ij log lambda_j - lambda_j e_ij`` for component ``comps[start +
    a]``, ``a < m``."""
    counts, exposure = kdata
    log_rate, rate = kparams
    for a in range(m):
        k = comps[start + a]
        s = 0.0
        for j in range(counts.shape[1]):
            s += counts[i, j] * log_rate[k, j] - rate[k, j] * exposure[i, j]
        out[a] = s


@njit(cache=True, _nrt=False)
def _pe_accumulate(kdata, i, acc, slot):
    counts, exposure = kdata
    n = counts.shape[1]
    acc[slot, 0] += 1.0
    for j in range(n):
        acc[slot, 1 + j] += counts[i, j]
        acc[slot, 1 + n + j] += exposure[i, j]
