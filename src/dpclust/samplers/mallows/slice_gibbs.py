"""Slice-Gibbs (Meilă & Chen 2010, Figure 1): exact MCMC for DP mixtures of GM models, its
assignment sweep scoring each distinct ranking once per sweep when rankings repeat."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kernels.mallows import model as gmk
from ...families.mallows import cumulative_log_psi
from ...kernels.mallows import slice_gibbs as _k
from ...utils.threads import serial_when_small
from ._helpers import _grow, _grow_columns, _SweepArrays
from .step import _MallowsGibbs

#: Slice-Gibbs scores each distinct ranking once per sweep (a table) when there are at most
#: this share of distinct rankings
_TABLE_SHARE = 0.75


@dataclass(frozen=True)
class SliceGibbs(_MallowsGibbs):
    """Slice-Gibbs for DP mixtures of GM models (Meilă & Chen 2010, Figure 1): exact MCMC
    with ``sigma_step="mh"``.

    Parameters
    ----------
    n_gibbs : int, default=10
        ``T_Gibbs``: rounds of sigma | theta and theta | sigma per cluster and iteration (the
        paper's choice).
    n_slices : int, default=3
        ``T_Slices``: slice-sampling steps per theta_j and round (the paper's choice).
    sigma_step : {"mh", "stagewise"}, default="mh"
        ``"mh"``: the stagewise draw as a Metropolis-Hastings proposal, then a scan of
        neighbour swaps (exact; the default because the stagewise draw alone is not the
        conditional of sigma);
        ``"stagewise"``: the paper's draw taken as it is (approximate).
    random_scan : bool, default=True
        Visit the rankings in a new random order each sweep.
    split_merge : int, default=0
        Exact split-merge proposals per iteration (:mod:`.split_merge`); 0 turns them
        off.
    launch_iter : int, default=4
        Stochastic EM steps of a split-merge proposal's launch.
    launch_size : int, default=200
        Most rankings in the subsample a launch is fitted to.
    random_share : float, default=0.5
        Share of the split-merge proposals whose allocation is the random-proportion one
        (:mod:`.split_merge`) rather than the fitted launch's.
    cluster_share : float, default=0.5
        Share of the split-merge proposals whose anchors are drawn by cluster (an ordered
        pair of clusters uniformly) rather than as two uniform rankings.
    birth_death : int, default=0
        Exact birth and death proposals per iteration, with the allocation drawn from the
        proposed parameters (:mod:`.birth_death`); 0 turns them off.
    """

    name = "slice-gibbs"
    summary = ("Generalized Mallows rankings: Slice-Gibbs with the Metropolis-Hastings "
               "sigma step (exact)")

    def _sweep(self, model, fam, labels, order, theta, counts, perm, log_new, log_alpha,
               seed):
        X = model.X
        n = fam.n_items_
        sw = _SweepArrays(order, counts, fam.max_length_)
        thetaT = np.ascontiguousarray(theta.T)
        neg_cumT = np.ascontiguousarray(-cumulative_log_psi(theta, n).T)
        hull = np.empty((3, gmk._MAX_HULL))
        pos, state = 0, seed
        first, inverse = X.distinct()
        table = np.zeros((0, 0))
        if len(first) <= _TABLE_SHARE * len(inverse):
            # repeated rankings (ballots): score each distinct one once, in parallel
            table = np.empty((len(first), len(counts)))
            with serial_when_small(table.size):
                _k.score_table(X.orders, X.lengths, first, sw.rankT, thetaT, neg_cumT,
                               counts, table)
        fresh = np.zeros(len(counts), dtype=np.bool_)
        while True:
            pos, state = _k.slice_gibbs_sweep(
                X.orders, X.lengths, perm, pos, labels, counts, sw.log_counts, order,
                sw.rankT, theta, thetaT, neg_cumT, log_new, log_alpha, fam.nu_r_,
                float(fam.nu), np.uint64(state), inverse, table, fresh, sw.scratch_i,
                sw.scratch_f, sw.rstore, sw.logw, sw.cand, sw.code, hull[0], hull[1], hull[2])
            if pos >= len(perm):
                return order, theta, counts
            order, theta, counts = _grow(order, theta, counts)
            thetaT, neg_cumT = _grow_columns(thetaT, neg_cumT)
            sw = sw.grown(order, counts)
            # the new slots open during the sweep: scored directly
            fresh = np.concatenate([fresh, np.ones(len(counts) - len(fresh), np.bool_)])
