"""Choosing the coarsening ``alpha_c`` of a coarsened posterior (Miller & Dunson 2019, §4.2).

Miller & Dunson calibrate ``alpha_c`` by fitting the coarsened posterior over a grid of
values and plotting *fit* (the posterior mean log-likelihood per point) against
*complexity* (here the posterior mean number of clusters holding at least 1 % of the
points): as ``alpha_c`` grows the model buys fit with clusters, steeply while the clusters
describe structure and slowly once they only absorb the misfit of the component family.
The elbow between the two regimes is the choice.  :func:`calibrate` runs the grid with
short chains and finds the elbow as the point farthest above the chord joining the ends
of the curve, both axes scaled to [0, 1] (the "kneedle" rule of Satopää et al. 2011).

The grid runs on a random subsample of at most :data:`CALIBRATION_ROWS` rows, at the
coarsening that keeps the fit of the whole data.  The coarsened posterior
``p(theta | X) ∝ p(theta) exp(zeta sum_i log p(x_i | theta))`` depends on the data through
their empirical distribution and on ``N`` and ``alpha_c`` only through the *effective
sample size* ``E = zeta N = alpha_c N / (alpha_c + N)``: the likelihood term is
``exp(E * mean_i log p(x_i | theta))``.  A subsample of ``m`` rows with the same ``E``
(``alpha_m = E m / (m - E)``) has the same coarsened posterior up to the difference of the
two empirical distributions, at ``m / N`` of the cost per iteration.  Values of the grid
with ``E >= m / 2`` (``zeta_m >= 1/2``, nearly the exact posterior of the subsample) are
dropped, as values ``alpha_c >= N`` are for the whole data.

References
----------
Miller, J. W. & Dunson, D. B. (2019). Robust Bayesian inference via coarsening. *JASA*
    114(527), 1113-1125 (section 4.2 and figure 5, the calibration plot).
Satopää, V., Albrecht, J., Irwin, D. & Raghavan, B. (2011). Finding a "kneedle" in a
    haystack: detecting knee points in system behavior. *ICDCS Workshops*, 166-171.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from sklearn.base import clone

#: the default grid of alpha_c (values of N or more are dropped: zeta >= 1/2 is nearly
#: the exact posterior)
DEFAULT_GRID = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
#: iterations of each short run of the grid (at most the estimator's n_iter)
CALIBRATION_ITER = 100
#: rows of the random subsample the grid runs on (all the rows of smaller data): on the
#: 29,988 Dublin West ballots (Plackett-Luce) the grid took 10 s on 3,000 against 71 s on all
#: of them, with the same curve within 0.05 nats a ballot and 0.4 clusters, and the same
#: choice (alpha_c = 100); the default fit takes 364-592 s
CALIBRATION_ROWS = 3_000
#: the random stream of the subsample among those of the estimator's ``random_state``
_SUBSAMPLE_STREAM = 13
#: a point of the grid at least this share of the elbow's height above the chord is a near
#: tie, which the summary and the report name (on real data, 100 iterations per value move
#: the elbow by one grid step from one run to another where two points are this close)
NEAR_ELBOW = 0.9


class Calibration(NamedTuple):
    """What :func:`calibrate` found: per value of the grid ``alpha_c``, ``zeta``, ``fit``
    (posterior mean log-likelihood per point) and ``complexity`` (posterior mean number of
    clusters with at least 1 % of the points); the ``chosen`` value and its ``index``."""

    alpha_c: np.ndarray
    zeta: np.ndarray
    fit: np.ndarray
    complexity: np.ndarray
    chosen: float
    index: int
    n_iter: int
    #: other values of the grid whose elbow height is within :data:`NEAR_ELBOW` of the
    #: chosen one's: the short runs do not tell them apart
    near: tuple = ()
    #: points of the subsample the grid ran on (the whole data's when they are few)
    n_rows: int = 0
    #: the coarsening of each run on the subsample (the same effective sample size)
    alpha_subsample: np.ndarray | None = None

    def as_dict(self) -> dict:
        """JSON-able form for the run summary."""
        return {"alpha_c": self.alpha_c.tolist(), "zeta": [float(f"{z:.4g}") for z in self.zeta],
                "fit": [round(float(f), 4) for f in self.fit],
                "complexity": [round(float(c), 2) for c in self.complexity],
                "chosen": float(self.chosen), "n_iter": int(self.n_iter),
                "near_elbows": [float(a) for a in self.near],
                "rule": "elbow of fit against complexity (kneedle)",
                "rows": int(self.n_rows),
                "alpha_c_subsample": (None if self.alpha_subsample is None else
                                      [float(f"{a:.4g}") for a in self.alpha_subsample])}


def elbow_heights(complexity, fit) -> np.ndarray:
    """Each point's height above the chord from the first to the last point of the curve
    ``(complexity, fit)`` ordered by ``alpha_c``, both axes scaled to [0, 1] (the kneedle
    score).  A curve of fewer than three points, or a flat one (no complexity or fit
    gained), scores 1 at its last point and 0 elsewhere."""
    x = np.asarray(complexity, dtype=np.float64)
    y = np.asarray(fit, dtype=np.float64)
    dx, dy = (x.max() - x.min(), y.max() - y.min()) if len(x) else (0.0, 0.0)
    if len(x) < 3 or dx <= 0 or dy <= 0:
        out = np.zeros(len(x))
        out[-1:] = 1.0
        return out
    xs, ys = (x - x.min()) / dx, (y - y.min()) / dy
    # the chord from the first to the last point, in the scaled plane
    x0, y0, x1, y1 = xs[0], ys[0], xs[-1], ys[-1]
    nx, ny = -(y1 - y0), (x1 - x0)  # normal pointing above the chord
    return (xs - x0) * nx + (ys - y0) * ny


def elbow(complexity, fit) -> int:
    """Index of the elbow of the curve ``(complexity, fit)`` ordered by ``alpha_c``: the
    point farthest above the chord from the first to the last point (:func:`elbow_heights`);
    ties go to the smaller ``alpha_c``.  A flat curve gives the last point."""
    return int(np.argmax(elbow_heights(complexity, fit)))


def near_elbows(complexity, fit, index: int) -> np.ndarray:
    """Indices other than ``index`` whose height is at least ``NEAR_ELBOW`` times the
    elbow's (a positive height only)."""
    h = elbow_heights(complexity, fit)
    if h[index] <= 0:
        return np.zeros(0, dtype=np.int64)
    near = np.flatnonzero(h >= NEAR_ELBOW * h[index])
    return near[near != index]


def calibrate(estimator, X, grid=None, n_iter: int | None = None,
              n_rows: int | None = None) -> Calibration:
    """Fit ``estimator`` (a :class:`~dpclust.DPMixture`) at each ``alpha_c`` of ``grid``
    with short chains on a subsample of the data and return the fit-complexity curve and
    its elbow.

    Parameters
    ----------
    estimator : DPMixture
        Its family, prior, seed and other settings are used; its ``coarsening`` is
        replaced by each value of the grid, its run by ``n_iter`` iterations of one chain.
    X : the data
    grid : sequence of float, optional
        Values of ``alpha_c`` for the whole data (default :data:`DEFAULT_GRID` below the
        number of points); each runs on the subsample at the ``alpha_c`` of the same
        effective sample size (the module's docstring).
    n_iter : int, optional
        Iterations per value (default ``min(estimator.n_iter, 100)``, 100 when the
        estimator's ``n_iter`` is None); half is burn-in.
    n_rows : int, optional
        Rows of the subsample (default :data:`CALIBRATION_ROWS`; all of them when the
        data have no more), drawn without replacement from a stream of the estimator's
        ``random_state``.

    Returns
    -------
    Calibration
    """
    base = clone(estimator)
    n_points = _n_points(base, X)
    sub = _subsample(X, CALIBRATION_ROWS if n_rows is None else int(n_rows),
                     base.random_state)
    m = n_points if sub is X else _n_points(base, sub)
    if grid is None:
        grid = [a for a in DEFAULT_GRID if a < n_points] or [DEFAULT_GRID[0]]
    grid = np.array(sorted(float(a) for a in grid))
    if len(grid) == 0 or np.any(grid <= 0) or not np.all(np.isfinite(grid)):
        raise ValueError(f"the grid of alpha_c must hold positive numbers, got {grid!r}")
    if sub is not X:  # the same effective sample size E on the subsample, E < m / 2
        effective = grid * n_points / (grid + n_points)
        keep = effective < m / 2
        keep[0] = True  # the smallest value runs in any case
        grid, effective = grid[keep], np.minimum(effective[keep], m / 2)
        sub_grid = effective * m / (m - effective)
    else:
        sub_grid = grid
    if n_iter is None:  # an estimator that runs until it converges: CALIBRATION_ITER
        n_iter = CALIBRATION_ITER if base.n_iter is None else min(int(base.n_iter),
                                                                  CALIBRATION_ITER)
    fit, complexity = [], []
    for a in sub_grid:
        est = clone(base).set_params(coarsening=float(a), n_iter=n_iter, burn_in=None,
                                     n_chains=1, n_jobs=None, progress=False, checkpoint=None,
                                     callback=None, max_iter=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # short runs: no verdict wanted
            est.fit(sub)
        tr = est.trace_
        kept = slice(tr.log_likelihood.shape[1] // 2, None)  # one chain: (1, n_iter)
        fit.append(float(np.mean(tr.log_likelihood[:, kept])) / m)
        complexity.append(float(np.mean(tr.n_large_clusters[:, kept])))
    fit, complexity = np.array(fit), np.array(complexity)
    index = elbow(complexity, fit)
    near = tuple(float(grid[i]) for i in near_elbows(complexity, fit, index))
    return Calibration(grid, grid / (grid + n_points), fit, complexity, float(grid[index]),
                       index, int(n_iter), near, int(m),
                       None if sub is X else np.asarray(sub_grid))


def _subsample(X, n_rows: int, random_state):
    """``n_rows`` rows of ``X`` drawn without replacement, in their order, from their own
    random stream of ``random_state``; ``X`` itself when it has no more rows or cannot be
    indexed by rows (a file's path)."""
    try:
        n = len(X) if not hasattr(X, "shape") else int(X.shape[0])
    except TypeError:
        return X
    if n <= n_rows:
        return X
    if isinstance(random_state, np.random.Generator):
        rng = random_state
    else:
        seed = random_state if isinstance(random_state, (int, np.integer)) else None
        rng = np.random.default_rng(None if seed is None else [int(seed), _SUBSAMPLE_STREAM])
    from .comparison import take_rows

    return take_rows(X, np.sort(rng.choice(n, n_rows, replace=False)))


def _n_points(estimator, X) -> int:
    family = estimator._family(X)
    return int(family.n_points(family.validate(X)))
