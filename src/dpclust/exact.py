"""Exact posteriors over partitions of a handful of points, for testing samplers.

For N <= 6 points the posterior over partitions
``p(partition | X) ∝ p_prior(partition) prod_blocks f(X_block)`` can be enumerated
(Bell(6) = 203).  Run a sampler, map each draw to its canonical partition, and compare the
frequencies with the enumeration: a wrong Hastings ratio or a wrong new-cluster term looks
plausible on clustering demos and fails this test (ALGORITHMS.md section 6).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import logsumexp

from .families.base import ConjugateFamily
from .partitions import canonical_labels
from .samplers.crp import crp_log_prior


def set_partitions(n: int) -> np.ndarray:
    """All partitions of ``n`` points as canonical label rows, shape (Bell(n), n).

    Canonical: point 0 has label 0 and each new block takes the next label (restricted
    growth strings).
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    if n > 10:
        raise ValueError(f"enumerating partitions of {n} points is too large (Bell({n}))")
    rows = [[0]]
    for _ in range(1, n):
        rows = [r + [v] for r in rows for v in range(max(r) + 2)]
    return np.array(rows, dtype=np.int64)


def canonical_index(draws: np.ndarray, partitions: np.ndarray) -> np.ndarray:
    """Index into ``partitions`` of every draw (row), after canonical relabelling."""
    canon = canonical_labels(np.atleast_2d(np.asarray(draws)))
    lookup = {row.tobytes(): j for j, row in enumerate(partitions.astype(np.int64))}
    return np.array([lookup[row.tobytes()] for row in canon], dtype=np.int64)


def partition_frequencies(draws: np.ndarray, partitions: np.ndarray) -> np.ndarray:
    """Empirical distribution of the draws over ``partitions``."""
    idx = canonical_index(draws, partitions)
    return np.bincount(idx, minlength=len(partitions)) / len(idx)


def exact_posterior(family: ConjugateFamily, X, log_prior: Callable[[np.ndarray], float] | float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Enumerate ``p(partition | X)`` for a resolved family and a handful of points.

    Parameters
    ----------
    family : ConjugateFamily
        Resolved family.
    X : data in the family's working form, n <= 8 points.
    log_prior : callable or float
        ``log_prior(sizes) -> float`` for a partition with block sizes ``sizes``; a float is
        read as a fixed DP concentration alpha (the CRP prior).

    Returns
    -------
    partitions : ndarray of shape (Bell(n), n)
    probs : ndarray of shape (Bell(n),)
    """
    if not callable(log_prior):
        alpha = float(log_prior)
        log_prior = lambda sizes: crp_log_prior(sizes, alpha)  # noqa: E731
    n = family.n_points(X)
    parts = set_partitions(n)
    logp = np.empty(len(parts))
    for j, row in enumerate(parts):
        k = int(row.max()) + 1
        stats = family.stats(X, row, k)
        logp[j] = log_prior(family.count(stats)) + family.log_marginal(stats).sum()
    return parts, np.exp(logp - logsumexp(logp))


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """``0.5 * sum |p - q|``."""
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def run_chain(sampler, model, rng, n_steps: int, *, burn_in: int = 100, thin: int = 1,
              init_kwargs: dict | None = None) -> np.ndarray:
    """Run ``sampler`` on ``model`` and return the kept label draws, shape (n_kept, n)."""
    state = sampler.init(rng, model, **(init_kwargs or {}))
    draws = []
    for t in range(n_steps):
        state, _ = sampler.step(rng, state, model)
        if t >= burn_in and (t - burn_in) % thin == 0:
            draws.append(state.labels)
    return np.array(draws)
