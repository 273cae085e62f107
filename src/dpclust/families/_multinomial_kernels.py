"""Numba kernel face of the multinomial family: per-point operations on cluster slots.

See :class:`dpclust.families.base.FamilyKernel` for the contract and
:mod:`dpclust.families.multinomial` for the model.
"""

from __future__ import annotations

import math

from numba import njit, prange


# --------------------------------------------------------------------- kernels
# kdata  = (indptr, indices, values, lengths, log_mult)
# kstats = (n_docs, total_words, counts (cap, V), log_mult_sum)
# khyper = (beta (V,), [B])

@njit(cache=True, _nrt=False)
def _dm_reset(kstats, k, khyper):
    n, total, counts, lm = kstats
    n[k] = 0.0
    total[k] = 0.0
    lm[k] = 0.0
    for w in range(counts.shape[1]):
        counts[k, w] = 0.0


@njit(cache=True, _nrt=False)
def _dm_add(kdata, i, kstats, k, khyper):
    indptr, indices, values, lengths, log_mult = kdata
    n, total, counts, lm = kstats
    for p in range(indptr[i], indptr[i + 1]):
        counts[k, indices[p]] += values[p]
    n[k] += 1.0
    total[k] += lengths[i]
    lm[k] += log_mult[i]


@njit(cache=True, _nrt=False)
def _dm_remove(kdata, i, kstats, k, khyper):
    indptr, indices, values, lengths, log_mult = kdata
    n, total, counts, lm = kstats
    if n[k] <= 1.0:
        _dm_reset(kstats, k, khyper)
        return
    for p in range(indptr[i], indptr[i + 1]):
        counts[k, indices[p]] -= values[p]
    n[k] -= 1.0
    total[k] -= lengths[i]
    lm[k] -= log_mult[i]


@njit(cache=True, _nrt=False)
def _log_rising(a, m):
    """``lgamma(a + m) - lgamma(a)`` for a whole number ``m >= 0``."""
    if m <= 12.0:
        prod = 1.0
        for j in range(int(m)):
            prod *= a + j
        return math.log(prod)
    return math.lgamma(a + m) - math.lgamma(a)


@njit(cache=True, _nrt=False)
def _dm_log_predictive(kdata, i, kstats, k, khyper):
    indptr, indices, values, lengths, log_mult = kdata
    n, total, counts, lm = kstats
    beta, h = khyper
    s = log_mult[i] - _log_rising(h[0] + total[k], lengths[i])
    for p in range(indptr[i], indptr[i + 1]):
        w = indices[p]
        s += _log_rising(beta[w] + counts[k, w], values[p])
    return s


@njit(cache=True, _nrt=False)
def _dm_log_predictives(kdata, i, kstats, slots, lo, m, khyper, out):
    """``out[a] =`` :func:`_dm_log_predictive` of slot ``slots[lo + a]``, for ``a < m``:
    the document's words outer, so that one word's counts in all the slots are read
    together (neighbours in memory with the slot-minor counts of ``alloc_by_point``); the
    same sums in the same order, so the same values."""
    indptr, indices, values, lengths, log_mult = kdata
    n, total, counts, lm = kstats
    beta, h = khyper
    for a in range(m):
        out[a] = log_mult[i] - _log_rising(h[0] + total[slots[lo + a]], lengths[i])
    for p in range(indptr[i], indptr[i + 1]):
        w = indices[p]
        x = values[p]
        b = beta[w]
        for a in range(m):
            out[a] += _log_rising(b + counts[slots[lo + a], w], x)


@njit(cache=True, _nrt=False)
def _word_term(b, c):
    """``lgamma(b + c) - lgamma(b)`` of a word counted ``c != 0`` times."""
    if c <= 12.0 and c == math.floor(c):
        return _log_rising(b, c)
    return math.lgamma(b + c) - math.lgamma(b)


@njit(cache=True, _nrt=False)
def _word_terms(counts, k, beta):
    """``(sum_w lgamma(beta_w + n_kw) - lgamma(beta_w), sum_w n_kw)`` over the words row k
    of ``counts`` holds (rows of tens of thousands of words hold a few thousand)."""
    s = 0.0
    t = 0.0
    for w in range(counts.shape[1]):
        c = counts[k, w]
        if c != 0.0:
            t += c
            s += _word_term(beta[w], c)
    return s, t


@njit(cache=True, _nrt=False)
def _union_terms(counts, a, b, beta):
    """:func:`_word_terms` of the row ``counts[a] + counts[b]``, without making it."""
    s = 0.0
    t = 0.0
    for w in range(counts.shape[1]):
        c = counts[a, w] + counts[b, w]
        if c != 0.0:
            t += c
            s += _word_term(beta[w], c)
    return s, t


@njit(cache=True, parallel=True)
def log_marginal_words(counts, beta, out, total):
    """:func:`_word_terms` of every row of ``counts`` (``out``, ``total``), in parallel."""
    for k in prange(counts.shape[0]):
        out[k], total[k] = _word_terms(counts, k, beta)


@njit(cache=True)
def log_marginal_words_serial(counts, beta, out, total):
    """:func:`log_marginal_words` on one thread (a few clusters: a parallel region would
    cost more than the sums)."""
    for k in range(counts.shape[0]):
        out[k], total[k] = _word_terms(counts, k, beta)


@njit(cache=True, parallel=True)
def union_words(counts, first, second, beta, out, total):
    """:func:`_union_terms` of the pairs ``(first[t], second[t])`` (the same sums as of the
    added rows), in parallel."""
    for t in prange(first.shape[0]):
        out[t], total[t] = _union_terms(counts, first[t], second[t], beta)


@njit(cache=True)
def union_words_serial(counts, first, second, beta, out, total):
    """:func:`union_words` on one thread."""
    for t in range(first.shape[0]):
        out[t], total[t] = _union_terms(counts, first[t], second[t], beta)


@njit(cache=True, _nrt=False)
def _dm_log_marginal(kstats, k, khyper):
    n, total, counts, lm = kstats
    beta, h = khyper
    s, _ = _word_terms(counts, k, beta)
    return lm[k] + math.lgamma(h[0]) - math.lgamma(h[0] + total[k]) + s


@njit(cache=True, _nrt=False)
def _dm_log_join_gain(kstats, a, b, khyper):
    """``log f(X_a ∪ X_b) - log f(X_a) - log f(X_b)``: only words counted in both slots
    contribute to the sum (the multinomial coefficients cancel)."""
    n, total, counts, lm = kstats
    beta, h = khyper
    if n[a] == 0.0 or n[b] == 0.0:
        return 0.0
    tb = total[b]
    s = _log_rising(h[0], tb) - _log_rising(h[0] + total[a], tb)
    for w in range(beta.shape[0]):
        ca = counts[a, w]
        cb = counts[b, w]
        if ca > 0.0 and cb > 0.0:
            s += _log_rising(beta[w] + ca, cb) - _log_rising(beta[w], cb)
    return s


# ------------------------------------------------------- instantiated-parameter pass
# kdata as above; kparams = (log_prob (K, V),);
# raw statistics row = [n_docs, word counts (V), sum of log multinomial coefficients].

@njit(cache=True, _nrt=False)
def _dm_log_likelihood(kdata, i, kparams, k):
    indptr, indices, values, lengths, log_mult = kdata
    log_prob = kparams[0]
    s = log_mult[i]
    for p in range(indptr[i], indptr[i + 1]):
        s += values[p] * log_prob[k, indices[p]]
    return s


@njit(cache=True, _nrt=False)
def _dm_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    """``out[a] = log f(x_i; theta_{comps[start + a]})`` for ``a < m``."""
    for a in range(m):
        out[a] = _dm_log_likelihood(kdata, i, kparams, comps[start + a])


@njit(cache=True, _nrt=False)
def _dm_accumulate(kdata, i, acc, slot):
    indptr, indices, values, lengths, log_mult = kdata
    acc[slot, 0] += 1.0
    for p in range(indptr[i], indptr[i + 1]):
        acc[slot, 1 + indices[p]] += values[p]
    acc[slot, acc.shape[1] - 1] += log_mult[i]
