"""MCMC samplers for DP mixtures, each an ``init`` + pure ``step`` pair (see ``base``)."""

from .base import MixtureModel, StepInfo, relabel
from .choice import SamplerChoice, choose_sampler, is_exact_for
from .coarsened import CoarsenedMixture
from .crp import GammaPrior, crp_log_prior, finite_dirichlet_log_prior, sample_alpha
from .explicit import ExplicitGibbs
from .fsd import FiniteSymmetricDirichlet
from .gibbs import CollapsedGibbs
from .mallows import BetaGibbs, SliceGibbs
from .registry import (AUTO_SMALL_SAMPLER, AUTO_SUBCLUSTER_FROM, INSTANTIATED, SAMPLERS,
                       describe_samplers, family_samplers, get_sampler, moves_clusters,
                       resolve_sampler_name, sampler_needs)
from .sams import GibbsSAMS
from .subcluster import SubclusterSplitMerge

__all__ = ["MixtureModel", "StepInfo", "relabel", "GammaPrior", "crp_log_prior",
           "finite_dirichlet_log_prior", "sample_alpha", "CollapsedGibbs", "ExplicitGibbs",
           "FiniteSymmetricDirichlet", "SubclusterSplitMerge", "GibbsSAMS", "SliceGibbs", "BetaGibbs",
           "CoarsenedMixture",
           "SAMPLERS", "INSTANTIATED", "family_samplers", "get_sampler", "sampler_needs",
           "resolve_sampler_name", "AUTO_SUBCLUSTER_FROM", "AUTO_SMALL_SAMPLER", "SamplerChoice",
           "choose_sampler",
           "is_exact_for", "describe_samplers", "moves_clusters"]
