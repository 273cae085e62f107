r"""Move 8 of the coarsened sampler: a component seeded at a data point takes a vacant slot.

The other moves change a component's weight and parameters in steps; a cluster that has
emptied into its neighbours (its points shared out among them) comes back only when a vacant
component happens to drift to the right parameters and weight at once, which on the Dublin
West ballots takes hundreds of sweeps.  This move proposes that in one step, and its
reverse (a component given back to the vacant slots) in one step.

The pair of moves
-----------------
Components are *small* (``v_j < partner_share * V``, ``V = sum_k v_k``) or *large*.  One
attempt picks a direction with probability 1/2.

* **Birth**: ``j`` uniform among the small components (at least one large one must be
  left), then the proposal below gives ``(theta_j', u_j')``; refused unless ``j`` is large
  afterwards.
* **Death**: ``j`` uniform among the large components (at least two), then ``theta_j ~
  p(theta)`` and ``u_j = log v_j ~ log Gamma(gamma, 1)`` from their priors; refused unless
  ``j`` is small afterwards.

Neither changes the other components, ``s_{-j} = (theta_k, v_k)_{k != j}``.

The birth proposal
------------------
Everything before the last draw depends on ``s_{-j}`` and on fresh random numbers only, so
the same construction serves the reverse (Tierney 1998: a proposal indexed by an auxiliary
``phi ~ G(. | s_{-j})`` whose law is the same in both directions is a valid MH proposal for
every ``phi``, and ``G`` cancels):

1. an anchor row ``a`` drawn with probability ``c_a / N`` (a random data point), and a
   seed ``theta^(0) ~ q(. | M e_a)``: the family's soft proposal from row ``a`` counted
   ``seed_weight`` times (its ``given`` drawn from the prior);
2. ``seed_steps - 1`` EM-like steps, ``theta^(s) ~ q(. | zeta c rho(theta^(s-1)))``, where
   ``rho_i(theta)`` is row ``i``'s responsibility under ``(1 - t_0) s_{-j,i} + t_0 f(x_i
   | theta)`` (``s_{-j}`` the mixture of the other components, ``t_0 = 0.1``);
3. the last step draws the component, ``theta_j' ~ q(. | zeta c rho(phi))`` with
   ``phi = theta^(seed_steps - 1)``; its density ``h(theta_j' | phi)`` is the soft
   proposal's (normalised);
4. its share ``t = v_j' / (V_{-j} + v_j') ~ Beta(1 + zeta n, 1 + zeta (N - n))``, ``n =
   sum_i c_i rho_i(theta_j')`` its soft count at ``t_0``, which is about the conditional
   of a weight given ``zeta n`` points; ``u_j' = log(t / (1 - t)) + log V_{-j}``, so
   ``q(u_j') = Beta(t) t (1 - t)``.

With ``lp`` the log prior of the parameters, ``ell`` the mixture log-likelihood and
``gamma u - e^u - log Gamma(gamma)`` the log density of ``u = log v`` under ``v ~
Gamma(gamma, 1)``, the prior of the vacant slot's ``(theta_j, u_j)`` cancels against the
death's proposal of them, and

.. math::

    \log a_{birth} = \zeta (\ell' - \ell) + lp(\theta_j') + \gamma u_j' - e^{u_j'}
        - \log\Gamma(\gamma) - \log h(\theta_j' \mid \phi) - \log q(u_j')
        + \log \frac{1 / \#large(s')}{1 / \#small(s)},

``log a_death`` being its negative with the roles of the two states exchanged.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln, gammaln

from ...families.base import take
from ...kernels import coarsened as _ck

#: the share at which a seed's responsibilities are taken (step 2 of the module notes)
SEED_SHARE = 0.1


def seed_move(rng, fam, Xu, c, zeta, gamma, w, *, small_share: float, seed_weight: float,
              seed_steps: int) -> int:
    """One attempt of move 8 (module notes) on the work state ``w`` of
    :class:`~dpclust.samplers.coarsened.CoarsenedMixture`; returns 1 if accepted."""
    D, K = w.P.shape
    V = w.v.sum()
    small = np.flatnonzero(w.v < small_share * V)
    large = np.flatnonzero(w.v >= small_share * V)
    birth = rng.random() < 0.5
    if birth:
        if len(small) == 0 or len(large) == 0:
            return 0
        j = int(rng.choice(small))
    else:
        if len(large) < 2:
            return 0
        j = int(rng.choice(large))
    rest = np.empty(D)
    _ck.rest_sums(w.P, w.v, j, rest)
    V_rest = V - w.v[j]
    phi = _seed(rng, fam, Xu, c, zeta, w, rest, V_rest, seed_weight, seed_steps)
    rho = np.empty(D)
    n_total = float(c.sum())
    # the current state of slot j and the proposed one
    here, _ = _ck.column_terms(rest, w.m, w.L[:, j], w.log_v[j] - w.shift, c, rho)
    ell = here - n_total * math.log(V)
    old = take(w.params, [j])
    if birth:
        new, log_h = fam.soft_proposal(Xu, zeta * c * _resp(rest, w.m, _lik(fam, Xu, phi),
                                                              V_rest, c, rho), phi, rng=rng)
        Lj = _lik(fam, Xu, new)
        n_soft = _share_count(rest, w.m, Lj, V_rest, c, rho)
        t = float(rng.beta(1.0 + zeta * n_soft, 1.0 + zeta * (n_total - n_soft)))
        if not 0.0 < t < 1.0:
            return 0
        u_new = math.log(t) - math.log1p(-t) + math.log(V_rest) + w.shift
    else:
        new = fam.sample_prior(rng, 1)
        u_new = float(np.log(rng.standard_gamma(gamma + 1.0)) + math.log(rng.random()) / gamma)
        Lj = _lik(fam, Xu, new)
        n_soft = _share_count(rest, w.m, w.L[:, j], V_rest, c, rho)
    v_new = math.exp(u_new - w.shift)
    V_new = V_rest + v_new
    if (v_new >= small_share * V_new) != birth:
        return 0  # the reverse move would not pick slot j
    there, _ = _ck.column_terms(rest, w.m, Lj, u_new - w.shift, c, rho)
    ell_new = there - n_total * math.log(V_new)
    lp_new = float(fam.log_prior(new)[0])
    # the birth's log ratio, from the small state (theta_s, u_s) to the large one (theta_l, u_l)
    if birth:
        large_p, large_u, d_ell = new, u_new, ell_new - ell
        lp_large, V_large, V_small = lp_new, V_new, V
    else:
        large_p, large_u, d_ell = old, w.log_v[j], ell - ell_new
        lp_large, V_large, V_small = w.log_prior[j], V, V_new
        _, log_h = fam.soft_proposal(Xu, zeta * c * _resp(rest, w.m, _lik(fam, Xu, phi),
                                                          V_rest, c, rho), phi,
                                     proposed=large_p)
    t = math.exp(large_u - w.shift) / V_large
    log_q_u = (_log_beta(t, 1.0 + zeta * n_soft, 1.0 + zeta * (n_total - n_soft))
               + math.log(t) + math.log1p(-t))
    others = np.delete(w.v, j)
    n_large = int((others >= small_share * V_large).sum()) + 1
    n_small = int((others < small_share * V_small).sum()) + 1
    if n_large < 2:
        return 0  # a death needs a large component left
    log_birth = (zeta * d_ell + lp_large + gamma * large_u - math.exp(large_u)
                 - float(gammaln(gamma)) - log_h - log_q_u
                 - math.log(n_large) + math.log(n_small))
    log_a = log_birth if birth else -log_birth
    if math.log(rng.random()) < log_a:
        w.log_v[j] = u_new
        w.v[j] = v_new
        w.accept(j, new, lp_new, Lj, rest)
        return 1
    return 0


def _seed(rng, fam, Xu, c, zeta, w, rest, V_rest, seed_weight, seed_steps):
    """The auxiliary ``phi`` (module notes, steps 1-2): drawn from ``s_{-j}`` (``rest``)
    and fresh random numbers only."""
    D = len(c)
    a = int(np.searchsorted(np.cumsum(c), rng.random() * c.sum(), side="right"))
    one = np.zeros(D)
    one[min(a, D - 1)] = seed_weight
    phi, _ = fam.soft_proposal(Xu, one, fam.sample_prior(rng, 1), rng=rng)
    rho = np.empty(D)
    for _ in range(seed_steps - 1):
        weights = zeta * c * _resp(rest, w.m, _lik(fam, Xu, phi), V_rest, c, rho)
        phi, _ = fam.soft_proposal(Xu, weights, phi, rng=rng)
    return phi


def _lik(fam, Xu, params) -> np.ndarray:
    """``log f(x_i | theta)`` for a batch of one."""
    return np.ascontiguousarray(fam.log_likelihood(Xu, params)[:, 0])


def _resp(rest, m, L, V_rest, c, out) -> np.ndarray:
    """Responsibilities of a component with log-likelihoods ``L`` at share ``SEED_SHARE``
    against the others (``rest``, total weight ``V_rest``), into ``out``."""
    log_v = math.log(SEED_SHARE / (1.0 - SEED_SHARE) * V_rest)
    _ck.column_terms(rest, m, L, log_v, c, out)
    return out


def _share_count(rest, m, L, V_rest, c, out) -> float:
    """The soft count ``sum_i c_i rho_i`` of a component at share ``SEED_SHARE``."""
    log_v = math.log(SEED_SHARE / (1.0 - SEED_SHARE) * V_rest)
    return float(_ck.column_terms(rest, m, L, log_v, c, out)[1])


def _log_beta(t: float, a: float, b: float) -> float:
    """``log Beta(t; a, b)``."""
    return (a - 1.0) * math.log(t) + (b - 1.0) * math.log1p(-t) - float(betaln(a, b))
