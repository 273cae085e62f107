"""Figures of a Generalized Mallows mixture of rankings: Figures 10 and 11 of Meilă & Chen
(2010), the cluster size distribution and the dispersion theta_j by rank."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...families.mallows import LARGE_CLUSTER_SHARE, theta_by_rank
from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import CLUSTER_PALETTE, LINE_COLOUR, colours_by_size
from .common import as_labels, clusters_by_size

__all__ = ["LARGE_CLUSTER_SHARE", "plot_cluster_size_distribution", "plot_theta_by_rank",
           "theta_by_rank"]

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
    labels = as_labels(labels)
    ids, sizes = clusters_by_size(labels)
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
        ax.plot(rank, sizes, "o", color=LINE_COLOUR, ms=3, zorder=3)
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
    lines = (("all", "all clusters", LINE_COLOUR, "-", "o"),
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
