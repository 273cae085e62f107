"""What :class:`~dpclust.rankings.RankingKDE` and :class:`~dpclust.rankings.RankingEBMS`
share: checks of the kernel width and its grid, the warning for a best width at the grid's
edge, and the estimators' edge (item set, input checks, ``score``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted

from ...utils.checks import check_positive
from ..data import Rankings, check_rankings

#: kernel widths searched by ``RankingKDE(theta="auto")``
DEFAULT_THETA_GRID = np.geomspace(0.01, 10.0, 41)


def _check_theta(theta, allowed=("auto",)):
    if isinstance(theta, str):
        if theta in allowed:
            return theta
        raise ValueError(f"theta must be a positive number or one of {list(allowed)}, got "
                         f"{theta!r}")
    return check_positive(theta, "theta")


def _check_grid(grid) -> np.ndarray:
    if grid is None:
        return DEFAULT_THETA_GRID.copy()
    g = np.asarray(grid, dtype=np.float64).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError("theta_grid must hold at least one positive, finite kernel width")
    return np.unique(g)


def _warn_edge(grid, best, what):
    if len(grid) > 1 and best in (0, len(grid) - 1):
        side = "smallest" if best == 0 else "largest"
        warnings.warn(f"{what}: the best kernel width is the {side} of theta_grid "
                      f"({grid[best]:.4g}); widen the grid", UserWarning, stacklevel=3)


class _RankingModel(DensityMixin, BaseEstimator):
    """Shared edge of the two estimators: item set, input checks, ``score``."""

    def _check_fitted(self):
        check_is_fitted(self, "n_items_")

    def _validate_fit(self, X) -> Rankings:
        return check_rankings(X, n_items=self.n_items, items=self.items)

    def _validate_score(self, X) -> Rankings:
        self._check_fitted()
        return check_rankings(X, n_items=self.n_items_, items=self.items_)

    def _resolve_items(self, R: Rankings):
        self.n_items_ = int(R.n_items)
        self.items_ = R.items
        self.n_samples_fit_ = len(R)

    def score(self, X, y=None) -> float:
        """Mean log density of the rankings ``X`` (the held-out log-likelihood per ranking).

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items (see :func:`~dpclust.rankings.check_rankings`).
        y : ignored

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))
