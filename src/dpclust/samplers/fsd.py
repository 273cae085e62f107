"""The finite symmetric Dirichlet (FSD) approximation, a blocked Gibbs baseline.

A mixture of ``n_components`` clusters with weights ``pi ~ Dir(alpha/K, ..., alpha/K)``:
as K grows it approaches the DP mixture (Ishwaran & Zarepour 2002).  Given weights and
parameters the labels are independent, so a step is fully vectorised over the points.

References
----------
Paisley, J. (2015). Lecture notes, the finite Gibbs sampler (steps a-c).
Chang, J. & Fisher III, J. W. (2013), the FSD baseline.
Mathematics §2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..families.base import log_dirichlet, take
from ..kernels import gibbs as _kernels
from .base import MixtureModel, StepInfo, initial_labels, instantiated_log_joint, relabel
from ..priors import DirichletProcess, FiniteDirichlet

_CHUNK = 1 << 15


class FSDState(NamedTuple):
    """Labels (canonical), alpha, and the occupied clusters' parameters for families whose
    parameters are updated by a Markov kernel (Plackett–Luce; None for the conjugate
    families, whose weights and parameters are redrawn from the labels at the start of
    every step)."""

    labels: np.ndarray
    alpha: float
    params: Any = None


@dataclass(frozen=True)
class FiniteSymmetricDirichlet:
    """Blocked Gibbs for a finite mixture with a symmetric Dirichlet prior on the weights.

    Parameters
    ----------
    n_components : int or None, default=None
        The number of components K.  With a :class:`~dpclust.priors.FiniteDirichlet` prior
        the prior's (None, or the same number); with the Dirichlet process, the truncation
        level (None: 20), an upper bound on the number of clusters.

    Notes
    -----
    One step: ``pi ~ Dir(alpha/K + N_1, ..., alpha/K + N_K)``; ``theta_k ~ p(theta | X_k)``
    (the prior when empty); ``z_i ∝ pi_k f(x_i; theta_k)``.  Its stationary distribution is
    the finite mixture's posterior: exact for a model whose prior is
    :class:`~dpclust.priors.FiniteDirichlet` (the log joint is that prior's), and an
    approximation of the Dirichlet process otherwise (Ishwaran & Zarepour 2002; the reported
    log joint is then the DP log joint of the sampled partition).  alpha stays fixed.
    """

    n_components: int | None = None
    name = "fsd"
    summary = ("blocked Gibbs of a finite symmetric Dirichlet mixture: exact for "
               "prior='finite:K', an approximation of the Dirichlet process")
    #: the partition priors this sampler fits (the Dirichlet process only approximately)
    priors = ("finite", "dp")
    #: a collapsed form, or the ``update_params`` hook of families that list it in
    #: ``samplers``
    needs = "any"
    #: exact for the finite prior only (``exact_priors``); ``"auto"`` never picks it for
    #: the DP
    is_exact = False
    exact_priors = ("finite",)

    def __post_init__(self):
        if self.n_components is not None and int(self.n_components) < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components}")

    def components(self, model: MixtureModel) -> int:
        """K for this model: the finite prior's, else ``n_components`` (default 20)."""
        prior = model.partition_prior
        if isinstance(prior, FiniteDirichlet):
            if self.n_components not in (None, prior.n_components):
                raise ValueError(f"the sampler's n_components={self.n_components} differs from "
                                 f"the prior's {prior.n_components}: give it once")
            return int(prior.n_components)
        if not isinstance(prior, DirichletProcess):
            raise ValueError(f"the FSD sampler fits a finite Dirichlet prior (or approximates "
                             f"the Dirichlet process), not a {prior.title} prior")
        return 20 if self.n_components is None else int(self.n_components)

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> FSDState:
        if model.partition_prior.alpha_prior is not None:
            raise ValueError("the FSD sampler keeps alpha fixed: pass a number, not a prior")
        K = self.components(model)
        labels = initial_labels(rng, model.n_samples, labels, min(n_clusters, K))
        if labels.max() >= K:
            raise ValueError(f"the initial partition has {labels.max() + 1} clusters, more than"
                             f" n_components={K}")
        return FSDState(labels, float(alpha))

    def _draw_params_weights(self, rng, model, labels, alpha, K, params=None):
        counts = np.bincount(labels, minlength=K)
        log_w = log_dirichlet(rng, alpha / K + counts)
        params = model.family.update_params(model.X, labels, params, rng, K)
        return params, log_w

    def step(self, rng, state: FSDState, model: MixtureModel):
        fam, X, n = model.family, model.X, model.n_samples
        K = self.components(model)
        params, log_w = self._draw_params_weights(rng, model, state.labels, state.alpha, K,
                                                  state.params)
        labels = np.empty(n, dtype=np.int64)
        uniforms = rng.random(n)
        if model.repeats:  # each distinct row (ballot) scored once
            Xd, inverse, _ = model.distinct
            table = fam.log_likelihood(Xd, params) + log_w[None, :]
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            if model.repeats:
                logp = table[inverse[lo:hi]]
            else:
                logp = (fam.log_likelihood(fam.subset(X, np.arange(lo, hi)), params)
                        + log_w[None, :])
            _kernels.sample_rows_from_logs(logp, uniforms[lo:hi], labels[lo:hi])
        labels, old = relabel(labels)
        if getattr(fam, "collapsible", True):
            counts, log_lik = model._log_likelihood(labels)
            log_joint = model.partition_prior.log_eppf(counts, state.alpha) + log_lik
            return FSDState(labels, state.alpha), StepInfo(log_joint, len(old), state.alpha,
                                                           log_likelihood=float(log_lik))
        # the occupied components' parameters, renumbered with the labels
        params = take(params, old)
        log_joint, log_lik = instantiated_log_joint(model, labels, params, state.alpha)
        return FSDState(labels, state.alpha, params), StepInfo(
            log_joint, len(old), state.alpha, log_likelihood=log_lik)
