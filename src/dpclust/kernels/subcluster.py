"""Numba kernels of the sub-cluster sampler: the data pass and the relabelling pass.

The data pass is the only place where the sub-cluster sampler touches every point.  It is one
pure function of (a chunk of the data, the broadcast parameters, a random stream) and returns
the chunk's new labels, sub-labels and per-slot sufficient statistics; the caller reduces the
chunks in a fixed order.  A chunk's random stream is a SplitMix64 sequence (Steele, Lea &
Flood 2014) seeded from the iteration's key and the chunk's index, so that the result for a
given ``random_state`` does not depend on how many threads (or workers) run the chunks.

Slots of the statistics, for K clusters: ``2k + s`` for sub-cluster s of cluster k, and
``2K``/``2K + 1`` for the two halves of the random split proposal (ALGORITHMS.md section 3).
"""

from __future__ import annotations

import math

import numpy as np
import numba
from numba import njit, prange

from .gibbs import _SKIP, categorical_from_logs

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True, _nrt=False)
def mix64(z):
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, _nrt=False)
def next_uniform(state):
    """Advance the SplitMix64 state (a uint64) and return ``(state, u)``, u uniform in [0, 1)."""
    state = state + _GOLDEN
    return state, float(mix64(state) >> _S11) * _INV53


def chunk_seeds(key: int, n_chunks: int) -> np.ndarray:
    """Independent stream seeds for chunks ``0 .. n_chunks - 1`` of one iteration.

    ``key`` is drawn from the sampler's generator once per iteration; chunk c's seed is
    ``mix64(key + mix64(c + 1))``, so any partitioning into the same chunks, on any number of
    threads or machines, draws the same numbers.
    """
    return _chunk_seeds(np.uint64(key), n_chunks)


@njit(cache=True)
def _chunk_seeds(key, n_chunks):
    out = np.empty(n_chunks, dtype=np.uint64)
    for c in range(n_chunks):
        out[c] = mix64(key + mix64(np.uint64(c + 1) * _GOLDEN))
    return out


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


@njit(cache=True, _nrt=False)
def _draw_label(logw, log_pi, cand, m, state):
    """Index a < m drawn with probability proportional to ``pi_{cand[a]} exp(logw[a])``
    (overwrites ``logw[:m]``).  Candidates more than 36 nats below the best get no weight
    (below 1e-15 of it) and no ``exp``; a point with a single candidate left draws no
    uniform.

    The single-candidate case (most points of well-separated clusters) is found by a
    branch-free count before any ``exp``, so that the position of the best candidate, which
    changes from point to point, costs no mispredicted branches.
    """
    best = -np.inf
    arg = 0
    for a in range(m):
        v = logw[a] + log_pi[cand[a]]
        logw[a] = v
        if v > best:
            best = v
            arg = a
    cut = best + _SKIP
    n_live = 0
    for a in range(m):
        n_live += logw[a] >= cut
    if n_live == 1:
        return state, arg
    total = 0.0
    first = -1
    for a in range(m):
        dv = logw[a] - best
        if dv < _SKIP:
            logw[a] = 0.0
        else:
            w = 1.0 if dv == 0.0 else math.exp(dv)
            logw[a] = w
            total += w
            if first < 0:
                first = a
            arg = a
    state, u = next_uniform(state)
    target = u * total
    if n_live == 2:  # the common case: no third pass over the candidates
        return state, (first if logw[first] >= target else arg)
    acc = 0.0
    for a in range(m):
        w = logw[a]
        if w > 0.0:
            acc += w
            arg = a
            if acc >= target:
                break
    return state, arg


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
def _pass_block(kdata, kparams, labels_in, anchors, update, group_of, group_start,
                group_members, n_clusters, blo, bhi, keys, order, start, fill, pair, buf,
                subbuf, score_block):
    """Scores of the data pass for points ``blo .. bhi - 1``: ``buf[r, a]`` against the a-th
    member of the point's super-cluster (the points that draw a label), ``subbuf[r, s]``
    against its cluster's sub-cluster s (update 1 and 2)."""
    n = bhi - blo
    if update >= 2:
        for r in range(n):
            i = blo + r
            k0 = labels_in[i]
            g = group_of[k0]
            keys[r] = g if (anchors[k0] != i and group_start[g + 1] - group_start[g] > 1) else -1
        n_groups = group_start.shape[0] - 1
        _sort_block(keys, n, n_groups, blo, order, start, fill)
        for g in range(n_groups):
            if start[g + 1] > start[g]:
                score_block(kdata, kparams, order, start[g], start[g + 1], group_members,
                            group_start[g], group_start[g + 1], buf, 0, blo)
    if update == 1 or update == 2:
        for r in range(n):
            keys[r] = labels_in[blo + r]
        _sort_block(keys, n, n_clusters, blo, order, start, fill)
        for k in range(n_clusters):
            if start[k + 1] > start[k]:
                pair[0] = n_clusters + 2 * k
                pair[1] = n_clusters + 2 * k + 1
                score_block(kdata, kparams, order, start[k], start[k + 1], pair, 0, 2, subbuf,
                            0, blo)


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


@njit(cache=True)
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


@njit(cache=True, _nrt=False)
def _scores(kdata, i, kparams, cand, m, out, buf, r, log_likelihood):
    """``out[a]`` for ``a < m``: from the block's scores (row r) or point by point
    (``r < 0``)."""
    if r < 0:
        log_likelihood(kdata, i, kparams, cand, 0, m, out)
    else:
        for a in range(m):
            out[a] = buf[r, a]


@njit(cache=True)
def chunk_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
               group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
               lo, hi, seed, labels_out, code_out, acc, cnt, first, rkey, res, ll,
               log_likelihood, accumulate, block, score_block, accumulate_block):
    """One chunk (points ``lo .. hi - 1``) of the sub-cluster data pass.

    ``kparams`` holds the K cluster parameters followed by the 2K sub-cluster parameters
    (sub-cluster s of cluster k at ``K + 2k + s``; with ``update`` 3 the K alone), so that one call of the family's
    ``log_likelihood`` per point scores both the candidate clusters and the sub-clusters of
    the point's cluster (a second call only when the point changes cluster).

    ``update``: 0 keeps labels and sub-labels (statistics only), 1 draws sub-labels only, 2
    draws both, 3 draws labels only (every sub-label 0: no sub-cluster is scored).  With
    ``update`` 2 or 3, every point that is not its cluster's anchor (point i of cluster k is
    when ``anchors[k] == i``) draws a label from ``pi_k f(x_i; theta_k)`` over
    the clusters of its super-cluster (Chang & Fisher 2013, eq. 9); with 2, a sub-label from
    ``pibar_ks f(x_i; thetabar_ks)`` (eq. 15), or the more likely of two seeds in a cluster
    whose sub-clusters start afresh (``fresh``).  A point of cluster ``rand_cluster`` also
    gets a side of the random split, right with probability ``1 - rand_p``.

    Outputs, per slot of this chunk: ``acc`` (the family's raw statistics), ``cnt`` (points),
    ``first`` (smallest index, -1 if none), ``res`` and ``rkey`` (a uniformly chosen member
    and its key, see :func:`_count_member`; ``rkey`` starts at 1) and ``ll`` (the sub-cluster log-likelihood ``log f(x_i; thetabar_ks)`` summed,
    to watch the sub-clusters burn in).  ``code_out[i] = s + 2 * side``.

    ``block > 0``: the points are scored ``block`` at a time with ``score_block`` and
    their statistics added with ``accumulate_block`` (see the notes above
    :func:`no_score_block`); 0: one at a time with ``log_likelihood`` and ``accumulate``.
    """
    n_clusters = log_pi.shape[0]
    logw = np.empty(n_clusters + 2)
    cand = np.empty(n_clusters + 2, dtype=np.int64)
    pair = np.empty(2, dtype=np.int64)
    nxt = np.ones(acc.shape[0], dtype=np.int64)  # count of the next kept member, per slot
    nb, keys, order, start, fill, slots1, astart, afill = _block_scratch(block, n_clusters,
                                                                         acc.shape[0])
    buf = np.empty((nb if block > 0 else 1, n_clusters))
    subbuf = np.empty((nb, 2))
    slots2 = np.full(nb, -1, dtype=np.int64)
    blo = lo
    bhi = lo
    r = -1
    state = seed
    g_cached = -1  # the super-cluster whose members fill cand[:m]
    for i in range(lo, hi):
        if block > 0:
            if i >= bhi:
                if i > lo:
                    _flush_block(kdata, slots1, bhi - blo, blo, acc, order, astart, afill,
                                 accumulate_block)
                    _flush_block(kdata, slots2, bhi - blo, blo, acc, order, astart, afill,
                                 accumulate_block)
                blo = i
                bhi = min(i + block, hi)
                _pass_block(kdata, kparams, labels_in, anchors, update, group_of,
                            group_start, group_members, n_clusters, blo, bhi, keys, order,
                            start, fill, pair, buf, subbuf, score_block)
            r = i - blo
        k0 = labels_in[i]
        k = k0
        m = 0
        if update >= 2 and anchors[k0] != i:
            g = group_of[k0]
            lo_g = group_start[g]
            n_g = group_start[g + 1] - lo_g
            if n_g > 1:
                m = n_g
                if g != g_cached:
                    for a in range(m):
                        cand[a] = group_members[lo_g + a]
                    g_cached = g
        if update == 0:
            labels_out[i] = k
            s = sub_in[i]
            lsub = 0.0
        elif update == 3:  # labels only: no sub-clusters to score
            if m > 0:
                _scores(kdata, i, kparams, cand, m, logw, buf, r, log_likelihood)
                state, arg = _draw_label(logw, log_pi, cand, m, state)
                k = cand[arg]
            else:
                g_cached = -1
            labels_out[i] = k
            s = 0
            lsub = 0.0
        else:
            if m == 0:
                g_cached = -1
            cand[m] = n_clusters + 2 * k0
            cand[m + 1] = n_clusters + 2 * k0 + 1
            if r < 0:
                log_likelihood(kdata, i, kparams, cand, 0, m + 2, logw)
                l0 = logw[m]
                l1 = logw[m + 1]
            else:
                _scores(kdata, i, kparams, cand, m, logw, buf, r, log_likelihood)
                l0 = subbuf[r, 0]
                l1 = subbuf[r, 1]
            if m > 0:
                state, arg = _draw_label(logw, log_pi, cand, m, state)
                k = cand[arg]
                if k != k0:
                    pair[0] = n_clusters + 2 * k
                    pair[1] = n_clusters + 2 * k + 1
                    log_likelihood(kdata, i, kparams, pair, 0, 2, logw)
                    l0 = logw[0]
                    l1 = logw[1]
            labels_out[i] = k
            a0 = l0 + log_pibar[k, 0]
            a1 = l1 + log_pibar[k, 1]
            # P(s = 1) = 1 / (1 + exp(a0 - a1)); beyond 36 nats the draw is certain.  The
            # coin u < 1 / (1 + e) is tested as u (1 + e) < 1 (no division).
            diff = a0 - a1
            if fresh[k]:  # seeded sub-clusters: the more likely side
                p1 = 1.0 if diff < 0.0 else 0.0
                u = 0.5
            elif diff < _SKIP:
                p1 = 1.0
                u = 0.5
            elif diff > -_SKIP:
                p1 = 0.0
                u = 0.5
            else:
                p1 = 1.0
                state, u = next_uniform(state)
                u *= 1.0 + math.exp(diff)
            if u < p1:
                s = 1
                lsub = l1
            else:
                s = 0
                lsub = l0
        slot = 2 * k + s
        if r < 0:
            accumulate(kdata, i, acc, slot)
        else:
            slots1[r] = slot
        ll[slot] += lsub
        state = _count_member(i, slot, cnt, first, rkey, res, nxt, state)
        code = s
        if k == rand_cluster:
            state, u = next_uniform(state)
            side = 1 if u >= rand_p else 0
            code += 2 * side
            slot = 2 * n_clusters + side
            if r < 0:
                accumulate(kdata, i, acc, slot)
            else:
                slots2[r] = slot
            state = _count_member(i, slot, cnt, first, rkey, res, nxt, state)
        code_out[i] = code
    if block > 0 and hi > lo:
        _flush_block(kdata, slots1, bhi - blo, blo, acc, order, astart, afill,
                     accumulate_block)
        _flush_block(kdata, slots2, bhi - blo, blo, acc, order, astart, afill,
                     accumulate_block)


@njit(cache=True, parallel=True)
def data_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
              group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
              bounds, seeds, labels_out, code_out, acc, cnt, first, rkey, res, ll,
              log_likelihood, accumulate, block, score_block, accumulate_block):
    """The data pass over all chunks, in parallel (generic over the family's functions).

    Built-in families call :func:`chunk_pass` from a cached entry point of their own
    (``PassKernel.entry_points``); this generic driver serves any other family.
    """
    for c in prange(bounds.shape[0] - 1):
        chunk_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
                   group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
                   bounds[c], bounds[c + 1], seeds[c], labels_out, code_out, acc[c], cnt[c],
                   first[c], rkey[c], res[c], ll[c], log_likelihood, accumulate, block,
                   score_block, accumulate_block)


@njit(cache=True, _nrt=False)
def relabel_pass(labels, codes, label_map, sub_map, labels_out, sub_out):
    """``labels_out[i] = label_map[4 labels[i] + codes[i]]`` and the sub-label likewise
    (``sub_map`` entry 2 keeps the sub-label ``codes[i] & 1``).

    Serial: a gather that streams memory at a few ns per point, cheaper than waking the
    thread pool a second time per iteration."""
    for i in range(labels.shape[0]):
        key = 4 * labels[i] + codes[i]
        labels_out[i] = label_map[key]
        s = sub_map[key]
        sub_out[i] = codes[i] & 1 if s == 2 else s


@njit(cache=True, _nrt=False)
def random_labels(bounds, seeds, n_clusters, labels_out, sub_out):
    """A uniform random label in ``0 .. n_clusters - 1`` and sub-label in {0, 1} for every
    point, chunk c drawing from the stream ``seeds[c]`` (the sampler's starting partition)."""
    for c in range(bounds.shape[0] - 1):
        state = seeds[c]
        for i in range(bounds[c], bounds[c + 1]):
            state, u = next_uniform(state)
            labels_out[i] = min(int(u * n_clusters), n_clusters - 1)
            state, u = next_uniform(state)
            sub_out[i] = 1 if u < 0.5 else 0


# ------------------------------------------------------------------ split-merge launches
# The exact split-merge moves (dpclust.samplers.subcluster, "launch" moves) touch the data
# in two more places: the choice of each move's launch subsample, and the launch pass that
# refines the launch on all the move's points (mode 0) or proposes the split and scores the
# reverse (mode 1).  Slots of the launch pass, for K clusters and B moves: ``k`` for cluster k
# (counted in mode 1: its first and a uniform member), ``K + 2b + s`` for side s of move b;
# statistics ``acc`` and ``logq`` are kept for the 2B sides only (row ``2b + s``).

@njit(cache=True)
def point_keys(key, rows):
    """:func:`point_key` of global ``rows`` (an array)."""
    out = np.empty(rows.shape[0])
    k64 = np.uint64(key)
    for a in range(rows.shape[0]):
        out[a] = point_key(k64, rows[a])
    return out


@njit(cache=True, _nrt=False)
def point_key(key, i):
    """The uniform key of global row ``i`` for the iteration's ``key``: the same wherever
    the row is, so that a move's launch subsample depends on its points alone."""
    return float(mix64(key + mix64(np.uint64(i + 1) * _GOLDEN)) >> _S11) * _INV53


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


@njit(cache=True)
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


@njit(cache=True, parallel=True)
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


# ------------------------------------------------------------- sequential proposals
# A sequential move (Dahl 2003, "SAMS") allocates its points one at a time, each to a side
# with probability proportional to the side's size times the collapsed predictive given the
# points already there, so that q telescopes towards the two sides' marginal likelihood and
# a merge of two fragments of one cluster scores its current split as well as a split would
# propose it.  The moves are independent: one thread per move.

@njit(cache=True, parallel=True)
def shuffle_moves(rows, fixed, start, seeds, lanes, lane_start):
    """Put each move's rows ``rows[start[b]:start[b + 1]]`` (with their ``fixed`` sides) in a
    uniformly random order, in place (Fisher-Yates with stream ``seeds[b]``; one thread per
    lane of :func:`move_lanes`).  The order is an auxiliary variable of the same law for a
    move and its reverse.  A random affine order (strided, no permutation) proposed worse
    splits: 10^5 points from one cluster, 12 data sets, NMI 0.977 against 0.992 after 100
    iterations."""
    for lane in prange(lane_start.shape[0] - 1):
        for at in range(lane_start[lane], lane_start[lane + 1]):
            b = lanes[at]
            lo = start[b]
            state = seeds[b]
            for t in range(start[b + 1] - 1, lo, -1):
                state, u = next_uniform(state)
                c = lo + int(u * (t - lo + 1))
                if c > t:
                    c = t
                r = rows[t]
                rows[t] = rows[c]
                rows[c] = r
                f = fixed[t]
                fixed[t] = fixed[c]
                fixed[c] = f


@njit(cache=True, _nrt=False)
def sequential_move(kdata, kstats, khyper, rows, lo, hi, fixed, i, j, slot, state, codes,
                    reset, add, log_predictive):
    """Allocate ``rows[lo:hi]`` in that order between slots ``slot`` (seeded with point i)
    and ``slot + 1`` (seeded with j): side s with probability ``n_s f(x | X_s) / (n_0 f(x |
    X_0) + n_1 f(x | X_1))``, drawn (``fixed[t] < 0``) or the given side ``fixed[t]``
    (scored).  Writes ``codes[t]``; returns ``(state, log q, n_0, n_1)``, the slots holding
    the sides."""
    reset(kstats, slot, khyper)
    reset(kstats, slot + 1, khyper)
    add(kdata, i, kstats, slot, khyper)
    add(kdata, j, kstats, slot + 1, khyper)
    n0 = 1.0
    n1 = 1.0
    log_q = 0.0
    for t in range(lo, hi):
        r = rows[t]
        # side 1 with probability sigmoid(g), g its log odds: one exp and one log1p
        g = (math.log(n1 / n0) + log_predictive(kdata, r, kstats, slot + 1, khyper)
             - log_predictive(kdata, r, kstats, slot, khyper))
        e = math.exp(-abs(g))
        s = fixed[t]
        if s < 0:
            state, u = next_uniform(state)
            p1 = 1.0 / (1.0 + e) if g >= 0.0 else e / (1.0 + e)
            s = 1 if u < p1 else 0
        # log p(s) = -log1p(exp(-g)) for side 1, -log1p(exp(g)) for side 0
        against = g if s == 0 else -g  # the log odds against the side taken
        log_q -= math.log1p(e) + (against if against > 0.0 else 0.0)
        codes[t] = s
        add(kdata, r, kstats, slot + s, khyper)
        if s == 1:
            n1 += 1.0
        else:
            n0 += 1.0
    return state, log_q, n0, n1


@njit(cache=True, _nrt=False)
def sequential_multiway(kdata, kstats, khyper, rows, fixed, pins, state, codes, logw, counts,
                        logf, reset, add, log_predictive, log_marginal):
    """Allocate ``rows`` in that order among ``m = len(pins)`` sides, side s in slot s seeded
    with point ``pins[s]``: side s with probability ``n_s f(x | X_s) / sum_a n_a f(x |
    X_a)``, drawn (``fixed[t] < 0``) or the given side ``fixed[t]`` (scored); the m-way
    :func:`sequential_move`.  Writes ``codes[t]``, the sides' sizes ``counts[s]`` and log
    marginals ``logf[s]`` (``logw``: scratch of length m); returns log q."""
    m = pins.shape[0]
    for a in range(m):
        reset(kstats, a, khyper)
        add(kdata, pins[a], kstats, a, khyper)
        counts[a] = 1.0
    log_q = 0.0
    for t in range(rows.shape[0]):
        r = rows[t]
        top = -np.inf
        for a in range(m):
            w = math.log(counts[a]) + log_predictive(kdata, r, kstats, a, khyper)
            logw[a] = w
            if w > top:
                top = w
        total = 0.0
        for a in range(m):
            logw[a] = math.exp(logw[a] - top)
            total += logw[a]
        s = fixed[t]
        if s < 0:
            state, u = next_uniform(state)
            u *= total
            s = m - 1
            acc = 0.0
            for a in range(m - 1):
                acc += logw[a]
                if u < acc:
                    s = a
                    break
        log_q += math.log(logw[s] / total)
        codes[t] = s
        add(kdata, r, kstats, s, khyper)
        counts[s] += 1.0
    for a in range(m):
        logf[a] = log_marginal(kstats, a, khyper)
    return log_q


@njit(cache=True, _nrt=False)
def first_members(labels, first):
    """``first[k]``: the smallest row of cluster k (``first`` filled with ``len(labels)``)."""
    for r in range(labels.shape[0]):
        k = labels[r]
        if r < first[k]:
            first[k] = r


def multiway_allocation(kern, rows, fixed, pins, seed):
    """``(sides, logq, counts, logf)`` of :func:`sequential_multiway` for the family kernel
    ``kern`` (its cached entry point, or the generic kernel)."""
    m = len(pins)
    kstats = kern.alloc(m)
    sides = np.empty(len(rows), dtype=np.int64)
    counts = np.zeros(m)
    logf = np.zeros(m)
    fn = (kern.entry_points or {}).get("sequential_multiway")
    extra = (() if fn is not None
             else (kern.reset, kern.add, kern.log_predictive, kern.log_marginal))
    logq = (fn or sequential_multiway)(
        kern.data, kstats, kern.hyper, np.ascontiguousarray(rows, dtype=np.int64),
        np.ascontiguousarray(fixed, dtype=np.int64), np.ascontiguousarray(pins, dtype=np.int64),
        np.uint64(seed), sides, np.empty(m), counts, logf, *extra)
    return sides, float(logq), counts, logf


#: slots between two sequential moves' statistics: a move updates its slots at every point,
#: and moves run on different threads, so their slots must not share cache lines (eight
#: doubles; adjacent slots made two threads slower than one)
SLOT_STRIDE = 16


@njit(cache=True, _nrt=False)
def sequential_lane(kdata, kstats, khyper, rows, start, fixed, pins, seeds, moves, codes,
                    logq, counts, logf, reset, add, log_predictive, log_marginal):
    """:func:`sequential_move` for the moves ``moves`` one after another (one thread's
    lane), move b in slots ``SLOT_STRIDE b`` and the next, its sides' sizes and log
    marginals written to ``counts[2b:2b + 2]`` and ``logf[2b:2b + 2]``."""
    for at in range(moves.shape[0]):
        b = moves[at]
        slot = SLOT_STRIDE * b
        _, lq, n0, n1 = sequential_move(kdata, kstats, khyper, rows, start[b], start[b + 1],
                                        fixed, pins[b, 0], pins[b, 1], slot, seeds[b], codes,
                                        reset, add, log_predictive)
        logq[b] = lq
        counts[2 * b] = n0
        counts[2 * b + 1] = n1
        logf[2 * b] = log_marginal(kstats, slot, khyper)
        logf[2 * b + 1] = log_marginal(kstats, slot + 1, khyper)


@njit(cache=True, parallel=True)
def sequential_moves(kdata, kstats, khyper, rows, start, fixed, pins, seeds, lanes,
                     lane_start, codes, logq, counts, logf, reset, add, log_predictive,
                     log_marginal):
    """:func:`sequential_lane` for every lane of moves (``lanes[lane_start[l]:
    lane_start[l + 1]]``, :func:`move_lanes`), one thread each (generic over the family's
    collapsed functions; built-in families call it from cached entry points)."""
    for lane in prange(lane_start.shape[0] - 1):
        sequential_lane(kdata, kstats, khyper, rows, start, fixed, pins, seeds,
                        lanes[lane_start[lane]:lane_start[lane + 1]], codes, logq, counts,
                        logf, reset, add, log_predictive, log_marginal)


def move_lanes(sizes, n_lanes):
    """``(lanes, lane_start)``: the moves dealt to ``n_lanes`` threads, largest first to the
    least loaded lane (moves differ in size by orders of magnitude, and a parallel loop over
    the moves themselves left one of two threads idle a third of the time).  Which thread
    runs a move does not change its result."""
    sizes = np.asarray(sizes, dtype=np.float64)
    n_lanes = int(max(1, min(n_lanes, len(sizes))))
    load = np.zeros(n_lanes)
    lane_of = np.empty(len(sizes), dtype=np.int64)
    for b in np.argsort(-sizes, kind="stable"):
        lane = int(np.argmin(load))
        lane_of[b] = lane
        load[lane] += sizes[b] + 1.0
    lanes = np.argsort(lane_of, kind="stable").astype(np.int64)
    lane_start = np.searchsorted(lane_of[lanes], np.arange(n_lanes + 1)).astype(np.int64)
    return lanes, lane_start


@njit(cache=True, parallel=True)
def rows_by_move(labels, move_of, side_of, pins):
    """The points of the sequential moves, grouped by move (a counting sort, in row order,
    parallel over chunks of rows): ``(rows, start, fixed)`` with move b's points other than
    its anchors ``pins[b]`` in ``rows[start[b]:start[b + 1]]`` and their current sides
    ``side_of[labels[r]]`` (-1 for a split) in ``fixed``; ``move_of[k]`` is the move of
    cluster k, or -1."""
    n_moves = pins.shape[0]
    n = labels.shape[0]
    n_chunks = max(1, min(64, n // 16384))
    counts = np.zeros((n_chunks, n_moves), dtype=np.int64)
    for c in prange(n_chunks):
        for r in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            b = move_of[labels[r]]
            if b >= 0 and r != pins[b, 0] and r != pins[b, 1]:
                counts[c, b] += 1
    # chunk c writes move b's rows from offset[c, b]: moves in order, chunks in order
    start = np.zeros(n_moves + 1, dtype=np.int64)
    offset = np.empty((n_chunks, n_moves), dtype=np.int64)
    for b in range(n_moves):
        at = start[b]
        for c in range(n_chunks):
            offset[c, b] = at
            at += counts[c, b]
        start[b + 1] = at
    rows = np.empty(start[n_moves], dtype=np.int64)
    fixed = np.empty(start[n_moves], dtype=np.int64)
    for c in prange(n_chunks):
        at = offset[c]
        for r in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            k = labels[r]
            b = move_of[k]
            if b >= 0 and r != pins[b, 0] and r != pins[b, 1]:
                rows[at[b]] = r
                fixed[at[b]] = side_of[k]
                at[b] += 1
    return rows, start, fixed


def sequential_allocation(kern, rows, start, fixed, pins, seeds, lanes=None):
    """``(sides, logq, counts, logf)`` of the sequential moves ``b`` (rows ``rows[start[b]:
    start[b + 1]]`` in that order, anchors ``pins[b]``, fixed sides ``fixed`` or -1 to draw,
    stream ``seeds[b]``) for the family kernel ``kern``: its cached entry point, or the
    generic :func:`sequential_moves`.  ``counts`` and ``logf`` hold the sides' sizes and log
    marginals (``2b``, ``2b + 1``); ``lanes``: :func:`move_lanes` (made here if None).  The
    caller chooses the thread count."""
    n_moves = len(start) - 1
    kstats = kern.alloc(SLOT_STRIDE * max(n_moves, 1))
    sides = np.empty(len(rows), dtype=np.int64)
    logq = np.zeros(n_moves)
    counts = np.zeros(2 * n_moves)
    logf = np.zeros(2 * n_moves)
    fn = (kern.entry_points or {}).get("sequential_moves")
    extra = (() if fn is not None
             else (kern.reset, kern.add, kern.log_predictive, kern.log_marginal))
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    fixed = np.ascontiguousarray(fixed, dtype=np.int64)
    start = np.ascontiguousarray(start, dtype=np.int64)
    if lanes is None:
        lanes = move_lanes(np.diff(start), numba.get_num_threads())
    (fn or sequential_moves)(kern.data, kstats, kern.hyper, rows, start, fixed,
                             np.ascontiguousarray(pins, dtype=np.int64),
                             np.asarray(seeds, dtype=np.uint64), lanes[0], lanes[1], sides,
                             logq, counts, logf, *extra)
    return sides, logq, counts, logf


@njit(cache=True, _nrt=False)
def collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels, counts, seeds,
                   groups, logw, add, remove, log_predictive):
    """Restricted collapsed Gibbs over the points of the groups ``groups``, one after another
    (one thread's lane; see :func:`collapsed_groups`).

    Group g's points ``rows[start[g]:start[g + 1]]`` are visited in that order; each point
    that is not alone in its cluster is taken out of it and drawn among the group's clusters
    ``members[mstart[g]:mstart[g + 1]]`` with probability ``∝ N_{k,-i} f(x_i | X_{k,-i})``
    (the collapsed predictive of the family's slot k = cluster k), with stream ``seeds[g]``.
    A point alone in its cluster stays: the update keeps the number of clusters, and is
    Gibbs sampling of the posterior restricted to partitions with that many clusters, which
    leaves the posterior itself invariant.
    """
    for at in range(groups.shape[0]):
        g = groups[at]
        state = seeds[g]
        lo_m = mstart[g]
        m = mstart[g + 1] - lo_m
        for t in range(start[g], start[g + 1]):
            i = rows[t]
            k = labels[i]
            c = counts[k]
            if c <= 1:
                continue
            remove(kdata, i, kstats, k, khyper)
            counts[k] = c - 1
            for a in range(m):
                kk = members[lo_m + a]
                logw[a] = math.log(counts[kk]) + log_predictive(kdata, i, kstats, kk, khyper)
            state, u = next_uniform(state)
            a = categorical_from_logs(logw, m, u)
            kk = members[lo_m + a]
            add(kdata, i, kstats, kk, khyper)
            counts[kk] += 1
            labels[i] = kk


@njit(cache=True, parallel=True)
def collapsed_groups(kdata, kstats, khyper, rows, start, members, mstart, labels, counts,
                     seeds, lanes, lane_start, logw, add, remove, log_predictive):
    """:func:`collapsed_lane` for every lane of groups (``lanes[lane_start[l]:lane_start[l +
    1]]``, :func:`move_lanes`), one thread each: groups share no cluster and no point, so the
    lanes touch disjoint slots, labels and counts, and the result does not depend on the
    thread count (generic over the family's collapsed functions; built-in families call it
    from cached entry points).  ``logw`` holds one row of scratch per lane."""
    for lane in prange(lane_start.shape[0] - 1):
        collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels, counts,
                       seeds, lanes[lane_start[lane]:lane_start[lane + 1]], logw[lane], add,
                       remove, log_predictive)
