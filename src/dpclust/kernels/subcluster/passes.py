"""The sub-cluster sampler's data pass and relabelling pass (numba).

The data pass is the only place where the sub-cluster sampler touches every point.  It is one
pure function of (a chunk of the data, the broadcast parameters, a random stream) and returns
the chunk's new labels, sub-labels and per-slot sufficient statistics; the caller reduces the
chunks in a fixed order.  A chunk's random stream is a SplitMix64 sequence seeded from the
iteration's key and the chunk's index (:func:`~dpclust.kernels.streams.chunk_seeds`), so
that the result for a given ``random_state`` does not depend on how many threads (or workers)
run the chunks.

Slots of the statistics, for K clusters: ``2k + s`` for sub-cluster s of cluster k, and
``2K``/``2K + 1`` for the two halves of the random split proposal (Mathematics §3).

:func:`chunk_pass` is one loop over a chunk's points, longer than 100 lines on purpose: the
per-point state (the random stream, the cached candidates of the point's super-cluster, the
block's scores) lives in local variables of the sampler's hottest compiled loop, and splitting
the loop body into helpers that pass that state back and forth would change its compiled code.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..gibbs import _SKIP
from ..streams import next_uniform
from .blocks import _block_scratch, _count_member, _flush_block, _scores, _sort_block


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


@njit
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


@njit
def chunk_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
               group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
               lo, hi, seed, labels_out, code_out, acc, cnt, first, rkey, res, ll,
               log_likelihood, accumulate, block, score_block, accumulate_block):
    """One chunk (points ``lo .. hi - 1``) of the sub-cluster data pass.

    Long on purpose: the hot loop of the default sampler, one compiled pass whose
    per-point draw, scoring and accumulation share their buffers (split, numba would pass
    them through calls for every point).

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


@njit(parallel=True)
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
