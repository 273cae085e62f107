"""Compiled kernels of the Plackett–Luce family: the log-likelihood table.

``log PL(pi | p) = sum_s log p_pi(s) - log Lambda_s`` with ``Lambda_s`` the worth of the
items still available at stage ``s``.  ``Lambda_s`` is summed from the items left
(the unranked items' worth plus that of the items ranked at ``s`` or later), never as
``1 - (worth already chosen)``, which loses every digit when a cluster's worth sits on the
few items a ranking lists first.  :func:`dpclust.families._plackett_luce.log_likelihood`
is the NumPy reference (``tests/test_plackett_luce_family.py`` checks one against the
other).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

#: rankings per parallel chunk of :func:`log_pl_table`
_CHUNK = 256
#: below this many (ranking, component) pairs the table is filled on one thread (starting
#: the parallel region costs more than it saves)
_PARALLEL_FROM = 1 << 15


def log_pl_table(orders, lengths, log_p, out):
    """``out[i, k] = log PL(orders[i, :lengths[i]] | exp(log_p[k]))`` for every ranking
    ``i`` and component ``k`` (``log_p`` rows normalised or not: the likelihood is
    scale-free); returns ``out``.

    The compiled loop writes each entry as ``sum_s log p_pi(s)`` and the product of its
    ``Lambda_s`` (:func:`_rows`); one vectorised ``log`` of the products finishes the
    table (a compiled ``log`` a stage costs several times as much)."""
    free = np.ones(log_p.shape[1])
    den = np.empty_like(out)
    if orders.shape[0] * log_p.shape[0] >= _PARALLEL_FROM:
        _table_parallel(orders, lengths, log_p, np.exp(log_p), out, den)
    else:
        _rows(orders, lengths, log_p, np.exp(log_p), out, den, 0, orders.shape[0], free)
    out -= np.log(den)
    return out


@njit(cache=True, parallel=True)
def _table_parallel(orders, lengths, log_p, p, num, den):
    N = orders.shape[0]
    n_chunks = (N + _CHUNK - 1) // _CHUNK
    for c in prange(n_chunks):
        _rows(orders, lengths, log_p, p, num, den, c * _CHUNK, min(N, (c + 1) * _CHUNK),
              np.ones(log_p.shape[1]))


@njit(cache=True)
def _rows(orders, lengths, log_p, p, num, den, lo, hi, free):
    """Rows ``lo .. hi - 1`` of the table as ``num - log(den)``: ``num`` the sum of the
    chosen items' ``log p`` (less the logarithms of any partial products that would
    underflow), ``den`` the product of the ``Lambda_s`` (``free``: scratch of n_items
    ones)."""
    K, n = log_p.shape
    for i in range(lo, hi):
        t = lengths[i]
        for s in range(t):
            free[orders[i, s]] = 0.0
        for k in range(K):
            rest = 0.0
            for j in range(n):
                rest += p[k, j] * free[j]
            total = 0.0
            prod = 1.0
            for s in range(t - 1, -1, -1):
                item = orders[i, s]
                rest += p[k, item]
                total += log_p[k, item]
                prod *= rest
                if prod < 1e-200:  # a long ranking of tiny worths: take the log now
                    total -= math.log(prod)
                    prod = 1.0
            num[i, k] = total
            den[i, k] = prod
        for s in range(t):
            free[orders[i, s]] = 1.0


@njit(cache=True)
def soft_sums(orders, lengths, weights, p, chosen, exposure):
    """The weighted statistics of the soft proposal at worths ``p`` (normalised), written
    into ``chosen`` and ``exposure`` (n_items,): ``chosen_j = sum_d w_d [j ranked in d]``
    and ``exposure_j = sum_d w_d sum_{s <= t_d} [j available at s] / Lambda_s(d)``, the
    expected Gamma latents at ``p``.  The NumPy reference is
    :func:`dpclust.families._plackett_luce.soft_gamma_params`.

    An unranked item is available at every stage of a ranking: rather than add each
    ranking's total to each unranked item (n_items scattered additions a ranking), the
    totals are summed once (``every``) and, per item, over the rankings that list it
    (``listed``); ``every - listed_j`` is then its unranked share, kept at zero or above
    (a difference of two sums, exact up to rounding; the statistics define a proposal,
    whose forward and reverse densities are computed by the same rule)."""
    n = p.shape[0]
    chosen[:] = 0.0
    exposure[:] = 0.0
    listed = np.zeros(n)
    free = np.ones(n)
    lam = np.empty(max(orders.shape[1], 1))
    every = 0.0
    for d in range(orders.shape[0]):
        w = weights[d]
        if w == 0.0:
            continue
        t = lengths[d]
        for s in range(t):
            free[orders[d, s]] = 0.0
        rest = 0.0
        for j in range(n):
            rest += p[j] * free[j]
        for s in range(t - 1, -1, -1):  # Lambda_s, summed from what is left
            rest += p[orders[d, s]]
            lam[s] = rest
        # an item chosen at stage s was available at stages 0..s, an unranked one at all
        cum = 0.0
        for s in range(t):
            cum += w / lam[s]
            item = orders[d, s]
            exposure[item] += cum
            chosen[item] += w
        for s in range(t):
            item = orders[d, s]
            listed[item] += cum
            free[item] = 1.0
        every += cum
    for j in range(n):
        exposure[j] += max(every - listed[j], 0.0)


@njit(cache=True)
def latent_rows(orders, lengths, labels, rate, exp_draws, counts, exposure):
    """The Gamma latents of every ranking as a row of counts over exposures (the
    augmented data of :mod:`dpclust.families.exposure`), written into ``counts`` and
    ``exposure`` (N, n_items).

    Ranking ``i`` of cluster ``k = labels[i]`` at worths ``rate[k]`` (unnormalised: the
    latents' scale is the worths') gets ``Z_s = exp_draws[i, s] / Lambda_s``, an
    ``Exp(Lambda_s)`` latent per stage; an item chosen at stage ``r`` counts 1 with exposure
    ``Z_1 + ... + Z_r``, an unranked item 0 with ``Z_1 + ... + Z_t``."""
    N = orders.shape[0]
    n = rate.shape[1]
    lam = np.empty(max(orders.shape[1], 1))
    free = np.ones(n)
    for i in range(N):
        k = labels[i]
        t = lengths[i]
        for s in range(t):
            free[orders[i, s]] = 0.0
        rest = 0.0
        for j in range(n):
            rest += rate[k, j] * free[j]
        for s in range(t - 1, -1, -1):  # Lambda_s, summed from what is left
            rest += rate[k, orders[i, s]]
            lam[s] = rest
        cum = 0.0
        for j in range(n):
            counts[i, j] = 0.0
        for s in range(t):
            cum += exp_draws[i, s] / lam[s]
            item = orders[i, s]
            counts[i, item] = 1.0
            exposure[i, item] = cum
        for j in range(n):
            if free[j] == 1.0:
                exposure[i, j] = cum
        for s in range(t):
            free[orders[i, s]] = 1.0
