"""Collapsed Gibbs with sequentially-allocated merge-split moves (Dahl 2003): "gibbs+sams".

Each iteration is one collapsed Gibbs sweep followed by ``n_proposals`` SAMS proposals.  A
proposal picks two distinct points i and j uniformly at random:

* same cluster S: propose to split it.  i and j seed two clusters; the other points of S,
  in a uniformly random order, join one side with probability
  ``∝ |S_side| f(x | X_side)`` (the collapsed predictive).  The proposal probability
  ``q_split`` is the product of these allocation probabilities;
* different clusters S_i, S_j: propose to merge them (deterministically).  The reverse split
  probability ``q_split`` is that product for allocating the points of S_i ∪ S_j, in a
  random order, back to the current sides.

Acceptance (the Hastings ratio, with the partition prior and the marginal likelihoods):
``min(1, [p(split) / p(merged)] f(X_i) f(X_j) / (f(X_c) q_split))`` for a split and its
reciprocal, with ``q_split`` of the reverse, for a merge; the prior's ratio is
:meth:`~dpclust.priors.PartitionPrior.log_split_ratio` (for the Dirichlet process
``alpha Gamma(N_i) Gamma(N_j) / Gamma(N_c)``, Dahl's eq. 3.3), read from the tables of
:meth:`~dpclust.priors.PartitionPrior.log_split_terms`.  The allocation order
is an auxiliary variable drawn from the same uniform distribution for a move and its
reverse, so it does not enter the ratio.

An iteration's proposals run in one compiled call
(:func:`dpclust.kernels.subcluster.sams_proposals`), each on the labels the previous one
left: the pair, the order and the acceptance come from one random stream seeded by the
chain's generator.

References
----------
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, Department of Statistics, University of Wisconsin.
Chang & Fisher (2013), the Gibbs+SAMS baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import MixtureModel, StepInfo, relabel
from ..kernels.copies import copies_round
from ..kernels.subcluster import sams_round
from .gibbs import CollapsedGibbs, GibbsState


@dataclass(frozen=True)
class GibbsSAMS:
    """Collapsed Gibbs sweeps plus Dahl's sequentially-allocated merge-split proposals.

    Parameters
    ----------
    n_proposals : int, default=1
        SAMS proposals after each Gibbs sweep.  A proposal picks its pair of points at
        random, so a given split or merge of clusters holding shares ``p`` and ``q`` of the
        points is tried about ``2 p q`` of the times.  The table families' default fit
        takes ten (``auto_sampler_options``): Palmer penguins' four chains pass the
        convergence rule in 54 s with ten, 78 s with three, and not within 50,000
        iterations with one; the demo's 2-D points pass in 6-7 s with one and 29-36 s
        with ten.
    gibbs : CollapsedGibbs or None, default=CollapsedGibbs()
        The sweep; ``None`` runs the SAMS proposals alone (for testing them).
    n_reallocations : int, default=0
        Reallocation proposals after the SAMS proposals: a pair of points in two clusters,
        whose other points are allocated afresh between the two by the same sequential
        allocation, accepted by its Metropolis-Hastings ratio (the number of clusters
        kept).  They move groups of points between clusters, which a split followed by a
        merge does only through an unlikely intermediate state.
    copy_sweeps : int, default=0
        Block moves of identical rows after the proposals, this many for each row that has
        copies (a frequency table's people, ballots cast by many voters; the model's
        :attr:`~dpclust.samplers.MixtureModel.copies`): how many of a row's copies each of
        two clusters holds, drawn from its exact conditional in one step
        (:mod:`dpclust.kernels.copies`), where single-point Gibbs moves them one at a time.
    """

    n_proposals: int = 1
    gibbs: CollapsedGibbs | None = CollapsedGibbs()
    n_reallocations: int = 0
    copy_sweeps: int = 0
    name = "gibbs+sams"
    summary = ("collapsed Gibbs with Dahl's sequentially-allocated merge-split moves "
               "(Dahl 2003)")
    #: partition priors it fits: every prior of :mod:`dpclust.priors` (it reads the seating
    #: weights and split ratios of the prior's contract)
    priors = None
    #: the family's face it reads (a collapsed form), and whether it is exact MCMC
    needs = "collapsed"
    is_exact = True
    #: it moves whole clusters (splits and merges), not only points
    moves_clusters = True

    def __post_init__(self):
        for name in ("n_proposals", "n_reallocations", "copy_sweeps"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> GibbsState:
        return CollapsedGibbs().init(rng, model, labels=labels, n_clusters=n_clusters,
                                     alpha=alpha)

    def step(self, rng, state: GibbsState, model: MixtureModel):
        if self.gibbs is not None:
            state, info = self.gibbs.step(rng, state, model)
        else:
            info = _info(model, state.labels, state.alpha)
        n_proposals = int(self.n_proposals)
        n_reallocations = int(self.n_reallocations)
        copies = model.copies if self.copy_sweeps else None
        n = model.n_samples
        if n_proposals + n_reallocations == 0 and copies is None or n < 2:
            return state, info._replace(n_accepted_splits=0, n_accepted_merges=0)
        labels = np.array(state.labels, dtype=np.int64)
        n_clusters = int(np.count_nonzero(np.bincount(labels)))
        log_k, log_w = model.partition_prior.log_split_terms(
            n, state.alpha, min(n_clusters + n_proposals, n))
        n_splits, n_merges, n_moved = sams_round(model.kernel, labels, n_clusters,
                                                 n_proposals, rng.integers(2**63), log_k,
                                                 log_w, n_reallocations)
        if copies is not None:
            labels = np.ascontiguousarray(relabel(labels)[0], dtype=np.int64)
            n_moves = int(self.copy_sweeps) * (len(copies[1]) - 1)
            n_moved += copies_round(model.kernel, labels, *copies, n_moves,
                                    rng.integers(2**63), log_w)
        if n_splits or n_merges or n_moved:
            labels, _ = relabel(labels)
            # the cached statistics no longer match the labels: rebuild at the next sweep
            state = GibbsState(labels, state.alpha, None)
            info = _info(model, labels, state.alpha)
        return state, info._replace(n_accepted_splits=n_splits, n_accepted_merges=n_merges)


def _info(model: MixtureModel, labels, alpha) -> StepInfo:
    counts, log_lik = model._log_likelihood(labels)
    return StepInfo(model.partition_prior.log_eppf(counts, alpha) + log_lik,
                    int(labels.max()) + 1, alpha, log_likelihood=float(log_lik))
