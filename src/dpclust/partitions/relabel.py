"""Components summarised across draws: relabelling to the point estimate (ECR).

A sampler that holds component parameters (explicit Gibbs, finite mixtures, the coarsened
posterior, the rankings' samplers) gives one set of components per draw, in a labelling of
its own: component 3 of one draw need not be component 3 of the next (label switching).
To summarise a component across draws, each draw's components are matched to the clusters
of a pivot partition, the point estimate, by the equivalence-classes-representatives
rule of Papastamoulis & Iliopoulos (2010): the matching maximises the number of points on
which the draw's allocation and the pivot agree, an assignment problem solved exactly on
the draws' contingency table with the pivot (Hungarian algorithm).  A cluster of the pivot
that a draw has no component for (the draw has fewer) is missing in that draw: its weight
there is 0 and its parameters are left out of that draw's summary.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["match_to_pivot", "Components", "summarise_components"]


def match_to_pivot(draw, pivot) -> np.ndarray:
    """The draw's label matched to each cluster of ``pivot`` (-1: none), shape (K,).

    Parameters
    ----------
    draw, pivot : array-like of int, shape (n_samples,)
        Labels ``0 .. J - 1`` and ``0 .. K - 1``.

    Returns
    -------
    match : ndarray of int64, shape (K,)
        ``match[k]`` is the draw's label for pivot cluster ``k``: the one-to-one matching
        that maximises the points both put together (Papastamoulis & Iliopoulos 2010).
    """
    from scipy.optimize import linear_sum_assignment

    draw = np.asarray(draw, dtype=np.int64)
    pivot = np.asarray(pivot, dtype=np.int64)
    K, J = int(pivot.max()) + 1, int(draw.max()) + 1
    table = np.bincount(pivot * J + draw, minlength=K * J).reshape(K, J)
    rows, cols = linear_sum_assignment(table, maximize=True)
    match = np.full(K, -1, dtype=np.int64)
    match[rows] = cols
    return match


class Components(NamedTuple):
    """The components matched to the clusters of the point estimate, across draws.

    Each array has the clusters of the point estimate first; ``lower`` and ``upper`` bound
    the central credible interval at ``level``.
    """

    #: posterior mean of each component's weight (its share of the points), (K,)
    weight: np.ndarray
    weight_lower: np.ndarray
    weight_upper: np.ndarray
    #: per parameter name, its posterior mean, lower and upper bound (each (K, ...))
    params: dict
    #: the share of draws that have a component matched to each cluster, (K,)
    matched: np.ndarray
    level: float


def summarise_components(draws, params, pivot, *, level: float = 0.95) -> Components:
    """Weights and parameters of each pivot cluster's component across draws (ECR).

    Parameters
    ----------
    draws : sequence of array-like of int, shape (n_samples,)
        Each draw's allocation, labels indexing its components.
    params : sequence of NamedTuple
        Each draw's component parameters, row ``j`` for label ``j`` (fields of shape
        ``(n_components, ...)``).
    pivot : array-like of int, shape (n_samples,)
        The partition the components are matched to (the point estimate).
    level : float in (0, 1), default=0.95
        The central credible interval's mass.

    Returns
    -------
    Components
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    pivot = np.asarray(pivot, dtype=np.int64)
    K, n = int(pivot.max()) + 1, pivot.size
    weights, values, masks = [], {}, []
    for draw, theta in zip(draws, params):
        draw = np.asarray(draw, dtype=np.int64)
        match = match_to_pivot(draw, pivot)
        sizes = np.bincount(draw, minlength=int(draw.max()) + 1)
        have = match >= 0
        masks.append(have)
        weights.append(np.where(have, sizes[np.maximum(match, 0)] / n, 0.0))
        for name, field in zip(theta._fields, theta):
            values.setdefault(name, []).append(
                np.asarray(field, dtype=np.float64)[np.maximum(match, 0)])
    if not weights:
        raise ValueError("summarise_components needs at least one draw")
    tail = 100.0 * (1.0 - level) / 2.0
    weights, masks = np.array(weights), np.array(masks)
    summary = {}
    for name, stack in values.items():
        stack = np.array(stack)  # (n_draws, K, ...)
        mean, lower, upper = (np.full(stack.shape[1:], np.nan) for _ in range(3))
        for k in range(K):  # over the draws that have a component for cluster k
            rows = stack[masks[:, k], k]
            if len(rows):
                mean[k] = rows.mean(axis=0)
                lower[k], upper[k] = np.percentile(rows, [tail, 100.0 - tail], axis=0)
        summary[name] = (mean, lower, upper)
    return Components(weight=weights.mean(axis=0),
                      weight_lower=np.percentile(weights, tail, axis=0),
                      weight_upper=np.percentile(weights, 100.0 - tail, axis=0),
                      params=summary, matched=masks.mean(axis=0), level=float(level))

