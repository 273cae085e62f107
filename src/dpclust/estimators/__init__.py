"""The estimators: thin scikit-learn style facades over a model, a sampler and the chain
runner (:mod:`dpclust.chains`).

* :mod:`~dpclust.estimators.mixture` — what the mixture estimators share (prediction,
  density, sampling, saving);
* :mod:`~dpclust.estimators.dp_mixture` — :class:`DPMixture`;
* :mod:`~dpclust.estimators.ddcrp` — :class:`DDCRPMixture`, :class:`DDCRPLanguageModel`;
* :mod:`~dpclust.estimators.evidence` — marginal likelihoods of sequential ddCRP models and
  Bayes factors between decays;
* :mod:`~dpclust.estimators.comparison` — :func:`compare_models`: which model predicts
  held-out data better, by how many nats per point;
* :mod:`~dpclust.estimators.weights` — ``sample_weight``: the rows the model is fitted on
  (rows repeated, or their likelihoods raised to a power) and back to one value per row;
* :mod:`~dpclust.estimators.summary` — the run summary a fitted estimator gives (what the
  command line writes to ``summary.json`` and the report reads).
"""

from .dp_mixture import DPMixture
from .ddcrp import DDCRPLanguageModel, DDCRPMixture
from .comparison import ModelComparison, compare_models

__all__ = ["DDCRPLanguageModel", "DDCRPMixture", "DPMixture", "ModelComparison",
           "compare_models"]
