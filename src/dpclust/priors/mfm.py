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
from scipy.special import gammaln

from .base import (BetaPrior, GammaPrior, PartitionPrior, gamma_or_number, log_gamma_counts,
                   positive_sizes)

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
    return _log_v_rows(n, gamma, k_prior, np.arange(t_max + 1))


def _log_v_rows(n: int, gamma: float, k_prior, ts: np.ndarray) -> np.ndarray:
    """``log V_n(t)`` for each t of ``ts`` (:func:`log_v_coefficients`)."""
    t = np.asarray(ts, dtype=np.float64)[:, None]
    t_max = int(t.max())
    k_hi = int(max(t_max + 64, min(_MAX_K, k_prior.ppf(1 - 1e-12)) + 64))
    while True:
        k = np.arange(1, k_hi + 1, dtype=np.float64)[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            log_fall = np.where(k >= t, gammaln(k + 1) - gammaln(np.maximum(k - t + 1, 1)),
                                -np.inf)
        log_terms = (log_fall - (gammaln(gamma * k + n) - gammaln(gamma * k))
                     + k_prior.logpmf(k))
        top = log_terms.max(axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            log_v = safe + np.log(np.exp(log_terms - safe[:, None]).sum(axis=1))
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


def _check_spec(k_prior: str) -> None:
    """Refuse a ``k_prior`` spec that :func:`k_distribution` would refuse, without
    building the distribution; a learned MU (``poisson:gamma:SHAPE:RATE``) passes."""
    if k_prior.partition(":")[0] == "poisson" and isinstance(_poisson_mu(k_prior), GammaPrior):
        return
    _SpecK(k_prior)


class _SpecK:
    """The log pmf of a ``"poisson:MU"`` or ``"geometric:P"`` prior on K in closed form,
    with an upper quantile bound: what :func:`log_v_coefficients` reads, without the
    cost of building a scipy distribution (a learned MU makes a new one for every value
    the slice sampler tries)."""

    def __init__(self, spec: str):
        kind, _, value = spec.partition(":")
        try:
            v = float(value)
        except ValueError:
            v = math.nan
        if (kind == "poisson" and v > 0 and math.isfinite(v)) or (
                kind == "geometric" and 0 < v <= 1):
            self.kind, self.v = kind, v
        else:
            k_distribution(spec)  # raises the message for a bad spec
            raise ValueError(f"unknown prior on K {spec!r}")

    def logpmf(self, k):
        k = np.asarray(k, dtype=np.float64)
        if self.kind == "poisson":  # K - 1 ~ Poisson(MU)
            return (k - 1) * math.log(self.v) - self.v - gammaln(k)
        if self.v == 1:  # K = 1 surely
            return np.where(k == 1, 0.0, -np.inf)
        return (k - 1) * math.log1p(-self.v) + math.log(self.v)  # K ~ Geometric(P)

    def ppf(self, q: float) -> float:
        """An upper bound of the q-quantile (the series runs on until its tail is small,
        so only the starting length depends on it)."""
        tail = -math.log1p(-q)
        if self.kind == "poisson":
            return 1 + self.v + 2 * math.sqrt(self.v * tail) + tail
        return 1 + tail / max(-math.log1p(-self.v), 1e-12) if self.v < 1 else 1


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
    gamma : float or GammaPrior, default=1.0
        Weights ``Dir(gamma, ..., gamma)`` given K.  A :class:`GammaPrior` learns it: it is
        then resampled after every step from ``p(gamma | z) ∝ p(gamma) V_n(t) prod_c
        gamma^{(|c|)}`` (the EPPF of the block sizes), by slice sampling on its logarithm.
    k_prior : str or scipy.stats frozen discrete distribution on 1, 2, ..., default="poisson:1"
        The prior on the number of components K: ``"poisson:MU"`` (K - 1 ~ Poisson(MU), as
        in Miller & Harrison's experiments), ``"geometric:P"`` (K ~ Geometric(P)), or any
        scipy.stats distribution on 1, 2, ... (a spec string can be saved with the model; a
        distribution object cannot).  ``"poisson:gamma:SHAPE:RATE"`` learns MU under a
        Gamma(SHAPE, RATE) prior, from ``p(MU | z) ∝ p(MU) V_n(t)``; its trace variable is
        ``poisson_mu``.
    """

    gamma: float = 1.0
    k_prior: Any = "poisson:1"
    name = "mfm"
    title = "mixture of finite mixtures"
    learnable = ("gamma", "poisson_mu")
    spec_help = ("mfm[:GAMMA[,poisson:MU | geometric:P]] (K - 1 ~ Poisson(MU) or K ~ "
                 "Geometric(P) on 1, 2, ...; default mfm:1,poisson:1; GAMMA or MU as "
                 "gamma:SHAPE:RATE learns it)")

    @classmethod
    def from_spec(cls, args):
        if len(args) > 2:
            raise ValueError("mfm takes GAMMA and a prior on K (e.g. mfm:1,poisson:1)")
        gamma = gamma_or_number(args[0]) if args else 1.0
        return cls(gamma) if len(args) < 2 else cls(gamma, args[1])

    def __post_init__(self):
        if isinstance(self.gamma, str):
            try:
                object.__setattr__(self, "gamma", gamma_or_number(self.gamma))
            except ValueError:
                raise ValueError(f"the MFM's gamma must be a positive number or a "
                                 f"GammaPrior (gamma:SHAPE,RATE), got {self.gamma!r}") from None
        if isinstance(self.gamma, BetaPrior):
            raise ValueError(f"the MFM's gamma must be a positive number or a GammaPrior, "
                             f"got {self.gamma!r}")
        if not isinstance(self.gamma, GammaPrior):
            try:
                object.__setattr__(self, "gamma", float(self.gamma))
            except (TypeError, ValueError):
                raise ValueError(f"the MFM's gamma must be a positive number or a "
                                 f"GammaPrior, got {self.gamma!r}") from None
        g = self.g
        if not (g > 0 and math.isfinite(g)):
            raise ValueError(f"the MFM's gamma must be a positive finite number, "
                             f"got {self.gamma!r}")
        if isinstance(self.k_prior, str):
            _check_spec(self.k_prior)  # without building the distribution (see ``at``)
        else:
            _check_k_prior(self.k_prior)

    @property
    def g(self) -> float:
        """gamma's value (its hyperprior's starting value while it is learned and
        :meth:`at` has not set it)."""
        return self.value("gamma")

    @property
    def poisson_mu(self):
        """MU of ``k_prior="poisson:MU"``: a number, or the GammaPrior that learns it (None
        for another prior on K)."""
        return _poisson_mu(self.k_prior)

    def _fields_at(self, values: dict) -> dict:
        out = {k: float(v) for k, v in values.items() if k != "poisson_mu"}
        if "poisson_mu" in values:
            out["k_prior"] = f"poisson:{float(values['poisson_mu'])!r}"
        return out

    @property
    def _k_spec(self) -> str:
        """``k_prior`` as a spec with numbers (a learned MU at its starting value)."""
        mu = self.poisson_mu
        return f"poisson:{mu.start!r}" if isinstance(mu, GammaPrior) else self.k_prior

    @property
    def k_distribution(self):
        """The prior on K as a scipy.stats distribution (at MU's starting value while MU
        is learned)."""
        return k_distribution(self._k_spec)

    @property
    def alpha_start(self) -> float:
        return self.g

    def log_v(self, n: int, t_max: int) -> np.ndarray:
        """``log V_n(t)`` for t = 0 .. t_max (computed in sizes that double, and cached)."""
        size = 64
        while size < t_max:
            size *= 2
        size = min(size, max(t_max, n + 1))  # K never exceeds n: V_n(n + 1) is the last
        if "_hyperpriors" in self.__dict__ and isinstance(self.k_prior, str):
            dist = _SpecK(self._k_spec)  # a learned value's copy: no scipy distribution
        else:
            dist = self.k_distribution
        key = self._k_spec if isinstance(self.k_prior, str) else _k_key(dist)
        return _cached_log_v(int(n), self.g, key, size, _Ref(key, dist))[: t_max + 1]

    def log_eppf(self, sizes, alpha: float) -> float:
        sizes = positive_sizes(sizes)
        n, t = int(sizes.sum()), len(sizes)
        g = self.g
        if "_hyperpriors" in self.__dict__ and isinstance(self.k_prior, str):
            # a learned value's copy, made for one evaluation: one row, not the table
            log_v = float(_log_v_rows(n, g, _SpecK(self._k_spec), np.array([t]))[0])
        else:
            log_v = float(self.log_v(n, t)[t])
        return float(log_v + (gammaln(sizes + g) - math.lgamma(g)).sum())

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None):
        g = self.g
        log_join = np.log(np.arange(n_samples + 1) + g)
        log_join[0] = -math.inf
        t_max = n_samples if max_clusters is None else min(n_samples,
                                                            max(64, 2 * max_clusters + 16))
        log_v = self.log_v(n_samples, t_max + 1)
        log_new = math.log(g) + log_v[1:] - log_v[:-1]
        log_new[0] = 0.0  # the first point opens a cluster
        return log_join, log_new[: t_max + 1]

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha) -> float:
        g = self.g
        log_v = self.log_v(int(n_samples), n_clusters + 1)
        return float(log_v[n_clusters + 1] - log_v[n_clusters]
                     + math.lgamma(g + n_left) + math.lgamma(g + n_right)
                     - math.lgamma(g + n_left + n_right) - math.lgamma(g))

    def log_split_terms(self, n_samples, alpha, max_clusters):
        g, n = self.g, int(n_samples)
        top = min(int(max_clusters), n)
        log_v = self.log_v(n, top + 1)
        log_k = np.full(int(max_clusters) + 1, -np.inf)
        with np.errstate(invalid="ignore"):
            ratio = log_v[1:top + 2] - log_v[:top + 1]
        log_k[:top + 1] = np.where(np.isnan(ratio), -np.inf, ratio) + math.log(g)
        return log_k, log_gamma_counts(n, g)

    def describe(self) -> dict:
        learned = self.hyperpriors()  # the copy at learned values too
        kp = self.k_prior if isinstance(self.k_prior, str) else repr(self.k_prior)
        if "poisson_mu" in learned:
            mu = learned["poisson_mu"]
            kp = f"poisson:gamma:{mu.shape:g}:{mu.rate:g}"
        gamma = learned["gamma"].describe() if "gamma" in learned else self.g
        out = {**super().describe(), "gamma": gamma, "K prior": kp}
        if "poisson_mu" not in learned:
            out["prior mean of K"] = float(self.k_distribution.mean())
        return out


def _poisson_mu(k_prior):
    """MU of a ``"poisson:MU"`` spec (a number or a GammaPrior), else None."""
    if not isinstance(k_prior, str):
        return None
    kind, _, rest = k_prior.strip().partition(":")
    if kind.lower() != "poisson":
        return None
    try:
        return gamma_or_number(rest)
    except ValueError:
        return None
