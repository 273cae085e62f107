"""The point estimate's search over groups of points that stay together.

A frequency table's row stands for ``Freq`` people with the same answers, and a fit with
whole-number weights repeats a row that many times (the *copies* of the row).  The draws
may seat one row's copies in different clusters; the point estimate should not: people
with identical data in different clusters is not a partition a reader can use, and a loss
that favours many clusters (``vi(a=0.5)``) splits the copies into clusters of one.  So
the search (:mod:`dpclust.partitions.search`) can move *groups*: each group's points are
always in one cluster, and its move changes the estimate's contingency table with every
draw by the group's count in each of the draw's clusters.

A group's entries are the triples ``(draw s, draw cluster r, count)``: how many of its
points draw ``s`` seats in its cluster ``r`` (``r`` numbering the clusters of all draws, as
the search does).  Moving a group costs its number of entries, at most
``n_draws * min(group size, K_s)``, instead of ``n_draws * group size``.  The expected
loss of each option is the loss of the whole state with the group in that cluster
(:func:`~dpclust.partitions.losses.loss_value` for every draw), so any loss of
:mod:`~dpclust.partitions.losses` works unchanged; for VI and Binder, which are linear in
the sums, only the change of the sums that differ between the options is read, at the cost
of the group's entries per option.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .draws import canonical_labels
from .losses import _BINDER, _VI, loss_value

__all__ = ["as_groups", "group_entries", "group_labels"]


def as_groups(groups, n_samples: int) -> np.ndarray:
    """``groups`` (one integer per point) numbered ``0 .. G - 1`` in order of first
    appearance, checked: the same groups give the same search however they are numbered
    (in-process by the family's distinct rows, on a Dask cluster by the rows' digests)."""
    values = np.asarray(groups)
    if values.shape != (n_samples,):
        raise ValueError(f"groups must hold one integer per point, shape ({n_samples},); "
                         f"got shape {values.shape}")
    if values.size and not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"groups must be integers, got dtype {values.dtype}")
    if not values.size:
        return np.zeros(0, dtype=np.int64)
    return canonical_labels(values).astype(np.int64)


def group_entries(zr: np.ndarray, groups: np.ndarray, n_rows: int):
    """Each group's entries (the module's comment): ``ptr`` (group ``g``'s entries are
    ``ptr[g]:ptr[g + 1]``), their draws, draw clusters and counts, and the groups' sizes.

    ``zr[i, s]`` is point ``i``'s cluster in draw ``s`` among the ``n_rows`` clusters of
    all draws; ``groups`` numbers the points' groups ``0 .. G - 1``."""
    n_groups = int(groups.max()) + 1
    draw_of_row = np.empty(n_rows, dtype=np.int64)
    draw_of_row[zr] = np.arange(zr.shape[1])[None, :]
    key = groups[:, None].astype(np.int64) * n_rows + zr
    key, count = np.unique(key.reshape(-1), return_counts=True)
    group, row = np.divmod(key, n_rows)
    ptr = np.searchsorted(group, np.arange(n_groups + 1)).astype(np.int64)
    sizes = np.bincount(groups, minlength=n_groups).astype(np.int64)
    return (ptr, draw_of_row[row], row.astype(np.int64), count.astype(np.int64), sizes)


def group_labels(labels: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Each group's label from point ``labels``: the cluster holding most of its points
    (ties: the lower label)."""
    labels = np.asarray(labels, dtype=np.int64)
    k = int(labels.max()) + 1
    table = np.bincount(groups * k + labels, minlength=n_groups * k).reshape(n_groups, k)
    return np.argmax(table, axis=1).astype(np.int64)


# ---------------------------------------------------------------------------------------
# numba kernels: the state is the search's (``search._Run``) with ``labels`` one per
# group; ``entries`` is the tuple (ptr, draws, draw clusters, counts, group sizes)
# ---------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _shift(g, j, sign, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Put group ``g`` in cluster ``j`` (``sign`` 1) or take it out (``sign`` -1)."""
    ptr, es, er, ec, wg = entries
    for e in range(ptr[g], ptr[g + 1]):
        s, r, k = es[e], er[e], sign * ec[e]
        c = counts[r, j]
        s_cz[s] += f[c + k] - f[c]
        counts[r, j] = c + k
        b = bsize[r]
        s_z[s] += f[b + k] - f[b]
        bsize[r] = b + k
    m, k = sizes[j], sign * wg[g]
    tot[0] += f[m + k] - f[m]
    tot[1] += k
    sizes[j] = m + k
    labels[g] = j if sign > 0 else -1


@njit(cache=True, nogil=True)
def _sums_loss(code, a, w, s_z, s_cz, tot):
    total = 0.0
    for s in range(w.shape[0]):
        total += w[s] * loss_value(code, a, tot[1], tot[0], s_z[s], s_cz[s])
    return total


@njit(cache=True, nogil=True)
def _options(sizes, opts):
    """Fill ``opts`` with the occupied clusters and the first empty slot; returns their
    number and whether every slot was taken (no new cluster could be offered)."""
    n_opts = 0
    empty = -1
    for j in range(sizes.shape[0]):
        if sizes[j] > 0:
            opts[n_opts] = j
            n_opts += 1
        elif empty < 0:
            empty = j
    if empty < 0:
        return n_opts, True
    opts[n_opts] = empty
    return n_opts + 1, False


@njit(cache=True, nogil=True)
def _linear_scores(g, entries, w, f, a, sizes, counts, opts, n_opts, score):
    """VI and Binder are linear in the sums, and only ``S_c`` and the draws' ``S_cz``
    differ between the options for group ``g`` (taken out): each option's score is its
    change of ``(2 - a) S_c - 2 sum_s w_s S_cz,s``, read from the group's entries."""
    ptr, es, er, ec, wg = entries
    for t in range(n_opts):
        j = opts[t]
        total = 0.0
        for e in range(ptr[g], ptr[g + 1]):
            c = counts[er[e], j]
            total += w[es[e]] * (f[c + ec[e]] - f[c])
        m = sizes[j]
        score[t] = (2.0 - a) * (f[m + wg[g]] - f[m]) - 2.0 * total


@njit(cache=True, nogil=True)
def _allocate(items, entries, w, f, code, a, labels, sizes, counts, bsize, s_z, s_cz, tot,
              opts, score):
    """Put each group of ``items``, in order, in the cluster (or a new one) with least
    expected loss, taking it out of its own first; its own cluster wins ties.  Returns the
    number of groups moved and whether a new cluster was wanted with every slot taken."""
    moves = 0
    full = False
    saved_z, saved_cz, saved_tot = s_z.copy(), s_cz.copy(), tot.copy()
    for idx in range(items.shape[0]):
        g = items[idx]
        prev = labels[g]
        if prev >= 0:
            _shift(g, prev, -1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
        n_opts, no_slot = _options(sizes, opts)
        full = full or no_slot
        if code == _VI or code == _BINDER:
            _linear_scores(g, entries, w, f, a, sizes, counts, opts, n_opts, score)
        else:
            saved_z[:] = s_z
            saved_cz[:] = s_cz
            saved_tot[:] = tot
            for t in range(n_opts):  # each option scored on the whole state, then undone
                _shift(g, opts[t], 1, entries, f, labels, sizes, counts, bsize, s_z, s_cz,
                       tot)
                score[t] = _sums_loss(code, a, w, s_z, s_cz, tot)
                _shift(g, opts[t], -1, entries, f, labels, sizes, counts, bsize, s_z, s_cz,
                       tot)
                s_z[:] = saved_z  # the integer counts are restored exactly, the sums so
                s_cz[:] = saved_cz
                tot[:] = saved_tot
        best = 0
        for t in range(1, n_opts):
            if score[t] < score[best]:
                best = t
        j = opts[best]
        if prev >= 0:
            tol = 1e-11 * (abs(score[best]) + 1.0)
            for t in range(n_opts):
                if opts[t] == prev and score[t] <= score[best] + tol:
                    j = prev
        if j != prev:
            moves += 1
        _shift(g, j, 1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
    return moves, full


@njit(cache=True, nogil=True)
def _place(target, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Put every group in its cluster of ``target`` (an empty state)."""
    for g in range(target.shape[0]):
        _shift(g, target[g], 1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)


@njit(cache=True, nogil=True)
def _take_out(items, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    for idx in range(items.shape[0]):
        g = items[idx]
        _shift(g, labels[g], -1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)


@njit(cache=True, nogil=True)
def _put_back(items, j, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Move the groups ``items`` (placed) to cluster ``j``."""
    for idx in range(items.shape[0]):
        g = items[idx]
        _shift(g, labels[g], -1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
        _shift(g, j, 1, entries, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
