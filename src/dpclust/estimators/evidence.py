"""Marginal likelihoods of sequential ddCRP models, and Bayes factors between decays.

For sequential distances customer i links only to itself or to earlier customers, and its
link's prior does not depend on later customers, so the evidence factorises over customers:

    p(x_1:N) = prod_i p(x_i | x_<i),
    p(x_i | x_<i, tables of the customers < i)
        = [alpha f(x_i) + sum_{j<i} f(d_ij) f(x_i | X_table(j))] / (alpha + sum_{j<i} f(d_ij))

(Blei & Frazier 2010, section 3, "Prediction", applied customer by customer).  The tables of
the earlier customers are integrated out by sequential Monte Carlo: every particle holds one
seating of the customers so far, is weighted by the predictive above, then seats customer i
by its exact conditional (a fully adapted particle filter).  The product of the mean
weights is an unbiased estimate of the evidence; independent runs give its Monte Carlo
error.  For the language model with a fixed base distribution the predictive does not depend
on the seating and one particle gives the exact evidence.

The Bayes factor of a decay against the ordinary CRP (the sequential constant decay) is the
ratio of two such evidences on the same data (the paper's eq. 6).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from ..utils.checks import check_int, check_random_state
from ..families.base import concatenate, take


class Evidence(NamedTuple):
    """``log p(X)`` estimated by sequential Monte Carlo.

    Attributes
    ----------
    log_evidence : float
        Log of the mean of the runs' (unbiased) evidence estimates.
    stderr : float
        Monte Carlo standard error of ``log_evidence`` (delta method over the runs; 0 when
        the estimate is exact).
    runs : ndarray
        Each run's log evidence.
    """

    log_evidence: float
    stderr: float
    runs: np.ndarray


class BayesFactor(NamedTuple):
    """``log p(X | model) - log p(X | reference)`` with its Monte Carlo standard error."""

    log_bayes_factor: float
    stderr: float
    evidence: Evidence
    reference: Evidence


def _combine_runs(runs) -> Evidence:
    runs = np.asarray(runs, dtype=np.float64)
    log_mean = float(logsumexp(runs) - math.log(len(runs)))
    if len(runs) < 2 or np.ptp(runs) == 0:
        return Evidence(log_mean, 0.0, runs)
    z = np.exp(runs - runs.max())
    stderr = float(z.std(ddof=1) / math.sqrt(len(runs)) / z.mean())
    return Evidence(log_mean, stderr, runs)


def _systematic(rng, log_w):
    """Systematic resampling: ``len(log_w)`` ancestor indices."""
    P = len(log_w)
    w = np.exp(log_w - log_w.max())
    c = np.cumsum(w / w.sum())
    u = (rng.random() + np.arange(P)) / P
    return np.minimum(np.searchsorted(c, u), P - 1)


# ---------------------------------------------------------------------------- language model
def _language_run(model, alpha, n_particles, rng) -> float:
    base = model.family
    words = model.X
    same = model.same_word
    total = model.candidates.total
    P = n_particles if base.hierarchical else 1
    K = np.zeros(P, dtype=np.int64)
    m = np.zeros((P, base.n_words), dtype=np.int64) if base.hierarchical else None
    lam = base.concentration if base.hierarchical else None
    lam_total = float(lam.sum()) if base.hierarchical else 0.0
    log_w = np.full(P, -math.log(P))
    log_z = 0.0
    for i, v in enumerate(words):
        lo, hi = same.indptr[i], same.indptr[i + 1]
        s_same = float(np.exp(same.log_f[lo:hi]).sum())
        if base.hierarchical:
            p0 = (lam[v] + m[:, v]) / (lam_total + K)
        else:
            p0 = np.full(P, base.probs[v])
        num = alpha * p0 + s_same
        inc = np.log(num) - math.log(alpha + total[i])
        lz = float(logsumexp(log_w + inc))
        log_z += lz
        log_w = log_w + inc - lz
        if base.hierarchical:
            new = rng.random(P) * num < alpha * p0  # i starts a table of word v
            K += new
            m[new, v] += 1
            if 1.0 / np.exp(2 * log_w).sum() < P / 2:
                idx = _systematic(rng, log_w)
                K, m = K[idx], m[idx]
                log_w = np.full(P, -math.log(P))
    return log_z


# ---------------------------------------------------------------------------- mixtures
def _mixture_run(model, alpha, n_particles, rng) -> float:
    """One particle filter over a mixture.  All particles' tables live in one batch of
    family statistics, particle by particle (slot ``offset[p] + t`` is table t of particle
    p), so that each customer costs a few batched family calls, not one per particle."""
    fam = model.family
    X = model.X
    cands = model.candidates
    n = model.n_samples
    P = n_particles
    empty = fam.empty_stats(1)
    labels = np.zeros((P, n), dtype=np.int64)  # table of each customer, per particle
    K = np.zeros(P, dtype=np.int64)  # tables per particle
    stats = fam.empty_stats(0)
    log_w = np.full(P, -math.log(P))
    log_z = 0.0
    log_alpha = math.log(alpha)
    rows = np.arange(P)
    for i in range(n):
        x = fam.subset(X, [i])
        prior_pred = float(fam.log_predictive(x, empty)[0, 0])
        offset = np.concatenate([[0], np.cumsum(K)])
        S = int(offset[-1])
        owner = np.repeat(rows, K)
        j, lf = cands.row(i)
        # each slot's summed link weight f(d_ij) over its customers j < i
        slot_w = np.bincount((labels[:, j] + offset[:-1, None]).ravel(),
                             weights=np.tile(np.exp(lf), P), minlength=S)
        with np.errstate(divide="ignore"):
            terms = np.log(slot_w) + (fam.log_predictive(x, stats)[0] if S else 0.0)
        own = log_alpha + prior_pred
        top = np.full(P, own)
        np.maximum.at(top, owner, terms)
        total = np.exp(own - top) + np.bincount(owner, weights=np.exp(terms - top[owner]),
                                                minlength=P)
        inc = top + np.log(total) - math.log(alpha + cands.total[i])
        lz = float(logsumexp(log_w + inc))
        log_z += lz
        log_w = log_w + inc - lz
        # seat customer i in every particle (Gumbel-max over its tables and a new one)
        key = terms + rng.gumbel(size=S)
        best = own + rng.gumbel(size=P)
        choice = K.copy()  # a new table unless an existing one beats it
        better = np.full(P, -np.inf)
        np.maximum.at(better, owner, key)
        won = better > best
        if won.any():
            hit = np.flatnonzero(key == better[owner])
            choice[owner[hit]] = np.where(won[owner[hit]], hit - offset[owner[hit]],
                                          choice[owner[hit]])
        labels[:, i] = choice
        new = choice == K
        if new.any():  # append a slot to each particle that opens a table, in order
            K = K + new
            new_offset = np.concatenate([[0], np.cumsum(K)])
            src = np.full(int(new_offset[-1]), -1, dtype=np.int64)
            keep = np.arange(S)
            src[keep - offset[owner] + new_offset[owner]] = keep
            stats = concatenate(stats, empty)
            src[src < 0] = S  # the empty slot
            stats = take(stats, src)
            offset = new_offset
        slots = offset[:-1] + choice
        stats = fam.combine(stats, fam.stats(fam.subset(X, np.full(P, i)), slots,
                                             int(offset[-1])))
        if i < n - 1 and 1.0 / np.exp(2 * log_w).sum() < P / 2:
            idx = _systematic(rng, log_w)
            stats = take(stats, np.concatenate(
                [np.arange(offset[q], offset[q + 1]) for q in idx]).astype(np.int64))
            labels, K = labels[idx], K[idx]
            log_w = np.full(P, -math.log(P))
    return log_z


# ---------------------------------------------------------------------------- public API
def _target(estimator, X):
    """The model (target) an unfitted estimator describes for the data X, and its alpha."""
    from ..samplers.crp import GammaPrior, resolve_alpha
    from .ddcrp import DDCRPLanguageModel, DDCRPMixture

    if not isinstance(estimator, (DDCRPMixture, DDCRPLanguageModel)):
        raise TypeError("the evidence is computed for a DDCRPMixture or a DDCRPLanguageModel, "
                        f"got {type(estimator).__name__}")
    if not estimator.sequential:
        raise ValueError(
            "the evidence is estimated customer by customer, which needs sequential distances "
            "(sequential=True, rows sorted by time); the paper's non-sequential case needs a "
            "ratio of two Gibbs runs instead")
    if isinstance(estimator.alpha, GammaPrior):
        raise ValueError("the evidence is computed at a fixed alpha; pass a number")
    alpha, _ = resolve_alpha(estimator.alpha)
    return estimator._target(X), alpha


def log_evidence(estimator, X, *, n_particles=256, n_runs=4, random_state=None) -> Evidence:
    """Marginal likelihood ``log p(X)`` of a sequential ddCRP model by sequential Monte Carlo.

    Parameters
    ----------
    estimator : DDCRPMixture or DDCRPLanguageModel
        The model: its family (or base), alpha (a number), decay and distances or
        positions; ``sequential`` must be True.  It need not be fitted.
    X : the data (as for the estimator's ``fit``).
    n_particles : int, default=256
        Particles per run (a mixture run costs O(n_particles · n · tables)).
    n_runs : int, default=4
        Independent runs, for the standard error.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    Evidence
    """
    n_particles = check_int(n_particles, "n_particles", 1)
    n_runs = check_int(n_runs, "n_runs", 1)
    rng = check_random_state(random_state)
    model, alpha = _target(estimator, X)
    from ..ddcrp.language import LanguageTarget
    if isinstance(model, LanguageTarget):
        if not model.family.hierarchical:
            return _combine_runs([_language_run(model, alpha, 1, rng)])
        runs = [_language_run(model, alpha, n_particles, rng) for _ in range(n_runs)]
    else:
        runs = [_mixture_run(model, alpha, n_particles, rng) for _ in range(n_runs)]
    return _combine_runs(runs)


def bayes_factor(estimator, X, reference=None, *, n_particles=256, n_runs=4,
                 random_state=None) -> BayesFactor:
    """Bayes factor of a sequential ddCRP model against a reference on the same data
    (Blei & Frazier 2010, eq. 6).

    Parameters
    ----------
    estimator : DDCRPMixture or DDCRPLanguageModel
        The model (sequential, alpha a number).
    X : the data.
    reference : estimator, optional
        The model to compare with; by default the same one with the constant decay, i.e.
        the ordinary CRP.
    n_particles, n_runs, random_state :
        As for :func:`log_evidence`.

    Returns
    -------
    BayesFactor
        ``log_bayes_factor > 0`` favours ``estimator``.
    """
    from sklearn.base import clone

    rng = check_random_state(random_state)
    if reference is None:
        reference = clone(estimator).set_params(decay="constant", positions=None,
                                                distances=None)
    a = log_evidence(estimator, X, n_particles=n_particles, n_runs=n_runs, random_state=rng)
    b = log_evidence(reference, X, n_particles=n_particles, n_runs=n_runs, random_state=rng)
    return BayesFactor(a.log_evidence - b.log_evidence, math.hypot(a.stderr, b.stderr), a, b)
