"""How sure the posterior is of each point and each cluster of a point estimate."""

from __future__ import annotations

import numpy as np

__all__ = ["point_certainty", "cluster_presence"]


def point_certainty(draws, labels) -> np.ndarray:
    """How surely each point belongs to its cluster of the point estimate ``labels``.

    In each draw s, the *core* of a cluster k of ``labels`` is the draw's cluster that holds
    most of k's points; point i's certainty is the fraction of draws in which it lies in the
    core of its cluster: an estimate of the posterior probability that it shares a cluster
    with the bulk of its point-estimate cluster.  Relabelling a draw changes nothing; a point
    whose cluster splits off in half the draws gets about 0.5.

    Parameters
    ----------
    draws : iterable of array-like of shape (n_samples,)
        Partitions (integer labels), e.g. an estimator's kept draws.
    labels : array-like of shape (n_samples,)
        The point estimate (labels ``0 .. K - 1``).

    Returns
    -------
    certainty : ndarray of shape (n_samples,), values in [0, 1]
    """
    z = _point_estimate_labels(labels)
    hits, n_draws = np.zeros(z.size), 0
    for d, _, core in _cores(draws, z):
        hits += d == core[z]
        n_draws += 1
    if n_draws == 0:
        raise ValueError("point_certainty needs at least one draw")
    return hits / n_draws


def cluster_presence(draws, labels) -> np.ndarray:
    """How surely each cluster of the point estimate ``labels`` exists in the posterior.

    Cluster k *appears* in a draw when the draw's cluster holding most of k's points (its
    core, as in :func:`point_certainty`) holds more than half of k's points and is made of
    k's points for more than half: the draw has a cluster that is mostly k and that k is
    mostly in.  A cluster's presence is the share of draws in which it appears: near 1 for a
    cluster every draw has, near 0.5 for one that half the draws merge into another or
    split, near 0 for one the posterior does not support.

    Parameters
    ----------
    draws : iterable of array-like of shape (n_samples,)
        Partitions (integer labels), e.g. an estimator's kept draws.
    labels : array-like of shape (n_samples,)
        The point estimate (labels ``0 .. K - 1``).

    Returns
    -------
    presence : ndarray of shape (K,), values in [0, 1]
    """
    z = _point_estimate_labels(labels)
    sizes = np.bincount(z)
    hits, n_draws = np.zeros(len(sizes)), 0
    for _, table, core in _cores(draws, z):
        shared = table[np.arange(len(sizes)), core]
        hits += (2 * shared > sizes) & (2 * shared > table.sum(axis=0)[core])
        n_draws += 1
    if n_draws == 0:
        raise ValueError("cluster_presence needs at least one draw")
    return hits / n_draws


def _point_estimate_labels(labels) -> np.ndarray:
    z = np.asarray(labels, dtype=np.int64)
    if z.ndim != 1 or (z.size and z.min() < 0):
        raise ValueError("labels must be a 1-D array of labels 0 .. K - 1")
    return z


def _cores(draws, z):
    """For each draw: its labels renumbered ``0 .. J - 1``, the (K, J) table of how many
    points of each cluster of ``z`` it puts in each of its clusters, and each cluster's core
    (the draw's cluster holding most of its points)."""
    K = int(z.max()) + 1 if z.size else 0
    for draw in draws:
        d = np.asarray(draw, dtype=np.int64)
        if d.shape != z.shape:
            raise ValueError(f"a draw has shape {d.shape}, the labels {z.shape}")
        _, d = np.unique(d, return_inverse=True)
        J = int(d.max()) + 1 if d.size else 0
        table = np.bincount(z * J + d, minlength=K * J).reshape(K, J)
        yield d, table, table.argmax(axis=1)
