"""The sub-cluster sampler (Chang & Fisher 2013): exactness (ALGORITHMS.md §6), the data pass,
thread independence and behaviour on clustered data."""

import numpy as np
import pytest
from test_samplers_exact import tv_to_exact

from dpclust import DPMixture
from dpclust.datasets import make_documents, make_gaussian_mixture
from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.families.base import take
from dpclust.families.multinomial import CountStats
from dpclust.families.gaussian import BLOCK_ROWS
from dpclust.metrics import nmi
from dpclust.partitions import canonical_labels
from dpclust.samplers import MixtureModel, SubclusterSplitMerge
from dpclust.kernels.subcluster import chunk_seeds
from dpclust.samplers.subcluster import _pairs_combined

EXACT = SubclusterSplitMerge()  # the default: restricted Gibbs + sequential split-merge moves
#: the paper's data pass (restricted Gibbs given sampled weights and parameters); on 5 points
#: the default pass is the collapsed one
INSTANTIATED = SubclusterSplitMerge(data_pass="instantiated")


# ------------------------------------------------------------- exact posterior
def test_default_matches_exact_posterior():
    # the collapsed pass on 5 points; measured TV 0.027 at 6,000 steps, 0.0185 at 10,000
    # (0.0157 at 20,000)
    tv = tv_to_exact(EXACT, "gaussian", 5, 6_000, seed=7)
    assert tv < 0.045, tv


@pytest.mark.slow  # 23 s; the default run keeps the collapsed pass (above) and the
def test_instantiated_pass_matches_exact_posterior():  # partitioned default's pass
    # measured TV 0.030 at 10,000 steps, 0.020 at 40,000 (the table families' slow tests
    # run the pass 10,000 steps more)
    tv = tv_to_exact(INSTANTIATED, "gaussian", 5, 10_000, seed=7)
    assert tv < 0.045, tv


@pytest.mark.slow  # 35 s; the default run keeps the Gaussian case and the documents'
def test_default_matches_exact_posterior_multinomial():  # scan moves alone (below)
    # measured TV 0.013 at 100,000 steps
    tv = tv_to_exact(EXACT, "multinomial", 5, 20_000, seed=7)
    assert tv < 0.045, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
@pytest.mark.parametrize("pinch", [0.0, 1.0])
def test_launch_moves_alone_match_exact_posterior(family, pinch):
    """The split-merge moves without restricted Gibbs: the EM launches alone (pinch 0) and
    the pinch moves alone (pinch 1) are each exact (measured TV 0.011-0.020 at 100,000)."""
    sampler = SubclusterSplitMerge(restricted_gibbs=False, pinch=pinch, sequential=False)
    tv = tv_to_exact(sampler, family, 5, 100_000, seed=8)
    assert tv < 0.03, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_sequential_moves_alone_match_exact_posterior(family):
    """The sequential (SAMS-like) moves without the restricted Gibbs pass or pinches."""
    sampler = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0)
    tv = tv_to_exact(sampler, family, 5, 60_000, seed=13)
    assert tv < 0.03, tv


#: the restricted Gibbs scan moves alone (Jain & Neal's launch from a random split)
SCANS_ALONE = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0, scan_moves=1.0, scans=2)


@pytest.mark.slow  # 21 s; the default run keeps the default moves (above)
def test_scan_moves_alone_match_exact_posterior():
    """The restricted Gibbs scan moves (every move a scan move, no pass, no pinches) on
    documents, the family that makes them by default.  Measured TV 0.033 at 10,000 steps;
    a q with half its log gives 0.072 (seed 7), 0.054 (seed 13)."""
    tv = tv_to_exact(SCANS_ALONE, "multinomial", 5, 10_000, seed=7)
    assert tv < 0.05, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_scan_moves_alone_match_exact_posterior_long(family):
    tv = tv_to_exact(SCANS_ALONE, family, 5, 100_000, seed=8)
    assert tv < 0.03, tv


#: the multi-way moves (3- to 5-way splits and merges on 5 points) with the random pair
#: move alone, which keeps the chain irreducible
MULTIWAY_ALONE = SubclusterSplitMerge(split_merge=False, random_split_merge=True,
                                      restricted_gibbs=False, sequential=True)


@pytest.mark.slow
def test_multiway_moves_match_exact_posterior():
    # slow: the default run's exact tests (gaussian and multinomial) make multi-way moves
    # among the default sampler's moves
    # measured TV 0.029 at 20,000 steps, 0.015 at 100,000 (seed 8); leaving out the
    # reverse merge's log m! term gives 0.105 at 20,000
    tv = tv_to_exact(MULTIWAY_ALONE, "gaussian", 5, 20_000, seed=7)
    assert tv < 0.05, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_multiway_moves_match_exact_posterior_long(family):
    # measured TV 0.015 (Gaussian) and 0.024 (documents) at 100,000 steps
    tv = tv_to_exact(MULTIWAY_ALONE, family, 5, 100_000, seed=8)
    assert tv < 0.035, tv


def test_multiway_merge_takes_back_fragments_of_one_gaussian():
    """Three overlapping fragments of one Gaussian (labels drawn from a three-component
    fit's responsibilities) are merged in one multi-way move, the only move running."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 2)) * [1.0, 0.6]
    # fragments: one cluster drawn from a three-component fit's responsibilities
    centres = np.array([[-0.8, 0.0], [0.0, 0.0], [0.8, 0.0]])
    logits = -0.5 * ((X[:, None, :] - centres) ** 2).sum(-1) / 0.5
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    labels = (rng.random(len(X))[:, None] > np.cumsum(p, 1)).sum(1)
    fam = NormalInverseWishart().resolve(X)
    model = MixtureModel(fam, fam.validate(X))
    sampler = SubclusterSplitMerge(split_merge=False, restricted_gibbs=False, sequential=True)
    state = sampler.init(np.random.default_rng(0), model, labels=labels, alpha=1.0)
    assert len(state.age) == 3
    step_rng = np.random.default_rng(1)
    for _ in range(200):
        state, info = sampler.step(step_rng, state, model)
        if info.n_clusters == 1:
            break
    assert info.n_clusters == 1


def test_sequential_moves_merge_fragments_of_kmeans():
    """From 10 k-means clusters on 3 Gaussian clusters (5,000 points) the default's rounds
    of sequential moves merge the k-means cells (EM launches alone: K 10-12 and NMI
    0.64-0.77 after 60 iterations)."""
    X, y = make_gaussian_mixture(n_samples=5000, n_clusters=3, random_state=0)
    m = DPMixture(n_iter=60, random_state=1, n_chains=1).fit(X)
    assert m.n_clusters_ <= 4 and nmi(m.labels_, y) > 0.98


@pytest.mark.slow
def test_grow_launches_match_exact_posterior():
    sampler = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0, grow=1.0)
    tv = tv_to_exact(sampler, "gaussian", 5, 100_000, seed=8)
    assert tv < 0.03, tv


@pytest.mark.slow
@pytest.mark.parametrize("n_groups", [1, 3])
def test_fixed_group_counts_match_exact_posterior(n_groups):
    sampler = SubclusterSplitMerge(restricted_gibbs=False, n_groups=n_groups, n_rounds=2)
    tv = tv_to_exact(sampler, "gaussian", 5, 100_000, seed=9)
    assert tv < 0.03, tv


@pytest.mark.slow
def test_subsampled_launches_match_exact_posterior():
    """Launch subsamples smaller than the moves (2 points), EM passes over all points and
    proposals in three stages."""
    sampler = SubclusterSplitMerge(launch_size=2, launch_passes=2, stages=3, sequential=False)
    tv = tv_to_exact(sampler, "gaussian", 5, 60_000, seed=10)
    assert tv < 0.03, tv


@pytest.mark.slow
def test_staged_moves_alone_match_exact_posterior():
    """The moves alone in three stages with launch subsamples of 2 points, so that 5 points
    are allocated over two stages: a merge's intermediate stage must fit the next stage's
    components to its current sides as a split fits them to its drawn ones (without that,
    TV 0.034 here against 0.018 at 60k steps; 0.011-0.013 at 150k with it)."""
    sampler = SubclusterSplitMerge(launch_size=2, launch_iter=1, stages=3,
                                   restricted_gibbs=False, pinch=0.0, sequential=False)
    tv = tv_to_exact(sampler, "multinomial", 5, 150_000, seed=11)
    assert tv < 0.02, tv


@pytest.mark.slow
def test_random_pair_alone_matches_exact_posterior():
    sampler = SubclusterSplitMerge(split_merge=False, random_split_merge=True,
                                   restricted_gibbs=False)
    tv = tv_to_exact(sampler, "gaussian", 5, 100_000, seed=8)
    assert tv < 0.02, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
@pytest.mark.parametrize("pass_groups", [1, 3])
def test_collapsed_pass_matches_exact_posterior(family, pass_groups):
    """The collapsed pass with one group (every point may join any cluster) and with three
    (most clusters alone in their group), with sequential moves without pinches."""
    sampler = SubclusterSplitMerge(data_pass="collapsed", pass_groups=pass_groups, pinch=0.0)
    tv = tv_to_exact(sampler, family, 5, 60_000, seed=12)
    assert tv < 0.03, tv


@pytest.mark.slow
def test_super_clusters_keep_the_pass_exact():
    tv = tv_to_exact(SubclusterSplitMerge(super_clusters=True, data_pass="instantiated"),
                     "gaussian", 5, 60_000, seed=9)
    assert tv < 0.025, tv


class _NoPassKernel(NormalInverseWishart):
    """The Gaussian family seen as a family without the numba pass face."""

    def pass_kernel(self, X, summary=None):
        return None


class _Blocked(NormalInverseWishart):
    """The Gaussian family with its blocked pass (BLAS per block of points) on blocks of
    two points, whatever the dimension."""

    def pass_kernel(self, X, summary=None):
        return super().pass_kernel(X, summary)._replace(block=2)


class _PointByPoint(NormalInverseWishart):
    """The Gaussian family scoring point by point in any dimension."""

    def pass_kernel(self, X, summary=None):
        return super().pass_kernel(X, summary)._replace(block=0)


@pytest.mark.slow
def test_blocked_pass_matches_exact_posterior():
    """The blocked scoring and accumulation (used from 8 features) is the same kernel: 5
    points in 3-D, blocks of 2 points so that blocks end mid-cluster and mid-move.

    Slow: the default run has test_blocked_pass_is_the_point_by_point_pass (the same chain,
    label for label) and test_instantiated_pass_matches_exact_posterior (the point-by-point
    pass against the exact posterior)."""
    from test_samplers_exact import FAMILIES, X_GAUSS

    def prep(X):
        return np.column_stack([X, 0.5 * X[:, 0] + 0.5 * X[:, 1]])

    def make(X):
        return _Blocked(mean=np.zeros(3), kappa=0.5, dof=5.0,
                        scale=0.5 * np.eye(3)).resolve(prep(X))

    assert make(X_GAUSS).pass_kernel(prep(X_GAUSS)).block == 2
    FAMILIES["blocked-gaussian"] = (make, prep)
    try:
        tv = tv_to_exact(INSTANTIATED, "blocked-gaussian", 5, 20_000, seed=5)
    finally:
        del FAMILIES["blocked-gaussian"]
    assert tv < 0.045, tv


@pytest.mark.slow
def test_numpy_reference_pass_matches_exact_posterior():
    from test_samplers_exact import FAMILIES

    make, prep = FAMILIES["gaussian"]
    FAMILIES["plain-gaussian"] = (lambda X: _NoPassKernel(**make(X).get_params()), prep)
    try:
        tv = tv_to_exact(INSTANTIATED, "plain-gaussian", 5, 40_000, seed=7)
    finally:
        del FAMILIES["plain-gaussian"]
    assert tv < 0.03, tv


@pytest.mark.slow
def test_approximate_configuration_distance_is_measured():
    """The paper's fast moves (``SubclusterSplitMerge.approximate()``) are not exact: their
    sub-cluster splits and merges leave out the auxiliary variables' proposal.  Measured TV
    0.32 (Gaussian, 5 points); this guards against it getting worse unnoticed."""
    tv = tv_to_exact(SubclusterSplitMerge.approximate(), "gaussian", 5, 40_000, seed=7)
    assert tv < 0.45, tv


# ----------------------------------------------------------------- the data pass
def _model(family="gaussian", n=3000, seed=0):
    if family.startswith("gaussian"):  # "gaussian" (2-D) or "gaussian-9d" (the blocked pass)
        d = int(family[9:-1]) if family != "gaussian" else 2
        X, y = make_gaussian_mixture(n_samples=n, n_clusters=4, n_features=d,
                                     random_state=seed)
        fam = NormalInverseWishart().resolve(X)
    else:
        X, y = make_documents(n_docs=n // 10, n_topics=3, random_state=seed)
        fam = DirichletMultinomial().resolve(X)
        X = fam.validate(X)
    return MixtureModel(fam, X), y


@pytest.mark.parametrize("family", ["gaussian", "gaussian-9d", "multinomial"])
def test_pass_statistics_match_the_labels(family):
    model, _ = _model(family)
    sampler = SubclusterSplitMerge(chunk_size=97)
    rng = np.random.default_rng(1)
    state = sampler.init(rng, model, n_clusters=3)
    for _ in range(4):
        state, info = sampler.step(rng, state, model)
        k = len(state.age)
        ref = model.family.stats(model.X, 2 * state.labels + state.sublabels, 2 * k)
        fresh = np.repeat(state.age == 0, 2)
        for got, want in zip(state.sub_stats, ref):
            np.testing.assert_allclose(np.asarray(got)[~fresh], np.asarray(want)[~fresh],
                                       rtol=1e-9, atol=1e-7)
        cluster = _pairs_combined(model.family, state.sub_stats, k)
        np.testing.assert_array_equal(model.family.count(cluster), np.bincount(state.labels))
        np.testing.assert_array_equal(state.labels, canonical_labels(state.labels))
        assert np.all(state.labels[state.anchors] == np.arange(k))
        assert info.log_joint == pytest.approx(model.log_joint(state.labels, state.alpha),
                                               rel=1e-9)


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_collapsed_pass_draws_from_the_restricted_conditional(family):
    """One free point among three clusters of its group: it joins cluster k with probability
    ``N_k f(x | X_k) / sum``; the points of the other group and a point alone in its cluster
    stay, and the counts follow the labels (the documents: with their batched predictives
    on slot-minor counts)."""
    from dpclust.kernels import subcluster as sk

    model, _ = _model(family, n=400, seed=4)
    fam, kern = model.family, model.kernel
    n = model.n_samples
    labels0 = np.arange(n) % 4  # clusters 0, 1, 2 in group 0, cluster 3 in group 1
    labels0[7] = 4  # point 7 alone in cluster 4 (group 0)
    i = 10  # the free point, of cluster 2
    K = 5
    members = np.array([0, 1, 2, 4, 3])
    mstart = np.array([0, 4, 5])
    rest = np.delete(np.arange(n), i)
    stats = fam.stats(take_rows(fam, model.X, rest), labels0[rest], K)
    probe = take_rows(fam, model.X, [i])
    group = [0, 1, 2, 4]
    want = (fam.log_predictive(probe, stats)[0] + np.log(fam.count(stats)))[group]
    want = np.exp(want - want.max())
    want /= want.sum()
    from dpclust.kernels import gibbs as _kernels

    rebuild, fns = _kernels.dispatch(kern, "rebuild_stats")
    hits = np.zeros(K)
    n_draws = 4000
    for seed in range(n_draws):
        labels = labels0.copy()
        kstats = (kern.alloc_by_point or kern.alloc)(K)  # as the pass lays them out
        counts = np.zeros(K, dtype=np.int64)
        rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
        rows = np.array([i, 7, 11], dtype=np.int64)  # 11 is in cluster 3 (group 1)
        start = np.array([0, 2, 3], dtype=np.int64)
        seeds = np.array([seed * 7919 + 1, 5], dtype=np.uint64)
        fn = kern.entry_points["collapsed_groups"]
        fn(kern.data, kstats, kern.hyper, rows, start, members, mstart, labels, counts,
           seeds, np.array([0, 1], dtype=np.int64), np.array([0, 2], dtype=np.int64),
           np.empty((1, K)), np.log(np.maximum(np.arange(n + 1.0), 1.0)),
           kern.log_predictives is not None)
        assert labels[7] == 4 and labels[11] == 3 and labels[i] in group
        np.testing.assert_array_equal(counts, np.bincount(labels, minlength=K))
        hits[labels[i]] += 1
    assert hits[3] == 0 and want.max() < 0.9, want
    se = np.sqrt(want * (1 - want) / n_draws)
    assert np.all(np.abs(hits[group] / n_draws - want) < 4 * se + 1e-3), (hits, want)


def take_rows(fam, X, rows):
    return fam.subset(X, np.asarray(rows, dtype=np.int64))


@pytest.mark.parametrize("family", ["gaussian", "gaussian-9d", "multinomial"])
def test_launch_pass_matches_the_numpy_reference(family):
    """The compiled launch pass against the NumPy one: a merge move's ``logq`` (sides fixed
    by the clusters) is the same sum; a split move's side statistics are those of the sides
    it drew, its ``logq`` is the log probability of those sides, and the pinned point is on
    side 1 and left out of it; every cluster is counted with its first point."""
    from dpclust.samplers._partitioned import LaunchSpec
    from dpclust.samplers.subcluster import _reference_launch

    model, _ = _model(family, n=2000)
    fam, X = model.family, model.X
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 4, model.n_samples)
    stats = fam.stats(X, labels, 4)
    params = fam.point_params(fam.stats(X, rng.integers(0, 4, model.n_samples), 4), rng)
    block_of = np.array([0, 1, 1, -1])       # cluster 0 split, clusters 1 and 2 merged
    side_of = np.array([-1, 0, 1, -1])
    pin, pin0 = (int(v) for v in np.flatnonzero(labels == 0)[[5, 9]])
    log_w = np.log(np.array([[0.3, 0.7], [0.5, 0.5]]))
    spec = LaunchSpec(None, log_w, block_of, side_of, np.array([[pin0, pin], [-1, -1]]), 2,
                      99, 8)
    data = model.partitions.configure(256, None)
    _, codes, part = data.launch_pass(spec._replace(kparams=data.pack(params)), labels)
    ref = _reference_launch(rng, fam, X, params, spec, labels)
    assert part.ll[2:] == pytest.approx(ref.logq[2:], rel=1e-10)
    np.testing.assert_array_equal(part.cnt[:4], np.bincount(labels, minlength=4))
    np.testing.assert_array_equal(part.first[:4], ref.first[:4])
    sides = fam.stats(X, np.where(labels == 0, codes, 2), 3)
    got = data.unpack(part.acc)
    for a, b in zip(take(got, [0, 1]), take(sides, [0, 1])):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-7)
    assert codes[pin] == 1 and codes[pin0] == 0 and np.all(codes[labels == 3] == 0)
    assert part.cnt[4] + part.cnt[5] == np.sum(labels == 0)
    lp = fam.log_likelihood(X, params)[:, :2] + log_w[0]
    lp = lp - np.logaddexp(lp[:, :1], lp[:, 1:])
    rows = np.arange(len(labels))
    mine = np.flatnonzero((labels == 0) & (rows != pin) & (rows != pin0))
    assert part.ll[0] == pytest.approx(lp[mine, codes[mine]].sum(), rel=1e-9)
    assert part.ll[1] == pytest.approx(lp[mine, 1 - codes[mine]].sum(), rel=1e-9)


@pytest.mark.parametrize("family", ["gaussian", "gaussian-9d", "multinomial"])
@pytest.mark.parametrize("data_pass", ["instantiated", "collapsed"])
def test_result_does_not_depend_on_the_number_of_threads(family, data_pass):
    model, _ = _model(family, n=5000)
    runs = []
    for n_threads in (1, 2):
        sampler = SubclusterSplitMerge(n_threads=n_threads, chunk_size=500, data_pass=data_pass,
                                       pass_groups=2)
        rng = np.random.default_rng(3)
        state = sampler.init(rng, model, n_clusters=1)
        for _ in range(8):
            state, _ = sampler.step(rng, state, model)
        runs.append(state)
    np.testing.assert_array_equal(runs[0].labels, runs[1].labels)
    np.testing.assert_array_equal(runs[0].sublabels, runs[1].sublabels)


def test_blocked_pass_is_the_point_by_point_pass():
    """From 8 features the pass scores blocks of points with BLAS (trmm) and adds their
    statistics by blocks (syrk); point by point (``block=0``) the chain is the same (labels equal, statistics
    equal to rounding)."""
    runs = []
    for cls in (_PointByPoint, NormalInverseWishart):
        X, _ = make_gaussian_mixture(n_samples=4000, n_clusters=4, n_features=9,
                                     random_state=2)
        model = MixtureModel(cls().resolve(X), X)
        assert model.pass_kernel.block == (0 if cls is _PointByPoint else BLOCK_ROWS)
        # the same moves for both (by default a pass that is not blocked goes with
        # sequential moves)
        sampler = SubclusterSplitMerge(chunk_size=1000, sequential=False)
        rng = np.random.default_rng(8)
        state = sampler.init(rng, model, n_clusters=1)
        for _ in range(10):
            state, info = sampler.step(rng, state, model)
        runs.append((state, info))
    (a, ia), (b, ib) = runs
    assert ia.n_clusters >= 3
    np.testing.assert_array_equal(a.labels, b.labels)
    assert ia.log_joint == pytest.approx(ib.log_joint, rel=1e-10)


def test_chunk_streams_are_distinct_and_reproducible():
    a = chunk_seeds(12345, 64)
    assert len(set(a.tolist())) == 64
    np.testing.assert_array_equal(a, chunk_seeds(12345, 64))
    assert not np.array_equal(a, chunk_seeds(12346, 64))


def test_reservoir_keeps_a_uniform_member_and_the_first():
    """The pass's member of a slot is uniform over its points (skip-based reservoir), its key
    is the smallest of n uniforms (Beta(1, n)), and two slots merged by the smaller key give
    a uniform member of their union."""
    from scipy.stats import chisquare, kstest

    from dpclust.kernels.subcluster import _count_member

    n, n_other, reps = 12, 5, 12_000
    hits = np.zeros(n, dtype=np.int64)
    merged = np.zeros(n + n_other, dtype=np.int64)
    keys = np.empty(reps)
    for r in range(reps):
        cnt = np.zeros(3, dtype=np.int64)
        first = np.full(3, -1, dtype=np.int64)
        rkey = np.ones(3)
        res = np.full(3, -1, dtype=np.int64)
        nxt = np.ones(3, dtype=np.int64)
        state = chunk_seeds(r, 1)[0]
        for i in range(n):
            state = np.uint64(_count_member(i + 5, 1, cnt, first, rkey, res, nxt, state))
        for i in range(n_other):
            state = np.uint64(_count_member(100 + i, 2, cnt, first, rkey, res, nxt, state))
        assert cnt[1] == n and first[1] == 5 and cnt[0] == 0 and res[0] == -1
        hits[res[1] - 5] += 1
        keys[r] = rkey[1]
        win = res[1] - 5 if rkey[1] <= rkey[2] else n + res[2] - 100
        merged[win] += 1
    assert chisquare(hits).pvalue > 1e-3
    assert chisquare(merged).pvalue > 1e-3
    assert kstest(keys, "beta", args=(1, n)).pvalue > 1e-3


def test_targeted_pairs_are_a_distribution_that_favours_mergeable_pairs():
    """Per group the pair probabilities add up to one; two halves of one Gaussian are far
    likelier than a pair of distinct clusters, and no pair falls below half its uniform
    share; groups above the cap, and ``merge_pairs="uniform"``, are uniform."""
    from dpclust.samplers.subcluster import TARGETED_PAIRS_MAX

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (200, 2)), rng.normal(0, 1, (200, 2)),
                   rng.normal(8, 1, (200, 2)), rng.normal(-8, 1, (200, 2))])
    fam = NormalInverseWishart().resolve(X)
    stats = fam.stats(X, np.repeat(np.arange(4), 200), 4)
    n = fam.count(stats)
    groups = [(0, 1, 2, 3), (1, 2)]
    first, second, log_p = SubclusterSplitMerge()._pair_log_probs(fam, stats, n, 1.0, groups)
    p = np.exp(log_p)
    assert np.isclose(p[:6].sum(), 1.0) and np.isclose(p[6], 1.0)
    halves = np.flatnonzero((first[:6] == 0) & (second[:6] == 1))[0]
    assert p[halves] > 0.5 and np.all(p[:6] >= 0.5 / 6 - 1e-12)
    _, _, uniform = SubclusterSplitMerge(merge_pairs="uniform")._pair_log_probs(
        fam, stats, n, 1.0, groups)
    np.testing.assert_allclose(np.exp(uniform[:6]), 1.0 / 6)
    big = [tuple(range(TARGETED_PAIRS_MAX + 1))]
    many = fam.stats(np.repeat(X[:1], TARGETED_PAIRS_MAX + 1, axis=0),
                     np.arange(TARGETED_PAIRS_MAX + 1), TARGETED_PAIRS_MAX + 1)
    _, _, capped = SubclusterSplitMerge()._pair_log_probs(
        fam, many, fam.count(many), 1.0, big)
    assert np.allclose(capped, capped[0])
    # many words: fewer pairs are scored (each costs a log marginal over the vocabulary)
    docs = DirichletMultinomial(concentration=0.1)
    docs_stats = CountStats(np.ones(2), np.ones((2, 61_188)), np.zeros(2))
    assert SubclusterSplitMerge()._targeted_pairs_max(docs_stats) == 65
    assert SubclusterSplitMerge(merge_pairs="uniform")._targeted_pairs_max(stats) == 0


def test_sequential_rows_are_grouped_by_move_without_their_anchors():
    from dpclust.kernels.subcluster import rows_by_move

    labels = np.array([0, 1, 2, 1, 0, 2, 2, 3, 1, 0], dtype=np.int64)
    move_of = np.array([0, 1, 0, -1], dtype=np.int64)   # move 0 merges 0 and 2, move 1 splits 1
    side_of = np.array([0, -1, 1, -1], dtype=np.int64)
    pins = np.array([[0, 2], [1, 8]], dtype=np.int64)
    rows, start, fixed = rows_by_move(labels, move_of, side_of, pins)
    np.testing.assert_array_equal(start, [0, 4, 5])
    np.testing.assert_array_equal(rows, [4, 5, 6, 9, 3])
    np.testing.assert_array_equal(fixed, [0, 1, 1, 0, -1])


def test_shuffled_allocation_keeps_rows_and_sides_together():
    """``shuffle_moves`` permutes each move's rows with their fixed sides; scoring a given
    split gives its sides back, with the sides' sizes and log marginals; the same moves on
    the rows copied in order (``gathered_kernel``) are the same allocation."""
    from dpclust.kernels.subcluster import (move_lanes, sequential_allocation,
                                                      shuffle_moves)

    X, _ = make_gaussian_mixture(n_samples=80, n_clusters=2, random_state=3)
    model = MixtureModel(NormalInverseWishart().resolve(X), X)
    fam = model.family
    rows = np.arange(4, 80, dtype=np.int64)
    start = np.array([0, 40, 76], dtype=np.int64)
    pins = np.array([[0, 1], [2, 3]], dtype=np.int64)
    truth = (X[rows, 0] > X[:, 0].mean()).astype(np.int64)
    side_of_row = dict(zip(rows.tolist(), truth.tolist()))
    fixed = truth.copy()
    fixed[40:] = -1  # move 0 scores a split, move 1 draws one
    lanes = move_lanes(np.diff(start), 2)
    shuffle_moves(rows, fixed, start, chunk_seeds(5, 2), *lanes)
    assert not np.array_equal(rows, np.arange(4, 80))
    assert sorted(rows[:40].tolist()) == list(range(4, 44))
    assert all(side_of_row[r] == f for r, f in zip(rows[:40].tolist(), fixed[:40].tolist()))
    seeds = chunk_seeds(1, 2)
    sides, logq, counts, logf = sequential_allocation(model.kernel, rows, start, fixed, pins,
                                                      seeds)
    np.testing.assert_array_equal(sides[:40], fixed[:40])
    assert counts[:2].tolist() == [1 + (fixed[:40] == 0).sum(), 1 + (fixed[:40] == 1).sum()]
    members = [np.concatenate([[0], rows[:40][sides[:40] == 0]]),
               np.concatenate([[1], rows[:40][sides[:40] == 1]])]
    want = [float(fam.log_marginal(fam.stats(X[m], np.zeros(len(m), np.int64), 1))[0])
            for m in members]
    np.testing.assert_allclose(logf[:2], want, rtol=1e-8)
    assert np.all(logq < 0)
    gathered = fam.gathered_kernel(model.kernel, np.concatenate([rows, pins.ravel()]))
    local_pins = len(rows) + np.arange(4).reshape(2, 2)
    again = sequential_allocation(gathered, np.arange(len(rows)), start, fixed, local_pins,
                                  seeds)
    np.testing.assert_array_equal(again[0], sides)
    np.testing.assert_allclose(again[1], logq)


def test_pass_weight_ratio_is_that_of_the_offset_dirichlet():
    """``w(z)`` of the data pass: ``Gamma(N) / (N Gamma(N - 1 + epsilon))`` per cluster, the
    paper's ``prod 1 / N_k`` at epsilon = 1; under another prior its ``W(N_k)`` in place of
    ``Gamma(N_k)`` (the EPPF's factors of K and N do not change in a pass)."""
    from scipy.special import gammaln

    from dpclust.priors import DirichletProcess, PitmanYor
    from dpclust.samplers import subcluster as sc

    dp = DirichletProcess(2.0)
    counts = np.array([1.0, 3.0, 500.0])
    want = np.sum(gammaln(counts) - np.log(counts)
                  - gammaln(counts - 1.0 + sc.PASS_WEIGHT_OFFSET))
    moved = np.array([2.0, 2.0, 500.0])
    got = sc._log_pass_weight(moved, dp, 2.0) - sc._log_pass_weight(counts, dp, 2.0)
    want_moved = np.sum(gammaln(moved) - np.log(moved)
                        - gammaln(moved - 1.0 + sc.PASS_WEIGHT_OFFSET))
    assert np.isclose(got, want_moved - want)
    py = PitmanYor(0.4, 0.5)
    got = sc._log_pass_weight(moved, py, 0.5) - sc._log_pass_weight(counts, py, 0.5)
    w = lambda n: np.sum(gammaln(n - 0.4) - np.log(n)  # noqa: E731
                         - gammaln(n - 1.0 + sc.PASS_WEIGHT_OFFSET))
    assert np.isclose(got, w(moved) - w(counts))
    # growing a 3-point cluster to 500 (from a cluster of 1,000) costs about
    # (3 / 500)^epsilon (1,000 / 503)^epsilon, not 3 / 500
    r = (sc._log_pass_weight([500.0, 503.0], dp, 2.0)
         - sc._log_pass_weight([3.0, 1000.0], dp, 2.0))
    assert -1.0 < r < 0.0


# ------------------------------------------------------------------ behaviour
def test_splits_find_clusters_from_one():
    X, y = make_gaussian_mixture(n_samples=4000, n_clusters=5, random_state=2)
    m = DPMixture(sampler="subcluster", n_iter=60, init_clusters=1, random_state=0,
                  n_chains=1).fit(X)
    assert m.trace_.n_accepted_splits.sum() >= 4
    assert nmi(m.labels_, y) > 0.95


def test_exact_configuration_merges_from_many_clusters():
    X, y = make_gaussian_mixture(n_samples=400, n_clusters=3, random_state=1)
    m = DPMixture(sampler=EXACT, n_iter=300, init_clusters=10, random_state=0, n_chains=1).fit(X)
    assert m.trace_.n_accepted_merges.sum() >= 2
    assert nmi(m.labels_, y) > 0.9


def test_documents_are_split_into_topics():
    X, y = make_documents(n_docs=400, n_topics=4, random_state=0)
    m = DPMixture(family="multinomial", sampler="subcluster", n_iter=60, init_clusters=1,
                  random_state=0, n_chains=1).fit(X)
    assert nmi(m.labels_, y) > 0.9


def test_options_are_validated():
    with pytest.raises(ValueError, match="merges"):
        SubclusterSplitMerge(merges="all")
    with pytest.raises(ValueError, match="split_delay"):
        SubclusterSplitMerge(split_delay=0)
    with pytest.raises(ValueError, match="burn_in"):
        SubclusterSplitMerge(burn_in="never")
    with pytest.raises(ValueError, match="n_threads"):
        SubclusterSplitMerge(n_threads=0)
    with pytest.warns(FutureWarning, match="n_threads"):
        assert SubclusterSplitMerge(n_jobs=2).n_threads == 2
    with pytest.raises(ValueError, match="seeding"):
        SubclusterSplitMerge(seeding="kmeans")
    with pytest.raises(ValueError, match="cannot be combined"):
        SubclusterSplitMerge(subcluster_splits=True)
    with pytest.raises(ValueError, match="n_groups"):
        SubclusterSplitMerge(n_groups=0)
    with pytest.raises(ValueError, match="stages"):
        SubclusterSplitMerge(stages=4)
    with pytest.raises(ValueError, match="pinch"):
        SubclusterSplitMerge(pinch=1.5)
    with pytest.raises(ValueError, match="add up"):
        SubclusterSplitMerge(pinch=0.6, grow=0.6)
    assert EXACT.is_exact and SubclusterSplitMerge.exact().is_exact
    assert not SubclusterSplitMerge.approximate().is_exact
    model, _ = _model(n=200)
    state = SubclusterSplitMerge.approximate().init(np.random.default_rng(0), model,
                                                    n_clusters=2)
    assert set(np.unique(state.sublabels)) <= {0, 1} and state.age.shape == (2,)


def test_divergences_are_symmetric_and_zero_on_the_diagonal():
    rng = np.random.default_rng(0)
    for family in ("gaussian", "multinomial"):
        model, _ = _model(family, n=600)
        fam = model.family
        params = fam.sample_posterior(fam.stats(model.X, rng.integers(0, 3, model.n_samples)),
                                      rng)
        div = fam.divergence(params)
        np.testing.assert_allclose(div, div.T, atol=1e-9)
        np.testing.assert_allclose(np.diag(div), 0.0, atol=1e-9)
        assert np.all(div[~np.eye(3, dtype=bool)] > 0)


def test_auto_picks_the_subcluster_sampler_for_large_data():
    from dpclust.estimator import _max_draws
    from dpclust.samplers import AUTO_SUBCLUSTER_FROM, get_sampler, resolve_sampler_name

    assert resolve_sampler_name("auto", AUTO_SUBCLUSTER_FROM - 1) == "gibbs+sams"
    assert resolve_sampler_name("auto", AUTO_SUBCLUSTER_FROM) == "subcluster"
    assert isinstance(get_sampler("auto", 10**6), SubclusterSplitMerge)
    docs = DirichletMultinomial()
    assert resolve_sampler_name("auto", docs.auto_subcluster_from - 1, docs) == "gibbs+sams"
    assert resolve_sampler_name("auto", docs.auto_subcluster_from, docs) == "subcluster"
    assert resolve_sampler_name("auto", 50_000, NormalInverseWishart()) == "subcluster"
    assert get_sampler("subcluster-exact").is_exact
    with pytest.raises(ValueError, match="auto"):
        get_sampler("sub")
    assert _max_draws("auto", 1000) == 200 and _max_draws("auto", 10**6) == 20
    assert _max_draws(7, 10**6) == 7
    X, y = make_gaussian_mixture(n_samples=AUTO_SUBCLUSTER_FROM, n_clusters=3, random_state=0)
    m = DPMixture(n_iter=60, random_state=0, n_chains=1).fit(X)  # from k-means, the default start
    assert nmi(m.labels_, y) > 0.95
    # from one cluster the splits find the clusters, though fragments of a cluster can
    # outlive 30 iterations (NMI 0.81-1.0 over seeds; see the README on large data)
    m = DPMixture(n_iter=30, init_clusters=1, random_state=0, n_chains=1).fit(X)
    assert m.trace_.n_accepted_splits.sum() >= 2 and nmi(m.labels_, y) > 0.75


def test_default_pass_is_chosen_by_model_size_and_cost_alone():
    """The default pass (``data_pass=None``) depends on N, d and the configuration only:
    the same whatever the state's clusters (the sampler stays a mixture of kernels chosen
    independently of the state), collapsed on small data, and from 8 features
    instantiated once its modelled cost grows, never collapsed at a larger N after
    instantiated at a smaller one (no cliff in the time: PCA-50 images, 7,000 rows ran the
    collapsed pass, 7x the time of 21,000)."""
    from dpclust.samplers.subcluster.passes import draw_parameters
    from dpclust.samplers.subcluster.schedule import collapsed_here, sequential_here

    rng = np.random.default_rng(0)

    def model(n, d):
        X = rng.standard_normal((n, d))
        return MixtureModel(NormalInverseWishart().resolve(X), X)

    sizes = (300, 500, 1_000, 2_000, 5_000, 7_000, 10_000, 21_000)
    for d in (2, 10, 24, 50, 64):
        chosen = [collapsed_here(EXACT, model(n, d)) for n in sizes]
        assert chosen[0] and not chosen[-1]
        assert chosen == sorted(chosen, reverse=True), (d, chosen)  # one switch, downward
        assert all(chosen[:-1]) == (d < 8)  # low d: collapsed up to 10,000 points
    for n in (5_000, 7_000, 10_000):  # the default's range (below 5,000: collapsed Gibbs)
        m = model(n, 50)
        assert not collapsed_here(EXACT, m) and not sequential_here(EXACT, m)
    assert collapsed_here(SubclusterSplitMerge(data_pass="collapsed"), model(7_000, 50))
    m = model(400, 50)
    assert collapsed_here(EXACT, m) and sequential_here(EXACT, m)
    docs = make_documents(n_docs=60, n_topics=2, vocab_size=30, random_state=0)[0]
    assert collapsed_here(EXACT, MixtureModel(DirichletMultinomial().resolve(docs), docs))
    # the pass an iteration draws does not follow the number of clusters
    for n in (400, 3_000):
        m = model(n, 50)
        for k in (1, 4, 12):
            state = EXACT.init(np.random.default_rng(k), m, n_clusters=k)
            draws = draw_parameters(EXACT, np.random.default_rng(k), m, state)
            assert draws.collapsed == collapsed_here(EXACT, m) == (n == 400)


def test_numpy_reference_pass_draws_labels_without_sub_clusters():
    """update 3 (the default's labels-only pass) moves points in the NumPy pass too."""
    from dpclust.samplers._partitioned import PassSpec
    from dpclust.samplers.subcluster import _reference_pass

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.3, (50, 2)), rng.normal(6, 0.3, (50, 2))])
    fam = NormalInverseWishart().resolve(X)
    labels = np.zeros(100, dtype=np.int64)
    labels[60] = 1  # cluster 1 holds one point of the second blob, its anchor
    theta = fam.point_params(fam.stats(X, np.repeat([0, 1], 50), 2), rng)
    spec = PassSpec(None, np.log([0.5, 0.5]), np.zeros((2, 2)), np.zeros(2, np.uint8),
                    np.zeros(2, np.int64), np.array([0, 2]), np.arange(2), np.array([0, 60]),
                    3, -1, 0.5, 1, 6)
    run = _reference_pass(rng, fam, X, theta, None, spec, labels, np.zeros(100, np.int8))
    np.testing.assert_array_equal(run.labels, np.repeat([0, 1], 50))
    assert np.all(run.codes == 0)
