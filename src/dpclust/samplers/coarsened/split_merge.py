r"""Move 8 of the coarsened sampler: a component merged into another, or split in two.

The other moves change a component's weight and parameters a little at a time, so a chain
keeps the number of components that describe data it started with: on 7,000 images in 50
dimensions at ``alpha_c = 1000``, chains started from 5 and from 30 components kept 5 and
30 for 100 sweeps.  This move is a reversible-jump pair on the fixed ``K`` slots of the
finite mixture, between a state with two *live* components ``j`` and ``k`` and one where
``k`` is *vacant* (its weight below ``tau`` of the total, ``tau = vacant_share``).  It is
chosen as a merge or a split with probability 1/2 each.

Merge (``j``, ``k`` live).  ``j`` is drawn uniformly among the live components and ``k``
among the others with probability ``p(k | j) = 1/2 softmax_l(a_jl) + 1/2 / (L - 1)``, where
``a_jl`` is the mean log-likelihood under component ``l`` of the points component ``j`` is
responsible for (a near component is tried more often).  Then

* ``v_j' = v_j + v_k``, and ``v_k' ~ g_t(v) = gamma v^(gamma - 1) / t^gamma`` on ``(0, t)``
  with ``t = tau sum_{l != k} v_l' / (1 - tau)``: the bound below which ``k`` is vacant;
* ``theta_j' ~ q(. | zeta c (r_j + r_k))``, the family's soft proposal from the points both
  components are responsible for (the responsibilities ``r`` of the current state), and
  ``theta_k'`` from its prior.

Split (``j`` live, ``k`` vacant: ``j`` uniform among the live, ``k`` among the vacant).  The
points ``j`` is responsible for are cut in two halves ``A`` and ``B`` by the hyperplane
through their weighted mean normal to their first principal axis (a function of the state,
in the family's k-means features, found by power iteration); one half goes to each
component, which half to which with probability 1/2:

* ``theta_j ~ q(. | zeta c r_j 1_A)``, ``theta_k ~ q(. | zeta c r_j 1_B)`` (or ``B``, ``A``),
  so ``Q(theta_j, theta_k) = 1/2 [q_A(theta_j) q_B(theta_k) + q_B(theta_j) q_A(theta_k)]``;
* ``rho ~ Beta(2, 2)``, ``v_j = (1 - rho) v_j'``, ``v_k = rho v_j'``; ``v_k'`` is forgotten.

The map ``(v_j, v_k, v_k') <-> (v_j', v_k', rho)`` has Jacobian ``1 / (v_j + v_k)``, so with
``pi`` the coarsened posterior (latent weights ``v ~ Gamma(gamma, 1)``, the parameters'
prior and the tempered mixture likelihood, module :mod:`.sampler`)

.. math::

    \log A_{merge} = \log \frac{\pi(x')}{\pi(x)}
        + \log \frac{P_{split}(j, k \mid x') \, \mathrm{Beta}(\rho; 2, 2) \,
                      Q(\theta_j, \theta_k \mid x')}
                    {P_{merge}(j, k \mid x) \, g_t(v_k') \, q(\theta_j' \mid x) \,
                     p(\theta_k')}
        - \log(v_j + v_k),

and a split is accepted with ``-log A_merge`` of the state it proposes.  A proposal whose
reverse would not be chosen (a split that leaves ``j`` or ``k`` vacant) is refused.

References
----------
Green, P. J. (1995). Reversible jump Markov chain Monte Carlo computation and Bayesian model
    determination. *Biometrika* 82(4), 711-732.
Richardson, S. & Green, P. J. (1997). On Bayesian analysis of mixtures with an unknown
    number of components. *JRSS B* 59(4), 731-792 (split and merge moves of a mixture).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ...families.base import ConjugateFamily, take
from ...kernels import coarsened as _ck

#: the split's share of the weight: ``rho ~ Beta(SPLIT_BETA, SPLIT_BETA)``
SPLIT_BETA = 2.0
#: power iterations for the split's principal axis
AXIS_ITERATIONS = 12
#: rows weighing less than this share of the heaviest are left out of the move's soft
#: proposals (a component in 50 dimensions is responsible for a tenth of the rows or
#: fewer: its proposal costs a tenth)
TRIM = 1e-8


def split_merge(rng, fam, Xu, feats, c, zeta, gamma, w, tau) -> int:
    """One merge or split attempt (module notes) on the work state ``w``
    (:class:`~dpclust.samplers.coarsened.sampler._Work`), updated in place; returns 1 when
    it is accepted.  ``feats`` are the family's k-means features of the distinct rows."""
    live = w.v >= tau * w.v.sum()
    if rng.random() < 0.5:
        if live.sum() < 2:
            return 0
        j = int(rng.choice(np.flatnonzero(live)))
        rest = np.empty(len(c))
        _ck.rest_sums(w.P, w.v, j, rest)
        r_j = np.empty(len(c))
        _ck.column_terms(rest, w.m, w.L[:, j], w.log_v[j] - w.shift, c, r_j)
        probs = _partner_probs(w.L, c * r_j, live, j)
        k = int(rng.choice(len(probs), p=probs))
        log_choice = _log_merge_choice(live, probs, k)
        return _merge(rng, fam, Xu, feats, c, zeta, gamma, w, tau, j, k, log_choice)
    if live.all() or not live.any():
        return 0
    j, k = int(rng.choice(np.flatnonzero(live))), int(rng.choice(np.flatnonzero(~live)))
    return _split(rng, fam, Xu, feats, c, zeta, gamma, w, tau, j, k)


def _merge(rng, fam, Xu, feats, c, zeta, gamma, w, tau, j, k, log_choice) -> int:
    """Components ``j`` and ``k`` (both live) merged into ``j``; ``k`` left vacant.
    ``log_choice`` is the log probability that the pair was chosen
    (:func:`_log_merge_choice`)."""
    D = len(c)
    rest, rj, rk, rj2, rk2 = (np.empty(D) for _ in range(5))
    _ck.rest_sums2(w.P, w.v, j, k, rest)
    u = (float(w.log_v[j]), float(w.log_v[k]))
    here = _ck.pair_terms(rest, w.m, w.L[:, j], w.L[:, k], u[0] - w.shift, u[1] - w.shift,
                          c, rj, rk)
    old = (take(w.params, [j]), take(w.params, [k]))
    new_j, log_q_merge = _soft(fam, Xu, zeta * c * (rj + rk), old[0], rng=rng)
    new_k = fam.sample_prior(rng, 1)
    log_t = _vacant_bound(w.log_v, j, float(np.logaddexp(*u)), k, tau)
    u_new = (float(np.logaddexp(*u)), log_t - rng.standard_exponential() / gamma)
    Lj = np.ascontiguousarray(fam.log_likelihood(Xu, new_j)[:, 0])
    Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new_k)[:, 0])
    there = _ck.pair_terms(rest, w.m, Lj, Lk, u_new[0] - w.shift, u_new[1] - w.shift, c,
                           rj2, rk2)
    lp_new = (float(fam.log_prior(new_j)[0]), float(fam.log_prior(new_k)[0]))
    v_new = _with(w.v, j, k, u_new, w.shift)
    log_q_split = _split_density(fam, Xu, _halves(feats, zeta * c * rj2), (new_j, new_k),
                                 old)
    log_a = _log_merge_ratio(
        c, zeta, gamma, u, u_new, _log_mixture(here, w.v, c), _log_mixture(there, v_new, c),
        (w.log_prior[j], w.log_prior[k]), lp_new[0], v_new >= tau * v_new.sum(), log_choice,
        log_q_split, log_q_merge, log_t)
    if math.log(rng.random()) < log_a:
        _accept(w, j, k, u_new, (new_j, new_k), lp_new, Lj, Lk, rest)
        return 1
    return 0


def _split(rng, fam, Xu, feats, c, zeta, gamma, w, tau, j, k) -> int:
    """Component ``j`` (live) split between itself and ``k`` (vacant)."""
    D = len(c)
    rest, rj, rk, rj2, rk2 = (np.empty(D) for _ in range(5))
    _ck.rest_sums2(w.P, w.v, j, k, rest)
    u_now = (float(w.log_v[j]), float(w.log_v[k]))
    there = _ck.pair_terms(rest, w.m, w.L[:, j], w.L[:, k], u_now[0] - w.shift,
                           u_now[1] - w.shift, c, rj2, rk2)
    now = (take(w.params, [j]), take(w.params, [k]))
    halves = _halves(feats, zeta * c * rj2)
    if rng.random() < 0.5:
        halves = halves[::-1]  # which half component j takes
    new_j, _ = _soft(fam, Xu, halves[0], now[0], rng=rng)
    new_k, _ = _soft(fam, Xu, halves[1], now[1], rng=rng)
    rho = rng.beta(SPLIT_BETA, SPLIT_BETA)
    u = (u_now[0] + math.log1p(-rho), u_now[0] + math.log(rho))
    v_new = _with(w.v, j, k, u, w.shift)
    live_new = v_new >= tau * v_new.sum()
    if not (live_new[j] and live_new[k]):
        return 0  # the merge back would not choose this pair
    Lj = np.ascontiguousarray(fam.log_likelihood(Xu, new_j)[:, 0])
    Lk = np.ascontiguousarray(fam.log_likelihood(Xu, new_k)[:, 0])
    here = _ck.pair_terms(rest, w.m, Lj, Lk, u[0] - w.shift, u[1] - w.shift, c, rj, rk)
    _, log_q_merge = _soft(fam, Xu, zeta * c * (rj + rk), new_j, proposed=now[0])
    log_q_split = _split_density(fam, Xu, halves, now, (new_j, new_k))
    L_new = w.L.copy()
    L_new[:, j], L_new[:, k] = Lj, Lk
    lp_new = (float(fam.log_prior(new_j)[0]), float(fam.log_prior(new_k)[0]))
    log_t = _vacant_bound(w.log_v, j, u_now[0], k, tau)
    # the merge from the proposed state back to the current one, reversed
    log_merge = _log_merge_ratio(
        c, zeta, gamma, u, u_now, _log_mixture(here, v_new, c), _log_mixture(there, w.v, c),
        lp_new, float(w.log_prior[j]), w.v >= tau * w.v.sum(),
        _log_merge_choice(live_new, _partner_probs(L_new, c * rj, live_new, j), k),
        log_q_split, log_q_merge, log_t)
    if math.log(rng.random()) < -log_merge:
        _accept(w, j, k, u, (new_j, new_k), lp_new, Lj, Lk, rest)
        return 1
    return 0


def _log_merge_ratio(c, zeta, gamma, u, u_new, log_lik, log_lik_new, lp, lp_j_new,
                     live_new, log_choice, log_q_split, log_q_merge, log_t) -> float:
    """``log A_merge`` (module notes) from a state with two live components ``j``, ``k``
    (log latent weights ``u``, untempered log mixture likelihood ``log_lik``, log prior
    densities ``lp``) to the merged state (``u_new``, ``log_lik_new``, ``lp_j_new`` of
    ``theta_j'``; ``live_new`` its live components).  ``log_choice`` is the merge's log
    probability of choosing the pair, ``log_q_split`` the split's log density of the
    parameters back, ``log_q_merge`` the merge's of ``theta_j'`` and ``log_t`` the vacant
    bound of ``v_k'``."""
    # the latent weights' Gamma(gamma, 1) densities in v
    weights = sum((gamma - 1.0) * b - math.exp(b) for b in u_new) - sum(
        (gamma - 1.0) * a - math.exp(a) for a in u)
    # theta_k''s prior density cancels against its proposal from the prior
    params = lp_j_new - lp[0] - lp[1]
    log_split_choice = math.log(0.5) - math.log(live_new.sum()) - math.log((~live_new).sum())
    rho = math.exp(u[1] - float(np.logaddexp(*u)))
    log_beta = math.log(6.0) + math.log(rho) + math.log1p(-rho)  # Beta(2, 2)
    log_g = math.log(gamma) + (gamma - 1.0) * u_new[1] - gamma * log_t
    return (zeta * (log_lik_new - log_lik) + weights + params + log_split_choice + log_beta
            + log_q_split - log_choice - log_g - log_q_merge - u_new[0])


def _log_mixture(terms: float, v, c) -> float:
    """``sum_i c_i log s_i`` from :func:`~dpclust.kernels.coarsened.pair_terms`'s sum with
    unnormalised weights ``v``."""
    return terms - float(c.sum()) * math.log(v.sum())


def _with(v, j, k, u, shift) -> np.ndarray:
    """The latent weights ``v`` (scaled by ``exp(-shift)``) with ``j`` and ``k`` at log
    weights ``u``."""
    out = v.copy()
    out[j], out[k] = math.exp(u[0] - shift), math.exp(u[1] - shift)
    return out


def _vacant_bound(log_v, j, u_j, k, tau) -> float:
    """``log t``: component ``k`` is vacant when ``v_k < t = tau sum_{l != k} v_l /
    (1 - tau)`` (that is ``v_k < tau sum_l v_l``), with ``j`` at log weight ``u_j``."""
    others = np.delete(log_v, k)
    others[j if j < k else j - 1] = u_j
    return math.log(tau) - math.log1p(-tau) + float(logsumexp(others))


def _partner_probs(L, weights, live, j) -> np.ndarray:
    """The merge's choice of ``k`` given ``j``, over all components (0 where not live or
    ``j``): half by the softmax of the mean log-likelihood of ``j``'s points (counted
    ``weights``) under each, half uniform."""
    cand = live.copy()
    cand[j] = False
    n = int(cand.sum())
    a = (weights @ np.nan_to_num(L, neginf=-1e30)) / max(float(weights.sum()), 1e-300)
    a = np.where(cand, a, -np.inf)
    soft = np.exp(a - a[cand].max())
    probs = 0.5 * soft / soft.sum() + 0.5 * cand / n
    return probs / probs.sum()


def _log_merge_choice(live, probs, k) -> float:
    """The merge's log probability of choosing ``(j, k)``: ``j`` uniform among the
    ``live``, ``k`` with ``probs`` (:func:`_partner_probs`); the move's 1/2 included."""
    return math.log(0.5) - math.log(live.sum()) + math.log(probs[k])


def _halves(feats, weights) -> tuple[np.ndarray, np.ndarray]:
    """``weights`` cut in two by the hyperplane through the weighted mean of the rows of
    ``feats`` (dense or sparse) normal to their first principal axis: ``(A, B)``.  Rows
    weighing less than ``TRIM`` of the heaviest are in neither half."""
    if not weights.max() > 0.0:  # a live component no point is responsible for
        return weights.copy(), weights.copy()
    rows = _kept(weights)
    F, wt = feats[rows], weights[rows]
    mean = np.asarray(F.T @ wt).ravel() / float(wt.sum())
    dots = np.asarray(F @ mean).ravel()
    sq = (np.asarray(F.multiply(F).sum(axis=1)).ravel() if hasattr(F, "multiply")
          else np.einsum("ij,ij->i", F, F))
    far = int(np.argmax(wt * (sq - 2.0 * dots + mean @ mean)))
    axis = (np.asarray(F[far].todense()).ravel() if hasattr(F, "todense")
            else np.array(F[far], dtype=np.float64)) - mean
    for _ in range(AXIS_ITERATIONS):
        proj = np.asarray(F @ axis).ravel() - mean @ axis
        axis = np.asarray(F.T @ (wt * proj)).ravel() - mean * float(wt @ proj)
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            break
        axis /= norm
    side = (np.asarray(F @ axis).ravel() - mean @ axis) > 0.0
    A, B = np.zeros(len(weights)), np.zeros(len(weights))
    A[rows[~side]], B[rows[side]] = wt[~side], wt[side]
    return A, B


def _split_density(fam, Xu, halves, given, params) -> float:
    """``log Q``: the split's density of ``params`` (of ``j`` and ``k``) from the two
    ``halves`` (:func:`_halves`), each to either component with probability 1/2; ``given``
    are their values before the split."""
    if type(fam).soft_proposal is ConjugateFamily.soft_proposal:
        # the default soft proposal, the conjugate posterior: each half's statistics once
        stats = [fam.weighted_stats(*_rows(fam, Xu, h)) for h in halves]
        q = [[float(fam.log_posterior_density(p, st)[0]) for st in stats] for p in params]
    else:
        q = [[_soft(fam, Xu, h, g, proposed=p)[1] for h in halves]
             for g, p in zip(given, params)]
    return float(np.logaddexp(q[0][0] + q[1][1], q[0][1] + q[1][0])) - math.log(2.0)


def _kept(weights) -> np.ndarray:
    """The rows weighing more than ``TRIM`` of the heaviest (all of them when none weighs
    anything): the only rows this move's halves and soft proposals see (a choice fixed by
    the state, the same in both directions, so the move stays exact)."""
    top = weights.max()
    return np.flatnonzero(weights > TRIM * top) if top > 0 else np.arange(len(weights))


def _rows(fam, Xu, weights):
    """The rows :func:`_kept` keeps of ``Xu``, and their weights as a column."""
    rows = _kept(weights)
    return fam.subset(Xu, rows), np.ascontiguousarray(weights[rows])[:, None]


def _soft(fam, Xu, weights, given, rng=None, proposed=None):
    """The family's soft proposal from the rows :func:`_rows` keeps: a draw and its log
    density, or the log density of ``proposed``."""
    X, wt = _rows(fam, Xu, weights)
    return fam.soft_proposal(X, wt[:, 0], given, rng=rng, proposed=proposed)


def _accept(w, j, k, u, params, lp, Lj, Lk, rest) -> None:
    """Components ``j`` and ``k`` take the log weights ``u`` and the parameters
    ``params``."""
    w.log_v[j], w.log_v[k] = u
    w.v[j], w.v[k] = math.exp(u[0] - w.shift), math.exp(u[1] - w.shift)
    w.accept(j, params[0], lp[0], Lj, rest)
    w.accept(k, params[1], lp[1], Lk, rest)
