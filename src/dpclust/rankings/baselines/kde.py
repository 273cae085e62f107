"""The kernel density estimate over top-t rankings with a Mallows kernel (Lebanon & Mao 2008),
the baseline of Meilă & Chen (2010), Figure 8.
"""

from __future__ import annotations

import numpy as np

from ._base import _check_grid, _check_theta, _RankingModel, _warn_edge
from .kernel import _log_density, _unique_rankings


class RankingKDE(_RankingModel):
    """Kernel density estimate over top-t rankings with a Mallows kernel (Lebanon & Mao 2008).

    The density of a top-t ranking ``pi`` is the average over the training rankings of the
    GM^s kernel with all ``theta_j = theta`` centred at each, a training ranking completed
    uniformly at random to a full central ranking::

        p(pi) = 1/N sum_i K_theta(pi | pi_i),
        K_theta(pi | pi_i) = 1/(n - t_i)! sum_{sigma begins with pi_i} GM(pi | sigma, theta).

    ``K_theta(. | pi_i)`` is a probability distribution over the top-t rankings of every length
    ``t``, and so is ``p``.  In closed form (derived in the notes of
    :mod:`dpclust.rankings.baselines`), with ``a`` the items of ``pi`` that ``pi_i`` does not
    list and ``m = n - t_i``::

        log K_theta(pi | pi_i) = -theta D(pi | pi_i) - sum_{j=1}^{t} log psi_{n-j}(theta)
                                 + sum_{q=1}^{a} [log psi_{m-q}(theta) - log(m - q + 1)],

    ``D`` the GM^s codes of ``pi`` summed, counting only the items of ``pi_i`` (an item
    outside ``pi_i`` ranks after all of it).  This is the KDE used as a baseline by Meilă &
    Chen (2010), Figure 8, where the width is set to the true clusters' ``theta``.

    Parameters
    ----------
    theta : float or "auto", default="auto"
        Kernel width ``theta > 0`` (larger = more concentrated kernels).  ``"auto"`` picks the
        width of ``theta_grid`` with the largest leave-one-out log-likelihood of the training
        rankings, ``sum_i log( sum_{i' != i} K_theta(pi_i | pi_i') / (N - 1) )`` (exact, no
        randomness; every grid width costs about one pass over the pairs).
    theta_grid : array-like of float, optional
        Widths searched by ``theta="auto"``; default ``np.geomspace(0.01, 10, 41)``.
    n_items : int, optional
        Number of items ``n``; default from the data (see
        :func:`~dpclust.rankings.check_rankings`).  Items nobody ranks still count.
    items : sequence of str, optional
        Item names, for data given as names.

    Attributes
    ----------
    theta_ : float
        The kernel width used.
    n_items_ : int
    items_ : tuple of str or None
    n_samples_fit_ : int
        Number of training rankings ``N``.
    orders_ : ndarray of shape (n_distinct, max_length)
        The distinct training rankings (padded with -1); ``weights_`` counts each.
    lengths_ : ndarray of shape (n_distinct,)
    weights_ : ndarray of shape (n_distinct,)
    theta_grid_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: the widths tried.
    cv_log_likelihood_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: mean leave-one-out log-likelihood per ranking at each width.

    Notes
    -----
    The kernel depends on a pair of rankings only through three integers (the centre's length,
    the items of ``pi`` the centre does not list, and the discordance ``D``), so scoring builds,
    per query, a histogram of the training rankings over those bins (numba, parallel over
    queries) and evaluates the kernel once per bin.  Identical training rankings are merged.
    Scoring costs O(n_queries x n_distinct_training x t^2).

    References
    ----------
    Lebanon, G. & Mao, Y. (2008). Non-parametric modeling of partially ranked data. JMLR 9.
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.

    Examples
    --------
    >>> import numpy as np
    >>> from dpclust.rankings import RankingKDE
    >>> X = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 3]]
    >>> kde = RankingKDE(theta=1.0).fit(X)
    >>> bool(kde.score_samples([[0, 1, 2]])[0] > kde.score_samples([[3, 2, 1]])[0])
    True
    """

    def __init__(self, theta="auto", *, theta_grid=None, n_items=None, items=None):
        self.theta = theta
        self.theta_grid = theta_grid
        self.n_items = n_items
        self.items = items

    def fit(self, X, y=None) -> RankingKDE:
        """Store the training rankings and choose ``theta`` if ``theta="auto"``.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Training top-t rankings (item ids padded with -1, or lists of ids or names).
        y : ignored

        Returns
        -------
        self : RankingKDE

        Raises
        ------
        DataError
            For invalid rankings (see :func:`~dpclust.rankings.check_rankings`).
        ValueError
            For a bad ``theta`` or ``theta_grid``, or ``theta="auto"`` with one ranking.
        """
        theta = _check_theta(self.theta)
        grid = _check_grid(self.theta_grid) if theta == "auto" else None
        R = self._validate_fit(X)
        orders, lengths, counts, _ = _unique_rankings(R)
        if theta == "auto":
            if len(R) < 2:
                raise ValueError("theta='auto' needs at least 2 training rankings (it scores "
                                 "each by leave-one-out)")
            loo = _log_density(orders, lengths, orders, lengths, counts, grid, R.n_items,
                               exclude=np.ones(len(counts)))
            cv = counts @ loo / counts.sum()
            best = int(np.argmax(cv))
            _warn_edge(grid, best, "RankingKDE(theta='auto')")
            self.theta_grid_ = grid
            self.cv_log_likelihood_ = cv
            theta = float(grid[best])
        self._resolve_items(R)
        self.theta_ = float(theta)
        self.orders_ = orders
        self.lengths_ = lengths
        self.weights_ = counts
        return self

    def score_samples(self, X) -> np.ndarray:
        """Log density of each ranking under the KDE.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items, any lengths ``1 .. n_items - 1``.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            ``log p(pi)``; for each length ``t`` these sum (in probability) to 1 over the
            ``n!/(n-t)!`` top-t rankings.
        """
        R = self._validate_score(X)
        return _log_density(R.orders, R.lengths, self.orders_, self.lengths_, self.weights_,
                            [self.theta_], self.n_items_)[:, 0]
