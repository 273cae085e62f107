"""Comparing two partitions of the same points.

Every function takes two label vectors ``a`` and ``b`` of shape ``(n_samples,)``; labels may
be any values that :func:`numpy.unique` can sort (integers, strings, ...), and only the
partition they induce matters, so every score is invariant to relabelling.  All scores are
computed from the contingency table in ``O(n_samples + K_a * K_b)``.

The conventions (natural logarithms, edge cases) follow :mod:`sklearn.metrics` where
scikit-learn has the score, so results can be compared directly.

References
----------
Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of Classification* 2(1),
193-218.
Meila, M. (2007). Comparing clusterings - an information based distance. *Journal of
Multivariate Analysis* 98(5), 873-895.
Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic measures for clusterings
comparison. *Journal of Machine Learning Research* 11, 2837-2854.
"""

from __future__ import annotations

import numpy as np

__all__ = ["contingency_table", "variation_of_information", "nmi", "ari"]

_AVERAGE_METHODS = ("min", "geometric", "arithmetic", "max")


def _check_label_pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Validate two label vectors: 1-D, non-empty, same length."""
    a = np.asarray(a)
    b = np.asarray(b)
    for name, labels in (("a", a), ("b", b)):
        if labels.ndim != 1:
            raise ValueError(
                f"{name} must be a 1-D label vector, got an array of shape {labels.shape}"
            )
        if labels.shape[0] == 0:
            raise ValueError(f"{name} is empty; need at least one labelled point")
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"a and b must label the same points, got lengths {a.shape[0]} and {b.shape[0]}"
        )
    return a, b


def _table(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Contingency table of two validated label vectors."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    ia = ia.reshape(-1)  # NumPy 2.0.0 kept the input's shape; later versions are 1-D anyway
    ib = ib.reshape(-1)
    k_a = int(ia.max()) + 1
    k_b = int(ib.max()) + 1
    flat = np.bincount(ia * k_b + ib, minlength=k_a * k_b)
    return flat.reshape(k_a, k_b).astype(np.int64, copy=False)


def _sum_xlogx(counts: np.ndarray) -> float:
    """``sum_k c_k log c_k`` over the positive entries of ``counts``."""
    c = counts[counts > 0].astype(np.float64)
    return float(np.sum(c * np.log(c)))


def _entropy(counts: np.ndarray, n_samples: int) -> float:
    """Entropy (nats) of the partition with cluster sizes ``counts``.

    Summed as ``sum_k (c_k / n) (log n - log c_k)``, term by term like
    :func:`_mutual_information`, so that ``I(U, U) == H(U)`` exactly.
    """
    c = counts[counts > 0].astype(np.float64)
    return float(np.sum((c / n_samples) * (np.log(n_samples) - np.log(c))))


def contingency_table(a, b) -> np.ndarray:
    """Contingency table of two partitions.

    Parameters
    ----------
    a : array-like of shape (n_samples,)
        Labels of the first partition.
    b : array-like of shape (n_samples,)
        Labels of the second partition.

    Returns
    -------
    table : ndarray of shape (n_clusters_a, n_clusters_b), dtype int64
        ``table[i, j]`` is the number of points with the ``i``-th smallest label of ``a`` and
        the ``j``-th smallest label of ``b``.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not 1-D, is empty, or their lengths differ.
    """
    a, b = _check_label_pair(a, b)
    return _table(a, b)


def variation_of_information(a, b) -> float:
    """Variation of information between two partitions (Meila 2007).

    ``VI(U, V) = H(U) + H(V) - 2 I(U, V) = H(U | V) + H(V | U)``, in nats.  It is a metric
    on partitions, 0 exactly when the partitions agree up to relabelling and at most
    ``log(n_samples)``; it is ``log(n_samples)`` between one cluster and all singletons.

    Parameters
    ----------
    a : array-like of shape (n_samples,)
        Labels of the first partition.
    b : array-like of shape (n_samples,)
        Labels of the second partition.

    Returns
    -------
    vi : float
        The variation of information (natural logarithm), ``>= 0``.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not 1-D, is empty, or their lengths differ.

    Notes
    -----
    With table counts ``n_ij``, row sums ``a_i`` and column sums ``b_j``,
    ``VI = (sum_i a_i log a_i + sum_j b_j log b_j - 2 sum_ij n_ij log n_ij) / n``, which
    needs no division inside the logarithms.

    References
    ----------
    Meila, M. (2007). Comparing clusterings - an information based distance. *Journal of
    Multivariate Analysis* 98(5), 873-895.
    """
    a, b = _check_label_pair(a, b)
    table = _table(a, b)
    n_samples = a.shape[0]
    vi = (
        _sum_xlogx(table.sum(axis=1)) + _sum_xlogx(table.sum(axis=0)) - 2.0 * _sum_xlogx(table)
    ) / n_samples
    return max(float(vi), 0.0)


def _mutual_information(table: np.ndarray) -> float:
    """Mutual information (nats) from a contingency table, as in scikit-learn.

    Terms smaller than machine epsilon in magnitude are set to zero and the sum is clipped
    at zero, so that independent partitions give exactly ``0.0`` (which :func:`nmi` relies on
    for its edge cases).
    """
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    if rows.size == 1 or cols.size == 1:
        return 0.0
    i, j = np.nonzero(table)
    n_ij = table[i, j].astype(np.float64)
    n = float(table.sum())
    log_rows = np.log(rows.astype(np.float64))
    log_cols = np.log(cols.astype(np.float64))
    # (log n - log a_i) + (log n_ij - log b_j): for identical partitions the second bracket
    # is exactly 0 and the sum is exactly H(U), so nmi(a, a) == 1.0.
    terms = (n_ij / n) * ((np.log(n) - log_rows[i]) + (np.log(n_ij) - log_cols[j]))
    terms[np.abs(terms) < np.finfo(np.float64).eps] = 0.0
    return max(float(terms.sum()), 0.0)


def nmi(a, b, average_method: str = "arithmetic") -> float:
    """Normalised mutual information between two partitions.

    ``NMI = I(U, V) / mean(H(U), H(V))`` for the chosen generalised mean.  Same conventions
    as :func:`sklearn.metrics.normalized_mutual_info_score`: if both partitions have a single
    cluster the score is ``1.0``; otherwise, if the mutual information is zero (in
    particular when exactly one partition has a single cluster), it is ``0.0``.

    Parameters
    ----------
    a : array-like of shape (n_samples,)
        Labels of the first partition.
    b : array-like of shape (n_samples,)
        Labels of the second partition.
    average_method : {"arithmetic", "geometric", "min", "max"}, default="arithmetic"
        How the two entropies are averaged into the normaliser.

    Returns
    -------
    score : float
        Between 0 and 1; 1 for identical partitions (up to relabelling).

    Raises
    ------
    ValueError
        If the label vectors are invalid (see :func:`contingency_table`) or
        ``average_method`` is unknown.

    References
    ----------
    Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic measures for
    clusterings comparison. *Journal of Machine Learning Research* 11, 2837-2854.
    """
    if average_method not in _AVERAGE_METHODS:
        raise ValueError(
            f"average_method must be one of {_AVERAGE_METHODS}, got {average_method!r}"
        )
    a, b = _check_label_pair(a, b)
    table = _table(a, b)
    if table.shape[0] == 1 and table.shape[1] == 1:
        return 1.0
    mi = _mutual_information(table)
    if mi == 0.0:
        return 0.0
    n_samples = a.shape[0]
    h_a = _entropy(table.sum(axis=1), n_samples)
    h_b = _entropy(table.sum(axis=0), n_samples)
    if average_method == "min":
        normaliser = min(h_a, h_b)
    elif average_method == "geometric":
        normaliser = np.sqrt(h_a * h_b)
    elif average_method == "arithmetic":
        normaliser = 0.5 * (h_a + h_b)
    else:
        normaliser = max(h_a, h_b)
    return float(mi / normaliser)


def ari(a, b) -> float:
    """Adjusted Rand index between two partitions (Hubert & Arabie 1985).

    The Rand index (fraction of point pairs on which the partitions agree about
    co-clustering) corrected for chance under the permutation model.  Same as
    :func:`sklearn.metrics.adjusted_rand_score`, including its edge case: ``1.0`` whenever no
    pair is clustered together in one partition and apart in the other (identical
    partitions, a single point, ...).

    Parameters
    ----------
    a : array-like of shape (n_samples,)
        Labels of the first partition.
    b : array-like of shape (n_samples,)
        Labels of the second partition.

    Returns
    -------
    score : float
        At most 1; 1 for identical partitions, about 0 for independent ones, possibly
        negative.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not 1-D, is empty, or their lengths differ.

    References
    ----------
    Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of Classification*
    2(1), 193-218.
    """
    a, b = _check_label_pair(a, b)
    table = _table(a, b)
    n = int(a.shape[0])
    # Ordered-pair confusion counts; Python ints so products cannot overflow.
    sum_sq = int(np.sum(table.astype(object) ** 2))
    sum_sq_rows = int(np.sum(table.sum(axis=1).astype(object) ** 2))
    sum_sq_cols = int(np.sum(table.sum(axis=0).astype(object) ** 2))
    tp = sum_sq - n  # together in both
    fp = sum_sq_cols - sum_sq  # apart in a, together in b
    fn = sum_sq_rows - sum_sq  # together in a, apart in b
    tn = n * n - fp - fn - sum_sq  # apart in both
    if fn == 0 and fp == 0:
        return 1.0
    return float(2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))
