"""The assignment sweep of Slice-Gibbs (Meilă & Chen 2010, Figure 1, step 1) and the table of
log-likelihoods of the distinct rankings it reads when rankings repeat.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import model as gm
from ..gibbs import categorical_from_logs
from ..streams import next_uniform
from .scoring import _choose, _free_slot, _next_code, _score_one, _set_count


@njit(cache=True)
def _open_cluster(orders, i, t, nu_r, nu, state, c, order, theta, rankT, thetaT, neg_cumT,
                  rank_row, code, free, xs, hs, ds):
    """Open cluster slot c for ranking i alone: ``(sigma, theta)`` an exact draw given
    ``pi_i`` (:func:`dpclust.kernels.mallows.model.draw_given_one`), copied into the
    cluster-major arrays of the sweep.  Returns the random state."""
    n = order.shape[1]
    state = gm.draw_given_one(orders, i, t, nu_r, nu, n, state, order[c], rank_row,
                              theta[c], code, free, xs, hs, ds)
    for item in range(n):
        rankT[item, c] = rank_row[item]
    column = neg_cumT[:, c]
    gm.cum_log_psi_row(theta[c], n, column)
    for j in range(column.shape[0]):
        column[j] = -column[j]
    for j in range(theta.shape[1]):
        thetaT[j, c] = theta[c, j]
    return state


@njit(cache=True)
def slice_gibbs_sweep(orders, lengths, perm, start, labels, counts, log_counts, order, rankT,
                      theta, thetaT, neg_cumT, log_new, log_alpha, nu_r, nu, state, inverse,
                      table, fresh, scratch_i, scratch_f, rstore, logw, cand, code, xs, hs,
                      ds):
    """Assignments of Slice-Gibbs (Meilă & Chen 2010, Figure 1, step 1; Neal 2000,
    algorithm 2): ranking i joins cluster c with probability ∝ ``N_{c,-i} GM(pi_i |
    sigma_c, theta_c)`` or a new cluster ∝ ``alpha (n - t_i)! / n!`` (``log_new[i]`` holds
    the log of ``(n - t_i)! / n!``, Lemma 1); a new cluster's ``(sigma, theta)`` is an exact
    draw given ``pi_i`` alone (:func:`dpclust.kernels.mallows.model.draw_given_one`).

    Cluster-major copies for the scan: ``rankT[item, c]``, ``thetaT[j, c]`` and ``neg_cumT[t,
    c] = -sum_{j<t} log psi(theta_cj)``; rows ``order[c]``, ``theta[c]`` are kept too.

    With a non-empty ``table`` (:func:`score_table`, made at the start of the sweep, when
    every cluster's parameters are those the sweep uses) the log-likelihoods of ranking i
    are read from row ``inverse[i]`` (its distinct ranking), and only a cluster opened
    during the sweep (``fresh[c]``) is scored directly: the same conditional probabilities,
    repeated ballots scored once.  Otherwise each ranking is scored, the clusters far below
    the best dropped early (:func:`_score_rest`).
    Returns ``(position reached, state)``: ``perm.shape[0]`` when done.
    """
    alive = scratch_i[0]
    free = scratch_i[1]
    rank_row = scratch_i[2]
    acc = scratch_f[0]
    use_table = table.shape[0] > 0
    for p in range(start, perm.shape[0]):
        i = perm[p]
        t = lengths[i]
        old = labels[i]
        _set_count(counts, log_counts, old, counts[old] - 1)
        # a slot for a new cluster must exist before the draw (redrawing after growing the
        # arrays would make "new" twice as hard to reach at that moment)
        slot = _free_slot(counts)
        if slot < 0:
            _set_count(counts, log_counts, old, counts[old] + 1)
            return p, state
        if use_table:
            d = inverse[i]
            logw[0] = log_alpha + log_new[i]
            cand[0] = -1
            m = 1
            for c in range(counts.shape[0]):
                if counts[c] > 0:
                    if fresh[c]:
                        logw[m] = _score_one(0, orders, i, t, rankT, c, log_counts, neg_cumT,
                                             thetaT, thetaT, nu_r, nu)
                    else:
                        logw[m] = log_counts[c] + table[d, c]
                    cand[m] = c
                    m += 1
            state, u = next_uniform(state)
            c = cand[categorical_from_logs(logw, m, u)]
        else:
            state, c = _choose(0, orders, i, t, old, rankT, counts, log_counts, neg_cumT,
                               thetaT, thetaT, nu_r, nu, log_alpha + log_new[i], state, alive,
                               acc, rstore, logw, cand)
        if c < 0:
            c = slot
            fresh[c] = True
            state = _open_cluster(orders, i, t, nu_r, nu, state, c, order, theta, rankT,
                                  thetaT, neg_cumT, rank_row, code, free, xs, hs, ds)
        labels[i] = c
        _set_count(counts, log_counts, c, counts[c] + 1)
    return perm.shape[0], state


@njit(cache=True, parallel=True)
def score_table(orders, lengths, first, rankT, thetaT, neg_cumT, counts, table):
    """``table[d, c] = log GM(pi | sigma_c, theta_c)`` for each distinct ranking ``pi =
    orders[first[d]]`` and each cluster slot in use (``-inf`` elsewhere): ``neg_cumT[t, c] -
    sum_j theta_cj s_j(pi | sigma_c)``.  Parallel over the distinct rankings; each entry is
    computed alone, so the table is the same on any number of threads."""
    cap = counts.shape[0]
    J = thetaT.shape[0]
    for d in prange(first.shape[0]):
        i = first[d]
        t = lengths[i]
        row = table[d]
        rstore = np.empty((max(J, 1), cap), dtype=np.int64)
        for c in range(cap):
            row[c] = neg_cumT[t, c] if counts[c] > 0 else -np.inf
        for j in range(t):
            item = orders[i, j]
            for c in range(cap):
                if counts[c] == 0:
                    continue
                s = _next_code(rankT, rstore, item, j, c)
                if s > 0:
                    row[c] -= thetaT[j, c] * s
