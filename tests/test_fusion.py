"""Fused clusters (FOLD, Dombowsky & Dunson 2024): the families' Hellinger distances against
integrals and sums done the long way, the block tables against the N x N computation, the
known answer of groups split into several components, and errors at the edge."""

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from dpclust import DPMixture
from dpclust.families import DirichletMultinomial, GeneralizedMallows, NormalInverseWishart
from dpclust.families.base import ConjugateFamily
from dpclust.families.gaussian import GaussianParams
from dpclust.families.mallows import MallowsParams, log_gm
from dpclust.families.multinomial import MultinomialParams
from dpclust.families._rankings_hellinger import rankings_hellinger
from dpclust.diagnostics import diagnose_draws
from dpclust.fusion import Fusion, fuse, n_fused_per_draw
from dpclust.metrics import ari
from dpclust.rankings import Rankings


# ------------------------------------------------------------------ Hellinger per family
def _gauss(mean, cov):
    mean, cov = np.asarray(mean, float), np.asarray(cov, float)
    return GaussianParams(mean, cov, np.linalg.cholesky(cov))


def test_gaussian_hellinger_1d_matches_quadrature():
    p = _gauss([[0.0], [1.3], [5.0], [0.1]], [[[1.0]], [[2.5]], [[0.3]], [[1.0]]])
    H = NormalInverseWishart().hellinger(p)
    for a, b in itertools.combinations(range(4), 2):
        fa = stats.norm(p.mean[a, 0], math.sqrt(p.cov[a, 0, 0])).pdf
        fb = stats.norm(p.mean[b, 0], math.sqrt(p.cov[b, 0, 0])).pdf
        h2, _ = integrate.quad(lambda x: 0.5 * (math.sqrt(fa(x)) - math.sqrt(fb(x))) ** 2,
                               -30, 30, points=[0.0, 1.3, 5.0], limit=200)
        assert H[a, b] == pytest.approx(math.sqrt(h2), abs=1e-7)
    assert np.allclose(H, H.T) and np.all(np.diag(H) == 0)
    assert 0 < H[0, 3] < 0.05  # close components: exact near 0, no cancellation to 0


def test_gaussian_hellinger_2d_matches_grid_integral():
    p = _gauss([[0.0, 0.0], [1.0, -0.5], [0.3, 2.0]],
               [[[1.0, 0.3], [0.3, 0.5]], [[0.6, -0.2], [-0.2, 1.2]], [[2.0, 0.0], [0.0, 0.3]]])
    H = NormalInverseWishart().hellinger(p)
    g = np.linspace(-9, 9, 721)  # a Riemann sum of a smooth, fast-decaying integrand
    xx, yy = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
    dens = [stats.multivariate_normal(p.mean[k], p.cov[k]).pdf(pts) for k in range(3)]
    step = (g[1] - g[0]) ** 2
    for a, b in itertools.combinations(range(3), 2):
        bc = np.sum(np.sqrt(dens[a] * dens[b])) * step
        assert H[a, b] == pytest.approx(math.sqrt(1 - bc), abs=1e-5)


def test_multinomial_hellinger_is_that_of_the_word_distributions():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(7), size=4)
    probs[3] = probs[0] * 1.0001
    probs[3] /= probs[3].sum()
    H = DirichletMultinomial().hellinger(MultinomialParams(np.log(probs) + 3.0))  # unnormalised
    for a, b in itertools.combinations(range(4), 2):
        direct = math.sqrt(0.5 * sum((math.sqrt(p) - math.sqrt(q)) ** 2
                                     for p, q in zip(probs[a], probs[b])))
        assert H[a, b] == pytest.approx(direct, rel=1e-9, abs=1e-12)
    assert np.allclose(H, H.T) and np.all(np.diag(H) == 0)


@pytest.fixture(scope="module")
def mallows4():
    fam = GeneralizedMallows(n_items=4).resolve(Rankings([[0, 1, 2], [1, 0, 3]], 4))
    params = MallowsParams(np.array([[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [0, 1, 3, 2]]),
                           np.array([[1.0, 0.5, 0.2], [0.7, 0.7, 0.7], [2.0, 1.0, 0.1],
                                     [0.3, 0.2, 0.1]]))
    return fam, params


def _enumerated_hellinger(params, t):
    """sqrt(1 - sum_pi sqrt(p(pi) q(pi))) over the 4!/(4-t)! top-t rankings, by log_gm."""
    perms = list(itertools.permutations(range(4), t))
    logp = np.array([[log_gm(pi, params.order[k], params.theta[k]) for k in range(4)]
                     for pi in perms])
    assert np.allclose(np.exp(logp).sum(axis=0), 1.0)  # each is a distribution over them
    bc = np.exp(0.5 * (logp[:, :, None] + logp[:, None, :])).sum(axis=0)
    out = np.sqrt(np.clip(1 - bc, 0, 1))
    np.fill_diagonal(out, 0)
    return out


def test_mallows_hellinger_sums_over_the_top_t_rankings(mallows4):
    fam, params = mallows4
    assert np.allclose(fam.hellinger(params), _enumerated_hellinger(params, 3), atol=1e-7)
    short = fam.hellinger(params, length=1)
    assert np.allclose(short, _enumerated_hellinger(params, 1), atol=1e-7)
    assert np.all(short <= fam.hellinger(params) + 1e-12)  # fewer ranks tell less apart


def test_mallows_hellinger_monte_carlo_agrees_with_enumeration(mallows4):
    fam, params = mallows4
    exact = _enumerated_hellinger(params, 3)
    mc = rankings_hellinger(fam, params, max_enumerated=0, n_samples=4000,
                      rng=np.random.default_rng(0))
    assert np.allclose(mc, mc.T) and np.all(np.diag(mc) == 0)
    assert np.max(np.abs(mc - exact)) < 0.03
    again = rankings_hellinger(fam, params, max_enumerated=0, n_samples=4000,
                         rng=np.random.default_rng(0))
    assert np.array_equal(mc, again)  # a fixed stream: the same estimate


def test_a_family_without_hellinger_says_so():
    class NoDistance(NormalInverseWishart):
        hellinger = ConjugateFamily.hellinger

    with pytest.raises(NotImplementedError, match="hellinger"):
        NoDistance().hellinger(_gauss([[0.0]], [[[1.0]]]))


# ------------------------------------------------------------ tables against N x N
def _random_draws(rng, X, fam, n_draws=15):
    n = len(X)
    draws, params = [], []
    for _ in range(n_draws):
        K = int(rng.integers(2, 6))
        z = rng.integers(0, K, n)
        z[: n // 2] = np.where(rng.random(n // 2) < 0.7, z[: n // 2] % 2, z[: n // 2])
        draws.append(z)
        params.append(fam.sample_posterior(fam.stats(X, z, K), rng))
    return np.array(draws), params


def _naive(draws, params, fam):
    n = draws.shape[1]
    D = np.zeros((n, n))
    for z, p in zip(draws, params):
        D += fam.hellinger(p)[z][:, z]
    return D / len(draws)


def _naive_loss(D, c, omega):
    iu = np.triu_indices(len(c), 1)
    same = (c[:, None] == c[None, :])[iu]
    return float(np.sum(np.where(same, D[iu], omega * (1 - D[iu]))))


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(0, 1, (30, 2)) + [2.5, 0]]
    fam = NormalInverseWishart().resolve(X)
    draws, params = _random_draws(rng, X, fam)
    return X, fam, draws, params, _naive(draws, params, fam)


def test_exact_blocks_give_the_average_linkage_tree_on_the_points(small):
    X, fam, draws, params, D = small
    f = fuse(draws, X, family=fam, params=params, omega=0.7)
    assert isinstance(f, Fusion) and f.exact and f.n_draws == len(draws)
    Z = linkage(squareform(D, checks=False), method="average")
    for k in range(1, 12):
        cut = fcluster(Z, k, "maxclust")
        assert f.expected_loss[k - 1] == pytest.approx(_naive_loss(D, cut, 0.7), rel=1e-10)
    assert f.n_clusters == int(np.argmin(f.expected_loss)) + 1
    forced = fuse(draws, X, family=fam, params=params, omega=0.7, n_clusters=3)
    assert forced.n_clusters == 3
    assert ari(forced.labels, fcluster(Z, 3, "maxclust")) == pytest.approx(1.0)
    # the tree is scipy's linkage format over the blocks
    blocks_cut = fcluster(forced.tree, 3, "maxclust")
    assert ari(blocks_cut[forced.blocks], forced.labels) == pytest.approx(1.0)
    # mean distance between and within fused clusters
    c = forced.labels
    for a in range(3):
        for b in range(3):
            mask = (c[:, None] == a) & (c[None, :] == b)
            np.fill_diagonal(mask, False)
            assert forced.delta[a, b] == pytest.approx(D[mask].mean() if mask.any() else 0.0)


def test_capped_blocks_still_give_exact_expected_losses(small):
    X, fam, draws, params, D = small
    f = fuse(draws, X, family=fam, params=params, omega=1.3, max_blocks=8,
             start=np.repeat([0, 1], 30))
    assert not f.exact and len(f.block_sizes) <= 8 and f.block_sizes.sum() == 60
    for k in (1, f.n_clusters):
        labels = fuse(draws, X, family=fam, params=params, omega=1.3, max_blocks=8,
                      start=np.repeat([0, 1], 30), n_clusters=k).labels
        # each fused cluster is a union of blocks, and its expected loss is exact
        assert np.all([len(np.unique(labels[f.blocks == b])) == 1 for b in range(8)
                       if np.any(f.blocks == b)])
        assert f.expected_loss[k - 1] == pytest.approx(_naive_loss(D, labels, 1.3), rel=1e-10)
    assert f.within_share[0] == pytest.approx(1.0)
    assert np.all(np.diff(f.within_share) <= 1e-12)


def test_groups_stay_in_one_fused_cluster_and_losses_stay_exact(small):
    """Points of a group (identical rows, a row's copies) go to one fused cluster although
    the draws cut them; every cut's expected loss is still the naive sum over the points."""
    X, fam, draws, params, D = small
    groups = np.arange(60) // 4  # draws split these quadruples
    assert any(len(np.unique(z[groups == g])) > 1 for z in draws for g in range(15))
    f = fuse(draws, X, family=fam, params=params, omega=0.7, groups=groups)
    assert not f.exact and len(f.block_sizes) <= 15
    for k in range(1, 8):
        labels = fuse(draws, X, family=fam, params=params, omega=0.7, groups=groups,
                      n_clusters=k).labels
        assert all(len(np.unique(labels[groups == g])) == 1 for g in range(15))
        assert f.expected_loss[k - 1] == pytest.approx(_naive_loss(D, labels, 0.7), rel=1e-10)
    # groups the blocks already keep whole change nothing
    plain = fuse(draws, X, family=fam, params=params, omega=0.7)
    same = fuse(draws, X, family=fam, params=params, omega=0.7, groups=plain.blocks)
    assert same.exact and np.array_equal(same.labels, plain.labels)


# --------------------------------------------------------------------- known answers
def _two_split_groups(rng, n_per=300):
    """Two overlapping groups, each a mixture of three close Gaussians, and the piece."""
    subs = [np.array([[0, 0], [0.6, 0.3], [-0.3, 0.6]]),
            np.array([[3.5, 0], [4.1, -0.4], [3.3, -0.6]])]
    X, y, piece = [], [], []
    for g, mus in enumerate(subs):
        s = rng.integers(0, 3, n_per)
        X.append(mus[s] + 0.55 * rng.standard_normal((n_per, 2)))
        y.append(np.full(n_per, g))
        piece.append(3 * g + s)
    return np.vstack(X), np.concatenate(y), np.concatenate(piece)


def test_groups_split_into_pieces_fuse_into_the_groups():
    rng = np.random.default_rng(0)
    X, y, piece = _two_split_groups(rng)
    draws = []
    for _ in range(40):  # every draw splits each group in 2 or 3 pieces, 5% relabelled
        z = piece.copy()
        if rng.random() < 0.3:
            z[z == 1] = 0
        flip = rng.random(len(z)) < 0.05
        z[flip] = 3 * y[flip] + rng.integers(0, 3, flip.sum())
        draws.append(z)
    f = fuse(np.array(draws), X, family=NormalInverseWishart())
    assert f.n_clusters == 2
    assert ari(f.labels, y) > 0.9
    assert f.delta[0, 1] > 0.9 and np.all(np.diag(f.delta) < 0.5)
    raw = np.unique(draws[0]).size
    assert raw >= 5  # what the partition posterior says: five or six clusters


def test_documents_fuse_from_draws_without_parameters():
    rng = np.random.default_rng(3)
    topics = rng.dirichlet(np.full(30, 0.3), size=2)
    y = np.repeat([0, 1], 60)
    X = np.vstack([rng.multinomial(40, topics[g]) for g in y])
    draws = []
    for _ in range(10):  # each topic's documents cut in two at random
        draws.append(2 * y + rng.integers(0, 2, len(y)))
    f = fuse(np.array(draws), X, family=DirichletMultinomial(), random_state=1)
    assert f.n_clusters == 2 and ari(f.labels, y) == 1.0


def test_rankings_fuse_with_the_draws_own_parameters(mallows4):
    fam, params = mallows4
    rng = np.random.default_rng(0)
    X = Rankings(rng.permuted(np.tile(np.arange(4), (20, 1)), axis=1)[:, :3], 4)
    z = np.repeat([0, 3, 2], [7, 7, 6])  # components 0 and 3 are close, 2 is far
    f = fuse(z[None, :], X, family=fam, params=[params])
    H = fam.hellinger(params)
    assert H[0, 3] < 0.5 < H[0, 2]
    assert f.n_clusters == 2 and ari(f.labels, np.repeat([0, 0, 1], [7, 7, 6])) == 1.0
    with pytest.raises(ValueError, match="parameters"):
        fuse(z[None, :], X, family=fam)


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = _two_split_groups(np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run: the verdict warns
        # a short collapsed Gibbs run, whose point estimate still splits a group in two
        # (the fusion joins it; the long-run estimate of either sampler has two clusters)
        est = DPMixture(alpha=3.0, sampler="gibbs", n_iter=60, random_state=0,
                        n_chains=1).fit(X)
    return est, X, y


def test_dp_mixture_fuses_the_components_of_each_group(fitted):
    est, X, y = fitted
    f = est.fuse()
    assert est.fusion_ is f and np.array_equal(est.fused_labels_, f.labels)
    assert est.n_clusters_ > 2  # the raw estimate splits the groups
    # the searched estimate already places nearly every point right; fusing joins its
    # components without losing that
    assert ari(f.labels, y) > 0.9
    assert np.sort(np.bincount(f.labels))[-2:].sum() >= 0.97 * len(y)  # two large clusters
    assert f.exact and f.n_draws == len(est._pool_draws)
    two = est.fuse(n_clusters=2)
    assert two.n_clusters == 2 and ari(two.labels, y) > 0.9
    # fused clusters are unions of blocks, which refine labels_ and every draw
    assert all(len(np.unique(est.labels_[f.blocks == b])) == 1 for b in range(len(f.block_sizes)))
    assert all(len(np.unique(f.labels[f.blocks == b])) == 1 for b in range(len(f.block_sizes)))
    assert np.array_equal(est.fuse(random_state=0).labels, f.labels)  # reproducible


def test_dp_mixture_falls_back_to_the_predictive_draws(fitted, tmp_path):
    est, X, y = fitted
    pool = est._pool_draws
    try:
        est._pool_draws = None  # as beyond 10,000 points
        f = est.fuse()
        assert f.n_draws == len(est._predictive_draws) and ari(f.labels, y) > 0.9
    finally:
        est._pool_draws = pool
    est.fuse()
    est.save(tmp_path / "model.npz")
    loaded = DPMixture.load(tmp_path / "model.npz")
    assert np.array_equal(loaded.fused_labels_, est.fused_labels_)
    with pytest.raises(ValueError, match="need the data X"):
        loaded.fuse()
    assert np.array_equal(loaded.fuse(X=X).labels, est.fused_labels_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.fit(X[:100])
    assert not hasattr(loaded, "fused_labels_") and not hasattr(loaded, "fusion_")


# ------------------------------------------------------------- fused clusters per draw
def test_a_draw_alone_gives_fold_on_its_own_components(small):
    X, fam, draws, params, _ = small
    counts = n_fused_per_draw(draws, X, family=fam, params=params, omega=0.7)
    for s, (z, p) in enumerate(zip(draws, params)):
        # the pooled estimate of that one draw
        assert counts[s] == fuse(z[None], X, family=fam, params=[p], omega=0.7).n_clusters
        # average linkage on the points, cut where merging stops lowering the loss:
        # at mean distance omega / (1 + omega)
        H = fam.hellinger(p)
        D = H[np.ix_(z, z)]
        np.fill_diagonal(D, 0.0)
        Z = linkage(squareform(D, checks=False), method="average")
        assert counts[s] == len(np.unique(fcluster(Z, 0.7 / 1.7, "distance")))
    pooled = fuse(draws, X, family=fam, params=params, omega=0.7)
    assert np.array_equal(pooled.draw_n_clusters, counts)
    assert np.array_equal(pooled.draw_chain, np.zeros(len(draws)))
    # a larger omega joins more
    assert np.all(n_fused_per_draw(draws, X, family=fam, params=params, omega=20.0)
                  <= n_fused_per_draw(draws, X, family=fam, params=params, omega=0.05))


def test_the_verdict_covers_the_fused_clusters(fitted):
    est, X, y = fitted  # one chain, 30 kept draws, all held
    trace_failing = [q for q in est.convergence_["failing"] if q != "fused_clusters"]
    f = est.fuse()
    entry = est.convergence_["fused_clusters"]
    assert est.fused_per_draw_.shape == (1, 30)
    assert np.array_equal(est.fused_per_draw_[0], f.draw_n_clusters)
    assert entry["draws"] == "every kept draw" and entry["n_draws"] == 30 and entry["judged"]
    assert entry == diagnose_draws(est.fused_per_draw_, draws_text="every kept draw",
                                   thinned=False)
    failing = est.convergence_["failing"]
    assert ("fused_clusters" in failing) == (not entry["converged"])
    assert [q for q in failing if q != "fused_clusters"] == trace_failing
    assert est.convergence_["converged"] == (not failing)


def test_fused_draws_are_judged_chain_by_chain_in_order_of_iteration():
    X, _, _ = _two_split_groups(np.random.default_rng(2), n_per=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPMixture(alpha=3.0, n_iter=40, n_chains=2, store_labels=True,
                        random_state=0).fit(X)
    f = est.fuse()
    assert np.array_equal(f.draw_chain, np.repeat([0, 1], 20))  # the pooled draws
    # with stored labels, every kept draw of each chain, the stream of fuse's draws
    entry = est.convergence_["fused_clusters"]
    assert entry["draws"] == "every kept draw (stored labels)" and entry["n_draws"] == 20
    for c in range(2):
        assert np.array_equal(est.fused_per_draw_[c], n_fused_per_draw(
            est.trace_.labels[c], X, family=est.family_, random_state=0))
    # without them, the draws that were fused, split by chain
    est.trace_ = dataclasses.replace(est.trace_, labels=None)
    est.fuse()
    assert np.array_equal(est.fused_per_draw_, f.draw_n_clusters.reshape(2, 20))
    assert est.convergence_["fused_clusters"]["draws"] == "every kept draw"


def test_diagnose_draws_judges_only_what_the_draws_can_show():
    rng = np.random.default_rng(3)
    few = diagnose_draws(rng.normal(size=(2, 10)), draws_text="d", thinned=True)
    assert not few["judged"] and "too few" in few["reason"] and math.isnan(few["rhat"])
    same = diagnose_draws(np.full((2, 30), 4.0), draws_text="d", thinned=True)
    assert not same["judged"] and "lower bounds" in same["reason"]  # 30 draws: ESS <= 30
    same = diagnose_draws(np.full((2, 100), 4.0), draws_text="d", thinned=True)
    assert same["judged"] and same["converged"]
    apart = diagnose_draws(np.repeat([[4.0], [5.0]], 30, axis=1), draws_text="d",
                           thinned=True)
    assert apart["judged"] and not apart["converged"] and apart["rhat"] == math.inf
    iid = rng.normal(size=(2, 60))  # R-hat passes; ESS <= 60 per chain, under the rule
    thin = diagnose_draws(iid, draws_text="d", thinned=True)
    assert thin["rhat"] < 1.01 and not thin["judged"] and "lower bounds" in thin["reason"]
    every = diagnose_draws(iid, draws_text="d", thinned=False)
    assert every["judged"] and not every["converged"]
    trend = diagnose_draws(np.r_[iid[:1], iid[1:] + 2.0], draws_text="d", thinned=True)
    assert trend["judged"] and not trend["converged"] and trend["rhat"] > 1.01


# --------------------------------------------------------------------------- errors
def test_bad_inputs_are_refused_with_clear_errors(small, fitted):
    X, fam, draws, params, _ = small
    with pytest.raises(ValueError, match="omega must be a positive number"):
        fuse(draws, X, family=fam, omega=0)
    with pytest.raises(ValueError, match="omega must be a positive number"):
        fuse(draws, X, family=fam, omega=float("nan"))
    with pytest.raises(ValueError, match="n_clusters"):
        fuse(draws, X, family=fam, n_clusters=0)
    with pytest.raises(ValueError, match="more than the"):
        fuse(draws, X, family=fam, n_clusters=10_000)
    with pytest.raises(ValueError, match="max_blocks"):
        fuse(draws, X, family=fam, max_blocks=0)
    with pytest.raises(ValueError, match="2-D array"):
        fuse(draws[0], X, family=fam)
    with pytest.raises(ValueError, match="integer labels"):
        fuse(draws + 0.5, X, family=fam)
    with pytest.raises(ValueError, match=">= 0"):
        fuse(draws - 1, X, family=fam)
    with pytest.raises(ValueError, match="family="):
        fuse(draws, X)
    with pytest.raises(ValueError, match="60"):
        fuse(draws, X[:50], family=fam)
    with pytest.raises(ValueError, match="need the data X"):
        fuse(draws, family=fam)
    with pytest.raises(ValueError, match="params holds 2 entries"):
        fuse(draws, X, family=fam, params=params[:2])
    with pytest.raises(ValueError, match="parameters for 2 components"):
        fuse(draws, X, family=fam, params=[_take2(p) for p in params])
    with pytest.raises(ValueError, match="start"):
        fuse(draws, X, family=fam, start=np.zeros(59, dtype=int))
    with pytest.raises(ValueError, match="not fitted"):
        fuse(DPMixture(n_chains=1, n_iter=200))
    est = fitted[0]
    with pytest.raises(ValueError, match="go with draws"):
        fuse(est, family=fam)


def _take2(p):
    """Parameters of two components only (the draws have labels up to 5)."""
    return type(p)(*(np.asarray(a)[:2] for a in p))
