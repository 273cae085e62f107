"""Plotting helpers shared by every figure of dpclust (the report's, the calibration's):
matplotlib imported lazily with a message naming the ``plot`` extra, figures on their own Agg
canvas (no pyplot state), one resolution and style."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

DPI = 110
"""Resolution of every PNG written by this module."""

PLOT_INSTALL_HINT = "pip install dpclust[plot]"
"""The command that installs the plotting extra."""


def import_matplotlib() -> SimpleNamespace:
    """Import the parts of matplotlib the figures need, lazily.

    Returns
    -------
    mpl : types.SimpleNamespace
        ``Figure``, ``FigureCanvasAgg``, ``Ellipse``, ``Patch``, ``Line2D``,
        ``withStroke`` and ``MaxNLocator``.

    Raises
    ------
    ImportError
        If matplotlib is not installed; the message names the ``plot`` extra.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib.patches import Ellipse, Patch
        from matplotlib.patheffects import withStroke
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        raise ImportError(
            "dpclust's figures need matplotlib, an optional dependency; "
            f"install it with: {PLOT_INSTALL_HINT}"
        ) from exc
    return SimpleNamespace(
        Figure=Figure,
        FigureCanvasAgg=FigureCanvasAgg,
        Ellipse=Ellipse,
        Patch=Patch,
        Line2D=Line2D,
        withStroke=withStroke,
        MaxNLocator=MaxNLocator,
    )


def new_figure(mpl: SimpleNamespace, figsize: tuple[float, float]):
    """A figure on its own Agg canvas, with constrained layout."""
    fig = mpl.Figure(figsize=figsize, dpi=DPI, layout="constrained")
    mpl.FigureCanvasAgg(fig)
    return fig


def style_axes(ax) -> None:
    """Light grid, no top/right spines."""
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` (parent folders created) and free it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png", facecolor="white")
    fig.clear()
    return path
