"""Nonparametric baselines for top-t rankings: a Mallows-kernel density estimate and
exponential blurring mean shift (the competitors of Meilă & Chen 2010, section 7 and Figure 8).

* :class:`RankingKDE` -- the kernel density estimate of Lebanon & Mao (2008) with a Mallows
  (GM^s, all ``theta_j = theta``) kernel of a single width ``theta``;
* :class:`RankingEBMS` -- exponential blurring mean shift (Meilă & Bao 2008): every point is
  moved to the weighted central ranking of its neighbours until the points collapse into
  clusters; scored as a mixture of the same kernels centred at the clusters' central rankings.

The kernel
----------
Items are ``0 .. n-1``; a top-t ranking ``pi`` lists ``t <= n - 1`` items, best first.  With all
``theta_j = theta`` the GM^s model of ALGORITHMS.md §5,

    GM(pi | sigma, theta) = exp(-theta sum_{j<=t} s_j(pi | sigma)) / prod_{j<=t} psi_{n-j}(theta),

is the probability, under the Mallows model with Kendall's distance centred at the full
permutation ``sigma``, that a permutation begins with ``pi`` (Fligner & Verducci 1986).  A
training ranking ``pi_i`` of length ``t_i`` is not a full permutation, so the kernel centred at
it averages the GM^s over the ``(n - t_i)!`` permutations that begin with ``pi_i`` (``pi_i``
completed uniformly at random; Lebanon & Mao's treatment of a partial ranking as the uniform
distribution on its coset):

    K_theta(pi | pi_i) = 1/(n - t_i)!  sum_{sigma begins with pi_i}  GM(pi | sigma, theta).

Each ``GM(. | sigma, theta)`` is a distribution over the top-t rankings of every length t, so
``K_theta(. | pi_i)`` is one too.  The average has a closed form.  Let ``a`` be the number of items
of ``pi`` that ``pi_i`` does not list, ``m = n - t_i``, and

    D(pi | pi_i) = sum_{j<=t} #{x in pi_i, x not among pi(1..j-1), pi_i ranks x before pi(j)},

where an item that ``pi_i`` does not list counts as ranked after all of ``pi_i`` (so it scores
``t_i`` minus the items of ``pi_i`` already placed by ``pi``).  Then

    log K_theta(pi | pi_i) = -theta D(pi | pi_i) - sum_{j=1}^{t} log psi_{n-j}(theta)
                             + sum_{q=1}^{a} [log psi_{m-q}(theta) - log(m - q + 1)].

Proof: for every completion ``sigma``, ``sum_j s_j(pi | sigma)`` counts the pairs ``(x, pi(j))``,
``x`` not among ``pi(1..j-1)``, that ``sigma`` orders ``x`` first.  A pair with an item of
``pi_i`` is ordered the same way by every completion, which gives ``D``.  The pairs of items
outside ``pi_i`` are counted by the codes of the ``a`` items of ``pi`` outside ``pi_i`` (in
``pi``'s order) against the uniformly random order of those ``m`` items; by the Lehmer code these
codes are independent and uniform on ``0 .. m - q``, and ``E exp(-theta s) = psi_{m-q}(theta) /
(m - q + 1)``.  At ``theta = 0`` the kernel is uniform, ``(n - t)!/n!``.

References
----------
Lebanon, G. & Mao, Y. (2008). Non-parametric modeling of partially ranked data. JMLR 9,
2401-2429 (Mallows kernel smoothing of partial rankings, each a coset of permutations).
Meilă, M. & Bao, L. (2008). Estimation and clustering with infinite rankings. UAI; and (2010)
An exponential model for infinite rankings. JMLR 11, 3481-3518 (EBMS).
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI,
section 7 and Figure 8 (both as baselines).
Fligner, M. A. & Verducci, J. S. (1986). Distance based ranking models. JRSS B 48, 359-369.
Carreira-Perpiñán, M. Á. (2006). Fast nonparametric clustering with Gaussian blurring
mean-shift. ICML.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numba
import numpy as np
from numba import njit, prange
from sklearn.base import BaseEstimator, ClusterMixin, DensityMixin
from sklearn.utils.validation import check_is_fitted

from ..utils.checks import check_int, check_positive, check_random_state
from ..families import _mallows_kernels as _k
from .data import Rankings, check_rankings

__all__ = ["RankingEBMS", "RankingKDE", "log_mallows_kernel"]

#: kernel widths searched by ``RankingKDE(theta="auto")``
DEFAULT_THETA_GRID = np.geomspace(0.01, 10.0, 41)
#: blurring widths searched by ``RankingEBMS(theta="auto")``, in this (increasing) order
DEFAULT_BLUR_GRID = np.geomspace(0.05, 1.0, 8)
#: the coarse grid of the maximum-likelihood mixture width (then refined)
_ML_GRID = np.geomspace(1e-3, 1e2, 51)
#: neighbours whose blurring weight is below this fraction of the point's own are skipped
_WEIGHT_FLOOR = 1e-14
#: positions updated together by one thread of the blurring step
_BLOCK = 8
#: most bins ``(t_c, a, D)`` of the per-query histogram of the density evaluation
_MAX_BINS = 1 << 18


# --------------------------------------------------------------------------------------------
# reference maths (plain NumPy, for tests and single rankings)


def log_mallows_kernel(ranking, centre, theta, n_items) -> float:
    """``log K_theta(ranking | centre)``: the GM^s kernel with all ``theta_j = theta`` centred at
    a top-t ranking, averaged over its uniform completions (closed form of the module notes).

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


# --------------------------------------------------------------------------------------------
# numba kernels


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
    the kernel ``K_theta(pi_v | pi_u)`` relative to ``K_theta(pi_u | pi_u)`` (module notes).
    ``e_d`` may underflow to 0 only where the weight is negligible (``norm`` is at most
    ``log n!``)."""
    cta, norm = _kernel_tables([theta], n, width, width)
    cta, norm = cta[0], norm[0]
    e_d = np.exp(-theta * np.arange(width * width + 1))
    e_a = np.exp(cta + norm[:, None])
    return e_d, np.ascontiguousarray(e_a), np.exp(-norm)


# --------------------------------------------------------------------------------------------
# helpers


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


def _check_theta(theta, allowed=("auto",)):
    if isinstance(theta, str):
        if theta in allowed:
            return theta
        raise ValueError(f"theta must be a positive number or one of {list(allowed)}, got "
                         f"{theta!r}")
    return check_positive(theta, "theta")


def _check_grid(grid) -> np.ndarray:
    if grid is None:
        return DEFAULT_THETA_GRID.copy()
    g = np.asarray(grid, dtype=np.float64).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError("theta_grid must hold at least one positive, finite kernel width")
    return np.unique(g)


def _warn_edge(grid, best, what):
    if len(grid) > 1 and best in (0, len(grid) - 1):
        side = "smallest" if best == 0 else "largest"
        warnings.warn(f"{what}: the best kernel width is the {side} of theta_grid "
                      f"({grid[best]:.4g}); widen the grid", UserWarning, stacklevel=3)


class _RankingModel(DensityMixin, BaseEstimator):
    """Shared edge of the two estimators: item set, input checks, ``score``."""

    def _check_fitted(self):
        check_is_fitted(self, "n_items_")

    def _validate_fit(self, X) -> Rankings:
        return check_rankings(X, n_items=self.n_items, items=self.items)

    def _validate_score(self, X) -> Rankings:
        self._check_fitted()
        return check_rankings(X, n_items=self.n_items_, items=self.items_)

    def _resolve_items(self, R: Rankings):
        self.n_items_ = int(R.n_items)
        self.items_ = R.items
        self.n_samples_fit_ = len(R)

    def score(self, X, y=None) -> float:
        """Mean log density of the rankings ``X`` (the held-out log-likelihood per ranking).

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items (see :func:`~dpclust.rankings.check_rankings`).
        y : ignored

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))


# --------------------------------------------------------------------------------------------
# the kernel density estimate


class RankingKDE(_RankingModel):
    """Kernel density estimate over top-t rankings with a Mallows kernel (Lebanon & Mao 2008).

    The density of a top-t ranking ``pi`` is the average over the training rankings of the
    GM^s kernel with all ``theta_j = theta`` centred at each, a training ranking completed
    uniformly at random to a full central ranking::

        p(pi) = 1/N sum_i K_theta(pi | pi_i),
        K_theta(pi | pi_i) = 1/(n - t_i)! sum_{sigma begins with pi_i} GM(pi | sigma, theta).

    ``K_theta(. | pi_i)`` is a probability distribution over the top-t rankings of every length
    ``t``, and so is ``p``.  In closed form (derived in the notes of
    :mod:`dpclust.rankings.baselines`), with ``a`` the items of ``pi`` that ``pi_i`` does not
    list and ``m = n - t_i``::

        log K_theta(pi | pi_i) = -theta D(pi | pi_i) - sum_{j=1}^{t} log psi_{n-j}(theta)
                                 + sum_{q=1}^{a} [log psi_{m-q}(theta) - log(m - q + 1)],

    ``D`` the GM^s codes of ``pi`` summed, counting only the items of ``pi_i`` (an item
    outside ``pi_i`` ranks after all of it).  This is the KDE used as a baseline by Meilă &
    Chen (2010), Figure 8, where the width is set to the true clusters' ``theta``.

    Parameters
    ----------
    theta : float or "auto", default="auto"
        Kernel width ``theta > 0`` (larger = more concentrated kernels).  ``"auto"`` picks the
        width of ``theta_grid`` with the largest leave-one-out log-likelihood of the training
        rankings, ``sum_i log( sum_{i' != i} K_theta(pi_i | pi_i') / (N - 1) )`` (exact, no
        randomness; every grid width costs about one pass over the pairs).
    theta_grid : array-like of float, optional
        Widths searched by ``theta="auto"``; default ``np.geomspace(0.01, 10, 41)``.
    n_items : int, optional
        Number of items ``n``; default from the data (see
        :func:`~dpclust.rankings.check_rankings`).  Items nobody ranks still count.
    items : sequence of str, optional
        Item names, for data given as names.

    Attributes
    ----------
    theta_ : float
        The kernel width used.
    n_items_ : int
    items_ : tuple of str or None
    n_samples_fit_ : int
        Number of training rankings ``N``.
    orders_ : ndarray of shape (n_distinct, max_length)
        The distinct training rankings (padded with -1); ``weights_`` counts each.
    lengths_ : ndarray of shape (n_distinct,)
    weights_ : ndarray of shape (n_distinct,)
    theta_grid_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: the widths tried.
    cv_log_likelihood_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: mean leave-one-out log-likelihood per ranking at each width.

    Notes
    -----
    The kernel depends on a pair of rankings only through three integers (the centre's length,
    the items of ``pi`` the centre does not list, and the discordance ``D``), so scoring builds,
    per query, a histogram of the training rankings over those bins (numba, parallel over
    queries) and evaluates the kernel once per bin.  Identical training rankings are merged.
    Scoring costs O(n_queries x n_distinct_training x t^2).

    References
    ----------
    Lebanon, G. & Mao, Y. (2008). Non-parametric modeling of partially ranked data. JMLR 9.
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.

    Examples
    --------
    >>> import numpy as np
    >>> from dpclust.rankings import RankingKDE
    >>> X = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 3]]
    >>> kde = RankingKDE(theta=1.0).fit(X)
    >>> bool(kde.score_samples([[0, 1, 2]])[0] > kde.score_samples([[3, 2, 1]])[0])
    True
    """

    def __init__(self, theta="auto", *, theta_grid=None, n_items=None, items=None):
        self.theta = theta
        self.theta_grid = theta_grid
        self.n_items = n_items
        self.items = items

    def fit(self, X, y=None) -> RankingKDE:
        """Store the training rankings and choose ``theta`` if ``theta="auto"``.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Training top-t rankings (item ids padded with -1, or lists of ids or names).
        y : ignored

        Returns
        -------
        self : RankingKDE

        Raises
        ------
        DataError
            For invalid rankings (see :func:`~dpclust.rankings.check_rankings`).
        ValueError
            For a bad ``theta`` or ``theta_grid``, or ``theta="auto"`` with one ranking.
        """
        theta = _check_theta(self.theta)
        grid = _check_grid(self.theta_grid) if theta == "auto" else None
        R = self._validate_fit(X)
        orders, lengths, counts, _ = _unique_rankings(R)
        if theta == "auto":
            if len(R) < 2:
                raise ValueError("theta='auto' needs at least 2 training rankings (it scores "
                                 "each by leave-one-out)")
            loo = _log_density(orders, lengths, orders, lengths, counts, grid, R.n_items,
                               exclude=np.ones(len(counts)))
            cv = counts @ loo / counts.sum()
            best = int(np.argmax(cv))
            _warn_edge(grid, best, "RankingKDE(theta='auto')")
            self.theta_grid_ = grid
            self.cv_log_likelihood_ = cv
            theta = float(grid[best])
        self._resolve_items(R)
        self.theta_ = float(theta)
        self.orders_ = orders
        self.lengths_ = lengths
        self.weights_ = counts
        return self

    def score_samples(self, X) -> np.ndarray:
        """Log density of each ranking under the KDE.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items, any lengths ``1 .. n_items - 1``.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            ``log p(pi)``; for each length ``t`` these sum (in probability) to 1 over the
            ``n!/(n-t)!`` top-t rankings.
        """
        R = self._validate_score(X)
        return _log_density(R.orders, R.lengths, self.orders_, self.lengths_, self.weights_,
                            [self.theta_], self.n_items_)[:, 0]


# --------------------------------------------------------------------------------------------
# exponential blurring mean shift


class RankingEBMS(ClusterMixin, _RankingModel):
    """Exponential blurring mean shift for top-t rankings (Meilă & Bao 2008).

    Every ranking is a point that moves.  At each step every point ``u`` (a top-T ranking) is
    replaced by the weighted "mean" of all points, the GM^s central ranking that best explains
    them, cut to its first ``T`` items::

        pi_u <- first T items of argmin_sigma sum_v w_uv sum_j s_j(pi_v | sigma),
        w_uv = N_v K_theta(pi_v | pi_u),

    where ``N_v`` counts the points at ``pi_v`` and ``K_theta`` is the Mallows kernel of
    :class:`RankingKDE` (the probability of ``pi_v`` under the kernel centred at ``pi_u``).  With
    all ``theta_j`` equal the GM^s normaliser does not depend on ``sigma``, so the argmin is the
    maximum-likelihood central ranking of the weighted points, a weighted Kemeny problem in the
    statistics ``R[i, k] = sum_v w_uv sum_j R_j(pi_v)[i, k]`` of ALGORITHMS.md §5.  It is
    estimated by the greedy stagewise rule: at each stage, place the item left with the
    smallest column sum ``sum_{i left} R[i, k]`` (the cost of putting it next).  All points
    move at once (blurring: the data themselves move, Carreira-Perpiñán 2006) until none
    moves: the space is discrete, so a collapsed cluster is an exact fixed point.  Points
    that end at the same ranking form a cluster; its centre is that ranking.

    The fitted density is a mixture of GM^s kernels of one width centred at the clusters'
    central rankings, with the clusters' shares as weights::

        p(pi) = sum_k (N_k / N) K_theta_mix(pi | sigma_k),

    where ``sigma_k`` is the central ranking of the cluster's members (the greedy ML order of
    their statistics, as in the blurring step, over the items they rank; items no member
    ranks are completed uniformly by the kernel), which for a well-collapsed cluster begins
    with its centre.  ``p`` is a distribution over the top-t rankings of every length.

    Parameters
    ----------
    theta : float or "auto", default="auto"
        Width of the blurring kernel.  It must be smaller (a wider kernel) than the clusters'
        own dispersion: a kernel as narrow as the clusters leaves many points where they are
        (a discrete space has many fixed points), a very wide one merges clusters.  For
        clusters of GM^s dispersion ``theta_c`` (n = 12, t = 5), ``theta`` from about
        ``theta_c / 6`` to ``theta_c / 3`` works.  ``"auto"`` fits each width of
        ``theta_grid`` on part of the data and keeps the one whose mixture gives the held-out
        part the largest mean log-likelihood (then refits on all the data).
    max_iter : int, default=100
        Most blurring steps.
    tol : float, default=0.0
        Stop when at most this fraction of the points moved in a step (0: at a fixed point).
    center_length : int, optional
        Length ``T`` of the moving points and of ``cluster_centers_`` (the "standard length"
        of EBMS's output rankings); default the longest training ranking.
    mixture_theta : float, "ml" or "same", default="ml"
        Width of the mixture's kernels: ``"ml"`` maximises the training log-likelihood of
        the mixture over it (centres and shares fixed: a 1-D problem; the best of
        ``np.geomspace(1e-3, 100, 51)``, refined on a 41-point grid between its neighbours,
        about 1% apart); ``"same"`` uses ``theta_``; a float is used as it is.
    theta_grid : array-like of float, optional
        Blurring widths tried by ``theta="auto"``; default ``np.geomspace(0.05, 1, 8)``.
    validation_fraction : float, default=0.25
        With ``theta="auto"``: the share of the training rankings held out to score each width.
    auto_max_samples : int or None, default=3000
        With ``theta="auto"``: fit each candidate width on at most this many of the other
        rankings (a random subset), which bounds the cost of the search (a fit costs
        O(N^2) per step); ``None`` uses them all.  The final fit uses all the data.
    random_state : None, int or numpy.random.Generator, default=None
        With ``theta="auto"``: draws the validation split and the subset.
    n_items : int, optional
        Number of items ``n``; default from the data.
    items : sequence of str, optional
        Item names, for data given as names.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training ranking, clusters numbered by decreasing size.
    cluster_centers_ : ndarray of shape (n_clusters, T)
        Where the clusters collapsed: top-T rankings (item ids, best first).
    central_rankings_ : ndarray of shape (n_clusters, n_items - 1)
        The mixture's central rankings (of each cluster's members), padded with -1 after
        ``central_lengths_[k]`` items.
    central_lengths_ : ndarray of shape (n_clusters,)
    n_clusters_ : int
    weights_ : ndarray of shape (n_clusters,)
        Cluster shares ``N_k / N``.
    theta_ : float
        Blurring width used.
    mixture_theta_ : float
        Kernel width of the fitted mixture.
    n_iter_ : int
        Blurring steps run.
    converged_ : bool
        Whether the points stopped moving (within ``tol``) before ``max_iter``.
    theta_grid_, validation_log_likelihood_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: the widths and the mean held-out log-likelihood of each
        (NaN for widths the search stopped before).
    n_items_, items_, n_samples_fit_
        As for :class:`RankingKDE`.

    Notes
    -----
    Identical points are merged (a point's update depends only on where it is), so a step
    costs O(U^2 T^2 + U n^2) for U distinct positions (numba, parallel over positions); U
    drops sharply after the first step.  Apart from the validation split of ``theta="auto"``
    the fit is deterministic.

    Meilă & Bao (2008) blur top-t orderings under the infinite GM model with the IGM
    distance and a heuristic width; with a finite item set, the kernel and the ML central
    ranking above are the natural analogues, and the mixture is how this package scores EBMS
    as a density (Meilă & Chen 2010, Figure 8).

    References
    ----------
    Meilă, M. & Bao, L. (2008). Estimation and clustering with infinite rankings. UAI;
    (2010) An exponential model for infinite rankings. JMLR 11.
    Carreira-Perpiñán, M. Á. (2006). Fast nonparametric clustering with Gaussian blurring
    mean-shift. ICML.
    Meilă, M., Phadnis, K., Patterson, A. & Bilmes, J. (2007). Consensus ranking under the
    exponential model. UAI (the ML central ranking of a GM model).
    """

    def __init__(self, theta="auto", *, max_iter=100, tol=0.0, center_length=None,
                 mixture_theta="ml", theta_grid=None, validation_fraction=0.25,
                 auto_max_samples=3000, random_state=None, n_items=None, items=None):
        self.theta = theta
        self.max_iter = max_iter
        self.tol = tol
        self.center_length = center_length
        self.mixture_theta = mixture_theta
        self.theta_grid = theta_grid
        self.validation_fraction = validation_fraction
        self.auto_max_samples = auto_max_samples
        self.random_state = random_state
        self.n_items = n_items
        self.items = items

    def _check_params(self):
        theta = _check_theta(self.theta)
        mix = self.mixture_theta
        if not (isinstance(mix, str) and mix in ("ml", "same")):
            if isinstance(mix, str):
                raise ValueError(f"mixture_theta must be a positive number, 'ml' or 'same', "
                                 f"got {mix!r}")
            mix = check_positive(mix, "mixture_theta")
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        tol = self.tol
        if not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not 0 <= tol < 1:
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        T = self.center_length
        if T is not None:
            T = check_int(T, "center_length", minimum=1)
        vf = self.validation_fraction
        if not isinstance(vf, numbers.Real) or isinstance(vf, bool) or not 0 < vf < 1:
            raise ValueError(f"validation_fraction must be a number in (0, 1), got {vf!r}")
        if self.auto_max_samples is not None:
            check_int(self.auto_max_samples, "auto_max_samples", minimum=2)
        return theta, mix, max_iter, float(tol), T, float(vf)

    def fit(self, X, y=None) -> RankingEBMS:
        """Blur the rankings until they collapse into clusters, then fit the mixture.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Training top-t rankings.
        y : ignored

        Returns
        -------
        self : RankingEBMS

        Raises
        ------
        DataError
            For invalid rankings (see :func:`~dpclust.rankings.check_rankings`).
        ValueError
            For bad parameters, a ``center_length`` above ``n_items - 1``, or
            ``theta="auto"`` with fewer than 4 rankings.
        """
        theta, mix, max_iter, tol, T, vf = self._check_params()
        grid = None if self.theta_grid is None else _check_grid(self.theta_grid)
        R = self._validate_fit(X)
        n = R.n_items
        T = R.max_length if T is None else T
        if T > n - 1:
            raise ValueError(f"center_length={T} is more than n_items - 1 = {n - 1}")
        if theta == "auto":
            theta = self._select_theta(R, grid, mix, max_iter, tol, T, vf)
        state = _ebms(R, float(theta), max_iter, tol, T)
        if not state["converged"]:
            warnings.warn(f"RankingEBMS: the points still moved after max_iter={max_iter} "
                          "blurring steps; the clusters may not have settled", UserWarning,
                          stacklevel=2)
        self._resolve_items(R)
        self.theta_ = float(theta)
        for key in ("labels", "cluster_centers", "central_rankings", "central_lengths",
                    "weights", "n_clusters", "n_iter", "converged"):
            setattr(self, key + "_", state[key])
        if mix == "same":
            mix = self.theta_
        elif mix == "ml":
            mix = _ml_mixture_theta(R, state)
        self.mixture_theta_ = float(mix)
        return self

    def _select_theta(self, R, grid, mix, max_iter, tol, T, vf) -> float:
        """The blurring width whose fit on a random part of the data gives the largest mean
        log-likelihood of the held-out part.  Widths are tried in increasing order (narrower
        kernels, more clusters, slower fits); the search stops once two widths in a row
        score below the best so far."""
        if len(R) < 4:
            raise ValueError("theta='auto' needs at least 4 training rankings (it holds some "
                             "out to score each width)")
        grid = DEFAULT_BLUR_GRID.copy() if grid is None else grid
        rng = check_random_state(self.random_state)
        perm = rng.permutation(len(R))
        n_val = min(max(1, round(vf * len(R))), len(R) - 1)
        fit_part = perm[n_val:]
        if self.auto_max_samples is not None:
            fit_part = fit_part[:self.auto_max_samples]
        R_fit, R_val = R[np.sort(fit_part)], R[np.sort(perm[:n_val])]
        scores = np.full(len(grid), np.nan)
        for g, th in enumerate(grid):
            state = _ebms(R_fit, float(th), max_iter, tol, T)
            m = float(th) if mix == "same" else (
                _ml_mixture_theta(R_fit, state) if mix == "ml" else mix)
            scores[g] = float(np.mean(_log_density(
                R_val.orders, R_val.lengths, state["central_rankings"],
                state["central_lengths"], state["weights"], [m], R.n_items)[:, 0]))
            best = int(np.nanargmax(scores))
            if g - best >= 2 and scores[g - 1] < scores[best] and scores[g] < scores[best]:
                break
        best = int(np.nanargmax(scores))
        _warn_edge(grid, best, "RankingEBMS(theta='auto')")
        self.theta_grid_ = grid
        self.validation_log_likelihood_ = scores
        return float(grid[best])

    def score_samples(self, X) -> np.ndarray:
        """Log density of each ranking under the fitted mixture
        ``sum_k w_k K_{mixture_theta_}(pi | sigma_k)``.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items, any lengths ``1 .. n_items - 1``.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        R = self._validate_score(X)
        return _log_density(R.orders, R.lengths, self.central_rankings_, self.central_lengths_,
                            self.weights_, [self.mixture_theta_], self.n_items_)[:, 0]

    def predict(self, X) -> np.ndarray:
        """The most probable cluster of each ranking under the fitted mixture.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            ``argmax_k log w_k + log K_{mixture_theta_}(pi | sigma_k)``.
        """
        R = self._validate_score(X)
        c_len = self.central_lengths_
        cta, norm = _kernel_tables([self.mixture_theta_], self.n_items_, int(c_len.max()),
                                   R.max_length)
        c_rank = _rank_tables(self.central_rankings_, c_len, self.n_items_)
        out = np.empty(len(R), dtype=np.int64)
        _nearest_centre(R.orders, R.lengths, c_rank, c_len, np.log(self.weights_),
                        self.mixture_theta_, np.ascontiguousarray(cta[0]),
                        np.ascontiguousarray(norm[0]), out)
        return out

    def fit_predict(self, X, y=None) -> np.ndarray:
        """``fit(X).labels_``."""
        return self.fit(X).labels_


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
