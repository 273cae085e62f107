"""k-means starts of a chain: a starting partition (:func:`kmeans_labels`) or the centres
whose nearest points form it where the data lie elsewhere (:func:`kmeans_centres`, the
partitioned data of :func:`dpclust.samplers._partitioned.kmeans_start`)."""

from __future__ import annotations

import warnings

import numpy as np

from ..partitions import canonical_labels


def kmeans_labels(rng, features, n_clusters: int, max_iter: int = 20) -> np.ndarray:
    """A starting partition from k-means (k-means++ seeds, at most ``max_iter`` Lloyd
    iterations) on ``features`` (rows are points; dense or sparse).

    Sub-cluster splits are binary and, in many dimensions, find the split of a cluster
    that mixes several groups slowly; merges of too many clusters are found at once.  A
    k-means start with about as many clusters as expected or more gets the chain to the
    posterior's bulk far sooner than one cluster or a random partition.
    """
    from sklearn.cluster import KMeans

    n = features.shape[0]
    k = int(min(n_clusters, n))
    if k <= 1:
        return np.zeros(n, dtype=np.int64)
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters=k, n_init=1, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: fewer distinct points than k
        labels = km.fit_predict(features)
    return canonical_labels(np.asarray(labels, dtype=np.int64))


def kmeans_centres(rng, features, n_clusters: int, max_iter: int = 20) -> np.ndarray:
    """The centres of k-means (k-means++ seeds, at most ``max_iter`` Lloyd iterations) on
    ``features``, shape ``(min(n_clusters, n_rows), n_features)``: the k-means of
    :func:`kmeans_labels`, for a start whose points are assigned elsewhere (the sampled
    k-means of :func:`dpclust.samplers._partitioned.kmeans_start`)."""
    from sklearn.cluster import KMeans

    k = int(min(n_clusters, features.shape[0]))
    seed = int(rng.integers(2**31 - 1))
    if k <= 1:
        centre = np.asarray(features.mean(axis=0), dtype=np.float64).reshape(1, -1)
        return centre[:k]
    km = KMeans(n_clusters=k, n_init=1, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: fewer distinct points than k
        km.fit(features)
    return np.asarray(km.cluster_centers_, dtype=np.float64)
