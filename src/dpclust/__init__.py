"""dpclust: Bayesian nonparametric clustering with Dirichlet-process mixtures and MCMC.

The layout follows the architecture:

* :mod:`dpclust.families` — component families (likelihood + conjugate prior) behind one contract;
* :mod:`dpclust.priors` — priors on partitions (Dirichlet process, Pitman–Yor, mixture of
  finite mixtures, finite Dirichlet) behind one contract;
* :mod:`dpclust.samplers` — MCMC samplers, each an ``init`` + pure ``step``;
* :mod:`dpclust.estimator` — :class:`DPMixture`, the scikit-learn style facade;
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
from .estimator import DPMixture  # noqa: E402
from .ddcrp import DDCRPMixture  # noqa: E402

__all__ = ["DPMixture", "DDCRPMixture", "GammaPrior", "NormalInverseWishart", "DirichletMultinomial",
           "DirichletProcess", "PitmanYor", "MixtureOfFiniteMixtures", "FiniteDirichlet",
           "__version__"]
