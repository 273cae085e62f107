"""Generalized Mallows components for top-t rankings (Meilă & Chen 2010; Mathematics §5).

A top-t ranking ``pi`` lists ``t <= n - 1`` distinct items of ``0 .. n-1``, best first.  Given
a central ranking ``sigma`` (a permutation) its codes are

    s_j(pi | sigma) = #{items sigma ranks before pi(j), not among pi(1..j-1)},  j = 1..t,

with ``s_j`` in ``0 .. n - j``, and the GM^s model is

    GM(pi | sigma, theta) = exp(-sum_j theta_j s_j) / prod_j psi_{n-j}(theta_j),
    psi_{n-j}(theta) = (1 - exp(-(n - j + 1) theta)) / (1 - exp(-theta)).

The conjugate prior (uniform in sigma) is ``P0(sigma, theta) ∝ exp(-nu sum_j [theta_j r_j +
log psi_{n-j}(theta_j)])``; each ``theta_j`` has a proper, log-concave prior.  The marginal
probability of one ranking of length t is ``(n - t)! / n!`` (Lemma 1): the new-cluster term.

The posterior of a cluster's parameters has no closed-form normaliser (it sums over the n!
central rankings), so this family has no collapsed form: it is fitted by the samplers that
instantiate ``sigma`` and ``theta`` (:class:`dpclust.samplers.SliceGibbs`,
:class:`dpclust.samplers.BetaGibbs`).  The NumPy face's cluster statistics ``R_j`` and
marginal likelihoods are exact but dense (``n x n`` per rank and cluster) and sum over all
permutations, so they serve small problems: tests against the exact posterior, and
``n_items <= 8``.

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
Fligner, M. A. & Verducci, J. S. (1986). Distance based ranking models. JRSS B.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import integrate

from ..kernels.mallows import model as _k
from . import _mallows_soft as _soft
from ._rankings_base import RankingsFamily, number_or_nan
from .base import (ClusterColumn, ClusterSummary, ClusterTable, HyperParameter,
                   positive_or_gamma, register_family, rounded)
from .identical import array_row_keys, distinct_rows

#: the exact (permutation-summing) marginal likelihood is offered up to this many items
MAX_EXACT_ITEMS = 8
#: items of a cluster's central ranking that the run summary lists, best first
N_TOP_ITEMS = 10
#: a cluster with this share of the data is *large* (:func:`theta_by_rank`; Meilă & Chen 2010, §8)
LARGE_CLUSTER_SHARE = 0.05
#: when a cluster of rankings is flagged as near-uniform (see :func:`blocs`)
NEAR_UNIFORM_RULE = ("its central ranking's first item is less than twice as likely to come "
                     "first as a uniformly random item: 1 / psi_{n-1}(theta_1) < 2 / n")
#: what the run summary says of each sampler that fits the family (whether its draws
#: are exact is the sampler's own declaration, added by the summary)
_SAMPLER_TEXT = {
    "slice-gibbs": "exact MCMC (Slice-Gibbs with the Metropolis-Hastings sigma step)",
    "coarsened": "exact MCMC for the coarsened posterior (allocation-free Metropolis-Hastings)",
}
#: items of each central ranking, and ranks of theta, that the report's cluster table shows
TABLE_ITEMS, TABLE_THETAS = 5, 3


class MallowsParams(NamedTuple):
    """Instantiated parameters of K clusters.

    Attributes
    ----------
    order : ndarray of shape (K, n_items)
        Central rankings, best first (``order[k, 0]`` is cluster k's top item).
    theta : ndarray of shape (K, max_length)
        Dispersion per rank: ``theta[k, j]`` for rank ``j + 1`` (larger = more concentrated).
    """

    order: np.ndarray
    theta: np.ndarray


class MallowsStats(NamedTuple):
    """Sufficient statistics of K clusters (dense: for small ``n_items`` only).

    Attributes
    ----------
    n : ndarray of shape (K,)
        Rankings per cluster.
    n_j : ndarray of shape (K, J)
        ``N_j``: rankings of length at least ``j + 1``.
    R : ndarray of shape (K, J, n, n)
        ``R_j[i, i']``: rankings with ``pi(j+1) = i`` and ``i'`` not among ``pi(1..j)``,
        ``i' != i`` (Mathematics §5); ``S_j(sigma) = sum R_j[i, i'] 1[sigma: i' before i]``.
    """

    n: np.ndarray
    n_j: np.ndarray
    R: np.ndarray


# ------------------------------------------------------------------ reference maths
def log_psi(theta, n_minus_j) -> np.ndarray:
    """``log psi_{n-j}(theta) = log sum_{k=0}^{n-j} exp(-k theta)``, elementwise."""
    theta = np.asarray(theta, dtype=np.float64)
    m = np.broadcast_to(np.asarray(n_minus_j, dtype=np.float64), theta.shape)
    out = np.empty(theta.shape)
    for idx in np.ndindex(theta.shape):
        out[idx] = _k.log_psi(float(theta[idx]), float(m[idx]))
    return out


def ranking_codes(ranking, sigma) -> np.ndarray:
    """The codes ``s_1 .. s_t`` of a top-t ranking given a central ranking (both best first)."""
    rank = np.empty(len(sigma), dtype=np.int64)
    rank[np.asarray(sigma)] = np.arange(len(sigma))
    ranking = np.asarray(ranking, dtype=np.int64)[None, :]
    out = np.empty(ranking.shape[1], dtype=np.int64)
    _k.codes(ranking, 0, ranking.shape[1], rank, out)
    return out


def log_gm(ranking, sigma, theta) -> float:
    """``log GM(pi | sigma, theta)`` of one top-t ranking (``theta`` has at least t entries)."""
    s = ranking_codes(ranking, sigma)
    n = len(sigma)
    t = len(s)
    th = np.asarray(theta, dtype=np.float64)[:t]
    return float(-(th * s).sum() - log_psi(th, n - 1 - np.arange(t)).sum())


@lru_cache(maxsize=200_000)
def log_theta_integral(a: float, b: float, m: int) -> float:
    """``log ∫_0^∞ exp(-a theta) psi_m(theta)^-b d theta`` (numerical quadrature around the
    mode of the log-concave integrand; relative accuracy about 1e-10)."""
    a, b = float(a), float(b)
    if a <= 0:
        raise ValueError(f"the integral diverges for a = {a} <= 0")
    if b == 0:
        return -math.log(a)
    mode = _k.theta_mode(a, b, m)
    curv = b * _k.code_var(mode, m)
    sd = 1.0 / math.sqrt(curv) if curv > 0 else 1.0 / a
    top = _k.log_density_theta(mode, a, b, m)

    def f(x):
        return math.exp(_k.log_density_theta(x, a, b, m) - top)

    lo = max(0.0, mode - 12 * sd)
    hi = mode + 40 * sd + 40.0 / a
    pts = [p for p in (mode - 3 * sd, mode, mode + 3 * sd) if lo < p < hi]
    total = 0.0
    if lo > 0:
        total += integrate.quad(f, 0.0, lo, epsabs=0, epsrel=1e-12, limit=200)[0]
    total += integrate.quad(f, lo, hi, points=pts or None, epsabs=0, epsrel=1e-12,
                            limit=400)[0]
    total += integrate.quad(f, hi, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]
    return top + math.log(total)


def beta_approximation_log_integral(a, b) -> float:
    """The n → ∞ approximation of :func:`log_theta_integral`: with ``psi_∞(theta) = 1 /
    (1 - e^-theta)``, ``∫ e^{-a theta} (1 - e^{-theta})^b d theta = B(a, b + 1)`` (Meilă &
    Chen 2010, Lemma 4), the basis of Beta-Gibbs."""
    from scipy.special import betaln

    return float(betaln(a, b + 1.0))


# ------------------------------------------------------------------------ family
@register_family
class GeneralizedMallows(RankingsFamily):
    """Generalized Mallows (GM^s) components for top-t rankings with the conjugate prior.

    Parameters
    ----------
    n_items : int or None, default=None
        Number of items ``n``; ``None`` takes it from the data (the largest item id + 1, or
        the number of item names).  Items that never appear still count: pass ``n_items``
        (or ``items``) when some are missing from the data.
    nu : float, default=1.0
        Prior strength ``nu > 0`` (pseudo-count of the prior).
    r : float or array-like of shape (max_length,), default=1.0
        Prior rate ``r_j > 0`` of each ``theta_j`` (larger favours smaller ``theta_j``, i.e.
        more dispersed clusters).
    items : sequence of str, optional
        Item names, for data given as names and for reports.

    Notes
    -----
    ``theta`` is kept for ranks ``1 .. max_length``, the longest ranking of the training data
    (the others never touch the likelihood); rankings longer than that cannot be scored.

    References
    ----------
    Meilă & Chen (2010), equations (2)-(8) and Lemma 1.
    """

    name = "mallows"
    describes = "rankings (Generalized Mallows, Meila & Chen 2010)"
    title = "Generalized Mallows"
    option_group = "rankings (--family mallows)"
    hyperparameters = (
        HyperParameter("nu", positive_or_gamma, default=1.0, metavar="NU",
                       help="prior strength of each cluster's dispersions theta_j (a "
                            "pseudo-count; gamma:SHAPE,RATE learns it from the data under "
                            "that Gamma prior; default: 1.0)"),
        HyperParameter("r", positive_or_gamma, default=1.0, metavar="R",
                       help="prior rate of each theta_j: larger favours smaller theta_j, "
                            "that is more dispersed clusters (gamma:SHAPE,RATE learns one "
                            "rate for every rank; default: 1.0)"),
    )
    learnable = ("nu", "r")
    #: the samplers that fit it, and the one ``sampler="auto"`` picks
    samplers = ("slice-gibbs", "beta-gibbs", "coarsened")
    default_sampler = "slice-gibbs"
    report_sentence = ("Each cluster is a Generalized Mallows model (Meilă &amp; Chen 2010): a "
                       "central ranking of the items and a dispersion θ<sub>j</sub> for each "
                       "rank j, larger where the cluster's rankings agree more.")
    report_hint = ("Rankings of the items, best first, clustered around central rankings. θ by "
                   "rank averages each cluster's θ<sub>j</sub> weighted by its size (ranks 1, "
                   "2, …), as in the figure below.")

    def __init__(self, n_items=None, nu=1.0, r=1.0, items=None):
        super().__init__(n_items, items)
        self.nu = nu
        self.r = r
        self._r = None

    def get_params(self, deep: bool = True) -> dict:
        return {"n_items": self.n_items, "nu": self.nu, "r": self.r, "items": self.items}

    # --------------------------------------------------------------- set-up
    def validate(self, X, *, what="X"):
        Xr = super().validate(X, what=what)
        if self._max_length is not None and Xr.shape[1] > self._max_length:
            from ..utils.checks import DataError

            longest = int(np.argmax(Xr.lengths))
            raise DataError(
                f"{what}: ranking {longest} has length {int(Xr.lengths[longest])}, longer than "
                f"any training ranking ({self._max_length}); the model has no theta for "
                "those ranks")
        return Xr

    def resolve(self, X) -> GeneralizedMallows:
        learned = self.hyperpriors()
        nu = learned["nu"].start if "nu" in learned else number_or_nan(self.nu)
        if not (nu > 0 and math.isfinite(nu)):
            raise ValueError(f"nu must be a positive finite number or a GammaPrior, got "
                             f"{self.nu!r}")
        out = self._resolved(X)
        out.nu = nu
        J = out._max_length
        r = np.asarray(learned["r"].start if "r" in learned else self.r, dtype=np.float64)
        if r.ndim == 0:
            r = np.full(J, float(r))
        elif r.shape[0] < J:
            raise ValueError(f"r has {r.shape[0]} entries but the rankings have up to {J} ranks")
        r = np.array(r[:J], dtype=np.float64)
        if not np.all(np.isfinite(r)) or np.any(r <= 0):
            raise ValueError("r must be positive and finite")
        out._r = r
        if "r" in learned:
            out.r = float(r[0])
        return self._keep_hyperpriors(out)

    def at(self, values: dict) -> GeneralizedMallows:
        """This resolved family with the dispersions' prior strength ``nu`` and (one for
        every rank) rate ``r`` at ``values``."""
        out = type(self)(self.n_items, self.nu, self.r, self.items)
        out.__dict__.update(self.__dict__)
        if "nu" in values:
            out.nu = float(values["nu"])
        if "r" in values:
            out.r = float(values["r"])
            out._r = np.full(len(self._r), out.r)
        return out

    def learned_values(self) -> dict:
        learned = self.hyperpriors()
        return {name: float(self.nu if name == "nu" else self._r[0]) for name in learned}

    @property
    def nu_r_(self) -> np.ndarray:
        """``nu r_j`` per rank, shape (max_length,): a ``theta_j`` for each rank up to the
        longest training ranking."""
        self._need_resolved()
        return float(self.nu) * self._r

    def log_prior_normalisers(self) -> np.ndarray:
        """``log Z_j = log ∫ exp(-nu r_j theta) psi_{n-j}(theta)^-nu d theta`` per rank, the
        normaliser of each ``theta_j``'s prior (for the log joint)."""
        self._need_resolved()
        nu = float(self.nu)
        # a learned nu or r asks at a new value every time: the compiled quadrature (the
        # same integral to about 1e-13), where the cached SciPy one would miss its cache
        integral = _k.log_theta_integral if self.hyperpriors() else log_theta_integral
        return np.array([integral(float(a), nu, self._n - 1 - j)
                         for j, a in enumerate(self.nu_r_)])

    def log_prior(self, params: MallowsParams) -> np.ndarray:
        """``log P0(sigma_k, theta_k)`` per cluster (normalised; uniform over the n! sigma)."""
        self._need_resolved()
        n, J, nu = self._n, self._max_length, float(self.nu)
        theta = np.asarray(params.theta, dtype=np.float64)
        lp = -(self.nu_r_ * theta).sum(axis=1) - nu * cumulative_log_psi(theta, n)[:, J]
        return lp - self.log_prior_normalisers().sum() - math.lgamma(n + 1.0)

    # ----------------------------------------------------------- statistics
    max_exact_items = MAX_EXACT_ITEMS
    exact_how = "sums over all n! central rankings"

    def stats(self, X, labels=None, n_clusters=None) -> MallowsStats:
        labels, K = self._labels(X, labels, n_clusters)
        self._check_small("the dense statistics R_j")
        N = len(X)
        out = self.empty_stats(K)
        orders, lengths = X.orders, X.lengths
        for i in range(N):
            k = labels[i]
            out.n[k] += 1
            seen = np.zeros(self._n, dtype=bool)
            for j in range(lengths[i]):
                item = orders[i, j]
                out.n_j[k, j] += 1
                row = ~seen
                row[item] = False
                out.R[k, j, item] += row
                seen[item] = True
        return out

    def empty_stats(self, n_clusters: int = 1) -> MallowsStats:
        self._need_resolved()
        n, J = self._n, self._max_length
        return MallowsStats(np.zeros(n_clusters), np.zeros((n_clusters, J)),
                            np.zeros((n_clusters, J, n, n)))

    def log_marginal(self, stats) -> np.ndarray:
        """``log f(X_k)`` exactly: ``(1/n!) sum_sigma prod_j Z(nu r_j + S_j(sigma), nu + N_j)
        / Z(nu r_j, nu)`` with the theta integrals by quadrature (small ``n`` only)."""
        self._need_resolved()
        self._check_small("the exact marginal likelihood")
        n, J, nu = self._n, self._max_length, float(self.nu)
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
        ranks = np.argsort(perms, axis=1)
        # before[p, i, i'] = 1 when permutation p ranks i' before i
        before = (ranks[:, None, :] < ranks[:, :, None]).astype(np.float64)
        log_z0 = self.log_prior_normalisers()
        # at a learned nu every call asks at new values: the compiled quadrature (as above)
        integral = _k.log_theta_integral if self.hyperpriors() else log_theta_integral
        out = np.empty(len(stats.n))
        for k in range(len(stats.n)):
            logs = np.zeros(len(perms))
            for j in range(J):
                nj = stats.n_j[k, j]
                if nj == 0:
                    continue
                S = np.einsum("pab,ab->p", before, stats.R[k, j])
                a0 = self.nu_r_[j]
                logs += np.array([integral(round(a0 + s, 9), nu + nj, n - 1 - j)
                                  for s in S]) - log_z0[j]
            out[k] = _logmeanexp(logs)
        return out

    def log_predictive(self, X, stats) -> np.ndarray:
        """``log f(pi_i | X_k)``: ``log((n - t_i)! / n!)`` for an empty cluster (Lemma 1),
        else the exact ratio of marginals (small ``n`` only)."""
        self._need_resolved()
        N, K = len(X), len(stats.n)
        out = np.empty((N, K))
        prior = self.log_prior_predictive(X)
        base = self.log_marginal(stats) if np.any(stats.n > 0) else np.zeros(K)
        for k in range(K):
            if stats.n[k] == 0:
                out[:, k] = prior
                continue
            for i in range(N):
                one = self.stats(X[np.array([i])])
                both = self.combine(_take(stats, k), one)
                out[i, k] = self.log_marginal(both)[0] - base[k]
        return out

    # ------------------------------------------------------------ parameters
    def sample_prior(self, rng, n_clusters: int = 1) -> MallowsParams:
        """Exact draws from ``P0``: sigma uniform, each ``theta_j`` by adaptive rejection
        sampling from its log-concave prior."""
        self._need_resolved()
        n, J, nu = self._n, self._max_length, float(self.nu)
        order = np.array([rng.permutation(n) for _ in range(n_clusters)], dtype=np.int64)
        order = order.reshape(n_clusters, n)
        theta = np.empty((n_clusters, J))
        _sample_prior_theta(self.nu_r_, nu, n, _seed(rng), theta)
        return MallowsParams(order, theta)

    def log_likelihood(self, X, params: MallowsParams) -> np.ndarray:
        """``log GM(pi_i | sigma_k, theta_k)``, shape (N, K)."""
        self._need_resolved()
        order = np.asarray(params.order, dtype=np.int64)
        theta = np.asarray(params.theta, dtype=np.float64)
        K = order.shape[0]
        rank = np.empty_like(order)
        rows = np.arange(K)[:, None]
        rank[rows, order] = np.arange(self._n)[None, :]
        cum = cumulative_log_psi(theta, self._n)
        out = np.empty((len(X), K))
        _log_likelihoods(X.orders, X.lengths, rank, theta, cum, out)
        return out

    def distinct(self, X):
        return distinct_rows(X.orders)

    def row_keys(self, X) -> list[bytes]:
        return array_row_keys(X.orders)

    def initial_params(self, X, labels, n_components: int, rng):
        """Prior draws, with each cluster's central ranking its Borda order
        (:func:`~dpclust.families._mallows_soft.borda_order`)."""
        params = self.sample_prior(rng, n_components)
        labels = np.asarray(labels, dtype=np.int64)
        for k in np.unique(labels):
            rows = np.flatnonzero(labels == k)
            params.order[k] = _soft.borda_order(np.asarray(X.orders)[rows],
                                                np.asarray(X.lengths)[rows], self._n)
        return params

    def soft_proposal(self, X, weights, given, rng=None, proposed=None):
        """The stagewise central ranking given ``given``'s dispersions, then each
        ``theta_j`` from its conjugate conditional, both from the rankings weighted by
        ``weights`` (:mod:`dpclust.families._mallows_soft`); ``(params, log q)``."""
        J = self._max_length
        draw = rng is not None
        order = (np.empty(self._n, dtype=np.int64) if draw
                 else np.array(proposed.order[0], dtype=np.int64))
        theta = np.empty(J) if draw else np.array(proposed.theta[0], dtype=np.float64)
        log_q = _soft.soft_proposal(
            np.asarray(X.orders), np.asarray(X.lengths), np.asarray(weights, dtype=np.float64),
            np.asarray(given.theta[0], dtype=np.float64), np.asarray(self.nu_r_),
            float(self.nu), self._n, draw, order, theta,
            _seed(rng) if draw else np.uint64(0))
        return MallowsParams(order[None, :], theta[None, :]), float(log_q)

    def random_walk(self, params: MallowsParams, rng, scale: float):
        """Half the time two adjacent items of the central ranking swap places (a
        symmetric move), else every ``theta_j`` is multiplied by ``exp(0.2 scale e_j)``,
        ``e_j ~ N(0, 1)`` (log-normal, ratio ``prod theta'_j / theta_j``)."""
        order = np.array(params.order, dtype=np.int64, copy=True)
        theta = np.array(params.theta, dtype=np.float64, copy=True)
        if rng.random() < 0.5:
            j = int(rng.integers(self._n - 1))
            order[0, j], order[0, j + 1] = order[0, j + 1], order[0, j]
            return MallowsParams(order, theta), 0.0
        step = 0.2 * scale * rng.standard_normal(theta.shape)
        return MallowsParams(order, theta * np.exp(step)), float(step.sum())

    def sample_data(self, params: MallowsParams, components, rng, lengths=None):
        """One top-t ranking from ``GM(sigma_k, theta_k)`` per entry of ``components``.

        ``lengths`` (int or array) default to ``max_length``.  Returns a :class:`Rankings`.
        """
        from ..rankings.data import Rankings

        self._need_resolved()
        components = np.asarray(components, dtype=np.int64)
        m = len(components)
        if lengths is None:
            lengths = self._max_length
        lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (m,)).copy()
        orders = sample_rankings(params.order, params.theta, components, lengths, rng)
        return Rankings(orders, self._n, items=self._items)

    def hellinger(self, params: MallowsParams, *, length=None, n_samples: int = 2000,
                  random_state=0) -> np.ndarray:
        """Hellinger distance between every pair of GM components over top-t rankings,
        shape (K, K).

        No closed form exists (two components code a ranking about different central
        rankings): the Bhattacharyya coefficient is summed over all ``n! / (n - t)!``
        top-t rankings when there are at most 50,000 of them, else estimated by importance
        sampling from each component (``n_samples`` rankings each, a fixed stream:
        ``random_state``), symmetrised (:mod:`dpclust.families._rankings_hellinger`).
        ``length`` is ``t`` (default: ``max_length_``, every rank with a ``theta``); the
        distance over shorter rankings is smaller (fewer ranks tell the models apart).
        """
        return self._hellinger(params, length, n_samples, random_state,
                               min(self.max_length_, np.shape(params.theta)[1]))

    def describe_params(self, params: MallowsParams) -> dict:
        """The clusters' parameters for people: ``"central_rankings"`` (K, n) item ids best
        first, ``"theta"`` (K, max_length), and ``"top_items"``: each cluster's first five
        items by name (or id)."""
        order = np.asarray(params.order, dtype=np.int64)
        return {"central_rankings": order, "theta": np.asarray(params.theta, dtype=np.float64),
                "top_items": [[self.item_name(i) for i in row[:5]] for row in order]}

    # ------------------------------------------------------- describing itself
    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """The first :data:`N_TOP_ITEMS` items of each cluster's central ranking by name
        (``top_items``) and its dispersions ``theta`` (n_clusters, n_ranks)."""
        if "central_rankings" not in params:
            return super().describe_clusters(params, feature_names=feature_names)
        order = np.asarray(params["central_rankings"], dtype=np.int64)[:, :N_TOP_ITEMS]
        return ClusterSummary({
            "top_items": [[self.item_name(i) for i in row] for row in order.tolist()],
            "theta": [rounded(row) for row in np.asarray(params["theta"])]})

    def describe_fit(self, params: dict, sizes: np.ndarray, *, sampler: str) -> dict:
        """The sampler's exactness, how the rankings split into clusters (the paper's
        Figure 10) and theta_j by rank, averaged over the clusters weighted by their sizes
        (Figure 11), also over the large and the small clusters apart; and the
        :func:`blocs`."""
        theta = np.asarray(params["theta"], dtype=np.float64)
        by_rank = theta_by_rank(theta, sizes, large_share=LARGE_CLUSTER_SHARE)
        return {
            "n_items": int(self.n_items_),
            "ranks_with_theta": int(self.max_length_),
            "posterior": _SAMPLER_TEXT.get(
                sampler, "approximate (Beta-Gibbs: theta from the n -> infinity Beta "
                         "approximation; its draws are not from the posterior)"),
            **self._cluster_counts(sizes),
            "large_cluster_share": LARGE_CLUSTER_SHARE,
            "theta_by_rank": rounded(by_rank["all"]),
            "theta_by_rank_large": rounded(by_rank["large"]),
            "theta_by_rank_small": rounded(by_rank["small"]),
            "blocs": blocs(self, params, sizes),
            "near_uniform_rule": NEAR_UNIFORM_RULE,
        }

    @classmethod
    def cluster_table(cls, block: dict) -> ClusterTable:
        """The first :data:`TABLE_ITEMS` items of each central ranking and theta at the
        first :data:`TABLE_THETAS` ranks."""
        top_items, theta = block.get("top_items"), block.get("theta")
        columns = []
        if top_items is not None:
            def ranking(k):
                items = list(top_items[k]) if k < len(top_items) else []
                shown = " › ".join(str(v) for v in items[:TABLE_ITEMS])
                return shown + " › …" if len(items) > TABLE_ITEMS else shown

            columns.append(ClusterColumn("central ranking (first items)", ranking))
        n_thetas = 0
        if theta is not None:
            n_thetas = min(TABLE_THETAS, max((len(t) for t in theta), default=0))
        for j in range(n_thetas):
            def cell(k, j=j):
                t = theta_at(theta, k, j)
                return "—" if t is None else f"{t:.2f}"

            columns.append(ClusterColumn(f"θ<sub>{j + 1}</sub>", cell, "num"))
        note = ""
        if top_items is not None:
            note = (f" Each central ranking shows its first {TABLE_ITEMS} items, best "
                    "first; θ<sub>j</sub> is the cluster's dispersion at rank j (larger: its "
                    "rankings agree more there).")
        return ClusterTable(tuple(columns), note)


# ------------------------------------------------------------- describing fits
def theta_by_rank(theta, sizes, *, large_share: float = LARGE_CLUSTER_SHARE) -> dict:
    """Average of each rank's dispersion ``theta_j`` over the clusters, weighted by size.

    Parameters
    ----------
    theta : array-like of shape (n_clusters, n_ranks)
        ``theta[k, j]``: the dispersion of cluster ``k`` at rank ``j + 1`` (larger: the
        cluster's rankings agree more on their item at that rank).
    sizes : array-like of shape (n_clusters,)
        Number of rankings in each cluster (the weights; empty clusters count for nothing).
    large_share : float, default=LARGE_CLUSTER_SHARE
        Clusters holding at least this share of all rankings are *large*, the others
        *small*.

    Returns
    -------
    averages : dict of str to ndarray of shape (n_ranks,) or None
        ``"all"``, ``"large"`` and ``"small"``: the weighted averages over all clusters, the
        large ones and the small ones (None when there are no such clusters).

    Raises
    ------
    ValueError
        If the shapes disagree or no cluster holds a ranking.

    References
    ----------
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models.
    UAI, section 8 and Figure 11.
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    sizes = np.asarray(sizes, dtype=np.float64).ravel()
    if theta.ndim != 2 or theta.shape[0] != sizes.shape[0]:
        raise ValueError(f"theta must have shape (n_clusters, n_ranks) with one row per size; "
                         f"got theta {theta.shape} and {sizes.shape[0]} sizes")
    total = sizes.sum()
    if not total > 0:
        raise ValueError("no cluster holds a ranking")
    large = sizes >= large_share * total

    def average(mask):
        weights = np.where(mask, sizes, 0.0)
        if not weights.sum() > 0:
            return None
        return weights @ theta / weights.sum()

    return {"all": average(np.ones_like(large)), "large": average(large),
            "small": average(~large)}


def blocs(family: GeneralizedMallows, params: dict, sizes: np.ndarray) -> list:
    """The clusters holding at least 1 % of the rankings, largest first: share, central
    ranking (item names, best first), theta_1, the probability that a ranking of the cluster
    puts the central first item first (``1 / psi_{n-1}(theta_1)``, against ``1 / n`` for a
    uniform pick) and whether the cluster is near-uniform (:data:`NEAR_UNIFORM_RULE`: there
    the central ranking says little about the cluster's rankings)."""
    n = int(sizes.sum())
    n_items = int(family.n_items_)
    order = np.asarray(params["central_rankings"], dtype=np.int64)
    theta = np.asarray(params["theta"], dtype=np.float64)
    out = []
    for k in np.lexsort((np.arange(len(sizes)), -sizes)):
        if n == 0 or sizes[k] < 0.01 * n:
            break
        theta1 = float(theta[k, 0]) if theta.shape[1] else 0.0
        p_top = float(np.exp(-log_psi(theta1, n_items - 1)))
        out.append({"cluster": int(k), "rankings": int(sizes[k]),
                    "share": float(f"{sizes[k] / n:.4g}"),
                    "central_ranking": [family.item_name(int(i)) for i in order[k]],
                    "theta_1": float(f"{theta1:.4g}"),
                    "top_item_probability": float(f"{p_top:.4g}"),
                    "near_uniform": bool(p_top < 2.0 / n_items)})
    return out


def theta_at(theta, k: int, j: int) -> float | None:
    """``theta[k][j]`` as a float, or None where there is none (ranks past the longest
    ranking have no theta)."""
    try:
        return float(theta[k][j])
    except (IndexError, TypeError, ValueError):
        return None


# -------------------------------------------------------------------- helpers
def _take(stats, k):
    return MallowsStats(*(np.asarray(a)[k:k + 1] for a in stats))


def _logmeanexp(x) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.mean(np.exp(x - m))))


def _seed(rng) -> np.uint64:
    return np.uint64(rng.integers(0, 2**63 - 1))


def cumulative_log_psi(theta, n: int) -> np.ndarray:
    """``out[k, t] = sum_{j<t} log psi_{n-j-1}(theta[k, j])``, shape (K, J + 1)."""
    theta = np.asarray(theta, dtype=np.float64)
    K, J = theta.shape
    out = np.zeros((K, J + 1))
    _cum_log_psi(theta, n, out)
    return out


@njit(cache=True)
def _cum_log_psi(theta, n, out):
    for k in range(theta.shape[0]):
        _k.cum_log_psi_row(theta[k], n, out[k])


@njit(cache=True)
def _log_likelihoods(orders, lengths, rank, theta, cum, out):
    for i in range(orders.shape[0]):
        for k in range(rank.shape[0]):
            out[i, k] = _k.gm_log_likelihood(orders, i, lengths[i], rank[k], theta[k], cum[k])


@njit(cache=True)
def _sample_prior_theta(nu_r, nu, n, seed, out):
    xs = np.empty(_k._MAX_HULL)
    hs = np.empty(_k._MAX_HULL)
    ds = np.empty(_k._MAX_HULL)
    state = seed
    for c in range(out.shape[0]):
        for j in range(out.shape[1]):
            state, out[c, j] = _k.sample_theta(nu_r[j], nu, n - j - 1, state, xs, hs, ds)


def sample_rankings(order, theta, components, lengths, rng) -> np.ndarray:
    """Top-t rankings from GM models: row i from ``GM(order[components[i]],
    theta[components[i]])`` with ``lengths[i]`` ranks, each code ``s_j`` drawn from its
    truncated geometric law (the GM factorises over codes), padded with -1."""
    order = np.asarray(order, dtype=np.int64)
    theta = np.asarray(theta, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = order.shape[1]
    if lengths.size and (lengths.min() < 1 or lengths.max() > min(n - 1, theta.shape[1])):
        raise ValueError(f"lengths must be in 1 .. {min(n - 1, theta.shape[1])}")
    out = np.full((len(components), int(lengths.max()) if lengths.size else 0), -1,
                  dtype=np.int64)
    _sample_rankings(order, theta, np.asarray(components, dtype=np.int64), lengths,
                     _seed(rng), out)
    return out


@njit(cache=True)
def _sample_rankings(order, theta, components, lengths, seed, out):
    state = seed
    n = order.shape[1]
    left = np.empty(n, dtype=np.int64)
    for i in range(components.shape[0]):
        c = components[i]
        for p in range(n):
            left[p] = order[c, p]
        n_left = n
        for j in range(lengths[i]):
            state, u = _k.next_uniform(state)
            s = _k.sample_code(theta[c, j], n - j - 1, u)
            # the (s+1)-th item left in sigma's order
            item = left[s]
            for p in range(s, n_left - 1):
                left[p] = left[p + 1]
            n_left -= 1
            out[i, j] = item
