r"""The collapsed samplers for a family without a collapsed form, on its latent
augmentation: Plackett–Luce, and the full-covariance table with holes, with
``sampler="gibbs"``, ``"gibbs+sams"`` or ``"subcluster"``.

A Plackett–Luce cluster has no closed-form marginal, so the samplers that move whole
clusters (split–merge moves, which weigh a cluster's marginal likelihood) did not fit it.
Given the Gamma latents of Caron & Doucet (2012) it has one: with a latent ``Z_s ~
Exp(Lambda_s)`` per stage of every ranking, the pair (ranking, latents) has density
``prod_j lambda_j^{c_j} exp(-lambda_j e_j)`` (``c_j``: whether item ``j`` is ranked,
``e_j``: the latents of the stages where it was available), so with ``lambda_j ~ Gamma(a,
1)`` a cluster's marginal is a product of Gamma–Poisson terms
(:mod:`dpclust.families.exposure`).  The chain runs on ``(z, lambda, Z)``; one iteration:

1. ``Z ~ p(Z | lambda, z, X)``: every latent afresh, its exact conditional
   (:meth:`~dpclust.families.PlackettLuce.draw_latents`);
2. ``z`` moved by the inner sampler's step on the rows ``(c, e)``, with ``lambda``
   integrated out: a kernel that leaves ``p(z | Z, X)`` invariant;
3. ``lambda ~ p(lambda | z, Z, X)``: each cluster's worths from their Gamma posterior.

Steps 2 and 3 together leave ``p(z, lambda | Z, X)`` invariant (a move of ``z`` with
``lambda`` collapsed, then ``lambda`` from its conditional: a partially collapsed Gibbs
block), and step 1 is a Gibbs step, so the chain leaves the posterior of ``(z, lambda)``
invariant, whose marginal is the Plackett–Luce mixture's.

Rounded values (:mod:`dpclust.families.gaussian_rounded`) are the same scheme with the
unrounded values as latents; their draw is one Gibbs sweep of truncated normals, a kernel
that leaves ``p(y | theta, z, x)`` invariant but not a fresh draw, so the state carries
them from one iteration to the next (``carries_latents``; ``draw_latents`` takes
``previous``) and the log joint is that of the augmented state.

The full-covariance table with holes is the same scheme with other latents: the missing
cells (Tanner & Wong 1987).  Given them the rows are complete and the cluster's marginal is
Normal–Inverse-Wishart; step 1 draws each missing cell from its Gaussian conditional given
the row's observed cells and its cluster's ``(mu, Sigma)``, step 3 draws ``(mu, Sigma)``
from the posterior of the completed rows.

A family offers its augmentation with five methods: ``latent_family()`` (the conjugate
family of the augmented points), ``initial_latent_params``, ``draw_latents(X, labels,
latent_params, rng)`` (step 1), ``params_from_latent`` (the parameters in the family's own
form) and ``latent_from_params`` (the reverse, for ``explicit_sweep``: a sweep of Neal's
algorithm 2 on ``(z, params)`` before step 1, another kernel that leaves the posterior
invariant).  The inner sampler's own state
(cached statistics, the sub-cluster sampler's anchors) holds the rows of the last
iteration, so it is made afresh from the labels each iteration: the anchors are drawn from
their conditional (uniform members), a Gibbs step of an auxiliary variable.  The state keeps
the normalised worths ``p = lambda / sum lambda`` as ``params``, as the explicit sampler
does, so that the summary, the report and the log joint read the same.

References
----------
Tanner, M. A. & Wong, W. H. (1987). The calculation of posterior distributions by data
    augmentation. *JASA* 82(398), 528-540.
Caron, F. & Doucet, A. (2012). Efficient Bayesian inference for generalized Bradley–Terry
    models. *JCGS* 21(1), 174-196 (the latents).
van Dyk, D. A. & Park, T. (2008). Partially collapsed Gibbs samplers. *JASA* 103(482).
Dahl (2003); Chang & Fisher (2013): the inner samplers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .base import MixtureModel, initial_labels, instantiated_log_joint
from .explicit import ExplicitGibbs, ExplicitState


class AugmentedState(NamedTuple):
    """Partition, the clusters' parameters in the family's form (``params``, as the
    explicit sampler's), alpha, and the same parameters in the latent family's form
    (``latent_params``: Plackett–Luce's unnormalised worths), from which the next
    iteration draws the latents; ``latents``, the last iteration's, where the family's
    draw is a Markov kernel that starts from them (``carries_latents``: rounded values),
    else None."""

    labels: np.ndarray
    params: Any
    alpha: float
    latent_params: Any
    latents: Any = None


@dataclass(frozen=True)
class LatentAugmented:
    """A collapsed sampler (``inner``) run on a family's latent augmentation (module
    notes): what ``sampler="gibbs+sams"`` or ``"subcluster"`` is for Plackett–Luce."""

    inner: Any
    #: before the inner step, one sweep of Neal's algorithm 2 on the family's own
    #: parameters (:class:`~dpclust.samplers.explicit.ExplicitGibbs`, each distinct point
    #: scored once), and the inner sampler's moves given the latents after it: what
    #: ``"gibbs+sams"`` is for these families (the sweep is exact and costs a fraction of a
    #: collapsed sweep on the augmented points; the merge-split proposals add the
    #: whole-cluster moves)
    explicit_sweep: bool = False
    needs = "instantiated"

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def summary(self) -> str:
        sweep = "Neal's algorithm 2 sweeps, then " if self.explicit_sweep else ""
        return (f"{sweep}{self.inner.summary}, given the family's latent variables "
                "(Plackett-Luce's Gamma latents, a table's missing cells, rounded values' "
                "unrounded ones)")

    @property
    def priors(self):
        return getattr(self.inner, "priors", None)

    @property
    def is_exact(self) -> bool:
        return bool(getattr(self.inner, "is_exact", True))

    @property
    def moves_clusters(self) -> bool:
        return bool(getattr(self.inner, "moves_clusters", False))

    def augmented_model(self, model: MixtureModel, latents) -> MixtureModel:
        """The target given the latents: the family's conjugate form on the rows
        ``latents`` under the same prior on partitions."""
        if model.coarsening is not None:
            raise ValueError(f"sampler {self.name!r} fits the exact posterior of "
                             f"{type(model.family).__name__}; the coarsened posterior is "
                             f"fitted with sampler='coarsened'")
        aug = MixtureModel(model.family.latent_family(), latents, model.alpha_prior,
                           prior=model.prior, partition_rows=model.partition_rows)
        if getattr(model.family, "carries_latents", False):
            # real-valued latents (rounded values' unrounded ones) do not repeat: no search
            n = len(latents)
            aug.__dict__["distinct"] = (latents, np.arange(n), np.ones(n))
            aug.__dict__["repeats"] = False
        return aug

    def _posterior(self, rng, aug: MixtureModel, labels):
        """``lambda ~ p(lambda | z, Z)``: every cluster's parameters from their conjugate
        posterior given the augmented points of ``aug`` (step 3)."""
        fam = aug.family
        k = int(labels.max()) + 1
        return fam.sample_posterior(fam.stats(aug.X, labels, k), rng)

    def _finish(self, model, aug, labels, latent_params, alpha):
        """The state, and its log joint with the log-likelihood: of the data ``model``
        holds, or, where the family carries its latents, of the augmented rows of
        ``aug`` (the family's data then have no closed-form likelihood)."""
        params = model.family.params_from_latent(latent_params)
        carried = getattr(model.family, "carries_latents", False)
        log_joint, log_lik = (instantiated_log_joint(aug, labels, latent_params, alpha)
                              if carried else
                              instantiated_log_joint(model, labels, params, alpha))
        return (AugmentedState(labels, params, float(alpha), latent_params,
                               aug.X if carried else None), log_joint, log_lik)

    @staticmethod
    def _latents(model, labels, latent_params, rng, previous):
        """Step 1: the latents given the parameters, from the last ones where the family
        carries them."""
        fam = model.family
        if getattr(fam, "carries_latents", False):
            return fam.draw_latents(model.X, labels, latent_params, rng, previous=previous)
        return fam.draw_latents(model.X, labels, latent_params, rng)

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> AugmentedState:
        labels = initial_labels(rng, model.n_samples, labels, n_clusters)
        k = int(labels.max()) + 1
        theta = model.family.initial_latent_params(model.X, labels, k, rng)
        latents = self._latents(model, labels, theta, rng, None)
        aug = self.augmented_model(model, latents)
        inner = self.inner.init(rng, aug, labels=labels, alpha=alpha)
        labels = np.asarray(inner.labels, dtype=np.int64)  # renumbered (and fewer, if any
        # starting cluster was empty)
        return self._finish(model, aug, labels, self._posterior(rng, aug, labels), alpha)[0]

    def step(self, rng, state: AugmentedState, model: MixtureModel):
        if self.explicit_sweep:  # a kernel of (z, params), then the latents given them
            swept, _ = ExplicitGibbs().step(
                rng, ExplicitState(state.labels, state.params, state.alpha), model)
            state = AugmentedState(swept.labels, swept.params, swept.alpha,
                                   model.family.latent_from_params(swept.params))
        latents = self._latents(model, state.labels, state.latent_params, rng, state.latents)
        aug = self.augmented_model(model, latents)
        inner = self.inner.init(rng, aug, labels=state.labels, alpha=state.alpha)
        inner, info = self.inner.step(rng, inner, aug)
        labels = np.asarray(inner.labels, dtype=np.int64)
        theta = self._posterior(rng, aug, labels)
        new, log_joint, log_lik = self._finish(model, aug, labels, theta, inner.alpha)
        return new, info._replace(log_joint=log_joint, log_likelihood=log_lik)


__all__ = ["AugmentedState", "LatentAugmented"]
