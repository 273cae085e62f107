"""Colours of the report's figures and tables.

Colours follow the size rank of a cluster, not its label: the largest cluster gets the first
colour of :data:`CLUSTER_PALETTE`, and clusters beyond the palette are drawn in
:data:`OTHER_COLOUR`.  :func:`cluster_colours` gives the same mapping to the HTML report.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import as_labels

__all__ = ["CLUSTER_PALETTE", "LINE_COLOUR", "OTHER_COLOUR", "cluster_colours",
           "colours_by_size", "fused_colours"]

# matplotlib's tab20 without its two greys (grey means "other cluster" here), dark shades
# first so that the ten largest clusters get ten clearly different hues.
CLUSTER_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
)  # fmt: skip
"""Qualitative colours for the largest clusters, in size-rank order (tab20 minus greys)."""

OTHER_COLOUR = "#a0a0a0"
"""Colour of every cluster beyond the ``len(CLUSTER_PALETTE)`` largest."""

LINE_COLOUR = "#1f4e79"
"""Colour of a single line: one chain's trace, a decay, an average."""


def colours_by_size(cluster_ids: Any, sizes: Any) -> dict[int, str]:
    """Colour of each cluster from its size rank.

    Parameters
    ----------
    cluster_ids : array-like of int, shape (n_clusters,)
        Cluster labels.
    sizes : array-like of int, shape (n_clusters,)
        Number of points in each cluster.

    Returns
    -------
    colours : dict of int to str
        Hex colour per label: :data:`CLUSTER_PALETTE` in order of decreasing size (ties by
        label), :data:`OTHER_COLOUR` beyond the palette.
    """
    cluster_ids = np.asarray(cluster_ids, dtype=np.int64).ravel()
    sizes = np.asarray(sizes).ravel()
    order = np.lexsort((cluster_ids, -sizes))
    colours = {}
    for rank, i in enumerate(order):
        colours[int(cluster_ids[i])] = (
            CLUSTER_PALETTE[rank] if rank < len(CLUSTER_PALETTE) else OTHER_COLOUR
        )
    return colours


def cluster_colours(labels: Any) -> dict[int, str]:
    """Colour of each cluster of a partition, by size rank (see :func:`colours_by_size`).

    Parameters
    ----------
    labels : array-like of int, shape (n_samples,)
        Cluster label of each point.

    Returns
    -------
    colours : dict of int to str
        Hex colour per label present in ``labels``.
    """
    ids, counts = np.unique(as_labels(labels), return_counts=True)
    return colours_by_size(ids, counts)


def fused_colours(raw_sizes: Any, crosstab: Any) -> dict[int, str]:
    """Colour of each fused cluster: that of the largest raw cluster it holds (raw
    clusters coloured by :func:`colours_by_size`), so that the raw clusters a fused
    cluster joins are seen in its colour; a fused cluster whose raw colour another,
    larger fused cluster took gets the first palette colour that no raw cluster has (or,
    past those, that no fused cluster has yet).

    Parameters
    ----------
    raw_sizes : array-like of int, shape (n_raw,)
        Points per raw cluster (label = index).
    crosstab : array-like of int, shape (n_raw, n_fused)
        Points of raw cluster ``k`` in fused cluster ``f``.

    Returns
    -------
    colours : dict of int to str
    """
    raw_sizes = np.asarray(raw_sizes).ravel()
    table = np.asarray(crosstab)
    raw = colours_by_size(np.arange(len(raw_sizes)), raw_sizes)
    fused_sizes = table.sum(axis=0)
    used: set[str] = set()
    out = {}
    for f in np.lexsort((np.arange(len(fused_sizes)), -fused_sizes)):
        colour = raw[int(np.argmax(table[:, f]))]
        if colour in used or colour == OTHER_COLOUR:
            # a colour no raw cluster has, else one no fused cluster has yet
            free = ([c for c in CLUSTER_PALETTE if c not in used and c not in raw.values()]
                    or [c for c in CLUSTER_PALETTE if c not in used])
            colour = free[0] if free else OTHER_COLOUR
        used.add(colour)
        out[int(f)] = colour
    return out
