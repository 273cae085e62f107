"""The Dirichlet process (Chinese restaurant process) prior on partitions.

``p(z | alpha) = alpha^K Gamma(alpha) / Gamma(alpha + N) prod_k Gamma(N_k)``: a point joins a
cluster of size c with weight c and opens a new one with weight alpha, whatever K is.
alpha is fixed, or has a :class:`~dpclust.priors.GammaPrior` and is resampled after each
step by the auxiliary-variable update of Escobar & West.

References
----------
Escobar, M. D. & West, M. (1995). Bayesian density estimation and inference using mixtures.
    JASA 90(430), section 6 (the auxiliary-variable update of alpha).
Neal, R. M. (2000), eq. (3.7)-(3.8) (the CRP conditionals).
Mathematics §2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .base import (
    GammaPrior,
    PartitionPrior,
    gamma_or_number,
    log_counts,
    log_gamma_counts,
    positive_sizes,
)


def resolve_alpha(alpha) -> tuple[float, GammaPrior | None]:
    """Split the estimator's ``alpha`` argument into (initial value, prior or None)."""
    if isinstance(alpha, GammaPrior):
        return alpha.start, alpha.untruncated("the concentration")
    if isinstance(alpha, (tuple, list)) and len(alpha) == 3 and str(alpha[0]).lower() == "gamma":
        prior = GammaPrior(float(alpha[1]), float(alpha[2]))
        return prior.start, prior
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a positive number or a GammaPrior, got {alpha!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    return value, None


def crp_log_prior(sizes, alpha: float) -> float:
    """``log p(z | alpha)`` of a partition with block sizes ``sizes`` under the CRP.

    ``K log alpha + sum_k lgamma(N_k) + lgamma(alpha) - lgamma(alpha + N)`` (Mathematics §2).
    """
    sizes = positive_sizes(sizes)
    n = sizes.sum()
    return float(len(sizes) * math.log(alpha) + gammaln(sizes).sum()
                 + math.lgamma(alpha) - math.lgamma(alpha + n))


def sample_alpha(rng: np.random.Generator, alpha: float, n_clusters: int, n_samples: int,
                 prior: GammaPrior) -> float:
    """One Escobar & West (1995) update of alpha given K clusters among N points.

    Draw ``eta ~ Beta(alpha + 1, N)``; with odds ``(a + K - 1) / (N (b - log eta))`` take
    ``alpha ~ Gamma(a + K, rate b - log eta)``, else ``Gamma(a + K - 1, rate b - log eta)``.
    """
    a, b = prior.shape, prior.rate
    eta = rng.beta(alpha + 1.0, n_samples)
    rate = b - math.log(eta)
    odds = (a + n_clusters - 1.0) / (n_samples * rate)
    shape = a + n_clusters if rng.random() < odds / (1.0 + odds) else a + n_clusters - 1.0
    return float(rng.gamma(shape, 1.0 / rate))


@dataclass(frozen=True)
class DirichletProcess(PartitionPrior):
    """The Dirichlet process prior on partitions (the CRP), dpclust's default.

    Parameters
    ----------
    alpha : float or GammaPrior, default=1.0
        The concentration: a number keeps it fixed, a :class:`~dpclust.priors.GammaPrior`
        resamples it (Escobar & West 1995).  ``E[K] ≈ alpha log(1 + N / alpha)``: the number
        of clusters grows with N without bound.
    """

    alpha: float | GammaPrior = 1.0
    name = "dp"
    title = "Dirichlet process"
    is_dirichlet_process = True
    spec_help = "dp[:ALPHA] (ALPHA or gamma:SHAPE:RATE; default: --alpha)"

    @classmethod
    def from_spec(cls, args):
        if not args:
            return cls()
        return cls(gamma_or_number(args[0]))

    def __post_init__(self):
        resolve_alpha(self.alpha)  # validates

    @property
    def alpha_start(self) -> float:
        return resolve_alpha(self.alpha)[0]

    @property
    def alpha_prior(self) -> GammaPrior | None:
        return resolve_alpha(self.alpha)[1]

    def log_eppf(self, sizes, alpha: float) -> float:
        return crp_log_prior(sizes, alpha)

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        return log_counts(n_samples), np.full(n_samples + 1, math.log(alpha))

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        return (math.log(alpha) + math.lgamma(n_left) + math.lgamma(n_right)
                - math.lgamma(n_left + n_right))

    def log_split_terms(self, n_samples, alpha, max_clusters):
        return np.full(int(max_clusters) + 1, math.log(alpha)), log_gamma_counts(int(n_samples))

    def update_alpha(self, rng, alpha, n_clusters, n_samples) -> float:
        prior = self.alpha_prior
        if prior is None:
            return alpha
        return sample_alpha(rng, alpha, n_clusters, n_samples, prior)

    def label(self) -> str:
        return self.title  # alpha has its own place in every summary

    def sample_partition(self, rng, n_samples: int, alpha: float | None = None) -> np.ndarray:
        """A partition drawn from the Chinese restaurant process: each point joins a cluster
        with probability ∝ its size, or a new one ∝ alpha (in linear weights, the draws the
        calibration's data sets were always made with, rather than the base class's log
        weights, which round differently)."""
        alpha = self.alpha_start if alpha is None else float(alpha)
        z = np.empty(n_samples, dtype=np.int64)
        sizes = []
        for i in range(n_samples):
            w = np.array(sizes + [alpha], dtype=np.float64)
            k = int(rng.choice(len(w), p=w / w.sum()))
            if k == len(sizes):
                sizes.append(0)
            sizes[k] += 1
            z[i] = k
        return z

    def describe(self) -> dict:
        value, prior = resolve_alpha(self.alpha)
        out = super().describe()
        out["alpha"] = ({"gamma_shape": prior.shape, "gamma_rate": prior.rate}
                        if prior is not None else value)
        return out
