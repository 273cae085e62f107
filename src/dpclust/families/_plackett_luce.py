r"""The maths of Plackett–Luce components for top-t rankings, in NumPy (:mod:`dpclust.families.plackett_luce`).

A component has worths ``lambda_j > 0`` for the ``n`` items; a top-t ranking ``pi`` is drawn
by picking each next item with probability proportional to the worths of those left:

.. math::

    PL(\pi \mid \lambda) = \prod_{s=1}^{t} \frac{\lambda_{\pi(s)}}{\Lambda_s},
    \qquad \Lambda_s = \sum_{j \notin \{\pi(1), \dots, \pi(s-1)\}} \lambda_j .

It depends on the worths up to scale only.  With ``lambda_j`` iid ``Gamma(a, 1)`` the scale
``S = sum_j lambda_j ~ Gamma(n a, 1)`` is independent of the normalised worths ``p = lambda /
S ~ Dir(a, ..., a)``, so the parameter kept is ``p`` (as ``log p``); ``p_j`` is the
probability that item ``j`` is ranked first.

* **The cluster kernel** (:func:`cluster_round`, Caron & Doucet 2012): one latent per
  distinct ranking ``d`` and stage ``s``, ``Y_ds ~ Gamma(c_d, Lambda_s(d))`` (``c_d`` copies
  of the ranking, each with an ``Exp(Lambda_s)`` latent), makes the worths conditionally
  independent Gammas, ``lambda_j ~ Gamma(a + W_j, 1 + E_j)`` with ``W_j`` the times item
  ``j`` was chosen and ``E_j`` the latents of the stages where it was still available.  A
  round first draws the scale ``S ~ Gamma(n a, 1)`` (its exact conditional given ``p``),
  then the latents at ``lambda = S p``, then the worths, then normalises: every step is a
  Gibbs step of the posterior of ``(S, p, Y)``.  Drawing the latents at ``S = 1`` instead
  (normalising inside the loop without redrawing the scale) is a different kernel that does
  not leave the posterior invariant; ``tests/test_plackett_luce.py`` shows it.
* **The prior probability of one top-t ranking** is ``(n - t)! / n!`` under any exchangeable
  prior of the worths (relabelling the items leaves the prior unchanged, so every top-t
  ranking has the same probability): the new-cluster term of Neal's algorithm 2, as for
  Generalized Mallows components
  (:meth:`~dpclust.families._rankings_base.RankingsFamily.log_prior_predictive`).
* **A soft proposal** for samplers that move a component from weighted rankings (the
  coarsened sampler: weights ``w_d``, its tempered responsibilities): the Gamma conditional of
  the worths given the *expected* latents at the current value, ``alpha_j = kappa (a + sum_d
  w_d [j ranked in d])``, ``r_j = kappa (n a + sum_d w_d sum_{s <= t_d} [j available at s] /
  Lambda_s(d))``, then ``p = G / sum G`` with ``G_j ~ Gamma(alpha_j, r_j)``
  (:func:`soft_gamma_params`).  Normalised Gammas with unequal rates are the scaled
  Dirichlet distribution, whose density is closed form (:func:`scaled_dirichlet_log_density`);
  its mode is the MM update of Hunter (2004).  ``kappa < 1`` widens it.
* **An exact draw given one ranking** (:func:`draw_given_one`): integrating
  ``lambda_j ~ Gamma(a, 1)`` out of arrival times ``T_j ~ Exp(lambda_j)`` leaves iid Lomax
  times, whose order is uniform, so conditioning on the ranking fixes the labels of their
  order statistics only.  Given ``T_(s-1) = x`` the minimum of the ``m = n - s + 1`` times
  left is ``x + (1 + x)(U^{-1/(a m)} - 1)``; then ``lambda_pi(s) ~ Gamma(a + 1, 1 +
  T_(s))`` and an unranked item's ``lambda_j ~ Gamma(a, 1 + T_(t))``.

References
----------
Caron, F. & Doucet, A. (2012). Efficient Bayesian inference for generalized Bradley–Terry
    models. *Journal of Computational and Graphical Statistics* 21(1), 174-196.
Hunter, D. R. (2004). MM algorithms for generalized Bradley–Terry models. *Annals of
    Statistics* 32(1), 384-406.
Plackett, R. L. (1975). The analysis of permutations. *Applied Statistics* 24(2), 193-202.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .base import log_gamma, log_normalise


def _stages(orders, lengths):
    """``(ranked, idx)``: which stages each ranking has (n_rankings, max_length) and the
    item chosen at each (0 where there is none)."""
    orders = np.asarray(orders, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    ranked = np.arange(orders.shape[1])[None, :] < lengths[:, None]
    return ranked, np.where(ranked, orders, 0)


def _available(p, ranked, idx):
    """``Lambda_s``, the worth of the items still available at each stage of each ranking,
    shape (n_rankings, max_length), with ``p`` (n_rankings, n_items) the worths that score
    each ranking: the unranked items' worth plus that of the items ranked at ``s`` or
    later (summed from what is left, so that no digit is lost when the chosen items hold
    nearly all the worth)."""
    rows = np.broadcast_to(np.arange(len(idx))[:, None], idx.shape)
    unranked = np.ones(p.shape, dtype=bool)
    unranked[rows[ranked], idx[ranked]] = False
    chosen = np.where(ranked, np.take_along_axis(p, idx, axis=1), 0.0)
    later = np.cumsum(chosen[:, ::-1], axis=1)[:, ::-1]
    return np.where(unranked, p, 0.0).sum(axis=1)[:, None] + later


def _exposure(per_stage, ranked, idx, lengths, comp, n_clusters: int, n: int) -> np.ndarray:
    """``E_kj = sum_{rows d of cluster k} sum_{s <= t_d} per_stage[d, s] [j available at
    stage s of d]``, shape (n_clusters, n): an item chosen at stage ``r`` was available at
    stages 1..r, an unranked one at every stage."""
    cum = np.cumsum(np.where(ranked, per_stage, 0.0), axis=1)
    total = cum[np.arange(len(cum)), np.asarray(lengths) - 1]
    E = np.zeros((n_clusters, n))
    E += np.bincount(comp, weights=total, minlength=n_clusters)[:, None]
    rows_comp = np.broadcast_to(np.asarray(comp)[:, None], idx.shape)
    np.add.at(E, (rows_comp[ranked], idx[ranked]), (cum - total[:, None])[ranked])
    return E


def log_likelihood(orders, lengths, log_p) -> np.ndarray:
    """``log PL(pi_i | p_k)`` for every ranking ``i`` (rows of ``orders``, padded with -1,
    ``lengths`` listed) and component ``k`` (rows of ``log_p``, normalised worths), shape
    (n_rankings, n_components).  The NumPy reference of
    :func:`dpclust.families._pl_kernels.log_pl_table`."""
    ranked, idx = _stages(orders, lengths)
    log_p = np.atleast_2d(np.asarray(log_p, dtype=np.float64))
    out = np.empty((len(idx), len(log_p)))
    for k, row in enumerate(log_p):
        left = _available(np.broadcast_to(np.exp(row), (len(idx), len(row))), ranked, idx)
        out[:, k] = np.where(ranked, row[idx] - np.log(left), 0.0).sum(axis=1)
    return out


def log_gamma_draw(rng, shape, rate) -> np.ndarray:
    """``log G`` with ``G ~ Gamma(shape, rate)`` (:func:`~dpclust.families.base.log_gamma`,
    so a worth never underflows to 0)."""
    return log_gamma(rng, shape) - np.log(rate)


def clusters_round(rng, orders, lengths, counts, comp, log_p, shape: float) -> np.ndarray:
    """One exact Gibbs round of every cluster's normalised worths (module notes).

    Parameters
    ----------
    rng : numpy.random.Generator
    orders, lengths : the distinct rankings of each cluster, one row per (ranking, cluster)
        pair: ``orders`` (n_rows, max_length) padded with -1.
    counts : array-like of shape (n_rows,)
        How many copies of the ranking the cluster holds (``c_dk >= 1``).
    comp : array-like of int of shape (n_rows,)
        The cluster of each row.
    log_p : ndarray of shape (n_clusters, n_items)
        The clusters' current normalised worths (a cluster without rows gets a prior draw).
    shape : float
        The shape ``a`` of the Gamma prior of the worths.

    Returns
    -------
    log_p : ndarray of shape (n_clusters, n_items), rows normalised.
    """
    ranked, idx = _stages(orders, lengths)
    comp = np.asarray(comp, dtype=np.int64)
    counts = np.broadcast_to(np.asarray(counts, dtype=np.float64)[:, None], ranked.shape)
    log_p = np.atleast_2d(np.asarray(log_p, dtype=np.float64))
    K, n = log_p.shape
    # each cluster's scale from its conditional, then the latents of every (ranking, stage)
    # at lambda = S p: Y ~ Gamma(c_d, Lambda_s(d))
    # (a scale that underflows to 0, at n * shape of about 0.01 and less, is held at the
    # smallest normal number: it would make the latents infinite)
    S = np.maximum(rng.standard_gamma(n * shape, size=K), np.finfo(np.float64).tiny)
    left = _available(np.exp(log_p)[comp], ranked, idx)
    Y = np.where(ranked, rng.standard_gamma(counts) / (S[comp][:, None] * left), 0.0)
    # W_kj: times chosen; E_kj: latents of the stages where j was available
    W = np.zeros((K, n))
    rows_comp = np.broadcast_to(comp[:, None], idx.shape)
    np.add.at(W, (rows_comp[ranked], idx[ranked]), counts[ranked])
    E = _exposure(Y, ranked, idx, lengths, comp, K, n)
    return scaled_dirichlet_draw(rng, shape + W, 1.0 + E)


def cluster_round(rng, orders, lengths, counts, log_p, shape: float) -> np.ndarray:
    """:func:`clusters_round` for one cluster: the new ``log p`` (n_items,) given its
    distinct rankings ``orders`` / ``lengths`` with multiplicities ``counts``."""
    comp = np.zeros(len(np.asarray(lengths)), dtype=np.int64)
    return clusters_round(rng, orders, lengths, counts, comp,
                          np.asarray(log_p, dtype=np.float64)[None, :], shape)[0]


def draw_given_one(rng, order, n_items: int, shape: float) -> np.ndarray:
    """An exact draw of ``log p`` given one top-t ranking ``order`` (item ids best first)
    under ``Dir(shape)`` worths, by the order statistics of Lomax arrival times (module
    notes)."""
    order = np.asarray(order, dtype=np.int64)
    t = len(order)
    # the arrival times x in log(1 + x): 1 + x grows by a factor U^(-1 / (shape m)) a stage,
    # which overflows a float at small shapes
    log_rate = np.empty(n_items)
    a = np.full(n_items, shape)
    level = 0.0
    for s in range(t):
        m = n_items - s
        level -= math.log(rng.random()) / (shape * m)
        log_rate[order[s]] = level
        a[order[s]] = shape + 1.0
    unranked = np.ones(n_items, dtype=bool)
    unranked[order] = False
    log_rate[unranked] = level
    return log_normalise(log_gamma(rng, a) - log_rate)


def soft_gamma_params(orders, lengths, weights, log_p, shape: float, kappa: float = 1.0):
    """``(alpha, rate)`` of the soft proposal (module notes) from the rankings weighted by
    ``weights`` at the current normalised worths ``log p``: the NumPy reference of
    :func:`dpclust.families._pl_kernels.soft_sums`, which the family calls."""
    ranked, idx = _stages(orders, lengths)
    wide = np.broadcast_to(np.asarray(weights, dtype=np.float64)[:, None], ranked.shape)
    p = np.exp(np.asarray(log_p, dtype=np.float64))
    n = len(p)
    chosen = np.zeros(n)
    np.add.at(chosen, idx[ranked], wide[ranked])
    # expected latents w_d / Lambda_s(d), summed over the stages where each item was available
    left = _available(np.broadcast_to(p, (len(idx), n)), ranked, idx)
    exposure = _exposure(wide / left, ranked, idx, lengths,
                         np.zeros(len(idx), dtype=np.int64), 1, n)[0]
    return kappa * (shape + chosen), kappa * (n * shape + exposure)


def scaled_dirichlet_draw(rng, alpha, rate) -> np.ndarray:
    """``log p`` with ``p = G / sum G``, ``G_j ~ Gamma(alpha_j, rate_j)`` (over the last
    axis: one draw per row)."""
    return log_normalise(log_gamma_draw(rng, np.asarray(alpha, dtype=np.float64),
                                        np.asarray(rate)))


def scaled_dirichlet_log_density(log_p, alpha, rate) -> float:
    """The log density of :func:`scaled_dirichlet_draw` at ``log p`` (Lebesgue measure on
    ``p_1, ..., p_{n-1}``): ``log Gamma(A) - sum log Gamma(alpha_j) + sum alpha_j log r_j +
    sum (alpha_j - 1) log p_j - A log(sum r_j p_j)``, ``A = sum alpha_j``."""
    log_p = np.asarray(log_p, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64)
    A = alpha.sum()
    log_rp = log_p + np.log(rate)
    top = log_rp.max()
    return float(gammaln(A) - gammaln(alpha).sum() + (alpha * np.log(rate)).sum()
                 + ((alpha - 1.0) * log_p).sum()
                 - A * (top + np.log(np.exp(log_rp - top).sum())))


def log_dirichlet_density(log_p, shape: float) -> np.ndarray:
    """``log Dir(p; shape, ..., shape)`` (Lebesgue measure on ``p_1, ..., p_{n-1}``) for each
    row of ``log_p``."""
    log_p = np.atleast_2d(np.asarray(log_p, dtype=np.float64))
    n = log_p.shape[1]
    return (gammaln(n * shape) - n * gammaln(shape)
            + (shape - 1.0) * log_p.sum(axis=1))


__all__ = ["log_likelihood", "clusters_round", "cluster_round",
           "draw_given_one",
           "log_dirichlet_density", "log_gamma_draw", "soft_gamma_params",
           "scaled_dirichlet_draw", "scaled_dirichlet_log_density"]
