"""Exponential blurring mean shift for top-t rankings (Meilă & Bao 2008), scored as a mixture
of Mallows kernels: the baseline of Meilă & Chen (2010), Figure 8.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import ClusterMixin

from ...utils.checks import check_int, check_positive, check_random_state
from ._base import _check_grid, _check_theta, _RankingModel, _warn_edge
from .blurring import _ebms, _ml_mixture_theta
from .kernel import _kernel_tables, _log_density, _nearest_centre, _rank_tables

#: blurring widths searched by ``RankingEBMS(theta="auto")``, in this (increasing) order
DEFAULT_BLUR_GRID = np.geomspace(0.05, 1.0, 8)


class RankingEBMS(ClusterMixin, _RankingModel):
    """Exponential blurring mean shift for top-t rankings (Meilă & Bao 2008).

    Every ranking is a point that moves.  At each step every point ``u`` (a top-T ranking) is
    replaced by the weighted "mean" of all points, the GM^s central ranking that best explains
    them, cut to its first ``T`` items::

        pi_u <- first T items of argmin_sigma sum_v w_uv sum_j s_j(pi_v | sigma),
        w_uv = N_v K_theta(pi_v | pi_u),

    where ``N_v`` counts the points at ``pi_v`` and ``K_theta`` is the Mallows kernel of
    :class:`RankingKDE` (the probability of ``pi_v`` under the kernel centred at ``pi_u``).  With
    all ``theta_j`` equal the GM^s normaliser does not depend on ``sigma``, so the argmin is the
    maximum-likelihood central ranking of the weighted points, a weighted Kemeny problem in the
    statistics ``R[i, k] = sum_v w_uv sum_j R_j(pi_v)[i, k]`` of Mathematics §5.  It is
    estimated by the greedy stagewise rule: at each stage, place the item left with the
    smallest column sum ``sum_{i left} R[i, k]`` (the cost of putting it next).  All points
    move at once (blurring: the data themselves move, Carreira-Perpiñán 2006) until none
    moves: the space is discrete, so a collapsed cluster is an exact fixed point.  Points
    that end at the same ranking form a cluster; its centre is that ranking.

    The fitted density is a mixture of GM^s kernels of one width centred at the clusters'
    central rankings, with the clusters' shares as weights::

        p(pi) = sum_k (N_k / N) K_theta_mix(pi | sigma_k),

    where ``sigma_k`` is the central ranking of the cluster's members (the greedy ML order of
    their statistics, as in the blurring step, over the items they rank; items no member
    ranks are completed uniformly by the kernel), which for a well-collapsed cluster begins
    with its centre.  ``p`` is a distribution over the top-t rankings of every length.

    Parameters
    ----------
    theta : float or "auto", default="auto"
        Width of the blurring kernel.  It must be smaller (a wider kernel) than the clusters'
        own dispersion: a kernel as narrow as the clusters leaves many points where they are
        (a discrete space has many fixed points), a very wide one merges clusters.  For
        clusters of GM^s dispersion ``theta_c`` (n = 12, t = 5), ``theta`` from about
        ``theta_c / 6`` to ``theta_c / 3`` works.  ``"auto"`` fits each width of
        ``theta_grid`` on part of the data and keeps the one whose mixture gives the held-out
        part the largest mean log-likelihood (then refits on all the data).
    max_iter : int, default=100
        Most blurring steps.
    tol : float, default=0.0
        Stop when at most this fraction of the points moved in a step (0: at a fixed point).
    center_length : int, optional
        Length ``T`` of the moving points and of ``cluster_centers_`` (the "standard length"
        of EBMS's output rankings); default the longest training ranking.
    mixture_theta : float, "ml" or "same", default="ml"
        Width of the mixture's kernels: ``"ml"`` maximises the training log-likelihood of
        the mixture over it (centres and shares fixed: a 1-D problem; the best of
        ``np.geomspace(1e-3, 100, 51)``, refined on a 41-point grid between its neighbours,
        about 1% apart); ``"same"`` uses ``theta_``; a float is used as it is.
    theta_grid : array-like of float, optional
        Blurring widths tried by ``theta="auto"``; default ``np.geomspace(0.05, 1, 8)``.
    validation_fraction : float, default=0.25
        With ``theta="auto"``: the share of the training rankings held out to score each width.
    auto_max_samples : int or None, default=3000
        With ``theta="auto"``: fit each candidate width on at most this many of the other
        rankings (a random subset), which bounds the cost of the search (a fit costs
        O(N^2) per step); ``None`` uses them all.  The final fit uses all the data.
    random_state : None, int or numpy.random.Generator, default=None
        With ``theta="auto"``: draws the validation split and the subset.
    n_items : int, optional
        Number of items ``n``; default from the data.
    items : sequence of str, optional
        Item names, for data given as names.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training ranking, clusters numbered by decreasing size.
    cluster_centers_ : ndarray of shape (n_clusters, T)
        Where the clusters collapsed: top-T rankings (item ids, best first).
    central_rankings_ : ndarray of shape (n_clusters, n_items - 1)
        The mixture's central rankings (of each cluster's members), padded with -1 after
        ``central_lengths_[k]`` items.
    central_lengths_ : ndarray of shape (n_clusters,)
    n_clusters_ : int
    weights_ : ndarray of shape (n_clusters,)
        Cluster shares ``N_k / N``.
    theta_ : float
        Blurring width used.
    mixture_theta_ : float
        Kernel width of the fitted mixture.
    n_iter_ : int
        Blurring steps run.
    converged_ : bool
        Whether the points stopped moving (within ``tol``) before ``max_iter``.
    theta_grid_, validation_log_likelihood_ : ndarray of shape (n_grid,)
        Only with ``theta="auto"``: the widths and the mean held-out log-likelihood of each
        (NaN for widths the search stopped before).
    n_items_, items_, n_samples_fit_
        As for :class:`RankingKDE`.

    Notes
    -----
    Identical points are merged (a point's update depends only on where it is), so a step
    costs O(U^2 T^2 + U n^2) for U distinct positions (numba, parallel over positions); U
    drops sharply after the first step.  Apart from the validation split of ``theta="auto"``
    the fit is deterministic.

    Meilă & Bao (2008) blur top-t orderings under the infinite GM model with the IGM
    distance and a heuristic width; with a finite item set, the kernel and the ML central
    ranking above are the natural analogues, and the mixture is how this package scores EBMS
    as a density (Meilă & Chen 2010, Figure 8).

    References
    ----------
    Meilă, M. & Bao, L. (2008). Estimation and clustering with infinite rankings. UAI;
    (2010) An exponential model for infinite rankings. JMLR 11.
    Carreira-Perpiñán, M. Á. (2006). Fast nonparametric clustering with Gaussian blurring
    mean-shift. ICML.
    Meilă, M., Phadnis, K., Patterson, A. & Bilmes, J. (2007). Consensus ranking under the
    exponential model. UAI (the ML central ranking of a GM model).
    """

    def __init__(self, theta="auto", *, max_iter=100, tol=0.0, center_length=None,
                 mixture_theta="ml", theta_grid=None, validation_fraction=0.25,
                 auto_max_samples=3000, random_state=None, n_items=None, items=None):
        self.theta = theta
        self.max_iter = max_iter
        self.tol = tol
        self.center_length = center_length
        self.mixture_theta = mixture_theta
        self.theta_grid = theta_grid
        self.validation_fraction = validation_fraction
        self.auto_max_samples = auto_max_samples
        self.random_state = random_state
        self.n_items = n_items
        self.items = items

    def _check_params(self):
        theta = _check_theta(self.theta)
        mix = self.mixture_theta
        if not (isinstance(mix, str) and mix in ("ml", "same")):
            if isinstance(mix, str):
                raise ValueError(f"mixture_theta must be a positive number, 'ml' or 'same', "
                                 f"got {mix!r}")
            mix = check_positive(mix, "mixture_theta")
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        tol = self.tol
        if not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not 0 <= tol < 1:
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        T = self.center_length
        if T is not None:
            T = check_int(T, "center_length", minimum=1)
        vf = self.validation_fraction
        if not isinstance(vf, numbers.Real) or isinstance(vf, bool) or not 0 < vf < 1:
            raise ValueError(f"validation_fraction must be a number in (0, 1), got {vf!r}")
        if self.auto_max_samples is not None:
            check_int(self.auto_max_samples, "auto_max_samples", minimum=2)
        return theta, mix, max_iter, float(tol), T, float(vf)

    def fit(self, X, y=None) -> RankingEBMS:
        """Blur the rankings until they collapse into clusters, then fit the mixture.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Training top-t rankings.
        y : ignored

        Returns
        -------
        self : RankingEBMS

        Raises
        ------
        DataError
            For invalid rankings (see :func:`~dpclust.rankings.check_rankings`).
        ValueError
            For bad parameters, a ``center_length`` above ``n_items - 1``, or
            ``theta="auto"`` with fewer than 4 rankings.
        """
        theta, mix, max_iter, tol, T, vf = self._check_params()
        grid = None if self.theta_grid is None else _check_grid(self.theta_grid)
        R = self._validate_fit(X)
        n = R.n_items
        T = R.max_length if T is None else T
        if T > n - 1:
            raise ValueError(f"center_length={T} is more than n_items - 1 = {n - 1}")
        if theta == "auto":
            theta = self._select_theta(R, grid, mix, max_iter, tol, T, vf)
        state = _ebms(R, float(theta), max_iter, tol, T)
        if not state["converged"]:
            warnings.warn(f"RankingEBMS: the points still moved after max_iter={max_iter} "
                          "blurring steps; the clusters may not have settled", UserWarning,
                          stacklevel=2)
        self._resolve_items(R)
        self.theta_ = float(theta)
        for key in ("labels", "cluster_centers", "central_rankings", "central_lengths",
                    "weights", "n_clusters", "n_iter", "converged"):
            setattr(self, key + "_", state[key])
        if mix == "same":
            mix = self.theta_
        elif mix == "ml":
            mix = _ml_mixture_theta(R, state)
        self.mixture_theta_ = float(mix)
        return self

    def _select_theta(self, R, grid, mix, max_iter, tol, T, vf) -> float:
        """The blurring width whose fit on a random part of the data gives the largest mean
        log-likelihood of the held-out part.  Widths are tried in increasing order (narrower
        kernels, more clusters, slower fits); the search stops once two widths in a row
        score below the best so far."""
        if len(R) < 4:
            raise ValueError("theta='auto' needs at least 4 training rankings (it holds some "
                             "out to score each width)")
        grid = DEFAULT_BLUR_GRID.copy() if grid is None else grid
        rng = check_random_state(self.random_state)
        perm = rng.permutation(len(R))
        n_val = min(max(1, round(vf * len(R))), len(R) - 1)
        fit_part = perm[n_val:]
        if self.auto_max_samples is not None:
            fit_part = fit_part[:self.auto_max_samples]
        R_fit, R_val = R[np.sort(fit_part)], R[np.sort(perm[:n_val])]
        scores = np.full(len(grid), np.nan)
        for g, th in enumerate(grid):
            state = _ebms(R_fit, float(th), max_iter, tol, T)
            m = float(th) if mix == "same" else (
                _ml_mixture_theta(R_fit, state) if mix == "ml" else mix)
            scores[g] = float(np.mean(_log_density(
                R_val.orders, R_val.lengths, state["central_rankings"],
                state["central_lengths"], state["weights"], [m], R.n_items)[:, 0]))
            best = int(np.nanargmax(scores))
            if g - best >= 2 and scores[g - 1] < scores[best] and scores[g] < scores[best]:
                break
        best = int(np.nanargmax(scores))
        _warn_edge(grid, best, "RankingEBMS(theta='auto')")
        self.theta_grid_ = grid
        self.validation_log_likelihood_ = scores
        return float(grid[best])

    def score_samples(self, X) -> np.ndarray:
        """Log density of each ranking under the fitted mixture
        ``sum_k w_k K_{mixture_theta_}(pi | sigma_k)``.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences
            Top-t rankings of the fitted items, any lengths ``1 .. n_items - 1``.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        R = self._validate_score(X)
        return _log_density(R.orders, R.lengths, self.central_rankings_, self.central_lengths_,
                            self.weights_, [self.mixture_theta_], self.n_items_)[:, 0]

    def predict(self, X) -> np.ndarray:
        """The most probable cluster of each ranking under the fitted mixture.

        Parameters
        ----------
        X : Rankings, array-like of shape (n_samples, max_length) or list of sequences

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            ``argmax_k log w_k + log K_{mixture_theta_}(pi | sigma_k)``.
        """
        R = self._validate_score(X)
        c_len = self.central_lengths_
        cta, norm = _kernel_tables([self.mixture_theta_], self.n_items_, int(c_len.max()),
                                   R.max_length)
        c_rank = _rank_tables(self.central_rankings_, c_len, self.n_items_)
        out = np.empty(len(R), dtype=np.int64)
        _nearest_centre(R.orders, R.lengths, c_rank, c_len, np.log(self.weights_),
                        self.mixture_theta_, np.ascontiguousarray(cta[0]),
                        np.ascontiguousarray(norm[0]), out)
        return out

    def fit_predict(self, X, y=None) -> np.ndarray:
        """``fit(X).labels_``."""
        return self.fit(X).labels_
