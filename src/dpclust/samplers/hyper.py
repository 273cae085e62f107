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

The update is univariate slice sampling (Neal 2003) on ``u = log h``, with stepping out
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

import math

import numpy as np

#: the slice sampler's initial window on log h (an e-fold either way)
SLICE_WIDTH = 1.0
#: the most steps the window is stepped out on each side
SLICE_STEPS = 20


def slice_log(rng: np.random.Generator, log_target, x0: float, width: float = SLICE_WIDTH,
              max_steps: int = SLICE_STEPS) -> float:
    """One slice-sampling update of a scalar ``x`` with unnormalised log density
    ``log_target(x)``, from ``x0`` (Neal 2003, stepping out then shrinkage).

    The window's placement and the stepping-out budget split are drawn first, so the
    update leaves the density invariant for any ``width`` and ``max_steps``.
    """
    f0 = log_target(x0)
    if not math.isfinite(f0):
        raise ValueError(f"the slice sampler started at a point of zero density ({x0})")
    level = f0 + math.log(rng.random())  # log of the slice's height: f0 - Exp(1)
    left = x0 - width * rng.random()
    right = left + width
    j = int(math.floor(max_steps * rng.random()))
    k = max_steps - 1 - j
    while j > 0 and log_target(left) > level:
        left -= width
        j -= 1
    while k > 0 and log_target(right) > level:
        right += width
        k -= 1
    while True:
        x = left + (right - left) * rng.random()
        if log_target(x) > level:
            return x
        if x < x0:
            left = x
        else:
            right = x


def log_conditional(family, name: str, prior, values: dict, *, stats=None, params=None):
    """``u -> log p(h = e^u | ...) + u`` up to a constant, at ``h`` with the other learned
    values held at ``values``: given the partition (``stats``, the clusters' statistics),
    the sum of the clusters' log marginals ``log f(X_k | h)``; given the components'
    parameters (``params``, for the samplers that hold them), the sum of their log prior
    densities ``log p(theta_k | h)``; then the log density of the Gamma prior of ``h`` and
    the Jacobian of ``h = e^u``."""

    def target(u: float) -> float:
        if not -700.0 < u < 700.0:
            return -math.inf
        h = math.exp(u)
        at = family.at({**values, name: h})
        logf = at.log_marginal(stats) if params is None else at.log_prior(params)
        total = float(np.sum(logf))
        if not math.isfinite(total):
            return -math.inf
        return total + prior.log_pdf(h) + u

    return target


def update_hyper(rng: np.random.Generator, family, values: dict, *, stats=None,
                 params=None) -> dict:
    """Every learned hyperparameter of ``family`` (a resolved family whose
    :meth:`~dpclust.families.base.ConjugateFamily.hyperpriors` are not empty) resampled in
    turn from its conditional (:func:`log_conditional`: given the clusters' statistics
    ``stats``, or given the components' parameters ``params`` where the sampler holds
    them), from ``values``; returns the new values (a new dict, in the order of the
    hyperpriors)."""
    values = dict(values)
    for name, prior in family.hyperpriors().items():
        target = log_conditional(family, name, prior, values, stats=stats, params=params)
        values[name] = math.exp(slice_log(rng, target, math.log(values[name])))
    return values
