"""Profile plots of a table's clusters (the view of PReMiuM, Liverani et al. 2015, §4):
for the columns that separate the clusters most, one small panel each, the clusters
side by side, largest first.

Real and count columns: each cluster's mean with its interquartile range, over a grey
band and a dashed line for all the rows' quartiles and mean.  Yes/no columns: each
cluster's share of the second level (yes), the dashed line at all the rows'.  Category
columns: each cluster's level shares stacked, all the rows' first.  Drawn from the run
summary's ``profiles`` block (:func:`dpclust.tables.profiles.as_summary`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import OTHER_COLOUR, colours_by_size

__all__ = ["plot_profiles"]

#: levels drawn in their own colour in a category panel (the others grey)
_LEVEL_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
                  "#da8bc3", "#8c8c8c")


def plot_profiles(block: dict, sizes: Any, path: str | Path, *, max_columns: int = 8,
                  max_clusters: int = 12) -> Path:
    """Draw the profile plots of a summary's ``profiles`` block and write them as a PNG.

    Parameters
    ----------
    block : dict
        The summary's ``profiles`` block.
    sizes : array-like of int, shape (n_clusters,)
        Rows per cluster (the colours and the order, largest first).
    path : str or Path
        Where to write the PNG.
    max_columns, max_clusters : int
        The most separating columns and the largest clusters drawn.

    Returns
    -------
    path : Path
    """
    mpl = import_matplotlib()
    sizes = np.asarray(sizes, dtype=np.int64)
    ids = np.arange(len(sizes))
    colours = colours_by_size(ids, sizes)
    order = [int(k) for k in np.lexsort((ids, -sizes)) if sizes[k] > 0][:max_clusters]
    columns = sorted((c for c in block.get("columns") or () if c.get("per_cluster", True)),
                     key=lambda c: -(c.get("separation") or 0.0))[:max_columns]
    if not columns or not order:
        raise ValueError("the profiles block has no column with per-cluster statistics")
    n_cols = min(4, len(columns))
    n_rows = -(-len(columns) // n_cols)
    fig = new_figure(mpl, (3.1 * n_cols, 2.5 * n_rows + 0.4))
    axes = np.atleast_1d(fig.subplots(n_rows, n_cols, squeeze=False)).ravel()
    x = np.arange(len(order))
    for ax, c in zip(axes, columns):
        style_axes(ax)
        if "shares" in c:
            _shares_panel(ax, c, order, colours)
        else:
            _numeric_panel(ax, c, order, colours)
        sep = c.get("separation")
        name = str(c["column"])
        name = name if len(name) <= 28 else name[:27] + "…"
        what = "V" if "shares" in c else "η"
        ax.set_title(f"{name}  ({what} {sep:.2f})" if sep is not None else name, fontsize=9)
        stacked = "shares" in c and len(c.get("levels") or ()) != 2
        labels = [str(k) for k in order]
        ax.set_xticks(np.arange(len(order) + 1) if stacked else x)
        ax.set_xticklabels(["all"] + labels if stacked else labels, fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
    for ax in axes[len(columns):]:
        ax.set_visible(False)
    fig.suptitle("Column profiles: clusters largest first (x: cluster)", fontsize=10)
    return save_figure(fig, path)


def _numeric_panel(ax, c: dict, order: list[int], colours: dict) -> None:
    whole = c.get("overall") or {}
    q = whole.get("quartiles") or [None] * 3
    if q[0] is not None and q[2] is not None:
        ax.axhspan(q[0], q[2], color="#e6e9ee", zorder=0)
    if whole.get("mean") is not None:
        ax.axhline(whole["mean"], color="#5c6b7a", linestyle="--", linewidth=1)
    for i, k in enumerate(order):
        mean, quart = c["mean"][k], c["quartiles"][k] or [None] * 3
        if mean is None:
            continue
        colour = colours.get(k, OTHER_COLOUR)
        if quart[0] is not None and quart[2] is not None:
            ax.vlines(i, quart[0], quart[2], color=colour, linewidth=3, alpha=0.55)
        ax.plot(i, mean, "o", color=colour, markersize=5, markeredgecolor="white")


def _shares_panel(ax, c: dict, order: list[int], colours: dict) -> None:
    levels = list(c.get("levels") or ())
    whole = c.get("overall") or {}
    if len(levels) == 2:
        p = [(c["shares"][k] or [0, 0])[1] or 0.0 for k in order]
        ax.bar(np.arange(len(order)), p, width=0.7, alpha=0.75,
               color=[colours.get(k, OTHER_COLOUR) for k in order])
        if (whole.get("shares") or [None, None])[1] is not None:
            ax.axhline(whole["shares"][1], color="#5c6b7a", linestyle="--", linewidth=1)
        ax.set_ylim(0, 1)
        ax.set_ylabel(f"share {levels[1]}"[:24], fontsize=7)
        return
    rows = [whole.get("shares") or []] + [c["shares"][k] or [] for k in order]
    shares = np.array([[v or 0.0 for v in r] if r else [0.0] * len(levels) for r in rows])
    # the levels most common over all the rows get colours, in the legend's order
    top = np.argsort(-shares[0], kind="stable")[:len(_LEVEL_COLOURS) - 1]
    bottom = np.zeros(len(rows))
    for rank, j in enumerate(top):
        ax.bar(np.arange(len(rows)), shares[:, j], bottom=bottom, width=0.75,
               color=_LEVEL_COLOURS[rank], label=str(levels[j])[:14])
        bottom += shares[:, j]
    rest = 1.0 - bottom
    if np.any(rest > 0.01):  # more than the summary's rounding
        ax.bar(np.arange(len(rows)), rest, bottom=bottom, width=0.75, color="#d0d0d0",
               label="others")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
              handlelength=1.0)


def table_matrix(X) -> np.ndarray:
    """A table's rows as numbers for the clusters figure's projection: real columns and
    ``log(1 + count)`` standardised (a hole at the column's mean, 0), one column per level
    of a coded column (0/1, a hole all zeros), shape (n, n_numbers)."""
    parts = []
    for values in (X.real, np.log1p(X.count)):
        if values.shape[1]:
            sd = np.nanstd(values, axis=0)
            z = (values - np.nanmean(values, axis=0)) / np.where(sd > 0, sd, 1.0)
            parts.append(np.where(np.isnan(z), 0.0, z))
    for j, column in enumerate(X.schema.coded):
        code = X.code[:, j]
        parts.append((code[:, None] == np.arange(len(column.levels))[None, :]).astype(float))
    return np.hstack(parts) if parts else np.zeros((len(X), 0))
