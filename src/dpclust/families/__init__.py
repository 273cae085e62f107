"""Component families: a likelihood with its conjugate prior, behind one contract.

See :class:`dpclust.families.base.ConjugateFamily` for the contract and
``docs``/README "Adding a family" for how to implement a new one: a family registers by name
in its own module (:func:`register_family`), which fills :data:`FAMILIES`.
"""

from .base import (FAMILIES, ClusterColumn, ClusterSummary, ClusterTable, ConjugateFamily,
                   FamilyKernel, HyperParameter, register_family)
# registered in this order: the order of the command line's options and help
from .gaussian import NormalInverseWishart
from .multinomial import DirichletMultinomial
from .mallows import GeneralizedMallows
from .plackett_luce import PlackettLuce


def get_family(family) -> ConjugateFamily:
    """Return a family object from a name (``"gaussian"``, ``"multinomial"``, ``"mallows"``,
    ``"plackett-luce"``)
    or an instance."""
    if isinstance(family, ConjugateFamily):
        return family
    if isinstance(family, str) and family.lower() in FAMILIES:
        return FAMILIES[family.lower()]()
    raise ValueError(
        f"unknown family {family!r}: use one of {sorted(FAMILIES)} or a ConjugateFamily instance")


__all__ = ["ConjugateFamily", "FamilyKernel", "NormalInverseWishart", "DirichletMultinomial",
           "GeneralizedMallows", "PlackettLuce", "FAMILIES", "get_family", "register_family", "HyperParameter",
           "ClusterColumn", "ClusterTable", "ClusterSummary"]
