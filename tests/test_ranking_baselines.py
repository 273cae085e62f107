"""The ranking baselines of Meilă & Chen (2010), Figure 8: the Mallows-kernel KDE and EBMS.

Kernel maths against brute force over the completions of a top-t centre; both estimators'
densities summed over every top-t ranking of a few items; the KDE's leave-one-out choice of
width against a direct computation; EBMS clustering of well-separated GM clusters; errors.
"""

import itertools
import math

import numpy as np
import pytest

from dpclust.utils.checks import DataError
from dpclust.families.mallows import log_gm, sample_rankings
from dpclust.metrics import variation_of_information
from dpclust.rankings import RankingEBMS, RankingKDE, Rankings, baselines
from dpclust.rankings.baselines import log_mallows_kernel


def _all_top_t(n, t):
    return [list(p) for p in itertools.permutations(range(n), t)]


def _random_rankings(rng, n, m, max_length=None):
    max_length = n - 1 if max_length is None else max_length
    return [list(rng.permutation(n)[: rng.integers(1, max_length + 1)]) for _ in range(m)]


def _gm_data(rng, centres, theta, sizes, t):
    centres = np.asarray(centres)
    z = np.repeat(np.arange(len(sizes)), sizes)
    thetas = np.full((len(centres), t), float(theta))
    return sample_rankings(centres, thetas, z, np.full(len(z), t), rng), z


# ------------------------------------------------------------------------------ kernel maths
def test_kernel_closed_form_matches_average_over_completions():
    """K(pi | pi_i) = mean over the (n - t_i)! completions sigma of pi_i of GM^s(pi | sigma)."""
    rng = np.random.default_rng(0)
    n = 5
    for _ in range(60):
        t_c = int(rng.integers(1, n + 1))
        t = int(rng.integers(1, n))
        centre = rng.permutation(n)[:t_c]
        ranking = rng.permutation(n)[:t]
        theta = float(rng.uniform(0.05, 3.0))
        rest = [x for x in range(n) if x not in centre]
        logs = [log_gm(ranking, np.concatenate([centre, p]).astype(np.int64), np.full(n, theta))
                for p in itertools.permutations(rest)]
        brute = math.log(np.mean(np.exp(logs)))
        assert log_mallows_kernel(ranking, centre, theta, n) == pytest.approx(brute, abs=1e-10)


def test_kernel_is_uniform_at_theta_zero():
    assert log_mallows_kernel([2, 0], [1, 3, 0], 0.0, 5) == pytest.approx(-math.log(20))


def test_kde_score_samples_matches_reference():
    rng = np.random.default_rng(1)
    n = 6
    X = _random_rankings(rng, n, 25)
    Q = _random_rankings(rng, n, 30)
    kde = RankingKDE(theta=0.8).fit(X)
    ref = [math.log(np.mean([math.exp(log_mallows_kernel(q, x, 0.8, n)) for x in X]))
           for q in Q]
    np.testing.assert_allclose(kde.score_samples(Q), ref, atol=1e-10)
    assert kde.score(Q) == pytest.approx(np.mean(ref))


# ------------------------------------------------------------------------------------ KDE
@pytest.mark.parametrize("theta", [0.3, 2.0])
def test_kde_is_normalised_for_every_length(theta):
    rng = np.random.default_rng(2)
    n = 4
    kde = RankingKDE(theta=theta).fit(_random_rankings(rng, n, 12) + [[0, 1, 2, 3]])
    for t in range(1, n):
        total = np.exp(kde.score_samples(_all_top_t(n, t))).sum()
        assert total == pytest.approx(1.0, abs=1e-12)


def test_kde_counts_duplicates():
    X = [[0, 1], [0, 1], [0, 1], [2, 3]]
    kde = RankingKDE(theta=1.0).fit(X)
    assert kde.weights_.sum() == 4 and len(kde.weights_) == 2
    q = [[1, 0]]
    expected = math.log((3 * math.exp(log_mallows_kernel([1, 0], [0, 1], 1.0, 4))
                         + math.exp(log_mallows_kernel([1, 0], [2, 3], 1.0, 4))) / 4)
    assert kde.score_samples(q)[0] == pytest.approx(expected)


def test_kde_auto_theta_is_the_best_leave_one_out_width():
    rng = np.random.default_rng(3)
    n = 6
    X, _ = _gm_data(rng, [rng.permutation(n)], 1.0, [40], 3)
    X = np.vstack([X, X[:5]])  # duplicates: leave-one-out removes one copy only
    grid = [0.1, 0.5, 1.0, 2.0, 4.0]
    kde = RankingKDE(theta="auto", theta_grid=grid).fit(X)
    assert kde.theta_ in grid
    N = len(X)
    for g, th in enumerate(grid):
        loo = [math.log(sum(math.exp(log_mallows_kernel(X[i], X[j], th, n))
                            for j in range(N) if j != i) / (N - 1)) for i in range(N)]
        assert kde.cv_log_likelihood_[g] == pytest.approx(np.mean(loo), abs=1e-10)
    assert kde.theta_ == grid[int(np.argmax(kde.cv_log_likelihood_))]


def test_kde_prefers_held_out_data_from_its_own_model():
    rng = np.random.default_rng(4)
    n, t = 12, 5
    sigma = rng.permutation(n)
    other = rng.permutation(n)
    X, _ = _gm_data(rng, [sigma], 1.0, [300], t)
    same, _ = _gm_data(rng, [sigma], 1.0, [200], t)
    diff, _ = _gm_data(rng, [other], 1.0, [200], t)
    for theta in (1.0, "auto"):
        kde = RankingKDE(theta=theta, n_items=n).fit(X)
        assert kde.score(same) > kde.score(diff) + 2.0


def test_density_without_histogram_matches(monkeypatch):
    """Long rankings of many items sum over the centres instead of a histogram of bins."""
    rng = np.random.default_rng(8)
    n = 7
    X = _random_rankings(rng, n, 30) + [[0, 1, 2]] * 3
    Q = _random_rankings(rng, n, 20)
    grid = [0.2, 1.0, 3.0]
    with_hist = RankingKDE(theta="auto", theta_grid=grid).fit(X)
    monkeypatch.setattr(baselines.kernel, "_MAX_BINS", 0)
    direct = RankingKDE(theta="auto", theta_grid=grid).fit(X)
    np.testing.assert_allclose(direct.cv_log_likelihood_, with_hist.cv_log_likelihood_,
                               rtol=1e-12)
    np.testing.assert_allclose(direct.score_samples(Q), with_hist.score_samples(Q), rtol=1e-12)


def test_kde_accepts_item_names():
    X = [["a", "b"], ["a", "c"], ["b", "a"]]
    kde = RankingKDE(theta=1.0).fit(X)
    assert kde.items_ == ("a", "b", "c") and kde.n_items_ == 3
    np.testing.assert_allclose(kde.score_samples([["a", "b"]]), kde.score_samples([[0, 1]]))


# ----------------------------------------------------------------------------------- EBMS
def _naive_blur_step(rankings, counts, theta, n, T):
    """One EBMS step from the definitions: weights from the reference kernel, then the greedy
    stagewise central ranking of ``R[i, k] = sum_v w_v #{j: pi_v(j) = i, k not before i}``."""
    out = []
    for u in rankings:
        w = [c * math.exp(log_mallows_kernel(v, u, theta, n)) for v, c in zip(rankings, counts)]
        R = np.zeros((n, n))
        for v, wv in zip(rankings, w):
            for j, x in enumerate(v):
                for k in range(n):
                    if k != x and k not in v[:j]:
                        R[x, k] += wv
        left, order = list(range(n)), []
        for _ in range(T):
            cost = [sum(R[i, k] for i in left if i != k) for k in left]
            k = left[int(np.argmin(cost))]
            order.append(k)
            left.remove(k)
        out.append(order)
    return out


def test_blur_step_matches_naive():
    rng = np.random.default_rng(9)
    n, T = 6, 3
    rankings = [list(r) for r in {tuple(r) for r in _random_rankings(rng, n, 13, 3)}]
    counts = rng.integers(1, 4, len(rankings)).astype(float)
    width = max(map(len, rankings))
    pos = np.array([r + [-1] * (width - len(r)) for r in rankings], dtype=np.int64)
    pos_len = np.array([len(r) for r in rankings], dtype=np.int64)
    new = np.full((len(rankings), width), -1, dtype=np.int64)
    blur = baselines.blurring
    blur._blur_step(pos, pos_len, blur._blur_rank_table(pos, pos_len, n), counts,
                    *blur._blur_weights(0.7, n, width), n, T, new)
    assert new[:, :T].tolist() == _naive_blur_step(rankings, counts, 0.7, n, T)


def test_ebms_recovers_three_separated_clusters():
    rng = np.random.default_rng(5)
    n, t = 12, 5
    base = rng.permutation(n)
    centres = np.array([np.roll(base, -4 * k) for k in range(3)])  # different top items
    X, z = _gm_data(rng, centres, 1.0, [200, 200, 200], t)
    ebms = RankingEBMS(theta=0.2).fit(X)
    assert ebms.converged_
    assert variation_of_information(ebms.labels_, z) < 0.3
    big = ebms.cluster_centers_[ebms.weights_ > 0.2]
    assert len(big) == 3
    assert {tuple(c[:3]) for c in big} == {tuple(c[:3]) for c in centres}
    assert ebms.cluster_centers_.shape == (ebms.n_clusters_, t)
    assert ebms.weights_.sum() == pytest.approx(1.0)
    X_new, z_new = _gm_data(rng, centres, 1.0, [100, 100, 100], t)
    assert variation_of_information(ebms.predict(X_new), z_new) < 0.3
    assert 0.5 < ebms.mixture_theta_ < 2.0


@pytest.mark.parametrize("mixture_theta", ["ml", 0.7])
def test_ebms_density_is_normalised(mixture_theta):
    rng = np.random.default_rng(6)
    n = 4
    X = _random_rankings(rng, n, 20, max_length=2) + [[0, 1, 2]] * 5
    ebms = RankingEBMS(theta=0.5, mixture_theta=mixture_theta).fit(X)
    for t in range(1, n):
        total = np.exp(ebms.score_samples(_all_top_t(n, t))).sum()
        assert total == pytest.approx(1.0, abs=1e-12)


def test_ebms_identical_rankings_are_one_fixed_cluster():
    X = [[3, 1, 4]] * 7
    ebms = RankingEBMS(theta=1.0, mixture_theta="same").fit(Rankings(X, n_items=6))
    assert ebms.n_clusters_ == 1 and ebms.n_iter_ == 1 and ebms.converged_
    np.testing.assert_array_equal(ebms.cluster_centers_, [[3, 1, 4]])
    np.testing.assert_array_equal(ebms.labels_, 0)
    np.testing.assert_array_equal(ebms.central_rankings_[0, :3], [3, 1, 4])
    assert ebms.mixture_theta_ == 1.0
    assert ebms.score_samples([[3, 1, 4]])[0] == pytest.approx(
        log_mallows_kernel([3, 1, 4], [3, 1, 4], 1.0, 6))


def test_ebms_auto_is_reproducible():
    rng = np.random.default_rng(7)
    n, t = 8, 3
    X, _ = _gm_data(rng, [rng.permutation(n), rng.permutation(n)], 1.5, [60, 60], t)
    a = RankingEBMS(theta="auto", random_state=0).fit(X)
    b = RankingEBMS(theta="auto", random_state=0).fit(X)
    assert a.theta_ == b.theta_ and a.theta_ in a.theta_grid_
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert np.nanargmax(a.validation_log_likelihood_) == list(a.theta_grid_).index(a.theta_)


# --------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("Model", [RankingKDE, RankingEBMS])
def test_bad_input(Model):
    with pytest.raises(DataError, match="lists item 1 twice"):
        Model().fit([[0, 1, 1]])
    with pytest.raises(DataError, match="empty"):
        Model().fit([])
    with pytest.raises(ValueError, match="theta"):
        Model(theta=-1.0).fit([[0, 1]])
    with pytest.raises(ValueError, match="theta"):
        Model(theta="best").fit([[0, 1]])
    with pytest.raises(ValueError, match="not fitted"):
        Model().score_samples([[0, 1]])
    model = Model(theta=1.0).fit([[0, 1], [1, 2]])
    with pytest.raises(DataError, match="unknown item 5"):
        model.score_samples([[0, 5]])
    with pytest.raises(ValueError, match="at least"):
        Model(theta="auto").fit([[0, 1]])


def test_bad_parameters():
    X = [[0, 1], [1, 2]]
    with pytest.raises(ValueError, match="theta_grid"):
        RankingKDE(theta="auto", theta_grid=[0.5, -1.0]).fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        RankingEBMS(max_iter=0).fit(X)
    with pytest.raises(ValueError, match="tol"):
        RankingEBMS(tol=1.5).fit(X)
    with pytest.raises(ValueError, match="center_length"):
        RankingEBMS(center_length=3).fit(X)
    with pytest.raises(ValueError, match="mixture_theta"):
        RankingEBMS(mixture_theta="max").fit(X)
