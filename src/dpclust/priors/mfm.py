"""The mixture of finite mixtures (MFM) prior on partitions (Miller & Harrison 2018).

K ~ ``k_prior`` on 1, 2, ...; weights ``Dir(gamma, ..., gamma)`` given K; the partition of a
finite mixture with an unknown number of components.  Its EPPF is
``p(z) = V_n(t) prod_c gamma^{(|c|)}`` with t the number of blocks, rising factorials
``gamma^{(m)} = Gamma(gamma + m) / Gamma(gamma)`` and the coefficients

    V_n(t) = sum_{k >= t} k_(t) / (gamma k)^{(n)} p_K(k),   k_(t) = k! / (k - t)!

(Miller & Harrison 2018, eq. 3.2).  Its restaurant process: a point joins a cluster of size c
with weight ``c + gamma`` and opens a new one with weight ``gamma V_n(t + 1) / V_n(t)``
(their eq. 3.5).  Unlike the Dirichlet process, the number of clusters does not grow without
bound when the data come from a finite mixture: the DP's posterior keeps adding small
clusters as N grows (Miller & Harrison 2013), the MFM's concentrates on the true K.

``V_n(t)`` is computed in log space by summing the series over k until its terms are 40 nats
below the sum and falling, for the t a chain reaches (tables grow on demand: the Gibbs
sweeps stop and ask for more when K outgrows them).

References
----------
Miller, J. W. & Harrison, M. T. (2018). Mixture models with a prior on the number of
    components. JASA 113(521), 340-356, sections 3.1-3.2.
Miller, J. W. & Harrison, M. T. (2013). A simple example of Dirichlet process mixture
    inconsistency for the number of components. NeurIPS.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from .base import PartitionPrior, positive_sizes

#: a term this many nats below the running sum, and falling, ends the series
_TAIL_NATS = 40.0
_MAX_K = 10_000_000


def log_v_coefficients(n: int, gamma: float, k_prior, t_max: int) -> np.ndarray:
    """``log V_n(t)`` for t = 0 .. t_max (Miller & Harrison 2018, eq. 3.2).

    Parameters
    ----------
    n : int
        Number of points.
    gamma : float
        The Dirichlet parameter of the weights given K.
    k_prior : scipy.stats frozen discrete distribution on 1, 2, ...
    t_max : int
        The largest number of blocks needed.
    """
    t = np.arange(t_max + 1)[:, None]
    k_hi = int(max(t_max + 64, min(_MAX_K, k_prior.ppf(1 - 1e-12)) + 64))
    while True:
        k = np.arange(1, k_hi + 1, dtype=np.float64)[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            log_fall = np.where(k >= t, gammaln(k + 1) - gammaln(np.maximum(k - t + 1, 1)),
                                -np.inf)
        log_terms = (log_fall - (gammaln(gamma * k + n) - gammaln(gamma * k))
                     + k_prior.logpmf(k))
        log_v = logsumexp(log_terms, axis=1)
        last, before = log_terms[:, -1], log_terms[:, -2]
        done = (last < log_v - _TAIL_NATS) & (last <= before)
        if done.all() or k_hi >= _MAX_K:
            return log_v
        k_hi *= 2


def k_distribution(k_prior):
    """The scipy.stats distribution of a ``k_prior`` given as one, or as a spec
    ``"poisson:MU"`` (K - 1 ~ Poisson(MU)) or ``"geometric:P"`` (K ~ Geometric(P) on 1, 2,
    ...)."""
    if not isinstance(k_prior, str):
        return k_prior
    return _k_from_spec(k_prior)


@functools.lru_cache(maxsize=64)
def _k_from_spec(k_prior: str):
    from scipy import stats

    kind, _, value = k_prior.partition(":")
    try:
        value = float(value)
    except ValueError:
        value = None
    if kind == "poisson" and value is not None and value > 0:
        return stats.poisson(value, loc=1)
    if kind == "geometric" and value is not None and 0 < value <= 1:
        return stats.geom(value)
    raise ValueError(f"unknown prior on K {k_prior!r}: use poisson:MU (MU > 0) or geometric:P "
                     f"(0 < P <= 1), or a scipy.stats distribution on 1, 2, ...")


def _k_key(dist) -> tuple:
    """A hashable description of a frozen scipy distribution (for the coefficients' cache)."""
    name = getattr(getattr(dist, "dist", None), "name", None)
    if name is None:
        return ("object", id(dist))
    return (name, tuple(float(a) for a in dist.args),
            tuple(sorted((k, float(v)) for k, v in dist.kwds.items())))


@functools.lru_cache(maxsize=1024)
def _cached_log_v(n: int, gamma: float, key: tuple, size: int, dist_ref) -> np.ndarray:
    out = log_v_coefficients(n, gamma, dist_ref.dist, size)
    out.flags.writeable = False
    return out


class _Ref:
    """Carries a distribution into the cache without making it part of the key."""

    def __init__(self, key, dist):
        self.key, self.dist = key, dist

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Ref) and self.key == other.key


def _check_k_prior(k_prior):
    if not (hasattr(k_prior, "logpmf") and hasattr(k_prior, "ppf")):
        raise ValueError("k_prior must be a scipy.stats discrete distribution (e.g. "
                         "scipy.stats.poisson(1, loc=1)), got {k_prior!r}")
    if float(k_prior.pmf(0)) > 0 or float(k_prior.cdf(0)) > 0:
        raise ValueError("k_prior must put no mass on K = 0: shift it to 1, 2, ... (e.g. "
                         "scipy.stats.poisson(mu, loc=1) for K - 1 ~ Poisson(mu))")


@dataclass(frozen=True)
class MixtureOfFiniteMixtures(PartitionPrior):
    """The mixture-of-finite-mixtures prior on partitions.

    Parameters
    ----------
    gamma : float, default=1.0
        Weights ``Dir(gamma, ..., gamma)`` given K.
    k_prior : str or scipy.stats frozen discrete distribution on 1, 2, ..., default="poisson:1"
        The prior on the number of components K: ``"poisson:MU"`` (K - 1 ~ Poisson(MU), as
        in Miller & Harrison's experiments), ``"geometric:P"`` (K ~ Geometric(P)), or any
        scipy.stats distribution on 1, 2, ... (a spec string can be saved with the model; a
        distribution object cannot).
    """

    gamma: float = 1.0
    k_prior: Any = "poisson:1"
    name = "mfm"
    title = "mixture of finite mixtures"
    spec_help = ("mfm[:GAMMA[,poisson:MU | geometric:P]] (K - 1 ~ Poisson(MU) or K ~ "
                 "Geometric(P) on 1, 2, ...; default mfm:1,poisson:1)")

    @classmethod
    def from_spec(cls, args):
        if len(args) > 2:
            raise ValueError("mfm takes GAMMA and a prior on K (e.g. mfm:1,poisson:1)")
        gamma = float(args[0]) if args else 1.0
        return cls(gamma) if len(args) < 2 else cls(gamma, args[1])

    def __post_init__(self):
        if not (self.gamma > 0 and math.isfinite(self.gamma)):
            raise ValueError(f"the MFM's gamma must be a positive finite number, "
                             f"got {self.gamma!r}")
        _check_k_prior(k_distribution(self.k_prior))

    @property
    def k_distribution(self):
        """The prior on K as a scipy.stats distribution."""
        return k_distribution(self.k_prior)

    @property
    def alpha_start(self) -> float:
        return float(self.gamma)

    def log_v(self, n: int, t_max: int) -> np.ndarray:
        """``log V_n(t)`` for t = 0 .. t_max (computed in sizes that double, and cached)."""
        size = 64
        while size < t_max:
            size *= 2
        size = min(size, max(t_max, n + 1))  # K never exceeds n: V_n(n + 1) is the last
        dist = self.k_distribution
        key = self.k_prior if isinstance(self.k_prior, str) else _k_key(dist)
        return _cached_log_v(int(n), float(self.gamma), key, size, _Ref(key, dist))[: t_max + 1]

    def log_eppf(self, sizes, alpha: float) -> float:
        sizes = positive_sizes(sizes)
        n, t = int(sizes.sum()), len(sizes)
        g = float(self.gamma)
        return float(self.log_v(n, t)[t] + (gammaln(sizes + g) - math.lgamma(g)).sum())

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        g = float(self.gamma)
        log_join = np.log(np.arange(n_samples + 1) + g)
        log_join[0] = -math.inf
        t_max = n_samples if max_clusters is None else min(n_samples,
                                                            max(64, 2 * max_clusters + 16))
        log_v = self.log_v(n_samples, t_max + 1)
        log_new = math.log(g) + log_v[1:] - log_v[:-1]
        log_new[0] = 0.0  # the first point opens a cluster
        return log_join, log_new[: t_max + 1]

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        g = float(self.gamma)
        log_v = self.log_v(int(n_samples), n_clusters + 1)
        return float(log_v[n_clusters + 1] - log_v[n_clusters]
                     + math.lgamma(g + n_left) + math.lgamma(g + n_right)
                     - math.lgamma(g + n_left + n_right) - math.lgamma(g))

    def describe(self) -> dict:
        kp = self.k_prior if isinstance(self.k_prior, str) else repr(self.k_prior)
        return {**super().describe(), "gamma": float(self.gamma), "K prior": kp,
                "prior mean of K": float(self.k_distribution.mean())}
