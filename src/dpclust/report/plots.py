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
from .figures.clusters import (_ellipse_params, plot_cluster_sizes, plot_clusters,
                               plot_similarity)
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


# --------------------------------------------------------------------------- figures


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
