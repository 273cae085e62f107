"""Numba kernels of the samplers for DP mixtures of Generalized Mallows models.

Two kinds of loop, as in Meilă & Chen (2010), Figures 1 and 5:

* the assignment sweep over the rankings (``slice_gibbs_sweep``, ``beta_gibbs_sweep``): each
  ranking's codes against each cluster's central ranking come from rank look-ups in
  O(t²), so the work per ranking and cluster never grows with the number of items;
* the cluster update (``update_clusters``): ``T_Gibbs`` rounds of sigma | theta (the
  stagewise draw, alone or as a Metropolis-Hastings proposal) and theta | sigma (slice
  sampling, or the Beta approximation).

Cluster slots: a slot ``c`` is in use when ``counts[c] > 0``; the sweeps return early, before
a ranking's draw, when no slot is free (the caller grows the arrays and calls again), so a
draw is never discarded.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..families import _mallows_kernels as gm
from ..kernels.gibbs import categorical_from_logs
from ..kernels.subcluster import next_uniform

#: clusters whose weight is below exp(-36) of the best are skipped, as the categorical draw
#: itself does (dpclust.kernels.gibbs): their scores stop early
_SKIP_BELOW = 36.0

SIGMA_STAGEWISE = 0
SIGMA_MH = 1
THETA_SLICE = 0
THETA_BETA = 1


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
def _open_cluster(orders, i, t, nu_r, nu, state, c, order, theta, rankT, thetaT, neg_cumT,
                  rank_row, code, free, xs, hs, ds):
    """Open cluster slot c for ranking i alone: ``(sigma, theta)`` an exact draw given
    ``pi_i`` (:func:`dpclust.families._mallows_kernels.draw_given_one`), copied into the
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
    draw given ``pi_i`` alone (:func:`dpclust.families._mallows_kernels.draw_given_one`).

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


# ---------------------------------------------------------------------- Beta-Gibbs
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


# ----------------------------------------------------------------- cluster updates
@njit(cache=True)
def _normal(state):
    state, u1 = next_uniform(state)
    state, u2 = next_uniform(state)
    return state, math.sqrt(-2.0 * math.log1p(-u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True)
def _gamma(shape, state):
    """A Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shape < 1 by the u^(1/shape) boost)."""
    boost = 1.0
    if shape < 1.0:
        state, u = next_uniform(state)
        boost = math.exp(math.log1p(-u) / shape)
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        state, x = _normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        state, u = next_uniform(state)
        if math.log1p(-u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return state, d * v * boost


@njit(cache=True)
def beta_theta(a, b, state):
    """``theta = -log q`` with ``q ~ Beta(a, b)`` (Lemma 4 of Meilă & Chen 2010: the n → ∞
    conditional of theta_j), as ``log1p(Y / X)`` for ``X ~ Gamma(a)``, ``Y ~ Gamma(b)``."""
    state, x = _gamma(a, state)
    state, y = _gamma(b, state)
    if x <= 0.0:
        return state, 50.0
    return state, math.log1p(y / x)


@njit(cache=True, parallel=True)
def update_clusters(orders, lengths, members, starts, order, rank, theta, nu_r, nu,
                    n_gibbs, n_slices, sigma_mode, theta_mode, n1_cdf, seeds, accepted):
    """Update every cluster's ``(sigma, theta)`` given its rankings: ``n_gibbs`` rounds of
    sigma | theta then theta | sigma (Meilă & Chen 2010, Figures 1 and 5, step 2).

    * sigma | theta: the stagewise draw (``SIGMA_STAGEWISE``, the paper's; approximate, see
      ALGORITHMS.md §5) or that draw as an independence proposal in a Metropolis-Hastings
      step (``SIGMA_MH``, exact): accept with probability ``min(1, [e^{-L(sigma')} q(sigma)]
      / [e^{-L(sigma)} q(sigma')])``, ``L(sigma) = sum_j theta_j S_j(sigma)``, followed by a
      scan of neighbour swaps (:func:`_adjacent_swaps`), also exact.
    * theta | sigma: ``n_slices`` slice-sampling updates of each theta_j (``THETA_SLICE``,
      exact), or the Beta draw of Lemma 4 (``THETA_BETA``, approximate; a cluster of one
      ranking then draws sigma by Sample-σ-N1).

    ``members[starts[c]:starts[c + 1]]`` are cluster c's rankings.  The clusters are
    independent given their rankings, so they are updated in parallel, cluster c with the
    random stream ``seeds[c]`` (the same chain on any number of threads).  ``accepted[c]``
    counts accepted sigma proposals.
    """
    for c in prange(starts.shape[0] - 1):
        _update_cluster(orders, lengths, members, starts[c], starts[c + 1], c, order, rank,
                        theta, nu_r, nu, n_gibbs, n_slices, sigma_mode, theta_mode, n1_cdf,
                        seeds[c], accepted)


@njit(cache=True)
def _update_cluster(orders, lengths, members, lo, hi, c, order, rank, theta, nu_r, nu,
                    n_gibbs, n_slices, sigma_mode, theta_mode, n1_cdf, state, accepted):
    """One cluster's rounds of :func:`update_clusters`, with scratch of its own."""
    n = order.shape[1]
    J = theta.shape[1]
    scratch_f = np.zeros((3, n))
    scratch_i = np.zeros((6, n), dtype=np.int64)
    E = np.zeros((n, n))
    a = scratch_f[0]
    col = scratch_f[1]
    logw = scratch_f[2]
    present = scratch_i[0]
    mark = scratch_i[1]
    alive = scratch_i[2]
    absent = scratch_i[3]
    new_order = scratch_i[4]
    free = scratch_i[5]
    S = np.zeros(J)
    Nj = np.zeros(J)
    code = np.empty(J, dtype=np.int64)
    size = hi - lo
    work = 0
    for j in range(J):
        Nj[j] = 0.0
    for q in range(lo, hi):
        t = lengths[members[q]]
        work += t * t
        for j in range(t):
            Nj[j] += 1.0
    # per-rank count tables, when they are small and the cluster large: its rounds
    # then cost O(J n^2) each instead of a pass over its rankings (_count_tables)
    tables = J * n * n <= _MAX_TABLE and work > 2 * J * n * n
    A = np.empty((J, n)) if tables else np.empty((1, 1))
    F = np.empty((J, n, n)) if tables else np.empty((1, 1, 1))
    if tables:
        _count_tables(orders, lengths, members, lo, hi, A, F)  # fills them
    if theta_mode == THETA_BETA:
        if size == 1:  # a single ranking: Sample-σ-N1, then theta | sigma
            i = members[lo]
            state = sample_sigma_n1(orders, i, lengths[i], n1_cdf, n, state, order[c],
                                    rank[c], code, free)
            _cluster_S(orders, lengths, members, lo, hi, rank[c], S, code)
            for j in range(J):
                state, theta[c, j] = beta_theta(nu_r[j] + S[j], nu + Nj[j] + 1.0, state)
            return
        # theta | sigma first: a cluster opened in the sweep has no theta yet
        _cluster_S(orders, lengths, members, lo, hi, rank[c], S, code)
        for j in range(J):
            state, theta[c, j] = beta_theta(nu_r[j] + S[j], nu + Nj[j] + 1.0, state)
    for _ in range(n_gibbs):
        # sigma | theta
        if tables:
            n_present = _weights_from_tables(A, F, theta[c], a, E, present, mark)
        else:
            n_present = gm.cluster_weights(orders, lengths, members[lo:hi], size,
                                           theta[c], a, E, present, mark)
        state, log_q_new, cost_new = gm.stagewise(a, E, present, n_present, mark, n,
                                                  state, new_order, False, col, alive,
                                                  absent, logw)
        take = True
        if sigma_mode == SIGMA_MH:
            state, log_q_old, cost_old = gm.stagewise(a, E, present, n_present, mark, n,
                                                      state, order[c], True, col, alive,
                                                      absent, logw)
            # independence Metropolis-Hastings: target e^{-L(sigma)} (ALGORITHMS.md §5)
            log_ratio = (cost_old - cost_new) + (log_q_old - log_q_new)
            state, u = next_uniform(state)
            take = math.log1p(-u) < log_ratio
        if take:
            accepted[c] += 1
            for p in range(n):
                order[c, p] = new_order[p]
                rank[c, new_order[p]] = p
        if sigma_mode == SIGMA_MH:
            state = _adjacent_swaps(order[c], rank[c], a, E, mark, state)
        # theta | sigma
        if tables:
            _S_from_tables(A, F, rank[c], present, n_present, S)
        else:
            _cluster_S(orders, lengths, members, lo, hi, rank[c], S, code)
        gm.clear_weights(a, E, present, n_present, mark)
        for j in range(J):
            if theta_mode == THETA_BETA:
                state, theta[c, j] = beta_theta(nu_r[j] + S[j], nu + Nj[j] + 1.0, state)
            else:
                state, theta[c, j] = gm.slice_theta(theta[c, j], nu_r[j] + S[j],
                                                    nu + Nj[j], n - j - 1, n_slices, state)


@njit(cache=True)
def _adjacent_swaps(order_c, rank_c, a, E, mark, state):
    """One systematic scan of Metropolis steps that swap neighbours ``x, y`` of sigma
    (symmetric proposals): the swap changes ``L_sigma(R)`` by ``R[x, y] - R[y, x]`` with
    ``R[i, k] = a[i] - E[i, k]`` (:func:`dpclust.families._mallows_kernels.cluster_weights`),
    so each step is O(1) and the scan O(n).  Exact; it moves sigma locally where the
    independence proposal of the stagewise draw is rarely accepted (hundreds of items).
    Two items absent from the cluster's data are never swapped (the swap would change
    nothing the target sees)."""
    n = order_c.shape[0]
    for p in range(n - 1):
        x = order_c[p]
        y = order_c[p + 1]
        if mark[x] == 0 and mark[y] == 0:
            continue
        delta = (a[x] - E[x, y]) - (a[y] - E[y, x])  # L(after) - L(before)
        state, u = next_uniform(state)
        if delta <= 0.0 or math.log1p(-u) < -delta:
            order_c[p] = y
            order_c[p + 1] = x
            rank_c[y] = p
            rank_c[x] = p + 1
    return state


_MAX_TABLE = 1 << 16  # most entries of the per-rank tables J x n x n


@njit(cache=True)
def _count_tables(orders, lengths, members, lo, hi, A, F):
    """Per-rank counts of the rankings ``members[lo:hi]``: ``A[j, x]`` of those with item
    x at rank j, ``F[j, x, k]`` of those with x at rank j and k among ranks 0..j-1.  They
    give :func:`dpclust.families._mallows_kernels.cluster_weights`'s ``a = sum_j theta_j
    A[j]`` and ``E = sum_j theta_j F[j]``, and ``S_j(sigma) = sum_x A[j, x] rank(x) -
    sum_{x, k: rank(k) < rank(x)} F[j, x, k]`` (the sum of the rankings' codes at rank j),
    in O(J n^2) whatever the cluster's size."""
    A[:] = 0.0
    F[:] = 0.0
    for q in range(lo, hi):
        i = members[q]
        for j in range(lengths[i]):
            x = orders[i, j]
            A[j, x] += 1.0
            for p in range(j):
                F[j, x, orders[i, p]] += 1.0


@njit(cache=True)
def _weights_from_tables(A, F, theta_c, a, E, present, mark):
    """:func:`dpclust.families._mallows_kernels.cluster_weights` from the count tables of
    :func:`_count_tables` (same contract: ``a``, ``E``, ``mark`` zero on entry; returns the
    number of items present, listed in ``present``)."""
    J, n = A.shape
    n_present = 0
    for x in range(n):
        w = 0.0
        seen = False
        for j in range(J):
            if A[j, x] > 0.0:
                seen = True
                w += theta_c[j] * A[j, x]
        if seen:
            mark[x] = 1
            present[n_present] = x
            n_present += 1
            a[x] = w
    for q in range(n_present):
        x = present[q]
        for r in range(n_present):
            k = present[r]
            w = 0.0
            for j in range(1, J):
                w += theta_c[j] * F[j, x, k]
            E[x, k] = w
    return n_present


@njit(cache=True)
def _S_from_tables(A, F, rank_c, present, n_present, S):
    """``S[j] = sum over the cluster's rankings of their code at rank j`` from the count
    tables (:func:`_count_tables`): exact, as the counts are whole numbers."""
    J = A.shape[0]
    for j in range(J):
        s = 0.0
        for q in range(n_present):
            x = present[q]
            if A[j, x] > 0.0:
                s += A[j, x] * rank_c[x]
            if j > 0:
                rx = rank_c[x]
                for r in range(n_present):
                    k = present[r]
                    if rank_c[k] < rx:
                        s -= F[j, x, k]
        S[j] = s


@njit(cache=True)
def _cluster_S(orders, lengths, members, lo, hi, rank_c, S, code):
    for j in range(S.shape[0]):
        S[j] = 0.0
    for q in range(lo, hi):
        i = members[q]
        gm.codes(orders, i, lengths[i], rank_c, code)
        for j in range(lengths[i]):
            S[j] += code[j]


@njit(cache=True)
def instantiated_log_likelihood(orders, lengths, labels, rank, theta, cum_log_psi):
    """``sum_i log GM(pi_i | sigma_{z_i}, theta_{z_i})``."""
    total = 0.0
    for i in range(orders.shape[0]):
        c = labels[i]
        total += gm.gm_log_likelihood(orders, i, lengths[i], rank[c], theta[c],
                                      cum_log_psi[c])
    return total


# ------------------------------------------------------------------ split-merge moves
@njit(cache=True)
def side_code_stats(orders, lengths, members, rank, S, Nj, code):
    """``S[j] = S_{j+1}(sigma)`` (the summed codes) and ``Nj[j]`` (rankings of length > j)
    of the rankings ``members`` against the central ranking with ranks ``rank``."""
    _cluster_S(orders, lengths, members, 0, members.shape[0], rank, S, code)
    for j in range(Nj.shape[0]):
        Nj[j] = 0.0
    for q in range(members.shape[0]):
        for j in range(lengths[members[q]]):
            Nj[j] += 1.0


@njit(cache=True)
def theta_modes(S, Nj, nu_r, nu, n, out):
    """Each ``theta_j``'s conditional mode given sigma (its statistics ``S``, ``Nj``)."""
    for j in range(out.shape[0]):
        out[j] = gm.theta_mode(nu_r[j] + S[j], nu + Nj[j], n - j - 1)


@njit(cache=True)
def draw_thetas(S, Nj, nu_r, nu, n, state, out, xs, hs, ds):
    """Exact draws of every ``theta_j`` from its conditional given sigma (adaptive
    rejection sampling; the prior for ranks no ranking reaches)."""
    for j in range(out.shape[0]):
        state, out[j] = gm.sample_theta(nu_r[j] + S[j], nu + Nj[j], n - j - 1, state, xs,
                                        hs, ds)
    return state


@njit(cache=True)
def log_marginal_given_sigma(S, Nj, nu_r, nu, n, log_z0):
    """``log [P0(sigma) ∫ P0(theta) prod_pi GM(pi | sigma, theta) d theta]`` of one cluster
    from its statistics against sigma: ``-log n! + sum_j [log Z(nu r_j + S_j, nu + N_j) -
    log Z(nu r_j, nu)]`` (one-dimensional integrals, :func:`dpclust.families.
    _mallows_kernels.log_theta_integral`); ranks no ranking reaches give 0."""
    total = -math.lgamma(n + 1.0)
    for j in range(S.shape[0]):
        if Nj[j] > 0.0:
            total += gm.log_theta_integral(nu_r[j] + S[j], nu + Nj[j], n - j - 1) - log_z0[j]
    return total


@njit(cache=True)
def sigma_proposal(orders, lengths, members, theta, replay, order, rank, state, a, E,
                   present, mark, col, alive, absent, logw):
    """The stagewise distribution over central rankings given ``theta`` and the rankings
    ``members``: a draw into ``order`` / ``rank`` (``replay=False``), or the log probability
    of the ``order`` given (``replay=True``).  Returns ``(state, log_q)``."""
    n = order.shape[0]
    n_present = gm.cluster_weights(orders, lengths, members, members.shape[0], theta, a, E,
                                   present, mark)
    state, log_q, _ = gm.stagewise(a, E, present, n_present, mark, n, state, order, replay,
                                   col, alive, absent, logw)
    gm.clear_weights(a, E, present, n_present, mark)
    if not replay:
        for p in range(n):
            rank[order[p]] = p
    return state, log_q


@njit(cache=True)
def allocate_sides(orders, lengths, points, rank0, theta0, rank1, theta1, lw0, lw1, draw,
                   sides, state, cum0, cum1):
    """Each ranking of ``points`` to side 0 or 1 independently, with probability ∝ ``lw_s +
    log GM(pi | sigma_s, theta_s)``: drawn into ``sides`` (``draw=True``) or scored as they
    are.  Returns ``(state, log q)``, the log probability of the sides."""
    n = rank0.shape[0]
    gm.cum_log_psi_row(theta0, n, cum0)
    gm.cum_log_psi_row(theta1, n, cum1)
    log_q = 0.0
    for q in range(points.shape[0]):
        i = points[q]
        t = lengths[i]
        l0 = lw0 + gm.gm_log_likelihood(orders, i, t, rank0, theta0, cum0)
        l1 = lw1 + gm.gm_log_likelihood(orders, i, t, rank1, theta1, cum1)
        top = max(l0, l1)
        lz = top + math.log(math.exp(l0 - top) + math.exp(l1 - top))
        if draw:
            state, u = next_uniform(state)
            sides[q] = 1 if u < math.exp(l1 - lz) else 0
        log_q += (l1 if sides[q] == 1 else l0) - lz
    return state, log_q


# --------------------------------------------------- component moves (birth and death)
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
