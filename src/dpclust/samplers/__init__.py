"""MCMC samplers for DP mixtures, each an ``init`` + pure ``step`` pair (see ``base``)."""

from .base import MixtureModel, StepInfo, relabel
from .crp import GammaPrior, crp_log_prior, finite_dirichlet_log_prior, sample_alpha
from .explicit import ExplicitGibbs
from .fsd import FiniteSymmetricDirichlet
from .gibbs import CollapsedGibbs
from .sams import GibbsSAMS
from .subcluster import SubclusterSplitMerge

#: names accepted by ``DPMixture(sampler=...)`` and ``dpclust fit --sampler``
SAMPLERS = {
    "gibbs": CollapsedGibbs,
    "explicit": ExplicitGibbs,
    "fsd": FiniteSymmetricDirichlet,
    "subcluster": SubclusterSplitMerge,
    "gibbs+sams": GibbsSAMS,
}


def get_sampler(sampler):
    """A sampler object from a name in :data:`SAMPLERS` or a configured sampler instance."""
    if isinstance(sampler, str):
        key = sampler.lower()
        if key in SAMPLERS:
            return SAMPLERS[key]()
        raise ValueError(f"unknown sampler {sampler!r}: use one of {sorted(SAMPLERS)}")
    if hasattr(sampler, "init") and hasattr(sampler, "step"):
        return sampler
    raise ValueError(f"sampler must be a name {sorted(SAMPLERS)} or a sampler object,"
                     f" got {sampler!r}")


__all__ = ["MixtureModel", "StepInfo", "relabel", "GammaPrior", "crp_log_prior",
           "finite_dirichlet_log_prior", "sample_alpha", "CollapsedGibbs", "ExplicitGibbs",
           "FiniteSymmetricDirichlet", "SubclusterSplitMerge", "GibbsSAMS", "SAMPLERS", "get_sampler"]
