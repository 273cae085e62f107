"""The Chinese-restaurant-process helpers, now in :mod:`dpclust.priors` (the Dirichlet
process is one partition prior among several); kept here so that existing imports work."""

from ..priors import (GammaPrior, crp_log_prior, finite_dirichlet_log_prior,  # noqa: F401
                      resolve_alpha, sample_alpha)
