"""Block moves of identical rows between two clusters (numba): collapsed Gibbs of how many
of a row's copies each of two clusters holds.

Rows that are equal (a frequency table's people, ballots cast by many voters) are
exchangeable.  Single-point Gibbs moves their copies one at a time, a random walk in the
number ``c`` of copies that cluster ``k`` holds against ``k'``, which takes of order
``m^2`` sweeps to cross ``m`` copies and stalls where an intermediate count is unlikely.
This move draws ``c`` in one step from its exact conditional.

One move: a row ``r`` of ``R`` (the rows with copies, uniformly) and two occupied clusters
``k != k'`` (uniformly among the ``K (K - 1)`` ordered pairs).  ``S`` is the set of the
row's copies that ``k`` or ``k'`` holds, ``m = |S|``.  Given every other label and that the
copies of ``S`` stay in ``k`` or ``k'`` with neither cluster emptied, the labels of ``S``
have the conditional

    p(z_S) ∝ W(N_k + c) W(N_k' + m - c) p(X_k ∪ c copies) p(X_k' ∪ (m - c) copies)

(``N`` and ``X`` without ``S``; ``W`` the Gibbs-type prior's weight of a block, ``log W``
the ``log_w`` table of :meth:`~dpclust.priors.PartitionPrior.log_split_terms``; with the
number of clusters kept the prior's ``V(n, K)`` cancels), which depends on ``z_S`` only
through ``c``: ``c`` is drawn from ``binom(m, c)`` times that weight, for ``c`` in the
range that leaves both clusters occupied, and a uniformly random ``c`` of the copies go to
``k``.  The choice of ``(r, k, k')`` and the set ``S`` are the same before and after the
move, so the move is a Gibbs update of the posterior restricted to a set that holds the
current state, and leaves the posterior invariant.  The marginal likelihoods come from
the family's collapsed predictive, one copy added at a time:
``log p(X ∪ c copies) - log p(X) = sum_{j < c} log f(x_r | X ∪ j copies)``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .gibbs import categorical_from_logs, dispatch
from .streams import next_uniform
from .subcluster.sequential import _draw_pair


@njit(_nrt=False)
def _cumulative(kdata, kstats, khyper, copies, m, k, n_k, log_w, out, add, remove,
                log_predictive):
    """``out[c]`` for c = 0 .. m: ``log W(n_k + c) + log p(X_k ∪ c copies)`` up to a
    constant (the first copy of an empty cluster scores its predictive alone); the
    cluster's statistics are left as they were."""
    out[0] = 0.0
    for j in range(m):
        prior = log_w[n_k + j + 1] - log_w[n_k + j] if n_k + j > 0 else 0.0
        out[j + 1] = out[j] + prior + log_predictive(kdata, copies[j], kstats, k, khyper)
        add(kdata, copies[j], kstats, k, khyper)
    for j in range(m):
        remove(kdata, copies[j], kstats, k, khyper)


@njit(_nrt=False)
def copies_moves(kdata, kstats, khyper, labels, counts, n_clusters, rows, start, n_moves,
                 seed, log_w, scratch, f, g, logp, add, remove, log_predictive):
    """``n_moves`` block moves (the module notes) on ``labels`` (clusters ``0 ..
    n_clusters - 1``, all occupied, with statistics ``kstats`` and sizes ``counts``),
    changed in place.  Row ``r``'s copies are ``rows[start[r]:start[r + 1]]``; the scratch
    arrays hold as many entries as the largest row has copies (``f``, ``g``, ``logp`` one
    more).  Returns the number of copies that changed cluster."""
    state = seed
    n_rows = start.shape[0] - 1
    moved = 0
    if n_clusters < 2 or n_rows < 1:
        return moved
    for _ in range(n_moves):
        state, u = next_uniform(state)
        r = min(int(u * n_rows), n_rows - 1)
        state, k, k2 = _draw_pair(state, n_clusters)
        m = 0
        for t in range(start[r], start[r + 1]):
            i = rows[t]
            if labels[i] == k or labels[i] == k2:
                scratch[m] = i
                m += 1
        if m == 0:
            continue
        before = 0
        for a in range(m):
            i = scratch[a]
            before += labels[i] == k
            remove(kdata, i, kstats, labels[i], khyper)
            counts[labels[i]] -= 1
        n_k = counts[k]
        n_k2 = counts[k2]
        _cumulative(kdata, kstats, khyper, scratch, m, k, n_k, log_w, f, add, remove,
                    log_predictive)
        _cumulative(kdata, kstats, khyper, scratch, m, k2, n_k2, log_w, g, add, remove,
                    log_predictive)
        lo = 1 if n_k == 0 else 0
        hi = m - 1 if n_k2 == 0 else m
        for c in range(lo, hi + 1):
            logp[c - lo] = (math.lgamma(m + 1.0) - math.lgamma(c + 1.0)
                            - math.lgamma(m - c + 1.0) + f[c] + g[m - c])
        state, u = next_uniform(state)
        c = lo + categorical_from_logs(logp, hi - lo + 1, u)
        # a uniformly random c of the m copies go to k (a partial Fisher-Yates shuffle)
        for a in range(c):
            state, u = next_uniform(state)
            b = a + min(int(u * (m - a)), m - a - 1)
            tmp = scratch[a]
            scratch[a] = scratch[b]
            scratch[b] = tmp
        moved += abs(c - before)
        for a in range(m):
            i = scratch[a]
            kk = k if a < c else k2
            labels[i] = kk
            add(kdata, i, kstats, kk, khyper)
            counts[kk] += 1
    return moved


def copies_round(kern, labels, rows, start, n_moves: int, seed, log_w) -> int:
    """:func:`copies_moves` on ``labels`` (numbered ``0 .. K - 1``, changed in place) for
    the family kernel ``kern``, its statistics built afresh from the labels; returns the
    number of copies that changed cluster."""
    n_clusters = int(labels.max()) + 1
    kstats = kern.alloc(n_clusters)
    counts = np.zeros(n_clusters, dtype=np.int64)
    rebuild, fns = dispatch(kern, "rebuild_stats")
    rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
    largest = int(np.diff(start).max()) if len(start) > 1 else 0
    return int(copies_moves(kern.data, kstats, kern.hyper, labels, counts, n_clusters, rows,
                            start, int(n_moves), np.uint64(seed), log_w,
                            np.empty(largest, dtype=np.int64), np.empty(largest + 1),
                            np.empty(largest + 1), np.empty(largest + 1), kern.add,
                            kern.remove, kern.log_predictive))
