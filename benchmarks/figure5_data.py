"""Generated stand-ins for the data sets of Chang & Fisher's Figure 5, at their real shapes.

Nothing can be downloaded here, and no registry package ships the 70,000 MNIST images or the
UCI bag-of-words corpora, so each set is drawn from a model fitted to what is at hand.

``make_mnist_like(n_samples, n_features, rng)``
    Ten Gaussian classes in 50 dimensions shaped like MNIST after PCA to 50 components.  The
    total variance of principal axis ``j`` decays as MNIST's leading eigenvalues do (pixels
    in [0, 1]): ``lambda_j = 5.1 j^-0.82``, from 5.1 down to 0.21.  A share
    ``BETWEEN_FRACTION = 0.08`` of it lies between classes: the class means are
    ``N(0, diag(0.08 lambda))``.  The rest is within classes: class ``k`` has covariance
    ``s_k^2 W_k`` with ``W_k ~ Wishart(300, diag(0.92 lambda) / 300)`` (each class its own
    tilt around the common spectrum) and spread ``s_k ~ Uniform(0.6, 1.2)`` (digits differ
    in spread: ones are tight).  Class sizes are MNIST's (6,903 zeros ... 6,958 nines, scaled
    to ``n_samples``).  The classes overlap somewhat: two means are about 3.2 within-class
    standard deviations apart (Mahalanobis), and the Bayes classifier with the true
    parameters errs on about 4.5 % of the points (:func:`bayes_error`; a quadratic
    classifier errs on a few per cent of MNIST at PCA-50 too).
``fit_corpus(X, labels, rng)``
    The parameters of a topic model of a document corpus (:class:`CorpusParams`): the
    rank-frequency (Zipf) exponent of its word counts, the log-normal of its document
    lengths, its number of topics and their weights, and the concentration ``c`` of topic
    word distributions ``phi_k ~ Dirichlet(c b)`` around the Zipf background ``b`` that
    reproduces the corpus's between-topic divergence (the token-weighted mean KL divergence
    of each topic's empirical word distribution from the corpus's, matched by simulation
    with the corpus's own tokens per topic, so that sampling noise is in both).
``make_corpus(params, n_docs, vocab_size, mean_length, rng, concentration)``
    Documents from that model at any shape: the vocabulary's background is Zipf with the
    fitted exponent over ``vocab_size`` words, topics are ``Dirichlet(c b)`` (``c`` from
    :func:`concentration_at`: the one that keeps the fitted divergence at that vocabulary), document
    lengths keep the fitted log-normal spread, scaled to ``mean_length`` tokens on average,
    and the words of a document are drawn from its topic.

``TARGETS`` gives the Figure 5 corpora's shapes and mean document lengths (tokens over
documents of the UCI bag-of-words sets: Enron 6.4 M tokens in 39,861 documents, NYT about
100 M in 300,000, PubMed about 730 M in 8.2 M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["CorpusParams", "DEFAULT_PARAMS", "TARGETS", "bayes_error", "concentration_at",
           "fit_corpus", "make_corpus", "make_mnist_like"]

#: (documents, vocabulary, mean tokens per document) of the paper's corpora
TARGETS = {"enron": (39_861, 28_102, 160.0), "nyt": (300_000, 102_660, 333.0),
           "pubmed": (8_200_000, 141_043, 89.0)}

#: MNIST's 70,000 images by digit (training and test sets together)
MNIST_CLASS_SIZES = np.array([6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958])
#: share of the variance of each principal axis that lies between the digit classes
BETWEEN_FRACTION = 0.08
#: degrees of freedom of the Wishart draw of each class's within-class covariance
WISHART_DOF = 300


@dataclass(frozen=True)
class CorpusParams:
    """A topic model of a document corpus (see the module docstring).

    Attributes
    ----------
    zipf_exponent : float
        ``s`` in ``b_r ~ r^-s``, the background frequency of the word of rank ``r``.
    log_length_mean, log_length_sd : float
        Mean and standard deviation of the log document length (tokens).
    topic_weights : tuple of float, length n_topics
        Share of documents in each topic.
    concentration : float
        ``c`` in ``phi_k ~ Dirichlet(c b)``.
    divergence : float
        The token-weighted mean KL divergence (nats) of the topics from the corpus that
        ``concentration`` reproduces.
    n_tokens : int
        Tokens of the fitted corpus (its topics' tokens in the simulations that match the
        divergence).
    source : str
        Where the figures come from.
    """

    zipf_exponent: float
    log_length_mean: float
    log_length_sd: float
    topic_weights: tuple
    concentration: float
    divergence: float
    n_tokens: int
    source: str

    @property
    def n_topics(self) -> int:
        return len(self.topic_weights)


#: the fit to the 20 Newsgroups training set (11,269 posts, 61,188 words, seed 0), used
#: when that corpus is not at hand
DEFAULT_PARAMS = CorpusParams(
    zipf_exponent=1.0122, log_length_mean=4.971, log_length_sd=0.9506,
    topic_weights=(0.04259, 0.05156, 0.05076, 0.05209, 0.05102, 0.05253, 0.05165, 0.05253,
                   0.05289, 0.05271, 0.05307, 0.05271, 0.05244, 0.05271, 0.05262, 0.05315,
                   0.04836, 0.05005, 0.04117, 0.03337),
    concentration=15557.0, divergence=0.5247, n_tokens=2_765_300,
    source="default (the fit to 20 Newsgroups, seed 0)")


# ------------------------------------------------------------------------------ MNIST
def mnist_spectrum(n_features: int) -> np.ndarray:
    """Variance of each of the first ``n_features`` principal axes of MNIST (pixels in [0, 1])."""
    return 5.1 * np.arange(1, n_features + 1) ** -0.82


def _mnist_classes(rng: np.random.Generator, n_features: int):
    """Means ``(10, d)`` and within-class factors ``(10, d, WISHART_DOF)`` (covariance
    ``F F^T``)."""
    lam = mnist_spectrum(n_features)
    means = rng.standard_normal((10, n_features)) * np.sqrt(BETWEEN_FRACTION * lam)
    spread = rng.uniform(0.6, 1.2, size=10)
    root = np.sqrt((1 - BETWEEN_FRACTION) * lam / WISHART_DOF)
    factors = np.stack([s * root[:, None] * rng.standard_normal((n_features, WISHART_DOF))
                        for s in spread])
    return means, factors


def make_mnist_like(n_samples=70_000, n_features=50, *, rng):
    """Ten overlapping Gaussian classes shaped like MNIST at PCA-``n_features``.

    Parameters
    ----------
    n_samples : int, default=70_000
    n_features : int, default=50
    rng : numpy.random.Generator

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), dtype int64
        The generating class (digit) of each point.
    classes : tuple (means, factors)
        The class parameters (for :func:`bayes_error`).
    """
    means, factors = _mnist_classes(rng, n_features)
    sizes = np.floor(MNIST_CLASS_SIZES / MNIST_CLASS_SIZES.sum() * n_samples).astype(np.int64)
    sizes[: n_samples - sizes.sum()] += 1
    y = rng.permutation(np.repeat(np.arange(10, dtype=np.int64), sizes))
    X = np.empty((n_samples, n_features))
    for k in range(10):
        rows = np.flatnonzero(y == k)
        X[rows] = means[k] + rng.standard_normal((len(rows), WISHART_DOF)) @ factors[k].T
    return X, y, (means, factors)


def bayes_error(X, y, classes) -> float:
    """Share of points that the Bayes classifier with the true parameters assigns to
    another class than their own (class sizes taken as equal)."""
    means, factors = classes
    scores = np.empty((len(X), len(means)))
    for k, (m, f) in enumerate(zip(means, factors)):
        chol = np.linalg.cholesky(f @ f.T)
        z = np.linalg.solve(chol, (X - m).T)
        scores[:, k] = -0.5 * (z * z).sum(axis=0) - np.log(np.diag(chol)).sum()
    return float(np.mean(scores.argmax(axis=1) != y))


# ---------------------------------------------------------------------------- corpora
def zipf_background(vocab_size: int, exponent: float) -> np.ndarray:
    """``b_r`` proportional to ``r^-exponent``, ``r = 1 .. vocab_size``, summing to one."""
    b = np.arange(1, vocab_size + 1, dtype=float) ** -exponent
    return b / b.sum()


def fit_zipf(word_counts) -> float:
    """Rank-frequency exponent: least squares of log count on log rank, at 60 ranks spaced
    evenly in log rank up to the last word seen five times (the tail of rare words is
    rounded to whole counts and would otherwise dominate)."""
    f = np.sort(np.asarray(word_counts, dtype=float))[::-1]
    last = max(10, int(np.searchsorted(-f, -5.0, side="right")))
    ranks = np.unique(np.geomspace(1, last, 60).astype(np.int64))
    slope = np.polyfit(np.log(ranks), np.log(f[ranks - 1]), 1)[0]
    return float(-slope)


def _topic_divergence(topic_counts) -> float:
    """Token-weighted mean of ``KL(p_k || p)``, ``p_k`` each row's frequencies and ``p``
    the pooled frequencies (nats)."""
    topic_counts = np.asarray(topic_counts, dtype=float)
    totals = topic_counts.sum(axis=1)
    pooled = topic_counts.sum(axis=0) / totals.sum()
    p = topic_counts / totals[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / pooled), 0.0)
    return float(totals @ terms.sum(axis=1) / totals.sum())


def draw_topics(rng, background, concentration, n_topics) -> np.ndarray:
    """``n_topics`` draws of ``Dirichlet(concentration * background)`` (gamma draws
    normalised: parameters far below one are common in the tail), shape (n_topics, V)."""
    g = rng.standard_gamma(np.broadcast_to(concentration * background,
                                           (n_topics, len(background))))
    return g / g.sum(axis=1, keepdims=True)


def _simulated_divergence(rng, background, concentration, tokens) -> float:
    topics = draw_topics(rng, background, concentration, len(tokens))
    counts = np.stack([rng.multinomial(int(t), phi) for t, phi in zip(tokens, topics)])
    return _topic_divergence(counts)


def fit_concentration(rng, background, tokens, target, steps=24) -> float:
    """The ``c`` at which topics ``Dirichlet(c b)`` with ``tokens`` tokens each show the
    between-topic divergence ``target``: bisection in log c (the divergence falls as c
    grows), each step one simulation from a fixed seed (common random numbers)."""
    seed = int(rng.integers(2**31))
    lo, hi = np.log(1.0), np.log(1e7)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        d = _simulated_divergence(np.random.default_rng(seed), background, np.exp(mid), tokens)
        lo, hi = (mid, hi) if d > target else (lo, mid)
    return float(np.exp(0.5 * (lo + hi)))


def fit_corpus(X, labels, rng, source="fit") -> CorpusParams:
    """Fit :class:`CorpusParams` to a corpus.

    Parameters
    ----------
    X : sparse matrix of shape (n_docs, vocab_size)
        Word counts.
    labels : ndarray of shape (n_docs,)
        The topic (e.g. newsgroup) of each document.
    rng : numpy.random.Generator
    """
    X = sp.csr_matrix(X)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    keep = lengths > 0
    X, labels, lengths = X[keep], np.asarray(labels)[keep], lengths[keep]
    exponent = fit_zipf(np.asarray(X.sum(axis=0)).ravel())
    topics, codes = np.unique(labels, return_inverse=True)
    onehot = sp.csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))),
                           shape=(len(topics), len(codes)))
    topic_counts = (onehot @ X).toarray()
    target = _topic_divergence(topic_counts)
    background = zipf_background(X.shape[1], exponent)
    c = fit_concentration(rng, background, topic_counts.sum(axis=1), target)
    log_len = np.log(lengths)
    weights = np.bincount(codes) / len(codes)
    return CorpusParams(zipf_exponent=round(exponent, 4),
                        log_length_mean=round(float(log_len.mean()), 4),
                        log_length_sd=round(float(log_len.std()), 4),
                        topic_weights=tuple(round(float(w), 5) for w in weights),
                        concentration=round(c, 1), divergence=round(target, 4),
                        n_tokens=int(lengths.sum()), source=source)


def concentration_at(params: CorpusParams, vocab_size: int, rng) -> float:
    """The topic concentration that keeps the fitted between-topic divergence over a
    vocabulary of ``vocab_size`` words (with the fitted corpus's tokens per topic): the
    same ``c`` over more words spreads each topic's deviations over more of them."""
    background = zipf_background(vocab_size, params.zipf_exponent)
    tokens = np.asarray(params.topic_weights) / np.sum(params.topic_weights) * params.n_tokens
    return fit_concentration(rng, background, tokens, params.divergence)


def _document_lengths(rng, params, n_docs, mean_length):
    """Log-normal lengths with the fitted spread and mean ``mean_length`` (or the fitted
    mean), at least one token."""
    sd = params.log_length_sd
    mu = params.log_length_mean if mean_length is None else np.log(mean_length) - sd**2 / 2
    return np.maximum(1, np.rint(np.exp(rng.normal(mu, sd, size=n_docs)))).astype(np.int64)


def make_corpus(params: CorpusParams, n_docs, vocab_size, mean_length=None, *, rng,
                concentration=None, block_tokens=20_000_000):
    """Draw documents from the topic model ``params`` at the shape ``(n_docs, vocab_size)``.

    Parameters
    ----------
    params : CorpusParams
    n_docs, vocab_size : int
    mean_length : float or None
        Mean tokens per document (None: the fitted corpus's).
    rng : numpy.random.Generator
    concentration : float or None
        Topic concentration (None: the fitted one; :func:`concentration_at` gives the one
        that keeps the fitted divergence at ``vocab_size`` words).
    block_tokens : int
        Tokens drawn at a time (bounds the memory of the draw).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_docs, vocab_size), dtype float64
        Word counts, canonical CSR.
    y : ndarray of shape (n_docs,), dtype int64
        The topic of each document.
    """
    background = zipf_background(vocab_size, params.zipf_exponent)
    c = params.concentration if concentration is None else concentration
    topics = draw_topics(rng, background, c, params.n_topics)
    weights = np.asarray(params.topic_weights) / np.sum(params.topic_weights)
    sizes = 1 + rng.multinomial(n_docs - params.n_topics, weights)
    y = rng.permutation(np.repeat(np.arange(params.n_topics, dtype=np.int64), sizes))
    lengths = _document_lengths(rng, params, n_docs, mean_length)
    # one search over the topics' CDFs stacked at offsets 0, 1, 2, ...: topic k's word is
    # the first entry of its CDF (shifted by k) at or above u + k
    cdf = (np.cumsum(topics, axis=1) + np.arange(params.n_topics)[:, None]).ravel()
    ends = np.cumsum(lengths)
    parts, start = [], 0
    while start < n_docs:
        stop = int(np.searchsorted(ends, ends[start] - lengths[start] + block_tokens,
                                   side="right"))
        stop = max(stop, start + 1)
        rows = np.repeat(np.arange(stop - start), lengths[start:stop])
        offset = np.repeat(y[start:stop], lengths[start:stop])
        flat = np.searchsorted(cdf, rng.random(len(rows)) + offset, side="right")
        words = np.clip(flat - offset * vocab_size, 0, vocab_size - 1)
        block = sp.csr_matrix((np.ones(len(rows)), (rows, words)),
                              shape=(stop - start, vocab_size))
        block.sum_duplicates()
        parts.append(block)
        start = stop
    X = sp.vstack(parts, format="csr")
    X.sort_indices()
    return X, y


def load_params(shared, rng) -> CorpusParams:
    """:func:`fit_corpus` on 20 Newsgroups in ``shared`` (a folder), or
    :data:`DEFAULT_PARAMS` when it is absent."""
    counts = shared / "newsgroups_train_counts.npz"
    if not counts.exists():
        return DEFAULT_PARAMS
    labels = np.loadtxt(shared / "newsgroups_train_labels.txt", dtype=np.int64)
    return fit_corpus(sp.load_npz(counts), labels, rng,
                      source=f"fit to 20 Newsgroups ({counts.name})")
