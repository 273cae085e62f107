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
    scale-free); returns ``out``."""
    if orders.shape[0] * log_p.shape[0] >= _PARALLEL_FROM:
        _table_parallel(orders, lengths, log_p, np.exp(log_p), out)
    else:
        _rows(orders, lengths, log_p, np.exp(log_p), out, 0, orders.shape[0],
              np.zeros(log_p.shape[1], dtype=np.bool_))
    return out


@njit(cache=True, parallel=True)
def _table_parallel(orders, lengths, log_p, p, out):
    N = orders.shape[0]
    n_chunks = (N + _CHUNK - 1) // _CHUNK
    for c in prange(n_chunks):
        _rows(orders, lengths, log_p, p, out, c * _CHUNK, min(N, (c + 1) * _CHUNK),
              np.zeros(log_p.shape[1], dtype=np.bool_))


@njit(cache=True)
def _rows(orders, lengths, log_p, p, out, lo, hi, ranked):
    """Rows ``lo .. hi - 1`` of the table (``ranked``: scratch of n_items False)."""
    K, n = log_p.shape
    for i in range(lo, hi):
        t = lengths[i]
        for s in range(t):
            ranked[orders[i, s]] = True
        for k in range(K):
            rest = 0.0
            for j in range(n):
                if not ranked[j]:
                    rest += p[k, j]
            total = 0.0
            for s in range(t - 1, -1, -1):
                item = orders[i, s]
                rest += p[k, item]
                total += log_p[k, item] - math.log(rest)
            out[i, k] = total
        for s in range(t):
            ranked[orders[i, s]] = False


@njit(cache=True)
def soft_sums(orders, lengths, weights, p, chosen, exposure):
    """The weighted statistics of the soft proposal at worths ``p`` (normalised), written
    into ``chosen`` and ``exposure`` (n_items,): ``chosen_j = sum_d w_d [j ranked in d]``
    and ``exposure_j = sum_d w_d sum_{s <= t_d} [j available at s] / Lambda_s(d)``, the
    expected Gamma latents at ``p``.  The NumPy reference is
    :func:`dpclust.families._plackett_luce.soft_gamma_params`."""
    n = p.shape[0]
    chosen[:] = 0.0
    exposure[:] = 0.0
    ranked = np.zeros(n, dtype=np.bool_)
    lam = np.empty(max(orders.shape[1], 1))
    for d in range(orders.shape[0]):
        w = weights[d]
        if w == 0.0:
            continue
        t = lengths[d]
        for s in range(t):
            ranked[orders[d, s]] = True
        rest = 0.0
        for j in range(n):
            if not ranked[j]:
                rest += p[j]
        for s in range(t - 1, -1, -1):  # Lambda_s, summed from what is left
            rest += p[orders[d, s]]
            lam[s] = rest
        # an item chosen at stage s was available at stages 0..s, an unranked one at all
        cum = 0.0
        for s in range(t):
            cum += w / lam[s]
            exposure[orders[d, s]] += cum
            chosen[orders[d, s]] += w
        for j in range(n):
            if not ranked[j]:
                exposure[j] += cum
        for s in range(t):
            ranked[orders[d, s]] = False
