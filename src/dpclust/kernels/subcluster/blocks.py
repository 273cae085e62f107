"""What the sub-cluster sampler's data pass and launch pass share: counting a point in its
slot (with its first and a uniform member) and scoring points by the block.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..streams import _INV53, next_uniform


@njit(cache=True, _nrt=False)
def _count_member(i, slot, cnt, first, rkey, res, nxt, state):
    """Count point i in ``slot``, keeping its first member and a uniform one.

    The uniform member is the one with the smallest of independent U(0, 1) keys, drawn
    lazily with skips: after keeping a member with key w, the next member kept is the one
    whose key first falls below w, which is ``G ~ Geometric(w)`` points later, and its key is
    uniform on (0, w) (the one-item case of reservoir sampling with skips; Devroye 1986, Li
    1994).  Uniforms are drawn O(log n) times per slot instead of once a point, and since the
    key is kept (``rkey``) the members of two chunks, partitions or slots merge by taking the
    smaller key: the merge draws no random number and is the same in any order.
    """
    c = cnt[slot] + 1
    cnt[slot] = c
    if c >= nxt[slot]:
        if c == 1:
            first[slot] = i
        res[slot] = i
        state, u = next_uniform(state)
        w = rkey[slot] * (u if u > 0.0 else 0.5 * _INV53)
        rkey[slot] = w
        state, u = next_uniform(state)
        skip = math.log(u) / math.log1p(-w) if u > 0.0 and w < 1.0 else 4e18
        nxt[slot] = c + 1 + int(min(skip, 4e18))
    return state


# ------------------------------------------------------------------ blocked scoring
# A family whose densities are cheaper by the block (the Gaussian in many dimensions, where
# one BLAS call scores many points against a component) provides
#   score_block(kdata, kparams, rows, s, e, comps, c0, c1, out, col0, base):
#     out[rows[r] - base, col0 + a - c0] = log f(x_rows[r]; theta_comps[a])
#     for s <= r < e and c0 <= a < c1, and
#   accumulate_block(kdata, rows, s, e, acc, slot): the raw statistics of rows[s:e] added
#     to acc[slot],
# and the passes below then score ``block`` points at a time: the block's points are sorted
# by the components they need (counting sort), each group scored by one call, and the
# per-point loop reads the scores; the points' statistics are added at the end of the block,
# one call per slot.  Every point gets the same numbers wherever its block is
# run (the blocks depend on the chunks only), so the chain does not depend on the thread
# count.  ``block = 0`` scores point by point with ``log_likelihood``.

@njit(cache=True, _nrt=False)
def no_score_block(kdata, kparams, rows, s, e, comps, c0, c1, out, col0, base):
    """The ``score_block`` of families that score point by point (never called)."""
    return


@njit(cache=True, _nrt=False)
def no_accumulate_block(kdata, rows, s, e, acc, slot):
    """The ``accumulate_block`` of families that accumulate point by point (never called)."""
    return


@njit(cache=True, _nrt=False)
def _sort_block(keys, n, n_keys, base, order, start, fill):
    """Counting sort of the block's rows ``base + r`` (``r < n``) with ``keys[r] >= 0``:
    ``order[start[g]:start[g + 1]]`` are the (global) rows of key g, in increasing order."""
    for g in range(n_keys + 1):
        start[g] = 0
    for r in range(n):
        if keys[r] >= 0:
            start[keys[r] + 1] += 1
    for g in range(n_keys):
        start[g + 1] += start[g]
    for g in range(n_keys):
        fill[g] = start[g]
    for r in range(n):
        g = keys[r]
        if g >= 0:
            order[fill[g]] = base + r
            fill[g] += 1


@njit(cache=True)
def _block_scratch(block, n_keys, n_slots):
    """Scratch arrays of a blocked pass over one chunk: ``(rows per block, keys, order, start,
    fill, slots, slot start, slot fill)`` for sorting a block's rows by ``n_keys`` keys and
    its statistics by ``n_slots`` slots (``slots`` starts at -1: none)."""
    nb = max(block, 1)
    return (nb, np.empty(nb, dtype=np.int64), np.empty(nb, dtype=np.int64),
            np.empty(n_keys + 1, dtype=np.int64), np.empty(n_keys + 1, dtype=np.int64),
            np.full(nb, -1, dtype=np.int64), np.empty(n_slots + 1, dtype=np.int64),
            np.empty(n_slots + 1, dtype=np.int64))


@njit
def _flush_block(kdata, slots, n, blo, acc, order, start, fill, accumulate_block):
    """Add the block's points ``blo + r`` (``r < n``) to ``acc[slots[r]]`` (-1: none), one
    ``accumulate_block`` call per slot."""
    n_slots = acc.shape[0]
    _sort_block(slots, n, n_slots, blo, order, start, fill)
    for t in range(n_slots):
        if start[t + 1] > start[t]:
            accumulate_block(kdata, order, start[t], start[t + 1], acc, t)
    for r in range(n):
        slots[r] = -1


@njit(_nrt=False)
def _scores(kdata, i, kparams, cand, m, out, buf, r, log_likelihood):
    """``out[a]`` for ``a < m``: from the block's scores (row r) or point by point
    (``r < 0``)."""
    if r < 0:
        log_likelihood(kdata, i, kparams, cand, 0, m, out)
    else:
        for a in range(m):
            out[a] = buf[r, a]

