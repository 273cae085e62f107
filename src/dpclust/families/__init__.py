"""Component families: a likelihood with its conjugate prior, behind one contract.

See :class:`dpclust.families.base.ConjugateFamily` for the contract and
``docs``/README "Adding a family" for how to implement a new one.
"""

from .base import ConjugateFamily, FamilyKernel
from .gaussian import NormalInverseWishart
from .mallows import GeneralizedMallows
from .multinomial import DirichletMultinomial

#: names accepted by ``DPMixture(family=...)`` and ``dpclust fit --family``
FAMILIES = {
    "gaussian": NormalInverseWishart,
    "multinomial": DirichletMultinomial,
    "mallows": GeneralizedMallows,
}


def get_family(family) -> ConjugateFamily:
    """Return a family object from a name (``"gaussian"``, ``"multinomial"``, ``"mallows"``)
    or an instance."""
    if isinstance(family, ConjugateFamily):
        return family
    if isinstance(family, str) and family.lower() in FAMILIES:
        return FAMILIES[family.lower()]()
    raise ValueError(
        f"unknown family {family!r}: use one of {sorted(FAMILIES)} or a ConjugateFamily instance")


__all__ = ["ConjugateFamily", "FamilyKernel", "NormalInverseWishart", "DirichletMultinomial",
           "GeneralizedMallows",
           "FAMILIES", "get_family"]
