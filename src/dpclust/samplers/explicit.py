"""Gibbs sampling with explicit cluster parameters (Neal 2000, algorithm 2).

This is the variant of Paisley's lecture notes: existing clusters are scored with their
current parameters ``f(x_i; theta_k)``, a new cluster with the prior predictive ``f(x_i)``;
a new cluster's parameter is drawn from ``p(theta | x_i)``
(:meth:`~dpclust.families.base.ConjugateFamily.sample_given_one`), and after the sweep
every ``theta_k`` is updated by a kernel that leaves ``p(theta | X_k)`` invariant
(:meth:`~dpclust.families.base.ConjugateFamily.update_params`: an exact draw for the
conjugate families, Gibbs rounds for Plackett–Luce).  For conjugate families it is a
baseline that mixes more slowly than the collapsed sampler; for families without a
collapsed form that supply both hooks (Plackett–Luce) it is the exact sampler.  Repeated
rows (ballots) are scored once per distinct row.

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models,
    algorithm 2.
Paisley, J. (2015). Lecture notes on DP mixtures, "the algorithm".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..families.base import concatenate, take
from ..kernels import gibbs as _kernels
from .base import (MixtureModel, StepInfo, initial_labels, instantiated_log_joint,
                   log_likelihood_rows, relabel)


class ExplicitState(NamedTuple):
    """Partition, one parameter per cluster (batched, cluster k = label k), and alpha."""

    labels: np.ndarray
    params: Any
    alpha: float


@dataclass(frozen=True)
class ExplicitGibbs:
    """Neal's algorithm 2: Gibbs over labels with instantiated cluster parameters."""

    random_scan: bool = True
    name = "explicit"
    summary = ("Gibbs with the clusters' parameters in the state (Neal 2000, algorithm 2); "
               "families without a collapsed form")
    #: partition priors it fits: every prior of :mod:`dpclust.priors` (it reads the seating
    #: weights and split ratios of the prior's contract)
    priors = None
    #: the family's face it reads: a collapsed form, or the instantiated hooks
    #: (``update_params``, ``sample_given_one``) of families that list it in ``samplers``
    needs = "any"
    is_exact = True

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> ExplicitState:
        labels = initial_labels(rng, model.n_samples, labels, n_clusters)
        k = int(labels.max()) + 1
        params = model.family.update_params(model.X, labels, None, rng, k)
        return ExplicitState(labels, params, float(alpha))

    def step(self, rng, state: ExplicitState, model: MixtureModel):
        fam, X, n = model.family, model.X, model.n_samples
        labels = np.array(state.labels, dtype=np.int64)
        k = int(labels.max()) + 1
        capacity = k + 8
        loglik = np.empty((n, capacity))
        loglik[:, :k] = log_likelihood_rows(model, state.params)
        Xd, inverse, _ = model.distinct if model.repeats else (X, None, None)
        params = state.params
        counts = np.zeros(capacity, dtype=np.int64)
        counts[:k] = np.bincount(labels, minlength=k)
        n_cols = k
        order = rng.permutation(n) if self.random_scan else np.arange(n)
        uniforms = rng.random(n)
        logw = np.empty(capacity + 1)
        cand = np.empty(capacity + 1, dtype=np.int64)
        log_join, log_new = model.seat_tables(state.alpha, n_cols)
        prior_pred = model.log_prior_predictive
        t = 0
        while True:
            if len(log_new) <= min(n_cols, n - 1):  # the clusters outgrow the prior's table
                log_join, log_new = model.seat_tables(state.alpha, 2 * n_cols)
            t = _kernels.explicit_sweep(loglik, prior_pred, labels, counts, n_cols, order,
                                        uniforms, log_join, log_new, t, logw, cand)
            if t >= n:
                break
            i = order[t]
            # a new cluster for point i: theta ~ p(theta | x_i)
            empty = np.flatnonzero(counts[:n_cols] == 0)
            if len(empty):
                c = int(empty[0])
            else:
                if n_cols == capacity:
                    capacity *= 2
                    loglik = _grow(loglik, capacity)
                    counts = np.concatenate([counts, np.zeros(capacity - len(counts), np.int64)])
                    logw = np.empty(capacity + 1)
                    cand = np.empty(capacity + 1, dtype=np.int64)
                c = n_cols
                n_cols += 1
            theta = fam.sample_given_one(X, i, rng)
            params = _put(params, c, theta)
            column = fam.log_likelihood(Xd, theta)[:, 0]
            loglik[:, c] = column if inverse is None else column[inverse]
            labels[i] = c
            counts[c] = 1
            t += 1
        labels, old = relabel(labels)
        k = int(labels.max()) + 1
        if getattr(fam, "collapsible", True):  # an exact draw, and the collapsed log joint
            stats = fam.stats(X, labels, k)
            params = fam.sample_posterior(stats, rng)
            alpha = model.update_alpha(rng, state.alpha, k)
            log_lik = float(fam.log_marginal(stats).sum())
            log_joint = model.partition_prior.log_eppf(fam.count(stats), alpha) + log_lik
        else:  # the family's kernel, and the density of the state, parameters included
            params = fam.update_params(X, labels, take(params, old), rng, k)
            alpha = model.update_alpha(rng, state.alpha, k)
            log_joint, log_lik = instantiated_log_joint(model, labels, params, alpha)
        return ExplicitState(labels, params, alpha), StepInfo(log_joint, k, alpha,
                                                              log_likelihood=log_lik)


def _grow(a: np.ndarray, capacity: int) -> np.ndarray:
    out = np.empty((a.shape[0], capacity))
    out[:, :a.shape[1]] = a
    return out


def _put(params, c: int, theta):
    """Parameters with cluster ``c`` set to the single draw ``theta`` (appended if c == K)."""
    k = len(params[0])
    if c < k:
        out = type(params)(*(np.array(a, copy=True) for a in params))
        for a, b in zip(out, theta):
            a[c] = b[0]
        return out
    return concatenate(params, theta)
