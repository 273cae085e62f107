"""The finite symmetric Dirichlet prior: a mixture of exactly K components with weights
``Dir(alpha/K, ..., alpha/K)``, as a prior on partitions.

Summing the labelled prior over the ``K!/(K - K+)!`` labellings of a partition with ``K+``
blocks gives the EPPF ``log K!/(K-K+)! + lgamma(alpha) - lgamma(alpha + N)
+ sum_b [lgamma(alpha/K + N_b) - lgamma(alpha/K)]``; a point joins a block of size c with
weight ``c + alpha/K`` and opens one of the ``K - K+`` empty components with weight
``(K - K+) alpha/K``.  As K grows it approaches the Dirichlet process (Ishwaran & Zarepour
2002).  The ``"fsd"`` sampler (blocked Gibbs with instantiated weights) targets it; collapsed
Gibbs, explicit Gibbs and Gibbs+SAMS target it exactly through the seating weights.

References
----------
Ishwaran, H. & Zarepour, M. (2002). Exact and approximate sum representations for the
    Dirichlet process. Canadian Journal of Statistics 30(2).
Miller & Harrison (2018), section 2 (the EPPF of a finite mixture).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .base import PartitionPrior, log_gamma_counts, positive_sizes


def finite_dirichlet_log_prior(sizes, alpha: float, n_components: int) -> float:
    """``log p(partition)`` under a K-component mixture with weights ``Dir(alpha/K, ...)``."""
    sizes = positive_sizes(sizes)
    k_plus = len(sizes)
    if k_plus > n_components:
        return -math.inf
    a = alpha / n_components
    n = sizes.sum()
    return float(math.lgamma(n_components + 1) - math.lgamma(n_components - k_plus + 1)
                 + math.lgamma(alpha) - math.lgamma(alpha + n)
                 + (gammaln(a + sizes) - math.lgamma(a)).sum())


@dataclass(frozen=True)
class FiniteDirichlet(PartitionPrior):
    """A K-component mixture with symmetric Dirichlet weights, as a partition prior.

    Parameters
    ----------
    n_components : int, default=20
        K, the number of components (an upper bound on the number of clusters).
    alpha : float, default=1.0
        The Dirichlet's total mass: weights ``Dir(alpha/K, ..., alpha/K)``.
    """

    n_components: int = 20
    alpha: float = 1.0
    name = "finite"
    title = "finite symmetric Dirichlet"
    spec_help = "finite:K[,ALPHA] (K components, weights Dir(ALPHA/K); ALPHA default 1)"

    @classmethod
    def from_spec(cls, args):
        if len(args) not in (1, 2):
            raise ValueError("finite takes K or K,ALPHA (e.g. finite:20,1.0)")
        return cls(int(args[0]), *(float(a) for a in args[1:]))

    def __post_init__(self):
        if int(self.n_components) < 1 or int(self.n_components) != self.n_components:
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components}")
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be a positive finite number, got {self.alpha!r}")

    @property
    def alpha_start(self) -> float:
        return float(self.alpha)

    def log_eppf(self, sizes, alpha: float) -> float:
        return finite_dirichlet_log_prior(sizes, alpha, int(self.n_components))

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        K = int(self.n_components)
        a = alpha / K
        log_join = np.log(np.arange(n_samples + 1) + a)
        log_join[0] = -math.inf
        k = np.arange(n_samples + 1)
        with np.errstate(divide="ignore"):
            log_new = np.where(k < K, np.log(np.maximum(K - k, 0) * a), -math.inf)
        return log_join, log_new

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        K = int(self.n_components)
        if n_clusters >= K:
            return -math.inf
        a = alpha / K
        return (math.log(K - n_clusters) + math.lgamma(a + n_left) + math.lgamma(a + n_right)
                - math.lgamma(a + n_left + n_right) - math.lgamma(a))

    def log_split_terms(self, n_samples, alpha, max_clusters):
        K = int(self.n_components)
        a = alpha / K
        room = K - np.arange(int(max_clusters) + 1, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_k = np.where(room > 0, np.log(np.maximum(room, 1.0)), -np.inf)
        return log_k + math.log(a), log_gamma_counts(int(n_samples), a)

    def describe(self) -> dict:
        return {**super().describe(), "n_components": int(self.n_components),
                "alpha": float(self.alpha)}
