"""The old home of the ddCRP estimators, now :mod:`dpclust.estimators.ddcrp`; its names
stay importable from here."""

from ..estimators.ddcrp import DDCRPLanguageModel, DDCRPMixture

__all__ = ["DDCRPLanguageModel", "DDCRPMixture"]
