"""The chain runner: what every MCMC estimator of dpclust shares.

* :mod:`~dpclust.chains.trace` — :class:`Trace`, each chain's resumable record
  (:class:`Snapshot`, :class:`Progress`) and the reservoir of kept draws;
* :mod:`~dpclust.chains.checkpoint` — the checkpoint file format;
* :mod:`~dpclust.chains.processes` — chains in parallel processes (``n_jobs``);
* :mod:`~dpclust.chains.runner` — :class:`ChainEstimator`: run, resume, checkpoints,
  progress, the point estimate and the convergence verdict.

The estimators of :mod:`dpclust.estimators` build on it.
"""

from .checkpoint import (CHECKPOINT_FORMAT, checkpoint_iteration, checkpoint_seconds,
                         load_checkpoint, save_checkpoint)
from .processes import ChainWorkers, available_cores
from .runner import ChainEstimator
from .trace import Progress, Snapshot, Trace

__all__ = ["CHECKPOINT_FORMAT", "ChainEstimator", "ChainWorkers", "Progress", "Snapshot",
           "Trace", "available_cores", "checkpoint_iteration", "checkpoint_seconds",
           "load_checkpoint", "save_checkpoint"]
