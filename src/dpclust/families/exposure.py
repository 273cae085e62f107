r"""Counts over exposures with Gamma rates: the conjugate form of Plackett–Luce given its
latents.

A data point is a row of ``n`` counts ``c_j >= 0`` with exposures ``e_j >= 0``; within a
cluster column ``j`` has a rate ``lambda_j ~ Gamma(a, rate b)`` and the row's density is

.. math::

    f(c, e \mid \lambda) = \prod_j \lambda_j^{c_j} e^{-\lambda_j e_j},

a Poisson process with rate ``lambda_j`` observed for time ``e_j`` (for a count above 1
the Poisson ``- log c_j!`` is left out: it does not depend on the partition, and the latents'
counts are 0 or 1).  The marginal of a cluster holding ``C_j`` counts over ``E_j`` exposure is

.. math::

    f(X_k) = \prod_j \frac{b^a\,\Gamma(a + C_j)}{\Gamma(a)\,(b + E_j)^{a + C_j}} .

This is exactly what a Plackett–Luce cluster becomes given the Gamma latents of Caron &
Doucet (2012): with one latent ``Z_s ~ Exp(Lambda_s)`` per stage of a ranking, the pair
(ranking, latents) has density ``prod_s lambda_pi(s) exp(-Z_s Lambda_s)``, which is the row
above with ``c_j = 1`` for a ranked item and ``e_j`` the latents of the stages where item
``j`` was still available.  :mod:`dpclust.samplers.augmented` runs the collapsed samplers
on these rows (:meth:`dpclust.families.PlackettLuce.latent_family`).  The family is not
offered for data of its own.

References
----------
Caron, F. & Doucet, A. (2012). Efficient Bayesian inference for generalized Bradley–Terry
    models. *JCGS* 21(1), 174-196.
Bernardo, J. M. & Smith, A. F. M. (1994). Bayesian Theory (the Gamma–Poisson pair).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from . import _exposure_kernels as _k
from ._exposure_entry import ENTRY_POINTS
from .base import ConjugateFamily, FamilyKernel, PassKernel, log_gamma


class ExposureData(NamedTuple):
    """Rows of counts over exposures, both (N, n) float64."""

    counts: np.ndarray
    exposure: np.ndarray


class ExposureStats(NamedTuple):
    """``n`` (K,) rows per cluster, ``C`` and ``E`` (K, n) summed counts and exposures."""

    n: np.ndarray
    C: np.ndarray
    E: np.ndarray


class RateParams(NamedTuple):
    """Each cluster's rates, in log space: ``log_rate`` (K, n)."""

    log_rate: np.ndarray


class GammaExposure(ConjugateFamily):
    """Counts over exposures, each column a Poisson process with a ``Gamma(shape, rate)``
    rate (module notes).

    Parameters
    ----------
    shape, rate : float, default=1.0
        The Gamma prior of every column's rate.
    n_features : int or None
        Columns; None takes them from the data.
    """

    name = "gamma-exposure"
    title = "Gamma–Poisson with exposures"
    describes = "counts over exposures (Plackett–Luce given its latents)"
    kernel_stats_hold_prior = False
    kmeans_start = False

    def __init__(self, shape=1.0, rate=1.0, n_features=None):
        self.shape = shape
        self.rate = rate
        self.n_features_in = n_features

    def get_params(self, deep: bool = True) -> dict:
        return {"shape": self.shape, "rate": self.rate, "n_features": self.n_features_in}

    # --------------------------------------------------------------- set-up
    def validate(self, X, *, what: str = "X") -> ExposureData:
        if not isinstance(X, ExposureData):
            raise TypeError(f"{what} must be an ExposureData (counts, exposure), got "
                            f"{type(X).__name__}")
        counts = np.ascontiguousarray(X.counts, dtype=np.float64)
        exposure = np.ascontiguousarray(X.exposure, dtype=np.float64)
        if counts.ndim != 2 or counts.shape != exposure.shape:
            raise ValueError(f"{what}: counts {counts.shape} and exposures {exposure.shape} "
                             "must be two arrays of the same (rows, columns) shape")
        if not (np.isfinite(counts).all() and np.isfinite(exposure).all()):
            raise ValueError(f"{what} holds values that are not finite")
        if (counts < 0).any() or (exposure < 0).any():
            raise ValueError(f"{what} holds negative counts or exposures")
        return ExposureData(counts, exposure)

    def resolve(self, X) -> GammaExposure:
        for name in ("shape", "rate"):
            v = float(getattr(self, name))
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        n = X.counts.shape[1] if self.n_features_in is None else int(self.n_features_in)
        return GammaExposure(float(self.shape), float(self.rate), n)

    @property
    def is_resolved(self) -> bool:
        return self.n_features_in is not None

    def n_features(self) -> int:
        if self.n_features_in is None:
            raise ValueError("the family has no number of columns until it is resolved")
        return int(self.n_features_in)

    #: from this many rows on the sub-cluster sampler's pass scores at drawn rates
    INSTANTIATED_FROM = 10_000

    def collapsed_pass(self, n_samples: int, n_rounds: int = 1) -> bool:
        """Below :attr:`INSTANTIATED_FROM` rows.  From there on the restricted Gibbs pass
        at drawn rates, which scores a row with ``sum_j c_j log lambda_j - lambda_j e_j``
        (no logarithm) where the collapsed predictive takes one a column: on all 29,988
        Dublin West ballots its iteration cost 0.184 s against 0.256 s, and on the ballots
        ten times over 0.368 s against 0.993 s (as much as explicit Gibbs), with a higher
        log-likelihood after 120 s from 10 clusters (``benchmarks/bench_pl_scale.py``).
        On small data the collapsed pass is the checked one: the pass at drawn rates
        matches the exact posterior of five ballots only slowly (TV 0.036 at 15,000 steps,
        0.016-0.024 at 40,000), and its simulation-based calibration fails on the
        log-likelihood at the collapsed pass's chain length (p = 0.0002) but passes at
        five times that length (burn-in 300, thinning 15: every p >= 0.047)."""
        return n_samples < self.INSTANTIATED_FROM

    # -------------------------------------------------------------- rows
    def n_points(self, X) -> int:
        return X.counts.shape[0]

    def subset(self, X, index):
        return ExposureData(X.counts[index], X.exposure[index])

    def stack_rows(self, parts: list):
        return ExposureData(np.concatenate([p.counts for p in parts]),
                            np.concatenate([p.exposure for p in parts]))

    def distinct(self, X):
        """Every row its own (exposures are continuous)."""
        N = self.n_points(X)
        return np.arange(N), np.arange(N), np.ones(N, dtype=np.int64)

    def init_features(self, X):
        return None

    # ----------------------------------------------------------- statistics
    def stats(self, X, labels=None, n_clusters=None) -> ExposureStats:
        N = self.n_points(X)
        if labels is None:
            labels, n_clusters = np.zeros(N, dtype=np.int64), 1
        labels = np.asarray(labels, dtype=np.int64)
        if n_clusters is None:
            n_clusters = int(labels.max()) + 1 if N else 0
        out = self.empty_stats(n_clusters)
        for j in range(out.C.shape[1]):  # a bincount a column: np.add.at is slow per row
            out.C[:, j] = np.bincount(labels, X.counts[:, j], minlength=n_clusters)
            out.E[:, j] = np.bincount(labels, X.exposure[:, j], minlength=n_clusters)
        out.n[:] = np.bincount(labels, minlength=n_clusters)
        return out

    def empty_stats(self, n_clusters: int = 1) -> ExposureStats:
        n = self.n_features()
        return ExposureStats(np.zeros(n_clusters), np.zeros((n_clusters, n)),
                             np.zeros((n_clusters, n)))

    def combine(self, a, b) -> ExposureStats:
        return ExposureStats(a.n + b.n, a.C + b.C, a.E + b.E)

    def subtract(self, a, b) -> ExposureStats:
        out = ExposureStats(a.n - b.n, a.C - b.C, np.maximum(a.E - b.E, 0.0))
        if np.any(out.n < 0) or np.any(out.C < -1e-9):
            raise ValueError("cannot remove more rows than a cluster holds")
        return out

    def count(self, stats) -> np.ndarray:
        return np.asarray(stats.n)

    # ------------------------------------------------------------ posterior
    def posterior(self, stats) -> ExposureStats:
        """Each column's ``Gamma(a + C, b + E)`` as ``(n, shape, rate)``."""
        return ExposureStats(stats.n, float(self.shape) + stats.C, float(self.rate) + stats.E)

    def log_marginal(self, stats) -> np.ndarray:
        a, b = float(self.shape), float(self.rate)
        per = (a * math.log(b) - gammaln(a) + gammaln(a + stats.C)
               - (a + stats.C) * np.log(b + stats.E))
        return np.where(np.asarray(stats.n) > 0, per.sum(axis=1), 0.0)

    def log_predictive(self, X, stats) -> np.ndarray:
        """``log f(x_i | X_k)``, the ratio of the marginals with and without row ``i``."""
        N, K = self.n_points(X), len(stats.n)
        base = self.log_marginal(stats)
        out = np.empty((N, K))
        for k in range(K):
            both = ExposureStats(stats.n[k] + np.ones(N), stats.C[k] + X.counts,
                                 stats.E[k] + X.exposure)
            out[:, k] = self.log_marginal(both) - base[k]
        return out

    def sample_posterior(self, stats, rng) -> RateParams:
        """``lambda_kj ~ Gamma(a + C_kj, b + E_kj)``, in log space."""
        post = self.posterior(stats)
        return RateParams(log_gamma(rng, post.C) - np.log(post.E))

    def point_params(self, stats, rng=None) -> RateParams:
        post = self.posterior(stats)
        return RateParams(np.log(post.C) - np.log(post.E))

    def log_likelihood(self, X, params: RateParams) -> np.ndarray:
        log_rate = np.atleast_2d(params.log_rate)
        return X.counts @ log_rate.T - X.exposure @ np.exp(log_rate).T

    def sample_data(self, params: RateParams, components, rng, exposure=1.0) -> ExposureData:
        """Counts of each row's component over ``exposure`` (1 by default)."""
        components = np.asarray(components, dtype=np.int64)
        rate = np.exp(np.asarray(params.log_rate)[components])
        e = np.broadcast_to(np.asarray(exposure, dtype=np.float64), rate.shape).copy()
        return ExposureData(rng.poisson(rate * e).astype(np.float64), e)

    def mean_params(self, stats) -> dict:
        post = self.posterior(stats)
        return {"rates": post.C / post.E}

    # ------------------------------------------------------------- kernels
    def kernel_hyper(self, kernel=None):
        a, b = float(self.shape), float(self.rate)
        return (np.array([a, b, a * math.log(b) - math.lgamma(a)]),)

    def kernel(self, X) -> FamilyKernel:
        n = self.n_features()

        def alloc(capacity: int):
            return (np.zeros(capacity), np.zeros((capacity, n)), np.zeros((capacity, n)))

        data = (np.ascontiguousarray(X.counts, dtype=np.float64),
                np.ascontiguousarray(X.exposure, dtype=np.float64))
        return FamilyKernel(data=data, hyper=self.kernel_hyper(), alloc=alloc,
                            reset=_k._pe_reset, add=_k._pe_add, remove=_k._pe_remove,
                            log_predictive=_k._pe_log_predictive,
                            log_marginal=_k._pe_log_marginal, entry_points=ENTRY_POINTS,
                            log_join_gain=_k._pe_log_join_gain)

    def pass_kernel(self, X, summary=None) -> PassKernel:
        kern = self.kernel(X)
        n = self.n_features()

        def pack(params: RateParams):
            log_rate = np.ascontiguousarray(params.log_rate, dtype=np.float64)
            return (log_rate, np.exp(log_rate))

        def unpack(acc):
            return ExposureStats(acc[:, 0].copy(), acc[:, 1:n + 1].copy(),
                                 acc[:, n + 1:2 * n + 1].copy())

        return PassKernel(data=kern.data, n_stats=2 * n + 1, pack=pack, unpack=unpack,
                          log_likelihood=_k._pe_log_likelihoods,
                          accumulate=_k._pe_accumulate, entry_points=ENTRY_POINTS)


__all__ = ["ExposureData", "ExposureStats", "GammaExposure", "RateParams"]
