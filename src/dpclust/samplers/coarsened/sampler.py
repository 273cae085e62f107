r"""Exact MCMC for the coarsened posterior of a finite mixture, without allocations.

The target
----------
Miller & Dunson (2019) condition on the data lying within a tolerated discrepancy of the
model instead of being drawn from it exactly.  With the relative-entropy discrepancy and a
tolerance ``R ~ Exp(alpha_c)`` this gives, to a good approximation, the *power posterior*

.. math::

    \pi_\zeta(w, \theta \mid x) \propto p(w) \prod_k p(\theta_k)
        \prod_{i=1}^N \Big(\sum_k w_k f(x_i \mid \theta_k)\Big)^{\zeta},
    \qquad \zeta = \frac{\alpha_c}{\alpha_c + N}

(their power-likelihood approximation of the c-posterior): the *mixture* likelihood
raised to ``zeta``.  The model is a mixture of
``K`` components with symmetric Dirichlet weights ``w ~ Dir(gamma, ..., gamma)``,
``gamma = alpha / K`` (:class:`~dpclust.priors.FiniteDirichlet`); a small ``gamma`` (a
sparse finite mixture) empties the components the data do not need.  Raising each point's
*component* likelihood inside an allocation sampler targets something else
(``prod_i sum_k w_k f^zeta``, which merges real clusters at small ``zeta`` because the
allocation term is not tempered), so this sampler has no allocations in its state.

Writing ``s_i = sum_k w_k f(x_i | theta_k)`` and ``c_i`` for the multiplicity of distinct
row ``i`` (a ballot cast 40 times is evaluated once), the log target is

.. math::

    \log \pi_\zeta = \sum_k (\gamma - 1) \log w_k + \sum_k \log p(\theta_k)
        + \zeta \sum_i c_i \log s_i + \text{const}.

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

       \log a = \log p(\theta_k') - \log p(\theta_k)
           + \zeta \sum_i c_i (\log s_i' - \log s_i)
           + \log p(\theta_k \mid S_k') - \log p(\theta_k' \mid S_k),

   every density normalised (:meth:`log_posterior_density`).  A component no point is
   responsible for is proposed from its prior and almost always accepted.
2. **Component parameters, other families** (Generalized Mallows): random walks
   (:meth:`random_walk`, a symmetric swap of two adjacent items of the central ranking
   or a log-normal step of the dispersions), ``log a = log p(theta') - log p(theta) +
   zeta sum_i c_i (log s_i' - log s_i) + log q-ratio``.
3. **Weights**, through latent ``v_k ~ Gamma(gamma, 1)`` with ``w = v / sum_j v_j`` (which
   is ``Dir(gamma, ..., gamma)``), one component at a time: a Gaussian step of
   ``u = log v_k`` (target density ``exp(gamma u - e^u)`` in ``u``) whose size
   ``2.4 / sqrt(gamma + zeta n_k + 1)`` follows the soft count ``n_k = sum_i c_i r_ik``
   (computed again at the proposed state for the reverse step), with
   ``log a = gamma (u' - u) - (e^u' - e^u) + zeta sum_i c_i (log s_i' - log s_i) +
   log N(u - u'; 0, sd') - log N(u' - u; 0, sd)``; then ``v_k' ~ Gamma(gamma, 1)`` drawn
   from the prior, accepted with ``zeta sum_i c_i (log s_i' - log s_i)``: a component that
   describes few points is refreshed at once instead of wandering the prior's long, flat
   range of ``log v_k`` in small steps.
4. **Allocations as an auxiliary variable.**  The moves above see one component at a
   time through the mixture density; where components overlap, the soft statistics move
   with the parameters and the Hastings ratio of a bold proposal is poor.  So each sweep
   starts with a data-augmentation step on the extended target

   .. math::

       \tilde\pi(w, \theta, z) = \pi_\zeta(w, \theta) \prod_i r_{i z_i}(w, \theta)
       \propto p(w) p(\theta) \prod_i w_{z_i} f(x_i \mid \theta_{z_i})
           \prod_i s_i^{-(1 - \zeta)},

   whose marginal in ``(w, theta)`` is ``pi_zeta``: draw ``z`` from its exact conditional
   (the responsibilities), make MH moves of ``(w, theta)`` that leave ``pi~`` invariant, and
   forget ``z``.  Component ``k`` proposes ``theta_k' ~ q(. | zeta n_k)``, the family's
   soft proposal from its allocated points counted ``zeta`` times each (the conjugate
   posterior given tempered statistics), with ``log a = log p(theta') - log p(theta) +
   sum_{z_i = k} (log f_ik' - log f_ik) - (1 - zeta) sum_i c_i (log s_i' - log s_i) +
   log q(theta | .) - log q(theta' | .)``; the weights propose ``w' ~ Dir(gamma + zeta n)``
   with ``sum_k v_k`` kept, ``log a = (1 - zeta) [sum_k n_k (log w_k' - log w_k) - sum_i
   c_i (log s_i' - log s_i)]``.  At ``zeta = 1`` both are always accepted and the step is
   the blocked Gibbs sampler of the finite mixture (``"fsd"``); as ``zeta`` falls the
   allocation-free moves take over.  Below ``zeta = 0.3`` the step is skipped (a choice
   fixed by ``zeta``, so the chain stays exact): the term ``(1 - zeta) sum_i log s_i``
   punishes any change of a component that describes points, and on the Dublin West
   ballots its proposals for such components are accepted 1 % of the time at
   ``zeta = 0.09`` and 0.2 % at ``zeta = 0.01`` (6 % at 0.25, 23 % at 0.5, 52 % at 0.77).
6. **A component's weight and parameters together.**  Where components overlap, a
   component's weight and the points it describes move together: more weight takes more
   points, which moves its parameters.  So ``u' = u + sd e`` (``sd`` three times move 3's)
   and then ``theta' ~ q(. | zeta c r(u', theta))``, the soft proposal given the
   responsibilities *at the new weight*; the reverse proposal is ``q(theta | zeta c
   r(u, theta'))``, so ``log a`` is move 3's plus the parameters' prior and proposal
   ratios.
7. **Weight passed between two components.**  Component ``k`` and a partner ``j`` drawn
   uniformly among the components holding at least ``partner_share`` of the weight: a
   random walk on ``eta = log(v_k / v_j)`` with ``v_j + v_k`` kept (the Jacobian from
   ``(log v_j, log v_k)`` to ``(log(v_j + v_k), eta)`` is 1), then both components'
   parameters from their soft proposals given the responsibilities at the new weights;
   the reverse proposal conditions on the responsibilities at the old weights and new
   parameters, and the partner's probability ``1 / (#partners - 1)`` is taken in both
   states.  This is the move that lets a cluster grow out of another or fold back into it:
   on the ballots at ``alpha_c = 300`` (four clusters, one of 14 % that now and then
   empties) it is accepted 11 % of the time.
8. **A merge or a split** (:mod:`.split_merge`): a reversible-jump pair between two live
   components and one live and one vacant, the split cutting the live component's points
   at the hyperplane normal to their first principal axis.  Moves 1-7 change the number
   of components that describe data only by small steps, which in many dimensions do not
   happen: on 7,000 images in 50 dimensions chains kept the 5 or 30 components they
   started with.
5. **The partition reported** is not part of the chain: after each sweep every point is
   allocated to a component with probability ``r_ik`` (its posterior allocation given the
   current ``w, theta``), so the kept partitions are draws of the allocation under the
   coarsened posterior, summarised as any sampler's draws.  At ``zeta = 1`` they are draws
   of the finite mixture's posterior partition, which ``tests/test_coarsened.py`` checks
   against enumeration (and against ``"fsd"`` on 2,000 overlapping points).

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

from ...families.base import ConjugateFamily, log_dirichlet, take
from ...kernels import coarsened as _ck
from ...priors import FiniteDirichlet
from ..base import MixtureModel, StepInfo, initial_labels, relabel
from . import split_merge as _sm

class CoarsenedState(NamedTuple):
    """The chain's state, ``(w, theta)``, with what the next step reuses.

    ``labels`` is the allocation drawn after the last sweep (an output, not part of the
    chain); ``log_v`` the logarithms of the latent weights ``v_k ~ Gamma(gamma, 1)``,
    ``w = v / sum v``; ``log_lik`` (distinct rows x components) holds
    ``log f(x_i | theta_k)``; ``n_accepted`` counts the last step's accepted moves: of
    the augmentation step (4), of parameters (1, 2), of weights (3), of both (6) and of
    pairs (7).
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
    n_walk : int, optional
        Random-walk proposals per component and sweep, after the soft proposal, for
        families that define them (Generalized Mallows).  Default: none where the family
        has a soft proposal (on the ballots it is accepted 77 % of the time and the walks
        add cost, not mixing), two where the walks are the only parameter move.
    walk_scale : float, default=1.0
        Size of those random-walk steps (:meth:`ConjugateFamily.random_walk`).
    vacant_share : float, default=1e-9
        A component with less than this share of the weight is proposed from its prior
        instead (one independence proposal per sweep: it describes no data).
    joint_scale : float, default=3.0
        The weight step of move 6, in units of move 3's; 0 turns move 6 off.
    augment_above : float, default=0.3
        The data-augmentation step (move 4) runs when ``zeta`` is at least this.
    pair_scale : float, default=2.0
        The sd of move 7's step of ``log(v_k / v_j)``; 0 turns move 7 off.
    partner_share : float, default=1e-3
        The share of the weight a component needs to take part in move 7.
    split_merge : int, default=2
        Merge-or-split attempts (move 8, :mod:`.split_merge`) per sweep, for families with
        a soft proposal and k-means features; 0 turns move 8 off.

    Notes
    -----
    The model is :class:`~dpclust.priors.FiniteDirichlet` (``K`` components, weights
    ``Dir(alpha/K)``) and the power ``zeta`` is the model's
    (:attr:`~dpclust.samplers.MixtureModel.zeta`).  One step draws allocations and
    moves every component and the weights given them (move 4, when ``zeta`` is large
    enough), then moves each component's parameters and weight without them (moves 1-3
    and 6), passes weight between pairs of components (7), then draws the allocation it
    reports (5).
    """

    n_walk: int | None = None
    walk_scale: float = 1.0
    vacant_share: float = 1e-9
    joint_scale: float = 3.0
    augment_above: float = 0.3
    pair_scale: float = 2.0
    partner_share: float = 1e-3
    split_merge: int = 2
    name = "coarsened"
    summary = ("the coarsened posterior of a finite mixture (Miller & Dunson 2019) by "
               "allocation-free Metropolis-Hastings; with coarsening")
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
                               log_lik, np.zeros(6, dtype=np.int64))
        labels, components = relabel(_Work.of(state, fam).allocate(rng, inverse))
        return state._replace(labels=labels, components=components)

    # ------------------------------------------------------------------- step
    def step(self, rng, state: CoarsenedState, model: MixtureModel):
        fam = model.family
        K, gamma = self.components(model)
        Xu, inverse, c = model.distinct
        c = np.asarray(c, dtype=np.float64)  # the multiplicities enter float products only
        w = _Work.of(state, fam)
        n_aug = (self._augmented_sweep(rng, fam, Xu, inverse, c, model.zeta, gamma, w)
                 if model.zeta >= self.augment_above else 0)
        n_theta, n_weights, n_joint, n_pair = self._free_sweep(rng, fam, Xu, c, model.zeta,
                                                               gamma, w)
        n_sm = self._split_merge_sweep(rng, fam, Xu, c, model.zeta, gamma, w)
        labels, components = relabel(w.allocate(rng, inverse))
        log_lik = float(_ck.log_mixture(w.P, w.m, w.v, c))
        log_joint = (float((gamma * w.log_v - np.exp(w.log_v)).sum())  # log Gamma(v) |dv/du|
                     + float(w.log_prior.sum()) + model.zeta * log_lik)
        new_state = CoarsenedState(labels, state.alpha, w.params, w.log_v, w.L,
                                   np.array([n_aug, n_theta, n_weights, n_joint, n_pair,
                                             n_sm], dtype=np.int64),
                                   components)
        return new_state, StepInfo(log_joint, int(labels.max()) + 1, state.alpha,
                                   n_accepted_splits=n_aug + n_theta,
                                   n_accepted_merges=n_weights + n_joint + n_pair + n_sm,
                                   log_likelihood=log_lik)

    def _split_merge_sweep(self, rng, fam, Xu, c, zeta, gamma, w) -> int:
        """Move 8: ``split_merge`` merge-or-split attempts; returns the accepted ones."""
        if self.split_merge <= 0 or "soft" not in _proposal_kinds(fam, self.n_walk):
            return 0
        feats = fam.init_features(Xu)
        if feats is None:
            return 0
        return sum(_sm.split_merge(rng, fam, Xu, feats, c, zeta, gamma, w, self.vacant_share)
                   for _ in range(self.split_merge))

    def _augmented_sweep(self, rng, fam, Xu, inverse, c, zeta, gamma, w) -> int:
        """Moves 4 and 5 (module notes): allocations drawn from the responsibilities, then
        each component's parameters and the weights given them; returns the accepted
        moves."""
        D, K = w.P.shape
        z = w.allocate(rng, inverse)
        n = np.bincount(inverse * K + z, minlength=D * K).reshape(D, K).astype(np.float64)
        rest, resp = np.empty(D), np.empty(D)
        accepted = 0
        for k in range(K):
            _ck.rest_sums(w.P, w.v, k, rest)
            lvk = w.log_v[k] - w.shift
            here, _ = _ck.column_terms(rest, w.m, w.L[:, k], lvk, c, resp)
            old = take(w.params, [k])
            nk = np.ascontiguousarray(n[:, k])
            new, log_fwd = fam.soft_proposal(Xu, zeta * nk, old, rng=rng)
            _, log_back = fam.soft_proposal(Xu, zeta * nk, new, proposed=old)
            Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new)[:, 0])
            there, _ = _ck.column_terms(rest, w.m, Lk, lvk, c, resp)
            lp_new = float(fam.log_prior(new)[0])
            log_a = (lp_new - w.log_prior[k] + _ck.dot_diff(nk, Lk, w.L[:, k])
                     - (1.0 - zeta) * (there - here) + log_back - log_fwd)
            if math.log(rng.random()) < log_a:
                w.accept(k, new, lp_new, Lk, rest)
                accepted += 1
        # the weights given the allocations, their total V kept: w' ~ Dir(gamma + zeta n)
        counts = n.sum(axis=0)
        log_w_new = log_dirichlet(rng, gamma + zeta * counts)
        V = w.v.sum()
        v_new = V * np.exp(log_w_new)
        log_w = np.log(w.v) - math.log(V)
        used = counts > 0
        log_a = (1.0 - zeta) * (float((counts[used] * (log_w_new[used] - log_w[used])).sum())
                                - (_ck.log_mixture(w.P, w.m, v_new, c)
                                   - _ck.log_mixture(w.P, w.m, w.v, c)))
        if math.log(rng.random()) < log_a and np.all(v_new > 0):
            w.v = v_new
            w.log_v = np.log(v_new) + w.shift
            accepted += 1
        return accepted

    def _free_sweep(self, rng, fam, Xu, c, zeta, gamma, w) -> tuple[int, int, int, int]:
        """Moves 1-3, 6 and 7 (module notes), without allocations; returns the accepted
        moves of parameters, of weights, of both (6) and of pairs (7)."""
        D, K = w.P.shape
        kinds = _proposal_kinds(fam, self.n_walk)
        rest, resp, resp_new = np.empty(D), np.empty(D), np.empty(D)
        n_total = float(c.sum())
        n_theta = n_weights = n_joint = n_pair = 0
        for k in range(K):
            _ck.rest_sums(w.P, w.v, k, rest)
            lvk = w.log_v[k] - w.shift
            here, soft = _ck.column_terms(rest, w.m, w.L[:, k], lvk, c, resp)
            # the component's parameters (moves 1 and 2): a component of negligible weight
            # is proposed from its prior (which of the moves runs depends on the weights
            # only, not on the parameters it moves)
            vacant = w.v[k] < self.vacant_share * w.v.sum()
            for kind in (("prior",) if vacant else kinds):
                old = take(w.params, [k])
                if kind == "soft":
                    new, log_fwd = fam.soft_proposal(Xu, zeta * c * resp, old, rng=rng)
                elif kind == "prior":
                    new = fam.sample_prior(rng, 1)
                else:
                    new, log_q_ratio = fam.random_walk(old, rng, self.walk_scale)
                Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new)[:, 0])
                there, _ = _ck.column_terms(rest, w.m, Lk, lvk, c, resp_new)
                lp_new = float(fam.log_prior(new)[0])
                log_a = lp_new - w.log_prior[k] + zeta * (there - here)
                if kind == "soft":
                    _, log_back = fam.soft_proposal(Xu, zeta * c * resp_new, new, proposed=old)
                    log_a += log_back - log_fwd
                elif kind == "prior":  # an independence proposal from the prior
                    log_a += w.log_prior[k] - lp_new
                else:
                    log_a += log_q_ratio
                if math.log(rng.random()) < log_a:
                    w.accept(k, new, lp_new, Lk, rest)
                    here, soft = _ck.column_terms(rest, w.m, Lk, lvk, c, resp)
                    n_theta += 1
            # its weight (move 3): a Gaussian step of u = log v_k ~ log Gamma(gamma, 1)
            step = _weight_step(gamma, zeta, soft)
            u = w.log_v[k] + step * rng.standard_normal()
            there, soft_new = _ck.column_terms(rest, w.m, w.L[:, k], u - w.shift, c, resp_new)
            V, V_new = w.v.sum(), w.v.sum() - w.v[k] + math.exp(u - w.shift)
            d = u - w.log_v[k]
            step_back = _weight_step(gamma, zeta, soft_new)
            log_a = (gamma * d - (math.exp(u) - math.exp(w.log_v[k]))
                     + zeta * (there - here - n_total * (math.log(V_new) - math.log(V)))
                     + _log_normal(d, step_back) - _log_normal(d, step))
            if math.log(rng.random()) < log_a:
                w.log_v[k] = u
                w.v[k] = math.exp(u - w.shift)
                n_weights += 1
                here, soft = there, soft_new
            # (which components move 6 runs for is decided on the current weights, and a
            # proposal that would leave the component vacant is refused: its reverse
            # would not be tried)
            if ("soft" in kinds and self.joint_scale > 0
                    and w.v[k] >= self.vacant_share * w.v.sum()):
                here, soft, ok = self._joint_move(rng, fam, Xu, c, zeta, gamma, w, k, rest,
                                                  here, soft, resp, resp_new, n_total)
                n_joint += ok
            # and a draw from its prior, Gamma(gamma, 1), as an independence proposal: the
            # prior cancels, so a component that describes few points (whose log weight
            # would wander the prior's flat range in small steps) is refreshed at once
            u = float(np.log(rng.standard_gamma(gamma + 1.0)) + math.log(rng.random()) / gamma)
            there, _ = _ck.column_terms(rest, w.m, w.L[:, k], u - w.shift, c, resp_new)
            V, V_new = w.v.sum(), w.v.sum() - w.v[k] + math.exp(u - w.shift)
            log_a = (zeta * (there - here - n_total * (math.log(V_new) - math.log(V)))
                     if V_new > 0 else -math.inf)
            if math.log(rng.random()) < log_a:
                w.log_v[k] = u
                w.v[k] = math.exp(u - w.shift)
                n_weights += 1
        if "soft" in kinds and self.pair_scale > 0:
            for k in range(K):
                n_pair += self._pair_move(rng, fam, Xu, c, zeta, gamma, w, k)
        return n_theta, n_weights, n_joint, n_pair

    def _pair_move(self, rng, fam, Xu, c, zeta, gamma, w, k) -> int:
        """Weight moved between component ``k`` and a partner ``j`` (drawn among the
        components with at least ``partner_share`` of the weight), their total kept, a
        random walk on ``logit(v_k / (v_j + v_k))``; then both components' parameters from
        their soft proposals given the responsibilities at the new weights (the reverse:
        at the old weights and new parameters)."""
        D, K = w.P.shape
        V = w.v.sum()
        big = np.flatnonzero(w.v >= self.partner_share * V)
        if k not in big or len(big) < 2:
            return 0
        j = int(rng.choice(big[big != k]))
        uj, uk = w.log_v[j], w.log_v[k]
        logT = np.logaddexp(uj, uk)
        eta = uk - uj + self.pair_scale * rng.standard_normal()
        uk_new = float(logT - np.logaddexp(0.0, -eta))
        uj_new = float(logT - np.logaddexp(0.0, eta))
        vj_new, vk_new = math.exp(uj_new - w.shift), math.exp(uk_new - w.shift)
        V_new = V - w.v[j] - w.v[k] + vj_new + vk_new
        others = np.delete(w.v, [j, k])
        if min(vj_new, vk_new) < self.partner_share * V_new:
            return 0  # the reverse move would not pick this pair
        big_new = int((others >= self.partner_share * V_new).sum()) + 2
        rest = np.empty(D)
        _ck.rest_sums2(w.P, w.v, j, k, rest)
        rj, rk = np.empty(D), np.empty(D)
        here = _ck.pair_terms(rest, w.m, w.L[:, j], w.L[:, k], uj - w.shift, uk - w.shift,
                              c, rj, rk)
        _ck.pair_terms(rest, w.m, w.L[:, j], w.L[:, k], uj_new - w.shift, uk_new - w.shift,
                       c, rj, rk)
        old_j, old_k = take(w.params, [j]), take(w.params, [k])
        new_j, fj = fam.soft_proposal(Xu, zeta * c * rj, old_j, rng=rng)
        new_k, fk = fam.soft_proposal(Xu, zeta * c * rk, old_k, rng=rng)
        Lj = np.ascontiguousarray(fam.log_likelihood(Xu, new_j)[:, 0])
        Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new_k)[:, 0])
        there = _ck.pair_terms(rest, w.m, Lj, Lk, uj_new - w.shift, uk_new - w.shift, c, rj, rk)
        _ck.pair_terms(rest, w.m, Lj, Lk, uj - w.shift, uk - w.shift, c, rj, rk)
        _, bj = fam.soft_proposal(Xu, zeta * c * rj, new_j, proposed=old_j)
        _, bk = fam.soft_proposal(Xu, zeta * c * rk, new_k, proposed=old_k)
        lp_j, lp_k = float(fam.log_prior(new_j)[0]), float(fam.log_prior(new_k)[0])
        n_total = float(c.sum())
        log_a = (gamma * (uj_new + uk_new - uj - uk)
                 + lp_j + lp_k - w.log_prior[j] - w.log_prior[k]
                 + zeta * (there - here - n_total * (math.log(V_new) - math.log(V)))
                 + bj + bk - fj - fk + math.log(len(big) - 1) - math.log(big_new - 1))
        if math.log(rng.random()) < log_a:
            w.log_v[j], w.log_v[k] = uj_new, uk_new
            w.v[j], w.v[k] = vj_new, vk_new
            w.accept(j, new_j, lp_j, Lj, rest)
            w.accept(k, new_k, lp_k, Lk, rest)
            return 1
        return 0


    def _joint_move(self, rng, fam, Xu, c, zeta, gamma, w, k, rest, here, soft, resp,
                    resp_new, n_total):
        """Component ``k``'s weight and parameters together: ``u' = u + sd e``, then
        ``theta' ~ q(. | responsibilities at (u', theta))``; the reverse draws ``theta``
        given the responsibilities at ``(u, theta')``.  Returns ``(here, soft, accepted)``."""
        sd = self.joint_scale * _weight_step(gamma, zeta, soft)
        u_old = w.log_v[k]
        u = u_old + sd * rng.standard_normal()
        d = u - u_old
        V, V_new = w.v.sum(), w.v.sum() - w.v[k] + math.exp(u - w.shift)
        if math.exp(u - w.shift) < self.vacant_share * V_new:
            return here, soft, 0  # its reverse would not be tried from a vacant component
        old = take(w.params, [k])
        _ck.column_terms(rest, w.m, w.L[:, k], u - w.shift, c, resp_new)
        new, log_fwd = fam.soft_proposal(Xu, zeta * c * resp_new, old, rng=rng)
        Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new)[:, 0])
        there, soft_new = _ck.column_terms(rest, w.m, Lk, u - w.shift, c, resp_new)
        _ck.column_terms(rest, w.m, Lk, u_old - w.shift, c, resp_new)
        _, log_back = fam.soft_proposal(Xu, zeta * c * resp_new, new, proposed=old)
        sd_back = self.joint_scale * _weight_step(gamma, zeta, soft_new)
        lp_new = float(fam.log_prior(new)[0])
        log_a = (gamma * d - (math.exp(u) - math.exp(u_old)) + lp_new - w.log_prior[k]
                 + zeta * (there - here - n_total * (math.log(V_new) - math.log(V)))
                 + _log_normal(d, sd_back) - _log_normal(d, sd) + log_back - log_fwd)
        if math.log(rng.random()) < log_a:
            w.log_v[k] = u
            w.v[k] = math.exp(u - w.shift)
            w.accept(k, new, lp_new, Lk, rest)
            here, soft = _ck.column_terms(rest, w.m, Lk, u - w.shift, c, resp)
            return here, soft, 1
        return here, soft, 0


class _Work:
    """The state a step updates in place: parameters and their log prior densities, the
    scaled mixture density (``L``, ``m``, ``P``: :mod:`dpclust.kernels.coarsened`) and the
    latent weights (``log_v``; ``v = exp(log_v - shift)``)."""

    @classmethod
    def of(cls, state: CoarsenedState, fam) -> "_Work":
        w = cls()
        w.params = state.params
        w.log_prior = np.asarray(fam.log_prior(state.params), dtype=np.float64).copy()
        w.log_v = np.array(state.log_v, dtype=np.float64, copy=True)
        w.L = np.array(state.log_lik, dtype=np.float64, copy=True)
        w.m, w.P = np.empty(w.L.shape[0]), np.empty(w.L.shape)
        _ck.scale_rows(w.L, w.m, w.P)
        w.shift = float(w.log_v.max())
        w.v = np.exp(w.log_v - w.shift)
        return w

    def allocate(self, rng, inverse) -> np.ndarray:
        """Each point's component (rows ``inverse`` of the distinct rows) drawn from its
        responsibilities."""
        labels = np.empty(len(inverse), dtype=np.int64)
        _ck.allocate(self.P, self.v, inverse, rng.random(len(inverse)), labels)
        return labels

    def accept(self, k: int, new, lp_new: float, Lk, rest) -> None:
        """Component ``k`` takes the parameters ``new`` (log prior ``lp_new``, log
        likelihoods ``Lk``); ``rest`` (the other components' sums) is rescaled with it."""
        self.params = _put(self.params, k, new)
        self.log_prior[k] = lp_new
        _ck.set_column(self.L, self.m, self.P, rest, k, Lk)


def _weight_step(gamma: float, zeta: float, soft: float) -> float:
    """The sd of a ``log v_k`` step: about the posterior sd of a weight carried by
    ``zeta * soft`` effective points (2.4 / sqrt(gamma + zeta soft + 1))."""
    return 2.4 / math.sqrt(gamma + zeta * soft + 1.0)


def _log_normal(d: float, sd: float) -> float:
    """``log N(d; 0, sd^2)``."""
    return -0.5 * (d / sd) ** 2 - math.log(sd)


def _proposal_kinds(fam, n_walk: int | None) -> tuple:
    """The proposals for a component in one sweep: the family's soft proposal (moves 1
    and 2) if it has one, and ``n_walk`` random walks if it has them (``None``: none
    after a soft proposal, else two)."""
    cls = type(fam)
    soft = (cls.soft_proposal is not ConjugateFamily.soft_proposal
            or cls.weighted_stats is not ConjugateFamily.weighted_stats)
    walk = cls.random_walk is not ConjugateFamily.random_walk
    if not (soft or walk):
        raise ValueError(f"{cls.__name__} gives the coarsened sampler no proposal (it needs "
                         f"weighted_stats or soft_proposal, or random_walk)")
    if n_walk is None:
        n_walk = 0 if soft else 2
    return (("soft",) if soft else ()) + (("walk",) * n_walk if walk else ())


def _put(params, k: int, one):
    """``params`` with component ``k`` replaced by the batch of one ``one`` (a copy)."""
    out = []
    for a, b in zip(params, one):
        a = np.array(a, copy=True)
        a[k] = np.asarray(b)[0]
        out.append(a)
    return type(params)(*out)
