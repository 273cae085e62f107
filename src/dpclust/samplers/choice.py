"""The one place a fit's sampler is chosen.

:func:`choose_sampler` takes what was asked for (``"auto"``, a name of :data:`SAMPLERS` or
a configured sampler object) with everything the choice depends on — the family, the
partition prior, the number of points, where the chain runs (in this process, on
in-process partitions or on a Dask cluster) and whether the posterior is coarsened — and
returns a :class:`SamplerChoice`: the sampler that runs, its name, whether its draws are
exact for this prior (read from the sampler's own declaration, ``is_exact`` and
``exact_priors``) and one sentence saying why it was chosen.  The estimators record the
name as ``sampler_``; the run summary, the report and the command line read that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..priors import PartitionPrior
from .registry import AUTO_SUBCLUSTER_FROM, get_sampler, resolve_sampler_name

#: where a chain can run: in this process, on in-process partitions (``partitions=``), or
#: on a Dask cluster (``executor=client``)
WHERE = ("local", "partitions", "dask")


@dataclass(frozen=True)
class SamplerChoice:
    """The sampler a fit runs and why.

    Attributes
    ----------
    sampler : object
        The configured sampler (``init`` + ``step``).
    name : str
        Its name in :data:`SAMPLERS` (``sampler.name`` for a sampler object passed in).
    requested : str
        What was asked for: ``"auto"``, a name, or ``"object"`` for a sampler object.
    exact : bool
        Whether its draws are exact MCMC for the prior (``is_exact``, or the prior's name
        among the sampler's ``exact_priors``).
    reason : str
        One sentence: why this sampler (for the summary and the report).
    """

    sampler: Any
    name: str
    requested: str
    exact: bool
    reason: str

    @property
    def label(self) -> str:
        """``"auto (gibbs)"`` when ``"auto"`` chose, else the name."""
        return f"auto ({self.name})" if self.requested == "auto" else self.name


def sampler_name(sampler) -> str:
    """The registered name of a sampler object (its ``name``; the class name otherwise)."""
    return str(getattr(sampler, "name", type(sampler).__name__))


def is_exact_for(sampler, prior=None) -> bool:
    """Whether ``sampler`` (an object or class) is exact MCMC under ``prior``: its
    ``is_exact``, or ``prior.name`` among its ``exact_priors`` (the finite-mixture sampler
    is exact for a finite prior and approximates the Dirichlet process)."""
    if bool(getattr(sampler, "is_exact", True)):
        return True
    return prior is not None and prior.name in getattr(sampler, "exact_priors", ())


def check_prior(sampler, prior) -> None:
    """Refuse a sampler that cannot target ``prior`` (its ``priors``: names, or None for
    every prior of :mod:`dpclust.priors`), and a concentration with a prior under a
    partition prior that does not resample it (its ``update_alpha``: the Dirichlet process's
    alpha and the Pitman-Yor strength are resampled)."""
    if prior is None:
        return
    supported = getattr(sampler, "priors", ("dp",))
    if supported is not None and prior.name not in supported:
        raise ValueError(f"the {sampler_name(sampler)!r} sampler fits the "
                         f"{' or '.join(supported)} prior, not the {prior.title}: use "
                         f"sampler='gibbs', 'explicit', 'gibbs+sams' or 'subcluster'")
    if (prior.alpha_prior is not None
            and type(prior).update_alpha is PartitionPrior.update_alpha):
        raise ValueError(f"the {prior.title} prior does not resample its concentration: give "
                         f"it a number (the Dirichlet process's alpha and the Pitman-Yor "
                         f"strength take a GammaPrior)")


def _auto_reason(name: str, n_samples: int, family, prior) -> str:
    """Why ``"auto"`` picked ``name``."""
    if prior is not None and not prior.is_dirichlet_process and name in ("fsd", "gibbs+sams"):
        return (f"auto under the {prior.title} prior: "
                + ("the finite mixture's blocked Gibbs sampler at this size" if name == "fsd"
                   else "collapsed Gibbs with merge-split moves below "
                        f"{AUTO_SUBCLUSTER_FROM:,} points"))
    if getattr(family, "default_sampler", None) == name:
        return f"auto: the sampler of the {getattr(family, 'name', 'family')} family"
    threshold = getattr(family, "auto_subcluster_from", None) or AUTO_SUBCLUSTER_FROM
    if name == "subcluster":
        under = ("" if prior is None or prior.is_dirichlet_process
                 else f" (under the {prior.title} prior its moves read the prior's split "
                      "ratio)")
        return f"auto: the parallel sub-cluster sampler from {threshold:,} points{under}"
    return f"auto: {name} below {threshold:,} points ({n_samples:,} here)"


def choose_sampler(request, n_samples: int, family=None, prior=None, *,
                   where: str = "local", coarsened: bool = False) -> SamplerChoice:
    """The sampler a fit runs (module notes).

    Parameters
    ----------
    request : str or sampler object
        ``"auto"``, a name of :data:`SAMPLERS`, or a configured sampler.
    n_samples : int
        Points (rows) of the data.
    family, prior : optional
        The resolved family and the partition prior.
    where : {"local", "partitions", "dask"}
        Where the chain runs: the partitioned runs take the sub-cluster sampler.
    coarsened : bool
        Whether the posterior is coarsened (the ``"coarsened"`` sampler, in-process only).

    Raises
    ------
    ValueError
        For a sampler that cannot run this model: an unknown name, a family it does not
        fit, a prior it cannot target, a coarsened posterior off this process or by
        another sampler, a partitioned run by a sampler that is not partitioned.
    """
    if where not in WHERE:
        raise ValueError(f"where must be one of {WHERE}, got {where!r}")
    auto = isinstance(request, str) and request.lower() == "auto"
    requested = (request.lower() if isinstance(request, str) else "object")
    if coarsened:
        if where != "local":
            raise ValueError("coarsening runs in-process: leave executor=None and "
                             "partitions=None")
        sampler = get_sampler("coarsened" if auto else request, n_samples, family, prior)
        if sampler_name(sampler) != "coarsened":
            raise ValueError(f"coarsening is fitted by the 'coarsened' sampler (no "
                             f"allocations), not {request!r}: leave sampler='auto'")
        reason = ("auto: a coarsened posterior is fitted by the allocation-free sampler"
                  if auto else "as requested")
    elif where != "local":
        sampler = get_sampler("subcluster" if auto else request, n_samples, family)
        if not getattr(sampler, "partitioned", False):
            raise ValueError(
                "a Dask executor and partitions= are for the sub-cluster sampler "
                f"('subcluster' or 'subcluster-approx'), not {request!r}")
        reason = (f"auto: the sub-cluster sampler runs on partitions "
                  f"({'a Dask cluster' if where == 'dask' else 'in-process partitions'})"
                  if auto else "as requested")
    else:
        name = resolve_sampler_name(request, n_samples, family, prior)
        options = (getattr(family, "auto_sampler_options", None) or {}).get(name) if auto \
            else None
        sampler = get_sampler(name, n_samples, family, prior, options)
        reason = (_auto_reason(sampler_name(sampler), n_samples, family, prior) if auto
                  else "as requested")
    check_prior(sampler, prior)
    return SamplerChoice(sampler, sampler_name(sampler), requested,
                         is_exact_for(sampler, prior), reason)
