"""The ddCRP prior: draws of links and tables, and the map from links to tables.

Customer i links to itself with probability ``alpha / (alpha + sum_j f(d_ij))`` and to
customer j with probability ``f(d_ij) / (alpha + sum_j f(d_ij))``, independently of the other
customers (Blei & Frazier 2010, eq. 2); the tables are the connected components of the links.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..utils.checks import check_int, check_random_state
from ..partitions import canonical_labels
from .decay import parse_decay
from .distances import ALL_EARLIER, ALL_OTHERS, LinkCandidates, link_candidates


def links_to_labels(links) -> np.ndarray:
    """Table of each customer (connected components of the links), numbered 0, 1, ... by
    first appearance.  ``links`` of shape (n,) or (n_draws, n)."""
    links = np.asarray(links, dtype=np.int64)
    if links.ndim not in (1, 2):
        raise ValueError(f"links must be 1-D or 2-D, got shape {links.shape}")
    rows = np.atleast_2d(links)
    n_rows, n = rows.shape
    if n == 0:
        return np.zeros(links.shape, dtype=np.int64)
    if rows.min() < 0 or rows.max() >= n:
        raise ValueError("links must be customer indices in 0 .. n - 1")
    # all rows at once: one graph with each row's customers offset by row * n
    m = n_rows * n
    offset = (np.arange(n_rows, dtype=np.int64) * n)[:, None]
    graph = csr_matrix((np.ones(m), (np.arange(m), (rows + offset).ravel())), shape=(m, m))
    _, comp = connected_components(graph, directed=True, connection="weak")
    out = canonical_labels(comp.reshape(n_rows, n).astype(np.int64))
    return out.reshape(links.shape)


def draw_links(cands: LinkCandidates, alpha: float, rng) -> np.ndarray:
    """One draw of every customer's link from the prior."""
    n = cands.n
    i = np.arange(n)
    u = rng.random(n) * (alpha + cands.total)
    own = u < alpha
    links = i.copy()
    rest = ~own
    if cands.mode == ALL_OTHERS:
        j = np.minimum(((u - alpha) / np.maximum(cands.total, 1)) * (n - 1), n - 2).astype(np.int64)
        links[rest] = (j + (j >= i))[rest]
    elif cands.mode == ALL_EARLIER:
        links[rest] = np.minimum(np.floor(u - alpha), i - 1).astype(np.int64)[rest]
    else:
        w = np.exp(cands.log_f)
        cs = np.cumsum(w)
        base = np.concatenate([[0.0], cs])[cands.indptr[:-1]]
        pos = np.searchsorted(cs, base + (u - alpha), side="right")
        pos = np.clip(pos, cands.indptr[:-1], np.maximum(cands.indptr[1:] - 1, 0))
        if len(cands.indices):
            links[rest] = cands.indices[pos[rest]]
    return links


class PriorDraws(NamedTuple):
    """Draws of :func:`sample_prior`: ``links`` and ``labels``, each (n_draws, n)."""

    links: np.ndarray
    labels: np.ndarray


def sample_prior(decay="constant", *, alpha=1.0, n=None, distances=None, positions=None,
                 metric="euclidean", sequential=False, n_draws=1,
                 random_state=None) -> PriorDraws:
    """Draw link configurations and their tables from the ddCRP prior.

    Parameters
    ----------
    decay : Decay or str, default="constant"
        ``Window(a)``, ``Exponential(a)``, ``Logistic(a, slope)``, ``Constant()``, or a
        string such as ``"logistic:14"``.
    alpha : float, default=1.0
        Self-link weight (the concentration).
    n, distances, positions, metric, sequential
        As for :func:`dpclust.ddcrp.link_candidates` (``n`` alone serves the constant decay;
        sequential positions ``0, 1, ..., n - 1`` are the paper's Figure 2 setting).
    n_draws : int, default=1
    random_state : int, Generator or None

    Returns
    -------
    PriorDraws
        ``links`` and ``labels`` (tables numbered by first appearance), each (n_draws, n).

    Examples
    --------
    >>> import numpy as np
    >>> from dpclust.ddcrp import Window, sample_prior
    >>> draws = sample_prior(Window(10), positions=np.arange(100), sequential=True,
    ...                      random_state=0)
    >>> draws.labels.shape
    (1, 100)
    """
    alpha = float(alpha)
    if not alpha > 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    n_draws = check_int(n_draws, "n_draws", 1)
    cands = link_candidates(parse_decay(decay), n=n, distances=distances, positions=positions,
                            metric=metric, sequential=sequential)
    rng = check_random_state(random_state)
    links = np.array([draw_links(cands, alpha, rng) for _ in range(n_draws)]).reshape(n_draws,
                                                                                       cands.n)
    return PriorDraws(links, links_to_labels(links))
