"""Exact MCMC for the coarsened posterior of a finite mixture, without allocations.

The target
----------
Miller & Dunson (2019) condition on the data lying within a tolerated discrepancy of the
model instead of being drawn from it exactly.  With the relative-entropy discrepancy and a
tolerance ``R ~ Exp(alpha_c)`` this gives, to a good approximation, the *power posterior*

.. math::

    \\pi_\\zeta(w, \\theta \\mid x) \\propto p(w) \\prod_k p(\\theta_k)
        \\prod_{i=1}^N \\Big(\\sum_k w_k f(x_i \\mid \\theta_k)\\Big)^{\\zeta},
    \\qquad \\zeta = \\frac{\\alpha_c}{\\alpha_c + N}

(their eq. 4.1): the *mixture* likelihood raised to ``zeta``.  The model is a mixture of
``K`` components with symmetric Dirichlet weights ``w ~ Dir(gamma, ..., gamma)``,
``gamma = alpha / K`` (:class:`~dpclust.priors.FiniteDirichlet`); a small ``gamma`` (a
sparse finite mixture) empties the components the data do not need.  Raising each point's
*component* likelihood inside an allocation sampler targets something else
(``prod_i sum_k w_k f^zeta``, which merges real clusters at small ``zeta`` because the
allocation term is not tempered), so this sampler has no allocations in its state.

Writing ``s_i = sum_k w_k f(x_i | theta_k)`` and ``c_i`` for the multiplicity of distinct
row ``i`` (a ballot cast 40 times is evaluated once), the log target is

.. math::

    \\log \\pi_\\zeta = \\sum_k (\\gamma - 1) \\log w_k + \\sum_k \\log p(\\theta_k)
        + \\zeta \\sum_i c_i \\log s_i + \\text{const}.

The moves
---------
Every move is a Metropolis-Hastings step that leaves ``pi_zeta`` invariant; nothing else
is approximated, so the chain is exact for any ``zeta`` (``zeta = 1`` is the ordinary
posterior of the finite mixture).

1. **Component parameters, conjugate families** (Gaussian, multinomial).  With the
   responsibilities ``r_ik = w_k f(x_i | theta_k) / s_i`` of the current state, propose
   ``theta_k' ~ p(theta | S_k)``, the conjugate posterior given the *soft, tempered*
   statistics ``S_k = sum_i zeta c_i r_ik T(x_i)`` (:meth:`weighted_stats`): the
   EM-style local approximation of ``theta_k``'s conditional under ``pi_zeta`` (by
   Jensen's inequality ``log s_i >= sum_k r_ik log(w_k f_ik / r_ik)``, tight at the
   current state).  The reverse proposal conditions on the statistics ``S_k'`` computed
   with the responsibilities of the proposed state, so

   .. math::

       \\log a = \\log p(\\theta_k') - \\log p(\\theta_k)
           + \\zeta \\sum_i c_i (\\log s_i' - \\log s_i)
           + \\log p(\\theta_k \\mid S_k') - \\log p(\\theta_k' \\mid S_k),

   every density normalised (:meth:`log_posterior_density`).  A component no point is
   responsible for is proposed from its prior and almost always accepted.
2. **Component parameters, other families** (Generalized Mallows): random walks
   (:meth:`random_walk`, a symmetric swap of two adjacent items of the central ranking
   or a log-normal step of the dispersions), ``log a = log p(theta') - log p(theta) +
   zeta sum_i c_i (log s_i' - log s_i) + log q-ratio``.
3. **Weights**: ``w' ~ Dir(gamma + zeta n)`` with the soft counts ``n_k = sum_i c_i r_ik``
   of the current state, reversed with those of the proposed one:
   ``log a = sum_k (gamma - 1)(log w_k' - log w_k) + zeta sum_i c_i (log s_i' - log s_i)
   + log Dir(w | gamma + zeta n') - log Dir(w' | gamma + zeta n)``.
4. **The partition reported** is not part of the chain: after each sweep every point is
   allocated to a component with probability ``r_ik`` (its posterior allocation given the
   current ``w, theta``), so the kept partitions are draws of the allocation under the
   coarsened posterior, summarised as any sampler's draws.  At ``zeta = 1`` they are draws
   of the finite mixture's posterior partition, which ``tests/test_coarsened.py`` checks
   against enumeration.

References
----------
Miller, J. W. & Dunson, D. B. (2019). Robust Bayesian inference via coarsening. *Journal of
    the American Statistical Association* 114(527), 1113-1125.
Malsiner-Walli, G., Frühwirth-Schnatter, S. & Grün, B. (2016). Model-based clustering based
    on sparse finite Gaussian mixtures. *Statistics and Computing* 26, 303-324.
Tierney, L. (1994). Markov chains for exploring posterior distributions (MH with
    state-dependent proposals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy.special import logsumexp

from ...families.base import ConjugateFamily, take
from ...kernels import coarsened as _ck
from ...priors import FiniteDirichlet
from ..base import MixtureModel, StepInfo, initial_labels, relabel

#: below this share of the weight a component is proposed from its prior
_VACANT = 1e-9


class CoarsenedState(NamedTuple):
    """The chain's state, ``(w, theta)``, with what the next step reuses.

    ``labels`` is the allocation drawn after the last sweep (an output, not part of the
    chain); ``log_v`` the logarithms of the latent weights ``v_k ~ Gamma(gamma, 1)``,
    ``w = v / sum v``; ``log_lik`` (distinct rows x components) holds
    ``log f(x_i | theta_k)``.
    """

    labels: np.ndarray
    alpha: float
    params: Any
    log_v: np.ndarray
    log_lik: np.ndarray
    n_accepted: np.ndarray
    components: np.ndarray | None = None

    @property
    def kept_params(self):
        """The parameters of the components ``labels`` uses, in the order of its labels
        (what a kept draw holds)."""
        return take(self.params, self.components)

    @property
    def log_w(self) -> np.ndarray:
        """The mixture's log weights."""
        return self.log_v - logsumexp(self.log_v)


@dataclass(frozen=True)
class CoarsenedMixture:
    """Metropolis-Hastings sampler of a finite mixture's coarsened posterior (module notes).

    Parameters
    ----------
    n_walk : int, default=2
        Random-walk proposals per component and sweep, after the soft proposal, for
        families that define them (Generalized Mallows).
    walk_scale : float, default=1.0
        Size of those random-walk steps (:meth:`ConjugateFamily.random_walk`).

    Notes
    -----
    The model is :class:`~dpclust.priors.FiniteDirichlet` (``K`` components, weights
    ``Dir(alpha/K)``) and the power ``zeta`` is the model's
    (:attr:`~dpclust.samplers.MixtureModel.zeta`).  One step updates each component's
    parameters in turn, then the weights, then draws the allocation it reports.
    """

    n_walk: int = 2
    walk_scale: float = 1.0
    name = "coarsened"
    priors = ("finite",)
    #: start from k-means clusters where the family has features for it
    kmeans_start = True
    needs = "instantiated"
    is_exact = True

    def components(self, model: MixtureModel) -> tuple[int, float]:
        """``(K, gamma)`` of the model's finite prior."""
        prior = model.partition_prior
        if not isinstance(prior, FiniteDirichlet):
            raise ValueError(f"the coarsened sampler fits a finite mixture "
                             f"(prior='finite:K'), not a {prior.title} prior")
        K = int(prior.n_components)
        return K, float(prior.alpha) / K

    # ------------------------------------------------------------------ start
    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float | None = None) -> CoarsenedState:
        fam = model.family
        K, gamma = self.components(model)
        Xu, inverse, counts = model.distinct
        labels = initial_labels(rng, model.n_samples, labels, min(n_clusters, K))
        if labels.max() >= K:
            raise ValueError(f"the initial partition has {labels.max() + 1} clusters, more "
                             f"than the {K} components of the finite prior")
        # each distinct row starts in the cluster of its first row
        first = np.empty(len(counts), dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse) - 1, -1, -1)
        lab_u = labels[first]
        if type(fam).weighted_stats is not ConjugateFamily.weighted_stats:
            onehot = np.zeros((len(counts), K))
            onehot[np.arange(len(counts)), lab_u] = counts * model.zeta
            params = fam.sample_posterior(fam.weighted_stats(Xu, onehot), rng)
        else:
            params = fam.initial_params(Xu, lab_u, K, rng)
        sizes = np.bincount(labels, minlength=K).astype(np.float64)
        log_v = np.log(sizes + gamma) - math.log(sizes.sum() + gamma * K)
        log_lik = fam.log_likelihood(Xu, params)
        state = CoarsenedState(labels, float(model.partition_prior.alpha), params, log_v,
                               log_lik, np.zeros(2, dtype=np.int64))
        labels, components = self._allocate(rng, state, model)
        return state._replace(labels=labels, components=components)

    # ------------------------------------------------------------------- step
    def step(self, rng, state: CoarsenedState, model: MixtureModel):
        fam = model.family
        K, gamma = self.components(model)
        Xu, inverse, c = model.distinct
        zeta = model.zeta
        kinds = _proposal_kinds(fam, self.n_walk)
        params = state.params
        log_v = np.array(state.log_v, dtype=np.float64, copy=True)
        L = np.array(state.log_lik, dtype=np.float64, copy=True)
        D = len(c)
        m, P = np.empty(D), np.empty((D, K))
        _ck.scale_rows(L, m, P)
        shift = float(log_v.max())
        v = np.exp(log_v - shift)
        log_prior = np.asarray(fam.log_prior(params), dtype=np.float64).copy()
        rest, resp, resp_new = np.empty(D), np.empty(D), np.empty(D)
        n_total = float(c.sum())
        n_theta = n_weights = 0
        for k in range(K):
            _ck.rest_sums(P, v, k, rest)
            here, soft = _ck.column_terms(rest, m, L[:, k], log_v[k] - shift, c, resp)
            # the component's parameters (moves 1 and 2): a component of negligible weight
            # is proposed from its prior (which of the moves runs depends on the weights
            # only, not on the parameters it moves)
            vacant = v[k] < _VACANT * v.sum()
            for kind in (("prior",) if vacant else kinds):
                old = take(params, [k])
                if kind == "soft":
                    new, log_fwd = fam.soft_proposal(Xu, zeta * c * resp, old, rng=rng)
                elif kind == "prior":
                    new = fam.sample_prior(rng, 1)
                else:
                    new, log_q_ratio = fam.random_walk(old, rng, self.walk_scale)
                Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new)[:, 0])
                there, _ = _ck.column_terms(rest, m, Lk, log_v[k] - shift, c, resp_new)
                lp_new = float(fam.log_prior(new)[0])
                log_a = lp_new - log_prior[k] + zeta * (there - here)
                if kind == "soft":
                    _, log_back = fam.soft_proposal(Xu, zeta * c * resp_new, new, proposed=old)
                    log_a += log_back - log_fwd
                elif kind == "prior":  # an independence proposal from the prior
                    log_a += log_prior[k] - lp_new
                else:
                    log_a += log_q_ratio
                if math.log(rng.random()) < log_a:
                    params = _put(params, k, new)
                    log_prior[k] = lp_new
                    _ck.set_column(L, m, P, rest, k, Lk)
                    here, soft = _ck.column_terms(rest, m, Lk, log_v[k] - shift, c, resp)
                    n_theta += 1
            # its weight (move 3): a Gaussian step of u = log v_k ~ log Gamma(gamma, 1)
            step = _weight_step(gamma, zeta, soft)
            u = log_v[k] + step * rng.standard_normal()
            there, soft_new = _ck.column_terms(rest, m, L[:, k], u - shift, c, resp_new)
            V, V_new = v.sum(), v.sum() - v[k] + math.exp(u - shift)
            d = u - log_v[k]
            step_back = _weight_step(gamma, zeta, soft_new)
            log_a = (gamma * d - (math.exp(u) - math.exp(log_v[k]))
                     + zeta * (there - here - n_total * (math.log(V_new) - math.log(V)))
                     + _log_normal(d, step_back) - _log_normal(d, step))
            if math.log(rng.random()) < log_a:
                log_v[k] = u
                v[k] = math.exp(u - shift)
                resp, resp_new = resp_new, resp
                n_weights += 1
        labels = np.empty(len(inverse), dtype=np.int64)
        _ck.allocate(P, v, inverse, rng.random(len(inverse)), labels)
        labels, components = relabel(labels)
        log_lik = float(_ck.log_mixture(P, m, v, c))
        log_joint = (float((gamma * log_v - np.exp(log_v)).sum())  # log Gamma(v) + log |dv/du|
                     + float(log_prior.sum()) + zeta * log_lik)
        new_state = CoarsenedState(labels, state.alpha, params, log_v, L,
                                   np.array([n_theta, n_weights], dtype=np.int64), components)
        return new_state, StepInfo(log_joint, int(labels.max()) + 1, state.alpha,
                                   n_accepted_splits=n_theta, n_accepted_merges=n_weights,
                                   log_likelihood=log_lik)

    def _allocate(self, rng, state: CoarsenedState, model: MixtureModel) -> np.ndarray:
        """Each point's component drawn from its responsibilities (canonical labels)."""
        _, inverse, _ = model.distinct
        L = np.ascontiguousarray(state.log_lik, dtype=np.float64)
        m, P = np.empty(L.shape[0]), np.empty(L.shape)
        _ck.scale_rows(L, m, P)
        labels = np.empty(len(inverse), dtype=np.int64)
        _ck.allocate(P, np.exp(state.log_v - state.log_v.max()), inverse,
                     rng.random(len(inverse)), labels)
        return relabel(labels)


def _weight_step(gamma: float, zeta: float, soft: float) -> float:
    """The sd of a ``log v_k`` step: about the posterior sd of a weight carried by
    ``zeta * soft`` effective points (2.4 / sqrt(gamma + zeta soft + 1))."""
    return 2.4 / math.sqrt(gamma + zeta * soft + 1.0)


def _log_normal(d: float, sd: float) -> float:
    """``log N(d; 0, sd^2)``."""
    return -0.5 * (d / sd) ** 2 - math.log(sd)


def _proposal_kinds(fam, n_walk: int) -> tuple:
    """The proposals for a component in one sweep: the family's soft proposal (moves 1
    and 2) if it has one, and ``n_walk`` random walks if it has them."""
    cls = type(fam)
    soft = (cls.soft_proposal is not ConjugateFamily.soft_proposal
            or cls.weighted_stats is not ConjugateFamily.weighted_stats)
    walk = cls.random_walk is not ConjugateFamily.random_walk
    if not (soft or walk):
        raise ValueError(f"{cls.__name__} gives the coarsened sampler no proposal (it needs "
                         f"weighted_stats or soft_proposal, or random_walk)")
    return (("soft",) if soft else ()) + (("walk",) * n_walk if walk else ())


def _put(params, k: int, one):
    """``params`` with component ``k`` replaced by the batch of one ``one`` (a copy)."""
    out = []
    for a, b in zip(params, one):
        a = np.array(a, copy=True)
        a[k] = np.asarray(b)[0]
        out.append(a)
    return type(params)(*out)
