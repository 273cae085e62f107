"""dpclust: Bayesian nonparametric clustering with Dirichlet-process mixtures and MCMC.

The layout follows the architecture:

* :mod:`dpclust.families` — component families (likelihood + conjugate prior) behind one contract;
* :mod:`dpclust.priors` — priors on partitions (Dirichlet process, Pitman–Yor, mixture of
  finite mixtures, finite Dirichlet) behind one contract;
* :mod:`dpclust.samplers` — MCMC samplers, each an ``init`` + pure ``step``;
* :mod:`dpclust.chains` — the chain runner: traces, checkpoints, chains in processes;
* :mod:`dpclust.estimators` — :class:`DPMixture` and :class:`DDCRPMixture`, the
  scikit-learn style facades, and :func:`compare_models` (held-out log predictive density);
* :mod:`dpclust.partitions`, :mod:`dpclust.metrics` — point estimates and clustering metrics;
* :mod:`dpclust.io`, :mod:`dpclust.datasets` — loaders and bundled/generated data;
* :mod:`dpclust.report`, :mod:`dpclust.cli` — the HTML report and the ``dpclust`` command;
* :mod:`dpclust.exact`, :mod:`dpclust.calibration` — exact posteriors on tiny data and
  simulation-based calibration, for testing samplers.
"""

from ._version import __version__  # noqa: E402

from .families import DirichletMultinomial, NormalInverseWishart  # noqa: E402
from .priors import (DirichletProcess, FiniteDirichlet, GammaPrior,  # noqa: E402
                     MixtureOfFiniteMixtures, PitmanYor)
from .estimators import DDCRPMixture, DPMixture, ModelComparison, compare_models  # noqa: E402

__all__ = ["DPMixture", "DDCRPMixture", "compare_models", "ModelComparison", "GammaPrior", "NormalInverseWishart", "DirichletMultinomial",
           "DirichletProcess", "PitmanYor", "MixtureOfFiniteMixtures", "FiniteDirichlet",
           "__version__"]
