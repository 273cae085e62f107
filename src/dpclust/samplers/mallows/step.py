"""State, diagnostics and the iteration shared by :class:`~dpclust.samplers.mallows.SliceGibbs`
and :class:`~dpclust.samplers.mallows.BetaGibbs` (Meilă & Chen 2010, Figures 1 and 5): the
assignment sweep (each sampler's own ``_sweep``), the optional split-merge and birth-death
moves, the cluster updates of ``(sigma, theta)`` and alpha."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...families.mallows import MallowsParams
from ...kernels.streams import chunk_seeds
from ...kernels.mallows import cluster_update as _k
from ...utils.threads import serial_when_small
from ..base import MixtureModel, initial_labels, relabel
from ._helpers import _check_family, _n1_cdf, _ranks
from .birth_death import _BirthDeath
from .likelihood import instantiated_log_likelihood
from .split_merge import _SplitMerge

_SIGMA_STEPS = {"mh": _k.SIGMA_MH, "stagewise": _k.SIGMA_STAGEWISE}
#: the clusters' parameter updates run on one thread below this many rankings (a cluster's
#: update sweeps its members many times: parallel pays from a few hundred rankings)
SERIAL_RANKINGS = 256


class MallowsState(NamedTuple):
    """Partition, each cluster's parameters (cluster k = label k) and alpha."""

    labels: np.ndarray
    params: MallowsParams
    alpha: float


class MallowsInfo(NamedTuple):
    """Diagnostics of one step (fields of :class:`StepInfo` first)."""

    log_joint: float
    n_clusters: int
    alpha: float
    n_accepted_splits: int = 0
    n_accepted_merges: int = 0
    log_likelihood: float = float("nan")
    sigma_acceptance: float = 1.0
    n_accepted_births: int = 0
    n_accepted_deaths: int = 0


@dataclass(frozen=True)
class _MallowsGibbs:
    n_gibbs: int = 10
    n_slices: int = 3
    sigma_step: str = "mh"
    random_scan: bool = True
    split_merge: int = 0
    launch_iter: int = 4
    launch_size: int = 200
    random_share: float = 0.5
    cluster_share: float = 0.5
    birth_death: int = 0

    _theta_mode = _k.THETA_SLICE
    name = "mallows"
    summary = "Generalized Mallows rankings"
    #: fits families without a collapsed form (their parameters instantiated), DP only
    needs = "instantiated"
    priors = ("dp",)
    is_exact = True

    def __post_init__(self):
        if self.sigma_step not in _SIGMA_STEPS:
            raise ValueError(f"sigma_step must be 'mh' or 'stagewise', got {self.sigma_step!r}")
        for field in ("n_gibbs", "n_slices", "launch_size"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        for field in ("random_share", "cluster_share"):
            value = getattr(self, field)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field} must lie in [0, 1], got {value!r}")
        for field in ("split_merge", "launch_iter", "birth_death"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{field} must be a non-negative integer, got {value!r}")

    # ------------------------------------------------------------------ init
    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> MallowsState:
        """Random labels over ``n_clusters`` clusters (or the given ones), each cluster's
        parameters drawn from the prior and then updated given its rankings."""
        fam = _check_family(model, self.name)
        labels = initial_labels(rng, model.n_samples, labels, n_clusters)
        k = int(labels.max()) + 1
        params = fam.sample_prior(rng, k)
        order = np.array(params.order)
        theta = np.array(params.theta)
        self._update_clusters(rng, model, labels, order, theta)
        return MallowsState(labels, MallowsParams(order, theta), float(alpha))

    # ------------------------------------------------------------------ step
    def step(self, rng, state: MallowsState, model: MixtureModel):
        fam = _check_family(model, self.name)
        X = model.X
        n, J = fam.n_items_, fam.max_length_
        labels = np.array(state.labels, dtype=np.int64)
        k = int(labels.max()) + 1
        cap = k + 16
        order = np.zeros((cap, n), dtype=np.int64)
        theta = np.ones((cap, J))
        order[:k] = state.params.order
        theta[:k] = state.params.theta
        counts = np.zeros(cap, dtype=np.int64)
        counts[:k] = np.bincount(labels, minlength=k)
        perm = rng.permutation(model.n_samples) if self.random_scan else np.arange(
            model.n_samples)
        log_new = fam.log_prior_predictive(X)
        seed = np.uint64(rng.integers(0, 2**63 - 1))
        order, theta, counts = self._sweep(model, fam, labels, order, theta, counts, perm,
                                           log_new, math.log(state.alpha), seed)
        # compact to clusters 0..K-1 by first appearance
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(order[old_ids])
        theta = np.ascontiguousarray(theta[old_ids])
        splits = merges = 0
        if self.split_merge:
            moves = _SplitMerge(fam, X, self.launch_iter, self.launch_size, rng)
            labels, order, theta, splits, merges = moves.run(
                rng, labels, order, theta, state.alpha, self.split_merge, self.random_share,
                self.cluster_share)
        births = deaths = 0
        if self.birth_death:
            moves = _BirthDeath(fam, X, rng)
            labels, order, theta, births, deaths = moves.run(
                rng, labels, order, theta, state.alpha, self.birth_death)
        accepted = self._update_clusters(rng, model, labels, order, theta)
        k = order.shape[0]
        alpha = model.update_alpha(rng, state.alpha, k)
        params = MallowsParams(order, theta)
        log_lik = instantiated_log_likelihood(fam, X, labels, params)
        log_partition_prior = model.partition_prior.log_eppf(np.bincount(labels, minlength=k),
                                                             alpha)
        log_joint = log_partition_prior + float(fam.log_prior(params).sum()) + log_lik
        info = MallowsInfo(log_joint, k, alpha, splits, merges, log_lik,
                           sigma_acceptance=float(accepted.sum()) / (k * self.n_gibbs),
                           n_accepted_births=births, n_accepted_deaths=deaths)
        return MallowsState(labels, params, alpha), info

    def _update_clusters(self, rng, model, labels, order, theta):
        fam = model.family
        X = model.X
        k = order.shape[0]
        members = np.argsort(labels, kind="stable").astype(np.int64)
        starts = np.zeros(k + 1, dtype=np.int64)
        starts[1:] = np.cumsum(np.bincount(labels, minlength=k))
        rank = _ranks(order)
        accepted = np.zeros(k, dtype=np.int64)
        seeds = chunk_seeds(int(rng.integers(0, 2**63 - 1)), k)
        with serial_when_small(len(labels), SERIAL_RANKINGS):
            _k.update_clusters(X.orders, X.lengths, members, starts, order, rank, theta,
                               fam.nu_r_, float(fam.nu), self.n_gibbs, self.n_slices,
                               _SIGMA_STEPS[self.sigma_step], self._theta_mode,
                               _n1_cdf(fam), seeds, accepted)
        return accepted
