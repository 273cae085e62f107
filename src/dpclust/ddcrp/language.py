"""The fully observed ddCRP language model (Blei & Frazier 2010, sections 2 and 3.1).

Customers are the tokens of a text, ``w_1 .. w_N``.  Each table carries one word drawn from
the base distribution G0, and every customer at the table *is* that word.  So a link
configuration has positive likelihood only when every table holds one word, and then

    p(w | c) = prod_tables G0(word of the table)                      (G0 fixed)
    p(w | c) = DirMult(m; lambda)                                     (G0 ~ Dirichlet(lambda))

where ``m_v`` is the number of tables whose word is v: with G0 marginalised the tables' words
form a Dirichlet-multinomial (Pólya) urn, ``Gamma(Λ) / Gamma(Λ + K) prod_v Gamma(λ_v + m_v) /
Gamma(λ_v)`` with ``K = sum_v m_v`` tables and ``Λ = sum_v λ_v``.

Gibbs step for customer i (Mathematics §4): once i's link is removed, i's part A of
its table (its in-tree when the table splits) carries i's word w.  Linking to itself or
inside A leaves the tables as they are; linking to a customer j of another table T is only
possible when T carries w too, and joins the two, which removes one draw of w from G0:

    fixed G0:     ratio 1 / G0(w)
    Dirichlet:    ratio (Λ + K - 1) / (λ_w + m_w - 1)   (K, m_w counted with A apart)

The ratio is the same for every candidate table, so a customer costs O(candidates) plus the
customers that move.  Candidates are restricted once, up front, to customers with the same
word (the others have probability zero).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numba import njit
from scipy.special import gammaln

from ..utils.checks import DataError
from ..samplers.base import ChainData, StepInfo, relabel
from ..samplers.crp import GammaPrior
from ..kernels.gibbs import categorical_from_logs
from ..kernels.streams import next_uniform
from ..kernels.ddcrp import _in_tree, _link, _split_part, _unlink
from .distances import ALL_EARLIER, EXPLICIT, MAX_PAIRS, LinkCandidates
from .prior import draw_links, links_to_labels
from .sampler import _STARTS, DDCRPState, _children, update_alpha


# ------------------------------------------------------------------------------ the base
@dataclass(frozen=True)
class WordBase:
    """The base distribution G0 of the words of the tables.

    Parameters
    ----------
    concentration : float or array of shape (n_words,), default=1.0
        Dirichlet prior ``lambda`` on G0 (the hierarchical model of the paper, with G0
        marginalised); a float is a symmetric prior.  Ignored when ``probs`` is given.
    probs : array of shape (n_words,), optional
        A fixed G0 instead of the Dirichlet prior.
    n_words : int, optional
        Vocabulary size; by default the largest word id seen plus one (or the length of
        ``concentration``/``probs``/``vocabulary``).
    vocabulary : tuple of str, optional
        Word of each id, when the text was given as tokens.
    """

    concentration: object = 1.0
    probs: object = None
    n_words: int | None = None
    vocabulary: tuple | None = None

    @property
    def hierarchical(self) -> bool:
        return self.probs is None

    # -------------------------------------------------------------- the data
    def validate(self, words, *, what: str = "words") -> np.ndarray:
        """Word ids as a 1-D int64 array (tokens are looked up in ``vocabulary``)."""
        arr = np.asarray(words, dtype=object if isinstance(words, (list, tuple)) else None)
        if arr.ndim != 1:
            raise DataError(f"{what} must be a 1-D sequence of word ids or tokens, got shape "
                            f"{arr.shape}")
        if arr.shape[0] == 0:
            raise DataError(f"{what} is empty: the language model needs at least one word")
        if self.vocabulary is not None and arr.dtype.kind in "OUS":
            index = {w: k for k, w in enumerate(self.vocabulary)}
            out = np.empty(arr.shape[0], dtype=np.int64)
            for i, w in enumerate(arr):
                k = index.get(w if not isinstance(w, bytes) else w.decode())
                if k is None:
                    raise DataError(f"{what}[{i}] = {w!r} is not in the vocabulary")
                out[i] = k
            return out
        if arr.dtype.kind == "O":
            try:
                arr = np.array(arr.tolist())  # numbers: let NumPy infer ints or floats
                if arr.dtype.kind not in "iuf":
                    raise TypeError
            except (TypeError, ValueError):
                raise DataError(f"{what} must be integer word ids (or tokens, with a "
                                "vocabulary)") from None
        if arr.dtype.kind not in "iuf" or arr.dtype.kind == "b":
            raise DataError(f"{what} must be integer word ids, got dtype {arr.dtype}")
        if arr.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
            if len(bad):
                raise DataError(f"{what}[{bad[0]}] = {arr[bad[0]].item()!r} is not an integer "
                                "word id")
        bad = np.flatnonzero(arr < 0)
        if len(bad):
            raise DataError(f"{what}[{bad[0]}] = {arr[bad[0]].item()!r} is negative: word ids "
                            "are 0 .. n_words - 1")
        out = arr.astype(np.int64)
        if self.n_words is not None:
            bad = np.flatnonzero(out >= self.n_words)
            if len(bad):
                raise DataError(f"{what}[{bad[0]}] = {out[bad[0]]} is not a word id of the "
                                f"vocabulary of {self.n_words} words")
        return out

    def n_points(self, words) -> int:
        return int(np.asarray(words).shape[0])

    def resolve(self, words) -> WordBase:
        """Fix the vocabulary size and check the base against the data."""
        sizes = [int(np.max(words)) + 1]
        for arr in (self.probs, self.concentration):
            if arr is not None and np.ndim(arr) == 1:
                sizes.append(len(arr))
        if self.vocabulary is not None:
            sizes.append(len(self.vocabulary))
        n_words = self.n_words if self.n_words is not None else max(sizes)
        if self.probs is not None:
            p = np.asarray(self.probs, dtype=np.float64)
            if p.shape != (n_words,) or not np.isfinite(p).all() or (p < 0).any():
                raise DataError(f"probs must be {n_words} non-negative probabilities")
            if abs(p.sum() - 1.0) > 1e-8:
                raise DataError(f"probs must sum to 1, they sum to {p.sum():.6g}")
            zero = np.flatnonzero(p[words] == 0)
            if len(zero):
                raise DataError(f"word {words[zero[0]]} (at position {zero[0]}) has "
                                "probability zero under the fixed base")
            return replace(self, n_words=n_words, probs=p)
        lam = np.asarray(self.concentration, dtype=np.float64)
        lam = np.full(n_words, float(lam)) if lam.ndim == 0 else lam
        if lam.shape != (n_words,) or not np.isfinite(lam).all() or (lam <= 0).any():
            raise DataError(f"concentration must be a positive number or {n_words} positive "
                            "numbers")
        return replace(self, n_words=n_words, concentration=lam)

    def get_params(self, deep: bool = True) -> dict:
        return {"concentration": self.concentration, "probs": self.probs,
                "n_words": self.n_words, "vocabulary": self.vocabulary}

    # -------------------------------------------------------------- the maths
    def log_likelihood(self, words, labels) -> float:
        """``log p(w | tables)``: -inf when a table holds two different words."""
        labels = np.asarray(labels, dtype=np.int64)
        k = int(labels.max()) + 1
        first = np.full(k, -1, dtype=np.int64)
        first[labels[::-1]] = words[::-1]
        if (first[labels] != words).any():
            return -np.inf
        if not self.hierarchical:
            return float(np.log(self.probs[first]).sum())
        m = np.bincount(first, minlength=self.n_words)
        lam = self.concentration
        return float(gammaln(lam.sum()) - gammaln(lam.sum() + k)
                     + (gammaln(lam + m) - gammaln(lam)).sum())

    def log_new_table(self, table_words, n_tables=None) -> np.ndarray:
        """``log p(v | the tables' words)`` for every word v: the word of a new table."""
        if not self.hierarchical:
            return np.log(self.probs)
        m = np.bincount(np.asarray(table_words, dtype=np.int64), minlength=self.n_words)
        lam = self.concentration
        return np.log(lam + m) - math.log(lam.sum() + m.sum())


def same_word_candidates(cands: LinkCandidates, words, max_pairs=MAX_PAIRS) -> LinkCandidates:
    """The candidates restricted to customers with the same word (explicit rows).

    ``total`` keeps the full sums of the decay (the prior's normaliser).
    """
    n = cands.n
    if cands.mode == EXPLICIT:
        rows = np.repeat(np.arange(n), np.diff(cands.indptr))
        keep = words[cands.indices] == words[rows]
        counts = np.bincount(rows[keep], minlength=n)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cands._replace(indptr=indptr, indices=cands.indices[keep],
                              log_f=cands.log_f[keep])
    # constant decay: every (earlier) customer with the same word, weight 1
    freq = np.bincount(words).astype(np.int64)
    n_pairs = int((freq * (freq - 1)).sum())
    if cands.mode == ALL_EARLIER:
        n_pairs //= 2
    if n_pairs > max_pairs:
        raise DataError(f"the constant decay would list {n_pairs} same-word links (more than "
                        f"max_pairs={max_pairs}): use a window or a sparse distance matrix")
    order = np.argsort(words, kind="stable")
    starts = np.concatenate([[0], np.cumsum(freq)])
    idx_rows, idx_cols = [], []
    for v in np.flatnonzero(freq > 1):
        members = order[starts[v]:starts[v + 1]]  # increasing customer index
        a, b = np.meshgrid(members, members, indexing="ij")
        ok = (b < a) if cands.mode == ALL_EARLIER else (b != a)
        idx_rows.append(a[ok])
        idx_cols.append(b[ok])
    if idx_rows:
        r = np.concatenate(idx_rows)
        c = np.concatenate(idx_cols)
        o = np.lexsort((c, r))
        r, c = r[o], c[o]
    else:
        r = c = np.zeros(0, dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))]).astype(np.int64)
    return LinkCandidates(n, EXPLICIT, indptr, c.astype(np.int64), np.zeros(len(c)),
                          cands.total, cands.sequential)


# ------------------------------------------------------------------------------ the model
@dataclass(frozen=True, eq=False)
class LanguageTarget(ChainData):
    """The target: a ddCRP language model of the word ids ``X`` (one customer per token).

    Parameters
    ----------
    family : WordBase
        The resolved base distribution (named ``family`` for the estimators' machinery).
    X : ndarray of int64, shape (n,)
        The word ids.
    alpha_prior : GammaPrior or None
    candidates : LinkCandidates
        Who may link to whom (:func:`dpclust.ddcrp.link_candidates`).
    """

    family: WordBase
    X: np.ndarray
    alpha_prior: GammaPrior | None = None
    candidates: LinkCandidates | None = None

    def __post_init__(self):
        if self.candidates is None or self.candidates.n != len(self.X):
            raise ValueError("LanguageTarget needs link candidates for every word")

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @cached_property
    def same_word(self) -> LinkCandidates:
        return same_word_candidates(self.candidates, self.X)

    def log_likelihood(self, labels) -> float:
        return self.family.log_likelihood(self.X, labels)

    def log_joint_links(self, links, alpha: float) -> float:
        """``log p(c | D, alpha) + log p(w | tables)``."""
        return (self.candidates.log_prior(links, alpha)
                + self.log_likelihood(links_to_labels(links)))


# ------------------------------------------------------------------------------ the sweep
@njit(cache=True, _nrt=False)
def language_sweep(words, links, table, ch_head, ch_next, ch_prev, free, counters, m,
                   indptr, indices, log_f, log_alpha, hierarchical, lam, lam_total, log_g0,
                   seed, queue, walk_mark, logw, target):
    """One systematic sweep over the customers (see the module docstring).

    ``table`` holds table ids in ``0 .. n - 1``; ``free[:counters[0]]`` the unused ids;
    ``counters = [n_free, n_tables, tag]``; ``m[v]`` the number of tables of word v.
    """
    n = links.shape[0]
    state = seed
    for i in range(n):
        tag = counters[2] + 1
        counters[2] = tag
        w = words[i]
        old = links[i]
        T = table[i]
        _unlink(i, links, ch_head, ch_next, ch_prev)
        n_part = _split_part(i, old, links, ch_head, ch_next, queue, walk_mark, tag)
        if n_part > 0:  # i's in-tree leaves as a table of its own
            counters[0] -= 1
            a = free[counters[0]]
            for q in range(n_part):
                table[queue[q]] = a
            counters[1] += 1
            m[w] += 1
        else:
            a = T
        if hierarchical:
            join = math.log(lam_total + counters[1] - 1) - math.log(lam[w] + m[w] - 1)
        else:
            join = -log_g0[w]
        logw[0] = log_alpha
        target[0] = i
        k = 1
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            lw = log_f[p]
            if table[j] != a:
                lw += join
            logw[k] = lw
            target[k] = j
            k += 1
        state, u = next_uniform(state)
        j = target[categorical_from_logs(logw, k, u)]
        tj = table[j]
        if j != i and tj != a:  # join j's table
            n_move = n_part if n_part > 0 else _in_tree(i, ch_head, ch_next, queue)
            for q in range(n_move):
                table[queue[q]] = tj
            free[counters[0]] = a
            counters[0] += 1
            counters[1] -= 1
            m[w] -= 1
        _link(i, j, links, ch_head, ch_next, ch_prev)


@dataclass(frozen=True)
class LanguageGibbs:
    """Customer-assignment Gibbs sampler of the ddCRP language model (Blei & Frazier 2010,
    3.1).

    Parameters
    ----------
    start : {"prior", "singletons"}, default="prior"
        Starting links: a prior draw restricted to same-word links (so that the start has
        positive probability), or every word alone at its table.
    alpha_steps : int, default=5
        Metropolis-Hastings steps on log alpha per sweep when alpha has a prior.
    """

    start: str = "prior"
    alpha_steps: int = 5
    name = "ddcrp-language"

    def __post_init__(self):
        if self.start not in _STARTS:
            raise ValueError(f"start must be one of {_STARTS}, got {self.start!r}")

    def init(self, rng, model: LanguageTarget, alpha: float = 1.0, links=None) -> DDCRPState:
        n = model.n_samples
        if links is not None:
            links = np.asarray(links, dtype=np.int64)
            if links.shape != (n,):
                raise ValueError(f"links have shape {links.shape}, expected ({n},)")
            if not np.isfinite(model.log_joint_links(links, float(alpha))):
                raise ValueError("the starting links have probability zero (a forbidden "
                                 "link, or a table with two different words)")
        elif self.start == "singletons":
            links = np.arange(n, dtype=np.int64)
        else:
            links = draw_links(model.same_word, float(alpha), rng)
        return DDCRPState(links_to_labels(links), float(alpha), links.copy())

    def step(self, rng, state: DDCRPState, model: LanguageTarget):
        words = model.X
        base = model.family
        cands = model.same_word
        n = model.n_samples
        links = np.array(state.links, dtype=np.int64)
        table = links_to_labels(links)
        k = int(table.max()) + 1
        free = np.arange(n - 1, k - 1, -1, dtype=np.int64)
        free = np.concatenate([free, np.zeros(k, dtype=np.int64)])
        counters = np.array([n - k, k, 0], dtype=np.int64)
        first = np.empty(k, dtype=np.int64)
        first[table[::-1]] = words[::-1]
        m = np.bincount(first, minlength=base.n_words).astype(np.int64)
        ch = np.empty((3, n), dtype=np.int64)
        _children(links, ch[0], ch[1], ch[2])
        width = int(np.diff(cands.indptr).max(initial=0)) + 1
        if base.hierarchical:
            lam, lam_total, log_g0 = base.concentration, float(base.concentration.sum()), \
                np.zeros(1)
        else:
            lam, lam_total, log_g0 = np.zeros(1), 0.0, np.log(base.probs)
        language_sweep(words, links, table, ch[0], ch[1], ch[2], free, counters, m,
                       cands.indptr, cands.indices, cands.log_f, math.log(state.alpha),
                       base.hierarchical, lam, lam_total, log_g0,
                       np.uint64(rng.integers(2**63)), np.empty(n, dtype=np.int64),
                       np.zeros(n, dtype=np.int64), np.empty(width),
                       np.empty(width, dtype=np.int64))
        alpha = update_alpha(rng, state.alpha, links, model.candidates, model.alpha_prior,
                             self.alpha_steps)
        labels = relabel(table)[0]
        log_lik = model.log_likelihood(labels)
        log_joint = model.candidates.log_prior(links, alpha) + log_lik
        return (DDCRPState(labels, alpha, links),
                StepInfo(log_joint, int(counters[1]), alpha, log_likelihood=float(log_lik)))
