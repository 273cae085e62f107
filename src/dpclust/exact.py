"""Exact posteriors over partitions of a handful of points, for testing samplers.

For N <= 6 points the posterior over partitions
``p(partition | X) ∝ p_prior(partition) prod_blocks f(X_block)`` can be enumerated
(Bell(6) = 203).  Run a sampler, map each draw to its canonical partition, and compare the
frequencies with the enumeration: a wrong Hastings ratio or a wrong new-cluster term looks
plausible on clustering demos and fails this test (ALGORITHMS.md section 6).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.special import logsumexp

from .families.base import ConjugateFamily
from .partitions import canonical_labels
from .priors import PartitionPrior, crp_log_prior


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
    log_prior : PartitionPrior, callable, float or ndarray
        A partition prior (:mod:`dpclust.priors`, at its starting concentration); or
        ``log_prior(sizes) -> float`` for a partition with block sizes ``sizes``; a float is
        read as a fixed DP concentration alpha (the CRP prior); an array gives the log prior
        of every partition of ``set_partitions(n)`` (e.g. from
        :func:`ddcrp_partition_log_prior`, for priors that are not exchangeable).

    Returns
    -------
    partitions : ndarray of shape (Bell(n), n)
    probs : ndarray of shape (Bell(n),)
    """
    n = family.n_points(X)
    parts = set_partitions(n)
    if isinstance(log_prior, np.ndarray):
        if log_prior.shape != (len(parts),):
            raise ValueError(f"a log prior per partition needs shape ({len(parts)},)")
        prior_of = log_prior
    else:
        if isinstance(log_prior, PartitionPrior):
            prior = log_prior
            log_prior = lambda sizes: prior.log_eppf(sizes, prior.alpha_start)  # noqa: E731
        elif not callable(log_prior):
            alpha = float(log_prior)
            log_prior = lambda sizes: crp_log_prior(sizes, alpha)  # noqa: E731
        prior_of = None
    logp = np.empty(len(parts))
    for j, row in enumerate(parts):
        k = int(row.max()) + 1
        stats = family.stats(X, row, k)
        lp = prior_of[j] if prior_of is not None else log_prior(family.count(stats))
        logp[j] = lp + family.log_marginal(stats).sum()
    return parts, np.exp(logp - logsumexp(logp))


def _find(parent, x):
    """Root of x in a union-find forest (with path halving)."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def ddcrp_partition_log_prior(candidates, alpha: float) -> np.ndarray:
    """``log p(partition)`` under a ddCRP, for every partition of ``set_partitions(n)``.

    Sums the prior probability of every link configuration (``prod_i (1 + candidates_i)``
    of them, at most a few hundred thousand) over the configurations that make each
    partition (Blei & Frazier 2010, eq. 2).  ``-inf`` for partitions no links can make.
    """
    import itertools

    n = candidates.n
    parts = set_partitions(n)
    index = {tuple(row): j for j, row in enumerate(parts)}
    options = []
    for i in range(n):
        j, lf = candidates.row(i)
        norm = math.log(alpha + candidates.total[i])
        options.append([(i, math.log(alpha) - norm)]
                       + [(int(a), float(b) - norm) for a, b in zip(j, lf)])
    if math.prod(len(o) for o in options) > 2_000_000:
        raise ValueError("too many link configurations to enumerate")
    total = np.full(len(parts), -np.inf)
    for combo in itertools.product(*options):
        parent = list(range(n))
        lp = 0.0
        for i, (c, w) in enumerate(combo):
            lp += w
            ri, rc = _find(parent, i), _find(parent, c)
            if ri != rc:
                parent[ri] = rc
        roots = [_find(parent, i) for i in range(n)]
        seen = {}
        row = tuple(seen.setdefault(r, len(seen)) for r in roots)
        j = index[row]
        total[j] = np.logaddexp(total[j], lp)
    return total


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
