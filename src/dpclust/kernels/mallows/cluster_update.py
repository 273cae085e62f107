"""The cluster updates of both samplers (Meilă & Chen 2010, Figures 1 and 5, step 2):
``T_Gibbs`` rounds of sigma | theta (the stagewise draw, alone or as a Metropolis-Hastings
proposal followed by neighbour swaps) and theta | sigma (slice sampling, or the Beta
approximation), every cluster in parallel on its own random stream; a large cluster's
rounds read per-rank count tables instead of its rankings.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import model as gm
from ..streams import next_uniform
from .beta_gibbs import sample_sigma_n1

SIGMA_STAGEWISE = 0
SIGMA_MH = 1
THETA_SLICE = 0
THETA_BETA = 1


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
      Mathematics §5) or that draw as an independence proposal in a Metropolis-Hastings
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
            # independence Metropolis-Hastings: target e^{-L(sigma)} (Mathematics §5)
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
    ``R[i, k] = a[i] - E[i, k]`` (:func:`dpclust.kernels.mallows.model.cluster_weights`),
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
    give :func:`dpclust.kernels.mallows.model.cluster_weights`'s ``a = sum_j theta_j
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
    """:func:`dpclust.kernels.mallows.model.cluster_weights` from the count tables of
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
