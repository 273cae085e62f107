"""Priors on partitions, behind one contract (:class:`~dpclust.priors.base.PartitionPrior`).

* :class:`DirichletProcess` — the Chinese restaurant process, dpclust's default
  (``alpha=`` of the estimators is its shorthand);
* :class:`PitmanYor` — the two-parameter process: more, smaller clusters, power-law sizes;
* :class:`MixtureOfFiniteMixtures` — a prior on the number of components K and a finite
  mixture given K (Miller & Harrison 2018): K does not grow without bound with N;
* :class:`FiniteDirichlet` — exactly K components with symmetric Dirichlet weights (what the
  ``"fsd"`` sampler targets).

Adding a prior is one module here: a frozen dataclass subclassing
:class:`~dpclust.priors.base.PartitionPrior`, listed in :data:`PRIORS`.
"""

from __future__ import annotations

from .base import BetaPrior, GammaPrior, PartitionPrior
from .dirichlet_process import DirichletProcess, crp_log_prior, resolve_alpha, sample_alpha
from .finite import FiniteDirichlet, finite_dirichlet_log_prior
from .mfm import MixtureOfFiniteMixtures, log_v_coefficients
from .pitman_yor import PitmanYor

#: names accepted by ``prior=`` and ``dpclust fit --prior NAME[:ARGS]``
PRIORS = {cls.name: cls for cls in (DirichletProcess, PitmanYor, MixtureOfFiniteMixtures,
                                    FiniteDirichlet)}
_ALIASES = {"py": "pitman-yor", "crp": "dp", "fsd": "finite"}


def get_prior(prior, alpha=None) -> PartitionPrior:
    """A partition prior from a :class:`PartitionPrior`, a name with arguments
    (``"pitman-yor:0.25,1"``, ``"mfm:1,poisson:3"``, ``"dp"``) or None (the Dirichlet
    process with concentration ``alpha``, a number or a :class:`GammaPrior`)."""
    if prior is None:
        return DirichletProcess(1.0 if alpha is None else alpha)
    if isinstance(prior, PartitionPrior):
        return prior
    if isinstance(prior, str):
        name, _, rest = prior.strip().partition(":")
        key = _ALIASES.get(name.lower(), name.lower())
        if key not in PRIORS:
            raise ValueError(f"unknown prior {prior!r}: use one of {sorted(PRIORS)} "
                             f"(e.g. 'pitman-yor:0.25,1', 'mfm:1,poisson:1')")
        if key == "dp" and not rest and alpha is not None:
            return DirichletProcess(alpha)
        args = [a.strip() for a in rest.split(",")] if rest else []
        try:
            return PRIORS[key].from_spec(args)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"cannot read the prior {prior!r}: {exc}. Expected "
                             f"{PRIORS[key].spec_help}") from None
    raise ValueError(f"prior must be a name such as 'pitman-yor:0.25,1' or a PartitionPrior,"
                     f" got {prior!r}")


__all__ = ["PartitionPrior", "GammaPrior", "BetaPrior", "DirichletProcess", "PitmanYor",
           "MixtureOfFiniteMixtures", "FiniteDirichlet", "PRIORS", "get_prior",
           "crp_log_prior", "finite_dirichlet_log_prior", "sample_alpha", "resolve_alpha",
           "log_v_coefficients"]
