"""Candidate links of the distance dependent CRP: which customers each customer may link to.

The sampler never looks at a distance itself, only at the customers ``j`` with
``f(d_ij) > 0`` and at their log weights ``log f(d_ij)``: a :class:`LinkCandidates` holds
them row by row (CSR).  It is built from a dense distance matrix, a sparse one (the stored
pairs are the only ones with ``f(d) > 0``) or positions/timestamps with a metric; a window
decay on positions finds its pairs with a sorted sweep (1-D) or a k-d tree, never touching
all ``N²`` pairs.  The constant decay needs no rows at all: every (earlier) customer is a
candidate with weight 1, and the sampler works with table sizes instead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .decay import Decay

#: link modes of :class:`LinkCandidates`
EXPLICIT, ALL_OTHERS, ALL_EARLIER = 0, 1, 2

#: above this many candidate pairs a dense decay asks for a sparse or windowed alternative
MAX_PAIRS = 20_000_000


class LinkCandidates(NamedTuple):
    """Who may link to whom, and with what prior weight.

    Attributes
    ----------
    n : int
        Number of customers.
    mode : int
        ``EXPLICIT`` (0): customer i's candidates are ``indices[indptr[i]:indptr[i + 1]]``
        with weights ``log_f`` (never i itself); ``ALL_OTHERS`` (1): every other customer,
        weight 1 (constant decay); ``ALL_EARLIER`` (2): every earlier customer, weight 1 (the
        sequential constant decay, i.e. the ordinary CRP).
    indptr, indices, log_f : ndarray
        CSR rows of the candidates in mode 0 (empty otherwise).
    total : ndarray of shape (n,)
        ``sum_j f(d_ij)`` over i's candidates: the prior of customer i's link is
        ``f(d_ij) / (alpha + total[i])``, and ``alpha / (alpha + total[i])`` for itself.
    sequential : bool
        Whether links go only to earlier customers.
    """

    n: int
    mode: int
    indptr: np.ndarray
    indices: np.ndarray
    log_f: np.ndarray
    total: np.ndarray
    sequential: bool

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of customer i and their log weights."""
        if self.mode == EXPLICIT:
            lo, hi = self.indptr[i], self.indptr[i + 1]
            return self.indices[lo:hi], self.log_f[lo:hi]
        j = np.arange(i) if self.mode == ALL_EARLIER else np.delete(np.arange(self.n), i)
        return j, np.zeros(len(j))

    @property
    def n_pairs(self) -> int:
        """Number of candidate links (both directions counted)."""
        if self.mode == EXPLICIT:
            return int(self.indices.shape[0])
        return int(self.total.sum())

    def log_prior(self, links, alpha: float) -> float:
        """``log p(c | D, alpha)`` of a link configuration (eq. 2 of Blei & Frazier)."""
        links = np.asarray(links, dtype=np.int64)
        i = np.arange(self.n)
        own = links == i
        out = float(own.sum()) * np.log(alpha) - float(np.log(alpha + self.total).sum())
        if self.mode == EXPLICIT:
            w = self.link_log_weights(links)
            if np.isneginf(w[~own]).any():
                return -np.inf
            out += float(w[~own].sum())
        elif self.mode == ALL_EARLIER and (links[~own] > i[~own]).any():
            return -np.inf
        return out

    def link_log_weights(self, links) -> np.ndarray:
        """``log f(d_{i, c_i})`` per customer (0 for self links, -inf for impossible ones)."""
        links = np.asarray(links, dtype=np.int64)
        out = np.zeros(self.n)
        if self.mode != EXPLICIT:
            bad = (links < 0) | (links >= self.n)
            if self.mode == ALL_EARLIER:
                bad |= links > np.arange(self.n)
            out[bad] = -np.inf
            return out
        # look every link up at once among the pairs, keyed row * n + column
        n = self.n
        keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr)) * n + self.indices
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        rest = np.flatnonzero(links != np.arange(n))
        want = rest * n + links[rest]
        pos = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        hit = (keys[pos] == want) if len(keys) else np.zeros(len(rest), dtype=bool)
        out[rest] = np.where(hit, self.log_f[order][pos] if len(keys) else 0.0, -np.inf)
        return out


def _as_positions(positions, n=None) -> np.ndarray:
    P = np.asarray(positions)
    if P.dtype.kind == "M":  # datetimes: days since the first
        P = (P - P.min()) / np.timedelta64(1, "D")
    try:
        P = np.asarray(P, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("positions must be numbers or datetimes") from None
    if P.ndim == 1:
        P = P[:, None]
    if P.ndim != 2:
        raise ValueError(f"positions must be 1-D (times) or 2-D (n, dims), got shape {P.shape}")
    if n is not None and P.shape[0] != n:
        raise ValueError(f"positions have {P.shape[0]} rows but there are {n} customers")
    if not np.isfinite(P).all():
        raise ValueError("positions contain NaN or infinite values")
    return P


def new_customer_weights(decay: Decay, n_new: int, n_old: int, *, fit_positions=None,
                         positions=None, metric="euclidean", sequential=False) -> np.ndarray:
    """``f(d)`` from each new customer to each fitted one, shape (n_new, n_old): the prior
    weights of a held-out customer's links to the training customers.

    With the constant decay no positions are needed.  Datetimes are read in days from one
    common origin.  ``sequential`` with 1-D positions forbids links to later customers.
    """
    if decay.is_constant and (positions is None or fit_positions is None):
        return np.ones((n_new, n_old))
    if positions is None or fit_positions is None:
        raise ValueError("the new customers' positions (and a model fitted with positions) "
                         f"are needed for a {type(decay).__name__} decay")
    fit_arr, new_arr = np.asarray(fit_positions), np.asarray(positions)
    if fit_arr.ndim != new_arr.ndim or fit_arr.shape[1:] != new_arr.shape[1:]:
        raise ValueError(f"positions have shape {new_arr.shape[1:]} per customer, the "
                         f"training positions {fit_arr.shape[1:]}")
    both = _as_positions(np.concatenate([fit_arr, new_arr]))
    old, new = both[:len(fit_arr)], both[len(fit_arr):]
    if old.shape[0] != n_old:
        raise ValueError(f"the training positions have {old.shape[0]} rows, the model "
                         f"{n_old} customers")
    if new.shape[0] != n_new:
        raise ValueError(f"positions have {new.shape[0]} rows but there are {n_new} new "
                         "customers")
    from scipy.spatial.distance import cdist
    W = decay(cdist(new, old, metric=metric))
    if sequential and old.shape[1] == 1:
        W[old[:, 0][None, :] > new[:, 0][:, None]] = 0.0
    return W


_METRIC_P = {"euclidean": 2.0, "cityblock": 1.0, "manhattan": 1.0, "chebyshev": np.inf}


def _pairwise(P, rows, metric):
    """Distances from the customers ``rows`` to every customer."""
    from scipy.spatial.distance import cdist
    return cdist(P[rows], P, metric=metric)


def _from_rows(n, rows, sequential):
    """CSR from per-row (indices, log_f) lists, rows sorted by index."""
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r[0]) for r in rows])
    if indptr[-1]:
        indices = np.concatenate([r[0] for r in rows]).astype(np.int64)
        log_f = np.concatenate([r[1] for r in rows]).astype(np.float64)
    else:
        indices, log_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    total = np.array([np.exp(r[1]).sum() for r in rows]) if n else np.zeros(0)
    return LinkCandidates(n, EXPLICIT, indptr, indices, log_f, total, bool(sequential))


def _keep(i, j, lf, sequential):
    ok = (j != i) & np.isfinite(lf)
    if sequential:
        ok &= j < i
    order = np.argsort(j[ok], kind="stable")
    return j[ok][order], lf[ok][order]


def link_candidates(decay: Decay, *, n=None, distances=None, positions=None,
                    metric="euclidean", sequential=False,
                    max_pairs=MAX_PAIRS) -> LinkCandidates:
    """Build the candidate links of a ddCRP.

    Parameters
    ----------
    decay : Decay
    n : int, optional
        Number of customers (needed only when neither distances nor positions are given,
        with the constant decay).
    distances : array (n, n) or scipy.sparse matrix, optional
        ``d_ij`` from customer i to customer j (need not be symmetric).  A sparse matrix
        lists the only pairs that may link (missing pairs have ``f = 0``); ``inf`` in a dense
        one does the same.  The diagonal is ignored.
    positions : array (n,) or (n, p), optional
        Times (numbers or datetimes, in days) or points; ``d_ij`` is the ``metric`` distance.
    metric : str, default="euclidean"
        Any metric of ``scipy.spatial.distance.cdist`` (for the window decay in several
        dimensions: ``"euclidean"``, ``"cityblock"`` or ``"chebyshev"``).
    sequential : bool, default=False
        Customers link only to themselves or to earlier customers (earlier rows).  With
        positions, they must be in non-decreasing order (sort the data by time).
    max_pairs : int
        Refuse to build more candidate pairs than this (a decay positive at every distance
        links all ``n²`` pairs): pass a sparse matrix of the pairs that matter instead, or
        use a window.

    Returns
    -------
    LinkCandidates
    """
    if distances is not None and positions is not None:
        raise ValueError("give either distances or positions, not both")
    if distances is None and positions is None:
        if not decay.is_constant:
            raise ValueError(f"a {type(decay).__name__} decay needs distances or positions")
        if n is None:
            raise ValueError("the constant decay needs the number of customers n")
        n = int(n)
        mode = ALL_EARLIER if sequential else ALL_OTHERS
        total = (np.arange(n, dtype=np.float64) if sequential
                 else np.full(n, max(n - 1, 0), dtype=np.float64))
        empty = np.zeros(0, dtype=np.int64)
        return LinkCandidates(n, mode, np.zeros(n + 1, dtype=np.int64), empty, np.zeros(0),
                              total, bool(sequential))

    if positions is not None:
        P = _as_positions(positions, n)
        n_pts = P.shape[0]
        if sequential and P.shape[1] == 1 and np.any(np.diff(P[:, 0]) < 0):
            raise ValueError("sequential=True links each customer to earlier rows: the "
                             "positions (times) must be in non-decreasing order; sort the "
                             "data by time first")
        if decay.is_constant:
            return link_candidates(decay, n=n_pts, sequential=sequential)
        if np.isfinite(decay.reach):
            return _window_pairs(decay, P, metric, sequential)
        n_pairs = n_pts * (n_pts - 1) // (2 if sequential else 1)
        if n_pts and n_pairs > max_pairs:
            raise ValueError(
                f"a {type(decay).__name__} decay is positive at every distance: {n_pts:,} "
                f"customers give {n_pairs:,} candidate links (more than max_pairs="
                f"{max_pairs:,}); use a Window decay, or pass a sparse distance matrix of "
                "the pairs that matter")
        rows = []
        block = max(1, int(2_000_000 // max(n_pts, 1)))
        for lo in range(0, n_pts, block):
            hi = min(n_pts, lo + block)
            D = _pairwise(P, np.arange(lo, hi), metric)
            lf = decay.log_weight(D)
            for r, i in enumerate(range(lo, hi)):
                rows.append(_keep(i, np.arange(n_pts), lf[r], sequential))
        return _from_rows(n_pts, rows, sequential)

    if sp.issparse(distances):
        D = sp.csr_matrix(distances, dtype=np.float64)
        D.sort_indices()
        if D.shape[0] != D.shape[1]:
            raise ValueError(f"the distance matrix must be square, got shape {D.shape}")
        if n is not None and D.shape[0] != n:
            raise ValueError(f"the distance matrix is {D.shape[0]} x {D.shape[0]} but there "
                             f"are {n} customers")
        if np.isnan(D.data).any() or (D.data < 0).any():
            raise ValueError("distances must be non-negative numbers (found NaN or < 0)")
        rows = []
        for i in range(D.shape[0]):
            lo, hi = D.indptr[i], D.indptr[i + 1]
            j = D.indices[lo:hi].astype(np.int64)
            rows.append(_keep(i, j, decay.log_weight(D.data[lo:hi]), sequential))
        return _from_rows(D.shape[0], rows, sequential)

    D = np.asarray(distances, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"the distance matrix must be square (n, n), got shape {D.shape}")
    if n is not None and D.shape[0] != n:
        raise ValueError(f"the distance matrix is {D.shape[0]} x {D.shape[0]} but there are "
                         f"{n} customers")
    off = ~np.eye(D.shape[0], dtype=bool)
    if np.isnan(D[off]).any() or (D[off] < 0).any():
        raise ValueError("distances must be non-negative numbers (found NaN or < 0)")
    D = np.where(off, D, np.inf)
    lf = decay.log_weight(D)
    cols = np.arange(D.shape[0])
    rows = [_keep(i, cols, lf[i], sequential) for i in range(D.shape[0])]
    return _from_rows(D.shape[0], rows, sequential)


def _window_pairs(decay: Decay, P, metric, sequential) -> LinkCandidates:
    """Pairs closer than the decay's reach, found without touching all pairs."""
    n = P.shape[0]
    reach = decay.reach
    if P.shape[1] == 1:
        x = P[:, 0]
        order = np.argsort(x, kind="stable")
        xs = x[order]
        lo = np.searchsorted(xs, xs - reach, side="right")
        hi = np.searchsorted(xs, xs + reach, side="left")
        rows = [None] * n
        for r in range(n):
            i = order[r]
            j = order[lo[r]:hi[r]]
            rows[i] = _keep(i, j, decay.log_weight(np.abs(x[j] - x[i])), sequential)
        return _from_rows(n, rows, sequential)
    from scipy.spatial import cKDTree
    if metric not in _METRIC_P:
        raise ValueError(f"a window decay on {P.shape[1]}-D positions supports the metrics "
                         f"{sorted(_METRIC_P)}, got {metric!r}")
    p = _METRIC_P[metric]
    tree = cKDTree(P)
    rows = []
    for i, near in enumerate(tree.query_ball_point(P, r=reach, p=p)):
        j = np.asarray(near, dtype=np.int64)
        diff = np.abs(P[j] - P[i])
        d = diff.max(axis=1) if p == np.inf else (diff ** p).sum(axis=1) ** (1.0 / p)
        rows.append(_keep(i, j, decay.log_weight(d), sequential))
    return _from_rows(n, rows, sequential)
