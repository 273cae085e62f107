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

Speed.  The assignments given ``(sigma, theta)`` use the clusters' parameters of the start of
the sweep, so when rankings repeat (ballots: 10,230 distinct among the 29,988 Dublin West
ballots) Slice-Gibbs scores each distinct ranking against every cluster once per sweep, in
parallel (:func:`dpclust.samplers._mallows_kernels.score_table`), and only a cluster opened
during the sweep is scored ranking by ranking.  The cluster updates are independent given
the rankings and run in parallel, each cluster on its own random stream, and a large
cluster's rounds read per-rank count tables instead of its rankings.  Neither changes the
kernel, and the chain is the same on any number of threads.

Split-merge moves (``split_merge=M``: M proposals per iteration).  Moving one ranking at a
time cannot split or merge clusters of hundreds of rankings, so both samplers can add exact
Metropolis-Hastings moves on whole clusters, in the spirit of Jain & Neal (2004, 2007) and
Dahl (2003).  A proposal draws two distinct rankings ``i``, ``j`` uniformly; ``S`` is the
union of their clusters less ``i`` and ``j``.

* *Launch* (auxiliary variables, drawn afresh with the same law in both directions, since
  they depend on ``S``, ``i`` and ``j`` only): two GM components fitted by ``launch_iter``
  steps of stochastic EM on a subsample of ``S`` (at most ``launch_size`` rankings),
  started from the anchors' own rankings; and the theta ``theta_m`` at which the merged
  cluster's central ranking is proposed (conditional modes given a central ranking drawn
  at the launch's mean theta).
* *Split* (``i``, ``j`` in one cluster c): each ranking of ``S`` goes to side 0 (with ``i``)
  or side 1 (with ``j``) independently, with probability ∝ ``w_s GM(pi | launch_s)``
  (``q_alloc``); each side's central ranking is drawn from the stagewise distribution
  ``q_s(sigma)`` at its theta's conditional modes given the launch's central ranking and the
  side's rankings; each side's theta is then drawn exactly from its conditional given sigma
  (adaptive rejection sampling).
* *Merge* (``i``, ``j`` in different clusters): the merged central ranking is drawn from the
  stagewise distribution at ``theta_m``, its theta exactly given sigma.

* *Random-proportion allocation* (a share ``random_share`` of the proposals, chosen
  independently of the state, so that the mixture of the two kernels is exact): a
  proportion ``rho ~ U(0, 1)``, then each ranking of ``S`` on side 1 with probability
  ``rho``; the launch is the anchors' own rankings.  Integrated over ``rho``, an allocation
  with ``m_0`` and ``m_1`` rankings on the sides has ``q_alloc = B(m_0 + 1, m_1 + 1)``, which
  cancels the CRP's ``Gamma(n_0) Gamma(n_1) / Gamma(n_0 + n_1)`` up to a polynomial factor:
  the reverse split of two overlapping clusters no longer costs the launch's confidence in
  each ranking's side (about 1-2 nats a ranking on real ballots), so such clusters can merge.

* *Anchors by cluster* (a share ``cluster_share`` of the proposals): an ordered pair of
  clusters ``(a, b)`` uniform among the ``K^2``; ``a = b`` proposes to split it with two
  distinct uniform members as anchors, ``a != b`` to merge them with a uniform anchor in
  each.  Anchors by ranking propose splits of a cluster in proportion to its size squared
  and mostly pair the largest clusters; by cluster every pair is proposed equally often.
  The ratio then carries the selection probabilities, ``P(merge | split state) / P(split |
  merged state) = K_M^2 n_c (n_c - 1) / (K_S^2 n_0 n_1)`` with ``K_S = K_M + 1`` clusters in
  the split state.

Because each theta is proposed from its exact conditional, the thetas cancel from the ratio:
``P0(theta) prod GM(pi | sigma, theta) / p(theta | sigma, X)`` is the one-dimensional
integral ``M(X | sigma) = P0(sigma) prod_j Z(nu r_j + S_j(sigma), nu + N_j) / Z(nu r_j,
nu)`` (compiled Gauss-Kronrod quadrature, :func:`dpclust.families._mallows_kernels.
log_theta_integral`).  The split's log ratio is then

    log alpha + log Gamma(n_0) + log Gamma(n_1) - log Gamma(n_0 + n_1)
    + log M(X_0 | sigma_0) + log M(X_1 | sigma_1) - log M(X_c | sigma_c)
    - log q_0(sigma_0) - log q_1(sigma_1) + log q_m(sigma_c) - log q_alloc(sides),

and a merge's is its negative, evaluated at the current clusters (``q_alloc`` of the current
sides, ``q_s`` of the current central rankings).  The exact tests (``tests/test_mallows.py``)
run the moves alone, without the assignment sweep, against enumerated posteriors.

Birth and death of components (``birth_death=M``: M proposals per iteration, off by default).
The moves above draw the allocation first and the parameters given it, so the reverse of a
merge must propose the current partition of the two clusters, one of a vast number of nearly
equally good ones when clusters overlap.  These moves draw the parameters first and the
allocation from its conditional given them, so the partition leaves the ratio:

* *Birth* in a uniform cluster ``c`` (rankings ``S``): a new component ``phi_b`` from a
  proposal that reads ``S`` and ``phi_c`` but never the allocation (a seed ranking of ``S``
  uniformly; ``sigma_b ~ GM(seed's items, then the others in sigma_c's order; theta_p = 1)``
  over whole permutations; ``theta_b`` from its conditional density given sigma_b at the
  rankings' responsibilities ``GM_b / (GM_b + GM_c)``); a proportion ``rho ~ Beta(m_c + 1,
  m_b + 1)`` at the soft counts; each ranking of ``S`` to ``c`` or ``b`` from ``rho GM_c :
  (1 - rho) GM_b``.  ``c`` keeps its parameters.
* *Death* of ``b`` into ``a`` (an ordered pair of clusters, uniform): the rankings of ``b``
  join ``a``; ``rho ~ Beta(n_a + 1, n_b + 1)``, the reverse birth's proportion, is an
  auxiliary variable whose density turns the CRP's Gamma terms into a polynomial.

The birth's log ratio is ``log alpha + log [n_c (n_c + 1) / (n_a n_b)] + log P0(phi_b) -
log q(phi_b) - log q(rho) + sum_{pi in S} log [rho + (1 - rho) GM_b(pi) / GM_c(pi)] -
log(K + 1)``: the mixture likelihood of ``S`` with the new component against without it
(:class:`_BirthDeath`).  Exact (``tests/test_mallows.py``), but on the Dublin West ballots
they are accepted about once in a thousand proposals: on an equilibrated state of 10,000
ballots (47 clusters) the death of a cluster into another loses a median 830 nats of that
mixture likelihood (only clusters of one ranking die), and a birth from a seed ranking fits
its share of the rankings worse than the cluster does (median -15 nats).  On 2,000 ballots
(18 clusters) deaths lose a median 440 nats, and births that fit their central ranking to
the rankings a seed stands for (the stagewise distribution of the responsibility-weighted
rankings, a mixture over 8 auxiliary seeds: tried, not kept) gain a median -1 nats of
mixture likelihood (at best +10) but pay the prior's price of a component (log 9! = 12.8
nats for sigma, about 5 for theta), so their log ratio is a median -23, as with the seed
proposal kept here.  The clusters are not redundant, and a new one is worth less than its
price; what moves slowly is how the components tile the rankings, which neither kind of
move changes.

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Neal, R. M. (2003). Slice sampling. Annals of Statistics 31(3).
Jain, S. & Neal, R. M. (2004, 2007). Split-merge Markov chain Monte Carlo procedures for
    Dirichlet process mixture models (conjugate; non-conjugate). JCGS; Bayesian Analysis.
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report, University of Wisconsin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import betaln, expit
from scipy.stats import beta as beta_dist

from ..families import _mallows_kernels as gmk
from ..families.mallows import GeneralizedMallows, MallowsParams, cumulative_log_psi
from . import _mallows_kernels as _k
from ..kernels.subcluster import chunk_seeds
from .base import MixtureModel, initial_labels, relabel
from .crp import crp_log_prior

_SIGMA_STEPS = {"mh": _k.SIGMA_MH, "stagewise": _k.SIGMA_STAGEWISE}
#: Slice-Gibbs scores each distinct ranking once per sweep (a table) when there are at most
#: this share of distinct rankings
_TABLE_SHARE = 0.75
#: dispersion of the birth's central-ranking proposal around its seed ranking
_BIRTH_THETA = 1.0


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
    log_likelihood: float = float("nan")
    sigma_acceptance: float = 1.0
    n_accepted_births: int = 0
    n_accepted_deaths: int = 0


@dataclass(frozen=True)
class _MallowsGibbs:
    n_gibbs: int = 10
    n_slices: int = 3
    sigma_step: str = "mh"
    random_scan: bool = True
    split_merge: int = 0
    launch_iter: int = 4
    launch_size: int = 200
    random_share: float = 0.5
    cluster_share: float = 0.5
    birth_death: int = 0

    _theta_mode = _k.THETA_SLICE
    name = "mallows"
    #: fits families without a collapsed form (their parameters instantiated), DP only
    needs = "instantiated"
    priors = ("dp",)
    is_exact = True

    def __post_init__(self):
        if self.sigma_step not in _SIGMA_STEPS:
            raise ValueError(f"sigma_step must be 'mh' or 'stagewise', got {self.sigma_step!r}")
        for field in ("n_gibbs", "n_slices", "launch_size"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        for field in ("random_share", "cluster_share"):
            value = getattr(self, field)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field} must lie in [0, 1], got {value!r}")
        for field in ("split_merge", "launch_iter", "birth_death"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{field} must be a non-negative integer, got {value!r}")

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
        splits = merges = 0
        if self.split_merge:
            moves = _SplitMerge(fam, X, self.launch_iter, self.launch_size, rng)
            labels, order, theta, splits, merges = moves.run(
                rng, labels, order, theta, state.alpha, self.split_merge, self.random_share,
                self.cluster_share)
        births = deaths = 0
        if self.birth_death:
            moves = _BirthDeath(fam, X, rng)
            labels, order, theta, births, deaths = moves.run(
                rng, labels, order, theta, state.alpha, self.birth_death)
        accepted = self._update_clusters(rng, model, labels, order, theta)
        k = order.shape[0]
        alpha = model.update_alpha(rng, state.alpha, k)
        params = MallowsParams(order, theta)
        log_lik = instantiated_log_likelihood(fam, X, labels, params)
        log_joint = (crp_log_prior(np.bincount(labels, minlength=k), alpha)
                     + float(fam.log_prior(params).sum()) + log_lik)
        info = MallowsInfo(log_joint, k, alpha, splits, merges, log_lik,
                           sigma_acceptance=float(accepted.sum()) / (k * self.n_gibbs),
                           n_accepted_births=births, n_accepted_deaths=deaths)
        return MallowsState(labels, params, alpha), info

    def _update_clusters(self, rng, model, labels, order, theta):
        fam = model.family
        X = model.X
        k = order.shape[0]
        members = np.argsort(labels, kind="stable").astype(np.int64)
        starts = np.zeros(k + 1, dtype=np.int64)
        starts[1:] = np.cumsum(np.bincount(labels, minlength=k))
        rank = _ranks(order)
        accepted = np.zeros(k, dtype=np.int64)
        seeds = chunk_seeds(int(rng.integers(0, 2**63 - 1)), k)
        _k.update_clusters(X.orders, X.lengths, members, starts, order, rank, theta,
                           fam.nu_r_, float(fam.nu), self.n_gibbs, self.n_slices,
                           _SIGMA_STEPS[self.sigma_step], self._theta_mode,
                           _n1_cdf(fam), seeds, accepted)
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
    split_merge : int, default=0
        Exact split-merge proposals per iteration (module notes); 0 turns them off.
    launch_iter : int, default=4
        Stochastic EM steps of a split-merge proposal's launch.
    launch_size : int, default=200
        Most rankings in the subsample a launch is fitted to.
    random_share : float, default=0.5
        Share of the split-merge proposals whose allocation is the random-proportion one
        (module notes) rather than the fitted launch's.
    cluster_share : float, default=0.5
        Share of the split-merge proposals whose anchors are drawn by cluster (an ordered
        pair of clusters uniformly) rather than as two uniform rankings.
    birth_death : int, default=0
        Exact birth and death proposals per iteration, with the allocation drawn from the
        proposed parameters (module notes); 0 turns them off.
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
        first, inverse = X.distinct()
        table = np.zeros((0, 0))
        if len(first) <= _TABLE_SHARE * len(inverse):
            # repeated rankings (ballots): score each distinct one once, in parallel
            table = np.empty((len(first), len(counts)))
            _k.score_table(X.orders, X.lengths, first, sw.rankT, thetaT, neg_cumT, counts,
                           table)
        fresh = np.zeros(len(counts), dtype=np.bool_)
        while True:
            pos, state = _k.slice_gibbs_sweep(
                X.orders, X.lengths, perm, pos, labels, counts, sw.log_counts, order,
                sw.rankT, theta, thetaT, neg_cumT, log_new, log_alpha, fam.nu_r_,
                float(fam.nu), np.uint64(state), inverse, table, fresh, sw.scratch_i,
                sw.scratch_f, sw.rstore, sw.logw, sw.cand, sw.code, hull[0], hull[1], hull[2])
            if pos >= len(perm):
                return order, theta, counts
            order, theta, counts = _grow(order, theta, counts)
            thetaT, neg_cumT = _grow_columns(thetaT, neg_cumT)
            sw = sw.grown(order, counts)
            # the new slots open during the sweep: scored directly
            fresh = np.concatenate([fresh, np.ones(len(counts) - len(fresh), np.bool_)])


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
    split_merge, launch_iter, launch_size, random_share, cluster_share, birth_death
        As for :class:`SliceGibbs`: the moves target the exact posterior (they integrate
        theta numerically or draw it exactly, with no Beta approximation).
    """

    n_slices: int = 1  # unused: theta | sigma is a Beta draw
    name = "beta-gibbs"
    is_exact = False  # the Beta approximation of the theta integrals (Meila & Chen 2010)
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


# ------------------------------------------------------------------- split-merge
class _SplitMerge:
    """Exact split-merge moves for DP mixtures of GM models (see the module notes).

    One move: two distinct rankings ``i``, ``j`` drawn uniformly; ``S`` the rankings of
    their clusters other than ``i`` and ``j``.  A *launch* (a function of ``S``, ``i``,
    ``j`` and fresh randomness only) fits two GM components by ``launch_iter`` steps of
    stochastic EM on a subsample of ``S`` of at most ``launch_size`` rankings, started from
    the anchors' own rankings.  If ``i`` and ``j`` share a cluster, the move proposes to
    split it: each ranking of ``S`` goes to side 0 (with ``i``) or side 1 (with ``j``)
    independently, with probability ∝ its weight under the launch components; each side's
    central ranking is drawn from the stagewise distribution at its theta's conditional
    modes (given the launch's central ranking); each theta is integrated out of the ratio
    and drawn exactly afterwards.  Otherwise it proposes to merge the two clusters, and the
    ratio scores the reverse split with the same launch.
    """

    def __init__(self, fam, X, launch_iter, launch_size, rng):
        self.orders, self.lengths = X.orders, X.lengths
        self.n = n = fam.n_items_
        self.J = J = fam.max_length_
        self.nu_r = fam.nu_r_
        self.nu = float(fam.nu)
        self.log_z0 = fam.log_prior_normalisers()
        self.launch_iter = int(launch_iter)
        self.launch_size = int(launch_size)
        self.state = np.uint64(rng.integers(0, 2**63 - 1))
        # scratch of the stagewise distribution and of the statistics
        self.a = np.zeros(n)
        self.E = np.zeros((n, n))
        self.present = np.zeros(n, dtype=np.int64)
        self.mark = np.zeros(n, dtype=np.int64)
        self.col = np.zeros(n)
        self.alive = np.zeros(n, dtype=np.int64)
        self.absent = np.zeros(n, dtype=np.int64)
        self.logw = np.zeros(n)
        self.free = np.zeros(n, dtype=np.int64)
        self.code = np.zeros(max(J, 1), dtype=np.int64)
        self.S = np.zeros(J)
        self.Nj = np.zeros(J)
        self.cum = np.zeros((2, J + 1))
        self.hull = np.empty((3, gmk._MAX_HULL))

    # ------------------------------------------------------------ pieces
    def _stats(self, members, rank):
        _k.side_code_stats(self.orders, self.lengths, members, rank, self.S, self.Nj,
                           self.code)
        return self.S, self.Nj

    def _modes(self, members, rank):
        S, Nj = self._stats(members, rank)
        out = np.empty(self.J)
        _k.theta_modes(S, Nj, self.nu_r, self.nu, self.n, out)
        return out

    def _log_marginal(self, members, rank):
        S, Nj = self._stats(members, rank)
        return _k.log_marginal_given_sigma(S, Nj, self.nu_r, self.nu, self.n, self.log_z0)

    def _draw_thetas(self, members, rank):
        S, Nj = self._stats(members, rank)
        out = np.empty(self.J)
        self.state = np.uint64(_k.draw_thetas(S, Nj, self.nu_r, self.nu, self.n,
                                                self.state, out, *self.hull))
        return out

    def _sigma(self, members, theta, order=None):
        """Draw a central ranking (``order=None``; returns ``(order, rank, log_q)``) or score
        the given one (returns its log probability) under the stagewise distribution."""
        replay = order is not None
        out = np.array(order, dtype=np.int64) if replay else np.empty(self.n, dtype=np.int64)
        rank = np.empty(self.n, dtype=np.int64)
        state, log_q = _k.sigma_proposal(
            self.orders, self.lengths, members, theta, replay, out, rank, self.state, self.a,
            self.E, self.present, self.mark, self.col, self.alive, self.absent, self.logw)
        self.state = np.uint64(state)
        return log_q if replay else (out, rank, log_q)

    def _allocate(self, points, launch, sides=None):
        draw = sides is None
        if draw:
            sides = np.empty(len(points), dtype=np.int64)
        (_, rank0, th0), (_, rank1, th1), lw = launch
        state, log_q = _k.allocate_sides(self.orders, self.lengths, points, rank0, th0,
                                         rank1, th1, lw[0], lw[1], draw, sides,
                                         self.state, self.cum[0], self.cum[1])
        self.state = np.uint64(state)
        return sides, log_q

    @staticmethod
    def _random_sides(rng, points, sides=None):
        """The random-proportion allocation: a proportion ``rho ~ U(0, 1)``, then each
        ranking on side 1 with probability ``rho``.  Integrated over ``rho``, a given
        allocation with ``m_0`` and ``m_1`` rankings on the sides has probability
        ``B(m_0 + 1, m_1 + 1)``."""
        if sides is None:
            sides = (rng.random(len(points)) < rng.random()).astype(np.int64)
        m1 = int(sides.sum())
        return sides, float(betaln(len(points) - m1 + 1.0, m1 + 1.0))

    def _launch(self, rng, rest, i, j, n_iter=None):
        """Two components fitted to ``rest`` by stochastic EM from the anchors ``i``, ``j``:
        ``((order0, rank0, theta0), (order1, rank1, theta1), (log w0, log w1))``."""
        sub = rest if len(rest) <= self.launch_size else rng.choice(rest, self.launch_size,
                                                                    replace=False)
        sides = []
        for anchor in (i, j):
            order = np.empty(self.n, dtype=np.int64)
            rank = np.empty(self.n, dtype=np.int64)
            zero = np.zeros(max(self.J, 1), dtype=np.int64)
            self.state = np.uint64(gmk.place_by_codes(self.orders, anchor,
                                                      self.lengths[anchor], zero, self.n,
                                                      self.state, order, rank, self.free))
            one = np.array([anchor], dtype=np.int64)
            sides.append((order, rank, self._modes(one, rank)))
        lw = (math.log(0.5), math.log(0.5))
        launch = (sides[0], sides[1], lw)
        for _ in range(self.launch_iter if n_iter is None else n_iter):
            alloc, _ = self._allocate(sub, launch)
            fitted = []
            for s, anchor in enumerate((i, j)):
                members = np.concatenate(([anchor], sub[alloc == s])).astype(np.int64)
                order, rank, _ = self._sigma(members, launch[s][2])
                fitted.append((order, rank, self._modes(members, rank)))
            n1 = float(alloc.sum())
            lw = (math.log((len(sub) - n1 + 1.0) / (len(sub) + 2.0)),
                  math.log((n1 + 1.0) / (len(sub) + 2.0)))
            launch = (fitted[0], fitted[1], lw)
        return launch

    def _merged_theta(self, launch, members):
        """The stagewise distribution's theta for the merged cluster: conditional modes
        given a central ranking drawn at the launch's mean theta (fresh randomness)."""
        _, rank, _ = self._sigma(members, 0.5 * (launch[0][2] + launch[1][2]))
        return self._modes(members, rank)

    def move(self, rng, labels, order, theta, log_alpha, i, j, random_allocation=False,
             n_clusters=None):
        """One split-merge proposal anchored at rankings ``i`` and ``j``; updates ``labels``,
        ``order`` and ``theta`` (lists of rows) in place when accepted.  Returns ``"split"``,
        ``"merge"`` or None.  ``random_allocation`` uses the random-proportion allocation
        (and the anchors' own rankings as the launch) instead of the fitted launch.
        ``n_clusters``: the anchors were drawn by cluster (:meth:`run`) among this many
        clusters, rather than uniformly among the rankings, and the ratio carries the
        selection probabilities."""
        ci, cj = int(labels[i]), int(labels[j])
        if ci == cj:
            union = np.flatnonzero(labels == ci)
        else:
            union = np.flatnonzero((labels == ci) | (labels == cj))
        rest = union[(union != i) & (union != j)]
        launch = self._launch(rng, rest, i, j, 0 if random_allocation else None)
        theta_c = self._merged_theta(launch, union)
        split = ci == cj
        if split:
            if random_allocation:
                sides, log_alloc = self._random_sides(rng, rest)
            else:
                sides, log_alloc = self._allocate(rest, launch)
            part = [np.concatenate(([i], rest[sides == 0])).astype(np.int64),
                    np.concatenate(([j], rest[sides == 1])).astype(np.int64)]
        else:
            sides = (labels[rest] == cj).astype(np.int64)
            if random_allocation:
                _, log_alloc = self._random_sides(rng, rest, sides)
            else:
                _, log_alloc = self._allocate(rest, launch, sides)
            in_i = labels[union] == ci
            part = [union[in_i], union[~in_i]]
        # the split state against the merged one (module notes): prior, marginals given
        # the central rankings, and the proposal's terms
        terms = {"crp": log_alpha + math.lgamma(len(part[0])) + math.lgamma(len(part[1]))
                 - math.lgamma(len(union)), "alloc": -log_alloc, "marginal": 0.0,
                 "sigma": 0.0}
        if n_clusters is not None:
            # anchors by cluster: an ordered pair of clusters uniform among K^2, then a
            # uniform anchor in each (a split: an ordered pair of distinct members), so
            # P(merge | split state) / P(split | merged state) =
            # [K_M^2 n_c (n_c - 1)] / [K_S^2 n_0 n_1], K_S = K_M + 1
            k_m = n_clusters if split else n_clusters - 1
            terms["select"] = (2.0 * math.log(k_m) - 2.0 * math.log(k_m + 1)
                               + math.log(len(union)) + math.log(len(union) - 1)
                               - math.log(len(part[0])) - math.log(len(part[1])))
        drawn = []
        for s, c in enumerate((ci, cj)):
            th = self._modes(part[s], launch[s][1])
            if split:
                o, r, log_q = self._sigma(part[s], th)
                drawn.append((o, r))
            else:
                r = _ranks(order[c][None, :])[0]
                log_q = self._sigma(part[s], th, order[c])
            terms["marginal"] += self._log_marginal(part[s], r)
            terms["sigma"] -= log_q
        if split:
            r = _ranks(order[ci][None, :])[0]
            log_q = self._sigma(union, theta_c, order[ci])
        else:
            o, r, log_q = self._sigma(union, theta_c)
        terms["marginal"] -= self._log_marginal(union, r)
        terms["sigma"] += log_q
        log_ratio = sum(terms.values())
        if not split:
            log_ratio = -log_ratio
        if math.log1p(-rng.random()) >= log_ratio:
            return None
        if split:
            labels[part[1]] = len(order)
            order[ci] = drawn[0][0]
            theta[ci] = self._draw_thetas(part[0], drawn[0][1])
            order.append(drawn[1][0])
            theta.append(self._draw_thetas(part[1], drawn[1][1]))
            return "split"
        else:
            labels[part[1]] = ci
            order[ci] = o
            theta[ci] = self._draw_thetas(union, r)
            return "merge"

    # ------------------------------------------------------------- moves
    def run(self, rng, labels, order, theta, alpha, n_moves, random_share=0.0,
            cluster_share=0.0):
        """``n_moves`` split-merge proposals, each with the random-proportion allocation
        with probability ``random_share`` and with anchors drawn by cluster with
        probability ``cluster_share`` (choices independent of the state, so the mixture of
        the kernels is exact); returns the new ``(labels, order, theta)`` (clusters
        compacted) and the numbers of accepted splits and merges.

        Anchors by ranking: two distinct rankings uniformly, so a split is proposed for a
        cluster in proportion to its size squared.  Anchors by cluster: an ordered pair of
        clusters uniformly (the same cluster twice: a split of it, with two distinct
        members as anchors), so mid-sized clusters are proposed for merging far more often
        than among rankings, where the largest clusters dominate."""
        labels = np.array(labels, dtype=np.int64)
        order = [row.copy() for row in order]
        theta = [row.copy() for row in theta]
        N = len(labels)
        log_alpha = math.log(alpha)
        splits = merges = 0
        if N < 2:
            return labels, np.array(order), np.array(theta), 0, 0
        for _ in range(n_moves):
            random_allocation = random_share > 0 and rng.random() < random_share
            by_cluster = cluster_share > 0 and rng.random() < cluster_share
            k = None
            if by_cluster:
                live = np.flatnonzero(np.bincount(labels, minlength=len(order)))
                k = len(live)
                a, b = live[rng.integers(k, size=2)]
                members_a = np.flatnonzero(labels == a)
                if a == b:
                    if len(members_a) < 2:
                        continue  # no split of a single ranking: the move is rejected
                    i, j = rng.choice(members_a, 2, replace=False)
                else:
                    i = rng.choice(members_a)
                    j = rng.choice(np.flatnonzero(labels == b))
                i, j = int(i), int(j)
            else:
                i = int(rng.integers(N))
                j = int(rng.integers(N - 1))
                j += j >= i
            kind = self.move(rng, labels, order, theta, log_alpha, i, j, random_allocation, k)
            splits += kind == "split"
            merges += kind == "merge"
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(np.array(order)[old_ids])
        theta = np.ascontiguousarray(np.array(theta)[old_ids])
        return labels, order, theta, splits, merges


# ------------------------------------------------------------------- birth and death
class _BirthDeath:
    """Exact birth and death of components inside a pair of clusters, with the allocation
    drawn from the proposed parameters (see the module notes).

    *Birth* in cluster ``c`` (members ``S``, parameters ``phi_c``): a new component ``phi_b =
    (sigma_b, theta_b)`` from a proposal that reads the rankings of ``S`` and ``phi_c`` but
    never the allocation (:meth:`_birth`), a share ``rho`` of ``S`` for ``c`` from ``Beta(m_a +
    1, m_b + 1)`` at the rankings' soft counts, then each ranking of ``S`` to ``c`` or to the
    new cluster from its conditional ``rho GM_c : (1 - rho) GM_b``.  *Death* of ``b`` into
    ``a``: every ranking of ``b`` goes to ``a``, whose parameters stay; ``rho`` is drawn
    from ``Beta(n_a + 1, n_b + 1)``, an auxiliary variable of the reverse birth.  Because the
    allocation is drawn from its conditional given ``(rho, phi_a, phi_b)``, the partition of
    ``S`` leaves the ratio, whatever its volume, and the birth's log ratio is

        log alpha + log [n_c (n_c + 1) / (n_a n_b)] + log P0(phi_b) - log q(phi_b) - log q(rho)
        + sum_{pi in S} log [rho + (1 - rho) GM_b(pi) / GM_c(pi)] - log(K + 1),

    the last term the selection probabilities (a birth in a uniform cluster of the ``K``, a
    death of an ordered pair uniform among the ``(K + 1) K`` of the other state); a death's
    is its negative, at the current clusters.
    """

    def __init__(self, fam, X, rng, theta_p=_BIRTH_THETA):
        self.orders, self.lengths = X.orders, X.lengths
        self.first, self.inverse = X.distinct()
        self.n = n = fam.n_items_
        self.J = J = fam.max_length_
        self.nu_r = fam.nu_r_
        self.nu = float(fam.nu)
        self.fam = fam
        self.theta_p = float(theta_p)
        self.state = np.uint64(rng.integers(0, 2**63 - 1))
        self.cum = np.zeros(J + 1)
        self.code = np.zeros(max(J, 1), dtype=np.int64)
        self.S = np.zeros(J)
        self.Nj = np.zeros(J)
        self.centre = np.zeros(n, dtype=np.int64)
        self.crank = np.zeros(n, dtype=np.int64)
        self.left = np.zeros(n, dtype=np.int64)
        self.hull = np.empty((3, gmk._MAX_HULL))

    def _distinct(self, members):
        """The distinct rankings among ``members``: representatives, each member's index
        among them, and their counts."""
        uniq, loc, cnt = np.unique(self.inverse[members], return_inverse=True,
                                   return_counts=True)
        return self.first[uniq], loc.reshape(-1), cnt.astype(np.float64)

    def _scores(self, reps, order_row, theta_row):
        out = np.empty(len(reps))
        _k.component_scores(self.orders, self.lengths, reps, _ranks(order_row[None, :])[0],
                            theta_row, self.n, self.cum, out)
        return out

    def _birth(self, reps, cnt, order_a, theta_a, l_a, order_b=None, theta_b=None):
        """Draw the new component (``order_b=None``) or score the given one: returns
        ``(order_b, theta_b, log q(phi_b), l_b)``, ``l_b`` its log GM of each
        representative."""
        draw = order_b is None
        if draw:
            order_b = np.empty(self.n, dtype=np.int64)
            theta_b = np.empty(self.J)
        log_w = np.log(cnt / cnt.sum())
        state, lq_sigma = _k.central_proposal(
            self.orders, self.lengths, reps, log_w, order_a, self.theta_p, draw, order_b,
            self.state, self.centre, self.crank, self.left)
        state, lq_theta = _k.theta_proposal(
            self.orders, self.lengths, reps, cnt, l_a, _ranks(order_b[None, :])[0],
            np.asarray(theta_a),
            self.nu_r, self.nu, self.n, draw, theta_b, np.uint64(state), self.cum, self.code,
            self.S, self.Nj, *self.hull)
        self.state = np.uint64(state)
        return order_b, theta_b, lq_sigma + lq_theta, self._scores(reps, order_b, theta_b)

    @staticmethod
    def _soft(cnt, l_a, l_b):
        """Soft count of the new component: ``sum cnt GM_b / (GM_a + GM_b)``."""
        return float((cnt * expit(l_b - l_a)).sum())

    def _log_ratio(self, log_alpha, k_merged, cnt, l_a, l_b, soft, rho, n_a, n_b, log_q,
                   order_b, theta_b):
        """The birth's log Hastings ratio (class notes); ``soft`` is :meth:`_soft`."""
        n_c = n_a + n_b
        log_q_rho = float(beta_dist.logpdf(rho, n_c - soft + 1.0, soft + 1.0))
        mix = float((cnt * np.logaddexp(math.log(rho), math.log1p(-rho) + l_b - l_a)).sum())
        return (log_alpha + math.log(n_c) + math.log(n_c + 1.0) - math.log(n_a)
                - math.log(n_b) + float(self.fam.log_prior(
                    MallowsParams(order_b[None, :], theta_b[None, :]))[0])
                - log_q - log_q_rho + mix
                - math.log(k_merged + 1.0))

    def birth(self, rng, labels, order, theta, log_alpha, c, k):
        """Propose a birth in cluster ``c`` (``k`` clusters); True when accepted."""
        members = np.flatnonzero(labels == c)
        n_c = len(members)
        if n_c < 2:
            return False
        reps, loc, cnt = self._distinct(members)
        l_a = self._scores(reps, order[c], theta[c])
        order_b, theta_b, log_q, l_b = self._birth(reps, cnt, order[c], theta[c], l_a)
        soft = self._soft(cnt, l_a, l_b)
        rho = float(rng.beta(n_c - soft + 1.0, soft + 1.0))
        if not 0.0 < rho < 1.0:
            return False
        # each ranking to the new component with probability (1 - rho) GM_b / (...)
        p_b = expit(math.log1p(-rho) - math.log(rho) + l_b - l_a)
        to_b = rng.random(n_c) < p_b[loc]
        n_b = int(to_b.sum())
        if n_b == 0 or n_b == n_c:
            return False  # an empty cluster: outside the state space
        log_ratio = self._log_ratio(log_alpha, k, cnt, l_a, l_b, soft, rho, n_c - n_b, n_b,
                                    log_q, order_b, theta_b)
        if math.log1p(-rng.random()) >= log_ratio:
            return False
        labels[members[to_b]] = len(order)
        order.append(order_b)
        theta.append(theta_b)
        return True

    def death(self, rng, labels, order, theta, log_alpha, a, b, k):
        """Propose the death of cluster ``b`` into ``a`` (``k`` clusters); True when
        accepted."""
        in_a = labels == a
        in_b = labels == b
        members = np.flatnonzero(in_a | in_b)
        n_a, n_b = int(in_a.sum()), int(in_b.sum())
        reps, _, cnt = self._distinct(members)
        l_a = self._scores(reps, order[a], theta[a])
        _, _, log_q, l_b = self._birth(reps, cnt, order[a], theta[a], l_a, order[b],
                                       theta[b])
        rho = float(rng.beta(n_a + 1.0, n_b + 1.0))
        if not 0.0 < rho < 1.0:
            return False
        log_ratio = -self._log_ratio(log_alpha, k - 1, cnt, l_a, l_b,
                                     self._soft(cnt, l_a, l_b), rho, n_a, n_b, log_q,
                                     order[b], theta[b])
        if math.log1p(-rng.random()) >= log_ratio:
            return False
        labels[in_b] = a
        return True

    def run(self, rng, labels, order, theta, alpha, n_moves):
        """``n_moves`` proposals, each a birth (probability 1/2, in a uniform cluster) or a
        death (an ordered pair of clusters, uniform); returns the new ``(labels, order,
        theta)`` (clusters compacted) and the numbers of accepted births and deaths."""
        labels = np.array(labels, dtype=np.int64)
        order = [row.copy() for row in order]
        theta = [row.copy() for row in theta]
        log_alpha = math.log(alpha)
        births = deaths = 0
        for _ in range(n_moves):
            live = np.flatnonzero(np.bincount(labels, minlength=len(order)))
            k = len(live)
            if rng.random() < 0.5:
                c = int(live[rng.integers(k)])
                births += self.birth(rng, labels, order, theta, log_alpha, c, k)
            elif k >= 2:
                a, b = rng.choice(live, 2, replace=False)
                deaths += self.death(rng, labels, order, theta, log_alpha, int(a), int(b), k)
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(np.array(order)[old_ids])
        theta = np.ascontiguousarray(np.array(theta)[old_ids])
        return labels, order, theta, births, deaths


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


def instantiated_log_likelihood(fam: GeneralizedMallows, X, labels,
                                params: MallowsParams) -> float:
    """``sum_i log GM(pi_i | sigma_{z_i}, theta_{z_i})``."""
    labels = np.asarray(labels, dtype=np.int64)
    cum = cumulative_log_psi(params.theta, fam.n_items_)
    return float(_k.instantiated_log_likelihood(X.orders, X.lengths, labels,
                                                _ranks(params.order), params.theta, cum))


def instantiated_log_joint(fam: GeneralizedMallows, X, labels, params: MallowsParams,
                           alpha: float) -> float:
    """``log p(z | alpha) + sum_c log P0(sigma_c, theta_c) + sum_i log GM(pi_i | sigma_{z_i},
    theta_{z_i})``: the joint density of the state of an instantiated sampler."""
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels, minlength=params.order.shape[0])
    return float(crp_log_prior(counts, alpha) + fam.log_prior(params).sum()
                 + instantiated_log_likelihood(fam, X, labels, params))


__all__ = ["BetaGibbs", "MallowsInfo", "MallowsState", "SliceGibbs", "instantiated_log_joint",
           "instantiated_log_likelihood"]
