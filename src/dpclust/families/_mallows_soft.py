"""A data-driven proposal for one Generalized Mallows component from weighted rankings.

The coarsened sampler (:mod:`dpclust.samplers.coarsened`) proposes a component's
``(sigma, theta)`` from the rankings weighted by their tempered responsibilities
``w_i = zeta c_i r_ik``: first ``sigma' ~`` the stagewise distribution given ``theta``
(Meilă & Chen 2010, Lemma 2: each next item with probability ∝ ``exp(-sum_{i left}
R[i, k])``, :func:`~dpclust.kernels.mallows.model.stagewise`) with the weighted
``R = sum_j theta_j R_j``; then each ``theta_j' | sigma'`` exactly from its conjugate
conditional ``∝ exp(-theta (nu r_j + S_j)) psi_{n-j-1}(theta)^-(nu + N_j)`` with the
weighted code sums ``S_j`` and counts ``N_j`` (Mathematics §5).  Both factors are
normalised, so the proposal's log density is exact and the sampler's Hastings ratio is too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.mallows import model as _k


@njit(cache=True)
def _weighted_rank_weights(orders, lengths, w, theta, a, E, present, mark):
    """:func:`~dpclust.kernels.mallows.model.cluster_weights` with ranking ``i``
    counted ``w[i]`` times (rankings of weight 0 skipped)."""
    n_present = 0
    for i in range(orders.shape[0]):
        if w[i] != 0.0:
            n_present = _k.add_ranking(orders, lengths, i, w[i], theta, a, E, present, mark,
                                       n_present)
    return n_present


@njit(cache=True)
def soft_proposal(orders, lengths, w, theta_given, nu_r, nu, n, draw, order, theta, seed):
    """Draw ``(order, theta)`` (``draw=True``) or score the given ones; returns ``log q``."""
    J = theta.shape[0]
    a = np.zeros(n)
    E = np.zeros((n, n))
    present = np.zeros(n, dtype=np.int64)
    mark = np.zeros(n, dtype=np.int64)
    col = np.zeros(n)
    alive = np.zeros(n, dtype=np.int64)
    absent = np.zeros(n, dtype=np.int64)
    logw = np.zeros(n)
    n_present = _weighted_rank_weights(orders, lengths, w, theta_given, a, E, present, mark)
    state, log_q, _ = _k.stagewise(a, E, present, n_present, mark, n, seed, order, not draw,
                                   col, alive, absent, logw)
    rank = np.empty(n, dtype=np.int64)
    for p in range(n):
        rank[order[p]] = p
    # weighted code sums given the (new) central ranking
    S = np.zeros(J)
    N = np.zeros(J)
    code = np.empty(J, dtype=np.int64)
    for i in range(orders.shape[0]):
        if w[i] == 0.0:
            continue
        t = lengths[i]
        _k.codes(orders, i, t, rank, code)
        for j in range(t):
            S[j] += w[i] * code[j]
            N[j] += w[i]
    xs = np.empty(_k._MAX_HULL)
    hs = np.empty(_k._MAX_HULL)
    ds = np.empty(_k._MAX_HULL)
    for j in range(J):
        m = n - j - 1
        a_j = nu_r[j] + S[j]  # nu_r holds nu * r_j
        b_j = nu + N[j]
        if draw:
            state, theta[j] = _k.sample_theta(a_j, b_j, m, state, xs, hs, ds)
        log_q += _k.log_density_theta(theta[j], a_j, b_j, m) - _k.log_theta_integral(a_j, b_j, m)
    return log_q


def borda_order(orders, lengths, n: int) -> np.ndarray:
    """Items by mean rank over the rankings (an unranked item counted at the mean of the
    ranks left over, ``(t + n - 1) / 2``), best first: a starting central ranking."""
    orders = np.asarray(orders, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    pos = np.broadcast_to((0.5 * (lengths + n - 1.0))[:, None], (len(orders), n)).copy()
    for j in range(orders.shape[1]):
        ranked = lengths > j
        pos[np.flatnonzero(ranked), orders[ranked, j]] = j
    return np.argsort(pos.sum(axis=0), kind="stable")
