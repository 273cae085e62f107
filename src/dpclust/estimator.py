"""The old home of the estimator, now split into the chain runner (:mod:`dpclust.chains`)
and the estimators (:mod:`dpclust.estimators`); the names other code imported from here
stay importable from here."""

from .utils.safe_io import data_fingerprint
from .priors import GammaPrior
from .chains.checkpoint import (checkpoint_iteration, checkpoint_seconds, load_checkpoint,
                                save_checkpoint)
from .chains.runner import ChainEstimator as _ChainEstimator
from .chains.trace import Trace, reservoir_add as _reservoir_add, resolve_max_draws as _max_draws
from .estimators.dp_mixture import DPMixture

__all__ = ["DPMixture", "GammaPrior", "Trace", "save_checkpoint", "load_checkpoint",
           "data_fingerprint", "checkpoint_iteration", "checkpoint_seconds"]
