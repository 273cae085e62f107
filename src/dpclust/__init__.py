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

import importlib

from ._version import __version__

#: the public names, each loaded from its module on first use (PEP 562), so that ``import
#: dpclust`` is quick and a command that needs one part does not load the others
_LAZY = {"DPMixture": "estimators", "DDCRPMixture": "estimators",
         "compare_models": "estimators", "ModelComparison": "estimators",
         "GammaPrior": "priors", "BetaPrior": "priors", "DirichletProcess": "priors", "PitmanYor": "priors",
         "MixtureOfFiniteMixtures": "priors", "FiniteDirichlet": "priors",
         "NormalInverseWishart": "families", "DirichletMultinomial": "families"}
_SUBMODULES = frozenset({
    "calibration", "chains", "cli", "datasets", "ddcrp", "diagnostics", "distributed",
    "estimators", "exact", "families", "fusion", "io", "kernels", "metrics", "partitions",
    "priors", "rankings", "report", "samplers", "tables", "utils", "validation"})

__all__ = ["BetaPrior", "DDCRPMixture", "DPMixture", "DirichletMultinomial", "DirichletProcess",
           "FiniteDirichlet", "GammaPrior", "MixtureOfFiniteMixtures", "ModelComparison",
           "NormalInverseWishart", "PitmanYor", "__version__", "compare_models"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'dpclust' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
