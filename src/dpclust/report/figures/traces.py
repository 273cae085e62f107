"""Figures of the chains: the MCMC trace and the posterior of the number of clusters."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.plotting import import_matplotlib, new_figure, save_figure, style_axes
from .colours import CLUSTER_PALETTE, LINE_COLOUR

__all__ = ["plot_k_posterior", "plot_trace"]

_BEST_COLOUR = "#d62728"
_BURN_IN_COLOUR = "#e6e6e6"
_TRACE_SERIES = (("log_joint", "log joint"), ("log_likelihood", "log-likelihood"),
                 ("n_clusters", "clusters K"))


def _robust_ylim(y: np.ndarray, keep_from: int):
    """Y limits that keep the post-burn-in wiggles visible when early values are far from
    them (below: a log joint climbing from a poor start; above: a log-likelihood falling
    from a start with many clusters).

    Returns ``(low, high, where)`` with ``where`` ``"below"``, ``"above"`` or ``"outside"``
    (both), or None when the full range is fine.
    """
    finite = y[np.isfinite(y)]
    kept = y[keep_from:]
    kept = kept[np.isfinite(kept)]
    if finite.size == 0 or kept.size < 2:
        return None
    lo, hi = float(kept.min()), float(kept.max())
    span = max(hi - lo, 1e-9 * max(1.0, abs(hi)))
    below = float(finite.min()) < lo - 4.0 * span
    above = float(finite.max()) > hi + 4.0 * span
    if not (below or above):
        return None
    low = lo - 1.5 * span if below else min(float(finite.min()), lo) - 0.2 * span
    high = hi + 1.5 * span if above else max(float(finite.max()), hi) + 0.2 * span
    return low, high, "outside" if below and above else ("below" if below else "above")


def _trace_panels(trace: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, y label)`` of each panel: the series of ``trace`` worth a panel, in order."""
    panels = []
    for key, ylabel in _TRACE_SERIES:
        if key in trace and trace[key] is not None and (
                key != "log_likelihood"
                or np.isfinite(np.asarray(trace[key], dtype=float)).any()):
            panels.append((key, ylabel))
    if "alpha" in trace and trace["alpha"] is not None:
        alpha = np.asarray(trace["alpha"], dtype=float)
        finite = alpha[np.isfinite(alpha)]
        if finite.size and np.ptp(finite) > 0:
            panels.append(("alpha", "alpha"))
    if not panels:
        raise ValueError("trace has none of 'log_joint', 'n_clusters', 'alpha'")
    return panels


def _draw_trace_panel(mpl, ax, key: str, ylabel: str, y: np.ndarray, x: np.ndarray,
                      colours: list[str], burn_in: int, keep_from: int) -> None:
    """One panel of :func:`plot_trace`: series ``key`` of every chain (rows of ``y``)."""
    n_chains, n_iter = y.shape
    style_axes(ax)
    y = y.copy()
    y[~np.isfinite(y)] = np.nan
    if burn_in > 0 and n_iter:
        ax.axvspan(x[0], min(burn_in, x[-1]), color=_BURN_IN_COLOUR, zorder=0, lw=0)
    width = 0.9 if n_chains == 1 else 0.7
    for c in range(n_chains):
        if key == "n_clusters":
            ax.plot(x, y[c], color=colours[c], lw=width, drawstyle="steps-post",
                    alpha=1.0 if n_chains == 1 else 0.8)
        else:
            ax.plot(x, y[c], color=colours[c], lw=width,
                    alpha=1.0 if n_chains == 1 else 0.8)
    if key == "n_clusters":
        ax.yaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    if key in ("log_joint", "log_likelihood"):
        # every chain's values before the kept part, then every chain's kept part
        ylim = _robust_ylim(np.concatenate([y[:, :keep_from].ravel(),
                                            y[:, keep_from:].ravel()]),
                            keep_from * n_chains)
        if ylim is not None:
            low, high, where = ylim
            ax.set_ylim(low, high)
            ax.text(0.01, 0.90 if where == "above" else 0.03,
                    f"earlier values lie {where} the axis", color="#666666", fontsize=8,
                    transform=ax.transAxes)
        if key == "log_joint" and np.isfinite(y).any():
            c_best, best = np.unravel_index(int(np.nanargmax(y)), y.shape)
            ax.plot(x[best], y[c_best, best], "o", color=_BEST_COLOUR, ms=5, zorder=3)


def _trace_legend(mpl, ax, series: Mapping[str, np.ndarray], colours: list[str],
                  burn_in: int) -> None:
    """The legend above the first panel: the chains, the best log joint, the burn-in."""
    n_chains = len(colours)
    handles = ([mpl.Line2D([], [], color=LINE_COLOUR, lw=1.2, label="sampler state")]
               if n_chains == 1 else
               [mpl.Line2D([], [], color=colours[c], lw=1.2, label=f"chain {c}")
                for c in range(n_chains)])
    if "log_joint" in series and np.isfinite(series["log_joint"]).any():
        handles.append(mpl.Line2D([], [], marker="o", ls="", color=_BEST_COLOUR, ms=5,
                                  label="best log joint"))
    if burn_in > 0:
        handles.append(mpl.Patch(color=_BURN_IN_COLOUR, label=f"burn-in ({burn_in:,} iterations)"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3,
              frameon=False, fontsize=9)


def plot_trace(trace: Mapping[str, Any], burn_in: int, path: str | Path) -> Path:
    """Plot the MCMC trace: log joint, log-likelihood and number of clusters (and alpha if
    it varies).

    Parameters
    ----------
    trace : mapping of str to array of shape (n_iter,) or (n_chains, n_iter)
        One entry per iteration (of each chain: the chains are overlaid, one colour
        each).  Uses ``"log_joint"``, ``"log_likelihood"``, ``"n_clusters"`` and ``"alpha"``
        where present
        (alpha gets a panel only if it varies), and ``"iteration"`` as the x values if
        present (else ``0 .. n_iter - 1``).
    burn_in : int
        Number of initial iterations discarded as burn-in; shaded on every panel.
    path : str or Path
        Where to write the PNG.

    Returns
    -------
    path : Path
        The written file.

    Raises
    ------
    ImportError
        If matplotlib is missing (install ``dpclust[plot]``).
    ValueError
        If the trace has none of the plotted series, or series of different lengths.
    """
    mpl = import_matplotlib()
    panels = _trace_panels(trace)
    series = {key: np.atleast_2d(np.asarray(trace[key], dtype=float)) for key, _ in panels}
    n_chains, n_iter = next(iter(series.values())).shape
    if any(v.shape != (n_chains, n_iter) for v in series.values()):
        raise ValueError("trace arrays must all have the same length")
    colours = ([LINE_COLOUR] if n_chains == 1
               else [CLUSTER_PALETTE[c % len(CLUSTER_PALETTE)] for c in range(n_chains)])
    if "iteration" in trace and len(trace["iteration"]) == n_iter:
        x = np.asarray(trace["iteration"], dtype=float)
    else:
        x = np.arange(n_iter, dtype=float)
    burn_in = max(int(burn_in or 0), 0)
    keep_from = int(np.searchsorted(x, burn_in)) if burn_in > 0 else n_iter // 2

    fig = new_figure(mpl, (8.0, 1.0 + 2.1 * len(panels)))
    axes = np.atleast_1d(fig.subplots(len(panels), 1, sharex=True))
    for ax, (key, ylabel) in zip(axes, panels):
        _draw_trace_panel(mpl, ax, key, ylabel, series[key], x, colours, burn_in, keep_from)
    _trace_legend(mpl, axes[0], series, colours, burn_in)
    axes[-1].set_xlabel("iteration")
    if n_iter:
        axes[-1].set_xlim(x[0], x[-1] if x[-1] > x[0] else x[0] + 1)
    fig.suptitle("MCMC trace", fontweight="bold")
    return save_figure(fig, path)


def plot_k_posterior(n_clusters, n_large_clusters, path: str | Path, *,
                     large_share: float = 0.01) -> Path:
    """Bar chart of the posterior of the number of clusters over the kept draws: all the
    clusters, and only those with at least ``large_share`` of the points.

    Parameters
    ----------
    n_clusters, n_large_clusters : array-like of int
        Per kept draw (of every chain).
    path : str or Path
        Where to write the PNG.
    """
    mpl = import_matplotlib()
    k_all = np.asarray(n_clusters, dtype=np.int64).ravel()
    k_large = np.asarray(n_large_clusters, dtype=np.int64).ravel()
    if k_all.size == 0:
        raise ValueError("no kept draws")
    lo = int(min(k_all.min(), k_large.min()))
    hi = int(max(k_all.max(), k_large.max()))
    ks = np.arange(lo, hi + 1)
    p_all = np.array([(k_all == k).mean() for k in ks])
    p_large = np.array([(k_large == k).mean() for k in ks])
    fig = new_figure(mpl, (max(5.0, min(12.0, 0.35 * len(ks) + 3.0)), 3.2))
    ax = fig.subplots()
    style_axes(ax)
    w = 0.4
    ax.bar(ks - w / 2, p_all, width=w, color=LINE_COLOUR, label="all clusters")
    ax.bar(ks + w / 2, p_large, width=w, color=CLUSTER_PALETTE[1],
           label=f"clusters with ≥ {large_share:.0%} of the points")
    ax.set_xlabel("number of clusters K")
    ax.set_ylabel("posterior probability")
    ax.xaxis.set_major_locator(mpl.MaxNLocator(integer=True))
    ax.legend(frameon=False, fontsize=9)
    fig.suptitle("Posterior of the number of clusters", fontweight="bold")
    return save_figure(fig, path)
