"""The calibration of a coarsened posterior: fit against complexity over the grid of
``alpha_c`` (Miller & Dunson 2019, section 4.2 and figure 5), the elbow marked.

:func:`plot_calibration` draws the ``"calibration"`` block of the run summary's
``"coarsening"`` (:func:`dpclust.estimators.coarsening.calibrate` makes it): one point per
``alpha_c``, labelled with its value, joined in the order of ``alpha_c``, and the chosen
value ringed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import LINE_COLOUR

__all__ = ["plot_calibration"]

_CHOSEN_COLOUR = "#d62728"


def plot_calibration(calibration: Mapping[str, Any], path: str | Path) -> Path:
    """Fit (mean log-likelihood per point) against complexity (expected clusters with at
    least 1 % of the points), one point per ``alpha_c``.

    Parameters
    ----------
    calibration : mapping
        ``"alpha_c"``, ``"fit"`` and ``"complexity"`` (sequences of one length, in order
        of ``alpha_c``) and ``"chosen"`` (the ``alpha_c`` picked); ``"zeta"`` and
        ``"n_iter"`` are used when present.
    path : str or Path
        Where to write the PNG.

    Returns
    -------
    path : Path

    Raises
    ------
    ValueError
        If the sequences are empty or of different lengths.
    """
    mpl = import_matplotlib()
    alpha_c = np.asarray(calibration["alpha_c"], dtype=float)
    fit = np.asarray(calibration["fit"], dtype=float)
    complexity = np.asarray(calibration["complexity"], dtype=float)
    if not (len(alpha_c) == len(fit) == len(complexity)) or len(alpha_c) == 0:
        raise ValueError("calibration needs alpha_c, fit and complexity of one length, got "
                         f"{len(alpha_c)}, {len(fit)} and {len(complexity)}")
    chosen = calibration.get("chosen")
    zeta = calibration.get("zeta")

    fig = new_figure(mpl, (7.6, 5.0))
    ax = fig.subplots()
    style_axes(ax)
    ax.plot(complexity, fit, "-", color=LINE_COLOUR, lw=1.2, alpha=0.6, zorder=1)
    ax.scatter(complexity, fit, s=36, color=LINE_COLOUR, zorder=2)
    halo = [mpl.withStroke(linewidth=3, foreground="white")]
    right = int(np.argmax(complexity))
    ring = (np.flatnonzero(np.isclose(alpha_c, float(chosen))) if chosen is not None
            else np.array([], dtype=int))
    for j, (x, y, a) in enumerate(zip(complexity, fit, alpha_c)):
        gap = 14 if j in ring else 10
        text = rf"$\alpha_c$ = {a:g}"
        if zeta is not None and j < len(zeta):
            text += rf", $\zeta$ = {float(zeta[j]):.2g}"
        # beside the point, left of the rightmost one so that it stays in the axes
        ax.annotate(text, (x, y), xytext=(-gap if j == right else gap, 0),
                    textcoords="offset points", fontsize=9, va="center",
                    ha="right" if j == right else "left", path_effects=halo)
    if ring.size:
        j = int(ring[0])
        ax.scatter([complexity[j]], [fit[j]], s=220, facecolors="none",
                   edgecolors=_CHOSEN_COLOUR, linewidths=2.0, zorder=3,
                   label=rf"chosen: $\alpha_c$ = {float(chosen):g} (the elbow)")
        ax.legend(loc="lower right", frameon=False, fontsize=9)
    ax.set_xlabel("complexity: expected clusters with ≥ 1 % of the points")
    ax.set_ylabel("fit: mean log-likelihood per point")
    ax.margins(x=0.12, y=0.12)
    title = "Calibration of the coarsening"
    if calibration.get("n_iter") is not None:
        runs = int(calibration["n_iter"])
        title += f"\n(short runs of {runs} iterations per " + r"$\alpha_c$)"
    ax.set_title(title, fontweight="bold")
    return save_figure(fig, path)
