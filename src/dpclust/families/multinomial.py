"""Count vectors (bag-of-words documents) with a Dirichlet-multinomial model.

A data point is a count vector ``x`` over a vocabulary of ``V`` words: one document is one
multinomial draw from its cluster's word distribution ``theta ~ Dirichlet(beta)``.  Data are
held as a CSR matrix and never densified to N x V; per-cluster word totals are dense K x V.

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models using sub-cluster
    splits. NIPS (multinomial experiments).
Blei, D. M. & Frazier, P. I. (2010). Distance dependent Chinese restaurant processes. ICML
    (the Dirichlet-multinomial mixture of documents).
Mathematics §1 (the log marginal with its multinomial coefficients).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from ..priors import GammaPrior
from ..utils.checks import check_counts
from . import _multinomial_kernels as _k
from ._multinomial_entry import ENTRY_POINTS
from .base import (ClusterColumn, ClusterSummary, ClusterTable, ConjugateFamily,
                   FamilyKernel, HyperParameter, PassKernel, log_dirichlet,
                   positive_or_gamma, register_family, take)
from .identical import distinct_keys

#: words of each cluster that the run summary lists, most probable first
N_TOP_WORDS = 10
#: the word sums over fewer cells (clusters × words) than this run on one thread: a parallel
#: region would cost more than the sums, and its idle threads spin between regions
SERIAL_CELLS = 65_536


class CountStats(NamedTuple):
    """Statistics of K clusters of documents.

    ``n`` (K,) number of documents, ``counts`` (K, V) word totals, ``log_mult`` (K,) the sum
    of the documents' log multinomial coefficients ``log (m! / prod_w x_w!)``.
    """

    n: np.ndarray
    counts: np.ndarray
    log_mult: np.ndarray


class LengthSummary(NamedTuple):
    """What the data-driven defaults need: documents, total length, vocabulary size."""

    n: int
    total: float
    n_features: int


class DirichletPosterior(NamedTuple):
    """Dirichlet(concentration) posteriors of K clusters, ``concentration`` (K, V)."""

    concentration: np.ndarray


class MultinomialParams(NamedTuple):
    """Word log-probabilities of K clusters, ``log_prob`` (K, V)."""

    log_prob: np.ndarray


def _row_ids(X: sp.csr_matrix) -> np.ndarray:
    """Row index of every stored entry of a CSR matrix."""
    return np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))


def log_multinomial_coefficients(X: sp.csr_matrix) -> np.ndarray:
    """``log(m_i! / prod_w x_iw!)`` for every row of a CSR count matrix, shape (n,)."""
    rows = _row_ids(X)
    lengths = np.bincount(rows, weights=X.data, minlength=X.shape[0])
    return gammaln(lengths + 1.0) - np.bincount(rows, weights=gammaln(X.data + 1.0),
                                                 minlength=X.shape[0])


@register_family
class DirichletMultinomial(ConjugateFamily):
    """Multinomial documents with a Dirichlet prior on each cluster's word distribution.

    Parameters
    ----------
    concentration : float, array-like of shape (n_features,) or GammaPrior, \
            default=GammaPrior(1, 1)
        The Dirichlet parameter ``beta``.  A :class:`~dpclust.priors.GammaPrior` (the
        default) learns the symmetric ``beta`` from the data: it is resampled every
        iteration given the partition (a slice-sampling update on ``sum_k log f(X_k | beta)
        + log p(beta)``, below).  A number fixes the symmetric prior (1.0 is the uniform
        distribution over word distributions), an array gives one value per word.  The
        default is learned because no one value suits every corpus: on 20 Newsgroups
        (11,269 posts, 61,188 words, one chain of 100 iterations) beta = 1 gives 5 clusters
        and NMI 0.37, while the learned beta settles near 0.025 with 23 clusters holding at
        least 1 % of the posts and NMI 0.63.

    Notes
    -----
    With cluster word totals ``n_w`` and ``n = sum_w n_w``, ``B = sum_w beta_w``:
    ``log f(X) = sum_i log Mult(x_i) + lgamma(B) - lgamma(B + n)
    + sum_w [lgamma(beta_w + n_w) - lgamma(beta_w)]``.
    **The reported log marginals, predictives and likelihoods include the multinomial
    coefficients** ``log Mult(x_i)``, so they are absolute log probabilities of the count
    vectors (they cancel in every ratio a sampler uses).

    Learned, the symmetric ``beta`` has the conditional ``p(beta | z, X) ∝ p(beta) prod_k
    f(X_k | beta)`` given the partition, which the chain samples after every step (the
    clusters' word totals are all it reads).
    """

    name = "multinomial"
    learnable = ("concentration",)
    kernel_stats_hold_prior = False
    describes = "word counts"
    data_kind = "counts"
    hyperparameters = (
        HyperParameter("concentration", positive_or_gamma, default="gamma:1,1",
                       metavar="BETA",
                       help="multinomial only: symmetric Dirichlet prior on each cluster's "
                            "word distribution: a number fixes it (smaller gives sharper "
                            "clusters), gamma:SHAPE,RATE learns it from the data under that "
                            "Gamma prior (default: gamma:1,1, learned)"),
    )
    #: ``sampler="auto"`` picks the sub-cluster sampler from this many documents, as for
    #: other data: with its collapsed pass it ends above collapsed Gibbs in the same time on
    #: 20 Newsgroups and on random subsets of 5,000 and 2,000 of its posts (beta = 0.1: log
    #: joint -3.536e6 against -3.560e6 at 5,000 in 30 s)
    auto_subcluster_from = 5000
    # (below that, Gibbs with Dahl's merge-split moves, as for other data: one-point Gibbs
    # moves cannot separate two topics held in one cluster, so chains stay in different
    # modes: 400 documents of four topics, four chains until they converge within 300 s,
    # beta learned: Gibbs stopped at 25,551 iterations with R-hat 1.72, Gibbs+SAMS
    # converged after 800, 27 s, R-hat <= 1.004)
    #: ``init="auto"`` starts the sub-cluster sampler at random, not from k-means on word
    #: proportions, which on 20 Newsgroups ended lower (NMI 0.24 against 0.34)
    kmeans_start = False
    #: half the sub-cluster sampler's sequential moves are restricted Gibbs scan moves: a
    #: sequential allocation of documents gives the whole move to the side that gets the first
    #: few (with 28,102 words at beta = 0.1 a side that has seen more tokens predicts every
    #: next document better), so that no split of one cluster is ever accepted; 5,000
    #: Enron-shaped documents (20 topics) from one cluster: K 1 after 20 iterations, with
    #: scan moves K 13 after one iteration and 20 after two, log joint above the generating
    #: labels'
    scan_moves = 0.5

    def collapsed_pass(self, n_samples: int, n_rounds: int = 1) -> bool:
        """Always: sampled word distributions pin each document to its cluster (its own
        rare words), so the instantiated pass barely moves documents (20 Newsgroups, beta =
        0.1, 60 s: log joint -8.30e6 and NMI 0.34 against -8.07e6 and 0.58 collapsed)."""
        return True

    def __init__(self, concentration=GammaPrior(1.0, 1.0)):
        self.concentration = concentration
        self._n_features = None
        self.mean_length_ = None

    def get_params(self, deep: bool = True) -> dict:
        return {"concentration": self.concentration}

    def init_features(self, X):
        """Word proportions of each document (rows scaled to sum to one), sparse."""
        X = self._as_csr(X)
        totals = np.asarray(X.sum(axis=1)).ravel()
        return sp.diags(1.0 / np.maximum(totals, 1.0)) @ X

    def validate(self, X, *, what="X"):
        return check_counts(X, what=what, n_features=self._n_features)

    @property
    def is_resolved(self) -> bool:
        return self._n_features is not None

    def n_features(self) -> int:
        if self._n_features is None:
            raise ValueError("the family has no vocabulary size until it is resolved on data")
        return self._n_features

    def summarize(self, X) -> LengthSummary:
        """Number of documents, their total length and the vocabulary size."""
        total = float(X.sum()) if X.shape[0] else 0.0
        return LengthSummary(int(X.shape[0]), total, int(X.shape[1]))

    def merge_summaries(self, a: LengthSummary, b: LengthSummary) -> LengthSummary:
        if a.n_features != b.n_features:
            raise ValueError(f"parts of the data have {a.n_features} and {b.n_features} "
                             "words in their vocabularies")
        return LengthSummary(a.n + b.n, a.total + b.total, a.n_features)

    def resolve(self, X) -> "DirichletMultinomial":
        return self.resolve_summary(self.summarize(X))

    def resolve_summary(self, summary: LengthSummary) -> "DirichletMultinomial":
        V = summary.n_features
        learned = self.hyperpriors().get("concentration")
        beta = np.asarray(learned.start if learned is not None else self.concentration,
                          dtype=np.float64)
        if beta.ndim == 0:
            beta = np.full(V, float(beta))
        if beta.shape != (V,):
            raise ValueError(f"concentration has shape {beta.shape}, expected a scalar or ({V},)")
        if not np.all(np.isfinite(beta)) or np.any(beta <= 0):
            raise ValueError("concentration must be positive and finite")
        out = DirichletMultinomial(self.concentration)
        out._beta = beta
        out._n_features = V
        out.mean_length_ = float(max(summary.total / max(summary.n, 1), 1.0))
        return out

    def at(self, values: dict) -> "DirichletMultinomial":
        """This resolved family with the symmetric ``beta`` at ``values["concentration"]``
        (the other resolved values shared)."""
        out = DirichletMultinomial(self.concentration)
        out.__dict__.update(self.__dict__)
        out._beta = np.full(self.n_features(), float(values["concentration"]))
        return out

    def learned_values(self) -> dict:
        return ({"concentration": float(self.beta[0])} if self.hyperpriors() else {})

    def kernel_hyper(self, kernel):
        beta = np.ascontiguousarray(self.beta)
        return (beta, np.array([beta.sum()]))

    @property
    def beta(self) -> np.ndarray:
        """The resolved Dirichlet parameter, one value per word."""
        if self._n_features is None:
            raise ValueError("the family has no vocabulary size until it is resolved on data")
        return self._beta

    # ------------------------------------------------------------ statistics
    def _as_csr(self, X):
        """Any count matrix as canonical CSR (the kernels read rows through ``indptr``)."""
        if sp.issparse(X):
            if X.format == "csr" and X.has_canonical_format:
                return X
            X = sp.csr_matrix(X)
            X.sum_duplicates()
            return X
        return sp.csr_matrix(np.asarray(X, dtype=np.float64))

    def stats(self, X, labels=None, n_clusters=None) -> CountStats:
        X = self._as_csr(X)
        n = X.shape[0]
        if labels is None:
            labels = np.zeros(n, dtype=np.intp)
            n_clusters = 1
        labels = np.asarray(labels, dtype=np.intp)
        if n_clusters is None:
            n_clusters = int(labels.max()) + 1 if n else 0
        V = X.shape[1]
        rows = _row_ids(X)
        flat = labels[rows] * V + X.indices
        counts = np.bincount(flat, weights=X.data, minlength=n_clusters * V).reshape(n_clusters, V)
        log_mult = np.bincount(labels, weights=log_multinomial_coefficients(X),
                               minlength=n_clusters)
        return CountStats(np.bincount(labels, minlength=n_clusters).astype(np.float64),
                          counts, log_mult)

    def empty_stats(self, n_clusters=1) -> CountStats:
        V = self.n_features()
        return CountStats(np.zeros(n_clusters), np.zeros((n_clusters, V)), np.zeros(n_clusters))

    def combine(self, a: CountStats, b: CountStats) -> CountStats:
        return CountStats(a.n + b.n, a.counts + b.counts, a.log_mult + b.log_mult)

    def subtract(self, a: CountStats, b: CountStats) -> CountStats:
        out = CountStats(a.n - b.n, a.counts - b.counts, a.log_mult - b.log_mult)
        if np.any(out.n < 0) or np.any(out.counts < -1e-9):
            raise ValueError("cannot remove more counts than a cluster holds")
        return out

    def reweight(self, stats: CountStats, factor) -> CountStats:
        """Statistics of the same documents counted ``factor`` times (per cluster)."""
        factor = np.asarray(factor, dtype=np.float64)
        return CountStats(stats.n * factor, stats.counts * factor[:, None], stats.log_mult * factor)

    def count(self, stats: CountStats) -> np.ndarray:
        return np.asarray(stats.n)

    # -------------------------------------------------------------- posterior
    def posterior(self, stats: CountStats) -> DirichletPosterior:
        return DirichletPosterior(self.beta[None, :] + stats.counts)

    def log_marginal(self, stats: CountStats) -> np.ndarray:
        beta = self.beta
        B = beta.sum()
        counts = np.ascontiguousarray(stats.counts, dtype=np.float64)
        # only the words a cluster holds contribute (a cluster of a few hundred documents
        # holds a few thousand of tens of thousands of words)
        words = np.empty(counts.shape[0])
        total = np.empty(counts.shape[0])
        fn = (_k.log_marginal_words if counts.size >= SERIAL_CELLS
              else _k.log_marginal_words_serial)
        fn(counts, np.ascontiguousarray(beta, dtype=np.float64), words, total)
        return stats.log_mult + gammaln(B) - gammaln(B + total) + words

    def log_marginal_unions(self, stats: CountStats, i, j) -> np.ndarray:
        """The unions' log marginals read from the two rows of each pair, not from copies
        of them added up (113 clusters of 61,188 words: 55 MB a copy)."""
        i = np.ascontiguousarray(i, dtype=np.int64)
        j = np.ascontiguousarray(j, dtype=np.int64)
        B = self.beta.sum()
        words = np.empty(len(i))
        total = np.empty(len(i))
        fn = (_k.union_words if len(i) * stats.counts.shape[1] >= SERIAL_CELLS
              else _k.union_words_serial)
        fn(np.ascontiguousarray(stats.counts, dtype=np.float64), i, j,
           np.ascontiguousarray(self.beta, dtype=np.float64), words, total)
        log_mult = np.asarray(stats.log_mult)
        return log_mult[i] + log_mult[j] + gammaln(B) - gammaln(B + total) + words

    def log_predictive(self, X, stats: CountStats) -> np.ndarray:
        X = self._as_csr(X)
        beta = self.beta
        B = beta.sum()
        lengths = np.asarray(X.sum(axis=1)).ravel()
        log_mult = log_multinomial_coefficients(X)
        rows = _row_ids(X)
        total = stats.counts.sum(axis=1)
        out = np.empty((X.shape[0], len(total)))
        for k in range(len(total)):
            a = beta[X.indices] + stats.counts[k, X.indices]
            per = gammaln(a + X.data) - gammaln(a)
            s = np.bincount(rows, weights=per, minlength=X.shape[0])
            out[:, k] = log_mult + gammaln(B + total[k]) - gammaln(B + total[k] + lengths) + s
        return out

    def sample_posterior(self, stats: CountStats, rng) -> MultinomialParams:
        """``theta_k ~ Dirichlet(beta + n_k)``, returned as log-probabilities.

        Drawn in log space (:func:`~dpclust.families.base.log_dirichlet`), so that small
        concentrations do not underflow to a probability of exactly zero.
        """
        return MultinomialParams(log_dirichlet(rng, self.posterior(stats).concentration))

    def point_params(self, stats: CountStats, rng=None) -> MultinomialParams:
        """The posterior mean word distribution ``(beta + n_kw) / (B + n_k)``.

        The logarithm is taken once per word where a cluster holds none of it (``log
        beta_w``, the same value) and per cluster only where it does: the launches score
        clusters seeded by one document, whose rows are nearly all zero."""
        conc = self.posterior(stats).concentration
        counts = np.asarray(stats.counts)
        out = np.empty_like(conc)
        out[:] = np.log(self.beta)
        k, w = np.nonzero(counts)
        out[k, w] = np.log(conc[k, w])
        out -= np.log(conc.sum(axis=1, keepdims=True))
        return MultinomialParams(out)

    def log_likelihood(self, X, params: MultinomialParams) -> np.ndarray:
        X = self._as_csr(X)
        return log_multinomial_coefficients(X)[:, None] + np.asarray(X @ params.log_prob.T)

    # ------------------------------------------------- coarsened posteriors
    def log_prior(self, params: MultinomialParams) -> np.ndarray:
        """``log Dir(p_k | beta)`` per component."""
        return self.log_posterior_density(params, self.empty_stats(len(params.log_prob)))

    def weighted_stats(self, X, weights) -> CountStats:
        X = self._as_csr(X)
        W = np.asarray(weights, dtype=np.float64)
        counts = np.asarray((X.T @ W).T)
        return CountStats(W.sum(axis=0), counts, W.T @ log_multinomial_coefficients(X))

    def log_posterior_density(self, params: MultinomialParams, stats: CountStats) -> np.ndarray:
        """``log Dir(p_k | beta + n_k)`` per component (densities on the simplex)."""
        conc = self.posterior(stats).concentration
        return (gammaln(conc.sum(axis=1)) - gammaln(conc).sum(axis=1)
                + ((conc - 1.0) * params.log_prob).sum(axis=1))

    def distinct(self, X):
        return distinct_keys(self.row_keys(X))

    def row_keys(self, X) -> list[bytes]:
        """Each document's word ids and counts as bytes."""
        X = self._as_csr(X)
        return [X.indices[a:b].tobytes() + X.data[a:b].tobytes()
                for a, b in zip(X.indptr[:-1], X.indptr[1:])]

    def sample_data(self, params: MultinomialParams, components, rng) -> sp.csr_matrix:
        """One document per entry, with a Poisson length of the training mean (at least 1)."""
        components = np.asarray(components, dtype=np.intp)
        lengths = np.maximum(rng.poisson(self.mean_length_, size=len(components)), 1)
        probs = np.exp(params.log_prob)
        probs /= probs.sum(axis=1, keepdims=True)
        rows = [rng.multinomial(m, probs[k]) for m, k in zip(lengths, components)]
        V = self.n_features()
        return sp.csr_matrix(np.vstack(rows) if rows else np.zeros((0, V)))

    def mean_params(self, stats: CountStats) -> dict:
        conc = self.posterior(stats).concentration
        return {"probabilities": conc / conc.sum(axis=1, keepdims=True)}

    # ---------------------------------------------------------------- kernels
    def _kernel_data(self, X):
        """The kernels' arrays of the documents ``X`` (canonical CSR), made once for the
        same ``X``: a model's collapsed and pass kernel read the same arrays.  The values
        are the data's own (float64 once validated); the row pointers and column indices
        are int64 copies, which each kernel used to make for itself (8 bytes a non-zero
        apiece: the PubMed-shaped curve held the corpus four times over)."""
        made = self.__dict__.get("_data_of")  # weak: the kernels keep the arrays alive
        if made is not None and made[0]() is X:
            data = tuple(ref() for ref in made[1])
            if all(a is not None for a in data):
                return data
        data = (np.ascontiguousarray(X.indptr, dtype=np.int64),
                np.ascontiguousarray(X.indices, dtype=np.int64),
                np.ascontiguousarray(X.data, dtype=np.float64),
                np.asarray(X.sum(axis=1)).ravel().astype(np.float64),
                log_multinomial_coefficients(X))
        self._data_of = (weakref.ref(X), tuple(weakref.ref(a) for a in data))
        return data

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_data_of", None)  # arrays of this process's data, made again on demand
        return state

    def kernel(self, X) -> FamilyKernel:
        X = self._as_csr(X)
        beta = np.ascontiguousarray(self.beta)
        V = beta.shape[0]
        data = self._kernel_data(X)
        hyper = self.kernel_hyper(None)

        def alloc(capacity: int):
            return (np.zeros(capacity), np.zeros(capacity), np.zeros((capacity, V)),
                    np.zeros(capacity))

        def alloc_by_point(capacity: int):
            # the counts slot-minor (a transposed view): a document's words read their
            # counts in every slot from neighbouring memory, where each (slot, word) would
            # be a cache miss in a K x V row-major array (20 Newsgroups, beta 0.05: the
            # collapsed pass 1.7x faster from the layout, 2.4x with _dm_log_predictives)
            return (np.zeros(capacity), np.zeros(capacity), np.zeros((V, capacity)).T,
                    np.zeros(capacity))

        return FamilyKernel(data=data, hyper=hyper, alloc=alloc, reset=_k._dm_reset, add=_k._dm_add,
                            remove=_k._dm_remove, log_predictive=_k._dm_log_predictive,
                            log_marginal=_k._dm_log_marginal, entry_points=ENTRY_POINTS,
                            log_join_gain=_k._dm_log_join_gain, alloc_by_point=alloc_by_point,
                            log_predictives=_k._dm_log_predictives)

    def pass_kernel(self, X, summary=None) -> PassKernel:
        X = self._as_csr(X)
        kern = self.kernel(X)
        V = self.n_features()

        def pack(params: MultinomialParams):
            return (np.ascontiguousarray(params.log_prob),)

        def unpack(acc):
            return CountStats(acc[:, 0].copy(), acc[:, 1:V + 1].copy(), acc[:, V + 1].copy())

        return PassKernel(data=kern.data, n_stats=V + 2, pack=pack, unpack=unpack,
                          log_likelihood=_k._dm_log_likelihoods, accumulate=_k._dm_accumulate,
                          entry_points=ENTRY_POINTS)

    def seed_subclusters(self, stats: CountStats, rng) -> MultinomialParams:
        """Two word distributions per cluster drawn as if from two of its documents' worth of
        evidence (``Dir(beta + counts * m / total)``, m the mean document length): noisy
        versions of the cluster's distribution that favour different words."""
        total = np.maximum(stats.counts.sum(axis=1), 1.0)
        doc = np.maximum(total / np.maximum(stats.n, 1.0), 1.0)
        weak = self.reweight(stats, np.minimum(1.0, 2.0 * doc / total))
        two = np.repeat(np.arange(len(stats.n)), 2)
        return self.sample_posterior(take(weak, two), rng)

    # ------------------------------------------------------- describing itself
    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """Each cluster's :data:`N_TOP_WORDS` most probable words (their names from
        ``feature_names``, the vocabulary, else their column indices) and their
        probabilities."""
        if "probabilities" not in params:
            return super().describe_clusters(params, feature_names=feature_names)
        prob = np.asarray(params["probabilities"])
        top = np.argsort(-prob, axis=1, kind="stable")[:, :N_TOP_WORDS]
        if feature_names is not None:
            words = [[feature_names[i] for i in row] for row in top.tolist()]
        else:
            words = top.tolist()
        return ClusterSummary({
            "top_words": words,
            "top_word_probabilities": [[float(f"{v:.4g}") for v in row] for row in
                                       np.take_along_axis(prob, top, axis=1).tolist()]})

    @classmethod
    def cluster_table(cls, block: dict) -> ClusterTable:
        """Each cluster's top words."""
        top_words = block.get("top_words")
        if top_words is None:
            return ClusterTable()

        def words(k):
            row = top_words[k] if k < len(top_words) else []
            if isinstance(row, str):
                row = [row]
            return ", ".join(str(w) for w in list(row)[:N_TOP_WORDS])

        return ClusterTable((ClusterColumn("top words", words),))

    def divergence(self, params: MultinomialParams) -> np.ndarray:
        """``J(k, m) = sum_w (p_kw - p_mw)(log p_kw - log p_mw)``."""
        logp = params.log_prob
        p = np.exp(logp)
        cross = p @ logp.T  # sum_w p_kw log p_mw
        own = np.diag(cross)
        return own[:, None] + own[None, :] - cross - cross.T

    def hellinger(self, params: MultinomialParams) -> np.ndarray:
        """Hellinger distance between the clusters' **word distributions**, shape (K, K).

        ``H(p_k, p_m)^2 = (1/2) sum_w (sqrt(p_kw) - sqrt(p_mw))^2``: the distance between
        the categorical laws of one word, not between the multinomial laws of whole
        documents.  Those would have Bhattacharyya coefficient ``BC^L`` for documents of
        ``L`` words, which goes to 0 with the length, so that any two clusters of long
        documents would look apart.  Rows of ``log_prob`` are normalised first.

        References
        ----------
        Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized
            densities. JASA (arXiv 2304.00074): the loss on Hellinger distances between
            the components' densities.
        """
        logp = np.asarray(params.log_prob, dtype=np.float64)
        logp = logp - np.logaddexp.reduce(logp, axis=1, keepdims=True)
        root = np.exp(0.5 * logp)
        K = root.shape[0]
        out = np.zeros((K, K))
        for k in range(K - 1):  # the squared differences directly: exact near H = 0
            diff = root[k + 1:] - root[k]
            out[k, k + 1:] = np.sqrt(np.clip(0.5 * np.einsum("ij,ij->i", diff, diff), 0, 1))
        return out + out.T

