"""Compiled loops of the coarsened-posterior sampler (:mod:`dpclust.samplers.coarsened`).

The mixture density of distinct row ``i`` is kept scaled: ``L[i, k] = log f(x_i | theta_k)``,
``m_i = max_k L[i, k]`` (or larger), ``P[i, k] = exp(L[i, k] - m_i)`` in (0, 1], and
unnormalised weights ``v``, so that ``s_i = exp(m_i) sum_k v_k P[i, k] / sum_k v_k`` costs
multiplications only.  A move of component ``k`` first sums the other components once
(:func:`rest_sums`, O(n K)); each proposal for ``k`` then costs O(n).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def scale_rows(L, m, P):
    """Fill ``m`` (row maxima of ``L``) and ``P = exp(L - m)``."""
    D, K = L.shape
    for i in range(D):
        top = -np.inf
        for j in range(K):
            if L[i, j] > top:
                top = L[i, j]
        if not np.isfinite(top):
            top = 0.0
        m[i] = top
        for j in range(K):
            P[i, j] = math.exp(L[i, j] - top)


@njit(cache=True)
def rest_sums(P, v, k, out):
    """``out[i] = sum_{j != k} v_j P[i, j]``."""
    D, K = P.shape
    for i in range(D):
        s = 0.0
        for j in range(K):
            if j != k:
                s += v[j] * P[i, j]
        out[i] = s


def column_terms(rest, m, Lk, log_vk, c, resp):
    """``sum_i c_i log(exp(m_i) (rest_i + v_k exp(Lk_i - m_i)))`` with component ``k`` at
    log-likelihoods ``Lk`` and log weight ``log_vk``; fills ``resp`` with its
    responsibilities ``v_k f_ik / (sum_j v_j f_ij)``.  Returns the sum and the soft count
    ``sum_i c_i resp_i``.

    The sum is formed directly in the rows' scale (one ``exp`` and one ``log`` a row, in
    NumPy's vectorised loops: a compiled scalar loop costs five times as much); rows where
    component ``k`` dominates by far, or where both terms underflow, are summed in log
    space (:func:`_column_terms_rows`)."""
    a = Lk - m
    a += log_vk
    direct = a < 30.0
    e = np.exp(np.minimum(a, 30.0))
    e[~direct] = 0.0
    s = rest + e
    direct &= s > 0.0
    if direct.all():
        np.divide(e, s, out=resp)
        ls = np.log(s)
    else:
        ls = np.zeros(len(s))
        np.log(s, out=ls, where=direct)
        np.divide(e, s, out=resp, where=direct)
        odd = np.flatnonzero(~direct)
        _column_terms_rows(odd, rest, a, ls, resp)
    ls += m
    return float(c @ ls), float(c @ resp)


@njit(cache=True)
def _column_terms_rows(rows, rest, a, ls, resp):
    """:func:`column_terms` of ``rows`` in log space: ``ls = log(rest + e^a)``,
    ``resp = e^a / (rest + e^a)``."""
    for i in rows:
        lr = math.log(rest[i]) if rest[i] > 0.0 else -np.inf
        hi = a[i] if a[i] > lr else lr
        if hi == -np.inf:
            ls[i] = -np.inf
            resp[i] = 0.0
        else:
            ls[i] = hi + math.log(math.exp(a[i] - hi) + math.exp(lr - hi))
            resp[i] = math.exp(a[i] - ls[i])


@njit(cache=True)
def set_column(L, m, P, rest, k, Lk):
    """Component ``k``'s new log-likelihoods: ``L[:, k] = Lk``, rescaling the rows of ``P``
    (and the sums of the other components, ``rest``) whose maximum it raises."""
    D, K = P.shape
    for i in range(D):
        if Lk[i] > m[i]:
            f = math.exp(m[i] - Lk[i])
            for j in range(K):
                P[i, j] *= f
            rest[i] *= f
            m[i] = Lk[i]
        L[i, k] = Lk[i]
        P[i, k] = math.exp(Lk[i] - m[i])


@njit(cache=True)
def log_mixture(P, m, v, c):
    """``sum_i c_i log s_i`` with ``s_i = exp(m_i) sum_k v_k P[i, k] / sum_k v_k``."""
    D, K = P.shape
    V = 0.0
    for j in range(K):
        V += v[j]
    total = 0.0
    for i in range(D):
        s = 0.0
        for j in range(K):
            s += v[j] * P[i, j]
        total += c[i] * (m[i] + math.log(s / V))
    return total


@njit(cache=True)
def allocate(P, v, inverse, uniforms, out):
    """``out[p] = k`` with probability ``v_k P[inverse[p], k] / sum_j v_j P[inverse[p], j]``
    (inverse-CDF with ``uniforms[p]``)."""
    K = P.shape[1]
    for p in range(len(inverse)):
        i = inverse[p]
        s = 0.0
        for j in range(K):
            s += v[j] * P[i, j]
        u = uniforms[p] * s
        acc = 0.0
        choice = K - 1
        for j in range(K):
            acc += v[j] * P[i, j]
            if u < acc:
                choice = j
                break
        while v[choice] * P[i, choice] == 0.0 and choice > 0:  # rounding at the top
            choice -= 1
        out[p] = choice


@njit(cache=True)
def dot_diff(n, a, b):
    """``sum_i n_i (a_i - b_i)`` over the ``n_i > 0`` (where ``a`` or ``b`` may be -inf)."""
    total = 0.0
    for i in range(len(n)):
        if n[i] > 0.0:
            total += n[i] * (a[i] - b[i])
    return total


@njit(cache=True)
def rest_sums2(P, v, j, k, out):
    """``out[i] = sum_{l != j, k} v_l P[i, l]``."""
    D, K = P.shape
    for i in range(D):
        s = 0.0
        for l in range(K):
            if l != j and l != k:
                s += v[l] * P[i, l]
        out[i] = s


def pair_terms(rest, m, Lj, Lk, log_vj, log_vk, c, resp_j, resp_k):
    """:func:`column_terms` for two components ``j`` and ``k`` at once (``rest`` sums the
    others): returns ``sum_i c_i log s_i`` (unnormalised weights) and fills both
    responsibilities (in log space, NumPy's vectorised loops)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # rows where all three are 0
        a = Lj - m
        a += log_vj
        b = Lk - m
        b += log_vk
        lr = np.log(rest)  # -inf where the other components hold nothing
        hi = np.maximum(np.maximum(a, b), lr)
        dead = hi == -np.inf
        any_dead = bool(dead.any())
        if any_dead:
            hi[dead] = 0.0
        ea, eb = np.exp(a - hi), np.exp(b - hi)
        s = ea + eb
        s += np.exp(lr - hi)
        np.divide(ea, s, out=resp_j)
        np.divide(eb, s, out=resp_k)
        ls = np.log(s)
    ls += hi
    ls += m
    if any_dead:
        resp_j[dead] = 0.0
        resp_k[dead] = 0.0
        ls[dead] = -np.inf
    return float(c @ ls)
