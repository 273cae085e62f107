"""Hellinger distances between components of rankings
(:meth:`dpclust.families.GeneralizedMallows.hellinger`,
:meth:`dpclust.families.PlackettLuce.hellinger`).

Two components over top-t rankings (Generalized Mallows or Plackett–Luce) have no
closed-form Bhattacharyya coefficient: two GM^s models code a ranking about different central
rankings, and two Plackett–Luce models' stage probabilities do not factor.
``BC(p, q) = sum_pi sqrt(p(pi) q(pi))`` over the ``n! / (n - t)!`` top-t rankings is
therefore

* **summed exactly** when there are few rankings (:data:`MAX_ENUMERATED`), or
* **estimated by importance sampling** otherwise:
  ``BC = E_{pi ~ p}[sqrt(q(pi) / p(pi))]``, from ``n_samples`` rankings drawn from each
  component (the family's ``sample_data``), averaged over the two directions so that the estimate is
  symmetric.  The estimator is unbiased for ``BC``; its relative error is about
  ``sqrt(Var / n_samples)`` and is largest for components that barely overlap (where ``H``
  is close to 1 anyway).

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized densities.
    JASA (arXiv 2304.00074).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp

#: up to this many top-t rankings, the Bhattacharyya coefficient is summed over all of them
MAX_ENUMERATED = 50_000


def rankings_hellinger(family, params, *, length=None, n_samples: int = 2000,
                       max_enumerated: int = MAX_ENUMERATED, rng=None,
                       longest: int | None = None) -> np.ndarray:
    """Hellinger distances between the components ``params`` of a family of rankings over
    top-``length`` rankings, shape (K, K).

    Parameters
    ----------
    family : GeneralizedMallows or PlackettLuce
        Resolved (it gives ``n_items``, scores the rankings and draws them).
    params : the family's batched parameters, K components.
    length : int or None
        ``t``, the length of the rankings the distributions are over (default: ``longest``).
    n_samples : int
        Rankings drawn from each component for the importance-sampling estimate.
    max_enumerated : int
        Largest number of top-t rankings summed over exactly.
    rng : numpy.random.Generator
        The stream of the importance-sampling draws.
    longest : int, optional
        The longest ``length`` allowed (default: ``n_items - 1``).
    """
    from ..rankings.data import Rankings

    n = family.n_items_
    longest = n - 1 if longest is None else min(n - 1, int(longest))
    t = longest if length is None else int(length)
    if not 1 <= t <= longest:
        raise ValueError(f"length must be in 1 .. {longest}, got {length!r}")
    K = len(params[0])
    if K == 0:
        return np.zeros((0, 0))
    if math.perm(n, t) <= max_enumerated:
        rankings = np.array(list(itertools.permutations(range(n), t)), dtype=np.int64)
        L = family.log_likelihood(Rankings(rankings, n), params)  # (R, K)
        top = L.max(axis=0)
        root = np.exp(0.5 * (L - top))  # scaled by each column's largest probability
        bc = np.exp(0.5 * (top[:, None] + top[None, :])) * (root.T @ root)
    else:
        components = np.repeat(np.arange(K), n_samples)
        rankings = family.sample_data(params, components, rng, lengths=t)
        L = family.log_likelihood(rankings, params).reshape(K, n_samples, K)
        own = L[np.arange(K), :, np.arange(K)]  # log p_a(pi) of a's own draws, (K, n_samples)
        log_ratio = 0.5 * (L - own[:, :, None])  # log sqrt(p_b / p_a) at a's draws
        est = np.exp(logsumexp(log_ratio, axis=1) - math.log(n_samples))  # E_a[...], (K, K)
        bc = 0.5 * (est + est.T)
    out = np.sqrt(np.clip(1.0 - bc, 0.0, 1.0))
    np.fill_diagonal(out, 0.0)
    return 0.5 * (out + out.T)
