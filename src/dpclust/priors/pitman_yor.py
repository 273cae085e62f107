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

from ..utils.slice import slice_positive
from .base import (BetaPrior, GammaPrior, PartitionPrior, gamma_or_number, log_gamma_counts,
                   positive_sizes)


@dataclass(frozen=True)
class PitmanYor(PartitionPrior):
    """The Pitman–Yor process prior on partitions.

    Parameters
    ----------
    discount : float or BetaPrior, default=0.25
        ``d`` in [0, 1): 0 is the Dirichlet process; larger values give more, smaller
        clusters (``E[K]`` grows like ``N^d``).  A :class:`BetaPrior` learns it: the discount
        is then resampled after every step from ``p(d | z) ∝ p(d) p(z | d, s)`` (the EPPF
        above, a function of the block sizes), by slice sampling on its logit; it is a
        variable of the trace named ``discount``.
    strength : float or GammaPrior, default=1.0
        ``s > -d`` (the DP's alpha when ``d = 0``).  A :class:`GammaPrior` learns it: the
        strength is then resampled after every step from its conditional given the number
        of clusters K among N points, ``p(s | K) ∝ p(s) prod_{i=1}^{K-1} (s + i d) /
        (s + 1)^{(N-1)}`` (the only factors of the EPPF with ``s`` in them), by slice
        sampling on ``log s``; the chain's ``alpha`` is the strength.
    """

    discount: float = 0.25
    strength: float = 1.0
    name = "pitman-yor"
    title = "Pitman–Yor process"
    learnable = ("discount",)
    spec_help = ("pitman-yor:DISCOUNT,STRENGTH (0 <= DISCOUNT < 1, or beta:A:B to learn it; "
                 "STRENGTH > -DISCOUNT, or gamma:SHAPE:RATE to learn it)")

    @classmethod
    def from_spec(cls, args):
        if len(args) != 2:
            raise ValueError("pitman-yor takes DISCOUNT,STRENGTH (e.g. pitman-yor:0.25,1, "
                             "or pitman-yor:0.25,gamma:2:1 to learn the strength)")
        return cls(BetaPrior.parse(args[0]) or float(args[0]), gamma_or_number(args[1]))

    def __post_init__(self):
        if isinstance(self.discount, str):
            hp = BetaPrior.parse(self.discount)
            if hp is None:
                try:
                    hp = float(self.discount)
                except ValueError:
                    raise ValueError(f"the Pitman–Yor discount must be a number in [0, 1) "
                                     f"or a BetaPrior, got {self.discount!r}") from None
            object.__setattr__(self, "discount", hp)
        if isinstance(self.strength, GammaPrior):
            self.strength.untruncated("the Pitman–Yor strength")
        if isinstance(self.discount, GammaPrior):
            raise ValueError("the Pitman–Yor discount lies in [0, 1): learn it under a "
                             "BetaPrior(a, b), not a GammaPrior")
        d = self.d
        s = self.alpha_start
        if not 0 <= d < 1:
            raise ValueError(f"the Pitman–Yor discount must be in [0, 1), got {self.discount!r}")
        if isinstance(self.discount, BetaPrior) and s < 0:
            raise ValueError(f"a learned Pitman–Yor discount needs a strength >= 0 (it "
                             f"must exceed -discount for every discount), got {s}")
        if not (s > -d and math.isfinite(s)):
            raise ValueError(f"the Pitman–Yor strength must be finite and > -discount "
                             f"({-d}), got {self.strength!r}")

    @property
    def d(self) -> float:
        """The discount's value (its hyperprior's starting value while it is learned and
        :meth:`at` has not set it)."""
        return self.value("discount")

    @property
    def alpha_start(self) -> float:
        prior = self.alpha_prior
        return prior.start if prior is not None else float(self.strength)

    @property
    def alpha_prior(self) -> GammaPrior | None:
        return self.strength if isinstance(self.strength, GammaPrior) else None

    def update_alpha(self, rng, alpha: float, n_clusters: int, n_samples: int) -> float:
        """The strength given K clusters among N points, when it has a Gamma prior."""
        prior = self.alpha_prior
        if prior is None:
            return alpha
        d, k, n = self.d, int(n_clusters), int(n_samples)
        steps = d * np.arange(1, k)

        def log_density(s: float) -> float:
            return (float(np.log(s + steps).sum()) - math.lgamma(s + n) + math.lgamma(s + 1)
                    + prior.log_pdf(s))

        return slice_positive(rng, log_density, alpha)

    def log_eppf(self, sizes, alpha: float) -> float:
        d, s = self.d, float(alpha)
        sizes = positive_sizes(sizes)
        k, n = len(sizes), float(sizes.sum())
        log_new = float(np.log(s + d * np.arange(1, k)).sum()) if k > 1 else 0.0
        return (log_new - (math.lgamma(s + n) - math.lgamma(s + 1))
                + float((gammaln(sizes - d) - math.lgamma(1 - d)).sum()))

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        d, s = self.d, float(alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_join = np.log(np.arange(n_samples + 1) - d)
            log_join[0] = -math.inf
            k = np.arange(n_samples + 1)
            log_new = np.log(s + d * k)
        log_new[0] = 0.0  # the first point opens a cluster whatever s is
        return log_join, log_new

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        d, s = self.d, float(alpha)
        return (math.log(s + n_clusters * d) + math.lgamma(n_left - d) + math.lgamma(n_right - d)
                - math.lgamma(n_left + n_right - d) - math.lgamma(1 - d))

    def log_split_terms(self, n_samples, alpha, max_clusters):
        d, s = self.d, float(alpha)
        weight = s + d * np.arange(int(max_clusters) + 1)  # <= 0 only at K = 0, never split
        with np.errstate(divide="ignore"):
            log_k = np.log(np.maximum(weight, 0.0))
        return log_k, log_gamma_counts(int(n_samples), -d)

    def describe(self) -> dict:
        prior = self.alpha_prior
        strength = ({"gamma_shape": prior.shape, "gamma_rate": prior.rate} if prior
                    else float(self.strength))
        hp = self.hyperpriors().get("discount")  # the copy at a learned value too
        discount = hp.describe() if hp is not None else float(self.discount)
        return {**super().describe(), "discount": discount, "strength": strength}
