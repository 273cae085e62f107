"""Learned hyperparameters of a family: the move that resamples them given the partition.

A family hyperparameter given a :class:`~dpclust.priors.GammaPrior` instead of a number
(``DirichletMultinomial(concentration=GammaPrior(1, 1))``) is a variable of the chain.  Its
conditional given the partition ``z`` is, with the clusters' parameters integrated out,

``p(h | z, X) ∝ p(h) prod_k f(X_k | h)``

where ``f(X_k | h)`` is cluster k's marginal likelihood under the family's prior at ``h``:
a function of the clusters' sufficient statistics alone, so one evaluation costs
O(K × the size of a cluster's statistics), never a pass over the data.  Each iteration of a
chain composes the sampler's step, which leaves ``p(z | h, X)`` invariant, with one update
of every learned hyperparameter in turn from its conditional: a Gibbs sampler of the joint
``p(z, h | X)``, exact whenever the sampler is.  A sampler that holds the components'
parameters ``theta_k`` between steps (explicit Gibbs, the coarsened posterior's sampler)
targets ``p(z, theta, h | X)``; there the conditional is ``p(h | theta) ∝ p(h) prod_k
p(theta_k | h)``, over every component the state holds.

A parameter of the partition prior given a hyperprior (the Pitman–Yor discount under a
:class:`~dpclust.priors.BetaPrior`, the MFM's gamma and the mean of its prior on K under a
:class:`~dpclust.priors.GammaPrior`) is a variable of the chain the same way.  The prior
depends on it, the clusters' parameters and the data do not, so its conditional is

``p(h | z) ∝ p(h) p(z | h)``

with ``p(z | h)`` the prior's EPPF of the block sizes: one evaluation costs O(K).

The update is univariate slice sampling (Neal 2003) on ``u = log h`` (on the logit of a value
in (0, 1)), with stepping out
from a window of width :data:`SLICE_WIDTH` and shrinkage: exact for any width, it needs no
tuning and adapts to the scale of the posterior of ``h``.  The target in ``u`` carries the
Jacobian ``h``.

References
----------
Neal, R. M. (2003). Slice sampling. Annals of Statistics 31(3), 705-767 (figures 3 and 5:
    stepping out and shrinkage).
Escobar, M. D. & West, M. (1995). Bayesian density estimation and inference using mixtures.
    JASA 90(430) (hyperparameters resampled given the partition).
"""

from __future__ import annotations

import numpy as np


def log_conditional(family, name: str, prior, values: dict, *, stats=None, params=None):
    """``h -> log p(h | ...)`` up to a constant, with the other learned values held at
    ``values``: given the partition (``stats``, the clusters' statistics), the sum of the
    clusters' log marginals ``log f(X_k | h)``; given the components' parameters
    (``params``, for the samplers that hold them), the sum of their log prior densities
    ``log p(theta_k | h)``; then the log density of the Gamma prior of ``h``."""

    def log_density(h: float) -> float:
        at = family.at({**values, name: h})
        logf = at.log_marginal(stats) if params is None else at.log_prior(params)
        return float(np.sum(logf)) + prior.log_pdf(h)

    return log_density


def update_hyper(rng: np.random.Generator, family, values: dict, *, stats=None,
                 params=None) -> dict:
    """Every learned hyperparameter of ``family`` (a resolved family whose
    :meth:`~dpclust.families.base.ConjugateFamily.hyperpriors` are not empty) resampled in
    turn from its conditional (:func:`log_conditional`: given the clusters' statistics
    ``stats``, or given the components' parameters ``params`` where the sampler holds
    them) by slice sampling on its logarithm, from ``values``; returns the new values (a
    new dict, in the order of the hyperpriors)."""
    values = dict(values)
    for name, prior in family.hyperpriors().items():
        log_density = log_conditional(family, name, prior, values, stats=stats, params=params)
        values[name] = prior.slice(rng, log_density, values[name])
    return values


def update_prior_hyper(rng: np.random.Generator, prior, values: dict, sizes,
                       alpha: float) -> dict:
    """Every learned parameter of the partition prior ``prior`` (at ``values``) resampled in
    turn from ``p(h | z) ∝ p(h) p(z | h)``, the EPPF of the block sizes ``sizes`` with the
    concentration at ``alpha``; returns the new values (a new dict, by name)."""
    values = dict(values)
    hyperpriors = prior.hyperpriors()
    for name in values:
        hp = hyperpriors[name]

        def log_density(h: float, name=name, hp=hp) -> float:
            return prior.at({**values, name: h}).log_eppf(sizes, alpha) + hp.log_pdf(h)

        values[name] = hp.slice(rng, log_density, values[name])
    return values
