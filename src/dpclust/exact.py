"""Exact posteriors over partitions of a handful of points, for testing samplers.

For N <= 6 points the posterior over partitions
``p(partition | X) ∝ p_prior(partition) prod_blocks f(X_block)`` can be enumerated
(Bell(6) = 203).  Run a sampler, map each draw to its canonical partition, and compare the
frequencies with the enumeration: a wrong Hastings ratio or a wrong new-cluster term looks
plausible on clustering demos and fails this test (Mathematics §6).
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
    """Empirical distribution of the draws over ``partitions`` (the draws of several chains,
    shape (chains, draws, n), pooled)."""
    draws = np.asarray(draws)
    idx = canonical_index(draws.reshape(-1, draws.shape[-1]), partitions)
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


def exact_learned_posterior(family: ConjugateFamily, X, log_prior, n_grid: int = 801,
                            span: tuple = (-14.0, 10.0)):
    """Enumerate ``p(partition | X)`` with a family's learned hyperparameter integrated
    out numerically, and that hyperparameter's own posterior.

    ``p(z | X) ∝ ∫ p(z) prod_k f(X_k | h) p(h) dh`` for every partition z, by the trapezoid
    rule on ``u = log h`` (``n_grid`` points over ``span``; the Jacobian ``h`` included),
    and ``p(h | X) ∝ p(h) sum_z p(z) prod_k f(X_k | h)`` on the same grid.

    Parameters
    ----------
    family : ConjugateFamily
        Resolved, with exactly one learned hyperparameter (a
        :class:`~dpclust.priors.GammaPrior` given for it).
    X : data in the family's working form, n <= 8 points.
    log_prior : as in :func:`exact_posterior`.

    Returns
    -------
    partitions : ndarray of shape (Bell(n), n)
    probs : ndarray of shape (Bell(n),)
    grid : ndarray of shape (n_grid,)
        Values of h.
    cdf : ndarray of shape (n_grid,)
        The exact posterior distribution function of h on ``grid``.
    """
    (name, hprior), = family.hyperpriors().items()
    n = family.n_points(X)
    parts = set_partitions(n)
    per_partition = np.asarray(log_prior) if isinstance(log_prior, np.ndarray) else None
    if isinstance(log_prior, PartitionPrior):
        prior = log_prior
        log_prior = lambda sizes: prior.log_eppf(sizes, prior.alpha_start)  # noqa: E731
    elif per_partition is None and not callable(log_prior):
        alpha = float(log_prior)
        log_prior = lambda sizes: crp_log_prior(sizes, alpha)  # noqa: E731
    blocks, owner, lp = [], [], np.empty(len(parts))
    for j, row in enumerate(parts):
        k = int(row.max()) + 1
        stats = family.stats(X, row, k)
        lp[j] = (per_partition[j] if per_partition is not None
                 else log_prior(family.count(stats)))
        blocks.append(stats)
        owner += [j] * k
    stats = type(blocks[0])(*(np.concatenate(a, axis=0) for a in zip(*blocks)))
    owner = np.asarray(owner)
    u = np.linspace(*span, n_grid)
    joint = np.empty((n_grid, len(parts)))  # log p(z, u | X) + const
    for g, ug in enumerate(u):
        h = math.exp(ug)
        logf = np.bincount(owner, weights=family.at({name: h}).log_marginal(stats),
                           minlength=len(parts))
        joint[g] = lp + logf + hprior.log_pdf(h) + ug
    probs, cdf = _integrate_grid(joint, u)
    return parts, probs, np.exp(u), cdf


def exact_prior_learned_posterior(family: ConjugateFamily, X, prior: PartitionPrior,
                                  n_grid: int = 801, span: tuple | None = None):
    """Enumerate ``p(partition | X)`` with a partition prior's learned parameter integrated
    out numerically, and that parameter's own posterior.

    ``p(z | X) ∝ prod_k f(X_k) ∫ p(z | h) p(h) dh`` for every partition z, by the trapezoid
    rule on ``u = log h`` (a :class:`~dpclust.priors.GammaPrior`) or ``u = logit h`` (a
    :class:`~dpclust.priors.BetaPrior`), the Jacobian included, and ``p(h | X)`` on the
    same grid.

    Parameters
    ----------
    family : ConjugateFamily
        Resolved, its hyperparameters fixed.
    X : data in the family's working form, n <= 8 points.
    prior : PartitionPrior
        With exactly one learned parameter (:meth:`~dpclust.priors.PartitionPrior.hyperpriors`)
        and its concentration at ``prior.alpha_start``.

    Returns
    -------
    As :func:`exact_learned_posterior`.
    """
    from .priors import BetaPrior

    (name, hprior), = prior.hyperpriors().items()
    unit = isinstance(hprior, BetaPrior)
    span = span or ((-12.0, 12.0) if unit else (-14.0, 10.0))
    n = family.n_points(X)
    parts = set_partitions(n)
    loglik = np.array([float(family.log_marginal(family.stats(X, z, int(z.max()) + 1)).sum())
                       for z in parts])
    sizes = [np.bincount(z) for z in parts]
    u = np.linspace(*span, n_grid)
    h = 1.0 / (1.0 + np.exp(-u)) if unit else np.exp(u)
    log_jac = np.log(h) + np.log1p(-h) if unit else u
    alpha = prior.alpha_start
    joint = np.empty((n_grid, len(parts)))
    for g in range(n_grid):
        at = prior.at({name: h[g]})
        joint[g] = ([at.log_eppf(sz, alpha) for sz in sizes] + loglik
                    + hprior.log_pdf(h[g]) + log_jac[g])
    probs, cdf = _integrate_grid(joint, u)
    return parts, probs, h, cdf


def _integrate_grid(joint: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From ``joint`` (n_grid, n_partitions), ``log p(z, u | X)`` up to a constant on the
    equally spaced grid ``u``: each partition's probability with ``u`` integrated out (the
    trapezoid rule) and the distribution function of ``u`` on the grid, both normalised."""
    dens = np.exp(joint - joint.max())
    du = u[1] - u[0]
    weights = np.full(len(u), du)
    weights[[0, -1]] = du / 2
    probs = (dens * weights[:, None]).sum(axis=0)
    marginal = dens.sum(axis=1)
    cdf = np.concatenate([[0.0], np.cumsum((marginal[1:] + marginal[:-1]) / 2 * du)])
    return probs / probs.sum(), cdf / cdf[-1]


def kolmogorov_distance(draws, grid: np.ndarray, cdf: np.ndarray) -> float:
    """``sup_x |F_draws(x) - F(x)|`` for a distribution function ``F`` tabulated on an
    increasing ``grid`` (linear between its points), over the draws and the grid."""
    draws = np.sort(np.asarray(draws, dtype=np.float64))
    m = len(draws)
    exact = np.interp(draws, grid, cdf)
    above = np.arange(1, m + 1) / m - exact
    below = exact - np.arange(m) / m
    return float(max(above.max(), below.max()))


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
    """Run ``sampler`` on ``model`` and return the kept label draws, shape (n_kept, n).

    With learned hyperparameters (``model.hyperpriors``), each step of the sampler at the
    current values is followed by their update given the partition, as the estimators
    run it, and ``(draws, hyper)`` is returned, ``hyper`` of shape (n_kept, n_learned).
    """
    state = sampler.init(rng, model, **(init_kwargs or {}))
    learned = bool(getattr(model, "hyperpriors", None))
    hyper = model.hyper_start if learned else ()
    draws, kept_hyper = [], []
    for t in range(n_steps):
        if learned:
            state, _, hyper = model.step(sampler, rng, state, hyper)
        else:
            state, _ = sampler.step(rng, state, model)
        if t >= burn_in and (t - burn_in) % thin == 0:
            draws.append(state.labels)
            kept_hyper.append(hyper)
    if learned:
        return np.array(draws), np.array(kept_hyper)
    return np.array(draws)
