"""The compiled pieces of the exact birth and death moves (:mod:`dpclust.samplers.mallows.
birth_death`): a component's scores of the distinct rankings, and the birth's proposal of
a central ranking (around a seed ranking) and of its dispersions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import model as gm
from ..streams import next_uniform


@njit(cache=True)
def component_scores(orders, lengths, reps, rank, theta, n, cum, out):
    """``out[q] = log GM(pi_{reps[q]} | sigma, theta)`` for one component (``cum``: scratch of
    length ``J + 1``)."""
    gm.cum_log_psi_row(theta, n, cum)
    for q in range(reps.shape[0]):
        i = reps[q]
        out[q] = gm.gm_log_likelihood(orders, i, lengths[i], rank, theta, cum)


@njit(cache=True)
def _seed_centre(orders, i, t, order_c, centre, crank):
    """The central ranking a seed ranking ``i`` stands for: its ``t`` items first, in its
    order, then the other items in ``order_c``'s order.  Writes ``centre`` and its ranks."""
    n = order_c.shape[0]
    for item in range(n):
        crank[item] = -1
    for j in range(t):
        centre[j] = orders[i, j]
        crank[orders[i, j]] = j
    p = t
    for q in range(n):
        item = order_c[q]
        if crank[item] < 0:
            centre[p] = item
            crank[item] = p
            p += 1


@njit(cache=True)
def _full_log_gm(order_b, crank, theta_p):
    """``log GM(sigma_b | centre, theta_p)`` of a whole permutation (``n - 1`` codes, one
    dispersion ``theta_p`` for every rank) against the centre with ranks ``crank``."""
    n = order_b.shape[0]
    lp = 0.0
    for j in range(n - 1):
        r = crank[order_b[j]]
        s = r
        for q in range(j):
            if crank[order_b[q]] < r:
                s -= 1
        lp -= theta_p * s + gm.log_psi(theta_p, n - j - 1)
    return lp


@njit(cache=True)
def central_proposal(orders, lengths, reps, log_w, order_c, theta_p, draw, order_b, state,
                     centre, crank, left):
    """The birth's central ranking: a seed ranking ``reps[q]`` with probability
    ``exp(log_w[q])``, then ``sigma_b ~ GM(centre(seed), theta_p)`` over whole permutations
    (:func:`_seed_centre`; every permutation has a positive probability).  Draws into
    ``order_b`` (``draw=True``) or scores the given one; returns ``(state, log q(sigma_b))``,
    ``log sum_q w_q GM(sigma_b | centre_q, theta_p)``."""
    n = order_c.shape[0]
    if draw:
        state, u = next_uniform(state)
        acc = 0.0
        pick = reps.shape[0] - 1
        for q in range(reps.shape[0]):
            acc += math.exp(log_w[q])
            if u < acc:
                pick = q
                break
        i = reps[pick]
        _seed_centre(orders, i, lengths[i], order_c, centre, crank)
        for p in range(n):
            left[p] = centre[p]
        n_left = n
        for j in range(n):
            s = 0
            if j < n - 1:
                state, u = next_uniform(state)
                s = gm.sample_code(theta_p, n - j - 1, u)
            order_b[j] = left[s]
            for p in range(s, n_left - 1):
                left[p] = left[p + 1]
            n_left -= 1
    top = -np.inf
    total = 0.0
    for q in range(reps.shape[0]):
        i = reps[q]
        _seed_centre(orders, i, lengths[i], order_c, centre, crank)
        lp = log_w[q] + _full_log_gm(order_b, crank, theta_p)
        if lp > top:
            total = total * math.exp(top - lp) + 1.0
            top = lp
        else:
            total += math.exp(lp - top)
    return state, top + math.log(total)


@njit(cache=True)
def theta_proposal(orders, lengths, reps, counts, l_c, rank_b, theta_guess, nu_r, nu, n,
                   draw, theta_b, state, cum, code, S, Nj, xs, hs, ds):
    """The birth's dispersions given its central ranking: each ranking of the cluster counts
    for the new component with its responsibility ``r = GM_b / (GM_b + GM_c)`` at the
    dispersions ``theta_guess`` (a function of the rankings and of the two central rankings
    only, never of the allocation), and ``theta_j`` has the density ∝ ``exp(-(nu r_j + S_j)
    theta) psi(theta)^-(nu + N_j)`` with the responsibility-weighted statistics ``S_j``,
    ``N_j``: a draw into ``theta_b`` (``draw=True``, exact, adaptive rejection sampling) or
    the given one scored.  Returns ``(state, log q(theta_b))``, normalised."""
    gm.cum_log_psi_row(theta_guess, n, cum)
    J = theta_b.shape[0]
    for j in range(J):
        S[j] = 0.0
        Nj[j] = 0.0
    for q in range(reps.shape[0]):
        i = reps[q]
        t = lengths[i]
        gm.codes(orders, i, t, rank_b, code)
        lb = -cum[t]
        for j in range(t):
            lb -= theta_guess[j] * code[j]
        d = l_c[q] - lb
        if d > 0.0:
            e = math.exp(-d)
            r = e / (1.0 + e)
        else:
            r = 1.0 / (1.0 + math.exp(d))
        w = counts[q] * r
        for j in range(t):
            S[j] += w * code[j]
            Nj[j] += w
    log_q = 0.0
    for j in range(J):
        a = nu_r[j] + S[j]
        b = nu + Nj[j]
        m = n - j - 1
        if draw:
            state, theta_b[j] = gm.sample_theta(a, b, m, state, xs, hs, ds)
        log_q += gm.log_density_theta(theta_b[j], a, b, m) - gm.log_theta_integral(a, b, m)
    return state, log_q
