"""The sub-cluster sampler's collapsed data pass (numba): restricted collapsed Gibbs over
random groups of clusters, one thread per lane of groups.
"""

from __future__ import annotations

from numba import njit, prange

from ..gibbs import categorical_from_logs
from ..streams import next_uniform


@njit(cache=True, _nrt=False)
def no_log_predictives(kdata, i, kstats, slots, lo, m, khyper, out):
    """The ``log_predictives`` of families that score a point slot by slot (never
    called)."""
    return


@njit(_nrt=False)
def collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels, counts, seeds,
                   groups, logw, log_join, batched, add, remove, log_predictive,
                   log_predictives):
    """Restricted collapsed Gibbs over the points of the groups ``groups``, one after another
    (one thread's lane; see :func:`collapsed_groups`).

    Group g's points ``rows[start[g]:start[g + 1]]`` are visited in that order; each point
    that is not alone in its cluster is taken out of it and drawn among the group's clusters
    ``members[mstart[g]:mstart[g + 1]]`` with probability ``∝ W(N_{k,-i} + 1) / W(N_{k,-i})
    f(x_i | X_{k,-i})`` (the collapsed predictive of the family's slot k = cluster k), with
    stream ``seeds[g]``.  ``log_join[c]`` is the partition prior's log weight of joining a
    cluster of c points (:meth:`~dpclust.priors.PartitionPrior.log_seat_weights`; ``log c``
    for the Dirichlet process): with the number of clusters fixed, a Gibbs-type prior's
    conditional is that weight alone.
    A point alone in its cluster stays: the update keeps the number of clusters, and is
    Gibbs sampling of the posterior restricted to partitions with that many clusters, which
    leaves the posterior itself invariant.
    ``batched``: the predictives of all the group's clusters come from one call of the
    family's ``log_predictives`` (the same values), else one ``log_predictive`` each.
    """
    for at in range(groups.shape[0]):
        g = groups[at]
        state = seeds[g]
        lo_m = mstart[g]
        m = mstart[g + 1] - lo_m
        for t in range(start[g], start[g + 1]):
            i = rows[t]
            k = labels[i]
            c = counts[k]
            if c <= 1:
                continue
            remove(kdata, i, kstats, k, khyper)
            counts[k] = c - 1
            if batched:
                log_predictives(kdata, i, kstats, members, lo_m, m, khyper, logw)
                for a in range(m):
                    logw[a] = log_join[counts[members[lo_m + a]]] + logw[a]
            else:
                for a in range(m):
                    kk = members[lo_m + a]
                    logw[a] = (log_join[counts[kk]]
                               + log_predictive(kdata, i, kstats, kk, khyper))
            state, u = next_uniform(state)
            a = categorical_from_logs(logw, m, u)
            kk = members[lo_m + a]
            add(kdata, i, kstats, kk, khyper)
            counts[kk] += 1
            labels[i] = kk


@njit(parallel=True)
def collapsed_groups(kdata, kstats, khyper, rows, start, members, mstart, labels, counts,
                     seeds, lanes, lane_start, logw, log_join, batched, add, remove,
                     log_predictive, log_predictives):
    """:func:`collapsed_lane` for every lane of groups (``lanes[lane_start[l]:lane_start[l +
    1]]``, :func:`move_lanes`), one thread each: groups share no cluster and no point, so the
    lanes touch disjoint slots, labels and counts, and the result does not depend on the
    thread count (generic over the family's collapsed functions; built-in families call it
    from cached entry points).  ``logw`` holds one row of scratch per lane."""
    for lane in prange(lane_start.shape[0] - 1):
        collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels, counts,
                       seeds, lanes[lane_start[lane]:lane_start[lane + 1]], logw[lane],
                       log_join, batched, add, remove, log_predictive, log_predictives)
