"""The paper's moves from statistics alone: the exact random split/merge pair (a Beta-binomial
split of a cluster, or a random pair merged) and, **approximate**, the sub-cluster splits of
eq. 21 and the pairwise merges ("reverse" or "practical") of
:meth:`~dpclust.samplers.subcluster.SubclusterSplitMerge.approximate` (the module notes of
:mod:`dpclust.samplers.subcluster` say why the latter are not exact).

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models using
    sub-cluster splits. NIPS (eq. 21).
Dinari, O., Yu, A., Freifeld, O. & Fisher III, J. W. (2019). Distributed MCMC inference in
    Dirichlet process mixture models using Julia. CCGrid (the practical merge).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from ...families.base import concatenate, take
from .clusters import _new_cluster, merge_into
from .ratios import _log_beta, _log_split_target, _split_log_ratio


def choose_random_split(cfg, rng, K):
    """``(rand_c, rand_p)``: the cluster whose random split is proposed (-1: none, or a
    merge) and the Beta(a, a) proportion of its halves, chosen before the data pass (which
    draws the halves and keeps every cluster).  One uniform is drawn whatever the
    configuration."""
    rand_c, rand_p = -1, 0.5
    propose_split = rng.random() < 0.5
    if cfg.random_split_merge and propose_split:
        rand_c = int(rng.integers(K))
        rand_p = float(rng.beta(cfg.split_concentration, cfg.split_concentration))
    return rand_c, rand_p


def approximate_moves(cfg, rng, fam, run, clusters, rand_c, alpha):
    """Step 3 of an iteration: the moves made from the pass's statistics alone, at most one
    per cluster (the random split or merge, the sub-cluster splits, the pairwise merges).
    Changes ``clusters`` in place; returns ``(n_splits, n_merges)``."""
    K = len(clusters)
    touched = np.zeros(K, dtype=bool)
    n_splits = n_merges = 0
    if cfg.random_split_merge:
        if rand_c >= 0:
            n_splits += random_split(cfg, rng, fam, run, clusters, rand_c, alpha, touched)
        elif K >= 2:
            n_merges += random_merge(cfg, rng, fam, clusters, alpha, touched)
    if cfg.subcluster_splits:
        n_splits += subcluster_splits(cfg, rng, fam, run, clusters, alpha, touched)
    if cfg.merges != "none":
        n_merges += pairwise_merges(cfg, rng, fam, clusters, alpha, touched)
    return n_splits, n_merges


def random_split(cfg, rng, fam, run, clusters, c, alpha, touched):
    """Exact random split of cluster c into the pass's two random halves.

    Proposal probability of the unordered split {L, R}: ``2 B(a + N_L, a + N_R) /
    (K B(a, a))``; its reverse merge picks that pair among ``K + 1`` clusters with
    probability ``1 / C(K + 1, 2)``.
    """
    K = len(touched)
    a = cfg.split_concentration
    K_slot = 2 * K
    n_l, n_r = int(run.counts[K_slot]), int(run.counts[K_slot + 1])
    if n_l == 0 or n_r == 0:
        return 0
    halves = take(run.stats, [K_slot, K_slot + 1])
    log_target = _log_split_target(fam, take(halves, [0]), take(halves, [1]),
                                   clusters[c].stats, n_l, n_r, alpha)
    log_q_split = math.log(2.0) - math.log(K) + _log_beta(a + n_l, a + n_r) - _log_beta(a, a)
    log_q_merge = -math.log(math.comb(K + 1, 2))
    if math.log(rng.random()) >= log_target + log_q_merge - log_q_split:
        return 0
    clusters[c] = _new_cluster(run, [4 * c, 4 * c + 1], take(halves, [0]), K_slot)
    clusters.append(_new_cluster(run, [4 * c + 2, 4 * c + 3], take(halves, [1]),
                                 K_slot + 1))
    touched[c] = True
    return 1


def random_merge(cfg, rng, fam, clusters, alpha, touched):
    """Exact merge of a random pair; the reverse is the random split above."""
    K = len(clusters)
    a = cfg.split_concentration
    i, j = sorted(int(v) for v in rng.choice(K, size=2, replace=False))
    ci, cj = clusters[i], clusters[j]
    both = fam.combine(ci.stats, cj.stats)
    log_target = -_log_split_target(fam, ci.stats, cj.stats, both, ci.n, cj.n, alpha)
    log_q_merge = -math.log(math.comb(K, 2))
    log_q_split = (math.log(2.0) - math.log(K - 1) + _log_beta(a + ci.n, a + cj.n)
                   - _log_beta(a, a))
    if math.log(rng.random()) >= log_target + log_q_split - log_q_merge:
        return 0
    merge_into(cfg, clusters, i, j, both)
    touched[i] = touched[j] = True
    return 1


def _ready(cfg, c) -> bool:
    """Whether cluster c's sub-clusters have burned in (``burn_in``, ``split_delay``)."""
    if c.sub is None or c.age < cfg.split_delay:
        return False
    if cfg.burn_in == "fixed":
        return True
    now, before = c.loglik
    return c.age >= cfg.max_split_delay or not now > before


def subcluster_splits(cfg, rng, fam, run, clusters, alpha, touched):
    """Split each ready cluster into its sub-clusters with eq. 21 (conjugate form); the
    ratios of all ready clusters are computed in one batch."""
    ready = []
    for k in range(len(touched)):
        c = clusters[k]
        if touched[k] or c is None or not _ready(cfg, c):
            continue
        n_sub = fam.count(c.sub)
        if n_sub[0] == 0 or n_sub[1] == 0:
            if cfg.reseed_after is not None and c.n > 1:
                # the sub-clusters collapsed into one: they propose nothing
                c.restart_subclusters()
            continue
        ready.append(k)
    if not ready:
        return 0
    subs = concatenate(*(clusters[k].sub for k in ready))
    whole = concatenate(*(clusters[k].stats for k in ready))
    logf_sub = fam.log_marginal(subs).reshape(-1, 2)
    logf = fam.log_marginal(whole)
    n_sub = fam.count(subs).reshape(-1, 2)
    # Chang & Fisher eq. 21, conjugate form: the target ratio of the split
    log_h = _split_log_ratio(logf_sub[:, 0], logf_sub[:, 1], logf, n_sub[:, 0],
                             n_sub[:, 1], alpha)
    accepted = 0
    for a, k in enumerate(ready):
        c = clusters[k]
        if math.log(rng.random()) >= log_h[a]:
            improved = log_h[a] > c.best
            c.best = max(c.best, float(log_h[a]))
            if cfg.reseed_after is None:
                continue
            collapsed = min(n_sub[a]) <= 1 and c.n > 3
            stuck = (c.age >= cfg.split_delay + int(cfg.reseed_after)
                     and not improved)
            if collapsed or stuck:
                # a split the target keeps rejecting: start its sub-clusters afresh
                c.restart_subclusters()
            continue
        keys0 = [key for key in c.keys if key % 2 == 0]
        keys1 = [key for key in c.keys if key % 2 == 1]
        clusters[k] = _new_cluster(run, keys0, take(c.sub, [0]), 2 * k)
        clusters.append(_new_cluster(run, keys1, take(c.sub, [1]), 2 * k + 1))
        touched[k] = True
        accepted += 1
    return accepted


def pairwise_merges(cfg, rng, fam, clusters, alpha, touched):
    """Each pair once, in random order, at most one merge per cluster per iteration; the
    merged cluster's sub-clusters are the two old clusters.  ``"reverse"``: accepted with
    the target ratio, the reverse of the sub-cluster split; ``"practical"``: with the
    ratio of DPMMSubClusters.jl.  All pairs are scored in one batch."""
    live = [k for k in range(len(touched)) if not touched[k] and clusters[k] is not None]
    if len(live) < 2:
        return 0
    first, second = np.triu_indices(len(live), 1)
    stats = concatenate(*(clusters[k].stats for k in live))
    n = fam.count(stats)
    logf = fam.log_marginal(stats)
    both = fam.combine(take(stats, first), take(stats, second))
    logf_both = fam.log_marginal(both)
    n_l, n_r = n[first], n[second]
    n_m = n_l + n_r
    if cfg.merges == "reverse":
        # minus the split target ratio (Mathematics §3)
        log_h = -_split_log_ratio(logf[first], logf[second], logf_both, n_l, n_r, alpha)
    else:
        a2 = alpha / 2.0
        log_h = (-math.log(alpha) + math.lgamma(alpha) - 2 * math.lgamma(a2)
                 + gammaln(n_m) - gammaln(n_m + alpha)
                 + gammaln(n_l + a2) - gammaln(n_l) + gammaln(n_r + a2) - gammaln(n_r)
                 + logf_both - logf[first] - logf[second])
    accepted = 0
    for p in rng.permutation(len(first)):
        i, j = live[first[p]], live[second[p]]
        if touched[i] or touched[j]:
            continue
        if math.log(rng.random()) < log_h[p]:
            merge_into(cfg, clusters, i, j, take(both, [p]))
            touched[i] = touched[j] = True
            accepted += 1
    return accepted
