r"""Plackett–Luce components for top-t rankings (Plackett 1975; Caron & Doucet 2012).

A component gives each of the ``n`` items a worth ``lambda_j > 0``; a voter picks a first
item with probability proportional to its worth, then a second among those left, and so on:

.. math::

    PL(\pi \mid \lambda) = \prod_{s=1}^{t} \lambda_{\pi(s)} / \Lambda_s,
    \qquad \Lambda_s = \sum_{j \text{ still available at stage } s} \lambda_j .

"These two candidates in either order, then the rest" is one component (two large worths),
where a Generalized Mallows component sits around one central ranking.  The likelihood is
scale-free; with iid ``Gamma(a, 1)`` worths the normalised worths ``p = lambda / sum
lambda`` are ``Dir(a, ..., a)`` and independent of the scale, so the parameter kept is ``p``
(as ``log p``, :class:`PLParams`): ``p_j`` is the probability that a voter of the cluster
ranks item ``j`` first.  The rate of the Gamma prior changes nothing (neither ``p`` nor the
partition), so the one hyperparameter is the shape ``a`` (``worth_shape``).

The posterior of ``p`` given a cluster has no closed-form normaliser, so the family has no
collapsed form.  It gives the instantiated samplers what they need
(:mod:`dpclust.families._plackett_luce` holds the maths):

* :meth:`PlackettLuce.update_params`, an exact Gibbs kernel of every cluster's worths (the
  Gamma latents of Caron & Doucet, one per distinct ranking and stage, after a draw of the
  scale);
* :meth:`PlackettLuce.sample_given_one`, an exact draw of ``p`` given one ranking, and the
  new-cluster probability ``(n - t)! / n!`` of a top-t ranking (any exchangeable prior): so
  Neal's algorithm 2 (``sampler="explicit"``), the blocked Gibbs sampler of a finite mixture
  (``"fsd"``) and the coarsened posterior's sampler (``"coarsened"``, with
  :meth:`PlackettLuce.soft_proposal`) are exact.

Given one Gamma latent per stage of every ranking the family *is* conjugate: a ranking with
its latents is a row of counts over exposures, and a cluster's marginal a product of
Gamma–Poisson terms (:meth:`PlackettLuce.latent_family`, :mod:`dpclust.families.exposure`).
So the collapsed samplers, whose split–merge moves weigh clusters' marginals, fit it too
(``"gibbs"``, ``"gibbs+sams"``, ``"subcluster"``): each iteration draws the latents
(:meth:`PlackettLuce.draw_latents`), moves the partition with the worths integrated out and
draws the worths (:mod:`dpclust.samplers.augmented`).

The NumPy face's statistics count each top-t ranking pattern and its marginal likelihood
integrates ``p`` over the simplex by Gauss–Jacobi quadrature: to about 1e-6 relative for the
few rankings of at most :data:`MAX_EXACT_ITEMS` items that tests enumerate.

References
----------
Plackett, R. L. (1975). The analysis of permutations. *Applied Statistics* 24(2).
Caron, F. & Doucet, A. (2012). Efficient Bayesian inference for generalized Bradley–Terry
    models. *JCGS* 21(1), 174-196 (the Gamma latents).
Gormley, I. C. & Murphy, T. B. (2008). Exploring voting blocs within the Irish electorate:
    a mixture modeling approach. *JASA* 103(483) (PL mixtures of Irish ballots).
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models,
    algorithm 2.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp, roots_jacobi

from . import _plackett_luce as _pl
from ._pl_kernels import latent_rows, log_pl_table, soft_sums
from ._rankings_base import RankingsFamily, number_or_nan
from .base import (
    ClusterColumn,
    ClusterSummary,
    ClusterTable,
    HyperParameter,
    log_dirichlet,
    log_normalise,
    positive_or_gamma,
    register_family,
    rounded,
)
from .identical import array_row_keys
from .exposure import ExposureData, GammaExposure, RateParams

#: the smallest worth shape a chain learns (the learned shape's Gamma prior is truncated
#: there): below it a Dirichlet draw's smallest worths underflow double precision
MIN_LEARNED_SHAPE = 0.05

#: the NumPy face's statistics and marginal likelihood are offered up to this many items
MAX_EXACT_ITEMS = 4
#: Gauss–Jacobi nodes per simplex coordinate of the exact marginal likelihood, by number of
#: items (the integrand is not smooth at the corners where the last stick's items share
#: little worth: the rule converges algebraically, to about 1e-6 relative with these)
QUADRATURE_NODES = {2: 400, 3: 120, 4: 40}
#: items of each cluster that the run summary and the report's table list, by worth
N_TOP_ITEMS, TABLE_ITEMS = 10, 5
#: Gibbs rounds of the worths per iteration (the lag-1 autocorrelation of one round is
#: 0.1-0.35 on ballots, so two are plenty)
N_ROUNDS = 2
#: the soft proposal: a mixture of the scaled Dirichlet at these widths, with these weights
#: (the narrow one is accepted most often near the mode; the wide one lets a poor current
#: value move)
SOFT_KAPPAS, SOFT_WEIGHTS = (1.0, 0.3), (0.8, 0.2)
#: Minorisation-maximisation steps of each cluster's starting worths
N_MM_STEPS = 15
#: what the run summary says of each sampler that fits the family (whether its draws
#: are exact is the sampler's own declaration, added by the summary)
_SAMPLER_TEXT = {
    "explicit": "exact MCMC (Neal's algorithm 2 with Gamma-latent Gibbs rounds of the worths)",
    "fsd": "exact MCMC for the finite mixture (blocked Gibbs with Gamma-latent rounds)",
    "coarsened": "exact MCMC for the coarsened posterior (allocation-free Metropolis-Hastings)",
    "gibbs": "exact MCMC (collapsed Gibbs given the Gamma latents)",
    "gibbs+sams": "exact MCMC (Neal's algorithm 2 sweeps and merge-split moves given the "
                  "Gamma latents)",
    "subcluster": "exact MCMC (the sub-cluster sampler's split-merge moves given the Gamma "
                  "latents)",
}


class PLParams(NamedTuple):
    """Normalised worths of each component, in log space: ``log_worths[k]`` (n_items,) with
    ``logsumexp = 0``."""

    log_worths: np.ndarray


class PLStats(NamedTuple):
    """Small-``n`` statistics: rankings per cluster and how often each top-t pattern occurs
    (columns ordered as :func:`patterns`)."""

    n: np.ndarray
    counts: np.ndarray


@register_family
class PlackettLuce(RankingsFamily):
    """Plackett–Luce components for top-t rankings with Gamma worths.

    Parameters
    ----------
    n_items : int or None, default=None
        Number of items ``n``; ``None`` takes it from the data (the largest item id + 1, or
        the number of item names).  Items no ranking lists still count: pass ``n_items``
        (or ``items``) when some are missing from the data.
    worth_shape : float, default=1.0
        Shape ``a > 0`` of the iid ``Gamma(a, 1)`` prior of the worths, so that the
        normalised worths are ``Dir(a, ..., a)``.  1 is uniform on the simplex; smaller
        values favour clusters whose worth sits on a few items.
    items : sequence of str, optional
        Item names, for data given as names and for reports.

    Notes
    -----
    ``p_j`` (``describe_params()["worths"]``) is the probability that a voter of the
    cluster ranks item ``j`` first; the items in order of worth are the cluster's modal
    ranking.

    References
    ----------
    Caron & Doucet (2012), section 3 (the latents); Meilă & Chen (2010), Lemma 1 (the
    new-cluster term, which holds for any exchangeable prior).
    """

    name = "plackett-luce"
    describes = "rankings (Plackett-Luce worths, Caron & Doucet 2012)"
    title = "Plackett–Luce"
    #: ballots are fitted by the coarsened posterior unless asked otherwise: the exact
    #: posterior of a Plackett–Luce mixture on real ballots keeps adding clusters that the
    #: chains do not settle, while at alpha_c = 100 (a tolerated misfit of 0.01 nats a
    #: ballot) the Dublin West ballots give 3 to 6 blocs and chains that meet
    default_coarsening = 100.0
    option_group = "rankings (--family plackett-luce)"
    hyperparameters = (
        HyperParameter("worth_shape", positive_or_gamma, default=1.0, metavar="A",
                       help="shape of each item's Gamma prior worth: 1 is uniform over the "
                            "normalised worths, smaller favours clusters whose worth sits on "
                            "a few items; gamma:SHAPE,RATE learns it from the data under "
                            "that Gamma prior (default: 1.0)"),
    )
    learnable = ("worth_shape",)
    #: the samplers that fit it, and the one ``sampler="auto"`` picks
    samplers = ("explicit", "fsd", "coarsened", "gibbs", "gibbs+sams", "subcluster")
    default_sampler = "explicit"
    report_sentence = ("Each cluster is a Plackett–Luce model: every candidate has a worth, "
                       "and a voter of the cluster picks each next preference with "
                       "probability proportional to the worths of the candidates left.")
    report_hint = ("Rankings of the items, best first: each cluster gives every item a worth, "
                   "the probability that a voter of the cluster ranks it first, and each next "
                   "preference is drawn in proportion to the worths left.")

    def __init__(self, n_items=None, worth_shape=1.0, items=None):
        super().__init__(n_items, items)
        self.worth_shape = worth_shape

    def get_params(self, deep: bool = True) -> dict:
        return {"n_items": self.n_items, "worth_shape": self.worth_shape, "items": self.items}

    # --------------------------------------------------------------- set-up
    def hyperpriors(self) -> dict:
        """The learned worth shape's prior, truncated to ``[MIN_LEARNED_SHAPE, inf)``:
        below it a Dirichlet draw's smallest worths underflow double precision."""
        return {name: hp.truncated(MIN_LEARNED_SHAPE)
                for name, hp in super().hyperpriors().items()}

    def resolve(self, X) -> PlackettLuce:
        learned = self.hyperpriors()
        a = (learned["worth_shape"].start if "worth_shape" in learned
             else number_or_nan(self.worth_shape))
        if not (a > 0 and math.isfinite(a)):
            raise ValueError(f"worth_shape must be a positive finite number or a GammaPrior, "
                             f"got {self.worth_shape!r}")
        out = self._resolved(X)
        out.worth_shape = a
        return self._keep_hyperpriors(out)

    def at(self, values: dict) -> PlackettLuce:
        """This resolved family with the worths' Dirichlet shape at
        ``values["worth_shape"]``."""
        out = type(self)(self.n_items, self.worth_shape, self.items)
        out.__dict__.update(self.__dict__)
        out.worth_shape = float(values["worth_shape"])
        return out

    def learned_values(self) -> dict:
        return {"worth_shape": float(self.worth_shape)} if self.hyperpriors() else {}

    def distinct(self, X):
        first, inverse = X.distinct()
        return first, inverse, np.bincount(inverse, minlength=len(first))

    def row_keys(self, X) -> list[bytes]:
        """Each ranking's length and order (what :meth:`dpclust.rankings.Rankings.distinct` compares)."""
        return array_row_keys(np.concatenate([X.lengths[:, None], X.orders], axis=1))

    # ----------------------------------------------------------- statistics
    max_exact_items = MAX_EXACT_ITEMS
    exact_how = "integrates the worths over the simplex by quadrature"

    def stats(self, X, labels=None, n_clusters=None) -> PLStats:
        labels, K = self._labels(X, labels, n_clusters)
        self._check_small("the exact marginal likelihood")
        N = len(X)
        out = self.empty_stats(K)
        index = _pattern_index(self._n)
        for i in range(N):
            pattern = tuple(int(v) for v in X.orders[i, :X.lengths[i]])
            out.n[labels[i]] += 1
            out.counts[labels[i], index[pattern]] += 1
        return out

    def empty_stats(self, n_clusters: int = 1) -> PLStats:
        self._need_resolved()
        R = len(patterns(self._n)) if self._n <= MAX_EXACT_ITEMS else 0
        return PLStats(np.zeros(n_clusters), np.zeros((n_clusters, R)))

    def log_marginal(self, stats) -> np.ndarray:
        """``log f(X_k) = log E_{p ~ Dir(a)} prod_i PL(pi_i | p)`` by a tensor Gauss–Jacobi
        rule in the stick-breaking coordinates of ``Dir(a)`` (small ``n`` only; about 1e-6
        relative, :data:`QUADRATURE_NODES`)."""
        self._need_resolved()
        self._check_small("the exact marginal likelihood")
        log_w, log_pl = _quadrature(self._n, float(self.worth_shape),
                                    QUADRATURE_NODES[self._n])
        return logsumexp(log_w[None, :] + np.asarray(stats.counts) @ log_pl.T, axis=1)

    def log_predictive(self, X, stats) -> np.ndarray:
        """``log f(pi_i | X_k)``: ``log((n - t_i)! / n!)`` for an empty cluster, else the
        ratio of marginals (small ``n`` only)."""
        self._need_resolved()
        N, K = len(X), len(stats.n)
        out = np.empty((N, K))
        prior = self.log_prior_predictive(X)
        empty = np.asarray(stats.n) == 0
        out[:, empty] = prior[:, None]
        if not empty.all():
            base = self.log_marginal(stats)
            one = self.stats(X, np.arange(N), N)
            for k in np.flatnonzero(~empty):
                both = PLStats(stats.n[k] + one.n, stats.counts[k][None, :] + one.counts)
                out[:, k] = self.log_marginal(both) - base[k]
        return out

    # ------------------------------------------------------------ parameters
    def sample_prior(self, rng, n_clusters: int = 1) -> PLParams:
        """Exact draws of the normalised worths from ``Dir(a, ..., a)`` (in log space)."""
        self._need_resolved()
        return PLParams(log_dirichlet(rng, np.full((n_clusters, self._n),
                                                   float(self.worth_shape))))

    def update_params(self, X, labels, params, rng, n_clusters=None) -> PLParams:
        """:data:`N_ROUNDS` exact Gibbs rounds of every cluster's worths
        (:func:`~dpclust.families._plackett_luce.clusters_round`: the scale, one Gamma
        latent per distinct ranking of the cluster and stage, the worths), started at
        ``params`` (None: the MM estimate of :meth:`initial_params`).  A cluster without
        rankings gets a prior draw."""
        labels, K = self._labels(X, np.asarray(labels, dtype=np.int64), n_clusters)
        if params is None:
            params = self.initial_params(X, labels, K, rng)
        first, inverse = X.distinct()
        key = np.unique(inverse * K + labels, return_counts=True)
        rows, counts = first[key[0] // K], key[1]
        comp = key[0] % K
        log_p = np.asarray(params.log_worths, dtype=np.float64)
        if len(log_p) < K:  # clusters without a value (empty: each round draws the prior)
            log_p = np.concatenate([log_p, np.full((K - len(log_p), self._n),
                                                   -math.log(self._n))])
        for _ in range(N_ROUNDS):
            log_p = _pl.clusters_round(rng, X.orders[rows], X.lengths[rows], counts, comp,
                                       log_p, float(self.worth_shape))
        return PLParams(log_p)

    def sample_given_one(self, X, i: int, rng) -> PLParams:
        """An exact draw of ``p`` given ranking ``i`` alone (Lomax order statistics,
        :func:`~dpclust.families._plackett_luce.draw_given_one`)."""
        self._need_resolved()
        i = int(np.asarray(i).ravel()[0])
        order = X.orders[i, :X.lengths[i]]
        return PLParams(_pl.draw_given_one(rng, order, self._n,
                                           float(self.worth_shape))[None, :])

    def log_likelihood(self, X, params: PLParams) -> np.ndarray:
        """``log PL(pi_i | p_k)``, shape (N, K) (compiled, parallel over rankings)."""
        self._need_resolved()
        log_p = np.ascontiguousarray(np.atleast_2d(params.log_worths), dtype=np.float64)
        out = np.empty((len(X), log_p.shape[0]))
        if len(X):
            log_pl_table(X.orders, X.lengths, log_p, out)
        return out

    # ------------------------------------------- the latents' conjugate form
    def latent_family(self) -> GammaExposure:
        """The conjugate family of the rankings given their Gamma latents
        (:mod:`dpclust.families.exposure`): every item's worth ``Gamma(a, 1)``, a ranking a
        row of counts over exposures.  The collapsed samplers run on it
        (:mod:`dpclust.samplers.augmented`)."""
        self._need_resolved()
        return GammaExposure(float(self.worth_shape), 1.0, self._n)

    def initial_latent_params(self, X, labels, n_clusters: int, rng) -> RateParams:
        """A start of every cluster's worths ``log lambda`` (K, n): those of
        :meth:`update_params` from the MM estimate (normalised: :meth:`draw_latents` draws
        their scale).  Any value is valid."""
        return RateParams(self.update_params(X, labels, None, rng, n_clusters).log_worths)

    def params_from_latent(self, rates: RateParams) -> PLParams:
        """The parameters of unnormalised worths ``log lambda`` (K, n): ``p = lambda /
        sum lambda``."""
        return PLParams(log_normalise(np.asarray(rates.log_rate, dtype=np.float64)))

    def latent_from_params(self, params: PLParams) -> RateParams:
        """The normalised worths as the latent family's rates (:meth:`draw_latents` draws
        their scale)."""
        return RateParams(np.asarray(params.log_worths, dtype=np.float64))

    def draw_latents(self, X, labels, rates: RateParams, rng) -> ExposureData:
        """The rankings' Gamma latents given the partition and the clusters' worths
        ``rates.log_rate`` (K, n), as rows of counts over exposures
        (:func:`~dpclust.families._pl_kernels.latent_rows`).

        First each cluster's scale ``S = sum_j lambda_j`` is drawn afresh from its
        conditional, the prior ``Gamma(n a, 1)`` (the likelihood is scale-free), keeping
        the normalised worths; then ``Z_s ~ Exp(Lambda_s)`` per ranking and stage at
        ``lambda = S p``, their exact conditional (Caron & Doucet 2012).  Without the fresh
        scale a cluster's scale would move only through its latents, a slow random walk, and
        a ranking's latents, drawn at its own cluster's scale, would fit a cluster of
        another scale worse."""
        self._need_resolved()
        N = len(X)
        log_p = log_normalise(np.asarray(rates.log_rate, dtype=np.float64))
        # a scale that underflows to 0 (shape n a of about 0.01 and less) would give
        # infinite latents: held at the smallest normal number, as it is drawn
        scale = np.maximum(rng.standard_gamma(self._n * float(self.worth_shape),
                                              size=len(log_p)), np.finfo(np.float64).tiny)
        counts, exposure = np.empty((N, self._n)), np.empty((N, self._n))
        draws = rng.standard_exponential((N, max(X.orders.shape[1], 1)))
        latent_rows(X.orders, np.asarray(X.lengths, dtype=np.int64),
                    np.asarray(labels, dtype=np.int64), np.exp(log_p) * scale[:, None],
                    draws, counts, exposure)
        return ExposureData(counts, exposure)

    # ------------------------------------------------- coarsened posteriors
    def log_prior(self, params: PLParams) -> np.ndarray:
        """``log Dir(p_k; a)`` per component (Lebesgue measure on ``p_1, ..., p_{n-1}``, the
        coordinates of :meth:`soft_proposal`'s density)."""
        self._need_resolved()
        return _pl.log_dirichlet_density(params.log_worths, float(self.worth_shape))

    def initial_params(self, X, labels, n_components: int, rng):
        """Each cluster's worths after :data:`N_MM_STEPS` minorisation-maximisation steps
        (Hunter 2004) from uniform worths, with the prior's ``a - 1`` pseudo-counts; prior
        draws for components without rankings.  A start only: any value is valid."""
        params = self.sample_prior(rng, n_components)
        labels = np.asarray(labels, dtype=np.int64)
        n, a = self._n, float(self.worth_shape)
        chosen, exposure = np.empty(n), np.empty(n)
        for k in np.unique(labels):
            rows = np.flatnonzero(labels == k)
            log_p = np.full(n, -math.log(n))
            for _ in range(N_MM_STEPS):  # p_j <- (a - 1 + W_j) / (n a + E_j(p))
                soft_sums(X.orders[rows], X.lengths[rows], np.ones(len(rows)), np.exp(log_p),
                          chosen, exposure)
                log_p = log_normalise(np.log(np.maximum(a - 1.0 + chosen, 1e-3))
                                      - np.log(n * a + exposure))
            params.log_worths[k] = log_p
        return params

    def soft_proposal(self, X, weights, given, rng=None, proposed=None):
        """A mixture of two scaled Dirichlet proposals (:data:`SOFT_KAPPAS`,
        :data:`SOFT_WEIGHTS`): the Gamma conditional of the worths given the expected
        latents at ``given`` from the rankings weighted by ``weights``
        (:func:`~dpclust.families._pl_kernels.soft_sums`); ``(params, log q)`` with
        ``log q`` the mixture's density (Lebesgue measure on ``p_1, ..., p_{n-1}``)."""
        n, a = self._n, float(self.worth_shape)
        chosen, exposure = np.empty(n), np.empty(n)
        soft_sums(X.orders, X.lengths, np.asarray(weights, dtype=np.float64),
                  np.exp(np.asarray(given.log_worths[0], dtype=np.float64)), chosen, exposure)
        parts = [(kappa * (a + chosen), kappa * (n * a + exposure)) for kappa in SOFT_KAPPAS]
        if rng is not None:
            pick = 0 if rng.random() < SOFT_WEIGHTS[0] else 1
            log_p = _pl.scaled_dirichlet_draw(rng, *parts[pick])
        else:
            log_p = np.asarray(proposed.log_worths[0], dtype=np.float64)
        log_q = np.logaddexp.reduce([math.log(c) + _pl.scaled_dirichlet_log_density(log_p, *part)
                                     for c, part in zip(SOFT_WEIGHTS, parts)])
        return PLParams(log_p[None, :]), float(log_q)

    # ------------------------------------------------------------ simulation
    def sample_data(self, params: PLParams, components, rng, lengths=None):
        """One top-t ranking from ``PL(p_k)`` per entry of ``components`` (the first ``t``
        items of the order of ``log p_j + Gumbel noise``, which is exactly Plackett–Luce).

        ``lengths`` (int or array) default to ``max_length``.  Returns a :class:`Rankings`.
        """
        from ..rankings.data import Rankings

        self._need_resolved()
        components = np.asarray(components, dtype=np.int64)
        m = len(components)
        if lengths is None:
            lengths = self._max_length
        lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (m,))
        keys = np.asarray(params.log_worths)[components] + rng.gumbel(size=(m, self._n))
        order = np.argsort(-keys, axis=1, kind="stable")
        width = int(lengths.max()) if m else 0
        orders = np.where(np.arange(width)[None, :] < lengths[:, None], order[:, :width], -1)
        return Rankings(orders, self._n, items=self._items)

    def hellinger(self, params: PLParams, *, length=None, n_samples: int = 2000,
                  random_state=0) -> np.ndarray:
        """Hellinger distance between every pair of components over top-``length``
        rankings (default: the longest training ranking), shape (K, K): summed over all
        top-t rankings when there are few, else by importance sampling
        (:mod:`dpclust.families._rankings_hellinger`)."""
        return self._hellinger(params, length, n_samples, random_state, self.max_length_)

    # ------------------------------------------------------- describing itself
    def describe_params(self, params: PLParams) -> dict:
        """The clusters' parameters for people: ``"worths"`` (K, n) normalised (each
        cluster's probability of ranking an item first), ``"modal_rankings"`` (K, n) item
        ids by worth, and ``"top_items"``: each cluster's first five items by name."""
        worths = np.exp(np.asarray(params.log_worths, dtype=np.float64))
        order = np.argsort(-worths, axis=1, kind="stable")
        return {"worths": worths, "modal_rankings": order,
                "top_items": [[self.item_name(i) for i in row[:5]] for row in order]}

    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """The first :data:`N_TOP_ITEMS` items of each cluster by worth, with their
        worths."""
        if "worths" not in params:
            return super().describe_clusters(params, feature_names=feature_names)
        worths = np.asarray(params["worths"], dtype=np.float64)
        order = np.asarray(params["modal_rankings"], dtype=np.int64)[:, :N_TOP_ITEMS]
        return ClusterSummary({
            "top_items": [[self.item_name(i) for i in row] for row in order.tolist()],
            "top_worths": [rounded(w[row]) for w, row in zip(worths, order)]})

    def describe_fit(self, params: dict, sizes: np.ndarray, *, sampler: str) -> dict:
        """The sampler's exactness and the clusters' sizes (the blocs, read from their
        ballots, are the summary's own: :mod:`dpclust.rankings.blocs`; each cluster's
        worths are in ``cluster_params``)."""
        return {"n_items": int(self.n_items_),
                "posterior": _SAMPLER_TEXT.get(sampler, f"sampler {sampler}"),
                **self._cluster_counts(sizes)}

    @classmethod
    def cluster_table(cls, block: dict) -> ClusterTable:
        """The first :data:`TABLE_ITEMS` items of each cluster by worth, with their worths
        in per cent."""
        top_items, top_worths = block.get("top_items"), block.get("top_worths")
        if top_items is None or top_worths is None:
            return ClusterTable()

        def cell(k):
            if k >= len(top_items):
                return ""
            shown = " › ".join(f"{name} {100 * w:.0f}%" for name, w in
                               zip(top_items[k][:TABLE_ITEMS], top_worths[k][:TABLE_ITEMS]))
            return shown + " › …" if len(top_items[k]) > TABLE_ITEMS else shown

        return ClusterTable(
            (ClusterColumn("items by worth (first choice %)", cell),),
            f" Each cluster lists its first {TABLE_ITEMS} items by worth with the probability "
            "that one of its voters ranks the item first.")



# ------------------------------------------------------------ small-n exact face
@lru_cache(maxsize=8)
def patterns(n: int) -> tuple:
    """Every top-t ranking of ``n`` items with ``1 <= t <= n - 1`` (the stored lengths), by
    length then lexicographically: the columns of :class:`PLStats`."""
    return tuple(p for t in range(1, n) for p in itertools.permutations(range(n), t))


@lru_cache(maxsize=8)
def _pattern_index(n: int) -> dict:
    return {p: r for r, p in enumerate(patterns(n))}


@lru_cache(maxsize=8)
def _quadrature(n: int, a: float, N: int):
    """``(log weights (M,), log PL of every pattern at every node (M, R))`` of the tensor
    Gauss–Jacobi rule for ``E_{p ~ Dir(a)}``: stick ``k`` is ``Beta(a, (n - k - 1) a)``."""
    sticks = []
    for k in range(n - 1):
        x, w = roots_jacobi(N, (n - k - 1) * a - 1.0, a - 1.0)
        sticks.append(((1.0 + x) / 2.0, np.log(w / w.sum())))
    grids = np.meshgrid(*[s[0] for s in sticks], indexing="ij")
    log_w = sum(np.meshgrid(*[s[1] for s in sticks], indexing="ij")).ravel()
    v = np.stack([g.ravel() for g in grids], axis=1)
    rest = np.cumprod(np.concatenate([np.ones((len(v), 1)), 1.0 - v], axis=1), axis=1)
    p = np.concatenate([rest[:, :-1] * v, rest[:, -1:]], axis=1)
    pats = patterns(n)
    width = n - 1
    orders = np.full((len(pats), width), -1, dtype=np.int64)
    for r, pat in enumerate(pats):
        orders[r, :len(pat)] = pat
    lengths = np.array([len(pat) for pat in pats], dtype=np.int64)
    log_pl = np.empty((len(pats), len(p)))
    log_pl_table(orders, lengths, np.log(np.maximum(p, 1e-300)), log_pl)
    log_pl = log_pl.T.copy()
    log_w.flags.writeable = False
    log_pl.flags.writeable = False
    return log_w, log_pl


__all__ = ["MAX_EXACT_ITEMS", "PLParams", "PLStats", "PlackettLuce", "patterns"]
