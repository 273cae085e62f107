"""Samplers for Dirichlet process mixtures of Generalized Mallows models (Meilă & Chen 2010).

Both keep each cluster's central ranking ``sigma`` and dispersions ``theta`` in the state and
alternate assignments with cluster updates:

* :class:`SliceGibbs` (the paper's Figure 1): assignments given ``(sigma, theta)`` (Neal's
  algorithm 2, the new-cluster term ``alpha (n - t)! / n!`` of Lemma 1, a new cluster's
  parameters an exact draw given its one ranking), then ``n_gibbs`` rounds of sigma | theta
  and ``n_slices`` slice-sampling steps of each theta_j | sigma.  With ``sigma_step="mh"``
  (the default) every step leaves the posterior invariant: it is exact MCMC.
* :class:`BetaGibbs` (the paper's Figure 5): theta integrated out of the assignments and
  drawn for sigma's update with the Beta approximations of the n → ∞ limit (Lemma 4), new
  clusters' sigma by Sample-σ-N1.  **Approximate**: its stationary distribution is not the
  posterior (close when the number of items is large); it is the faster of the two.

The sigma | theta step: the paper's stagewise draw (Lemma 2) is exact only when the later
stages' normalisers do not depend on the earlier choices, which fails in general (ALGORITHMS.md
§5 gives a 4-item case at total variation 0.17).  ``sigma_step="mh"`` uses it as an
independence proposal in a Metropolis-Hastings step, which is exact and costs one more pass
over the stages, followed by a scan of Metropolis swaps of neighbouring items (O(1) each,
exact): with hundreds of items the independence proposal is accepted rarely (about 1 % of
rounds on 533 items), and the swaps keep sigma moving.  ``sigma_step="stagewise"`` takes the
draw as it is, as in the paper.

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Neal, R. M. (2003). Slice sampling. Annals of Statistics 31(3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import betaln

from ..families import _mallows_kernels as gmk
from ..families.mallows import GeneralizedMallows, MallowsParams, cumulative_log_psi
from . import _mallows_kernels as _k
from .base import MixtureModel, initial_labels, relabel
from .crp import crp_log_prior

_SIGMA_STEPS = {"mh": _k.SIGMA_MH, "stagewise": _k.SIGMA_STAGEWISE}


class MallowsState(NamedTuple):
    """Partition, each cluster's parameters (cluster k = label k) and alpha."""

    labels: np.ndarray
    params: MallowsParams
    alpha: float


class MallowsInfo(NamedTuple):
    """Diagnostics of one step (fields of :class:`StepInfo` first)."""

    log_joint: float
    n_clusters: int
    alpha: float
    n_accepted_splits: int = 0
    n_accepted_merges: int = 0
    sigma_acceptance: float = 1.0


@dataclass(frozen=True)
class _MallowsGibbs:
    n_gibbs: int = 10
    n_slices: int = 3
    sigma_step: str = "mh"
    random_scan: bool = True

    _theta_mode = _k.THETA_SLICE
    name = "mallows"

    def __post_init__(self):
        if self.sigma_step not in _SIGMA_STEPS:
            raise ValueError(f"sigma_step must be 'mh' or 'stagewise', got {self.sigma_step!r}")
        for field in ("n_gibbs", "n_slices"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")

    # ------------------------------------------------------------------ init
    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> MallowsState:
        """Random labels over ``n_clusters`` clusters (or the given ones), each cluster's
        parameters drawn from the prior and then updated given its rankings."""
        fam = _check_family(model, self.name)
        labels = initial_labels(rng, model.n_samples, labels, n_clusters)
        k = int(labels.max()) + 1
        params = fam.sample_prior(rng, k)
        order = np.array(params.order)
        theta = np.array(params.theta)
        self._update_clusters(rng, model, labels, order, theta)
        return MallowsState(labels, MallowsParams(order, theta), float(alpha))

    # ------------------------------------------------------------------ step
    def step(self, rng, state: MallowsState, model: MixtureModel):
        fam = _check_family(model, self.name)
        X = model.X
        n, J = fam.n_items_, fam.max_length_
        labels = np.array(state.labels, dtype=np.int64)
        k = int(labels.max()) + 1
        cap = k + 16
        order = np.zeros((cap, n), dtype=np.int64)
        theta = np.ones((cap, J))
        order[:k] = state.params.order
        theta[:k] = state.params.theta
        counts = np.zeros(cap, dtype=np.int64)
        counts[:k] = np.bincount(labels, minlength=k)
        perm = rng.permutation(model.n_samples) if self.random_scan else np.arange(
            model.n_samples)
        log_new = fam.log_prior_predictive(X)
        seed = np.uint64(rng.integers(0, 2**63 - 1))
        order, theta, counts = self._sweep(model, fam, labels, order, theta, counts, perm,
                                           log_new, math.log(state.alpha), seed)
        # compact to clusters 0..K-1 by first appearance
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(order[old_ids])
        theta = np.ascontiguousarray(theta[old_ids])
        accepted = self._update_clusters(rng, model, labels, order, theta)
        k = len(old_ids)
        alpha = model.update_alpha(rng, state.alpha, k)
        params = MallowsParams(order, theta)
        log_joint = instantiated_log_joint(fam, X, labels, params, alpha)
        info = MallowsInfo(log_joint, k, alpha,
                           sigma_acceptance=float(accepted.sum()) / (k * self.n_gibbs))
        return MallowsState(labels, params, alpha), info

    def _update_clusters(self, rng, model, labels, order, theta):
        fam = model.family
        X = model.X
        n = fam.n_items_
        k = order.shape[0]
        members = np.argsort(labels, kind="stable").astype(np.int64)
        starts = np.zeros(k + 1, dtype=np.int64)
        starts[1:] = np.cumsum(np.bincount(labels, minlength=k))
        rank = _ranks(order)
        scratch_f = np.zeros((3, n))
        scratch_i = np.zeros((6, n), dtype=np.int64)
        E = np.zeros((n, n))
        accepted = np.zeros(k, dtype=np.int64)
        seed = np.uint64(rng.integers(0, 2**63 - 1))
        _k.update_clusters(X.orders, X.lengths, members, starts, order, rank, theta,
                           fam.nu_r_, float(fam.nu), self.n_gibbs, self.n_slices,
                           _SIGMA_STEPS[self.sigma_step], self._theta_mode,
                           _n1_cdf(fam), seed, scratch_f, E, scratch_i, accepted)
        return accepted


@dataclass(frozen=True)
class SliceGibbs(_MallowsGibbs):
    """Slice-Gibbs for DP mixtures of GM models (Meilă & Chen 2010, Figure 1): exact MCMC
    with ``sigma_step="mh"``.

    Parameters
    ----------
    n_gibbs : int, default=10
        ``T_Gibbs``: rounds of sigma | theta and theta | sigma per cluster and iteration (the
        paper's choice).
    n_slices : int, default=3
        ``T_Slices``: slice-sampling steps per theta_j and round (the paper's choice).
    sigma_step : {"mh", "stagewise"}, default="mh"
        ``"mh"``: the stagewise draw as a Metropolis-Hastings proposal, then a scan of
        neighbour swaps (exact; the default because the stagewise draw alone is not the
        conditional of sigma);
        ``"stagewise"``: the paper's draw taken as it is (approximate).
    random_scan : bool, default=True
        Visit the rankings in a new random order each sweep.
    """

    name = "slice-gibbs"

    def _sweep(self, model, fam, labels, order, theta, counts, perm, log_new, log_alpha,
               seed):
        X = model.X
        n = fam.n_items_
        sw = _SweepArrays(order, counts, fam.max_length_)
        thetaT = np.ascontiguousarray(theta.T)
        neg_cumT = np.ascontiguousarray(-cumulative_log_psi(theta, n).T)
        hull = np.empty((3, gmk._MAX_HULL))
        pos, state = 0, seed
        while True:
            pos, state = _k.slice_gibbs_sweep(
                X.orders, X.lengths, perm, pos, labels, counts, sw.log_counts, order,
                sw.rankT, theta, thetaT, neg_cumT, log_new, log_alpha, fam.nu_r_,
                float(fam.nu), np.uint64(state), sw.scratch_i, sw.scratch_f, sw.rstore,
                sw.logw, sw.cand, sw.code, hull[0], hull[1], hull[2])
            if pos >= len(perm):
                return order, theta, counts
            order, theta, counts = _grow(order, theta, counts)
            thetaT, neg_cumT = _grow_columns(thetaT, neg_cumT)
            sw = sw.grown(order, counts)


@dataclass(frozen=True)
class BetaGibbs(_MallowsGibbs):
    """Beta-Gibbs for DP mixtures of GM models (Meilă & Chen 2010, Figure 5).

    **Approximate**: theta is integrated out of the assignments with the Beta approximation
    of the n → ∞ limit (Lemma 4) and drawn from it (``exp(-theta_j) ~ Beta(nu r_j + S_j,
    nu + N_j + 1)``); a new or single-ranking cluster's sigma comes from Sample-σ-N1.  Its
    draws are not from the posterior; the error shrinks as the number of items grows
    (``benchmarks/`` shows the Beta approximation's relative error, the paper's Figure 7).
    Its iterations cost 20–35 % less than :class:`SliceGibbs`'s on the paper's artificial
    data (20 items), with no slice sampling; on few items (9 candidates of the Dublin West
    ballots) Slice-Gibbs is the faster of the two.

    Parameters
    ----------
    n_gibbs : int, default=10
        ``T_Gibbs``: rounds of sigma | theta and theta | sigma per cluster and iteration.
    sigma_step : {"mh", "stagewise"}, default="mh"
        As for :class:`SliceGibbs` (the MH step is exact for sigma given theta; the chain as
        a whole stays approximate).
    random_scan : bool, default=True
    """

    n_slices: int = 1  # unused: theta | sigma is a Beta draw
    name = "beta-gibbs"
    _theta_mode = _k.THETA_BETA

    def _sweep(self, model, fam, labels, order, theta, counts, perm, log_new, log_alpha,
               seed):
        X = model.X
        J = fam.max_length_
        cap = order.shape[0]
        sw = _SweepArrays(order, counts, J)
        ST = np.zeros((J, cap))
        NT = np.zeros((J, cap))
        _k.cluster_code_stats(X.orders, X.lengths, labels, sw.rankT, ST, NT)
        kappaT = np.zeros((J + 1, cap))
        nu_r, nu = fam.nu_r_, float(fam.nu)
        for c in range(cap):
            _k._refresh_beta_terms(ST, NT, c, nu_r, nu, kappaT)
        n1 = _n1_cdf(fam)
        pos, state = 0, seed
        while True:
            pos, state = _k.beta_gibbs_sweep(
                X.orders, X.lengths, perm, pos, labels, counts, sw.log_counts, order, sw.rankT,
                ST, NT, kappaT, log_new, log_alpha, nu_r, nu, n1, np.uint64(state),
                sw.scratch_i, sw.scratch_f, sw.rstore, sw.logw, sw.cand, sw.code)
            if pos >= len(perm):
                return order, theta, counts
            order, theta, counts = _grow(order, theta, counts)
            ST, NT, kappaT = _grow_columns(ST, NT, kappaT)
            sw = sw.grown(order, counts)


# ------------------------------------------------------------------- helpers
def _check_family(model: MixtureModel, name: str) -> GeneralizedMallows:
    fam = model.family
    if not isinstance(fam, GeneralizedMallows):
        raise TypeError(f"sampler {name!r} fits GeneralizedMallows mixtures of rankings; "
                        f"got the family {type(fam).__name__}")
    return fam


def _ranks(order: np.ndarray) -> np.ndarray:
    rank = np.empty_like(order)
    rows = np.arange(order.shape[0])[:, None]
    rank[rows, order] = np.arange(order.shape[1])[None, :]
    return rank


class _SweepArrays:
    """The assignment sweep's working arrays for ``cap`` cluster slots: log counts, ranks
    cluster-major (``rankT[item, c]``), and scratch."""

    def __init__(self, order, counts, J):
        cap, n = order.shape
        self.J = J
        self.rankT = np.ascontiguousarray(_ranks(order).T)
        with np.errstate(divide="ignore"):
            self.log_counts = np.log(counts.astype(np.float64))
        self.scratch_i = np.zeros((3, max(cap, n)), dtype=np.int64)
        self.scratch_f = np.zeros((1, cap))
        self.rstore = np.zeros((max(J, 1), cap), dtype=np.int64)
        self.logw = np.empty(cap + 2)
        self.cand = np.empty(cap + 2, dtype=np.int64)
        self.code = np.empty(max(J, 1), dtype=np.int64)

    def grown(self, order, counts):
        return _SweepArrays(order, counts, self.J)


def _grow_columns(*arrays):
    """Double the number of cluster slots of cluster-major arrays (last axis)."""
    out = []
    for a in arrays:
        b = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        b[..., :a.shape[-1]] = a
        out.append(b)
    return tuple(out)


def _grow(*arrays):
    """Double the number of cluster slots of every array (new slots empty)."""
    out = []
    for a in arrays:
        b = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
        b[:a.shape[0]] = a
        out.append(b)
    return tuple(out)


def _n1_cdf(fam: GeneralizedMallows) -> np.ndarray:
    """CDF over ``k = 0 .. n-j-1`` of Sample-σ-N1's code ``V_j`` (∝ ``B(nu r_j + k, nu +
    2)``), one row per rank, padded with 1 (computed once per prior, not per step)."""
    return _n1_cdf_of(fam.n_items_, float(fam.nu), tuple(fam.nu_r_))


@lru_cache(maxsize=16)
def _n1_cdf_of(n: int, nu: float, nu_r: tuple) -> np.ndarray:
    k = np.arange(n)
    out = np.ones((len(nu_r), n))
    for j, a in enumerate(nu_r):
        m = n - j - 1
        lw = betaln(a + k[:m + 1], nu + 2.0)
        w = np.exp(lw - lw.max())
        out[j, :m + 1] = np.cumsum(w) / w.sum()
    out.flags.writeable = False
    return out


def instantiated_log_joint(fam: GeneralizedMallows, X, labels, params: MallowsParams,
                           alpha: float) -> float:
    """``log p(z | alpha) + sum_c log P0(sigma_c, theta_c) + sum_i log GM(pi_i | sigma_{z_i},
    theta_{z_i})``: the joint density of the state of an instantiated sampler."""
    labels = np.asarray(labels, dtype=np.int64)
    k = params.order.shape[0]
    counts = np.bincount(labels, minlength=k)
    cum = cumulative_log_psi(params.theta, fam.n_items_)
    loglik = _k.instantiated_log_likelihood(X.orders, X.lengths, labels, _ranks(params.order),
                                            params.theta, cum)
    return float(crp_log_prior(counts, alpha) + fam.log_prior(params).sum() + loglik)


__all__ = ["BetaGibbs", "MallowsInfo", "MallowsState", "SliceGibbs", "instantiated_log_joint"]
