"""The launch pass of the sub-cluster sampler's exact split-merge moves (numba).

The exact split-merge moves (dpclust.samplers.subcluster, "launch" moves) touch the data
in two more places: the choice of each move's launch subsample, and the launch pass that
refines the launch on all the move's points (mode 0) or proposes the split and scores the
reverse (mode 1).  Slots of the launch pass, for K clusters and B moves: ``k`` for cluster k
(counted in mode 1: its first and a uniform member), ``K + 2b + s`` for side s of move b;
statistics ``acc`` and ``logq`` are kept for the 2B sides only (row ``2b + s``).

:func:`launch_chunk` is one loop over a chunk's points, longer than 100 lines on purpose, for
the reason :mod:`~dpclust.kernels.subcluster.passes` gives for its chunk pass.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..streams import next_uniform, point_key
from .blocks import _block_scratch, _count_member, _flush_block, _scores, _sort_block


@njit(cache=True, parallel=True)
def select_points(labels, thresholds, anchors, key, key2, row0, bounds, mask, best_key,
                  best_row):
    """The rows of each move's launch subsample, ``mask[i] = key(row0 + i) <
    thresholds[labels[i]]`` (a Bernoulli subsample of its points), and per chunk c and moving
    cluster k the point other than the anchor ``anchors[k]`` (a global row) with the smallest
    second key ``key2`` (``best_key[c, k]``, ``best_row[c, k]``, global; 2 and -1 if none):
    over chunks, a uniform member of the cluster other than its anchor, independent of the
    subsample."""
    k1 = np.uint64(key)
    k2 = np.uint64(key2)
    for c in prange(bounds.shape[0] - 1):
        for i in range(bounds[c], bounds[c + 1]):
            k = labels[i]
            t = thresholds[k]
            if t > 0.0:
                g = row0 + i
                mask[i] = point_key(k1, g) < t
                if g != anchors[k]:
                    u = point_key(k2, g)
                    if u < best_key[c, k]:
                        best_key[c, k] = u
                        best_row[c, k] = g
            else:
                mask[i] = False


@njit(cache=True, _nrt=False)
def _launch_active(i, b, pins, stages, skey, row0):
    """Whether point i (of move b, -1: none) is allocated in this stage."""
    if b < 0:
        return False
    if i == pins[b, 0] or i == pins[b, 1]:
        return stages[b, 0] <= 0.0
    u3 = point_key(skey, row0 + i)
    return stages[b, 0] <= u3 < stages[b, 1]


@njit
def launch_chunk(kdata, kparams, log_w, labels, block_of, side_of, pins, stages, stage_key,
                 row0, mode, lo, hi, seed, codes, acc, cnt, first, rkey, res, logq,
                 log_likelihood, accumulate, block, score_block, accumulate_block):
    """One chunk (points ``lo .. hi - 1``) of a launch pass.

    Point i of cluster ``k = labels[i]`` with ``b = block_of[k] >= 0`` is scored against
    the two launch components ``kparams[2b]``, ``kparams[2b + 1]`` with log weights
    ``log_w[b]``: ``p_i(s) ∝ w_bs f(x_i; phi_bs)``.

    ``mode`` 0 (a step of the launch, as Jain & Neal's intermediate restricted Gibbs
    scans): ``s ~ p_i``; the side's statistics and count are accumulated.  ``mode`` 1 (the
    proposal): a split move
    (``side_of[k] < 0``) draws ``s ~ p_i``, a merge move takes ``s = side_of[k]`` (which of
    the two clusters the point is in); both add ``log p_i(s)`` to ``logq[2b]`` and ``log
    p_i(1 - s)`` to ``logq[2b + 1]`` (the log probability of proposing this split and of its
    mirror image), ``codes[i] = s``, except the points ``pins[b, s]`` (local rows, or -1),
    which are put on side s and add nothing to ``logq``; splits accumulate the side's
    statistics, count it and keep its first and a uniform member; merges accumulate theirs
    in the intermediate stages (``mode`` 1), whose sides the next stage's components are
    fitted to, as a split's are.

    Stages: only the points of a move whose key ``key(stage_key, row0 + i)`` lies in
    ``[stages[b, 0], stages[b, 1])`` are allocated (the pinned points with the first stage,
    ``stages[b, 0] == 0``); ``codes`` keeps the sides of earlier stages.  With ``mode`` 2
    (the last stage of a proposal) every point is also counted in its cluster's slot ``k``.

    ``block > 0``: the points are scored ``block`` at a time with ``score_block`` and
    their statistics added with ``accumulate_block``.
    """
    K = block_of.shape[0]
    B = pins.shape[0]
    out = np.empty(2)
    comps = np.empty(2, dtype=np.int64)
    nxt = np.ones(cnt.shape[0], dtype=np.int64)
    nb, keys, order, start, fill, slots1, astart, afill = _block_scratch(block, B,
                                                                         acc.shape[0])
    buf = np.empty((nb, 2))
    blo = lo
    bhi = lo
    r = -1
    state = seed
    skey = np.uint64(stage_key)
    for i in range(lo, hi):
        if block > 0:
            if i >= bhi:
                if i > lo:
                    _flush_block(kdata, slots1, bhi - blo, blo, acc, order, astart, afill,
                                 accumulate_block)
                blo = i
                bhi = min(i + block, hi)
                for t in range(bhi - blo):
                    bt = block_of[labels[blo + t]]
                    keys[t] = bt if _launch_active(blo + t, bt, pins, stages, skey,
                                                   row0) else -1
                _sort_block(keys, bhi - blo, B, blo, order, start, fill)
                for bt in range(B):
                    if start[bt + 1] > start[bt]:
                        comps[0] = 2 * bt
                        comps[1] = 2 * bt + 1
                        score_block(kdata, kparams, order, start[bt], start[bt + 1], comps, 0,
                                    2, buf, 0, blo)
            r = i - blo
        k = labels[i]
        b = block_of[k]
        if mode == 2:
            state = _count_member(i, k, cnt, first, rkey, res, nxt, state)
        if not _launch_active(i, b, pins, stages, skey, row0):
            continue
        comps[0] = 2 * b
        comps[1] = 2 * b + 1
        _scores(kdata, i, kparams, comps, 2, out, buf, r, log_likelihood)
        a0 = out[0] + log_w[b, 0]
        a1 = out[1] + log_w[b, 1]
        top = a0 if a0 > a1 else a1
        lse = top + math.log(math.exp(a0 - top) + math.exp(a1 - top))
        fixed = side_of[k] if mode >= 1 else -1
        pinned = 0 if i == pins[b, 0] else (1 if i == pins[b, 1] else -1)
        if fixed >= 0:
            s = fixed
        elif pinned >= 0:
            s = pinned
        else:
            state, u = next_uniform(state)
            s = 1 if u < math.exp(a1 - lse) else 0
        if mode == 0:
            if r < 0:
                accumulate(kdata, i, acc, 2 * b + s)
            else:
                slots1[r] = 2 * b + s
            cnt[K + 2 * b + s] += 1
            continue
        if pinned >= 0:
            pass  # the move's pinned points are not part of the allocation's probability
        elif s == 0:
            logq[2 * b] += a0 - lse
            logq[2 * b + 1] += a1 - lse
        else:
            logq[2 * b] += a1 - lse
            logq[2 * b + 1] += a0 - lse
        codes[i] = s
        if fixed < 0 or mode == 1:
            if r < 0:
                accumulate(kdata, i, acc, 2 * b + s)
            else:
                slots1[r] = 2 * b + s
        if fixed < 0:
            state = _count_member(i, K + 2 * b + s, cnt, first, rkey, res, nxt, state)
    if block > 0 and hi > lo:
        _flush_block(kdata, slots1, bhi - blo, blo, acc, order, astart, afill,
                     accumulate_block)


@njit(parallel=True)
def launch_pass(kdata, kparams, log_w, labels, block_of, side_of, pins, stages, stage_key,
                row0, mode, bounds, seeds, codes, acc, cnt, first, rkey, res, logq,
                log_likelihood, accumulate, block, score_block, accumulate_block):
    """The launch pass over all chunks, in parallel (generic over the family's functions;
    built-in families call :func:`launch_chunk` from cached entry points of their own)."""
    for c in prange(bounds.shape[0] - 1):
        launch_chunk(kdata, kparams, log_w, labels, block_of, side_of, pins, stages,
                     stage_key, row0, mode, bounds[c],
                     bounds[c + 1], seeds[c], codes, acc[c], cnt[c], first[c], rkey[c],
                     res[c], logq[c], log_likelihood, accumulate, block, score_block,
                     accumulate_block)
