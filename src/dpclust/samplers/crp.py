"""The Chinese-restaurant-process prior on partitions and the concentration parameter.

References
----------
Escobar, M. D. & West, M. (1995). Bayesian density estimation and inference using mixtures.
    JASA 90(430), section 6 (the auxiliary-variable update of alpha).
ALGORITHMS.md section 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln


@dataclass(frozen=True)
class GammaPrior:
    """A Gamma(shape, rate) prior on the DP concentration ``alpha``; pass it as ``alpha=``.

    Parameters
    ----------
    shape : float, default=1.0
    rate : float, default=1.0
        Prior mean ``shape / rate``.
    initial : float, optional
        Starting value of alpha (default: the prior mean).
    """

    shape: float = 1.0
    rate: float = 1.0
    initial: float | None = None

    def __post_init__(self):
        if not (0 < self.shape < math.inf and 0 < self.rate < math.inf):
            raise ValueError(f"GammaPrior needs finite shape > 0 and rate > 0, got {self}")
        if self.initial is not None and not 0 < self.initial < math.inf:
            raise ValueError(f"GammaPrior initial value must be positive and finite, got "
                             f"{self.initial}")

    @property
    def start(self) -> float:
        return float(self.initial) if self.initial is not None else self.shape / self.rate

    def log_pdf(self, alpha: float) -> float:
        a, b = self.shape, self.rate
        return a * math.log(b) - math.lgamma(a) + (a - 1) * math.log(alpha) - b * alpha


def resolve_alpha(alpha) -> tuple[float, GammaPrior | None]:
    """Split the estimator's ``alpha`` argument into (initial value, prior or None)."""
    if isinstance(alpha, GammaPrior):
        return alpha.start, alpha
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

    ``K log alpha + sum_k lgamma(N_k) + lgamma(alpha) - lgamma(alpha + N)`` (ALGORITHMS.md §2).
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    sizes = sizes[sizes > 0]
    n = sizes.sum()
    return float(len(sizes) * math.log(alpha) + gammaln(sizes).sum()
                 + math.lgamma(alpha) - math.lgamma(alpha + n))


def finite_dirichlet_log_prior(sizes, alpha: float, n_components: int) -> float:
    """``log p(partition)`` under a K-component mixture with weights ``Dir(alpha/K, ...)``.

    Summing the labelled prior over the ``K! / (K - K+)!`` labellings of a partition with
    ``K+`` blocks gives ``log K!/(K-K+)! + lgamma(alpha) - lgamma(alpha + N)
    + sum_b [lgamma(alpha/K + N_b) - lgamma(alpha/K)]``.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    sizes = sizes[sizes > 0]
    k_plus = len(sizes)
    if k_plus > n_components:
        return -math.inf
    a = alpha / n_components
    n = sizes.sum()
    return float(math.lgamma(n_components + 1) - math.lgamma(n_components - k_plus + 1)
                 + math.lgamma(alpha) - math.lgamma(alpha + n)
                 + (gammaln(a + sizes) - math.lgamma(a)).sum())


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
