"""Figures for a fitted Dirichlet-process mixture: MCMC traces, clusters, sizes, co-clustering.

Each ``plot_*`` function draws one figure, writes it as a PNG and returns the path, so the
report, the benchmarks and later models can all reuse them.  The figures of the distance
dependent CRP, :func:`plot_tables_by_position` and :func:`plot_prior_draws`, return the
:class:`~matplotlib.figure.Figure` instead (writing the PNG too when given a ``path``), and
the first draws into given axes, so that they compose into panels.  The figures of a
Generalized Mallows mixture of rankings, :func:`plot_cluster_size_distribution` and
:func:`plot_theta_by_rank`, are Figures 10 and 11 of Meilă & Chen (2010).

matplotlib is an optional dependency (``pip install dpclust[plot]``).  It is imported only
when a figure is drawn, by :func:`import_matplotlib`, never when :mod:`dpclust.report` is
imported.  Figures are built with the object-oriented API (:class:`matplotlib.figure.Figure`
on an explicit Agg canvas) rather than :mod:`matplotlib.pyplot`: that renders headless
without touching the process-wide backend (a notebook user keeps their inline backend), and
no figure is registered with pyplot, so there is nothing left open to close after saving.

Colours follow the size rank of a cluster, not its label: the largest cluster gets the first
colour of :data:`CLUSTER_PALETTE`, and clusters beyond the palette are drawn in
:data:`OTHER_COLOUR`.  :func:`cluster_colours` gives the same mapping to the HTML report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils.plotting import (DPI, PLOT_INSTALL_HINT, import_matplotlib, new_figure, save_figure,
                              style_axes)
from .figures.colours import (CLUSTER_PALETTE, LINE_COLOUR as _LINE_COLOUR,
                              OTHER_COLOUR, cluster_colours, colours_by_size)
from .figures.common import (MAX_PLOT_POINTS, SUBSAMPLE_SEED as _SUBSAMPLE_SEED,
                             as_labels as _as_labels,
                             clusters_by_size as _clusters_by_size,
                             subsample_indices as _subsample_indices)
from .figures.traces import plot_k_posterior, plot_trace

__all__ = [
    "CLUSTER_PALETTE",
    "FIGURE2_DECAYS",
    "LARGE_CLUSTER_SHARE",
    "MAX_PLOT_POINTS",
    "OTHER_COLOUR",
    "PLOT_INSTALL_HINT",
    "cluster_colours",
    "colours_by_size",
    "plot_cluster_size_distribution",
    "plot_cluster_sizes",
    "plot_clusters",
    "plot_prior_draws",
    "plot_similarity",
    "plot_tables_by_position",
    "plot_theta_by_rank",
    "plot_trace",
    "plot_k_posterior",
    "theta_by_rank",
]


LARGE_CLUSTER_SHARE = 0.05
"""A cluster holding at least this share of the data is *large* in :func:`theta_by_rank`
(Meilă & Chen 2010, section 8: 5%, which splits their data roughly equally)."""


# --------------------------------------------------------------------------- helpers


def _svd_flip(components: np.ndarray) -> np.ndarray:
    """Sign-fix principal axes so the largest loading of each is positive (deterministic)."""
    signs = np.sign(components[np.arange(components.shape[0]), np.argmax(np.abs(components), 1)])
    signs[signs == 0] = 1.0
    return components * signs[:, None]


def _project_2d(X: Any, idx: np.ndarray):
    """Two plotting coordinates for the points ``idx`` of ``X``.

    Returns
    -------
    coords : ndarray of shape (len(idx), 2)
    axis_labels : tuple of str
    affine : tuple (centre, W) or None
        For dense data, ``coords = (x - centre) @ W``, so Gaussian cluster parameters can be
        projected the same way; None for sparse or one-dimensional data.
    """
    if sp.issparse(X):
        return _project_sparse(X, idx)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    d = X.shape[1]
    Xs = X[idx]
    if d == 1:
        return np.column_stack([Xs[:, 0], np.zeros(len(idx))]), ("x1", ""), None
    if d == 2:
        return Xs, ("x1", "x2"), (np.zeros(2), np.eye(2))
    centre = X.mean(axis=0)
    # PCA by SVD of the centred (subsampled) data.
    _, s, vt = np.linalg.svd(Xs - centre, full_matrices=False)
    W = _svd_flip(vt[:2]).T
    total = float(np.sum(s**2))
    share = s[:2] ** 2 / total if total > 0 else np.zeros(2)
    axis_labels = tuple(f"PC{j + 1} ({100 * share[j]:.0f}% of variance)" for j in range(2))
    return (Xs - centre) @ W, axis_labels, (centre, W)


def _project_sparse(X: Any, idx: np.ndarray):
    """TruncatedSVD of tf-idf weighted counts; the matrix is never densified."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer

    Xs = sp.csr_matrix(X)[idx]
    weighted = TfidfTransformer().fit_transform(Xs)
    if weighted.shape[1] <= 2:  # a tiny vocabulary: the weights are the coordinates
        coords = np.zeros((weighted.shape[0], 2))
        coords[:, : weighted.shape[1]] = weighted.toarray()
        return coords, ("tf-idf of term 1", "tf-idf of term 2"), None
    svd = TruncatedSVD(n_components=2, random_state=_SUBSAMPLE_SEED)
    coords = svd.fit_transform(weighted)
    share = svd.explained_variance_ratio_
    axis_labels = tuple(
        f"SVD {j + 1} of tf-idf counts ({100 * share[j]:.0f}% of variance)" for j in range(2)
    )
    return coords, axis_labels, None


def _ellipse_params(mean: np.ndarray, cov: np.ndarray, n_sigma: float = 2.0):
    """Centre, width, height and angle (degrees) of the ``n_sigma`` contour of a 2-D Gaussian."""
    evals, evecs = np.linalg.eigh(0.5 * (cov + cov.T))
    evals = np.clip(evals, 0.0, None)
    major = evecs[:, 1]
    angle = float(np.degrees(np.arctan2(major[1], major[0])))
    width, height = 2.0 * n_sigma * np.sqrt(evals[::-1])
    return mean, float(width), float(height), angle


def _gaussian_params(cluster_params: Mapping[str, Any] | None, d: int):
    """``(means, covariances)`` arrays from ``cluster_params`` if they fit ``d``, else None."""
    if not cluster_params or "means" not in cluster_params or "covariances" not in cluster_params:
        return None
    try:
        means = np.asarray(cluster_params["means"], dtype=float)
        covs = np.asarray(cluster_params["covariances"], dtype=float)
    except (TypeError, ValueError):
        return None
    if means.ndim != 2 or means.shape[1] != d or covs.shape != (means.shape[0], d, d):
        return None
    return means, covs


# --------------------------------------------------------------------------- figures


def plot_clusters(
    X: Any,
    labels: Any,
    path: str | Path,
    cluster_params: Mapping[str, Any] | None = None,
    *,
    max_points: int = MAX_PLOT_POINTS,
) -> Path:
    """Scatter plot of the points coloured by cluster, in two dimensions.

    Dense data with two features are drawn as they are (axes ``x1``, ``x2``); with more,
    on their first two principal components (SVD of the centred data).  Sparse count data
    (documents x vocabulary) are tf-idf weighted and projected by truncated SVD without
    densifying.  For Gaussian clusters the 2-sigma contour of each cluster's covariance is
    drawn (projected onto the plotting plane when ``n_features > 2``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or scipy.sparse matrix
        The data: dense floats or sparse counts.
    labels : array-like of int, shape (n_samples,)
        Cluster of each point; cluster ``k`` is row ``k`` of ``cluster_params``.
    path : str or Path
        Where to write the PNG.
    cluster_params : mapping, optional
        ``"means"`` of shape (n_clusters, n_features) and ``"covariances"`` of shape
        (n_clusters, n_features, n_features); ignored when absent or of other shapes.
    max_points : int, default=MAX_PLOT_POINTS
        Draw at most this many points (a fixed-seed subsample).

    Returns
    -------
    path : Path
        The written file.

    Raises
    ------
    ImportError
        If matplotlib (or, for sparse data, scikit-learn) is missing.
    ValueError
        If ``X`` and ``labels`` disagree on the number of points.
    """
    mpl = import_matplotlib()
    labels = _as_labels(labels)
    if not sp.issparse(X):
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
    n = labels.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {n} entries")
    idx = _subsample_indices(n, max_points)
    coords, axis_labels, affine = _project_2d(X, idx)
    sub_labels = labels[idx]
    ids, sizes = _clusters_by_size(labels)
    colours = colours_by_size(ids, sizes)
    n_coloured = min(len(ids), len(CLUSTER_PALETTE))
    m = len(idx)
    size = 16 if m <= 1_000 else 8 if m <= 5_000 else 3
    alpha = 0.9 if m <= 2_000 else 0.6
    one_d = not sp.issparse(X) and X.shape[1] == 1
    if one_d:  # spread the points vertically by cluster, with a little fixed jitter
        rank = {int(k): r for r, k in enumerate(ids)}
        jitter = np.random.default_rng(_SUBSAMPLE_SEED).uniform(-0.3, 0.3, m)
        coords[:, 1] = np.array([rank[int(k)] for k in sub_labels]) + jitter

    fig = new_figure(mpl, (8.4, 6.0))
    ax = fig.subplots()
    style_axes(ax)
    other = np.isin(sub_labels, ids[n_coloured:])
    if other.any():
        ax.scatter(coords[other, 0], coords[other, 1], s=size, c=OTHER_COLOUR, alpha=alpha,
                   linewidths=0)
    for k in ids[:n_coloured]:  # largest first, so small clusters are drawn on top
        mask = sub_labels == k
        if mask.any():
            ax.scatter(coords[mask, 0], coords[mask, 1], s=size, c=colours[int(k)],
                       alpha=alpha, linewidths=0)

    params = _gaussian_params(cluster_params, X.shape[1]) if affine is not None else None
    if params is not None:
        centre, W = affine
        means, covs = params
        halo = [mpl.withStroke(linewidth=3.6, foreground="white")]
        for k in ids:
            k = int(k)
            if k < 0 or k >= len(means) or not (np.isfinite(means[k]).all()
                                                 and np.isfinite(covs[k]).all()):
                continue
            mu2 = (means[k] - centre) @ W
            centre2, width, height, angle = _ellipse_params(mu2, W.T @ covs[k] @ W)
            ax.add_patch(mpl.Ellipse(centre2, width, height, angle=angle, fill=False,
                                     edgecolor=colours[k], lw=1.8, path_effects=halo, zorder=3))
            ax.plot(*mu2, marker="X", ms=9, color=colours[k], mec="black", mew=0.9, zorder=4)

    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    if one_d:
        ax.set_ylabel("cluster (largest at bottom)")
        ax.set_yticks([])
    elif affine is not None:
        # Equal scales make the ellipses true to shape, unless the axes differ wildly.
        spans = np.ptp(coords, axis=0)
        if spans.min() > 0 and spans.max() / spans.min() < 10:
            ax.set_aspect("equal", adjustable="datalim")

    handles = [
        mpl.Line2D([], [], marker="o", ls="", color=colours[int(k)], ms=7,
                   label=f"{int(k)}  ({int(s):,})")
        for k, s in zip(ids[:n_coloured], sizes[:n_coloured])
    ]
    if len(ids) > n_coloured:
        n_other = int(sizes[n_coloured:].sum())
        handles.append(mpl.Line2D([], [], marker="o", ls="", color=OTHER_COLOUR, ms=7,
                                  label=f"{len(ids) - n_coloured} more  ({n_other:,})"))
    if params is not None:
        handles.append(mpl.Line2D([], [], color="#444444", lw=1.5, label="2σ contour"))
        handles.append(mpl.Line2D([], [], marker="X", ls="", color="#444444", ms=7,
                                  label="cluster mean"))
    ax.legend(handles=handles, title="cluster (size)", loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9, title_fontsize=9)
    title = f"Clusters of the point estimate (K = {len(ids)})"
    if m < n:
        title += f"\n{m:,} of {n:,} points shown"
    ax.set_title(title, fontweight="bold")
    return save_figure(fig, path)


def plot_cluster_sizes(labels: Any, path: str | Path) -> Path:
    """Bar chart of cluster sizes, largest first.

    Parameters
    ----------
    labels : array-like of int, shape (n_samples,)
        Cluster of each point.
    path : str or Path
        Where to write the PNG.

    Returns
    -------
    path : Path
        The written file.
    """
    mpl = import_matplotlib()
    labels = _as_labels(labels)
    ids, sizes = _clusters_by_size(labels)
    colours = colours_by_size(ids, sizes)
    K = len(ids)
    fig = new_figure(mpl, (float(np.clip(2.5 + 0.32 * K, 5.5, 12.0)), 4.0))
    ax = fig.subplots()
    style_axes(ax)
    ax.grid(False, axis="x")
    pos = np.arange(K)
    bars = ax.bar(pos, sizes, color=[colours[int(k)] for k in ids], width=0.8,
                  edgecolor="white", linewidth=0.5)
    if K <= 20:
        ax.bar_label(bars, labels=[f"{int(s):,}" for s in sizes], padding=2, fontsize=8)
        ax.margins(y=0.1)
    if K <= 40:
        ax.set_xticks(pos, [str(int(k)) for k in ids], fontsize=8 if K > 20 else 10)
        ax.set_xlabel("cluster label (largest cluster first)")
    else:
        ax.set_xlabel("clusters, largest first")
    ax.set_xlim(-0.6, K - 0.4)
    ax.set_ylabel("points")
    ax.yaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    n = int(sizes.sum())
    ax.set_title(f"Cluster sizes (K = {K}, {n:,} points)", fontweight="bold")
    return save_figure(fig, path)


def plot_similarity(similarity: Any, labels: Any, path: str | Path) -> Path:
    """Heat map of the posterior co-clustering matrix, points ordered by cluster label.

    Parameters
    ----------
    similarity : array-like of shape (n_samples, n_samples)
        ``similarity[i, j]`` is the posterior probability that points ``i`` and ``j`` are in
        the same cluster.
    labels : array-like of int, shape (n_samples,)
        Point-estimate cluster of each point, used to order rows and columns.
    path : str or Path
        Where to write the PNG.

    Returns
    -------
    path : Path
        The written file.

    Raises
    ------
    ValueError
        If ``similarity`` is not square with one row per label.
    """
    mpl = import_matplotlib()
    labels = _as_labels(labels)
    S = np.asarray(similarity, dtype=float)
    n = labels.shape[0]
    if S.shape != (n, n):
        raise ValueError(f"similarity must have shape ({n}, {n}), got {S.shape}")
    order = np.argsort(labels, kind="stable")
    S = S[np.ix_(order, order)]
    ids, counts = np.unique(labels, return_counts=True)
    edges = np.concatenate([[0], np.cumsum(counts)])

    fig = new_figure(mpl, (6.8, 5.8))
    ax = fig.subplots()
    image = ax.imshow(S, vmin=0.0, vmax=1.0, cmap="Blues", aspect="equal",
                      interpolation="nearest" if n <= 1_000 else "antialiased")
    for e in edges[1:-1]:
        ax.axhline(e - 0.5, color="#555555", lw=0.5, alpha=0.7)
        ax.axvline(e - 0.5, color="#555555", lw=0.5, alpha=0.7)
    if len(ids) <= 20:
        centres = 0.5 * (edges[:-1] + edges[1:]) - 0.5
        keep = counts >= 0.02 * n  # label only blocks wide enough to read
        ax.set_xticks(centres[keep], [str(int(k)) for k in ids[keep]], fontsize=8)
        ax.set_yticks(centres[keep], [str(int(k)) for k in ids[keep]], fontsize=8)
        ax.set_xlabel("points, grouped by cluster label")
        ax.set_ylabel("points, grouped by cluster label")
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("points, ordered by cluster label")
        ax.set_ylabel("points, ordered by cluster label")
    bar = fig.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label("P(same cluster)")
    ax.set_title("Posterior co-clustering", fontweight="bold")
    return save_figure(fig, path)


# --------------------------------------------------------------------------- ddCRP figures


def _table_numbers(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each customer's table numbered 0, 1, ... by the table's first customer in the order
    of ``x`` (ties in row order)."""
    order = np.argsort(x, kind="stable")
    ids, first = np.unique(labels[order], return_index=True)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(ids))
    return rank[np.searchsorted(ids, labels)]


def _write_png(fig, path: str | Path) -> None:
    """Write ``fig`` as a PNG at ``path`` (parent folders created) and keep it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png", facecolor="white")


def plot_tables_by_position(
    positions: Any,
    labels: Any,
    *,
    ax: Any = None,
    path: str | Path | None = None,
    colours: Mapping[int, str] | None = None,
    position_label: str | None = None,
    title: str | None = None,
    max_points: int = MAX_PLOT_POINTS,
):
    """Tables against position: one mark per customer at its table.

    The view of Figure 2 of Blei & Frazier (2010): x is the customer's position (or its
    index), y its table, with tables numbered 0, 1, ... by their first customer in position
    order, so that a sequential draw climbs like a staircase and a table that stays within
    a stretch of positions shows as a short run.

    Parameters
    ----------
    positions : array-like of shape (n_samples,) or None
        Each customer's position: numbers, or ``datetime64`` (drawn on a date axis).
        ``None``: the customer index ``0 .. n_samples - 1``.
    labels : array-like of int, shape (n_samples,)
        Table (cluster) of each customer.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; default a new figure.
    path : str or Path, optional
        Also write the figure as a PNG here.
    colours : mapping of int to str, optional
        Colour of each label, for example :func:`cluster_colours` to match the other
        figures of a report (labels without one are drawn in :data:`OTHER_COLOUR`).
        Default: :data:`CLUSTER_PALETTE` in turn by table number, so neighbouring tables
        differ.
    position_label : str, optional
        The x axis label; default ``"position"``, or ``"customer"`` without positions.
    title : str, optional
        Default ``"Tables against <position_label> (K = ...)"``.
    max_points : int, default=MAX_PLOT_POINTS
        Draw at most this many customers (a fixed-seed subsample).

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure drawn on (that of ``ax`` when given).

    Raises
    ------
    ImportError
        If matplotlib is missing (install ``dpclust[plot]``).
    ValueError
        If ``positions`` and ``labels`` disagree on the number of customers, or the
        positions are not numbers or datetimes.

    References
    ----------
    Blei, D. M. & Frazier, P. I. (2010). Distance dependent Chinese restaurant processes.
    ICML, Figure 2.
    """
    mpl = import_matplotlib()
    labels = _as_labels(labels)
    n = labels.shape[0]
    if positions is None:
        x = np.arange(n)
        position_label = position_label or "customer"
    else:
        x = np.asarray(positions)
        if x.ndim != 1 or x.shape[0] != n:
            raise ValueError(f"positions must have shape ({n},) like labels, got {x.shape}")
        if x.dtype.kind not in "biufM":
            try:
                x = x.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError("positions must be numbers or datetimes") from None
        position_label = position_label or "position"
    table = _table_numbers(x, labels) if n else np.zeros(0, dtype=np.int64)
    n_tables = int(table.max()) + 1 if n else 0
    idx = _subsample_indices(n, max_points)
    if colours is None:
        palette = np.array(CLUSTER_PALETTE)
        point_colours = palette[table[idx] % len(palette)]
    else:
        point_colours = [colours.get(int(k), OTHER_COLOUR) for k in labels[idx]]

    if ax is None:
        fig = new_figure(mpl, (8.4, float(np.clip(2.6 + 0.06 * n_tables, 3.6, 7.0))))
        ax = fig.subplots()
    else:
        fig = ax.figure
    style_axes(ax)
    m = len(idx)
    size = 36 if m <= 300 else 16 if m <= 3_000 else 6
    ax.scatter(x[idx], table[idx], c=point_colours, marker="_", s=size,
               linewidths=1.4 if m <= 3_000 else 0.9)
    ax.yaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    ax.set_ylim(-0.8, max(n_tables, 1) - 0.2)
    ax.set_xlabel(position_label)
    ax.set_ylabel("table (by first customer)")
    if title is None:
        title = f"Tables against {position_label} (K = {n_tables})"
        if m < n:
            title += f"\n{m:,} of {n:,} customers shown"
    ax.set_title(title, fontweight="bold")
    if path is not None:
        _write_png(fig, path)
    return fig


def _clear_upper_left(ax, x: np.ndarray, y: np.ndarray, *, right: float, bottom: float):
    """Raise the top of ``ax``'s y range until no point lies in the upper-left box left of
    ``right`` and above ``bottom`` (axes fractions), where an inset goes."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    under = (x - x0) / (x1 - x0) < right + 0.03
    if not under.any():
        return
    top = float(y[under].max())
    if (top - y0) / (y1 - y0) > bottom - 0.05:
        ax.set_ylim(y0, y0 + (top + 0.5 - y0) / (bottom - 0.05))


FIGURE2_DECAYS = ("constant", "window:30", "exponential:10", "logistic:30:2")
"""Decays of :func:`plot_prior_draws` by default: the paper's four panels."""


def plot_prior_draws(
    decays: Sequence[Any] = FIGURE2_DECAYS,
    *,
    n: int = 1000,
    alpha: float = 1.0,
    random_state: Any = 0,
    max_distance: float = 60.0,
    path: str | Path | None = None,
):
    """One draw from a sequential distance dependent CRP per decay, each with its decay
    inset: Figure 2 of Blei & Frazier (2010).

    Customers sit at positions ``0 .. n - 1``, so the distance between two is the
    difference of their indices, and each links only to itself or to an earlier customer.
    Each panel is one prior draw drawn by :func:`plot_tables_by_position` (tables against
    customer), with ``f(d)`` for ``d`` in ``[0, max_distance]`` in the inset.

    The paper does not give alpha or the decay parameters.  The defaults, ``alpha = 1``
    with a window of 30, an exponential of length 10 and a logistic of midpoint 30 and
    slope 2, keep every decay's inset within the paper's 0-60 range of distances and show
    the contrast of its panels: the traditional CRP opens new tables ever more rarely
    (about ``alpha log n``, 7 here) and its first tables take customers from the whole
    sequence; a customer of a decayed CRP links to itself with probability about
    ``alpha / (alpha + sum_d f(d))``, so tables keep opening at a steady rate (about 35
    in expectation for the window and the logistic, 95 for the exponential) and each lives
    only as long as customers keep linking back to it within the decay's reach.

    Parameters
    ----------
    decays : sequence of Decay or str, default=FIGURE2_DECAYS
        One panel each, two panels a row: ``Constant()`` (the traditional CRP),
        ``Window(a)``, ``Exponential(a)``, ``Logistic(a, slope)`` or strings such as
        ``"window:30"``.
    n : int, default=1000
        Number of customers.
    alpha : float, default=1.0
        Self-link weight.
    random_state : int, Generator or None, default=0
        The panels draw in turn from one stream.
    max_distance : float, default=60.0
        Range of distances in the insets.
    path : str or Path, optional
        Also write the figure as a PNG here.

    Returns
    -------
    fig : matplotlib.figure.Figure

    Raises
    ------
    ImportError
        If matplotlib is missing (install ``dpclust[plot]``).

    References
    ----------
    Blei, D. M. & Frazier, P. I. (2010). Distance dependent Chinese restaurant processes.
    ICML, section 2 and Figure 2.
    """
    from ..utils.checks import check_int, check_random_state
    from ..ddcrp.decay import parse_decay
    from ..ddcrp.prior import sample_prior

    mpl = import_matplotlib()
    decays = [parse_decay(d) for d in decays]
    if not decays:
        raise ValueError("decays must hold at least one decay")
    n = check_int(n, "n", 1)
    rng = check_random_state(random_state)
    positions = np.arange(n)
    ncols = min(2, len(decays))
    nrows = -(-len(decays) // ncols)
    fig = new_figure(mpl, (5.4 * ncols, 4.0 * nrows))
    axes = np.asarray(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    d = np.linspace(0.0, float(max_distance), 601)
    for ax, decay in zip(axes, decays):
        labels = sample_prior(decay, alpha=alpha, positions=positions, sequential=True,
                              random_state=rng).labels[0]
        n_tables = int(labels.max()) + 1
        plot_tables_by_position(None, labels, ax=ax, title=f"{decay.title}\n"
                                f"{n_tables} tables")
        ax.title.set_fontsize(10)
        box = (0.07, 0.56, 0.34, 0.32)  # the inset, in axes fractions
        _clear_upper_left(ax, np.arange(n), labels, right=box[0] + box[2], bottom=box[1])
        inset = ax.inset_axes(list(box))
        inset.plot(d, decay(d), color=_LINE_COLOUR, lw=1.3)
        inset.set_xlim(0.0, float(max_distance))
        inset.set_ylim(-0.05, 1.1)
        inset.set_xlabel("distance", fontsize=7, labelpad=1)
        inset.set_ylabel("f(d)", fontsize=7, labelpad=1)
        inset.tick_params(labelsize=6, length=2, pad=1)
        inset.patch.set_alpha(0.9)
    for ax in axes[len(decays):]:
        ax.set_visible(False)
    fig.suptitle(f"Draws from sequential distance dependent CRPs ({n:,} customers, "
                 f"α = {alpha:g})", fontweight="bold")
    if path is not None:
        _write_png(fig, path)
    return fig


# --------------------------------------------------------------------------- ranking figures


def theta_by_rank(theta: Any, sizes: Any, *, large_share: float = LARGE_CLUSTER_SHARE) -> dict:
    """Average of each rank's dispersion ``theta_j`` over the clusters, weighted by size.

    Parameters
    ----------
    theta : array-like of shape (n_clusters, n_ranks)
        ``theta[k, j]``: the dispersion of cluster ``k`` at rank ``j + 1`` (larger: the
        cluster's rankings agree more on their item at that rank).
    sizes : array-like of shape (n_clusters,)
        Number of rankings in each cluster (the weights; empty clusters count for nothing).
    large_share : float, default=LARGE_CLUSTER_SHARE
        Clusters holding at least this share of all rankings are *large*, the others
        *small*.

    Returns
    -------
    averages : dict of str to ndarray of shape (n_ranks,) or None
        ``"all"``, ``"large"`` and ``"small"``: the weighted averages over all clusters, the
        large ones and the small ones (None when there are no such clusters).

    Raises
    ------
    ValueError
        If the shapes disagree or no cluster holds a ranking.

    References
    ----------
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models.
    UAI, section 8 and Figure 11.
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    sizes = np.asarray(sizes, dtype=np.float64).ravel()
    if theta.ndim != 2 or theta.shape[0] != sizes.shape[0]:
        raise ValueError(f"theta must have shape (n_clusters, n_ranks) with one row per size; "
                         f"got theta {theta.shape} and {sizes.shape[0]} sizes")
    total = sizes.sum()
    if not total > 0:
        raise ValueError("no cluster holds a ranking")
    large = sizes >= large_share * total

    def average(mask):
        weights = np.where(mask, sizes, 0.0)
        if not weights.sum() > 0:
            return None
        return weights @ theta / weights.sum()

    return {"all": average(np.ones_like(large)), "large": average(large),
            "small": average(~large)}


def plot_cluster_size_distribution(labels: Any, path: str | Path, *,
                                   shares: Sequence[float] = (0.01, 0.001),
                                   unit: str = "points") -> Path:
    """Cluster sizes, largest first, on a log scale: Figure 10 of Meilă & Chen (2010).

    Dirichlet-process mixtures of many rankings leave a few large clusters and a long tail
    of small ones; the log scale shows both.  Dashed lines mark ``shares`` of all the
    points, and the title counts the singletons and the clusters above each line.

    Parameters
    ----------
    labels : array-like of int, shape (n_samples,)
        Cluster of each point (ranking).
    path : str or Path
        Where to write the PNG.
    shares : sequence of float, default=(0.01, 0.001)
        Shares of the data to mark (1% and 0.1%, as the paper's caption counts).
    unit : str, default="points"
        What the data are called in the title, such as ``"rankings"``.

    Returns
    -------
    path : Path
        The written file.

    Raises
    ------
    ImportError
        If matplotlib is missing (install ``dpclust[plot]``).

    References
    ----------
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models.
    UAI, Figure 10.
    """
    mpl = import_matplotlib()
    labels = _as_labels(labels)
    ids, sizes = _clusters_by_size(labels)
    colours = colours_by_size(ids, sizes)
    K, n = len(ids), int(sizes.sum())
    fig = new_figure(mpl, (8.0, 4.2))
    ax = fig.subplots()
    style_axes(ax)
    ax.grid(False, axis="x")
    rank = np.arange(1, K + 1)
    ax.bar(rank, sizes, width=0.8 if K <= 60 else 1.0, color=[colours[int(k)] for k in ids],
           edgecolor="white" if K <= 60 else "none", linewidth=0.5)
    if K <= 60:
        ax.plot(rank, sizes, "o", color=_LINE_COLOUR, ms=3, zorder=3)
    ax.set_yscale("log")
    ax.set_ylim(0.7, max(float(sizes.max()) * 1.8, 2.0))
    ax.set_xlim(0.3, K + 0.7)
    counts = [f"{int(np.sum(sizes == 1))} singletons"]
    for share in sorted(shares, reverse=True):
        line = share * n
        if line > 1:
            ax.axhline(line, color="#666666", lw=0.9, ls="--", zorder=2)
            ax.text(K + 0.6, line * 1.08, f"{100 * share:g}% ({line:,.0f})", ha="right",
                    va="bottom", fontsize=8, color="#444444")
        counts.append(f"{int(np.sum(sizes >= line))} with ≥ {100 * share:g}%")
    ax.xaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    ax.set_xlabel("cluster, largest first")
    ax.set_ylabel("size (log scale)")
    ax.set_title(f"Cluster size distribution (K = {K}, {n:,} {unit})\n{', '.join(counts)}",
                 fontweight="bold")
    return save_figure(fig, path)


def plot_theta_by_rank(theta: Any, sizes: Any, path: str | Path, *,
                       large_share: float = LARGE_CLUSTER_SHARE) -> Path:
    """Dispersion theta_j against rank j, averaged over the clusters weighted by size:
    Figure 11 of Meilă & Chen (2010).

    One line for all the clusters, and one each for the large and the small clusters
    (:func:`theta_by_rank`).  A larger ``theta_j`` means the rankings of a cluster agree
    more on their item at rank ``j``; a falling line says that first choices separate the
    clusters better than later ones.

    Parameters
    ----------
    theta : array-like of shape (n_clusters, n_ranks)
        Each cluster's dispersions, rank 1 first.
    sizes : array-like of shape (n_clusters,)
        Number of rankings in each cluster.
    path : str or Path
        Where to write the PNG.
    large_share : float, default=LARGE_CLUSTER_SHARE
        Where large clusters begin, as a share of all rankings.

    Returns
    -------
    path : Path
        The written file.

    Raises
    ------
    ImportError
        If matplotlib is missing (install ``dpclust[plot]``).
    ValueError
        If the shapes disagree or no cluster holds a ranking.

    References
    ----------
    Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models.
    UAI, Figure 11.
    """
    mpl = import_matplotlib()
    averages = theta_by_rank(theta, sizes, large_share=large_share)
    n_ranks = len(averages["all"])
    rank = np.arange(1, n_ranks + 1)
    fig = new_figure(mpl, (7.2, 4.2))
    ax = fig.subplots()
    style_axes(ax)
    pct = f"{100 * large_share:g}%"
    lines = (("all", "all clusters", _LINE_COLOUR, "-", "o"),
             ("large", f"large clusters (≥ {pct} of the data)", CLUSTER_PALETTE[1], "--", "s"),
             ("small", f"small clusters (< {pct})", CLUSTER_PALETTE[2], ":", "^"))
    for key, label, colour, style, marker in lines:
        if averages[key] is not None:
            ax.plot(rank, averages[key], ls=style, marker=marker, color=colour, lw=1.8,
                    ms=5, label=label)
    if n_ranks <= 20:
        ax.set_xticks(rank)
    else:
        ax.xaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("rank j")
    ax.set_ylabel(r"$\theta_j$, mean over clusters weighted by size")
    ax.legend(frameon=False, fontsize=9)
    ax.set_title(r"Dispersion $\theta_j$ by rank", fontweight="bold")
    return save_figure(fig, path)
