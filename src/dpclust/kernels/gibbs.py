"""Numba kernels of the Gibbs samplers: the only per-point hot loops of this package.

The functions are generic over the family: the family's compiled operations are passed in as
first-class function arguments (numba specialises each sweep per family at compile time).
Randomness comes in as pre-drawn uniforms from the caller's ``numpy.random.Generator``.

A categorical draw uses one uniform and an inverse CDF over ``exp(l_k - max l)``, skipping
the exponential where ``l_k - max l < -36`` (a weight below 1e-15 of the best, which moves
the distribution by less than rounding does; Mathematics §7).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .entry_points import entry_point

_SKIP = -36.0


def dispatch(kern, name: str):
    """The compiled kernel ``name`` for a family: ``(function, trailing arguments)``.

    The family's cached specialisation when it provides one (``kern.entry_points``), else
    the generic kernel of this module with the family's functions as trailing arguments.
    """
    fns = {
        "collapsed_sweep": (kern.reset, kern.add, kern.remove, kern.log_predictive),
        "rebuild_stats": (kern.reset, kern.add),
        "sum_log_marginals": (kern.log_marginal,),
        "split_log_marginals": (kern.reset, kern.add, kern.log_marginal),
    }[name]
    return entry_point(kern, name, globals()[name], fns)


@njit(cache=True, _nrt=False)
def categorical_from_logs(logw, n, u):
    """Index drawn from ``softmax(logw[:n])`` with uniform ``u``; overwrites ``logw``."""
    m = -np.inf
    for a in range(n):
        if logw[a] > m:
            m = logw[a]
    total = 0.0
    for a in range(n):
        d = logw[a] - m
        if d < _SKIP:
            logw[a] = 0.0
        else:
            w = math.exp(d)
            logw[a] = w
            total += w
    target = u * total
    acc = 0.0
    last = 0
    for a in range(n):
        w = logw[a]
        if w > 0.0:
            acc += w
            last = a
            if acc >= target:
                return a
    return last


@njit(_nrt=False)
def rebuild_stats(kdata, kstats, khyper, labels, counts, reset, add):
    """Reset every slot and add each point to the slot ``labels[i]``."""
    for k in range(counts.shape[0]):
        reset(kstats, k, khyper)
        counts[k] = 0
    for i in range(labels.shape[0]):
        k = labels[i]
        add(kdata, i, kstats, k, khyper)
        counts[k] += 1


@njit(_nrt=False)
def collapsed_sweep(kdata, kstats, khyper, labels, counts, log_join, active, where, free,
                    sizes, order, uniforms, log_new, start, logw,
                    reset, add, remove, log_predictive):
    """One systematic pass of collapsed Gibbs (Neal 2000, algorithm 3) over ``order[start:]``.

    For point i, ``p(z_i = k | z_-i, X) ∝ W(N_{k,-i}) f(x_i | X_{k,-i})`` for occupied
    clusters and ``∝ V(K_-i) f(x_i)`` for a new one, with the partition prior's seating
    weights read from its tables ``log_join[c]`` and ``log_new[K]``
    (:meth:`dpclust.priors.PartitionPrior.log_seat_weights`; the Dirichlet process has
    ``W(c) = c`` and ``V(K) = alpha``, Mathematics §2).  The new-cluster term is
    evaluated on a free slot, which every free slot keeps in the prior (reset) state.

    ``sizes = [n_active, n_free]`` is updated in place.  Returns the position in ``order``
    reached: ``len(order)`` when done, or earlier when no free slot is left or the clusters
    outgrow ``log_new`` (the caller grows the capacity or the table and calls again from
    there).
    """
    n_active = sizes[0]
    n_free = sizes[1]
    n = order.shape[0]
    for t in range(start, n):
        if n_free == 0 or n_active >= log_new.shape[0]:
            sizes[0] = n_active
            sizes[1] = n_free
            return t
        i = order[t]
        k = labels[i]
        c = counts[k] - 1
        counts[k] = c
        if c == 0:
            reset(kstats, k, khyper)
            p = where[k]
            last = active[n_active - 1]
            active[p] = last
            where[last] = p
            n_active -= 1
            free[n_free] = k
            n_free += 1
        else:
            remove(kdata, i, kstats, k, khyper)
        for a in range(n_active):
            kk = active[a]
            logw[a] = log_join[counts[kk]] + log_predictive(kdata, i, kstats, kk, khyper)
        k_new = free[n_free - 1]
        logw[n_active] = log_new[n_active] + log_predictive(kdata, i, kstats, k_new, khyper)
        a = categorical_from_logs(logw, n_active + 1, uniforms[t])
        if a == n_active:
            k = k_new
            n_free -= 1
            active[n_active] = k
            where[k] = n_active
            n_active += 1
        else:
            k = active[a]
        add(kdata, i, kstats, k, khyper)
        counts[k] += 1
        labels[i] = k
    sizes[0] = n_active
    sizes[1] = n_free
    return n


@njit(_nrt=False)
def sum_log_marginals(kstats, khyper, active, n_active, log_marginal):
    """``sum_k log f(X_k)`` over the active slots."""
    s = 0.0
    for a in range(n_active):
        s += log_marginal(kstats, active[a], khyper)
    return s


@njit(cache=True, _nrt=False)
def explicit_sweep(loglik, log_prior_pred, labels, counts, n_cols, order, uniforms, log_join,
                   log_new, start, logw, cand):
    """One pass of Neal's (2000) algorithm 2 over ``order[start:]`` with parameters fixed.

    Occupied column c has weight ``W(N_{c,-i}) f(x_i; theta_c)`` (``loglik[i, c]``), a new
    cluster ``V(K_-i) f(x_i)`` (the prior predictive ``log_prior_pred[i]``), with the
    partition prior's seating weights ``log_join`` and ``log_new`` (for the Dirichlet
    process ``N_{c,-i}`` and ``alpha``).  Returns the position where point ``order[t]``
    chose a new cluster (already removed from its old one; the caller draws its parameter
    from ``p(theta | x_i)`` and resumes at ``t + 1``), or ``len(order)`` when the pass is
    done.  The caller keeps ``log_new`` longer than the number of columns.
    """
    n = order.shape[0]
    for t in range(start, n):
        i = order[t]
        counts[labels[i]] -= 1
        m = 0
        for c in range(n_cols):
            if counts[c] > 0:
                logw[m] = log_join[counts[c]] + loglik[i, c]
                cand[m] = c
                m += 1
        logw[m] = log_new[m] + log_prior_pred[i]
        a = categorical_from_logs(logw, m + 1, uniforms[t])
        if a == m:
            labels[i] = -1
            return t
        c = cand[a]
        labels[i] = c
        counts[c] += 1
    return n


@njit(cache=True)
def sample_rows_from_logs(logp, uniforms, out):
    """Row-wise categorical draws from unnormalised log-probabilities ``logp`` (n, K)."""
    buf = np.empty(logp.shape[1])
    for i in range(logp.shape[0]):
        for k in range(logp.shape[1]):
            buf[k] = logp[i, k]
        out[i] = categorical_from_logs(buf, logp.shape[1], uniforms[i])


@njit(_nrt=False)
def split_log_marginals(kdata, kstats, khyper, left, right, out, reset, add, log_marginal):
    """``log f(X_left)``, ``log f(X_right)`` and ``log f(X_left ∪ X_right)`` into ``out[0:3]``
    (slots 0, 1 and 2 of ``kstats``; each point added to its side, then to the union, in the
    order given): the marginals of a split/merge move's target ratio."""
    for s in range(3):
        reset(kstats, s, khyper)
    for t in range(left.shape[0]):
        add(kdata, left[t], kstats, 0, khyper)
        add(kdata, left[t], kstats, 2, khyper)
    for t in range(right.shape[0]):
        add(kdata, right[t], kstats, 1, khyper)
        add(kdata, right[t], kstats, 2, khyper)
    for s in range(3):
        out[s] = log_marginal(kstats, s, khyper)
