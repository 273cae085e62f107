"""Statistics and parameters by slot: a cluster's two sub-clusters (or a move's two sides)
are rows ``2k`` and ``2k + 1`` of a batch.
"""

from __future__ import annotations

import numpy as np

from ...families.base import take


def _pair_rows(index):
    """Rows ``2k, 2k + 1`` of each ``k`` of ``index``, in order: the two sub-clusters of
    clusters, or the two sides of moves."""
    index = np.asarray(index, dtype=np.int64)
    return np.stack([2 * index, 2 * index + 1], axis=1).ravel()


def _pairs_combined(fam, sub_stats, K):
    """Cluster statistics from the statistics of their two sub-clusters (strided views of
    the rows, not copies: a documents' row holds the whole vocabulary)."""
    return fam.combine(take(sub_stats, slice(0, 2 * K, 2)),
                       take(sub_stats, slice(1, 2 * K, 2)))


def _stats_of(fam, stats, members):
    """Statistics of the union of clusters ``members``."""
    out = take(stats, [members[0]])
    for c in members[1:]:
        out = fam.combine(out, take(stats, [c]))
    return out


def _with_rows(params, rows, values):
    """A copy of batched ``params`` whose components ``rows`` are replaced by ``values``."""
    out = type(params)(*(np.array(a) for a in params))
    for mine, theirs in zip(out, values):
        mine[rows] = theirs
    return out
