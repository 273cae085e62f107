"""The Mallows kernel of top-t rankings (closed form in the notes of
:mod:`dpclust.rankings.baselines`) and the log density of a weighted mixture of such kernels,
evaluated for a whole grid of widths at once (numba, parallel over the queries).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from ...kernels.mallows import model as _k
from ..data import Rankings

#: most bins ``(t_c, a, D)`` of the per-query histogram of the density evaluation
_MAX_BINS = 1 << 18


def log_mallows_kernel(ranking, centre, theta, n_items) -> float:
    """``log K_theta(ranking | centre)``: the GM^s kernel with all ``theta_j = theta`` centred at
    a top-t ranking, averaged over its uniform completions (closed form of the notes of
    :mod:`dpclust.rankings.baselines`).

    Parameters
    ----------
    ranking : array-like of int of shape (t,)
        The ranking scored, item ids best first (``1 <= t <= n_items - 1``).
    centre : array-like of int of shape (t_c,)
        The kernel's centre, a top-t_c ranking (``1 <= t_c <= n_items``).
    theta : float
        Kernel width ``theta >= 0`` (larger = more concentrated).
    n_items : int
        Number of items ``n``.

    Returns
    -------
    log_k : float

    References
    ----------
    Lebanon & Mao (2008); Meilă & Chen (2010), equations (2)-(3) with ``theta_j = theta``.
    """
    ranking = np.asarray(ranking, dtype=np.int64)
    centre = np.asarray(centre, dtype=np.int64)
    n, t, tc = int(n_items), len(ranking), len(centre)
    rank = np.full(n, tc, dtype=np.int64)
    rank[centre] = np.arange(tc)
    r = rank[ranking]
    D = sum(int(r[j]) - int(np.count_nonzero(r[:j] < r[j])) for j in range(t))
    a = int(np.count_nonzero(r == tc))
    m = n - tc
    out = -theta * D - sum(_k.log_psi(float(theta), n - 1 - j) for j in range(t))
    out += sum(_k.log_psi(float(theta), m - 1 - q) - math.log(m - q) for q in range(a))
    return float(out)


def _kernel_tables(thetas, n, max_centre_length, max_length):
    """The parts of ``log K_theta`` that depend on lengths only, for every width of ``thetas``.

    Returns ``cta`` of shape (G, Tc + 1, A + 1), ``cta[g, t_c, a] = sum_{q<a} [log
    psi_{n-t_c-1-q}(theta_g) - log(n - t_c - q)]`` (``-inf`` where ``a > n - t_c``), and
    ``norm`` of shape (G, A + 1), ``norm[g, t] = sum_{j<t} log psi_{n-1-j}(theta_g)``, so that
    ``log K = cta[g, t_c, a] - theta_g D - norm[g, t]``; ``Tc`` is the longest centre and ``A``
    the longest ranking scored.
    """
    thetas = np.asarray(thetas, dtype=np.float64)
    G, Tc, A = len(thetas), int(max_centre_length), int(max_length)
    cta = np.full((G, Tc + 1, A + 1), -np.inf)
    norm = np.zeros((G, A + 1))
    for g, th in enumerate(thetas):
        for tc in range(Tc + 1):
            m = n - tc
            acc = 0.0
            cta[g, tc, 0] = 0.0
            for a in range(1, min(A, m) + 1):
                acc += _k.log_psi(float(th), m - a) - math.log(m - a + 1)
                cta[g, tc, a] = acc
        for t in range(1, A + 1):
            norm[g, t] = norm[g, t - 1] + _k.log_psi(float(th), n - t)
    return cta, norm


@njit(cache=True)
def _rank_tables(orders, lengths, n):
    """``rank[u, item]``: the item's position in ranking u, or ``t_u`` when u does not list it."""
    out = np.empty((orders.shape[0], n), dtype=np.int64)
    for u in range(orders.shape[0]):
        t = lengths[u]
        for x in range(n):
            out[u, x] = t
        for j in range(t):
            out[u, orders[u, j]] = j
    return out


@njit(cache=True)
def _pair(orders, i, t, rank, t_c, r):
    """``(D, a)`` of ranking i (length t) against a centre given by ``rank`` (length t_c):
    ``D = sum_j (rank[pi(j)] - #{q < j: rank[pi(q)] < rank[pi(j)]})``, ``a`` = items of pi the
    centre does not list.  ``r`` is scratch of length >= t."""
    D = 0
    a = 0
    for j in range(t):
        rj = rank[orders[i, j]]
        r[j] = rj
        s = rj
        for q in range(j):
            if r[q] < rj:
                s -= 1
        D += s
        if rj == t_c:
            a += 1
    return D, a


@njit(cache=True)
def _chunk_log_density(q_orders, q_lengths, c_rank, c_lengths, c_weights, total, thetas,
                       cta, norm, n_a, n_d, use_hist, exclude, start, stop, out):
    G = thetas.shape[0]
    V = c_rank.shape[0]
    n_bins = cta.shape[1] * n_a * n_d if use_hist else 1
    hist = np.zeros(n_bins)
    touched = np.empty(n_bins, dtype=np.int64)
    keys = np.empty(1 if use_hist else V, dtype=np.int64)
    r = np.empty(max(q_orders.shape[1], 1), dtype=np.int64)
    for i in range(start, stop):
        t = q_lengths[i]
        k = 0
        for v in range(V):
            tc = c_lengths[v]
            D, a = _pair(q_orders, i, t, c_rank[v], tc, r)
            b = (tc * n_a + a) * n_d + D
            if use_hist:
                if hist[b] == 0.0:
                    touched[k] = b
                    k += 1
                hist[b] += c_weights[v]
            else:
                keys[v] = b
        if use_hist and exclude[i] > 0.0:  # leave-one-out: the query is in bin (t, 0, 0)
            hist[t * n_a * n_d] -= exclude[i]
        n_terms = k if use_hist else V
        for g in range(G):
            m = -np.inf
            for q in range(n_terms):
                if use_hist:
                    b = touched[q]
                    if hist[b] <= 0.0:
                        continue
                else:
                    b = keys[q]
                    if q == i and c_weights[q] - exclude[i] <= 0.0:
                        continue
                D = b % n_d
                rest = b // n_d
                m = max(m, cta[g, rest // n_a, rest % n_a] - thetas[g] * D)
            if m == -np.inf:
                out[i, g] = -np.inf
                continue
            s = 0.0
            for q in range(n_terms):
                if use_hist:
                    b = touched[q]
                    h = hist[b]
                    if h <= 0.0:
                        continue
                else:
                    b = keys[q]
                    h = c_weights[q] - exclude[i] if q == i else c_weights[q]
                    if h <= 0.0:
                        continue
                D = b % n_d
                rest = b // n_d
                s += h * math.exp(cta[g, rest // n_a, rest % n_a] - thetas[g] * D - m)
            if s <= 0.0:
                out[i, g] = -np.inf
                continue
            out[i, g] = m + math.log(s) - math.log(total - exclude[i]) - norm[g, t]
        if use_hist:
            for q in range(k):
                hist[touched[q]] = 0.0


@njit(cache=True, parallel=True)
def _mixture_log_density(q_orders, q_lengths, c_rank, c_lengths, c_weights, thetas, cta, norm,
                         n_a, n_d, use_hist, exclude, bounds, out):
    """``out[i, g] = log( sum_v w_v K_{theta_g}(q_i | c_v) / (sum_v w_v - exclude[i]) )``, with
    ``exclude[i]`` of weight removed from the query's own term (leave-one-out; a nonzero
    ``exclude`` needs the queries to be the centres, query i = centre i).

    The kernel depends on a pair only through the bin ``(t_c, a, D)``, so with ``use_hist``
    each query builds a histogram of the centres' weights over the bins and sums the kernel
    over the bins it touched: every width ``theta_g`` of a grid for little more than the
    cost of one, and no underflow (log-sum-exp).  Without it (too many bins for a table, for
    long rankings of many items) the sum runs over the centres.
    """
    total = c_weights.sum()
    for c in prange(bounds.shape[0] - 1):
        _chunk_log_density(q_orders, q_lengths, c_rank, c_lengths, c_weights, total, thetas,
                           cta, norm, n_a, n_d, use_hist, exclude, bounds[c], bounds[c + 1],
                           out)


@njit(cache=True, parallel=True)
def _nearest_centre(q_orders, q_lengths, c_rank, c_lengths, log_w, theta, cta, norm, out):
    """``out[i] = argmax_k log_w[k] + log K_theta(q_i | c_k)``."""
    for i in prange(q_orders.shape[0]):
        r = np.empty(max(q_orders.shape[1], 1), dtype=np.int64)
        best = -np.inf
        arg = 0
        t = q_lengths[i]
        for k in range(c_rank.shape[0]):
            D, a = _pair(q_orders, i, t, c_rank[k], c_lengths[k], r)
            lk = log_w[k] - theta * D + cta[c_lengths[k], a] - norm[t]
            if lk > best:
                best = lk
                arg = k
        out[i] = arg


def _unique_rankings(R: Rankings):
    """Distinct rankings of ``R``: (orders, lengths, counts, inverse)."""
    uniq, inverse, counts = np.unique(R.orders, axis=0, return_inverse=True,
                                      return_counts=True)
    uniq = np.ascontiguousarray(uniq, dtype=np.int64)
    lengths = np.count_nonzero(uniq >= 0, axis=1).astype(np.int64)
    return uniq, lengths, counts.astype(np.float64), np.asarray(inverse).reshape(-1)


def _bounds(m: int) -> np.ndarray:
    n_chunks = max(1, min(m, 8 * numba.get_num_threads()))
    return np.linspace(0, m, n_chunks + 1).astype(np.int64)


def _log_density(q_orders, q_lengths, c_orders, c_lengths, c_weights, thetas, n, exclude=None):
    """``log sum_v w_v K_theta(q_i | c_v) / sum_v w_v`` for every width of ``thetas``: (M, G)."""
    q_orders = np.ascontiguousarray(q_orders, dtype=np.int64)
    q_lengths = np.asarray(q_lengths, dtype=np.int64)
    c_lengths = np.asarray(c_lengths, dtype=np.int64)
    thetas = np.asarray(thetas, dtype=np.float64)
    M = len(q_lengths)
    A = int(q_lengths.max()) if M else 1
    Tc = int(c_lengths.max())
    cta, norm = _kernel_tables(thetas, n, Tc, A)
    n_a, n_d = A + 1, A * Tc + 1
    use_hist = (Tc + 1) * n_a * n_d <= _MAX_BINS
    c_rank = _rank_tables(np.ascontiguousarray(c_orders, dtype=np.int64), c_lengths, n)
    exclude = np.zeros(M) if exclude is None else np.asarray(exclude, dtype=np.float64)
    out = np.empty((M, len(thetas)))
    _mixture_log_density(q_orders, q_lengths, c_rank, c_lengths,
                         np.asarray(c_weights, dtype=np.float64), thetas, cta, norm, n_a, n_d,
                         use_hist, exclude, _bounds(M), out)
    return out
