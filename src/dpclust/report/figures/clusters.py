"""Figures of the point estimate: the clusters in two dimensions, their sizes, and the
posterior co-clustering matrix.

:func:`plot_clusters` draws dense data on their two features or first two principal
components, sparse counts on a truncated SVD of their tf-idf weights, and Gaussian clusters'
2-sigma contours projected onto the same plane.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ...utils.pca import flip_signs
from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import CLUSTER_PALETTE, OTHER_COLOUR, colours_by_size
from .common import (MAX_PLOT_POINTS, SUBSAMPLE_SEED, as_labels, clusters_by_size,
                     subsample_indices)

__all__ = ["plot_cluster_sizes", "plot_clusters", "plot_similarity"]


# --------------------------------------------------------------------------- projections


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
    W = flip_signs(vt[:2]).T
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
    svd = TruncatedSVD(n_components=2, random_state=SUBSAMPLE_SEED)
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


# ------------------------------------------------------------------ the steps of plot_clusters


def _check_points(X: Any, labels: Any):
    """``X`` (sparse, or dense 2-D floats) and ``labels`` (1-D ints) of the same length."""
    labels = as_labels(labels)
    if not sp.issparse(X):
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
    n = labels.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {n} entries")
    return X, labels


def _spread_by_cluster(coords: np.ndarray, sub_labels: np.ndarray, ids: np.ndarray) -> None:
    """One-dimensional data: set the y of each point to its cluster's size rank, with a
    little fixed jitter (in place)."""
    rank = {int(k): r for r, k in enumerate(ids)}
    jitter = np.random.default_rng(SUBSAMPLE_SEED).uniform(-0.3, 0.3, len(sub_labels))
    coords[:, 1] = np.array([rank[int(k)] for k in sub_labels]) + jitter


def _scatter_by_cluster(ax, coords: np.ndarray, sub_labels: np.ndarray, ids: np.ndarray,
                        colours: Mapping[int, str]) -> None:
    """The points, clusters beyond the palette first in grey, then the coloured ones
    largest first, so that small clusters are drawn on top."""
    n_coloured = min(len(ids), len(CLUSTER_PALETTE))
    m = len(sub_labels)
    size = 16 if m <= 1_000 else 8 if m <= 5_000 else 3
    alpha = 0.9 if m <= 2_000 else 0.6
    other = np.isin(sub_labels, ids[n_coloured:])
    if other.any():
        ax.scatter(coords[other, 0], coords[other, 1], s=size, c=OTHER_COLOUR, alpha=alpha,
                   linewidths=0)
    for k in ids[:n_coloured]:
        mask = sub_labels == k
        if mask.any():
            ax.scatter(coords[mask, 0], coords[mask, 1], s=size, c=colours[int(k)],
                       alpha=alpha, linewidths=0)


def _draw_contours(mpl, ax, params, affine, ids: np.ndarray,
                   colours: Mapping[int, str]) -> None:
    """Each Gaussian cluster's 2-sigma contour and mean, projected by ``affine``."""
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


def _cluster_legend(mpl, ax, ids: np.ndarray, sizes: np.ndarray, colours: Mapping[int, str],
                    contours: bool, title: str = "cluster (size)") -> None:
    """Legend right of the axes: each coloured cluster with its size, the rest as one
    entry, and the contour and mean markers when drawn."""
    n_coloured = min(len(ids), len(CLUSTER_PALETTE))
    handles = [
        mpl.Line2D([], [], marker="o", ls="", color=colours[int(k)], ms=7,
                   label=f"{int(k)}  ({int(s):,})")
        for k, s in zip(ids[:n_coloured], sizes[:n_coloured])
    ]
    if len(ids) > n_coloured:
        n_other = int(sizes[n_coloured:].sum())
        handles.append(mpl.Line2D([], [], marker="o", ls="", color=OTHER_COLOUR, ms=7,
                                  label=f"{len(ids) - n_coloured} more  ({n_other:,})"))
    if contours:
        handles.append(mpl.Line2D([], [], color="#444444", lw=1.5, label="2σ contour"))
        handles.append(mpl.Line2D([], [], marker="X", ls="", color="#444444", ms=7,
                                  label="cluster mean"))
    ax.legend(handles=handles, title=title, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9, title_fontsize=9)


# --------------------------------------------------------------------------- figures


def plot_clusters(
    X: Any,
    labels: Any,
    path: str | Path,
    cluster_params: Mapping[str, Any] | None = None,
    *,
    max_points: int = MAX_PLOT_POINTS,
    colours: Mapping[int, str] | None = None,
    title: str | None = None,
    legend_title: str = "cluster (size)",
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
    colours : mapping of int to str, optional
        Colour of each cluster (default: by size rank, :func:`colours_by_size`).
    title : str, optional
        Default ``"Clusters of the point estimate (K = ...)"``.
    legend_title : str, default="cluster (size)"

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
    X, labels = _check_points(X, labels)
    n = labels.shape[0]
    idx = subsample_indices(n, max_points)
    coords, axis_labels, affine = _project_2d(X, idx)
    sub_labels = labels[idx]
    ids, sizes = clusters_by_size(labels)
    colours = {**colours_by_size(ids, sizes), **(colours or {})}
    one_d = not sp.issparse(X) and X.shape[1] == 1
    if one_d:
        _spread_by_cluster(coords, sub_labels, ids)

    fig = new_figure(mpl, (8.4, 6.0))
    ax = fig.subplots()
    style_axes(ax)
    _scatter_by_cluster(ax, coords, sub_labels, ids, colours)
    params = _gaussian_params(cluster_params, X.shape[1]) if affine is not None else None
    if params is not None:
        _draw_contours(mpl, ax, params, affine, ids, colours)

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
    _cluster_legend(mpl, ax, ids, sizes, colours, contours=params is not None,
                    title=legend_title)
    title = title or f"Clusters of the point estimate (K = {len(ids)})"
    if len(idx) < n:
        title += f"\n{len(idx):,} of {n:,} points shown"
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
    labels = as_labels(labels)
    ids, sizes = clusters_by_size(labels)
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
    labels = as_labels(labels)
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


def plot_credible_ball(X: Any, labels: Any, bounds, path: str | Path, *,
                       max_points: int = MAX_PLOT_POINTS) -> Path:
    """The point estimate between the bounds of its credible ball, side by side.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or scipy.sparse matrix
        The data, projected as in :func:`plot_clusters`.
    labels : array-like of int, shape (n_samples,)
        The point estimate.
    bounds : sequence of (str, array-like of int)
        Panels to draw besides the estimate, each a title and a partition, e.g. the coarsest
        bound first and the finest last; the estimate goes in the middle.  Each bound's
        clusters take the colour of the estimate's cluster holding most of their points
        (:func:`~dpclust.report.figures.colours.fused_colours`), so what a bound joins or
        splits shows.
    path : str or Path
        Where to write the PNG.
    """
    from .colours import fused_colours

    mpl = import_matplotlib()
    X, labels = _check_points(X, labels)
    idx = subsample_indices(labels.shape[0], max_points)
    coords, axis_labels, _ = _project_2d(X, idx)
    ids, sizes = clusters_by_size(labels)
    est_colours = colours_by_size(ids, sizes)
    panels = [(title, as_labels(b)) for title, b in bounds]
    half = len(panels) // 2
    panels.insert(half, (f"Point estimate: {len(ids)} clusters", labels))
    fig = new_figure(mpl, (4.2 * len(panels), 4.4))
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharex=True, sharey=True))
    for ax, (title, part) in zip(axes, panels):
        style_axes(ax)
        K, J = int(labels.max()) + 1, int(part.max()) + 1
        table = np.bincount(labels * J + part, minlength=K * J).reshape(K, J)
        colours = (est_colours if part is labels
                   else fused_colours(np.bincount(labels, minlength=K), table))
        part_ids, _ = clusters_by_size(part)
        _scatter_by_cluster(ax, coords, part[idx], part_ids, colours)
        ax.set_title(title, fontsize=10, fontweight="bold")
        ax.set_xlabel(axis_labels[0])
    axes[0].set_ylabel(axis_labels[1])
    return save_figure(fig, path)
