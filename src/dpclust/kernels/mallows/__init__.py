"""Numba kernels of the samplers for DP mixtures of Generalized Mallows models.

Two kinds of loop, as in Meilă & Chen (2010), Figures 1 and 5:

* the assignment sweep over the rankings (``slice_gibbs_sweep``, ``beta_gibbs_sweep``): each
  ranking's codes against each cluster's central ranking come from rank look-ups in
  O(t²), so the work per ranking and cluster never grows with the number of items;
* the cluster update (``update_clusters``): ``T_Gibbs`` rounds of sigma | theta (the
  stagewise draw, alone or as a Metropolis-Hastings proposal) and theta | sigma (slice
  sampling, or the Beta approximation).

Cluster slots: a slot ``c`` is in use when ``counts[c] > 0``; the sweeps return early, before
a ranking's draw, when no slot is free (the caller grows the arrays and calls again), so a
draw is never discarded.

The model's own compiled operations (the codes of a ranking against a central ranking,
theta's densities, integrals and draws, the stagewise draw of a central ranking), which the
family uses too, are :mod:`.model`.  The samplers' loops, one module per part of an
iteration: :mod:`.scoring` (a ranking's log weights
for the clusters, shared by both sweeps), :mod:`.slice_gibbs` and :mod:`.beta_gibbs` (the
sweeps), :mod:`.cluster_update` (sigma and theta of every cluster), :mod:`.split_merge` and
:mod:`.birth_death` (the moves on whole clusters).  A call from one module's kernel into
another's compiles as a call within one module would: the split costs no speed.
"""

from __future__ import annotations

from .beta_gibbs import beta_gibbs_sweep, cluster_code_stats, sample_sigma_n1
from .birth_death import central_proposal, component_scores, theta_proposal
from .cluster_update import (SIGMA_MH, SIGMA_STAGEWISE, THETA_BETA, THETA_SLICE, beta_theta,
                             update_clusters)
from .scoring import instantiated_log_likelihood
from .slice_gibbs import score_table, slice_gibbs_sweep
from .split_merge import (allocate_sides, draw_thetas, log_marginal_given_sigma,
                          side_code_stats, sigma_proposal, theta_modes)

__all__ = ["SIGMA_MH", "SIGMA_STAGEWISE", "THETA_BETA", "THETA_SLICE", "allocate_sides",
           "beta_gibbs_sweep", "beta_theta", "central_proposal", "cluster_code_stats",
           "component_scores", "draw_thetas", "instantiated_log_likelihood",
           "log_marginal_given_sigma", "sample_sigma_n1", "score_table", "side_code_stats",
           "sigma_proposal", "slice_gibbs_sweep", "theta_modes", "theta_proposal",
           "update_clusters"]
