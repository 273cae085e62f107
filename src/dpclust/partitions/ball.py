"""The credible ball of a partition (Wade & Ghahramani 2018, section 4).

The ``level`` credible ball around an estimate ``c`` is the smallest ball
``{z : d(c, z) <= eps}`` holding posterior mass ``level``; ``eps`` is estimated by the
``level`` quantile of the distances from ``c`` to the sampled partitions.  A ball in the
space of partitions cannot be drawn, so it is described by the sampled partitions on its
edge:

* the **horizontal bound**: the partitions in the ball farthest from ``c``;
* the **upper vertical bound**: among the partitions in the ball with the fewest clusters,
  those farthest from ``c`` (how coarse the posterior allows the clustering to be);
* the **lower vertical bound**: among those with the most clusters, the farthest (how fine).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .draws import _as_draws, _canonical_2d
from .losses import as_loss, pair_losses

__all__ = ["CredibleBall", "Bound", "credible_ball"]


class Bound(NamedTuple):
    """One bound of a credible ball: a sampled partition on the ball's edge."""

    #: the partition, in canonical labels
    labels: np.ndarray
    #: its distance from the estimate
    distance: float
    #: its number of clusters
    n_clusters: int


class CredibleBall(NamedTuple):
    """A credible ball around a point estimate of the partition (:func:`credible_ball`)."""

    #: the posterior mass the ball holds
    level: float
    #: the distance it is measured in, e.g. ``"vi"``
    loss: str
    #: its radius: the largest distance from the estimate of a partition in the ball
    radius: float
    horizontal: Bound
    upper_vertical: Bound
    lower_vertical: Bound
    #: the fewest and most clusters of a sampled partition in the ball
    n_clusters_range: tuple
    #: the share of the draws in the ball (at least ``level``)
    share_in_ball: float

    def as_dict(self) -> dict:
        """The ball without the bounds' labels (what a run's summary keeps)."""
        bounds = {name: {"distance": getattr(self, name).distance,
                         "n_clusters": getattr(self, name).n_clusters}
                  for name in ("horizontal", "upper_vertical", "lower_vertical")}
        return {"level": self.level, "loss": self.loss, "radius": self.radius,
                "n_clusters_range": list(self.n_clusters_range),
                "share_in_ball": self.share_in_ball, **bounds}

    def describe(self) -> str:
        """One line for a reader, e.g. "95 % of the posterior lies within VI 0.41 of the
        estimate: partitions of 3 to 6 clusters"."""
        low, high = self.n_clusters_range
        span = f"{low} cluster{'s' if low != 1 else ''}" if low == high else \
            f"{low} to {high} clusters"
        name, _, weight = self.loss.partition("(")
        loss = name.upper() + (f" ({weight}" if weight else "")
        return (f"{100 * self.level:g} % of the posterior lies within {loss} "
                f"{self.radius:.3g} of the estimate: partitions of {span}")


def credible_ball(draws, estimate, loss="vi", *, a: float | None = None,
                  level: float = 0.95, distances=None) -> CredibleBall:
    """The ``level`` credible ball around ``estimate`` (Wade & Ghahramani 2018).

    Parameters
    ----------
    draws : array-like of shape (n_draws, n_samples)
        Posterior draws of the partition, one per row.
    estimate : array-like of shape (n_samples,)
        The point estimate at the ball's centre.
    loss : {"vi", "binder", "omari", "nvi", "nid"} or Loss, default="vi"
        The distance (:mod:`dpclust.partitions.losses`).
    a : float or None, default=None
        The loss's weight, as in :func:`~dpclust.partitions.expected_loss`.
    level : float in (0, 1), default=0.95
        The posterior mass the ball holds.
    distances : array-like of shape (n_draws,), optional
        The loss between ``estimate`` and each draw, when the caller has it already
        (:func:`~dpclust.partitions.pair_losses`).

    Returns
    -------
    CredibleBall
        Its radius, its three bounds (sampled partitions, each with its distance and number
        of clusters) and the range of numbers of clusters inside it.

    Notes
    -----
    Ties: among partitions equally far, the earliest draw is the bound.  Cost: one
    contingency table per distinct draw, ``O(n_draws * n_samples)``.

    References
    ----------
    Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
    credible balls. *Bayesian Analysis* 13(2), 559-626.
    """
    if not (isinstance(level, (int, float)) and 0.0 < level < 1.0):
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    loss = as_loss(loss, a)
    draws = _as_draws(draws)
    distance = (pair_losses(estimate, draws, loss) if distances is None
                else np.asarray(distances, dtype=np.float64))
    z, k = _canonical_2d(draws)
    order = np.argsort(distance, kind="stable")
    need = int(np.ceil(level * len(distance) - 1e-9))
    radius = float(distance[order[max(need, 1) - 1]])
    inside = np.flatnonzero(distance <= radius + 1e-12 * max(radius, 1.0))

    def bound(among):
        far = among[np.flatnonzero(distance[among] == distance[among].max())[0]]
        return Bound(labels=z[far].copy(), distance=float(distance[far]),
                     n_clusters=int(k[far]))

    k_in = k[inside]
    return CredibleBall(
        level=float(level), loss=str(loss), radius=radius,
        horizontal=bound(inside),
        upper_vertical=bound(inside[k_in == k_in.min()]),
        lower_vertical=bound(inside[k_in == k_in.max()]),
        n_clusters_range=(int(k_in.min()), int(k_in.max())),
        share_in_ball=float(inside.size / len(distance)))
