"""The report's figures under their first import path.

The figures live in :mod:`dpclust.report.figures`, one module per section (colours, traces,
clusters, ddCRP, rankings, coarsening); this module re-exports them, with the plotting
helpers and the extra's install hint, so that ``from dpclust.report.plots import ...`` and
``dpclust.report.plots.<name>`` keep working.  It also keeps the private helpers
:func:`_ellipse_params`, :func:`_subsample_indices` and :func:`_table_numbers` that the
tests check against naive formulas.
"""

from __future__ import annotations

# html.py and the tests reach these through this module (plots.import_matplotlib, ...)
from ..utils.plotting import (DPI, PLOT_INSTALL_HINT, import_matplotlib,  # noqa: F401
                              new_figure, save_figure, style_axes)
from .figures import (CLUSTER_PALETTE, FIGURE2_DECAYS, LARGE_CLUSTER_SHARE, MAX_PLOT_POINTS,
                      OTHER_COLOUR, cluster_colours, colours_by_size, fused_colours,
                      plot_calibration,
                      plot_cluster_size_distribution, plot_cluster_sizes, plot_clusters,
                      plot_credible_ball,
                      plot_k_posterior, plot_model_comparison, plot_prior_draws,
                      plot_profiles, plot_similarity, table_matrix,
                      plot_tables_by_position, plot_theta_by_rank, plot_trace, theta_by_rank)
from .figures.clusters import _ellipse_params  # noqa: F401
from .figures.common import subsample_indices as _subsample_indices  # noqa: F401
from .figures.ddcrp import _table_numbers  # noqa: F401

__all__ = [
    "CLUSTER_PALETTE",
    "FIGURE2_DECAYS",
    "LARGE_CLUSTER_SHARE",
    "MAX_PLOT_POINTS",
    "OTHER_COLOUR",
    "PLOT_INSTALL_HINT",
    "cluster_colours",
    "colours_by_size",
    "fused_colours",
    "plot_calibration",
    "plot_cluster_size_distribution",
    "plot_cluster_sizes",
    "plot_clusters",
    "plot_credible_ball",
    "plot_prior_draws",
    "plot_profiles",
    "plot_similarity",
    "plot_tables_by_position",
    "plot_theta_by_rank",
    "plot_trace",
    "plot_k_posterior",
    "plot_model_comparison",
    "table_matrix",
    "theta_by_rank",
]
