"""Losses between partitions and their posterior expectations, from contingency tables.

Every loss offered here is a function of three sums over the contingency table of an
estimate ``c`` (cluster sizes ``a_j``) and a partition ``z`` (sizes ``b_k``), with ``n_jk``
points in both cluster ``j`` of ``c`` and cluster ``k`` of ``z``:
``S_c = sum_j f(a_j)``, ``S_z = sum_k f(b_k)`` and ``S_cz = sum_jk f(n_jk)``, with
``f(m) = m log m`` (information losses) or ``f(m) = m^2`` (pair-counting losses).  Written
with ``n`` points and the weight ``a`` in ``[0, 2]`` of the two kinds of mistake:

* ``vi``, generalised variation of information, in nats:
  ``VI_a(c, z) = (a S_z + (2 - a) S_c - 2 S_cz) / n``.  With ``a = 1`` it is Meila's (2007)
  ``H(c | z) + H(z | c)``.  ``a`` weighs splitting what ``z`` joins against joining what
  ``z`` splits (Dahl, Johnson & Muller 2022): a larger ``a`` gives fewer, larger clusters.
* ``binder``, generalised Binder loss, as a fraction of ordered pairs:
  ``B_a(c, z) = (a S_z + (2 - a) S_c - 2 S_cz) / (n (n - 1))``; with ``a = 1`` it is the
  share of the ``n (n - 1) / 2`` pairs on which ``c`` and ``z`` disagree (Binder 1978).
  A pair that ``z`` joins and ``c`` splits costs ``a``, the reverse ``2 - a``.
* ``omari``, one minus the adjusted Rand index (Hubert & Arabie 1985), from the pair
  counts ``A = sum_j C(a_j, 2)``, ``B = sum_k C(b_k, 2)``, ``X = sum_jk C(n_jk, 2)``:
  ``1 - (X - E) / (M - E)`` with ``E = A B / C(n, 2)`` and ``M = (A + B) / 2``.
* ``nvi``, normalised variation of information ``1 - I(c, z) / H(c, z)``, and ``nid``,
  normalised information distance ``1 - I(c, z) / max(H(c), H(z))`` (Vinh, Epps & Bailey
  2010), with the entropies ``H(c) = log n - S_c / n``, ``H(z) = log n - S_z / n``, the
  joint entropy ``H(c, z) = log n - S_cz / n`` and ``I = H(c) + H(z) - H(c, z)``.

Two identical partitions have loss 0 under all of them (the normalised ones define 0/0 as
0).  The posterior expected loss of ``c`` is estimated by the mean over sampled partitions,
each pair's table built in ``O(n)`` without any ``n x n`` matrix.

References
----------
Binder, D. A. (1978). Bayesian cluster analysis. *Biometrika* 65(1), 31-38.
Dahl, D. B., Johnson, D. J. and Muller, P. (2022). Search algorithms and loss functions for
Bayesian clustering. *Journal of Computational and Graphical Statistics* 31(4), 1189-1201.
Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of Classification* 2, 193-218.
Meila, M. (2007). Comparing clusterings - an information based distance. *Journal of
Multivariate Analysis* 98(5), 873-895.
Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic measures for clusterings
comparison. *Journal of Machine Learning Research* 11, 2837-2854.
Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
credible balls. *Bayesian Analysis* 13(2), 559-626.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from .draws import _as_draws, _canonical_2d, _check_n_jobs, _group_kernel, _unique_rows

__all__ = ["LOSSES", "Loss", "as_loss", "expected_loss", "pair_losses"]

#: the losses offered, by name
LOSSES = ("vi", "binder", "omari", "nvi", "nid")
#: the codes of the kernels, in the order of LOSSES
_VI, _BINDER, _OMARI, _NVI, _NID = range(5)
_PAIR_COUNTING = (_BINDER, _OMARI)


@dataclass(frozen=True)
class Loss:
    """A loss on partitions: its name and, for ``vi`` and ``binder``, the weight ``a``.

    Parameters
    ----------
    name : {"vi", "binder", "omari", "nvi", "nid"}
        See the module's description.
    a : float in [0, 2], default=1.0
        The cost of splitting a pair the truth joins; joining a pair the truth splits costs
        ``2 - a``.  Only ``vi`` and ``binder`` take it; ``a > 1`` favours fewer clusters.

    Examples
    --------
    >>> Loss("vi", a=1.5)
    Loss(name='vi', a=1.5)
    >>> str(as_loss("binder(0.5)"))
    'binder(a=0.5)'
    """

    name: str
    a: float = 1.0

    def __post_init__(self):
        if self.name not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.name!r}")
        a = self.a
        if isinstance(a, bool) or not isinstance(a, (int, float, np.number)) or not (
                0.0 <= float(a) <= 2.0):
            raise ValueError(f"the loss weight a must be a number in [0, 2], got {a!r}")
        if float(a) != 1.0 and self.name not in ("vi", "binder"):
            raise ValueError(f"only vi and binder take a weight a; {self.name} has none")
        object.__setattr__(self, "a", float(a))

    @property
    def code(self) -> int:
        """The kernels' number for this loss."""
        return LOSSES.index(self.name)

    def table(self, n_samples: int) -> np.ndarray:
        """The values of ``f(m)`` (``m log m`` or ``m^2``) for every size up to n_samples."""
        m = np.arange(n_samples + 1, dtype=np.float64)
        if self.code in _PAIR_COUNTING:
            return m * m
        f = np.zeros_like(m)
        f[1:] = m[1:] * np.log(m[1:])
        return f

    def __str__(self) -> str:
        return self.name if self.a == 1.0 else f"{self.name}(a={self.a:g})"


_SPELLING = re.compile(r"^\s*([a-zA-Z]+)\s*(?:\(\s*(?:a\s*=\s*)?([0-9.eE+-]+)\s*\))?\s*$")


def as_loss(loss, a: float | None = None) -> Loss:
    """A :class:`Loss` from a name (``"vi"``, ``"binder(a=1.5)"``, ``"VI(0.8)"``) or a Loss.

    ``a``, when given, replaces the weight the name carries.
    """
    if isinstance(loss, Loss):
        return loss if a is None else Loss(loss.name, a)
    if not isinstance(loss, str):
        raise ValueError(f"loss must be one of {LOSSES} (or a Loss), got {loss!r}")
    match = _SPELLING.match(loss)
    if match is None:
        raise ValueError(f"loss must be one of {LOSSES}, optionally with a weight as in "
                         f"'vi(a=1.5)'; got {loss!r}")
    name, weight = match.group(1).lower(), match.group(2)
    if a is None:
        a = 1.0 if weight is None else float(weight)
    return Loss(name, a)


# ---------------------------------------------------------------------------------------
# numba kernels (arrays and scalars only; no validation inside)
# ---------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def loss_value(code, a, n, s_c, s_z, s_cz):
    """The loss ``code`` between two partitions of ``n`` points from their three sums
    ``S_c``, ``S_z``, ``S_cz`` (the module's description); never below 0."""
    if n <= 1.0:
        return 0.0
    if code == _VI or code == _BINDER:
        value = a * s_z + (2.0 - a) * s_c - 2.0 * s_cz
        value /= n if code == _VI else n * (n - 1.0)
    elif code == _OMARI:
        pairs = 0.5 * n * (n - 1.0)
        big_a, big_b, big_x = 0.5 * (s_c - n), 0.5 * (s_z - n), 0.5 * (s_cz - n)
        expected = big_a * big_b / pairs
        top = 0.5 * (big_a + big_b) - expected
        if abs(top) <= 1e-12 * pairs:  # both all one cluster, or both all singletons
            return 0.0
        value = 1.0 - (big_x - expected) / top
    else:
        log_n = math.log(n)
        h_c, h_z, h_cz = log_n - s_c / n, log_n - s_z / n, log_n - s_cz / n
        info = h_c + h_z - h_cz
        den = h_cz if code == _NVI else max(h_c, h_z)
        if den <= 1e-12:
            return 0.0
        value = 1.0 - info / den
    return value if value > 0.0 else 0.0


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
def _pair_loss_kernel(candidates, cand_clusters, draws, draw_clusters, f, code, a, table_size):
    """The loss ``code`` of every (candidate, draw) pair, shape (n_candidates, n_draws).

    Both ``candidates`` and ``draws`` are canonical.  The cross sum ``S_cz`` of a pair with
    ``K1 * K2 <= table_size`` comes from a dense table (:func:`_cross_term_table`,
    fastest); larger pairs, e.g. many singletons, use :func:`_cross_term_grouped`, so
    memory stays ``O(table_size + n_draws * n_samples)`` and no ``n_samples x n_samples``
    or unbounded ``K1 x K2`` array is built.  It releases the GIL, so blocks of candidates
    can run on threads.
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
    out = np.empty((n_candidates, n_draws), dtype=np.float64)
    table = np.zeros(min(max_kc * max_kd, table_size), dtype=np.int64)
    count = np.zeros(max_kc, dtype=np.int64)
    for c in range(n_candidates):
        k1 = cand_clusters[c]
        for s in range(n_draws):
            k2 = draw_clusters[s]
            if k1 * k2 <= table_size:
                cross = _cross_term_table(candidates[c], draws[s], k1, k2, f, table)
            else:
                cross = _cross_term_grouped(candidates[c], order[s], start[s], k2, f, count)
            out[c, s] = loss_value(code, a, float(n_samples), cand_terms[c], draw_terms[s],
                                   cross)
    return out


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


def expected_loss(candidates, draws, loss="vi", *, a: float | None = None,
                  n_jobs: int | None = None) -> np.ndarray:
    """Posterior expected loss of candidate partitions, estimated from sampled partitions.

    ``E[L(c, Z) | data] ~= (1 / n_draws) sum_s L(c, z_s)``, for each candidate ``c``.

    Parameters
    ----------
    candidates : array-like of shape (n_candidates, n_samples)
        Partitions to score, one per row (a single partition ``labels`` is
        ``labels[None, :]``).
    draws : array-like of shape (n_draws, n_samples)
        Posterior draws of the partition, one per row.
    loss : {"vi", "binder", "omari", "nvi", "nid"} or Loss, default="vi"
        ``"vi"``: variation of information in nats (Meila 2007).  ``"binder"``: Binder's
        loss as the fraction of the ``n_samples * (n_samples - 1) / 2`` point pairs on
        which the two partitions disagree about co-clustering (Binder 1978).  ``"omari"``:
        one minus the adjusted Rand index.  ``"nvi"``, ``"nid"``: normalised variation of
        information and information distance.  The module's description gives the
        formulas; a name may carry the weight, ``"vi(a=1.5)"``.
    a : float in [0, 2] or None, default=None
        The weight of ``vi`` and ``binder`` (:class:`Loss`); None keeps the loss's own (1).
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
    """
    loss = as_loss(loss, a)
    n_jobs = _check_n_jobs(n_jobs)
    candidates = _as_draws(candidates, "candidates")
    draws = _as_draws(draws)
    _check_same_points(candidates, draws)
    zc, kc = _canonical_2d(candidates)
    zd, kd = _canonical_2d(draws)
    first_c, inverse_c, _ = _unique_rows(zc)
    first_d, _, counts_d = _unique_rows(zd)
    values = _expected_loss_unique(
        zc[first_c], kc[first_c], zd[first_d], kd[first_d], counts_d, loss, n_jobs
    )
    return values[inverse_c]


def pair_losses(candidate, draws, loss="vi", *, a: float | None = None) -> np.ndarray:
    """The loss between one partition and each of ``draws``, shape (n_draws,).

    The distances a credible ball is made of (:func:`dpclust.partitions.credible_ball`).
    Parameters as in :func:`expected_loss`.
    """
    loss = as_loss(loss, a)
    candidate = _as_draws(np.asarray(candidate)[None, :], "candidate")
    draws = _as_draws(draws)
    _check_same_points(candidate, draws)
    zc, kc = _canonical_2d(candidate)
    zd, kd = _canonical_2d(draws)
    first_d, inverse_d, _ = _unique_rows(zd)
    values = _pair_losses_unique(zc, kc, zd[first_d], kd[first_d], loss)[0]
    return values[inverse_d]


def _check_same_points(candidates, draws):
    if candidates.shape[1] != draws.shape[1]:
        raise ValueError(
            f"candidates and draws must partition the same points, got n_samples = "
            f"{candidates.shape[1]} and {draws.shape[1]}"
        )


def _pair_losses_unique(zc, kc, zd, kd, loss: Loss, table_size=None) -> np.ndarray:
    """:func:`_pair_loss_kernel` on canonical rows; ``table_size`` (default
    ``max(2 * n_samples, 256)``) is the largest ``K1 * K2`` handled with a dense table
    (tests set it to 0 to force the grouped path)."""
    n_samples = zc.shape[1]
    if table_size is None:
        table_size = max(2 * n_samples, 256)
    return _pair_loss_kernel(np.ascontiguousarray(zc), np.ascontiguousarray(kc),
                             np.ascontiguousarray(zd), np.ascontiguousarray(kd),
                             loss.table(n_samples), loss.code, loss.a, int(table_size))


def _expected_loss_unique(zc, kc, zd, kd, weights, loss, n_jobs: int = 1,
                          table_size=None) -> np.ndarray:
    """Weighted mean of :func:`_pair_losses_unique` over canonical, deduplicated draws,
    the candidates split into ``n_jobs`` contiguous blocks run on threads (the kernel
    releases the GIL)."""
    loss = as_loss(loss)
    weights = np.asarray(weights, dtype=np.float64)

    def run(block):
        pairs = _pair_losses_unique(zc[block], kc[block], zd, kd, loss, table_size)
        return (pairs * weights[None, :]).sum(axis=1)  # row by row: the same on any block

    n_blocks = min(n_jobs, zc.shape[0])
    if n_blocks <= 1:
        values = run(slice(None))
    else:
        blocks = np.array_split(np.arange(zc.shape[0]), n_blocks)
        with ThreadPoolExecutor(max_workers=n_blocks) as pool:
            values = np.concatenate(list(pool.map(run, blocks)))
    return values / weights.sum()
