"""Collapsed Gibbs sampling of DP mixtures (Neal 2000, algorithm 3).

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
    JCGS 9(2), algorithm 3.
Paisley, J. (2015). Lecture notes on DP mixtures: the marginalised sampler.
ALGORITHMS.md section 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import _kernels
from .crp import crp_log_prior
from .base import MixtureModel, StepInfo, initial_labels, relabel


class GibbsState(NamedTuple):
    """Collapsed state: only the partition and alpha (parameters are integrated out)."""

    labels: np.ndarray
    alpha: float


@dataclass(frozen=True)
class CollapsedGibbs:
    """Collapsed Gibbs sampler: each point in turn is reassigned given all the others.

    Parameters
    ----------
    random_scan : bool, default=True
        Visit the points in a fresh random order each sweep (else in index order).

    Notes
    -----
    One step is one sweep over all points.  Cluster statistics live in numba arrays and are
    updated in O(d^2) per move for Gaussians (rank-one Cholesky updates); they are rebuilt
    from the labels at the start of every step, so the state is just ``(labels, alpha)``.
    """

    random_scan: bool = True
    name = "gibbs"

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> GibbsState:
        return GibbsState(initial_labels(rng, model.n_samples, labels, n_clusters), float(alpha))

    def step(self, rng, state: GibbsState, model: MixtureModel):
        kern = model.kernel
        n = model.n_samples
        labels = np.array(state.labels, dtype=np.int64)
        n_clusters = int(labels.max()) + 1
        capacity = max(16, 2 * n_clusters + 2)
        order = rng.permutation(n) if self.random_scan else np.arange(n)
        uniforms = rng.random(n)
        log_alpha = math.log(state.alpha)
        t = 0
        while True:
            kstats = kern.alloc(capacity)
            counts = np.zeros(capacity, dtype=np.int64)
            _kernels.rebuild_stats(kern.data, kstats, kern.hyper, labels, counts,
                                   kern.reset, kern.add)
            used = counts > 0
            active = np.zeros(capacity, dtype=np.int64)
            where = np.zeros(capacity, dtype=np.int64)
            ids = np.flatnonzero(used)
            active[:len(ids)] = ids
            where[ids] = np.arange(len(ids))
            free = np.zeros(capacity, dtype=np.int64)
            free_ids = np.flatnonzero(~used)[::-1]
            free[:len(free_ids)] = free_ids
            sizes = np.array([len(ids), len(free_ids)], dtype=np.int64)
            logw = np.empty(capacity + 1)
            t = _kernels.collapsed_sweep(kern.data, kstats, kern.hyper, labels, counts, active,
                                         where, free, sizes, order, uniforms, log_alpha, t, logw,
                                         kern.reset, kern.add, kern.remove, kern.log_predictive)
            if t >= n:
                break
            capacity *= 2
        n_active = int(sizes[0])
        log_lik = _kernels.sum_log_marginals(kstats, kern.hyper, active, n_active,
                                             kern.log_marginal)
        labels, _ = relabel(labels)
        k = n_active
        alpha = model.update_alpha(rng, state.alpha, k)
        log_joint = crp_log_prior(counts[active[:n_active]], alpha) + log_lik
        return GibbsState(labels, alpha), StepInfo(log_joint, k, alpha)
