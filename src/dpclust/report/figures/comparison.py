"""The model comparison: each model's mean held-out log predictive density per point, and
its paired difference to the best model, as dots with whiskers of two standard errors.

:func:`plot_model_comparison` draws the ``"models"`` rows of a comparison
(:meth:`dpclust.estimators.comparison.ModelComparison.to_dict`), best at the top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import LINE_COLOUR

__all__ = ["plot_model_comparison"]

#: the whiskers reach this many standard errors either side of the dot
WHISKER_SE = 2.0


def plot_model_comparison(models: Sequence[Mapping[str, Any]], path: str | Path, *,
                          noun: str = "point") -> Path:
    """Dot-and-whisker plot of a model comparison, in two panels.

    Left, each model's mean held-out log predictive density per point (``elpd``) with
    ``± 2 se``; right, its paired difference to the best model (``elpd_diff``) with
    ``± 2 se_diff``: the panel that says whether the models differ, since the paired
    standard error is much smaller than the two models' own (Vehtari, Gelman & Gabry 2017).

    Parameters
    ----------
    models : sequence of mappings
        One per model, best first: ``model``, ``elpd``, ``se``, ``elpd_diff``, ``se_diff``.
    path : str or Path
        Where to write the PNG.
    noun : str, default="point"
        What one data point is, for the axis labels ("ranking").

    Returns
    -------
    path : Path
    """
    if len(models) == 0:
        raise ValueError("a model comparison needs at least one model to draw")
    mpl = import_matplotlib()
    names = [str(m["model"]) for m in models]
    y = np.arange(len(names))[::-1]
    fig = new_figure(mpl, (8.4, 1.2 + 0.45 * len(names)))
    left, right = fig.subplots(1, 2, sharey=True)
    for ax, key, se_key, label in (
            (left, "elpd", "se", f"mean held-out log density (nats per {noun})"),
            (right, "elpd_diff", "se_diff", f"difference to the best (nats per {noun})")):
        style_axes(ax)
        x = np.array([np.nan if m[key] is None else float(m[key]) for m in models])
        err = np.array([0.0 if m[se_key] is None else WHISKER_SE * float(m[se_key])
                        for m in models])
        ax.errorbar(x, y, xerr=err, fmt="o", color=LINE_COLOUR, ecolor=LINE_COLOUR,
                    capsize=3, markersize=6)
        ax.set_xlabel(label)
        if key == "elpd_diff":
            ax.axvline(0.0, color="#999999", linewidth=0.8, linestyle="--")
    left.set_yticks(y)
    left.set_yticklabels(names)
    left.set_ylim(-0.6, len(names) - 0.4)
    return save_figure(fig, path)
