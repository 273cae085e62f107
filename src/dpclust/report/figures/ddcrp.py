"""Figures of the distance dependent CRP: tables against position, and draws from the prior.

Unlike the other figures, :func:`plot_tables_by_position` and :func:`plot_prior_draws`
return the :class:`~matplotlib.figure.Figure` (writing the PNG too when given a ``path``),
and the first draws into given axes, so that they compose into panels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.plotting import DPI, import_matplotlib, new_figure, style_axes
from .colours import CLUSTER_PALETTE, LINE_COLOUR, OTHER_COLOUR
from .common import MAX_PLOT_POINTS, as_labels, subsample_indices

__all__ = ["FIGURE2_DECAYS", "plot_prior_draws", "plot_tables_by_position"]

FIGURE2_DECAYS = ("constant", "window:30", "exponential:10", "logistic:30:2")
"""Decays of :func:`plot_prior_draws` by default: the paper's four panels."""


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


def _position_axis(positions: Any, n: int, position_label: str | None):
    """The x of each customer (numbers or datetimes) and the x axis label."""
    if positions is None:
        return np.arange(n), position_label or "customer"
    x = np.asarray(positions)
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"positions must have shape ({n},) like labels, got {x.shape}")
    if x.dtype.kind not in "biufM":
        try:
            x = x.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("positions must be numbers or datetimes") from None
    return x, position_label or "position"


def _point_colours(table: np.ndarray, labels: np.ndarray, idx: np.ndarray,
                   colours: Mapping[int, str] | None):
    """Colour of each drawn customer: by label from ``colours``, else the palette in turn
    by table number."""
    if colours is None:
        palette = np.array(CLUSTER_PALETTE)
        return palette[table[idx] % len(palette)]
    return [colours.get(int(k), OTHER_COLOUR) for k in labels[idx]]


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
        Colour of each label, for example :func:`~.colours.cluster_colours` to match the other
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
    labels = as_labels(labels)
    n = labels.shape[0]
    x, position_label = _position_axis(positions, n, position_label)
    table = _table_numbers(x, labels) if n else np.zeros(0, dtype=np.int64)
    n_tables = int(table.max()) + 1 if n else 0
    idx = subsample_indices(n, max_points)
    point_colours = _point_colours(table, labels, idx, colours)

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


def _draw_decay_inset(ax, decay, labels: np.ndarray, max_distance: float) -> None:
    """The decay ``f(d)`` for ``d`` in ``[0, max_distance]`` in the upper left of ``ax``,
    above the customers of ``labels`` (one per position ``0 .. n - 1``)."""
    d = np.linspace(0.0, float(max_distance), 601)
    box = (0.07, 0.56, 0.34, 0.32)  # the inset, in axes fractions
    _clear_upper_left(ax, np.arange(len(labels)), labels, right=box[0] + box[2],
                      bottom=box[1])
    inset = ax.inset_axes(list(box))
    inset.plot(d, decay(d), color=LINE_COLOUR, lw=1.3)
    inset.set_xlim(0.0, float(max_distance))
    inset.set_ylim(-0.05, 1.1)
    inset.set_xlabel("distance", fontsize=7, labelpad=1)
    inset.set_ylabel("f(d)", fontsize=7, labelpad=1)
    inset.tick_params(labelsize=6, length=2, pad=1)
    inset.patch.set_alpha(0.9)


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
    from ...utils.checks import check_int, check_random_state
    from ...ddcrp.decay import parse_decay
    from ...ddcrp.prior import sample_prior

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
    for ax, decay in zip(axes, decays):
        labels = sample_prior(decay, alpha=alpha, positions=positions, sequential=True,
                              random_state=rng).labels[0]
        n_tables = int(labels.max()) + 1
        plot_tables_by_position(None, labels, ax=ax, title=f"{decay.title}\n"
                                f"{n_tables} tables")
        ax.title.set_fontsize(10)
        _draw_decay_inset(ax, decay, labels, max_distance)
    for ax in axes[len(decays):]:
        ax.set_visible(False)
    fig.suptitle(f"Draws from sequential distance dependent CRPs ({n:,} customers, "
                 f"α = {alpha:g})", fontweight="bold")
    if path is not None:
        _write_png(fig, path)
    return fig
