"""Synthetic data sets for examples, the demo and tests, and bundled real data.

The synthetic sets are generated from a seed; nothing is downloaded.  The generators draw
all their randomness from one :class:`numpy.random.Generator`, so the same ``random_state``
gives the same data on every platform and NumPy version that keeps the Generator streams
stable.  The real data (:func:`load_dublin_west`) ship inside the package, under
``dpclust/data``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .utils.checks import check_int, check_positive, check_random_state

__all__ = ["DUBLIN_WEST_CANDIDATES", "load_demo", "load_dublin_west", "make_documents",
           "make_gaussian_mixture"]

# Standard deviations of a Gaussian cluster along its principal axes are drawn from
# Uniform(_SD_LOW, _SD_HIGH): axis ratios up to 5:1, so some clusters are clearly elongated.
_SD_LOW, _SD_HIGH = 0.2, 1.0
# Dirichlet concentration of the mixture weights: unequal, but no cluster nearly empty.
_WEIGHT_CONCENTRATION = 5.0


def _cluster_sizes(rng: np.random.Generator, n_samples: int, n_clusters: int):
    """Mixture weights ~ Dirichlet(5, ..., 5) and cluster sizes with every cluster non-empty.

    Returns
    -------
    weights : ndarray of shape (n_clusters,)
    sizes : ndarray of shape (n_clusters,), dtype int64
        One point per cluster, plus a Multinomial(n_samples - n_clusters, weights) draw.
    """
    weights = rng.dirichlet(np.full(n_clusters, _WEIGHT_CONCENTRATION))
    sizes = 1 + rng.multinomial(n_samples - n_clusters, weights)
    return weights, sizes.astype(np.int64)


def _random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed orthogonal matrix (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _place_means(rng, sd_max, separation, n_features):
    """Means at least ``separation * (sd_max[i] + sd_max[j])`` apart, by rejection sampling.

    Candidates are uniform in a cube that grows by 10 % after every 200 rejections, so the
    loop always ends; its side starts where random packing is comfortably feasible.
    """
    n_clusters = sd_max.shape[0]
    side = 2.0 * separation * max(1.0, n_clusters ** (1.0 / n_features))
    means = np.empty((n_clusters, n_features))
    k = 0
    rejections = 0
    while k < n_clusters:
        candidate = rng.uniform(-side / 2, side / 2, size=n_features)
        gaps = np.linalg.norm(means[:k] - candidate, axis=1)
        if np.all(gaps >= separation * (sd_max[:k] + sd_max[k])):
            means[k] = candidate
            k += 1
            continue
        rejections += 1
        if rejections % 200 == 0:
            side *= 1.1
    return means


def make_gaussian_mixture(
    n_samples=1000, n_clusters=5, n_features=2, *, separation=3.0, random_state=None
):
    """Draw a well-separated mixture of Gaussians with random full covariances.

    The model:

    * weights ``pi ~ Dirichlet(5, ..., 5)`` (unequal, none tiny); every cluster gets one point
      and the other ``n_samples - n_clusters`` points are split ``Multinomial(pi)``;
    * cluster ``k`` has covariance ``Sigma_k = Q_k diag(s_k)^2 Q_k^T`` with ``Q_k`` a uniformly
      random rotation and standard deviations ``s_k`` along its axes drawn independently from
      ``Uniform(0.2, 1)``, so clusters are tilted ellipses, some elongated up to 5:1;
    * the means are placed uniformly at random in a cube, rejecting any mean closer to an
      earlier one than ``separation * (max(s_j) + max(s_k))``: with the default 3, two
      clusters' 3-sigma ellipsoids never overlap.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least ``n_clusters``.
    n_clusters : int, default=5
        Number of Gaussian components.
    n_features : int, default=2
        Dimension of the data.
    separation : float, default=3.0
        Minimum distance between two means, in units of the sum of the two clusters' largest
        standard deviations.  Smaller values give overlapping clusters.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of randomness; the same int gives the same data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        The points, in random order.
    y : ndarray of shape (n_samples,), dtype int64
        The true component of each point, in ``0 .. n_clusters - 1``; every value occurs.
    """
    n_clusters = check_int(n_clusters, "n_clusters", 1)
    n_samples = check_int(n_samples, "n_samples", n_clusters)
    n_features = check_int(n_features, "n_features", 1)
    separation = check_positive(separation, "separation")
    rng = check_random_state(random_state)

    _, sizes = _cluster_sizes(rng, n_samples, n_clusters)
    sds = rng.uniform(_SD_LOW, _SD_HIGH, size=(n_clusters, n_features))
    rotations = [_random_rotation(rng, n_features) for _ in range(n_clusters)]
    means = _place_means(rng, sds.max(axis=1), separation, n_features)

    X = np.empty((n_samples, n_features))
    y = np.repeat(np.arange(n_clusters, dtype=np.int64), sizes)
    start = 0
    for k in range(n_clusters):
        z = rng.standard_normal((sizes[k], n_features))
        # x = mu + Q diag(s) z has covariance Q diag(s)^2 Q^T
        X[start : start + sizes[k]] = means[k] + (z * sds[k]) @ rotations[k].T
        start += sizes[k]
    order = rng.permutation(n_samples)
    return np.ascontiguousarray(X[order]), y[order]


def load_demo():
    """The demo data set: 1,500 points in six visibly separate 2-D clusters.

    ``make_gaussian_mixture(n_samples=1500, n_clusters=6, n_features=2, random_state=2026)``:
    tilted, partly elongated Gaussian clusters of unequal sizes, easy to see in a scatter
    plot, and a fair first test of whether a sampler finds six clusters.

    Returns
    -------
    X : ndarray of shape (1500, 2), dtype float64
    y : ndarray of shape (1500,), dtype int64
        True cluster labels in ``0 .. 5``.
    """
    return make_gaussian_mixture(n_samples=1500, n_clusters=6, n_features=2, random_state=2026)


def make_documents(
    n_docs=500,
    n_topics=5,
    vocab_size=200,
    doc_length=80,
    *,
    concentration=0.1,
    random_state=None,
):
    """Draw bag-of-words documents, each from the word distribution of one topic.

    A mixture of multinomials (the model of a Dirichlet-multinomial DP mixture):

    * topic word distributions ``phi_k ~ Dirichlet(concentration, ..., concentration)`` over
      the vocabulary (small ``concentration``: few words carry most of a topic's mass);
    * topic weights ``pi ~ Dirichlet(5, ..., 5)``; every topic gets one document and the
      others are split ``Multinomial(pi)``;
    * document ``d`` of topic ``k`` has length ``N_d = max(1, Poisson(doc_length))`` and word
      counts ``x_d ~ Multinomial(N_d, phi_k)``.

    Parameters
    ----------
    n_docs : int, default=500
        Number of documents, at least ``n_topics``.
    n_topics : int, default=5
        Number of topics (clusters).
    vocab_size : int, default=200
        Number of distinct words.
    doc_length : float, default=80
        Mean document length.
    concentration : float, default=0.1
        Dirichlet parameter of the topics' word distributions.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of randomness; the same int gives the same data.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_docs, vocab_size), dtype float64
        Word counts, canonical CSR (sorted indices, no explicit zeros).
    y : ndarray of shape (n_docs,), dtype int64
        The topic of each document, in ``0 .. n_topics - 1``; every value occurs.
    """
    n_topics = check_int(n_topics, "n_topics", 1)
    n_docs = check_int(n_docs, "n_docs", n_topics)
    vocab_size = check_int(vocab_size, "vocab_size", 1)
    doc_length = check_positive(doc_length, "doc_length")
    concentration = check_positive(concentration, "concentration")
    rng = check_random_state(random_state)

    topics = rng.dirichlet(np.full(vocab_size, concentration), size=n_topics)
    _, sizes = _cluster_sizes(rng, n_docs, n_topics)
    y = rng.permutation(np.repeat(np.arange(n_topics, dtype=np.int64), sizes))
    lengths = np.maximum(rng.poisson(doc_length, size=n_docs), 1)

    # Draw in blocks so that a dense (block, vocab_size) table stays small.
    block = max(1, 2_000_000 // vocab_size)
    parts = []
    for start in range(0, n_docs, block):
        stop = min(start + block, n_docs)
        counts = rng.multinomial(lengths[start:stop], topics[y[start:stop]])
        parts.append(sp.csr_matrix(counts.astype(np.float64)))
    X = sp.vstack(parts, format="csr")
    if not isinstance(X, sp.csr_matrix):
        X = sp.csr_matrix(X)
    X.sort_indices()
    return X, y


#: the Dublin West 2002 candidates in the ballots' order (candidate 1 first), with their
#: parties: Green Party, Labour, Fianna Fáil, Socialist Party, Fianna Fáil, Sinn Féin,
#: Progressive Democrats, Christian Solidarity Party, Fine Gael (names as PrefLib lists them)
DUBLIN_WEST_CANDIDATES = (
    "Robert Bonnie (G.P.)", "Joan Burton (Lab)", "Deirdre Doherty Ryan (F.F.)",
    "Joe Higgins (S.P.)", "Brian Lenihan (F.F.)", "Mary Lou McDonald (S.F.)",
    "Tom Morrissey (P.D.)", "John Thomas Smyth (C.C. Csp)", "Sheila Terry (F.G.)")


def load_dublin_west():
    """The Dublin West ballots: 29,988 top-t rankings of 9 candidates (real data).

    Ballots of the 2002 Irish general election in the Dublin West constituency, cast under
    the single transferable vote: each voter ranks as many candidates as they like, best
    first.  The items are the nine candidates, named with their parties (:data:`DUBLIN_WEST_
    CANDIDATES`; item ``j`` is the file's candidate ``j + 1``).

    Ballot lengths: 1 (1,743), 2 (3,243), 3 (8,753), 4 (5,157), 5 (3,389), 6 (1,866),
    7 (1,027), 9 (4,810 complete ballots); none has length 8.  A complete ballot's last
    candidate is implied, so in the returned working form the 4,810 complete ballots have
    length 8.

    Returns
    -------
    rankings : dpclust.rankings.Rankings
        29,988 rankings of ``n_items=9`` items, in the order of the file.

    Notes
    -----
    Shipped as ``dpclust/data/dublinwest2002.csv.gz``: the CSV ``d_dublinwest`` of the R
    package PLMIX 2.2.0 (header ``Rank_1,...,Rank_9``, candidate ids 1..9, 0 = not ranked),
    gzipped unchanged.  Licence: GPL (>= 2), as PLMIX.  The file has no names; they come from
    PrefLib's copy of the same ballots (data set 00001-00000002, "2002 Dublin West"), whose
    candidates 1..9 are in the same order (its most frequent orders and their counts, 621 ×
    (5, 3, 7), 555 × (5, 3), 452 × (4), ..., are the file's), and are the public record of
    the election.

    References
    ----------
    Mollica, C. and Tardella, L. PLMIX: Bayesian analysis of finite mixtures of
    Plackett-Luce models, R package version 2.2.0 (data set ``d_dublinwest``).
    Gormley, I. C. and Murphy, T. B., who analysed these ballots with mixtures of
    Plackett-Luce models.
    """
    from importlib.resources import as_file, files

    from .io import read_rankings_csv

    items = DUBLIN_WEST_CANDIDATES
    with as_file(files("dpclust.data") / "dublinwest2002.csv.gz") as path:
        return read_rankings_csv(path, items=items, missing=("0",), index_base=1,
                                 header=True)
