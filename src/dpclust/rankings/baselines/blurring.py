"""The steps of exponential blurring mean shift over top-t rankings (Meilă & Bao 2008): one
blurring step of every position (numba, parallel over blocks of positions), the blurring
loop until the points collapse, the clusters' central rankings, and the width of the
fitted mixture (see :class:`~dpclust.rankings.RankingEBMS`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..data import Rankings
from ._base import _warn_edge
from .kernel import _kernel_tables, _log_density, _rank_tables, _unique_rankings

#: the coarse grid of the maximum-likelihood mixture width (then refined)
_ML_GRID = np.geomspace(1e-3, 1e2, 51)
#: neighbours whose blurring weight is below this fraction of the point's own are skipped
_WEIGHT_FLOOR = 1e-14
#: positions updated together by one thread of the blurring step
_BLOCK = 8


@njit(cache=True)
def _greedy_consensus(av, E, n, L, out):
    """The first ``L`` items of the greedy (stagewise) minimiser of ``sum over pairs (i' before
    i) of R[i, i']`` with ``R[i, k] = av[i] - E[i, k]``: at each stage, the item left with the
    smallest column sum ``sum_{i left} R[i, k]``, the cost of placing it next (ties: larger
    ``av``, then smaller id)."""
    total = 0.0
    for x in range(n):
        total += av[x]
    col = np.empty(n)
    left = np.ones(n, dtype=np.bool_)
    for k in range(n):
        s = 0.0
        for x in range(n):
            s += E[x, k]
        col[k] = total - av[k] - s
    eps = 1e-12 * (total + 1.0)
    for p in range(L):
        best = -1
        for k in range(n):
            if not left[k]:
                continue
            if best < 0 or col[k] < col[best] - eps or (
                    col[k] <= col[best] + eps and av[k] > av[best]):
                best = k
        out[p] = best
        left[best] = False
        for k in range(n):
            if left[k]:
                col[k] -= av[best] - E[best, k]


@njit(cache=True)
def _accumulate(orders, lengths, v, w, av, E):
    """Add ranking v with weight w to the statistics ``av`` (weight of each item's placements)
    and ``E[i, k]`` (weight of placements of i with k placed before it)."""
    for j in range(lengths[v]):
        x = orders[v, j]
        av[x] += w
        for p in range(j):
            E[x, orders[v, p]] += w


@njit(cache=True, parallel=True)
def _cluster_central_rankings(orders, lengths, counts, members, starts, n, out, out_len):
    """Central ranking of each cluster: the greedy ML order (:func:`_greedy_consensus`) of its
    members' statistics, ``members[starts[k]:starts[k + 1]]`` (rows of ``orders`` weighted by
    ``counts``), over the items they rank (``out_len[k]`` of them, at most ``n - 1``; items no
    member ranks are left to the kernel's uniform completion)."""
    for k in prange(starts.shape[0] - 1):
        av = np.zeros(n)
        E = np.zeros((n, n))
        for q in range(starts[k], starts[k + 1]):
            _accumulate(orders, lengths, members[q], counts[members[q]], av, E)
        L = 0
        for x in range(n):
            if av[x] > 0.0:
                L += 1
        L = min(L, n - 1)
        _greedy_consensus(av, E, n, L, out[k])
        out_len[k] = L


@njit(cache=True, parallel=True)
def _blur_step(pos, pos_len, rank_t, counts, e_d, e_a, e_n, n, T, new_pos):
    """One EBMS step: each position u moves to the weighted greedy GM^s central ranking
    (first ``T`` items) of all positions v, weighted by ``counts_v K_theta(pi_v | pi_u)``.

    ``rank_t[item, u]`` is the transposed rank table of the positions (:func:`_rank_tables`),
    with at least ``_BLOCK`` columns per block; ``e_d[D] e_a[t_u, a] e_n[t_v] = K_theta(pi_v |
    pi_u) / K_theta(pi_u | pi_u)`` (:func:`_blur_weights`).  Weights below ``_WEIGHT_FLOOR``
    times u's own are skipped.  The positions are taken ``_BLOCK`` at a time, so that the pair
    statistics ``(D, a)`` of a neighbour against the whole block, and its contributions to
    the block's accumulators, are vectorisable loops over the block.
    """
    U = pos.shape[0]
    B = _BLOCK
    for blk in prange((U + B - 1) // B):
        u0 = blk * B
        nb = min(B, U - u0)
        rr = np.empty((max(pos.shape[1], 1), B), dtype=np.int32)
        D = np.zeros(B, dtype=np.int32)
        a = np.zeros(B, dtype=np.int32)
        tu = np.zeros(B, dtype=np.int32)
        floor = np.full(B, np.inf)
        for b in range(nb):
            tu[b] = pos_len[u0 + b]
            floor[b] = _WEIGHT_FLOOR * counts[u0 + b]
        w = np.zeros(B)
        av = np.zeros((n, B))
        E = np.zeros((n, n, B))
        for v in range(U):
            tv = pos_len[v]
            for b in range(B):
                D[b] = 0
                a[b] = 0
            for j in range(tv):
                x = pos[v, j]
                for b in range(B):
                    rj = rank_t[x, u0 + b]
                    rr[j, b] = rj
                    D[b] += rj
                    if rj == tu[b]:
                        a[b] += 1
                for q in range(j):
                    for b in range(B):
                        if rr[q, b] < rr[j, b]:
                            D[b] -= 1
            used = False
            for b in range(B):
                wb = counts[v] * e_n[tv] * e_a[tu[b], a[b]] * e_d[D[b]]
                if wb >= floor[b]:
                    used = True
                    w[b] = wb
                else:
                    w[b] = 0.0
            if not used:
                continue
            for j in range(tv):
                x = pos[v, j]
                for b in range(B):
                    av[x, b] += w[b]
                for p in range(j):
                    y = pos[v, p]
                    for b in range(B):
                        E[x, y, b] += w[b]
        for b in range(nb):
            _greedy_consensus(np.ascontiguousarray(av[:, b]),
                              np.ascontiguousarray(E[:, :, b]), n, T, new_pos[u0 + b])


def _blur_rank_table(pos, pos_len, n):
    """The positions' rank table transposed, ``(n, U)`` padded to whole blocks with zeros."""
    U = len(pos)
    out = np.zeros((n, -(-U // _BLOCK) * _BLOCK), dtype=np.int32)
    out[:, :U] = _rank_tables(pos, pos_len, n).T
    return out


def _blur_weights(theta, n, width):
    """``(e_d, e_a, e_n)`` with ``e_d[D] = exp(-theta D)``, ``e_a[t_u, a] = exp(cta[t_u, a] +
    norm[t_u])`` and ``e_n[t_v] = exp(-norm[t_v])`` (:func:`_kernel_tables`): their product is
    the kernel ``K_theta(pi_v | pi_u)`` relative to ``K_theta(pi_u | pi_u)`` (notes of
    :mod:`dpclust.rankings.baselines`).  ``e_d`` may underflow to 0 only where the weight is
    negligible (``norm`` is at most ``log n!``)."""
    cta, norm = _kernel_tables([theta], n, width, width)
    cta, norm = cta[0], norm[0]
    e_d = np.exp(-theta * np.arange(width * width + 1))
    e_a = np.exp(cta + norm[:, None])
    return e_d, np.ascontiguousarray(e_a), np.exp(-norm)


def _ebms(R: Rankings, theta: float, max_iter: int, tol: float, T: int) -> dict:
    """Blur the rankings of ``R`` (kernel width ``theta``, points of length ``T``) and
    summarise the clusters; see :class:`RankingEBMS`."""
    n = R.n_items
    orders, lengths, counts0, inverse0 = _unique_rankings(R)
    width = max(T, orders.shape[1])
    pos = np.pad(orders, ((0, 0), (0, width - orders.shape[1])), constant_values=-1)
    pos_len = lengths.copy()
    counts = counts0.copy()
    where = np.arange(len(counts))  # position of each distinct training ranking
    e_d, e_a, e_n = _blur_weights(theta, n, width)
    N = float(counts.sum())
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        new = np.full((len(pos), width), -1, dtype=np.int64)
        _blur_step(pos, pos_len, _blur_rank_table(pos, pos_len, n), counts, e_d, e_a, e_n, n,
                   T, new)
        moved = counts[np.any(new != pos, axis=1)].sum() / N
        pos, inverse = np.unique(new, axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        pos = np.ascontiguousarray(pos, dtype=np.int64)
        counts = np.bincount(inverse, weights=counts)
        where = inverse[where]
        pos_len = np.full(len(pos), T, dtype=np.int64)
        if moved <= tol:
            converged = True
            break
    order = np.argsort(-counts, kind="stable")
    relabel = np.empty_like(order)
    relabel[order] = np.arange(len(order))
    centres = np.ascontiguousarray(pos[order, :T])
    ulabels = relabel[where]
    K = len(order)
    members = np.argsort(ulabels, kind="stable")
    starts = np.searchsorted(ulabels[members], np.arange(K + 1))
    central = np.full((K, n - 1), -1, dtype=np.int64)
    central_len = np.empty(K, dtype=np.int64)
    _cluster_central_rankings(orders, lengths, counts0, members, starts, n, central,
                              central_len)
    return {"labels": ulabels[inverse0], "cluster_centers": centres,
            "central_rankings": central, "central_lengths": central_len,
            "weights": counts[order] / N, "n_clusters": K, "n_iter": n_iter,
            "converged": converged}


def _ml_mixture_theta(R: Rankings, state: dict) -> float:
    """The width maximising the training log-likelihood of the mixture of ``state``: the best
    of a coarse log-spaced grid, then of a 41-point grid between its neighbours (each grid
    is one pass over the pairs, whatever its size)."""
    orders, lengths, counts, _ = _unique_rankings(R)

    def loglik(thetas):
        ll = _log_density(orders, lengths, state["central_rankings"], state["central_lengths"],
                          state["weights"], thetas, R.n_items)
        return counts @ ll

    grid = _ML_GRID
    best = int(np.argmax(loglik(grid)))
    if best in (0, len(grid) - 1):
        _warn_edge(grid, best, "RankingEBMS(mixture_theta='ml')")
        return float(grid[best])
    fine = np.geomspace(grid[best - 1], grid[best + 1], 41)
    return float(fine[int(np.argmax(loglik(fine)))])
