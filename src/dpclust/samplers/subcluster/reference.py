"""NumPy references of the sub-cluster sampler's compiled passes: the data pass and the launch
pass, for families without a :class:`~dpclust.families.base.PassKernel` (same distribution as
the numba passes, different random numbers; in-process only), and for the tests.
"""

from __future__ import annotations

import numpy as np

from ...families.base import concatenate
from ...kernels import gibbs as _kernels
from ...kernels.streams import point_keys
from .state import LaunchResult, PassResult


def _reference_pass(rng, fam, X, theta, thetabar, spec, labels, sub) -> PassResult:
    """The data pass in NumPy, for families without a :class:`PassKernel` (same distribution
    as the numba pass, different random numbers; in-process only)."""
    n = len(labels)
    K = len(spec.log_pi)
    update, rand_c, rand_p = spec.update, spec.rand_c, spec.rand_p
    log_pi, log_pibar = spec.log_pi, spec.log_pibar
    fresh = spec.fresh.astype(bool)
    group_of = spec.group_of
    if update:
        new = np.asarray(labels, dtype=np.int64)
        if update >= 2:
            logp = fam.log_likelihood(X, theta) + log_pi[None, :]
            logp[group_of[labels][:, None] != group_of[None, :]] = -np.inf
            drawn = np.empty(n, dtype=np.int64)
            _kernels.sample_rows_from_logs(logp, rng.random(n), drawn)
            is_anchor = np.zeros(n, dtype=bool)
            is_anchor[spec.anchors[spec.anchors >= 0]] = True
            new = np.where(is_anchor, new, drawn)
    if update == 3:  # labels only: every sub-label 0, as in the compiled pass
        s = np.zeros(n, dtype=np.int8)
        lsub = np.zeros(n)
    elif update:
        ll_bar = fam.log_likelihood(X, thetabar)
        rows = np.arange(n)
        l0 = ll_bar[rows, 2 * new]
        l1 = ll_bar[rows, 2 * new + 1]
        a0 = l0 + log_pibar[new, 0]
        a1 = l1 + log_pibar[new, 1]
        s = (np.log(rng.random(n)) < a1 - np.logaddexp(a0, a1))
        s = np.where(fresh[new], rng.random(n) < 0.5, s).astype(np.int8)
        lsub = np.where(fresh[new], 0.0, np.where(s == 1, l1, l0))
    else:
        new = np.asarray(labels, dtype=np.int64)
        s = np.asarray(sub, dtype=np.int8)
        lsub = np.zeros(n)
    slots = 2 * new + s
    codes = s.copy()
    stats = fam.stats(X, slots, 2 * K)
    loglik = np.bincount(slots, weights=lsub, minlength=2 * K)
    members = np.flatnonzero(new == rand_c) if rand_c >= 0 else np.zeros(0, dtype=np.int64)
    side = (rng.random(len(members)) >= rand_p).astype(np.int64)
    codes[members] += (2 * side).astype(np.int8)
    halves = fam.stats(fam.subset(X, members), side, 2) if len(members) else fam.empty_stats(2)
    all_slots = np.concatenate([slots, 2 * K + side])
    all_points = np.concatenate([np.arange(n), members])
    counts = np.bincount(all_slots, minlength=2 * K + 2)
    first = np.full(2 * K + 2, -1, dtype=np.int64)
    member = np.full(2 * K + 2, -1, dtype=np.int64)
    perm = rng.permutation(len(all_slots))
    member[all_slots[perm]] = all_points[perm]
    rev = np.arange(len(all_slots))[::-1]
    first[all_slots[rev]] = all_points[rev]
    # the key of a uniform member of n points: the smallest of n uniforms, Beta(1, n)
    key = np.where(counts > 0, rng.beta(1.0, np.maximum(counts, 1)), 1.0)
    return PassResult(new, codes, concatenate(stats, halves), counts, first, member, key,
                      loglik)


def _reference_launch(rng, fam, X, params, spec, labels, codes=None) -> LaunchResult:
    """The launch pass in NumPy, for families without a :class:`PassKernel` (same
    distribution as the numba pass, different random numbers; in-process only)."""
    labels = np.asarray(labels, dtype=np.int64)
    K = len(spec.block_of)
    B = spec.n_moves
    n = len(labels)
    blocks = spec.block_of[labels]
    moving = np.flatnonzero(blocks >= 0)
    pins = np.asarray(spec.pins).reshape(-1, 2)
    b = blocks[moving]
    pin_side = np.where(moving == pins[b, 0], 0, np.where(moving == pins[b, 1], 1, -1))
    if spec.stages is not None:  # the points of this stage (pinned ones with the first)
        u3 = point_keys(np.uint64(spec.stage_key), moving.astype(np.int64))
        lo, hi = spec.stages[b, 0], spec.stages[b, 1]
        inside = np.where(pin_side >= 0, lo == 0.0, (u3 >= lo) & (u3 < hi))
        moving, b, pin_side = moving[inside], b[inside], pin_side[inside]
    codes = np.zeros(n, dtype=np.int8) if codes is None else np.array(codes)
    logq = np.zeros(2 * B)
    s = np.zeros(len(moving), dtype=np.int64)
    if len(moving):
        ll = fam.log_likelihood(fam.subset(X, moving), params)  # (m, 2B)
        a0 = ll[np.arange(len(b)), 2 * b] + spec.log_w[b, 0]
        a1 = ll[np.arange(len(b)), 2 * b + 1] + spec.log_w[b, 1]
        lse = np.logaddexp(a0, a1)
        fixed = spec.side_of[labels[moving]] if spec.mode >= 1 else np.full(len(b), -1)
        pinned = pin_side >= 0
        drawn = (rng.random(len(b)) < np.exp(a1 - lse)).astype(np.int64)
        s = np.where(fixed >= 0, fixed, np.where(pinned, pin_side, drawn))
        if spec.mode >= 1:
            lp = np.where(pinned, 0.0, np.where(s == 0, a0 - lse, a1 - lse))
            lq = np.where(pinned, 0.0, np.where(s == 0, a1 - lse, a0 - lse))
            logq = (np.bincount(2 * b, weights=lp, minlength=2 * B)
                    + np.bincount(2 * b + 1, weights=lq, minlength=2 * B))
            codes[moving] = s
    counted = np.ones(len(moving), dtype=bool) if spec.mode == 0 else \
        spec.side_of[labels[moving]] < 0
    side_rows = moving[counted]
    side_slot = 2 * b[counted] + s[counted]
    stats = fam.stats(fam.subset(X, side_rows), side_slot, 2 * B) if len(side_rows) \
        else fam.empty_stats(2 * B)
    slots = np.concatenate([labels, K + side_slot]) if spec.mode == 2 else K + side_slot
    points = np.concatenate([np.arange(n), side_rows]) if spec.mode == 2 else side_rows
    counts = np.bincount(slots, minlength=K + 2 * B)
    first = np.full(K + 2 * B, -1, dtype=np.int64)
    member = np.full(K + 2 * B, -1, dtype=np.int64)
    rev = np.arange(len(slots))[::-1]
    first[slots[rev]] = points[rev]
    perm = rng.permutation(len(slots))
    member[slots[perm]] = points[perm]
    # keys of the members: the smallest of that many uniforms, as in the compiled pass
    key = np.where(counts > 0, rng.beta(1.0, np.maximum(counts, 1)), 1.0)
    return LaunchResult(labels, codes, stats, counts, first, member, logq, key)
