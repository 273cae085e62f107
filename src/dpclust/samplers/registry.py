"""The samplers by name: what ``DPMixture(sampler=...)`` and ``dpclust fit --sampler``
accept, what each needs of a family, and the ``"auto"`` rule (the choice itself, with
where the chain runs and coarsening, is :func:`dpclust.samplers.choice.choose_sampler`)."""

from __future__ import annotations

import dataclasses

from .augmented import LatentAugmented
from .coarsened import CoarsenedMixture
from .explicit import ExplicitGibbs
from .fsd import FiniteSymmetricDirichlet
from .gibbs import CollapsedGibbs
from .mallows import BetaGibbs, SliceGibbs
from .sams import GibbsSAMS
from .subcluster import SubclusterSplitMerge

#: names accepted by ``DPMixture(sampler=...)`` and ``dpclust fit --sampler``
SAMPLERS = {
    "gibbs": CollapsedGibbs,
    "explicit": ExplicitGibbs,
    "fsd": FiniteSymmetricDirichlet,
    "subcluster": SubclusterSplitMerge,
    "subcluster-exact": SubclusterSplitMerge.exact,  # the default; the name is kept
    "subcluster-approx": SubclusterSplitMerge.approximate,
    "gibbs+sams": GibbsSAMS,
    "slice-gibbs": SliceGibbs,
    "beta-gibbs": BetaGibbs,
    "coarsened": CoarsenedMixture,
}



def _sampler_class(ctor):
    """The class behind a registered constructor (a class or one of its classmethods)."""
    return getattr(ctor, "__self__", ctor)


def sampler_needs(sampler) -> str:
    """What a sampler (name, class or instance) needs of the family: ``"collapsed"`` (a
    collapsed form, ``family.collapsible``), ``"instantiated"`` (families without one) or
    ``"any"`` (either: a collapsed form, or the instantiated hooks ``update_params`` and
    ``sample_given_one`` of the families that list it in their ``samplers``)."""
    if isinstance(sampler, str):
        sampler = _sampler_class(SAMPLERS[sampler.lower()])
    return getattr(sampler, "needs", "collapsed")


#: the samplers that fit only families without a collapsed form (``family.collapsible =
#: False``), read from what each sampler says it needs; which of these (and of the "any"
#: samplers) fit a family is the family's ``samplers``
INSTANTIATED = tuple(k for k, v in SAMPLERS.items()
                     if sampler_needs(_sampler_class(v)) == "instantiated")


def moves_clusters(sampler) -> bool:
    """Whether a sampler (name, class or instance; ``"auto (gibbs+sams)"`` reads as the
    name in brackets) has whole-cluster moves, splits and merges, beside its moves of single
    points: its ``moves_clusters``.  Advice on a run that has not converged reads it, so as
    not to suggest the moves the run already has."""
    if isinstance(sampler, str):
        name = sampler.strip().lower()
        if name.startswith("auto (") and name.endswith(")"):
            name = name[len("auto ("):-1]
        if name not in SAMPLERS:
            return False
        sampler = SAMPLERS[name]()  # its default configuration
    if isinstance(sampler, type):
        sampler = sampler()
    return bool(getattr(sampler, "moves_clusters", False))


def family_samplers(family) -> tuple | None:
    """The sampler names that fit a family without a collapsed form (a class or an
    instance): its ``samplers``; None for a collapsible family (the samplers check what
    they need of it)."""
    if getattr(family, "collapsible", True):
        return None
    return tuple(getattr(family, "samplers", ()) or INSTANTIATED)

#: from this many points on, ``sampler="auto"`` picks the sub-cluster sampler: collapsed Gibbs
#: is sequential and moves one point at a time, the sub-cluster sampler is parallel and moves
#: whole clusters.  A family may set its own threshold (``auto_subcluster_from``).
AUTO_SUBCLUSTER_FROM = 5000
#: and below that, collapsed Gibbs with Dahl's merge-split moves (a family may choose
#: otherwise: ``auto_small_sampler``).  One-point Gibbs moves open and close a cluster of
#: more than a few points only through a chain of unlikely states, so chains of real data
#: sit for thousands of iterations in different numbers of clusters.  Measured with four
#: chains of one seed, one core, the least bulk ESS of the log-likelihood, the number of
#: clusters, the clusters holding >= 1 % and the entropy of the sizes, per second: Palmer
#: penguins (344 rows, table family) 0.29 with Gibbs, 1.44 with one SAMS proposal a sweep,
#: 5.15 with ten; the demo's 1,500 2-D points 6.39 with Gibbs, 10.89 with one
#: (``benchmarks/bench_small_samplers.py``).  How many proposals a sweep pays is the family's
#: (``auto_sampler_options``): the table families take ten
AUTO_SMALL_SAMPLER = "gibbs+sams"


def resolve_sampler_name(sampler, n_samples: int, family=None, prior=None):
    """``"auto"`` becomes :data:`AUTO_SMALL_SAMPLER` (``"gibbs+sams"``, or the family's
    ``auto_small_sampler``) below the family's ``auto_subcluster_from`` points (default
    :data:`AUTO_SUBCLUSTER_FROM`) and ``"subcluster"`` from there on; under a
    partition ``prior`` other than the Dirichlet process, ``"gibbs+sams"`` below that many
    points, whose merge-split moves open and close whole clusters that one-point Gibbs moves
    rarely do, and from there on ``"subcluster"`` (its exact moves read the prior's split
    ratio), or ``"fsd"`` (the finite mixture's own blocked sampler) for a finite prior;
    anything else is returned unchanged."""
    if (isinstance(sampler, str) and sampler.lower() == "auto" and prior is not None
            and not prior.is_dirichlet_process and getattr(family, "collapsible", True)):
        threshold = getattr(family, "auto_subcluster_from", None) or AUTO_SUBCLUSTER_FROM
        if n_samples < threshold:
            return "gibbs+sams"
        return "fsd" if prior.name == "finite" else "subcluster"
    if isinstance(sampler, str) and sampler.lower() == "auto":
        if getattr(family, "default_sampler", None):
            return family.default_sampler
        threshold = getattr(family, "auto_subcluster_from", None) or AUTO_SUBCLUSTER_FROM
        return ("subcluster" if n_samples >= threshold
                else getattr(family, "auto_small_sampler", None) or AUTO_SMALL_SAMPLER)
    return sampler


def on_latents(sampler, family):
    """``sampler`` as it runs on ``family``: a collapsed sampler on a family without a
    collapsed form that has a latent augmentation (``latent_family``: Plackett–Luce, the
    full-covariance table with holes) runs on it
    (:class:`~dpclust.samplers.augmented.LatentAugmented`); anything else unchanged.

    Gibbs+SAMS there sweeps with Neal's algorithm 2 on the family's own parameters and
    makes its merge-split proposals given the latents: on all 29,988 Dublin West ballots
    that chain from 10 clusters reached a log-likelihood of -147,855 in 120 s at 0.087 s an
    iteration, the collapsed sweep on the augmented ballots -153,876 at 0.152 s
    (``benchmarks/bench_pl_scale.py``)."""
    if (family is not None and not getattr(family, "collapsible", True)
            and hasattr(family, "latent_family") and sampler_needs(sampler) == "collapsed"):
        if (isinstance(sampler, GibbsSAMS) and sampler.gibbs is not None
                and getattr(family, "sweeps_own_params", True)):
            return LatentAugmented(dataclasses.replace(sampler, gibbs=None),
                                   explicit_sweep=True)
        return LatentAugmented(sampler)
    return sampler


def get_sampler(sampler, n_samples: int | None = None, family=None, prior=None,
                options: dict | None = None):
    """A sampler object from a name in :data:`SAMPLERS` (or ``"auto"``, which needs
    ``n_samples`` and, for its choice, the family and the partition prior) or a configured
    sampler instance."""
    if n_samples is not None:
        sampler = resolve_sampler_name(sampler, n_samples, family, prior)
    if isinstance(sampler, str):
        key = sampler.lower()
        fits = None if family is None else family_samplers(family)
        if fits is not None and key in SAMPLERS and key not in fits:
            raise ValueError(f"{type(family).__name__} is fitted with sampler "
                             f"{', '.join(map(repr, fits[:-1]))} or {fits[-1]!r}, "
                             f"not {sampler!r}")
        if key in SAMPLERS:
            return on_latents(SAMPLERS[key](**(options or {})), family)
        raise ValueError(
            f"unknown sampler {sampler!r}: use 'auto' or one of {sorted(SAMPLERS)}")
    if hasattr(sampler, "init") and hasattr(sampler, "step"):
        return on_latents(sampler, family)
    raise ValueError(f"sampler must be a name {sorted(SAMPLERS)} or a sampler object,"
                     f" got {sampler!r}")


def describe_samplers() -> dict[str, str]:
    """One line per name of :data:`SAMPLERS`, from each sampler's own ``summary`` (what the
    command line's ``--sampler`` help and the docs' table show)."""
    out = {}
    for key, ctor in SAMPLERS.items():
        text = getattr(ctor(), "summary", "") or key
        out[key] = "the same as 'subcluster'" if key == "subcluster-exact" else text
    return out


def samplers_table() -> str:
    """The user guide's table of the samplers (Markdown), one row per name of
    :data:`SAMPLERS` from its own ``summary`` and exactness (``is_exact``,
    ``exact_priors``); the documentation's build writes it, so that a new sampler appears
    there from its registration alone."""
    rows = ["| `sampler=` | what | exact MCMC |", "|---|---|---|"]
    for key, text in describe_samplers().items():
        sampler = SAMPLERS[key]()
        if getattr(sampler, "is_exact", True):
            exact = "yes"
        elif getattr(sampler, "exact_priors", ()):
            exact = "under the " + " or ".join(sampler.exact_priors) + " prior"
        else:
            exact = "**no**"
        rows.append(f'| `"{key}"` | {text} | {exact} |')
    return "\n".join(rows) + "\n"

