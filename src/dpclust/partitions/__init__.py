"""Summarising MCMC samples of partitions.

A Dirichlet-process mixture sampler returns *draws*: an integer array of shape
``(n_draws, n_samples)`` whose rows are partitions of the same ``n_samples`` points.  Labels
carry no meaning across draws (label switching), so everything here only looks at the
partition a row induces:

* :mod:`~dpclust.partitions.draws`: :func:`canonical_labels` (equal partitions get equal
  rows) and :func:`posterior_similarity`, the co-clustering matrix;
* :mod:`~dpclust.partitions.losses`: the losses between partitions (:class:`Loss`: VI and
  Binder with their weight ``a``, one minus the adjusted Rand index, normalised VI and
  information distance) and :func:`expected_loss`, from contingency tables without any
  ``n_samples x n_samples`` matrix;
* :mod:`~dpclust.partitions.search`: :func:`point_estimate`, the partition of least expected
  loss found by a SALSO-class search, and :func:`best_draw`, the best sampled partition;
* :mod:`~dpclust.partitions.ball`: :func:`credible_ball`, the partitions on the edge of the
  95 % credible ball around the estimate;
* :mod:`~dpclust.partitions.uncertainty`: :func:`point_certainty` and
  :func:`cluster_presence`, how surely each point and each cluster of the estimate stand;
* :mod:`~dpclust.partitions.relabel`: :func:`summarise_components`, the components of
  samplers that hold parameters matched to the estimate's clusters across draws (ECR),
  with credible intervals of their weights and parameters.
"""

from .ball import Bound, CredibleBall, credible_ball
from .draws import canonical_labels, first_minimum, posterior_similarity
from .losses import LOSSES, Loss, as_loss, expected_loss, pair_losses
from .relabel import Components, match_to_pivot, summarise_components
from .search import best_draw, point_estimate
from .uncertainty import cluster_presence, point_certainty

__all__ = ["canonical_labels", "posterior_similarity", "Loss", "LOSSES", "as_loss",
           "expected_loss", "pair_losses", "point_estimate", "best_draw", "credible_ball",
           "CredibleBall", "Bound", "point_certainty", "cluster_presence", "first_minimum",
           "Components", "match_to_pivot", "summarise_components"]
