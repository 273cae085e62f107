"""Fused clusters: FOLD, fusing of localized densities (Dombowsky & Dunson 2024).

A mixture whose components do not have the shape of the data's groups (a skewed or heavy
tailed group under Gaussian components) describes each group with several components, and
its partition posterior, which clusters by component, splits the group.  FOLD clusters by
the *densities* of the components instead.  In every posterior draw ``s``, point ``i`` sits
in component ``z_i`` with parameters ``theta_{z_i}``; the distance between points ``i`` and
``j`` is the Hellinger distance between their localized densities,

    Delta_ij = H(f(. | theta_{z_i}), f(. | theta_{z_j}))     (0 when z_i = z_j),

and a partition ``c`` has the loss

    L(c) = sum_{i<j} [ 1{c_i = c_j} Delta_ij + omega 1{c_i != c_j} (1 - Delta_ij) ],

whose posterior expectation replaces ``Delta`` by its posterior mean ``Dbar`` (Monte Carlo
over the draws).  Two points are better together when ``Dbar_ij < omega / (1 + omega)``
(with the default ``omega = 1``: when their components are, on average over the draws,
less than 1/2 apart in Hellinger distance, which runs from 0 to 1).  As in the paper, the
candidates are the cuts of the average-linkage tree of ``Dbar`` and the estimate is the cut
of least expected loss.

No ``N x N`` matrix is built.  ``Delta_ij`` depends only on the pair of components of
``i`` and ``j`` in each draw, so on the pairs of **blocks** of a partition that refines
every draw it is one number per pair of blocks: with ``T_s`` the block-by-component
contingency table of draw ``s`` and ``H_s`` its components' Hellinger matrix, the sums of
``Dbar`` over the pairs of points of two blocks are ``mean_s T_s H_s T_s^T`` (``T_s``
sparse: ``O(n_blocks nnz(T_s))`` per draw, ``nnz(T_s) <= n_samples``).  Average linkage started from blocks whose points share
every draw's component is average linkage on the points (those points are at distance 0
from each other and at the same distance from every other point, so it merges them first),
and the expected loss of every cut is exact given the draws.

References
----------
Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized
    densities. Journal of the American Statistical Association (arXiv 2304.00074): the
    loss, its expectation and the average-linkage candidates; ``omega = 1`` and the elbow
    plot of the within-cluster share as in the authors' ``foldcluster`` package.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .families.base import ConjugateFamily, take
from .partitions import canonical_labels, point_estimate
from .partitions.grouped import as_groups
from .utils.checks import check_int, check_labels, check_positive, check_random_state

#: the fine partition that fused clusters are unions of has at most this many blocks
MAX_BLOCKS = 1000


class Fusion(NamedTuple):
    """Fused clusters and what they were chosen from (:func:`fuse`).

    Attributes
    ----------
    labels : ndarray of shape (n_samples,)
        The fused clusters, ``0 .. n_clusters - 1`` in order of first appearance.
    n_clusters : int
    omega : float
        The loss's weight on separating points (``omega / (1 + omega)`` is the mean
        Hellinger distance below which two points are better together).
    expected_loss : ndarray of shape (n_blocks,)
        Posterior expected FOLD loss (summed over all pairs of points) of the cut of the
        tree into ``k`` clusters, at index ``k - 1``.
    within_share : ndarray of shape (n_blocks,)
        Share of ``sum_{i<j} Dbar_ij`` that falls within the clusters of each cut (the
        paper's elbow plot: look for the bend as ``k`` grows).
    delta : ndarray of shape (n_clusters, n_clusters)
        Mean ``Dbar_ij`` over the pairs of points of two fused clusters; on the diagonal,
        over the pairs within a cluster (0 for a cluster of one point).
    tree : ndarray of shape (n_blocks - 1, 4)
        The average-linkage merges of the blocks in the format of
        :func:`scipy.cluster.hierarchy.linkage`: the two merged nodes (blocks are
        ``0 .. n_blocks - 1``, the node of merge ``t`` is ``n_blocks + t``), the mean
        ``Dbar`` between them, and the number of blocks under the new node.
    blocks : ndarray of shape (n_samples,)
        Block of each point: the partition whose unions the candidates are.
    block_sizes : ndarray of shape (n_blocks,)
    exact : bool
        Whether the blocks refine every draw: then the tree is the paper's average-linkage
        tree on the points (up to ties).  Otherwise the fused clusters are unions of blocks
        that some draws cut (see :func:`fuse`, ``max_blocks`` and ``groups``).
    n_draws : int
        Posterior draws averaged over.
    draw_n_clusters : ndarray of shape (n_draws,) or None
        The number of fused clusters that each draw alone gives: FOLD with ``Dbar``
        replaced by that draw's ``Delta`` (:func:`n_fused_per_draw`).  Its spread over the
        draws and chains is what the convergence verdict judges for fused clusters.
    draw_chain : ndarray of shape (n_draws,) or None
        The chain each draw came from (0 for draws given as an array), in order of
        iteration within each chain.
    """

    labels: np.ndarray
    n_clusters: int
    omega: float
    expected_loss: np.ndarray
    within_share: np.ndarray
    delta: np.ndarray
    tree: np.ndarray
    blocks: np.ndarray
    block_sizes: np.ndarray
    exact: bool
    n_draws: int
    draw_n_clusters: np.ndarray | None = None
    draw_chain: np.ndarray | None = None


def _cut(cross, sizes, pairs, k):
    """The tree cut into ``k`` fused clusters: each block's cluster (canonical labels) and
    the mean distance ``Dbar`` between the points of every two clusters (within one: its
    distinct pairs), shape (k, k)."""
    m = len(sizes)
    owner = np.arange(m)
    for a, b in pairs[: m - k]:
        owner[owner == b] = a
    owner = canonical_labels(owner)
    G = np.zeros((m, k))
    G[np.arange(m), owner] = 1.0
    between = G.T @ cross @ G
    csize = G.T @ sizes
    pair_count = np.outer(csize, csize)
    np.fill_diagonal(pair_count, csize * (csize - 1.0))
    return owner, np.divide(between, pair_count, out=np.zeros_like(between),
                            where=pair_count > 0)


def fuse(source, X=None, *, family=None, params=None, omega=1.0, n_clusters=None,
         max_clusters=None, start=None, groups=None, max_blocks=MAX_BLOCKS,
         random_state=0) -> Fusion:
    """Fused clusters of a posterior: the FOLD point estimate (Dombowsky & Dunson 2024).

    Parameters
    ----------
    source : fitted DPMixture, or array-like of shape (n_draws, n_samples)
        A fitted estimator (its pooled kept draws; see Notes), or posterior draws of the
        partition, one per row, each with labels that index its components.
    X : data of n_samples points, optional
        The training data, in any form ``family.validate`` takes.  Needed to draw the
        parameters of draws that have none; an estimator's own by default.
    family : ConjugateFamily, optional
        With draws: the components' family (resolved, or resolved here on ``X``).  An
        estimator's ``family_`` by default.
    params : sequence of NamedTuple or None, optional
        With draws: the parameters of each draw's components (row ``k`` is component
        ``k``), or None for a draw whose parameters are to be drawn.
    omega : float, default=1.0
        Weight of separating two points, ``> 0``: larger gives fewer, larger clusters
        (points go together when ``Dbar < omega / (1 + omega)``).  1 is the value of the
        authors' worked examples; they also choose the number of clusters by the bend of
        ``within_share`` (an elbow plot), which ``n_clusters`` then gives.
    n_clusters : int, optional
        Cut the tree into this many clusters instead of at the least expected loss.
    max_clusters : int, optional
        The cut of least expected loss among those of at most this many clusters (an
        estimator's :meth:`~dpclust.DPMixture.fuse` passes its ``n_clusters_``, so that
        fusing only joins the clusters a reader already sees).
    start : array-like of shape (n_samples,), optional
        The partition the blocks refine: by default the estimator's ``labels_``, or the
        variation-of-information point estimate of the draws.
    groups : array-like of shape (n_samples,), optional
        One integer per point: points of a group go to one fused cluster (the blocks that
        hold a group's points are joined).  An estimator's by default: the identical rows
        and a row's copies that ``labels_`` keeps together
        (:attr:`~dpclust.samplers.MixtureModel.estimate_groups`).
    max_blocks : int, default=1000
        Most blocks.  The blocks are the common refinement of ``start`` and every draw when
        it has at most ``max_blocks`` blocks (exact: ``Fusion.exact``).  Otherwise they are
        its ``max_blocks - K`` largest blocks (the points every draw agrees on) and, for
        each of the ``K`` clusters of ``start``, one block of its other points.  Memory is
        ``O(n_blocks^2)``, nothing ``N x N``; on 30,000 points, 200 draws and 1,000
        blocks it takes a few seconds.
    random_state : int, Generator or None, default=0
        The stream of the parameter draws; fixed by default, so that the same draws give
        the same fused clusters.

    Returns
    -------
    Fusion
        ``labels``, the expected loss of every cut, the tree, the mean distance between
        fused clusters, the blocks.

    Raises
    ------
    ValueError
        For an unfitted estimator, draws that are not a 2-D array of non-negative integer
        labels, draws and data of different numbers of points, parameters that do not
        cover a draw's labels, draws without parameters and no data (or a family whose
        parameters cannot be drawn in one exact step), ``omega <= 0``, ``n_clusters``
        outside ``1 .. n_blocks``.
    NotImplementedError
        For a family without :meth:`~dpclust.families.base.ConjugateFamily.hellinger`.

    Notes
    -----
    *Parameters.*  Collapsed samplers keep partitions only.  A draw without parameters gets
    one draw of each component's parameters from its conjugate posterior given the points
    the draw puts in it: with the partition a posterior draw, partition and parameters are
    then a draw from the joint posterior, which is what the loss averages over.  Samplers
    that instantiate parameters (the rankings' samplers) keep them with their draws.

    *An estimator's draws.*  Its pooled kept draws (at most ``max_draws``) where it holds
    them (up to 10,000 points), else all kept draws where ``store_labels=True``, else the
    ``n_predictive_draws`` draws it keeps for prediction (raise ``n_predictive_draws`` for
    more).  For rankings, the ``n_predictive_draws`` draws, the ones kept with their
    parameters.

    *Approximation.*  With more than ``max_blocks`` blocks in the common refinement, the
    candidates are the average-linkage tree on the blocks; the points of a residual block
    (outside the largest blocks the draws agree on: mostly points that some draws put
    elsewhere) move together, so a fused cluster is a union of blocks.  The expected loss of each
    candidate is still exact given the draws.

    References
    ----------
    Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized
        densities. JASA (arXiv 2304.00074).

    Examples
    --------
    >>> from dpclust import DPMixture  # doctest: +SKIP
    >>> est = DPMixture(random_state=0).fit(X)  # doctest: +SKIP
    >>> est.fuse(omega=1.0).n_clusters  # doctest: +SKIP
    """
    omega = check_positive(omega, "omega")
    max_blocks = check_int(max_blocks, "max_blocks", 1)
    rng = check_random_state(random_state)
    draws, params, X, family, start, chains = _inputs(source, X, family, params, start)
    n = draws.shape[1]
    blocks, exact = _join_groups(*_blocks(start, draws, max_blocks), _groups(source, groups, n))
    m = int(blocks.max()) + 1
    sizes = np.bincount(blocks, minlength=m).astype(np.float64)
    cross, per_draw = _block_distances(blocks, draws, params, X, family, omega, rng)
    tree, pairs, gain = _average_linkage(cross, sizes)
    loss, share = _cut_losses(cross, sizes, gain, omega, n)
    k = _chosen_cut(loss, n_clusters, max_clusters, m)
    owner, delta = _cut(cross, sizes, pairs, k)
    return Fusion(labels=canonical_labels(owner[blocks]), n_clusters=k, omega=omega,
                  expected_loss=loss, within_share=share, delta=delta, tree=tree,
                  blocks=blocks, block_sizes=sizes.astype(np.int64), exact=bool(exact),
                  n_draws=len(draws), draw_n_clusters=per_draw, draw_chain=chains)


def _block_distances(blocks, draws, params, X, family, omega, rng):
    """``(cross, per_draw)``: ``cross[a, b]`` the posterior mean of the Hellinger distances
    ``Dbar_ij`` summed over points ``i`` of block ``a`` and ``j`` of block ``b`` (``i != j``),
    and the number of fused clusters each draw alone gives."""
    m = int(blocks.max()) + 1
    cross = np.zeros((m, m))
    ones = np.ones(len(blocks))
    per_draw = np.empty(len(draws), dtype=np.int64)
    for s, (z, theta) in enumerate(zip(draws, params)):
        zc, H = _draw_hellinger(family, X, z, theta, rng)
        # T (n_blocks, K): points of each block in each component; T H T^T, sparse T
        T = sp.csr_matrix((ones, (blocks, zc)), shape=(m, H.shape[0]))
        cross += T @ np.asarray(T @ H).T
        per_draw[s] = _fold_one_draw(H, np.bincount(zc, minlength=H.shape[0]), omega)
    return cross / len(draws), per_draw


def _chosen_cut(loss, n_clusters, max_clusters, m: int) -> int:
    """The number of fused clusters: ``n_clusters``, else the cut of least expected loss
    among those of at most ``max_clusters`` (ties: the fewer clusters)."""
    if n_clusters is None:
        top = len(loss) if max_clusters is None else check_int(max_clusters, "max_clusters", 1)
        return int(np.argmin(loss[:top])) + 1
    k = check_int(n_clusters, "n_clusters", 1)
    if k > m:
        raise ValueError(f"n_clusters={k} is more than the {m} blocks the fused clusters "
                         "are unions of (raise max_blocks)")
    return k


def n_fused_per_draw(draws, X, *, family, params=None, omega=1.0,
                     random_state=0) -> np.ndarray:
    """The number of fused clusters that each posterior draw alone gives.

    For one draw ``s`` the FOLD loss has ``Delta_s`` in place of its posterior mean, and
    its estimate is computed as :func:`fuse` computes the pooled one: average linkage of
    the draw's components (each weighted by its points, which are at distance 0 from each
    other), cut where the loss is least.  Merging two groups ``A`` and ``B`` changes the
    loss by ``n_A n_B [(1 + omega) d_AB - omega]`` (``d_AB`` their mean distance), and
    average-linkage heights never decrease, so the cut keeps apart exactly the groups
    that are ``omega / (1 + omega)`` or more apart on average.  It is a function of one
    draw, so its series over a chain's draws can be judged as any other quantity of the
    chain (R-hat, ESS): fused clusters that differ from draw to draw, or between chains,
    show there.

    Parameters
    ----------
    draws : array-like of shape (n_draws, n_samples)
        Partition draws, each with labels that index its components.
    X : data of n_samples points
        The training data (to draw each component's parameters where ``params`` has none).
    family : ConjugateFamily
        The components' family.
    params : sequence of NamedTuple or None, optional
        Each draw's component parameters, as for :func:`fuse`.
    omega : float, default=1.0
    random_state : int, Generator or None, default=0

    Returns
    -------
    ndarray of shape (n_draws,)
    """
    omega = check_positive(omega, "omega")
    rng = check_random_state(random_state)
    draws, params, X, family, _, _ = _inputs(draws, X, family, params,
                                             np.zeros(np.shape(draws)[-1], dtype=np.int64))
    out = np.empty(len(draws), dtype=np.int64)
    for s, (z, theta) in enumerate(zip(draws, params)):
        zc, H = _draw_hellinger(family, X, z, theta, rng)
        out[s] = _fold_one_draw(H, np.bincount(zc, minlength=H.shape[0]), omega)
    return out


def _fold_one_draw(H: np.ndarray, sizes: np.ndarray, omega: float) -> int:
    """FOLD on one draw: components of ``sizes`` points at Hellinger distances ``H``,
    joined by average linkage and cut at the least loss (see :func:`n_fused_per_draw`)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    if len(sizes) == 1:
        return 1
    cross = np.asarray(H, dtype=np.float64) * np.outer(sizes, sizes)
    np.fill_diagonal(cross, 0.0)
    _, _, gain = _average_linkage(cross, sizes)
    loss, _ = _cut_losses(cross, sizes, gain, omega, float(sizes.sum()))
    return int(np.argmin(loss)) + 1  # ties: the fewer clusters


# ----------------------------------------------------------------------------- inputs
def _inputs(source, X, family, params, start):
    """``(draws (S, n) int64, params list, X, family, start, chains (S,))`` from an
    estimator or draws."""
    if hasattr(source, "fit") and not hasattr(source, "labels_"):
        raise ValueError(f"this {type(source).__name__} is not fitted yet: call fit(X) "
                         "before fusing its clusters")
    if hasattr(source, "labels_") and hasattr(source, "family_"):
        if family is not None or params is not None:
            raise ValueError("family= and params= go with draws; a fitted estimator "
                             "brings its own")
        family = source.family_
        draws, params, chains = _estimator_draws(source, family)
        if X is None:
            X = getattr(source, "_X_fit", None)
        if start is None:
            # the point estimate over the rows the model was fitted on (the copies of rows
            # with whole-number sample weights), as the draws are
            model_labels = getattr(source, "_model_labels", None)
            start = source.labels_ if model_labels is None else model_labels
    else:
        draws = _check_draws(source)
        chains = np.zeros(len(draws), dtype=np.int64)
        if not isinstance(family, ConjugateFamily):
            raise ValueError("fusing draws needs family=: the ConjugateFamily of their "
                             f"components, got {family!r}")
        if params is None:
            params = [None] * len(draws)
        params = list(params)
        if len(params) != len(draws):
            raise ValueError(f"params holds {len(params)} entries for {len(draws)} draws")
    n = draws.shape[1]
    if X is not None:
        X = family.validate(X)
        if family.n_points(X) != n:
            raise ValueError(f"X has {family.n_points(X)} points but the draws have {n}")
        if not family.is_resolved:
            family = family.resolve(X)
    if start is None:
        start, _ = point_estimate(draws, loss="vi")
    start = check_labels(start, n, what="start")
    return draws, params, X, family, start, chains


def _estimator_draws(est, family):
    """The draws (and parameters) a fitted estimator keeps (see :func:`fuse`, Notes), and
    the chain of each (draws are in order of iteration within each chain)."""
    predictive = getattr(est, "_predictive_draws", None) or []
    pool_chains = getattr(est, "_pool_chains", None)
    predictive_chains = getattr(est, "_predictive_chains", None)
    chains = None
    if not getattr(family, "collapsible", True):
        draws = [z for z, _ in predictive]
        params = list(getattr(est, "_predictive_params", None) or [None] * len(draws))
        chains = predictive_chains
    else:
        draws = getattr(est, "_pool_draws", None)
        chains = pool_chains
        stored = getattr(getattr(est, "trace_", None), "labels", None)
        if draws is None and stored is not None:
            stored = np.asarray(stored)  # (chains, draws, n): a Trace keeps the chain axis
            chains = np.repeat(np.arange(stored.shape[0]), stored.shape[1])
            draws = stored.reshape(-1, stored.shape[-1])
        if draws is None:
            draws = [z for z, _ in predictive]
            chains = predictive_chains
        params = [None] * len(draws)
    if len(draws) == 0:
        raise ValueError("the estimator holds no partition draws in this process (with "
                         "a Dask executor they stay on the workers); fuse the draws with "
                         "fuse(draws, X, family=...) instead")
    if chains is None or len(chains) != len(draws):  # a model saved before chains were kept
        chains = np.zeros(len(draws), dtype=np.int64)
    return (_check_draws(np.asarray([np.asarray(z) for z in draws])), params,
            np.asarray(chains, dtype=np.int64))


def _check_draws(draws) -> np.ndarray:
    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[0] == 0 or draws.shape[1] < 2:
        raise ValueError("draws must be a 2-D array of shape (n_draws, n_samples) with at "
                         f"least one draw and two points, got shape {draws.shape}")
    if draws.dtype.kind not in "iu" and not (
            draws.dtype.kind == "f" and np.all(np.isfinite(draws))
            and np.all(draws == np.floor(draws))):
        raise ValueError(f"draws must hold integer labels, got dtype {draws.dtype}")
    if draws.min() < 0:
        raise ValueError("draws must hold labels >= 0")
    return draws.astype(np.int64)


def _draw_hellinger(family, X, z, params, rng):
    """The draw's labels made ``0 .. K - 1`` over its non-empty components, and the
    Hellinger matrix (K, K) of those components."""
    zc, used = _compress(z)
    if params is None:
        if X is None:
            raise ValueError("draws without parameters need the data X to draw each "
                             "component's parameters from its posterior")
        if not getattr(family, "collapsible", True):
            raise ValueError(f"{type(family).__name__} parameters cannot be drawn from a "
                             "cluster's posterior in one exact step: pass each draw's "
                             "parameters (params=), as its samplers keep them")
        params = family.sample_posterior(family.stats(X, zc, len(used)), rng)
    else:
        have = len(params[0])
        if used[-1] >= have:
            raise ValueError(f"a draw has label {int(used[-1])} but parameters for "
                             f"{have} components only")
        params = take(params, used)
    return zc.astype(np.int64), np.asarray(family.hellinger(params), dtype=np.float64)


# ----------------------------------------------------------------------------- blocks
def _compress(codes: np.ndarray):
    """``(labels, used)``: the distinct values of ``codes`` (sorted) numbered ``0 .. m - 1``
    (as ``np.unique(codes, return_inverse=True)``, by counting where that is cheaper)."""
    top = int(codes.max()) + 1
    if top > 4 * len(codes) + 1024:
        used, inverse = np.unique(codes, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64), used
    present = np.bincount(codes, minlength=top) > 0
    return (np.cumsum(present) - 1)[codes].astype(np.int64), np.flatnonzero(present)


def _intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The common refinement of two partitions, labels ``0 .. m - 1``."""
    return _compress(a * (int(b.max()) + 1) + b)[0]


def _blocks(start: np.ndarray, draws: np.ndarray, max_blocks: int):
    """``(blocks, exact)``: the common refinement of ``start`` and the draws, or its
    largest blocks and one residual block per cluster of ``start`` (see :func:`fuse`)."""
    start = canonical_labels(start).astype(np.int64)
    full = start
    for z in draws:
        full = _intersect(full, z)
    n_full = int(full.max()) + 1
    n_start = int(start.max()) + 1
    if n_full <= max(max_blocks, n_start):
        return full, True
    sizes = np.bincount(full)
    keep = np.zeros(n_full, dtype=bool)
    keep[np.argsort(-sizes, kind="stable")[: max(max_blocks - n_start, 0)]] = True
    code = np.where(keep[full], full, n_full + start)
    return canonical_labels(code).astype(np.int64), False


def _groups(source, groups, n: int) -> np.ndarray | None:
    """``groups`` checked, else an estimator's (the groups its ``labels_`` keeps)."""
    if groups is None:
        groups = getattr(source, "_estimate_groups", None) if hasattr(source, "labels_") \
            else None
    return None if groups is None else as_groups(groups, n)


def _join_groups(blocks: np.ndarray, exact: bool, groups: np.ndarray | None):
    """``(blocks, exact)`` with every two blocks that share a group joined (connected
    components of the blocks linked through their points' groups); still exact when no
    block was joined."""
    if groups is None:
        return blocks, exact
    m, n_groups = int(blocks.max()) + 1, int(groups.max()) + 1
    links = sp.csr_matrix((np.ones(len(blocks)), (blocks, m + groups)),
                          shape=(m + n_groups, m + n_groups))
    _, component = connected_components(links, directed=False)
    joined = canonical_labels(component[blocks]).astype(np.int64)
    return joined, bool(exact and int(joined.max()) + 1 == m)


# ---------------------------------------------------------------------------- linkage
def _average_linkage(cross: np.ndarray, sizes: np.ndarray):
    """Average linkage (UPGMA) of blocks of ``sizes`` points with ``cross[a, b]`` the sum
    of the distances between their points: the distance of two clusters is the mean over
    their pairs of points, ``cross[a, b] / (n_a n_b)``.

    Returns ``tree`` (m - 1, 4) in scipy's linkage format, ``pairs`` (m - 1, 2) the local
    indices merged at each step (the second into the first) and ``gain`` (m - 1, 2): the
    sum of distances and the number of pairs of points that each merge puts together.
    Each step updates the nearest neighbours of the rows that pointed at the merged
    clusters only, so a merge costs ``O(m)`` besides those rows.
    """
    m = len(sizes)
    cross = cross.copy()
    np.fill_diagonal(cross, 0.0)
    n = sizes.astype(np.float64).copy()
    node = np.arange(m)
    count = np.ones(m)
    alive = np.ones(m, dtype=bool)
    dist = cross / np.outer(n, n)
    np.fill_diagonal(dist, np.inf)
    nn = np.argmin(dist, axis=1) if m > 1 else np.zeros(m, dtype=np.intp)
    nd = dist[np.arange(m), nn]
    tree = np.empty((max(m - 1, 0), 4))
    pairs = np.empty((max(m - 1, 0), 2), dtype=np.int64)
    gain = np.empty((max(m - 1, 0), 2))
    for step in range(m - 1):
        a = int(np.argmin(nd))
        a, b = sorted((a, int(nn[a])))
        tree[step] = (min(node[a], node[b]), max(node[a], node[b]), dist[a, b],
                      count[a] + count[b])
        pairs[step] = (a, b)
        gain[step] = (cross[a, b], n[a] * n[b])
        cross[a] += cross[b]
        cross[:, a] = cross[a]
        cross[a, a] = 0.0
        n[a] += n[b]
        count[a] += count[b]
        node[a] = m + step
        alive[b] = False
        dist[b, :] = np.inf
        dist[:, b] = np.inf
        nd[b] = np.inf
        row = np.where(alive, cross[a] / (n[a] * n), np.inf)
        row[a] = np.inf
        dist[a] = row
        dist[:, a] = row
        nn[a] = int(np.argmin(row))
        nd[a] = row[nn[a]]
        stale = alive & ((nn == a) | (nn == b))
        stale[a] = False
        for r in np.flatnonzero(stale):
            nn[r] = int(np.argmin(dist[r]))
            nd[r] = dist[r, nn[r]]
        closer = alive & (row < nd)
        closer[a] = False
        nn[closer] = a
        nd[closer] = row[closer]
    return tree, pairs, gain


def _cut_losses(cross, sizes, gain, omega: float, n: int):
    """Expected FOLD loss and within-cluster share of ``sum Dbar`` of every cut, index
    ``k - 1`` for ``k`` clusters, from the blocks (``k = m``) merge by merge.

    ``L = W + omega [(P - P_w) - (D - W)]`` with ``W`` the sum of ``Dbar`` within
    clusters, ``P_w`` the pairs within clusters, ``D`` the sum over all ``P`` pairs.
    """
    m = len(sizes)
    within = 0.5 * float(np.trace(cross))
    total = within + 0.5 * float(cross.sum() - np.trace(cross))
    pairs_within = float((sizes * (sizes - 1.0)).sum() / 2.0)
    all_pairs = n * (n - 1.0) / 2.0
    W = within + np.concatenate([[0.0], np.cumsum(gain[:, 0])])
    Pw = pairs_within + np.concatenate([[0.0], np.cumsum(gain[:, 1])])
    loss = W + omega * ((all_pairs - Pw) - (total - W))
    share = W / total if total > 0 else np.ones(m)
    return loss[::-1].copy(), share[::-1].copy()
