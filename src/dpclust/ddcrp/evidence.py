"""The old home of :mod:`dpclust.estimators.evidence` (marginal likelihoods of sequential
ddCRP models, Bayes factors between decays); its names stay importable from here."""

from ..estimators.evidence import BayesFactor, Evidence, bayes_factor, log_evidence

__all__ = ["BayesFactor", "Evidence", "bayes_factor", "log_evidence"]
