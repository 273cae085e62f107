"""Coarsened posteriors (Miller & Dunson 2019): an allocation-free MH sampler of a finite
mixture whose likelihood is raised to ``zeta = alpha_c / (alpha_c + N)``."""

from .sampler import CoarsenedMixture, CoarsenedState

__all__ = ["CoarsenedMixture", "CoarsenedState"]
