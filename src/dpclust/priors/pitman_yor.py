"""The Pitman–Yor (two-parameter) process prior on partitions.

With discount ``0 <= d < 1`` and strength ``s > -d``,
``p(z) = prod_{i=1}^{K-1} (s + i d) / (s + 1)^{(N-1)} prod_k (1 - d)^{(N_k - 1)}``
(rising factorials): a point joins a cluster of size c with weight ``c - d`` and opens a new
one with weight ``s + K d``.  ``d = 0`` is the Dirichlet process with ``alpha = s``; with
``d > 0`` the number of clusters grows like ``N^d`` rather than ``log N`` and cluster sizes
follow a power law, the behaviour of words, species and other heavy-tailed data.

References
----------
Pitman, J. & Yor, M. (1997). The two-parameter Poisson–Dirichlet distribution derived from a
    stable subordinator. Annals of Probability 25(2).
Ishwaran, H. & James, L. F. (2001). Gibbs sampling methods for stick-breaking priors. JASA
    96(453), section 3 (the Pólya urn of the two-parameter process).
Pitman (2006), eq. (3.7)-(3.8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .base import PartitionPrior, positive_sizes


@dataclass(frozen=True)
class PitmanYor(PartitionPrior):
    """The Pitman–Yor process prior on partitions.

    Parameters
    ----------
    discount : float, default=0.25
        ``d`` in [0, 1): 0 is the Dirichlet process; larger values give more, smaller
        clusters (``E[K]`` grows like ``N^d``).
    strength : float, default=1.0
        ``s > -d`` (the DP's alpha when ``d = 0``).
    """

    discount: float = 0.25
    strength: float = 1.0
    name = "pitman-yor"
    title = "Pitman–Yor process"
    spec_help = "pitman-yor:DISCOUNT,STRENGTH (0 <= DISCOUNT < 1, STRENGTH > -DISCOUNT)"

    @classmethod
    def from_spec(cls, args):
        if len(args) != 2:
            raise ValueError("pitman-yor takes DISCOUNT,STRENGTH (e.g. pitman-yor:0.25,1)")
        return cls(float(args[0]), float(args[1]))

    def __post_init__(self):
        d, s = float(self.discount), float(self.strength)
        if not 0 <= d < 1:
            raise ValueError(f"the Pitman–Yor discount must be in [0, 1), got {self.discount!r}")
        if not (s > -d and math.isfinite(s)):
            raise ValueError(f"the Pitman–Yor strength must be finite and > -discount "
                             f"({-d}), got {self.strength!r}")

    @property
    def alpha_start(self) -> float:
        return float(self.strength)

    def log_eppf(self, sizes, alpha: float) -> float:
        d, s = float(self.discount), float(alpha)
        sizes = positive_sizes(sizes)
        k, n = len(sizes), float(sizes.sum())
        log_new = float(np.log(s + d * np.arange(1, k)).sum()) if k > 1 else 0.0
        return (log_new - (math.lgamma(s + n) - math.lgamma(s + 1))
                + float((gammaln(sizes - d) - math.lgamma(1 - d)).sum()))

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        d, s = float(self.discount), float(alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_join = np.log(np.arange(n_samples + 1) - d)
            log_join[0] = -math.inf
            k = np.arange(n_samples + 1)
            log_new = np.log(s + d * k)
        log_new[0] = 0.0  # the first point opens a cluster whatever s is
        return log_join, log_new

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        d, s = float(self.discount), float(alpha)
        return (math.log(s + n_clusters * d) + math.lgamma(n_left - d) + math.lgamma(n_right - d)
                - math.lgamma(n_left + n_right - d) - math.lgamma(1 - d))

    def describe(self) -> dict:
        return {**super().describe(), "discount": float(self.discount),
                "strength": float(self.strength)}
