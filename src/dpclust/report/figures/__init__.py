"""Figures for a fitted Dirichlet-process mixture, one module per section of the report.

- :mod:`~.colours`: the palette, and each cluster's colour by size rank;
- :mod:`~.traces`: the MCMC trace and the posterior of the number of clusters;
- :mod:`~.clusters`: the clusters in two dimensions, their sizes, the co-clustering matrix;
- :mod:`~.ddcrp`: the distance dependent CRP's tables against position and prior draws;
- :mod:`~.rankings`: a mixture of rankings' size distribution and dispersions by rank;
- :mod:`~.profiles`: a table's clusters column by column (PReMiuM's profile plots);
- :mod:`~.coarsening`: the calibration of a coarsened posterior (fit against complexity);
- :mod:`~.comparison`: models compared by held-out log predictive density.

Each ``plot_*`` function draws one figure, writes it as a PNG and returns the path, so the
report, the benchmarks and later models can all reuse them (the ddCRP figures return the
Figure instead: see :mod:`~.ddcrp`).

matplotlib is an optional dependency (``pip install dpclust[plot]``).  It is imported only
when a figure is drawn, by :func:`~dpclust.utils.plotting.import_matplotlib`, never when
:mod:`dpclust.report` is imported.  Figures are built with the object-oriented API
(:class:`matplotlib.figure.Figure` on an explicit Agg canvas) rather than
:mod:`matplotlib.pyplot`: that renders headless without touching the process-wide backend (a
notebook user keeps their inline backend), and no figure is registered with pyplot, so there
is nothing left open to close after saving.
"""

from .clusters import plot_cluster_sizes, plot_clusters, plot_credible_ball, plot_similarity
from .coarsening import plot_calibration
from .comparison import plot_model_comparison
from .colours import (CLUSTER_PALETTE, OTHER_COLOUR, cluster_colours, colours_by_size,
                      fused_colours)
from .common import MAX_PLOT_POINTS
from .ddcrp import FIGURE2_DECAYS, plot_prior_draws, plot_tables_by_position
from .profiles import plot_profiles, table_matrix
from .rankings import (LARGE_CLUSTER_SHARE, plot_cluster_size_distribution, plot_theta_by_rank,
                       theta_by_rank)
from .traces import plot_k_posterior, plot_trace

__all__ = [
    "plot_profiles",
    "table_matrix",
    "CLUSTER_PALETTE",
    "FIGURE2_DECAYS",
    "LARGE_CLUSTER_SHARE",
    "MAX_PLOT_POINTS",
    "OTHER_COLOUR",
    "cluster_colours",
    "colours_by_size",
    "fused_colours",
    "plot_model_comparison",
    "plot_calibration",
    "plot_cluster_size_distribution",
    "plot_cluster_sizes",
    "plot_clusters",
    "plot_credible_ball",
    "plot_k_posterior",
    "plot_prior_draws",
    "plot_similarity",
    "plot_tables_by_position",
    "plot_theta_by_rank",
    "plot_trace",
    "theta_by_rank",
]
