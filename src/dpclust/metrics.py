"""Comparing two partitions of the same points.

Every function takes two label vectors ``a`` and ``b`` of shape ``(n_samples,)``; labels may
be any values that :func:`numpy.unique` can sort (integers, strings, ...), and only the
partition they induce matters, so every score is invariant to relabelling.

The normalised mutual information, the adjusted Rand index and the contingency table are
scikit-learn's (:func:`sklearn.metrics.normalized_mutual_info_score`,
:func:`sklearn.metrics.adjusted_rand_score`, :func:`sklearn.metrics.cluster.
contingency_matrix`), behind one validation that names the problem; scikit-learn has no
variation of information (Meila 2007), the distance of Meilă & Chen's (2010) experiments,
which is computed here from the contingency table in ``O(n_samples + K_a * K_b)``.

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
    """Contingency table of two validated label vectors (scikit-learn's, dense int64)."""
    from sklearn.metrics.cluster import contingency_matrix

    return np.asarray(contingency_matrix(a, b), dtype=np.int64)


def _sum_xlogx(counts: np.ndarray) -> float:
    """``sum_k c_k log c_k`` over the positive entries of ``counts``."""
    c = counts[counts > 0].astype(np.float64)
    return float(np.sum(c * np.log(c)))


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


def nmi(a, b, average_method: str = "arithmetic") -> float:
    """Normalised mutual information between two partitions
    (:func:`sklearn.metrics.normalized_mutual_info_score`).

    ``NMI = I(U, V) / mean(H(U), H(V))`` for the chosen generalised mean.  scikit-learn's
    conventions: if both partitions have a single
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
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(a, b, average_method=average_method))


def ari(a, b) -> float:
    """Adjusted Rand index between two partitions (Hubert & Arabie 1985;
    :func:`sklearn.metrics.adjusted_rand_score`).

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
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(a, b))
