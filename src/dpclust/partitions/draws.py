"""Sampled partitions as arrays: canonical labels, distinct rows and the co-clustering
matrix.

A Dirichlet-process mixture sampler returns *draws*: an integer array of shape
``(n_draws, n_samples)`` whose rows are partitions of the same ``n_samples`` points.  Labels
carry no meaning across draws (label switching), so everything in :mod:`dpclust.partitions`
looks only at the partition a row induces; this module puts rows in the canonical form the
rest works on.  The hot loops are numba kernels taking arrays only; their plain-NumPy
counterparts live in ``tests/test_partitions.py``.
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit

#: relative gap below which two expected losses count as a tie (rounding of sums taken in
#: another order is ~1e-15; distinct partitions often tie exactly, e.g. mirror images)
_TIE_RTOL = 1e-9


@njit(cache=True)
def _canonical_kernel(codes, n_codes):
    """Relabel each row of non-negative ``codes`` by order of first appearance.

    ``codes`` has shape (n_rows, n_samples) with values in ``[0, n_codes)``.  Returns the
    relabelled int64 array and the number of clusters of each row.
    """
    n_rows, n_samples = codes.shape
    out = np.empty((n_rows, n_samples), dtype=np.int64)
    n_clusters = np.empty(n_rows, dtype=np.int64)
    lookup = np.full(n_codes, -1, dtype=np.int64)
    for r in range(n_rows):
        k = 0
        for i in range(n_samples):
            c = codes[r, i]
            if lookup[c] < 0:
                lookup[c] = k
                k += 1
            out[r, i] = lookup[c]
        n_clusters[r] = k
        for i in range(n_samples):  # reset only what this row touched
            lookup[codes[r, i]] = -1
    return out, n_clusters


@njit(cache=True)
def _group_kernel(z, n_clusters, order, start):
    """Counting sort of one canonical row ``z`` by cluster.

    Fills ``order`` (shape (n_samples,)) with the point indices grouped by cluster, in
    increasing index within a cluster, and ``start`` (at least ``n_clusters + 1`` long) so
    that cluster ``k`` is ``order[start[k]:start[k + 1]]``.
    """
    for k in range(n_clusters + 1):
        start[k] = 0
    for i in range(z.shape[0]):
        start[z[i] + 1] += 1
    for k in range(n_clusters):
        start[k + 1] += start[k]
    fill = start[:n_clusters].copy()
    for i in range(z.shape[0]):
        k = z[i]
        order[fill[k]] = i
        fill[k] += 1


@njit(cache=True)
def _similarity_kernel(z, n_clusters):
    """Co-clustering counts: ``P[i, j]`` = number of rows of ``z`` with ``z[s, i] == z[s, j]``.

    Cost ``O(sum_s sum_k n_sk^2)``, at most ``O(n_draws * n_samples^2)``; only pairs within
    a cluster are visited.
    """
    n_draws, n_samples = z.shape
    counts = np.zeros((n_samples, n_samples), dtype=np.float64)
    order = np.empty(n_samples, dtype=np.int64)
    start = np.empty(n_samples + 1, dtype=np.int64)
    for s in range(n_draws):
        _group_kernel(z[s], n_clusters[s], order, start)
        for k in range(n_clusters[s]):
            for a in range(start[k], start[k + 1]):
                i = order[a]
                for b in range(a + 1, start[k + 1]):
                    j = order[b]
                    counts[i, j] += 1.0
                    counts[j, i] += 1.0
    for i in range(n_samples):
        counts[i, i] = n_draws
    return counts



# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _as_draws(draws, name: str = "draws") -> np.ndarray:
    """Validate a non-empty array of partitions: 2-D (draws, samples), or 3-D (chains,
    draws, samples) as a fitted estimator's ``trace_.labels``, whose chains are pooled."""
    draws = np.asarray(draws)
    if draws.ndim == 3:
        draws = draws.reshape(-1, draws.shape[-1])
    if draws.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_{name}, n_samples), got an array of "
            f"shape {draws.shape}; wrap a single partition as labels[None, :]"
        )
    if draws.shape[0] == 0 or draws.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {draws.shape})")
    return draws


def _canonical_2d(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical labels and cluster counts of each row of a validated 2-D array."""
    if (
        np.issubdtype(labels.dtype, np.integer)
        and labels.min() >= 0
        and labels.max() < max(labels.size, 1024)
    ):
        codes = labels.astype(np.int64, copy=False)
        n_codes = int(codes.max()) + 1
    else:  # arbitrary labels: compress to 0..K-1 first
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.reshape(labels.shape).astype(np.int64, copy=False)
        n_codes = int(codes.max()) + 1
    return _canonical_kernel(np.ascontiguousarray(codes), n_codes)


def _unique_rows(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a canonical array, by hashing, in order of first appearance.

    Returns ``first`` (index of each distinct row's first occurrence), ``inverse`` (for each
    row, the index of its distinct row) and ``counts``.
    """
    seen: dict[bytes, int] = {}
    first: list[int] = []
    inverse = np.empty(z.shape[0], dtype=np.intp)
    for s in range(z.shape[0]):
        key = z[s].tobytes()
        u = seen.get(key)
        if u is None:
            u = len(first)
            seen[key] = u
            first.append(s)
        inverse[s] = u
    return np.asarray(first, dtype=np.intp), inverse, np.bincount(inverse)


def _evenly_spaced(n_total: int, n_keep, name: str) -> np.ndarray:
    """Indices of ``n_keep`` rows spread evenly over ``n_total`` (all rows if ``None``)."""
    if n_keep is None:
        return np.arange(n_total)
    if isinstance(n_keep, bool) or not isinstance(n_keep, (int, np.integer)) or n_keep < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {n_keep!r}")
    if n_keep >= n_total:
        return np.arange(n_total)
    return np.unique(np.round(np.linspace(0, n_total - 1, int(n_keep))).astype(np.intp))


def _check_n_jobs(n_jobs) -> int:
    """Resolve ``n_jobs`` as in scikit-learn: None -> 1, -1 -> every available CPU."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs < 0:
        if hasattr(os, "sched_getaffinity"):
            n_cpus = len(os.sched_getaffinity(0))
        else:
            n_cpus = os.cpu_count() or 1
        return max(n_cpus + 1 + int(n_jobs), 1)
    return int(n_jobs)


def first_minimum(values) -> int:
    """Index of the first value within ``_TIE_RTOL`` (relative) of the minimum: ties of
    expected losses go to the earliest candidate whatever order their sums were added in
    (here, or over a Dask cluster's partitions)."""
    values = np.asarray(values, dtype=np.float64)
    low = float(values.min())
    return int(np.flatnonzero(values <= low + _TIE_RTOL * max(abs(low), 1e-300))[0])


def canonical_labels(labels) -> np.ndarray:
    """Relabel partitions by order of first appearance.

    The first point gets label 0, the next point in a new cluster label 1, and so on, so
    two label vectors describe the same partition exactly when their canonical labels are
    equal.

    Parameters
    ----------
    labels : array-like of shape (n_samples,) or (n_draws, n_samples)
        One partition, or one partition per row.  Labels may be any values that
        :func:`numpy.unique` can sort.

    Returns
    -------
    canonical : ndarray of int64, same shape as ``labels``
        Rows relabelled independently.

    Raises
    ------
    ValueError
        If ``labels`` is not 1-D or 2-D, or is empty.

    Examples
    --------
    >>> canonical_labels([3, 3, 1, 7, 1])
    array([0, 0, 1, 2, 1])
    """
    labels = np.asarray(labels)
    if labels.ndim not in (1, 2):
        raise ValueError(
            f"labels must be 1-D (one partition) or 2-D (one per row), got shape {labels.shape}"
        )
    if labels.size == 0:
        raise ValueError(f"labels is empty (shape {labels.shape})")
    z, _ = _canonical_2d(labels.reshape(-1, labels.shape[-1]))
    return z.reshape(labels.shape)


def posterior_similarity(draws, *, max_samples: int = 10_000) -> np.ndarray:
    """Posterior similarity (co-clustering) matrix of sampled partitions.

    Parameters
    ----------
    draws : array-like of shape (n_draws, n_samples)
        Sampled partitions, one per row.
    max_samples : int, default=10_000
        Refuse inputs with more points than this, since the result takes
        ``8 * n_samples**2`` bytes (800 MB at 10 000 points).

    Returns
    -------
    similarity : ndarray of shape (n_samples, n_samples), dtype float64
        ``similarity[i, j]`` is the fraction of draws in which points ``i`` and ``j`` are in
        the same cluster; symmetric with unit diagonal.

    Raises
    ------
    ValueError
        If ``draws`` is not a non-empty 2-D array or ``n_samples > max_samples``.

    Notes
    -----
    Cost ``O(sum_s sum_k n_sk^2)`` where ``n_sk`` are the cluster sizes of draw ``s``: only
    pairs inside a cluster are visited.

    References
    ----------
    Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
    credible balls. *Bayesian Analysis* 13(2), 559-626.
    """
    draws = _as_draws(draws)
    n_samples = draws.shape[1]
    if n_samples > max_samples:
        raise ValueError(
            f"posterior_similarity needs an n_samples x n_samples matrix; n_samples = "
            f"{n_samples} exceeds max_samples = {max_samples} "
            f"({8 * n_samples**2 / 1e9:.1f} GB). Raise max_samples if you have the memory, "
            "or use expected_loss / point_estimate, which never build it"
        )
    z, n_clusters = _canonical_2d(draws)
    similarity = _similarity_kernel(z, n_clusters)
    similarity /= draws.shape[0]
    return similarity


