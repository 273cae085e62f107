"""The compiled pieces of the exact split-merge moves (:mod:`dpclust.samplers.mallows.
split_merge`): a side's code statistics, its thetas' conditional modes and exact draws, the
marginal likelihood given a central ranking, the stagewise proposal of a central ranking,
and the allocation of rankings to the two sides of a split.
"""

from __future__ import annotations

import math

from numba import njit

from . import model as gm
from ..streams import next_uniform
from .cluster_update import _cluster_S


@njit(cache=True)
def side_code_stats(orders, lengths, members, rank, S, Nj, code):
    """``S[j] = S_{j+1}(sigma)`` (the summed codes) and ``Nj[j]`` (rankings of length > j)
    of the rankings ``members`` against the central ranking with ranks ``rank``."""
    _cluster_S(orders, lengths, members, 0, members.shape[0], rank, S, code)
    for j in range(Nj.shape[0]):
        Nj[j] = 0.0
    for q in range(members.shape[0]):
        for j in range(lengths[members[q]]):
            Nj[j] += 1.0


@njit(cache=True)
def theta_modes(S, Nj, nu_r, nu, n, out):
    """Each ``theta_j``'s conditional mode given sigma (its statistics ``S``, ``Nj``)."""
    for j in range(out.shape[0]):
        out[j] = gm.theta_mode(nu_r[j] + S[j], nu + Nj[j], n - j - 1)


@njit(cache=True)
def draw_thetas(S, Nj, nu_r, nu, n, state, out, xs, hs, ds):
    """Exact draws of every ``theta_j`` from its conditional given sigma (adaptive
    rejection sampling; the prior for ranks no ranking reaches)."""
    for j in range(out.shape[0]):
        state, out[j] = gm.sample_theta(nu_r[j] + S[j], nu + Nj[j], n - j - 1, state, xs,
                                        hs, ds)
    return state


@njit(cache=True)
def log_marginal_given_sigma(S, Nj, nu_r, nu, n, log_z0):
    """``log [P0(sigma) ∫ P0(theta) prod_pi GM(pi | sigma, theta) d theta]`` of one cluster
    from its statistics against sigma: ``-log n! + sum_j [log Z(nu r_j + S_j, nu + N_j) -
    log Z(nu r_j, nu)]`` (one-dimensional integrals, :func:`dpclust.kernels.mallows.
    model.log_theta_integral`); ranks no ranking reaches give 0."""
    total = -math.lgamma(n + 1.0)
    for j in range(S.shape[0]):
        if Nj[j] > 0.0:
            total += gm.log_theta_integral(nu_r[j] + S[j], nu + Nj[j], n - j - 1) - log_z0[j]
    return total


@njit(cache=True)
def sigma_proposal(orders, lengths, members, theta, replay, order, rank, state, a, E,
                   present, mark, col, alive, absent, logw):
    """The stagewise distribution over central rankings given ``theta`` and the rankings
    ``members``: a draw into ``order`` / ``rank`` (``replay=False``), or the log probability
    of the ``order`` given (``replay=True``).  Returns ``(state, log_q)``."""
    n = order.shape[0]
    n_present = gm.cluster_weights(orders, lengths, members, members.shape[0], theta, a, E,
                                   present, mark)
    state, log_q, _ = gm.stagewise(a, E, present, n_present, mark, n, state, order, replay,
                                   col, alive, absent, logw)
    gm.clear_weights(a, E, present, n_present, mark)
    if not replay:
        for p in range(n):
            rank[order[p]] = p
    return state, log_q


@njit(cache=True)
def allocate_sides(orders, lengths, points, rank0, theta0, rank1, theta1, lw0, lw1, draw,
                   sides, state, cum0, cum1):
    """Each ranking of ``points`` to side 0 or 1 independently, with probability ∝ ``lw_s +
    log GM(pi | sigma_s, theta_s)``: drawn into ``sides`` (``draw=True``) or scored as they
    are.  Returns ``(state, log q)``, the log probability of the sides."""
    n = rank0.shape[0]
    gm.cum_log_psi_row(theta0, n, cum0)
    gm.cum_log_psi_row(theta1, n, cum1)
    log_q = 0.0
    for q in range(points.shape[0]):
        i = points[q]
        t = lengths[i]
        l0 = lw0 + gm.gm_log_likelihood(orders, i, t, rank0, theta0, cum0)
        l1 = lw1 + gm.gm_log_likelihood(orders, i, t, rank1, theta1, cum1)
        top = max(l0, l1)
        lz = top + math.log(math.exp(l0 - top) + math.exp(l1 - top))
        if draw:
            state, u = next_uniform(state)
            sides[q] = 1 if u < math.exp(l1 - lz) else 0
        log_q += (l1 if sides[q] == 1 else l0) - lz
    return state, log_q
