"""The sub-cluster sampler's data pass: restricted Gibbs given sampled weights and parameters
(instantiated, parallel over chunks of points, accepted as a whole with ``w(z') / w(z)``), or
restricted collapsed Gibbs over random groups of clusters (the module notes of
:mod:`dpclust.samplers.subcluster` say why each is exact).

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models using
    sub-cluster splits. NIPS (eqs. 9 and 15: the labels and sub-labels; Algorithm 1: the
    super-clusters).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numba
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ...families.base import concatenate, log_dirichlet, take
from ...kernels import gibbs as _kernels
from ...kernels import subcluster as _sk
from .._partitioned import PassSpec, threads
from .ratios import PASS_WEIGHT_OFFSET, _log_pass_weight
from .reference import _reference_pass
from .schedule import collapsed_here, data_side
from .slots import _pair_rows, _pairs_combined, _with_rows
from .state import PassResult


class PassDraws(NamedTuple):
    """What an iteration's data pass is drawn given: the clusters' statistics and counts, the
    clusters' log weights and parameters (``theta`` None: the collapsed pass), the
    sub-clusters' (``thetabar`` None: labels only), which clusters' sub-clusters start
    afresh (``fresh``), the super-clusters (``groups``) and the pass's ``update`` (see
    :func:`~dpclust.kernels.subcluster.chunk_pass`)."""

    cluster_stats: Any
    counts: np.ndarray
    log_pi: np.ndarray
    theta: Any
    log_pibar: np.ndarray
    thetabar: Any
    fresh: np.ndarray
    groups: tuple
    update: int
    collapsed: bool


def draw_parameters(cfg, rng, model, state) -> PassDraws:
    """Step 1 of an iteration: weights ``pi ~ Dir(N_k - 1 + epsilon)`` and parameters given
    the labels (none for the collapsed pass), the sub-clusters' where the approximate moves
    need them (seeds for new ones), and the super-clusters."""
    fam = model.family
    alpha = state.alpha
    K = len(state.age)
    sub_stats = state.sub_stats
    cluster_stats = _pairs_combined(fam, sub_stats, K)
    counts = fam.count(cluster_stats)
    update = (2 if cfg._subclusters else 3) if cfg.restricted_gibbs else 1
    collapsed = update == 3 and collapsed_here(cfg, model)
    if collapsed:
        log_pi, theta = np.zeros(K), None
    else:
        log_pi = log_dirichlet(rng, counts - 1.0 + PASS_WEIGHT_OFFSET)
        theta = fam.sample_posterior(cluster_stats, rng)
    if update == 3:  # labels only: no sub-cluster is drawn, seeded or scored
        log_pibar = np.zeros((K, 2))
        thetabar = None
        fresh = np.zeros(K, dtype=bool)
    else:
        sub_counts = fam.count(sub_stats).reshape(K, 2)
        log_pibar = log_dirichlet(rng, sub_counts + alpha / 2.0)
        thetabar = fam.sample_posterior(sub_stats, rng)
        fresh = state.age == 0
    if fresh.any():
        # new sub-clusters start from seeds: each point takes the more likely one
        idx = np.flatnonzero(fresh)
        seeds = subcluster_seeds(cfg, rng, model, cluster_stats, state.anchors, idx)
        rows = _pair_rows(idx)
        thetabar = _with_rows(thetabar, rows, seeds)
        log_pibar[fresh] = math.log(0.5)
    groups = super_clusters(cfg, rng, fam, theta, K)
    return PassDraws(cluster_stats, counts, log_pi, theta, log_pibar, thetabar, fresh, groups,
                     update, collapsed)


def subcluster_seeds(cfg, rng, model, cluster_stats, anchors, idx):
    """Seed parameters (rows ``2j``, ``2j + 1``) for the new sub-clusters of clusters
    ``idx``: the family's structured split, or a point seed (the posterior given one
    random member against the posterior given the whole cluster), half the time each
    under ``seeding="mixed"``."""
    fam = model.family
    mode = cfg.seeding
    use_point = (np.full(len(idx), mode == "point") if mode != "mixed"
                 else rng.random(len(idx)) < 0.5)
    seeds = fam.seed_subclusters(take(cluster_stats, idx), rng)
    if use_point.any():
        pick = np.flatnonzero(use_point)
        rows = data_side(cfg, model).rows_of(anchors[idx[pick]])
        one = fam.stats(rows, np.arange(len(pick)), len(pick))
        near = fam.sample_posterior(one, rng)
        whole = fam.sample_posterior(take(cluster_stats, idx[pick]), rng)
        seeds = _with_rows(seeds, 2 * pick, near)
        seeds = _with_rows(seeds, 2 * pick + 1, whole)
    return seeds


def super_clusters(cfg, rng, fam, theta, K):
    """``(group_of, group_start, group_members)``: one group, or the paper's Algorithm 1."""
    if not cfg.super_clusters or K == 1 or theta is None:
        return (np.zeros(K, dtype=np.int64), np.array([0, K], dtype=np.int64),
                np.arange(K, dtype=np.int64))
    div = np.asarray(fam.divergence(theta), dtype=np.float64)
    logits = -np.maximum(div, 0.0)
    np.fill_diagonal(logits, 0.0)
    pick = np.empty(K, dtype=np.int64)
    _kernels.sample_rows_from_logs(logits, rng.random(K), pick)
    graph = csr_matrix((np.ones(K), (np.arange(K), pick)), shape=(K, K))
    n_groups, group_of = connected_components(graph, directed=True, connection="weak")
    order = np.argsort(group_of, kind="stable")
    start = np.searchsorted(group_of[order], np.arange(n_groups + 1))
    return group_of.astype(np.int64), start.astype(np.int64), order.astype(np.int64)


def accepted_pass(cfg, rng, model, state, draws: PassDraws, rand_c, rand_p):
    """Step 2 of an iteration: the data pass, accepted as a whole with ``w(z') / w(z)``
    (anchors stay put; :func:`~dpclust.samplers.subcluster.ratios._log_pass_weight`), or
    the collapsed pass, then a pass that counts its labels (and draws the anchors).
    Returns ``(PassResult, accepted)``."""
    update = draws.update
    if draws.collapsed:
        state = state._replace(labels=collapsed_pass(cfg, rng, model, state))
        update = 0
    K = len(state.age)
    run = data_pass(cfg, rng, model, state, draws, rand_c, rand_p, update)
    new_counts = run.counts[:2 * K].reshape(K, 2).sum(axis=1)
    prior, alpha = model.partition_prior, state.alpha
    log_r = (_log_pass_weight(new_counts, prior, alpha)
             - _log_pass_weight(draws.counts, prior, alpha)) if update else 0.0
    accepted = log_r >= 0 or math.log(rng.random()) < log_r
    if not accepted:
        run = data_pass(cfg, rng, model, state, draws, rand_c, rand_p, 0)
    return run, accepted


def data_pass(cfg, rng, model, state, draws: PassDraws, rand_c, rand_p, update) -> PassResult:
    """One data pass of ``update`` (0 keeps the labels and counts them) given ``draws``."""
    theta, thetabar = draws.theta, draws.thetabar
    K = len(draws.log_pi)
    data = data_side(cfg, model)
    group_of, group_start, group_members = draws.groups
    # labels only (thetabar None): the K clusters' parameters, no sub-cluster slots;
    # none to keep the labels after a collapsed pass (one cluster's, never read)
    if theta is None:
        theta = model.family.point_params(take(state.sub_stats, [0]))
    comps = theta if thetabar is None else concatenate(theta, thetabar)
    kparams = None if data.pass_kernel is None else data.pack(comps)
    spec = PassSpec(kparams, draws.log_pi, draws.log_pibar, draws.fresh.astype(np.uint8),
                    group_of, group_start, group_members,
                    np.ascontiguousarray(state.anchors, dtype=np.int64), int(update),
                    int(rand_c), float(rand_p), int(rng.integers(2**63)), 2 * K + 2)
    if data.pass_kernel is None:
        return _reference_pass(rng, model.family, model.X, theta, thetabar, spec,
                               state.labels, state.sublabels)
    return run_pass(rng, model, data, spec, state.labels, state.sublabels)


def run_pass(rng, model, data, spec, labels, sub) -> PassResult:
    """One pass of ``spec`` over the data; returns its labels, codes and statistics."""
    if data.pass_kernel is None:
        return _reference_pass(rng, model.family, model.X, None, None, spec, labels, sub)
    labels_out, codes, part = data.run_pass(spec, labels, sub)
    K = (spec.n_slots - 2) // 2
    return PassResult(labels_out, codes, data.unpack(part.acc), part.cnt, part.first,
                      part.res, part.rkey, part.ll[:2 * K])


def join_weights(model, alpha) -> np.ndarray:
    """``log_join[c]``: the partition prior's log weight of a point joining a cluster of c
    others (``log c`` for the Dirichlet process, ``log(c - d)`` for Pitman-Yor), for c up to
    the number of points."""
    log_join, _ = model.partition_prior.log_seat_weights(model.n_samples, alpha, 1)
    return np.ascontiguousarray(log_join, dtype=np.float64)


def collapsed_pass(cfg, rng, model, state):
    """The labels after one restricted collapsed Gibbs pass (``data_pass``), over random
    groups of clusters in parallel (``pass_groups``)."""
    kern = model.kernel
    labels = np.array(state.labels, dtype=np.int64)
    K = len(state.age)
    P = (int(cfg.pass_groups) if cfg.pass_groups is not None
         else 1 + int(rng.integers(2)))
    group = rng.integers(P, size=K)
    size = np.bincount(group, minlength=P)
    move_of = np.where(size[group] > 1, group, -1).astype(np.int64)
    pins = np.full((P, 2), -1, dtype=np.int64)
    members = np.argsort(group, kind="stable").astype(np.int64)
    mstart = np.searchsorted(group[members], np.arange(P + 1)).astype(np.int64)
    seeds = rng.integers(2**63, size=(2, P)).astype(np.uint64)
    kstats = (kern.alloc_by_point or kern.alloc)(K)
    counts = np.zeros(K, dtype=np.int64)
    rebuild, fns = _kernels.dispatch(kern, "rebuild_stats")
    rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
    with threads(cfg.n_threads, len(labels)):
        rows, start, fixed = _sk.rows_by_move(labels, move_of, np.zeros(K, dtype=np.int64),
                                              pins)
        lanes = _sk.move_lanes(np.diff(start) * np.maximum(size, 1),
                               numba.get_num_threads())
        _sk.shuffle_moves(rows, fixed, start, seeds[0], *lanes)
        fn = (kern.entry_points or {}).get("collapsed_groups")
        batched = kern.log_predictives is not None
        extra = (() if fn is not None else
                 (kern.add, kern.remove, kern.log_predictive,
                  kern.log_predictives if batched else _sk.no_log_predictives))
        (fn or _sk.collapsed_groups)(kern.data, kstats, kern.hyper, rows, start, members,
                                     mstart, labels, counts, seeds[1], lanes[0], lanes[1],
                                     np.empty((len(lanes[1]) - 1, max(K, 1))),
                                     join_weights(model, state.alpha), batched, *extra)
    return labels
