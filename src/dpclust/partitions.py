"""Summarising MCMC samples of partitions.

A Dirichlet-process mixture sampler returns *draws*: an integer array of shape
``(n_draws, n_samples)`` whose rows are partitions of the same ``n_samples`` points.  Labels
carry no meaning across draws (label switching), so everything here only looks at the
partition a row induces:

* :func:`canonical_labels` relabels rows by order of first appearance, so equal partitions
  have equal rows;
* :func:`posterior_similarity` is the posterior co-clustering ("similarity") matrix;
* :func:`expected_loss` is the posterior expected loss of candidate partitions under
  variation of information or Binder's loss, computed from contingency tables without any
  ``n_samples x n_samples`` matrix;
* :func:`point_estimate` picks the draw minimising that expected loss.

The hot loops are numba kernels (``_*_kernel``) taking arrays only; their plain-NumPy
counterparts live in ``tests/test_partitions.py``.

References
----------
Binder, D. A. (1978). Bayesian cluster analysis. *Biometrika* 65(1), 31-38.
Dahl, D. B. (2006). Model-based clustering for expression data via a Dirichlet process
mixture model. In *Bayesian Inference for Gene Expression and Proteomics*, 201-218.
Meila, M. (2007). Comparing clusterings - an information based distance. *Journal of
Multivariate Analysis* 98(5), 873-895.
Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
credible balls. *Bayesian Analysis* 13(2), 559-626.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

__all__ = ["canonical_labels", "posterior_similarity", "expected_loss", "point_estimate",
           "point_certainty", "cluster_presence"]

LOSSES = ("vi", "binder")
#: relative gap below which two expected losses count as a tie (rounding of sums taken in
#: another order is ~1e-15; distinct partitions often tie exactly, e.g. mirror images)
_TIE_RTOL = 1e-9


# ---------------------------------------------------------------------------------------
# numba kernels (arrays and scalars only; no validation inside)
# ---------------------------------------------------------------------------------------


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


@njit(cache=True)
def _row_terms(z, n_clusters, f):
    """``sum_k f[n_k]`` for the cluster sizes ``n_k`` of each canonical row of ``z``."""
    n_rows, n_samples = z.shape
    out = np.empty(n_rows, dtype=np.float64)
    sizes = np.zeros(n_samples, dtype=np.int64)
    for r in range(n_rows):
        for i in range(n_samples):
            sizes[z[r, i]] += 1
        total = 0.0
        for k in range(n_clusters[r]):
            total += f[sizes[k]]
            sizes[k] = 0
        out[r] = total
    return out


@njit(cache=True)
def _cross_term_table(cand_row, draw_row, n_clusters_cand, n_clusters_draw, f, table):
    """``sum_ij f[n_ij]`` via a dense contingency table; ``O(n_samples + K1 * K2)``.

    ``table`` is zeroed scratch of length at least ``K1 * K2`` and is left zeroed.
    """
    for i in range(cand_row.shape[0]):
        table[cand_row[i] * n_clusters_draw + draw_row[i]] += 1
    cross = 0.0
    for t in range(n_clusters_cand * n_clusters_draw):
        m = table[t]
        if m > 0:
            cross += f[m]
            table[t] = 0
    return cross


@njit(cache=True)
def _cross_term_grouped(cand_row, order_row, start_row, n_clusters_draw, f, count):
    """``sum_ij f[n_ij]`` one cluster of the draw at a time; ``O(n_samples)``, no table.

    ``order_row``/``start_row`` group the draw's points by cluster (:func:`_group_kernel`);
    ``count`` is zeroed scratch of length ``K1`` and is left zeroed.
    """
    cross = 0.0
    for k in range(n_clusters_draw):
        lo = start_row[k]
        hi = start_row[k + 1]
        for a in range(lo, hi):
            count[cand_row[order_row[a]]] += 1
        for a in range(lo, hi):
            label = cand_row[order_row[a]]
            m = count[label]
            if m > 0:
                cross += f[m]
                count[label] = 0
    return cross


@njit(cache=True, nogil=True)
def _expected_loss_kernel(
    candidates, cand_clusters, draws, draw_clusters, weights, f, scale, table_size
):
    """Weighted mean over draws of a contingency-table loss, for every candidate.

    Both ``candidates`` (n_candidates, n_samples) and ``draws`` (n_draws, n_samples) are
    canonical.  With table counts ``n_ij`` and marginals ``a_i``, ``b_j`` the loss of one
    (candidate, draw) pair is ``(sum_i f[a_i] + sum_j f[b_j] - 2 sum_ij f[n_ij]) / scale``:
    variation of information for ``f[m] = m log m`` and ``scale = n`` (Meila 2007),
    Binder's loss as a fraction of pairs for ``f[m] = m^2`` and ``scale = n (n - 1)``.

    The cross term ``sum_ij f[n_ij]`` of a pair with ``K1 * K2 <= table_size`` comes from a
    dense table (:func:`_cross_term_table`, fastest); larger pairs, e.g. many singletons,
    use :func:`_cross_term_grouped`, so memory stays ``O(table_size + n_draws * n_samples)``
    and no ``n_samples x n_samples`` or unbounded ``K1 x K2`` array is built.  It releases
    the GIL, so blocks of candidates can run on threads.
    """
    n_candidates, n_samples = candidates.shape
    n_draws = draws.shape[0]
    max_kc = 0
    for c in range(n_candidates):
        max_kc = max(max_kc, cand_clusters[c])
    max_kd = 0
    for s in range(n_draws):
        max_kd = max(max_kd, draw_clusters[s])
    if max_kc * max_kd > table_size:  # some pairs take the grouped path
        order = np.empty((n_draws, n_samples), dtype=np.int64)
        start = np.empty((n_draws, max_kd + 1), dtype=np.int64)
        for s in range(n_draws):
            _group_kernel(draws[s], draw_clusters[s], order[s], start[s])
    else:
        order = np.empty((0, 0), dtype=np.int64)
        start = np.empty((0, 0), dtype=np.int64)
    cand_terms = _row_terms(candidates, cand_clusters, f)
    draw_terms = _row_terms(draws, draw_clusters, f)
    total_weight = 0.0
    for s in range(n_draws):
        total_weight += weights[s]

    out = np.empty(n_candidates, dtype=np.float64)
    for c in range(n_candidates):
        table = np.zeros(min(max_kc * max_kd, table_size), dtype=np.int64)
        count = np.zeros(max_kc, dtype=np.int64)
        k1 = cand_clusters[c]
        acc = 0.0
        for s in range(n_draws):
            k2 = draw_clusters[s]
            if k1 * k2 <= table_size:
                cross = _cross_term_table(candidates[c], draws[s], k1, k2, f, table)
            else:
                cross = _cross_term_grouped(candidates[c], order[s], start[s], k2, f, count)
            loss = (cand_terms[c] + draw_terms[s] - 2.0 * cross) / scale
            if loss < 0.0:  # rounding only; both losses are non-negative
                loss = 0.0
            acc += weights[s] * loss
        out[c] = acc / total_weight
    return out


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _as_draws(draws, name: str = "draws") -> np.ndarray:
    """Validate a 2-D, non-empty array of partitions."""
    draws = np.asarray(draws)
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


def _loss_table(loss: str, n_samples: int) -> tuple[np.ndarray, float]:
    """``f`` and ``scale`` of :func:`_expected_loss_kernel` for a named loss."""
    m = np.arange(n_samples + 1, dtype=np.float64)
    if loss == "vi":
        f = np.zeros_like(m)
        f[1:] = m[1:] * np.log(m[1:])
        return f, float(n_samples)
    # Binder: disagreeing pairs = (sum a_i^2 + sum b_j^2 - 2 sum n_ij^2) / 2 out of n(n-1)/2.
    return m * m, float(max(n_samples * (n_samples - 1), 1))


def _check_loss(loss: str) -> None:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def _evenly_spaced(n_total: int, n_keep, name: str) -> np.ndarray:
    """Indices of ``n_keep`` rows spread evenly over ``n_total`` (all rows if ``None``)."""
    if n_keep is None:
        return np.arange(n_total)
    if isinstance(n_keep, bool) or not isinstance(n_keep, (int, np.integer)) or n_keep < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {n_keep!r}")
    if n_keep >= n_total:
        return np.arange(n_total)
    return np.unique(np.round(np.linspace(0, n_total - 1, int(n_keep))).astype(np.intp))


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


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


def expected_loss(candidates, draws, loss: str = "vi", *, n_jobs: int | None = None) -> np.ndarray:
    """Posterior expected loss of candidate partitions, estimated from sampled partitions.

    ``E[L(c, Z) | data] ~= (1 / n_draws) sum_s L(c, z_s)``, for each candidate ``c``.

    Parameters
    ----------
    candidates : array-like of shape (n_candidates, n_samples)
        Partitions to score, one per row (a single partition ``labels`` is
        ``labels[None, :]``).
    draws : array-like of shape (n_draws, n_samples)
        Posterior draws of the partition, one per row.
    loss : {"vi", "binder"}, default="vi"
        ``"vi"``: variation of information in nats (Meila 2007).  ``"binder"``: Binder's
        loss with equal costs, as the fraction of the ``n_samples * (n_samples - 1) / 2``
        point pairs on which the two partitions disagree about co-clustering (Binder 1978).
    n_jobs : int or None, default=None
        Threads over which the candidates are split; ``None`` means 1 and ``-1`` every
        available CPU (negative values count back from it, as in scikit-learn).

    Returns
    -------
    loss_values : ndarray of shape (n_candidates,), dtype float64
        Posterior expected loss of each candidate.

    Raises
    ------
    ValueError
        If either array is not a non-empty 2-D array, their ``n_samples`` differ, ``loss`` is
        unknown, or ``n_jobs`` is invalid.

    Notes
    -----
    Each (candidate, draw) loss is computed from their contingency table in ``O(n_samples)``
    time (a dense ``K1 x K2`` table when it has at most ``2 * n_samples`` cells, otherwise
    one cluster at a time), with no ``n_samples x n_samples`` matrix, so the total cost is
    ``O(n_unique_candidates * n_unique_draws * n_samples)``: identical partitions (common in
    MCMC output) are scored once and weighted by their multiplicity.

    The Binder value equals ``sum_{i<j} |1[c_i = c_j] - P_ij| / (n choose 2)`` with ``P`` the
    :func:`posterior_similarity` matrix (Wade & Ghahramani 2018).

    References
    ----------
    Binder, D. A. (1978). Bayesian cluster analysis. *Biometrika* 65(1), 31-38.
    Meila, M. (2007). Comparing clusterings - an information based distance. *Journal of
    Multivariate Analysis* 98(5), 873-895.
    Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
    credible balls. *Bayesian Analysis* 13(2), 559-626.
    """
    _check_loss(loss)
    n_jobs = _check_n_jobs(n_jobs)
    candidates = _as_draws(candidates, "candidates")
    draws = _as_draws(draws)
    if candidates.shape[1] != draws.shape[1]:
        raise ValueError(
            f"candidates and draws must partition the same points, got n_samples = "
            f"{candidates.shape[1]} and {draws.shape[1]}"
        )
    zc, kc = _canonical_2d(candidates)
    zd, kd = _canonical_2d(draws)
    first_c, inverse_c, _ = _unique_rows(zc)
    first_d, _, counts_d = _unique_rows(zd)
    values = _expected_loss_unique(
        zc[first_c], kc[first_c], zd[first_d], kd[first_d], counts_d, loss, n_jobs
    )
    return values[inverse_c]


def _expected_loss_unique(
    zc, kc, zd, kd, weights, loss: str, n_jobs: int = 1, table_size=None
) -> np.ndarray:
    """Call :func:`_expected_loss_kernel` on canonical, deduplicated, weighted rows.

    Candidates are split into ``n_jobs`` contiguous blocks run on threads (the kernel
    releases the GIL).  ``table_size`` (default ``max(2 * n_samples, 256)``) is the largest
    ``K1 * K2`` handled with a dense contingency table; tests set it to 0 to force the
    grouped path.
    """
    n_samples = zc.shape[1]
    f, scale = _loss_table(loss, n_samples)
    if table_size is None:
        table_size = max(2 * n_samples, 256)
    zd = np.ascontiguousarray(zd)
    kd = np.ascontiguousarray(kd)
    weights = np.asarray(weights, dtype=np.float64)

    def run(block):
        return _expected_loss_kernel(
            np.ascontiguousarray(zc[block]),
            np.ascontiguousarray(kc[block]),
            zd,
            kd,
            weights,
            f,
            scale,
            int(table_size),
        )

    n_blocks = min(n_jobs, zc.shape[0])
    if n_blocks <= 1:
        return run(slice(None))
    blocks = np.array_split(np.arange(zc.shape[0]), n_blocks)
    with ThreadPoolExecutor(max_workers=n_blocks) as pool:
        return np.concatenate(list(pool.map(run, blocks)))


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


def point_estimate(
    draws,
    loss: str = "vi",
    max_candidates: int | None = None,
    max_draws: int | None = None,
    random_state=None,
    *,
    n_jobs: int | None = None,
) -> tuple[np.ndarray, float]:
    """Point estimate of the partition: the draw with least posterior expected loss.

    This is the "draws" search of Dahl (2006), with variation of information or Binder's
    loss (Wade & Ghahramani 2018): every sampled partition is a candidate and the one
    minimising the Monte Carlo posterior expected loss is returned.  It is restricted to
    partitions visited by the chain, so it is an approximation to the Bayes estimate, not
    the exact minimiser over all partitions.

    Parameters
    ----------
    draws : array-like of shape (n_draws, n_samples)
        Posterior draws of the partition, one per row.
    loss : {"vi", "binder"}, default="vi"
        See :func:`expected_loss`.
    max_candidates : int or None, default=None
        Consider at most this many draws as candidates, spread evenly over the chain
        (deterministic thinning).  ``None`` uses every draw.
    max_draws : int or None, default=None
        Estimate the expected loss from at most this many draws, spread evenly over the
        chain.  ``None`` uses every draw.
    random_state : None, int or numpy.random.Generator, default=None
        Not used: the thinning is deterministic.  Accepted so that callers can pass their
        estimator's ``random_state`` through unchanged.
    n_jobs : int or None, default=None
        Threads over which the candidates are split; ``None`` means 1 and ``-1`` every
        available CPU (negative values count back from it, as in scikit-learn).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype int64
        The chosen partition, in canonical labels (:func:`canonical_labels`).  Ties go to
        the earliest draw.
    expected_loss_value : float
        Its estimated posterior expected loss.

    Raises
    ------
    ValueError
        If ``draws`` is not a non-empty 2-D array, ``loss`` is unknown, ``max_candidates`` /
        ``max_draws`` is not a positive integer or None, or ``n_jobs`` is invalid.

    Notes
    -----
    Cost ``O(U_c * U_d * n_samples)`` time and ``O(n_draws * n_samples)`` memory, where
    ``U_c <= min(n_draws, max_candidates)`` and ``U_d <= min(n_draws, max_draws)`` are the
    numbers of *distinct* candidate and draw partitions; without thinning this is
    ``O(n_draws^2 * n_samples)`` in the worst case.  No ``n_samples x n_samples`` matrix is
    built.

    References
    ----------
    Dahl, D. B. (2006). Model-based clustering for expression data via a Dirichlet process
    mixture model. In *Bayesian Inference for Gene Expression and Proteomics*, 201-218.
    Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
    credible balls. *Bayesian Analysis* 13(2), 559-626.
    """
    del random_state  # deterministic; see docstring
    _check_loss(loss)
    n_jobs = _check_n_jobs(n_jobs)
    draws = _as_draws(draws)
    n_draws = draws.shape[0]
    cand_index = _evenly_spaced(n_draws, max_candidates, "max_candidates")
    draw_index = _evenly_spaced(n_draws, max_draws, "max_draws")
    z, k = _canonical_2d(draws)
    zc, kc = z[cand_index], k[cand_index]
    zd, kd = z[draw_index], k[draw_index]
    first_c, _, _ = _unique_rows(zc)
    first_d, _, counts_d = _unique_rows(zd)
    values = _expected_loss_unique(
        zc[first_c], kc[first_c], zd[first_d], kd[first_d], counts_d, loss, n_jobs
    )
    best = first_minimum(values)  # the earliest draw, as first_c is in order
    return zc[first_c[best]].copy(), float(values[best])


def first_minimum(values) -> int:
    """Index of the first value within ``_TIE_RTOL`` (relative) of the minimum: ties of
    expected losses go to the earliest candidate whatever order their sums were added in
    (here, or over a Dask cluster's partitions)."""
    values = np.asarray(values, dtype=np.float64)
    low = float(values.min())
    return int(np.flatnonzero(values <= low + _TIE_RTOL * max(abs(low), 1e-300))[0])


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
