"""Collapsed Gibbs sampling of DP mixtures (Neal 2000, algorithm 3).

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
    JCGS 9(2), algorithm 3.
Paisley, J. (2015). Lecture notes on DP mixtures: the marginalised sampler.
Mathematics §2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..kernels import gibbs as _kernels
from .base import MixtureModel, StepInfo, initial_labels, relabel


class GibbsState(NamedTuple):
    """Collapsed state: the partition and alpha (parameters are integrated out).

    ``cache`` holds the family's per-cluster statistics (kernel slots, slot k = cluster k,
    free slots in the prior state) and the number of steps since they were last rebuilt
    from scratch; it is derived from ``labels`` and may be dropped (``cache=None``).
    """

    labels: np.ndarray
    alpha: float
    cache: tuple | None = None


@dataclass(frozen=True)
class CollapsedGibbs:
    """Collapsed Gibbs sampler: each point in turn is reassigned given all the others.

    Parameters
    ----------
    random_scan : bool, default=True
        Visit the points in a fresh random order each sweep (else in index order).
    rebuild_every : int, default=20
        Recompute the cluster statistics from scratch every this many steps, so that the
        rounding of rank-one updates and downdates never accumulates.

    Notes
    -----
    One step is one sweep over all points.  Cluster statistics live in numba arrays and are
    updated in O(d^2) per move for Gaussians (rank-one Cholesky updates).
    """

    random_scan: bool = True
    rebuild_every: int = 20
    name = "gibbs"
    summary = "collapsed Gibbs, one point at a time (Neal 2000, algorithm 3)"
    #: partition priors it fits: every prior of :mod:`dpclust.priors` (it reads the seating
    #: weights and split ratios of the prior's contract)
    priors = None
    #: the family's face it reads (a collapsed form), and whether it is exact MCMC
    needs = "collapsed"
    is_exact = True

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> GibbsState:
        return GibbsState(initial_labels(rng, model.n_samples, labels, n_clusters), float(alpha))

    def step(self, rng, state: GibbsState, model: MixtureModel):
        kern = model.kernel
        n = model.n_samples
        labels = np.array(state.labels, dtype=np.int64)
        n_clusters = int(labels.max()) + 1
        if state.cache is None or state.cache[1] >= self.rebuild_every:
            kstats = _rebuild(kern, labels, max(16, 2 * n_clusters + 2))
            age = 0
        else:
            kstats = tuple(a.copy() for a in state.cache[0])
            age = state.cache[1]
        capacity = len(kstats[0])
        counts = np.zeros(capacity, dtype=np.int64)
        counts[:n_clusters] = np.bincount(labels, minlength=n_clusters)
        order = rng.permutation(n) if self.random_scan else np.arange(n)
        uniforms = rng.random(n)
        log_join, log_new = model.seat_tables(state.alpha, n_clusters)
        sweep, sweep_fns = _kernels.dispatch(kern, "collapsed_sweep")
        t = 0
        while True:
            used = counts > 0
            ids = np.flatnonzero(used)
            active = np.zeros(capacity, dtype=np.int64)
            where = np.zeros(capacity, dtype=np.int64)
            active[:len(ids)] = ids
            where[ids] = np.arange(len(ids))
            free = np.zeros(capacity, dtype=np.int64)
            free_ids = np.flatnonzero(~used)[::-1]
            free[:len(free_ids)] = free_ids
            sizes = np.array([len(ids), len(free_ids)], dtype=np.int64)
            logw = np.empty(capacity + 1)
            t = sweep(kern.data, kstats, kern.hyper, labels, counts, log_join, active, where,
                      free, sizes, order, uniforms, log_new, t, logw, *sweep_fns)
            if t >= n:
                break
            if sizes[0] >= len(log_new):  # more clusters than the prior's table covers
                log_join, log_new = model.seat_tables(state.alpha, 2 * len(log_new))
                continue
            kstats = _grow(kern, kstats, 2 * capacity)
            counts = np.concatenate([counts, np.zeros(capacity, dtype=np.int64)])
            capacity *= 2
        n_active = int(sizes[0])
        sum_log_marginals, fns = _kernels.dispatch(kern, "sum_log_marginals")
        log_lik = sum_log_marginals(kstats, kern.hyper, active, n_active, *fns)
        sizes_k = counts[active[:n_active]]
        labels, old_ids = relabel(labels)
        # slot k = cluster k: occupied slots first in label order, then the free ones
        perm = np.concatenate([old_ids, np.flatnonzero(counts == 0)])
        kstats = tuple(a[perm] for a in kstats)
        alpha = model.update_alpha(rng, state.alpha, n_active)
        log_joint = model.partition_prior.log_eppf(sizes_k, alpha) + log_lik
        return (GibbsState(labels, alpha, (kstats, age + 1)),
                StepInfo(log_joint, n_active, alpha, log_likelihood=float(log_lik)))


def _rebuild(kern, labels, capacity):
    kstats = kern.alloc(capacity)
    counts = np.zeros(capacity, dtype=np.int64)
    rebuild, fns = _kernels.dispatch(kern, "rebuild_stats")
    rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
    return kstats


def _grow(kern, kstats, capacity):
    """Copy the slots into a larger allocation; the new slots are reset to the prior."""
    old = len(kstats[0])
    new = kern.alloc(capacity)
    for k in range(old, capacity):
        kern.reset(new, k, kern.hyper)
    for a, b in zip(new, kstats):
        a[:old] = b
    return new
