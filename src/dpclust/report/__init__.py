"""Reports and figures for a fitted Dirichlet-process mixture.

:func:`write_report` writes a self-contained ``report.html`` (figures embedded as base64
PNGs, inline CSS, no network resources) plus the PNG files next to it; ``dpclust fit``
calls it after every fit; :func:`write_comparison_report` writes the page of ``dpclust
compare`` (models compared by held-out log predictive density).  The figures are also available one by one from
:mod:`dpclust.report.figures` for benchmarks and notebooks (and, under their first
import path, from :mod:`dpclust.report.plots`).

matplotlib is optional (``pip install dpclust[plot]``) and imported only when a figure is
drawn; without it :func:`write_report` still writes the tables.

Examples
--------
>>> from dpclust.report import write_report
>>> paths = write_report("out", summary, trace, X, labels)  # doctest: +SKIP
>>> paths["report"]  # doctest: +SKIP
PosixPath('out/report.html')
"""

from .html import render_html, write_report
from .comparison import render_comparison_html, write_comparison_report
from .figures import (
    cluster_colours,
    plot_cluster_size_distribution,
    plot_cluster_sizes,
    plot_clusters,
    plot_prior_draws,
    plot_similarity,
    plot_tables_by_position,
    plot_theta_by_rank,
    plot_trace,
    theta_by_rank,
)

__all__ = [
    "cluster_colours",
    "plot_cluster_size_distribution",
    "plot_cluster_sizes",
    "plot_clusters",
    "plot_prior_draws",
    "plot_similarity",
    "plot_tables_by_position",
    "plot_theta_by_rank",
    "plot_trace",
    "render_comparison_html",
    "render_html",
    "theta_by_rank",
    "write_comparison_report",
    "write_report",
]
