"""What the sub-cluster sampler carries from one iteration to the next
(:class:`SubclusterState`), what its passes return (:class:`PassResult`,
:class:`LaunchResult`), and the state that the exact moves leave.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class SubclusterState(NamedTuple):
    """Everything the next iteration needs; statistics are per sub-cluster (slot ``2k + s``).

    ``age[k]`` counts the data passes since cluster k's sub-clusters were (re)initialised (0:
    its sub-labels are stale and the next pass draws them afresh).  ``anchors[k]`` is a member
    of cluster k drawn uniformly given the labels.  ``sub_loglik[k]`` is the sub-clusters'
    log-likelihood at the last pass (to see them burn in); ``split_best[k]`` the highest log
    target ratio of their split proposed so far (-inf: none yet), to tell sub-clusters that
    are still separating from stuck ones.
    """

    labels: np.ndarray
    sublabels: np.ndarray
    alpha: float
    age: np.ndarray
    sub_stats: Any
    anchors: np.ndarray
    sub_loglik: np.ndarray
    split_best: np.ndarray | None = None


class PassResult(NamedTuple):
    """What the data pass returns: new labels and codes (sub-label + 2 x random-split side)
    and, per slot (``2k + s``, then the random split's two halves), statistics, counts, the
    smallest member index, a uniformly chosen member with its key (the member of a union of
    slots is the one with the smaller key) and the sub-cluster log-likelihood.  On a Dask
    cluster ``labels`` and ``codes`` are handles to arrays that stay on the workers."""

    labels: Any
    codes: Any
    stats: Any
    counts: np.ndarray
    first: np.ndarray
    member: np.ndarray
    member_key: np.ndarray
    loglik: np.ndarray


class LaunchResult(NamedTuple):
    """What a launch pass returns: the labels it read and the sides (``codes``; handles to
    arrays on a Dask cluster), the 2B sides' statistics, counts per slot (K clusters then the
    2B sides), first and a uniform member per slot, and ``logq`` per move (``log q`` of the
    allocation and of its mirror image)."""

    labels: Any
    codes: Any
    stats: Any
    counts: np.ndarray
    first: np.ndarray
    member: np.ndarray
    logq: np.ndarray
    member_key: np.ndarray
    logf: Any = None  # the sides' log marginals, where a sequential move counted them


def _state_of_clusters(fam, labels, sublabels, alpha, cluster_stats, anchors):
    """The state after split-merge moves: clusters ``cluster_stats`` (canonical order) with
    ``anchors``, each cluster's statistics in its first sub-cluster slot and none in the
    second, fresh sub-clusters (age 1, nothing scored yet)."""
    k = len(anchors)
    empty = fam.empty_stats(k)
    sub_stats = type(cluster_stats)(*(
        np.stack([np.asarray(a), np.asarray(e)], axis=1).reshape((2 * k,) + np.shape(a)[1:])
        for a, e in zip(cluster_stats, empty)))
    return SubclusterState(labels, sublabels, alpha, np.ones(k, dtype=np.int64), sub_stats,
                           anchors, np.full(k, -np.inf), np.full(k, -np.inf))
