"""The assignment sweep of Beta-Gibbs (Meilă & Chen 2010, Figure 5, step 1): the clusters'
code statistics against their central rankings, which follow every move, the
Beta-approximate predictive they give (Lemma 6), and Sample-σ-N1 (Figure 4) for a new
cluster's central ranking.  Approximate.
"""

from __future__ import annotations

import math

from numba import njit

from . import model as gm
from ..streams import next_uniform
from .scoring import _choose, _free_slot, _set_count


@njit(cache=True)
def _refresh_beta_terms(ST, NT, c, nu_r, nu, kappaT):
    """``kappaT[t, c] = sum_{j<t} log((B + 1) / (A + B + 1))`` with ``A = nu r_j + S_j``,
    ``B = nu + N_j``: the s-free part of Beta-Gibbs' predictive (:func:`beta_gibbs_sweep`)."""
    acc = 0.0
    for j in range(ST.shape[0]):
        a = nu_r[j] + ST[j, c]
        b = nu + NT[j, c]
        acc += math.log((b + 1.0) / (a + b + 1.0))
        kappaT[j + 1, c] = acc


@njit(cache=True)
def _move_stats(orders, i, t, rankT, c, ST, NT, sign):
    """Add (sign 1) or remove (-1) ranking i's codes against cluster c to ``ST``, ``NT``."""
    rank_c = rankT[:, c]
    for j in range(t):
        ST[j, c] += sign * gm.code_of(orders, i, j, rank_c)
        NT[j, c] += sign


@njit(cache=True)
def sample_sigma_n1(orders, i, t, n1_cdf, n, state, order_c, rank_c, code, free):
    """Sample-σ-N1 (Meilă & Chen 2010, Figure 4): codes ``V_j = k`` with probability ∝
    ``B(nu r_j + k, nu + 2)`` (``n1_cdf[j]`` is their CDF over k = 0..n-j-1), ``pi(j)`` at the
    ``(V_j + 1)``-th free position, the rest uniformly.  Approximate (the Beta approximation
    of ``P(s_j = k)``)."""
    for j in range(t):
        state, u = next_uniform(state)
        m = n - j - 1
        k = 0
        while k < m and n1_cdf[j, k] < u:
            k += 1
        code[j] = k
    return gm.place_by_codes(orders, i, t, code, n, state, order_c, rank_c, free)


@njit(cache=True)
def beta_gibbs_sweep(orders, lengths, perm, start, labels, counts, log_counts, order, rankT,
                     ST, NT, kappaT, log_new, log_alpha, nu_r, nu, n1_cdf, state, scratch_i,
                     scratch_f, rstore, logw, cand, code):
    """Assignments of Beta-Gibbs (Meilă & Chen 2010, Figure 5, step 1): cluster c with
    probability ∝ ``N_{c,-i}`` times the Beta-approximate predictive

        prod_{j<t} B(s_j + A_j, B_j + 2) / B(A_j, B_j + 1)
        = prod_j (B_j + 1) / (A_j + B_j + 1) * (A_j)_s / (A_j + B_j + 2)_s

    (Lemma 6; ``A_j = nu r_j + S_j(sigma_c)``, ``B_j = nu + N_{c,j}`` without ranking i,
    ``(x)_s`` the rising factorial; the first factor's log is ``kappaT[t, c]``), a new
    cluster ∝ ``alpha (n - t_i)! / n!``, whose sigma is drawn by Sample-σ-N1.  ``ST[j, c]``
    and ``NT[j, c]`` (statistics of cluster c against its sigma) follow every move.
    Approximate.  Returns ``(position reached, state)``.
    """
    n = order.shape[1]
    J = ST.shape[0]
    alive = scratch_i[0]
    free = scratch_i[1]
    rank_row = scratch_i[2]
    acc = scratch_f[0]
    for p in range(start, perm.shape[0]):
        i = perm[p]
        t = lengths[i]
        old = labels[i]
        _move_stats(orders, i, t, rankT, old, ST, NT, -1.0)
        _set_count(counts, log_counts, old, counts[old] - 1)
        _refresh_beta_terms(ST, NT, old, nu_r, nu, kappaT)
        slot = _free_slot(counts)  # checked before the draw, as in slice_gibbs_sweep
        if slot < 0:  # no slot: put the ranking back and let the caller grow the arrays
            _move_stats(orders, i, t, rankT, old, ST, NT, 1.0)
            _set_count(counts, log_counts, old, counts[old] + 1)
            _refresh_beta_terms(ST, NT, old, nu_r, nu, kappaT)
            return p, state
        state, c = _choose(1, orders, i, t, old, rankT, counts, log_counts, kappaT, ST, NT,
                           nu_r, nu, log_alpha + log_new[i], state, alive, acc, rstore, logw,
                           cand)
        if c < 0:
            c = slot
            state = sample_sigma_n1(orders, i, t, n1_cdf, n, state, order[c], rank_row, code,
                                    free)
            for item in range(n):
                rankT[item, c] = rank_row[item]
            for j in range(J):
                ST[j, c] = 0.0
                NT[j, c] = 0.0
        _move_stats(orders, i, t, rankT, c, ST, NT, 1.0)
        _set_count(counts, log_counts, c, counts[c] + 1)
        _refresh_beta_terms(ST, NT, c, nu_r, nu, kappaT)
        labels[i] = c
    return perm.shape[0], state


@njit(cache=True)
def cluster_code_stats(orders, lengths, labels, rankT, ST, NT):
    """``ST[j, c] = sum over rankings of cluster c of s_{j+1}(pi | sigma_c)`` and ``NT[j,
    c]`` (rankings of length > j), from scratch."""
    ST[:] = 0.0
    NT[:] = 0.0
    for i in range(orders.shape[0]):
        _move_stats(orders, i, lengths[i], rankT, labels[i], ST, NT, 1.0)
