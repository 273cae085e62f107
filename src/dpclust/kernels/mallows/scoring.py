"""A ranking's log weights for the clusters in use, shared by the assignment sweeps of
Slice-Gibbs and Beta-Gibbs: each ranking's codes against each cluster's central ranking
come from rank look-ups in O(t²), so the work per ranking and cluster never grows with the
number of items, and clusters far below the best stop being scored early.  Also the
instantiated log-likelihood of a whole state.

Cluster slots: a slot ``c`` is in use when ``counts[c] > 0``; the sweeps return early, before
a ranking's draw, when no slot is free (the caller grows the arrays and calls again), so a
draw is never discarded.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import model as gm
from ..gibbs import categorical_from_logs
from ..streams import next_uniform

#: clusters whose weight is below exp(-36) of the best are skipped, as the categorical draw
#: itself does (dpclust.kernels.gibbs): their scores stop early
_SKIP_BELOW = 36.0


@njit(cache=True)
def _free_slot(counts):
    for c in range(counts.shape[0]):
        if counts[c] == 0:
            return c
    return -1


@njit(cache=True)
def _set_count(counts, log_counts, c, value):
    counts[c] = value
    log_counts[c] = math.log(value) if value > 0 else -np.inf


@njit(cache=True)
def _log_rising_ratio(a, b, s):
    """``log [Gamma(a + s) Gamma(b) / (Gamma(a) Gamma(b + s))]`` for a whole ``s >= 0``."""
    if s == 0:
        return 0.0
    if s <= 16:
        prod = 1.0
        for u in range(s):
            prod *= (a + u) / (b + u)
        return math.log(prod)
    return math.lgamma(a + s) - math.lgamma(a) - math.lgamma(b + s) + math.lgamma(b)


@njit(cache=True)
def _code_term(mode, j, s, c, P, Q, nu_r, nu, value, floor):
    """Add rank j's term of ranking i's score against cluster c to ``value`` (every term is
    ``<= 0``); ``-inf`` once the score is below ``floor``.

    ``mode`` 0 (Slice-Gibbs): ``-theta_j s_j`` with ``P = theta`` (J, cap).  ``mode`` 1
    (Beta-Gibbs): ``log[(A)_s / (A + B + 2)_s]``, ``A = nu r_j + S_j``, ``B = nu + N_j``, with
    ``P = S``, ``Q = N`` (J, cap) (:func:`beta_gibbs_sweep`).
    """
    if s == 0:
        return value
    if mode == 0:
        value -= P[j, c] * s
    else:
        a = nu_r[j] + P[j, c]
        b = a + nu + Q[j, c] + 2.0
        # each factor (a + u) / (b + u) is at most the last, x = (a + s - 1) / (b + s - 1),
        # and s log x <= s (x - 1): a bound without a logarithm first
        if value - s * (b - a) / (b + s - 1.0) < floor:
            return -np.inf
        value += _log_rising_ratio(a, b, s)
    if value < floor:
        return -np.inf
    return value


@njit(cache=True)
def _score_one(mode, orders, i, t, rankT, c, log_counts, baseT, P, Q, nu_r, nu):
    """Ranking i's log weight for cluster c (no cut-off)."""
    value = log_counts[c] + baseT[t, c]
    rank_c = rankT[:, c]
    for j in range(t):
        s = gm.code_of(orders, i, j, rank_c)
        value = _code_term(mode, j, s, c, P, Q, nu_r, nu, value, -np.inf)
    return value


@njit(cache=True, inline="always")
def _next_code(rankT, rstore, item, j, c):
    """The code ``s_{j+1}`` of a ranking whose rank j is ``item``, against cluster c: the
    rank of ``item`` in sigma_c less the earlier items ranked before it, whose ranks
    ``rstore[:j, c]`` hold (this rank is stored in ``rstore[j, c]``)."""
    r = rankT[item, c]
    s = r
    for p in range(j):
        if rstore[p, c] < r:
            s -= 1
    rstore[j, c] = r
    return s


@njit(cache=True)
def _score_rest(mode, orders, i, t, rankT, counts, log_counts, baseT, P, Q, nu_r, nu, skip,
                floor, alive, acc, rstore, logw, cand, m):
    """Ranking i's log weights for every cluster in use but ``skip``, appended to ``logw``
    / ``cand`` from position m; returns the new length.

    Rank by rank over all clusters at once (``rankT[item]`` is one contiguous row), so a
    cluster whose score falls below ``floor`` (exp(-36) below the best weight known) after a
    few ranks is dropped without reading the rest: the categorical draw would give it
    weight zero anyway (:func:`dpclust.kernels.gibbs.categorical_from_logs`).
    """
    n_alive = 0
    for c in range(counts.shape[0]):
        if counts[c] > 0 and c != skip:
            alive[n_alive] = c
            acc[c] = log_counts[c] + baseT[t, c]
            n_alive += 1
    for j in range(t):
        item = orders[i, j]
        k = 0
        for q in range(n_alive):
            c = alive[q]
            s = _next_code(rankT, rstore, item, j, c)
            v = _code_term(mode, j, s, c, P, Q, nu_r, nu, acc[c], floor)
            if v == -np.inf:
                continue
            acc[c] = v
            alive[k] = c
            k += 1
        n_alive = k
    for q in range(n_alive):
        c = alive[q]
        logw[m] = acc[c]
        cand[m] = c
        m += 1
    return m


@njit(cache=True)
def _choose(mode, orders, i, t, old, rankT, counts, log_counts, baseT, P, Q, nu_r, nu,
            log_new_i, state, alive, acc, rstore, logw, cand):
    """Draw ranking i's cluster (-1: a new one) from the weights of every cluster in use
    (``counts`` without ranking i) and of a new cluster; the old cluster is scored first so
    that the cut-off is high from the start."""
    logw[0] = log_new_i
    cand[0] = -1
    best = log_new_i
    m = 1
    if counts[old] > 0:
        w = _score_one(mode, orders, i, t, rankT, old, log_counts, baseT, P, Q, nu_r, nu)
        logw[1] = w
        cand[1] = old
        m = 2
        best = max(best, w)
    m = _score_rest(mode, orders, i, t, rankT, counts, log_counts, baseT, P, Q, nu_r, nu,
                    old, best - _SKIP_BELOW, alive, acc, rstore, logw, cand, m)
    state, u = next_uniform(state)
    return state, cand[categorical_from_logs(logw, m, u)]


@njit(cache=True)
def instantiated_log_likelihood(orders, lengths, labels, rank, theta, cum_log_psi):
    """``sum_i log GM(pi_i | sigma_{z_i}, theta_{z_i})``."""
    total = 0.0
    for i in range(orders.shape[0]):
        c = labels[i]
        total += gm.gm_log_likelihood(orders, i, lengths[i], rank[c], theta[c],
                                      cum_log_psi[c])
    return total
