"""Tests of dpclust.partitions against plain-NumPy references and hand cases."""

from math import comb

import numpy as np
import pytest

from dpclust.metrics import variation_of_information
from dpclust.partitions import (
    LOSSES,
    Loss,
    as_loss,
    best_draw,
    canonical_labels,
    credible_ball,
    expected_loss,
    first_minimum,
    pair_losses,
    point_estimate,
    posterior_similarity,
)
from dpclust.partitions.draws import _canonical_2d
from dpclust.partitions.losses import _expected_loss_unique

# ------------------------------------------------------------------ plain-NumPy references


def _canonical_reference(labels):
    """Relabel a 1-D vector by order of first appearance, with np.unique."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def _coclustering(labels):
    labels = np.asarray(labels)
    return labels[:, None] == labels[None, :]


def _psm_reference(draws):
    return np.mean([_coclustering(row) for row in draws], axis=0)


def _binder_reference(c, d):
    """Fraction of unordered pairs i < j on which c and d disagree about co-clustering."""
    n = len(c)
    if n < 2:
        return 0.0
    iu = np.triu_indices(n, k=1)
    return np.sum(_coclustering(c)[iu] != _coclustering(d)[iu]) / comb(n, 2)


def _expected_loss_reference(candidates, draws, loss):
    pair_loss = _binder_reference if loss == "binder" else variation_of_information
    return np.array([np.mean([pair_loss(c, d) for d in draws]) for c in candidates])


def _random_draws(rng, n_draws, n_samples, max_clusters):
    k = rng.integers(1, max_clusters + 1, size=(n_draws, 1))
    return np.floor(rng.random((n_draws, n_samples)) * k).astype(np.int64)


# ------------------------------------------------------------------ canonical_labels


def test_canonical_labels_hand_cases():
    np.testing.assert_array_equal(canonical_labels([3, 3, 1, 7, 1]), [0, 0, 1, 2, 1])
    np.testing.assert_array_equal(canonical_labels([-5, 2, -5, 10**12]), [0, 1, 0, 2])
    np.testing.assert_array_equal(canonical_labels(["b", "a", "b"]), [0, 1, 0])
    np.testing.assert_array_equal(canonical_labels([4]), [0])
    two_d = canonical_labels([[2, 2, 0], [0, 1, 2], [5, 4, 5]])
    assert two_d.dtype == np.int64
    np.testing.assert_array_equal(two_d, [[0, 0, 1], [0, 1, 2], [0, 1, 0]])


def test_canonical_labels_matches_reference_and_is_idempotent():
    rng = np.random.default_rng(0)
    draws = rng.integers(-3, 20, size=(40, 25))
    z = canonical_labels(draws)
    for row, z_row in zip(draws, z):
        np.testing.assert_array_equal(z_row, _canonical_reference(row))
        np.testing.assert_array_equal(canonical_labels(row), z_row)
    np.testing.assert_array_equal(canonical_labels(z), z)


def test_canonical_labels_validation():
    with pytest.raises(ValueError, match="1-D"):
        canonical_labels(np.zeros((2, 2, 2), dtype=int))
    with pytest.raises(ValueError, match="empty"):
        canonical_labels([])


# ------------------------------------------------------------------ posterior_similarity


def test_posterior_similarity_hand_case():
    draws = np.array([[0, 0, 1, 1], [5, 5, 5, 2], [1, 2, 3, 4], [0, 0, 0, 0]])
    expected = np.array(
        [
            [4, 3, 2, 1],
            [3, 4, 2, 1],
            [2, 2, 4, 2],
            [1, 1, 2, 4],
        ]
    ) / 4.0
    similarity = posterior_similarity(draws)
    assert similarity.dtype == np.float64
    np.testing.assert_allclose(similarity, expected)


def test_posterior_similarity_matches_reference():
    draws = _random_draws(np.random.default_rng(1), 30, 17, 5)
    np.testing.assert_allclose(posterior_similarity(draws), _psm_reference(draws))


def test_posterior_similarity_validation():
    with pytest.raises(ValueError, match="max_samples"):
        posterior_similarity(np.zeros((2, 11), dtype=int), max_samples=10)
    with pytest.raises(ValueError, match="2-D"):
        posterior_similarity(np.zeros(5, dtype=int))


# ------------------------------------------------------------------ expected_loss


@pytest.mark.parametrize("loss", ["vi", "binder"])
def test_expected_loss_matches_brute_force(loss):
    rng = np.random.default_rng(2)
    for n_samples in (1, 2, 9, 23):
        draws = _random_draws(rng, 25, n_samples, 6)
        draws[10:15] = draws[0]  # repeated draws exercise the deduplication weights
        candidates = np.vstack([_random_draws(rng, 6, n_samples, 8), draws[:3], draws[:1] + 7])
        got = expected_loss(candidates, draws, loss=loss)
        assert got.shape == (candidates.shape[0],)
        reference = _expected_loss_reference(candidates, draws, loss)
        np.testing.assert_allclose(got, reference, atol=1e-12)


@pytest.mark.parametrize("loss", ["vi", "binder"])
@pytest.mark.parametrize("table_size", [0, 12, 10**6])
def test_expected_loss_kernel_paths_agree(loss, table_size):
    """Dense-table and grouped cross terms (and a mix of both) give the same losses."""
    rng = np.random.default_rng(7)
    n_samples = 20
    zc, kc = _canonical_2d(_random_draws(rng, 8, n_samples, 10))
    zd, kd = _canonical_2d(_random_draws(rng, 12, n_samples, 10))
    weights = rng.integers(1, 4, size=zd.shape[0])
    got = _expected_loss_unique(zc, kc, zd, kd, weights, loss, table_size=table_size)
    threaded = _expected_loss_unique(zc, kc, zd, kd, weights, loss, 3, table_size=table_size)
    np.testing.assert_array_equal(threaded, got)
    reference = _expected_loss_reference(zc, np.repeat(zd, weights, axis=0), loss)
    np.testing.assert_allclose(got, reference, atol=1e-12)


def test_expected_loss_single_pair_hand_values():
    a = np.array([[0, 0, 1, 1]])
    b = np.array([[0, 1, 0, 1]])
    assert expected_loss(a, b, "vi")[0] == pytest.approx(2 * np.log(2))
    # pairs (01),(23) together in a only; (02),(13) together in b only; 4 of 6 disagree
    assert expected_loss(a, b, "binder")[0] == pytest.approx(4 / 6)
    assert expected_loss(a, a, "vi")[0] == 0.0
    assert expected_loss(a, a, "binder")[0] == 0.0


def test_binder_expected_loss_equals_psm_formula():
    rng = np.random.default_rng(3)
    n_samples = 15
    draws = _random_draws(rng, 40, n_samples, 4)
    candidates = _random_draws(rng, 5, n_samples, 5)
    psm = posterior_similarity(draws)
    iu = np.triu_indices(n_samples, k=1)
    expected = [
        np.sum(np.abs(_coclustering(c)[iu] - psm[iu])) / comb(n_samples, 2) for c in candidates
    ]
    np.testing.assert_allclose(expected_loss(candidates, draws, "binder"), expected, atol=1e-12)


def test_expected_loss_validation():
    draws = np.zeros((3, 4), dtype=int)
    with pytest.raises(ValueError, match="2-D"):
        expected_loss(np.zeros(4, dtype=int), draws)
    with pytest.raises(ValueError, match="2-D"):
        expected_loss(draws, np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="same points"):
        expected_loss(np.zeros((1, 5), dtype=int), draws)
    with pytest.raises(ValueError, match="loss must be one of"):
        expected_loss(draws, draws, loss="hamming")
    with pytest.raises(ValueError, match="empty"):
        expected_loss(np.zeros((0, 4), dtype=int), draws)
    for bad in (0, 1.5, False):
        with pytest.raises(ValueError, match="n_jobs"):
            expected_loss(draws, draws, n_jobs=bad)


def test_expected_loss_n_jobs():
    draws = _random_draws(np.random.default_rng(8), 15, 10, 4)
    serial = expected_loss(draws, draws, "vi")
    np.testing.assert_array_equal(expected_loss(draws, draws, "vi", n_jobs=2), serial)
    np.testing.assert_array_equal(expected_loss(draws, draws, "vi", n_jobs=-1), serial)


# ------------------------------------------------------------------ point_estimate


def _mode_draws():
    """7 relabelled copies of one partition and 3 other partitions, shuffled."""
    rng = np.random.default_rng(4)
    mode = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    copies = [rng.permutation(10)[mode] for _ in range(7)]  # same partition, new labels
    others = [
        np.array([0, 0, 1, 1, 1, 1, 2, 2, 2, 3]),
        np.zeros(10, dtype=int),
        np.arange(10),
    ]
    draws = np.array(copies + others)
    return mode, draws[rng.permutation(len(draws))]


@pytest.mark.parametrize("loss", ["vi", "binder"])
def test_point_estimate_picks_mode(loss):
    mode, draws = _mode_draws()
    labels, value = point_estimate(draws, loss=loss)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, mode)  # the mode is already canonical
    assert value == pytest.approx(expected_loss(mode[None, :], draws, loss)[0])
    assert value == pytest.approx(expected_loss(draws, draws, loss).min())


def test_best_draw_brute_force_minimiser():
    draws = _random_draws(np.random.default_rng(5), 30, 12, 4)
    for loss in ("vi", "binder"):
        reference = _expected_loss_reference(draws, draws, loss)
        labels, value = point_estimate(draws, loss=loss, method="draws", n_jobs=2)
        assert value == pytest.approx(reference.min())
        best = int(np.argmin(reference))
        np.testing.assert_array_equal(labels, _canonical_reference(draws[best]))


def test_best_draw_thinning():
    draws = _random_draws(np.random.default_rng(6), 20, 8, 3)
    labels, value = best_draw(draws, max_candidates=5, max_draws=7)
    cand = draws[[0, 5, 10, 14, 19]]  # round(linspace(0, 19, 5))
    used = draws[np.round(np.linspace(0, 19, 7)).astype(int)]
    reference = _expected_loss_reference(cand, used, "vi")
    assert value == pytest.approx(reference.min())
    np.testing.assert_array_equal(labels, _canonical_reference(cand[np.argmin(reference)]))
    # thinning to more than there are is the same as no thinning
    full = best_draw(draws)
    big = best_draw(draws, max_candidates=100, max_draws=100)
    np.testing.assert_array_equal(full[0], big[0])
    assert full[1] == big[1]


def test_point_estimate_single_draw():
    labels, value = point_estimate([[4, 4, 9]])
    np.testing.assert_array_equal(labels, [0, 0, 1])
    assert value == 0.0


def test_point_estimate_validation():
    draws = np.zeros((3, 4), dtype=int)
    with pytest.raises(ValueError, match="2-D"):
        point_estimate(np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="loss must be one of"):
        point_estimate(draws, loss="l2")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_candidates"):
            point_estimate(draws, max_candidates=bad)
        with pytest.raises(ValueError, match="max_draws"):
            point_estimate(draws, max_draws=bad)
    with pytest.raises(ValueError, match="n_jobs"):
        point_estimate(draws, n_jobs=0)
    with pytest.raises(ValueError, match="method"):
        point_estimate(draws, method="best")
    for name in ("n_runs", "n_starts", "max_zealous", "max_sweeps"):
        with pytest.raises(ValueError, match=name):
            point_estimate(draws, **{name: -1})
    with pytest.raises(ValueError, match="max_time"):
        point_estimate(draws, max_time=0)
    with pytest.raises(ValueError, match="no run"):
        point_estimate(draws, n_runs=0, n_starts=0)
    with pytest.raises(ValueError, match="weight a"):
        point_estimate(draws, loss="vi", a=2.5)
    with pytest.raises(ValueError, match="only vi and binder"):
        point_estimate(draws, loss="omari", a=0.5)


def test_ties_go_to_the_earliest_draw_whatever_the_rounding():
    """Expected losses equal up to rounding (sums added in another order, as over a Dask
    cluster's partitions) count as a tie, which goes to the earliest candidate."""
    assert first_minimum([1.0, 1.0 - 1e-15, 2.0]) == 0
    assert first_minimum([1.0, 1.0 - 1e-6, 2.0]) == 1
    assert first_minimum([0.0, 0.0]) == 0
    # two mirror-image partitions of four points, each drawn once: an exact tie
    draws = np.array([[0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 0, 1]])
    labels, _ = best_draw(draws)
    np.testing.assert_array_equal(labels, draws[0])
    labels, _ = best_draw(draws[[1, 0, 3, 2]])
    np.testing.assert_array_equal(labels, draws[1])


# ------------------------------------------------------------------ the searched estimate


def _set_partitions(n):
    """Every partition of ``n`` items, as restricted growth strings (Bell(n) rows)."""
    rows, row = [], [0] * n

    def grow(i, top):
        if i == n:
            rows.append(list(row))
            return
        for v in range(top + 2):
            row[i] = v
            grow(i + 1, max(top, v))

    grow(1, 0)
    return np.array(rows)


def _perturbed_draws(seed, n_draws=25, p=0.4):
    """Draws of 9 items around three groups of three, each item moved with probability p."""
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(3), 3)
    draws = np.repeat(truth[None, :], n_draws, axis=0)
    moved = rng.random(draws.shape) < p
    draws[moved] = rng.integers(0, 4, size=int(moved.sum()))
    return draws


_SEARCH_LOSSES = [Loss(name) for name in LOSSES] + [
    Loss("vi", 0.6), Loss("vi", 1.5), Loss("binder", 0.5), Loss("binder", 1.6)]


@pytest.mark.parametrize("loss", _SEARCH_LOSSES, ids=str)
def test_search_reaches_the_exact_minimiser_the_draws_never_hold(loss):
    """On 9 items the search returns the minimiser over all 21,147 partitions, for every
    loss offered, including draws sets that do not hold that minimiser."""
    everything = _set_partitions(9)
    assert len(everything) == 21147
    unheld = 0
    for seed in range(4):
        draws = _perturbed_draws(seed)
        exact = expected_loss(everything, draws, loss)
        labels, value = point_estimate(draws, loss, random_state=seed)
        assert value == pytest.approx(exact.min(), rel=1e-9, abs=1e-12)
        assert value == pytest.approx(expected_loss(labels[None, :], draws, loss)[0])
        _, drawn = best_draw(draws, loss)
        assert value <= drawn + 1e-12
        unheld += drawn > exact.min() + 1e-9
    assert unheld >= 1  # the search found a partition no draw held


def test_search_is_never_worse_than_the_best_draw_and_is_reproducible():
    rng = np.random.default_rng(11)
    truth = np.repeat(np.arange(4), 15)
    draws = np.repeat(truth[None, :], 40, axis=0)
    moved = rng.random(draws.shape) < 0.15
    draws[moved] = rng.integers(0, 6, size=int(moved.sum()))
    for loss in ("vi", "binder", "omari"):
        _, drawn = best_draw(draws, loss)
        one = point_estimate(draws, loss, random_state=3, n_jobs=1)
        two = point_estimate(draws, loss, random_state=3, n_jobs=2)
        np.testing.assert_array_equal(one[0], two[0])  # the same whatever the threads
        assert one[1] == two[1] <= drawn + 1e-12
    labels, _ = point_estimate(draws, "vi", random_state=3)
    np.testing.assert_array_equal(labels, truth)  # the consensus no draw holds


def test_search_from_starts_only_and_from_random_runs_only():
    draws = _perturbed_draws(2)
    exact = expected_loss(_set_partitions(9), draws, "vi").min()
    for kwargs in ({"n_runs": 0}, {"n_starts": 0}, {"max_zealous": 0}):
        _, value = point_estimate(draws, "vi", random_state=0, **kwargs)
        assert value == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("loss", _SEARCH_LOSSES, ids=str)
def test_grouped_search_reaches_the_exact_minimiser_over_group_partitions(loss):
    """Nine rows repeated 1 to 4 times (26 points), draws that split the copies of a row:
    with ``groups`` the search returns the minimiser over all 21,147 partitions that keep
    each row's copies together, for every loss offered, and never splits a row."""
    counts = np.array([1, 3, 2, 4, 1, 2, 4, 3, 2])
    groups = np.repeat(np.arange(9), counts)
    everything = _set_partitions(9)[:, groups]
    for seed in range(3):
        draws = _perturbed_draws(seed, p=0.3)[:, groups]
        rng = np.random.default_rng(seed)
        moved = rng.random(draws.shape) < 0.2  # copies of one row apart in a draw
        draws[moved] = rng.integers(0, 4, size=int(moved.sum()))
        exact = expected_loss(everything, draws, loss)
        labels, value = point_estimate(draws, loss, random_state=seed, groups=groups + 7)
        assert value == pytest.approx(exact.min(), rel=1e-9, abs=1e-12)
        assert value == pytest.approx(expected_loss(labels[None, :], draws, loss)[0])
        table = np.zeros((9, labels.max() + 1), dtype=int)
        np.add.at(table, (groups, labels), 1)
        assert ((table > 0).sum(axis=1) == 1).all()  # every row whole
    with pytest.raises(ValueError, match="one integer per point"):
        point_estimate(draws, loss, groups=groups[:-1])
    with pytest.raises(ValueError, match="without groups"):
        point_estimate(draws, loss, groups=groups, method="draws")


def test_losses_hand_values_and_spellings():
    c = np.array([[0, 0, 1, 1]])
    z = np.array([[0, 1, 0, 1]])
    # independent halves: I = 0, H(c) = H(z) = log 2, H(c, z) = log 4
    assert expected_loss(c, z, "nvi")[0] == pytest.approx(1.0)
    assert expected_loss(c, z, "nid")[0] == pytest.approx(1.0)
    # ARI of these two: X = 0, A = B = 2, E = 4/6, M = 2: ARI = -0.5
    assert expected_loss(c, z, "omari")[0] == pytest.approx(1.5)
    for name in LOSSES:
        assert expected_loss(c, c, name)[0] == 0.0
    # one cluster against singletons: both normalised losses are 1, omARI 1
    one, single = np.zeros((1, 4), dtype=int), np.arange(4)[None, :]
    for name in ("nvi", "nid", "omari"):
        assert expected_loss(one, single, name)[0] == pytest.approx(1.0)
    # VI(a) splits into a H(z | c) + (2 - a) H(c | z): a = 2 charges only what c splits
    assert expected_loss(one, single, Loss("vi", 2.0))[0] == 0.0
    assert expected_loss(single, one, Loss("vi", 2.0))[0] == pytest.approx(2 * np.log(4))
    assert expected_loss(single, one, "binder(a=0)")[0] == 0.0
    assert as_loss("VI(a=1.5)") == Loss("vi", 1.5) == as_loss("vi(1.5)")
    assert str(as_loss("binder")) == "binder" and str(Loss("vi", 0.5)) == "vi(a=0.5)"
    with pytest.raises(ValueError, match="loss must be one of"):
        as_loss("vi[2]")


def test_omari_and_nvi_against_scikit_learn():
    from sklearn.metrics import adjusted_rand_score, mutual_info_score

    def entropy(labels):
        p = np.bincount(labels) / labels.size
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    rng = np.random.default_rng(12)
    for _ in range(10):
        c, z = rng.integers(0, 4, 30), rng.integers(0, 5, 30)
        assert expected_loss(c[None], z[None], "omari")[0] == pytest.approx(
            1 - adjusted_rand_score(z, c))
        info = mutual_info_score(c, z)
        h_c, h_z = entropy(c), entropy(z)
        assert expected_loss(c[None], z[None], "nvi")[0] == pytest.approx(
            1 - info / (h_c + h_z - info))
        assert expected_loss(c[None], z[None], "nid")[0] == pytest.approx(
            1 - info / max(h_c, h_z))


def test_credible_ball_bounds():
    estimate = np.repeat(np.arange(3), 3)
    draws = np.array([
        estimate,                                  # distance 0
        [0, 0, 0, 1, 1, 1, 1, 1, 1],               # merges two groups: fewer clusters
        [0, 0, 0, 1, 1, 1, 2, 2, 3],               # one item split off: more clusters
        [0, 0, 0, 1, 1, 1, 2, 3, 4],               # two items split off: farther, finer
        estimate, estimate, estimate, estimate, estimate, estimate,
    ])
    d = pair_losses(estimate, draws)
    ball = credible_ball(draws, estimate, level=0.9)
    assert ball.radius == pytest.approx(np.sort(d)[8])  # 9 of the 10 draws inside
    assert ball.share_in_ball >= 0.9
    assert ball.horizontal.distance == ball.radius
    assert ball.upper_vertical.n_clusters == ball.n_clusters_range[0]
    assert ball.lower_vertical.n_clusters == ball.n_clusters_range[1]
    full = credible_ball(draws, estimate, level=0.99)
    assert full.n_clusters_range == (2, 5)
    np.testing.assert_array_equal(full.upper_vertical.labels, canonical_labels(draws[1]))
    np.testing.assert_array_equal(full.lower_vertical.labels, canonical_labels(draws[3]))
    assert full.horizontal.distance == pytest.approx(d.max())
    assert "2 to 5 clusters" in full.describe()
    with pytest.raises(ValueError, match="level"):
        credible_ball(draws, estimate, level=1.0)


# ------------------------------------------------------------------ relabelled components


def test_components_are_matched_to_the_estimate_whatever_the_labels():
    """Draws whose components come in shuffled labels (label switching) summarise to the
    estimate's clusters: the weights and parameters of each cluster's own component."""
    from typing import NamedTuple

    from dpclust.partitions import match_to_pivot, summarise_components

    class P(NamedTuple):
        mean: np.ndarray

    rng = np.random.default_rng(13)
    pivot = np.repeat([0, 1, 2], [50, 30, 20])
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [-5.0, 5.0]])
    draws, params = [], []
    for s in range(60):
        perm = rng.permutation(4)  # four components, one empty, in a new order
        z = perm[pivot].copy()
        moved = rng.random(100) < 0.05
        z[moved] = perm[rng.integers(0, 3, int(moved.sum()))]
        theta = np.zeros((4, 2))
        theta[perm[:3]] = centres + 0.1 * rng.standard_normal((3, 2))
        draws.append(z)
        params.append(P(theta))
        np.testing.assert_array_equal(match_to_pivot(z, pivot), perm[:3])
    comp = summarise_components(draws, params, pivot)
    np.testing.assert_allclose(comp.params["mean"][0], centres, atol=0.05)
    assert np.all(comp.params["mean"][1] < centres) and np.all(comp.params["mean"][2] > centres)
    assert np.all(comp.weight_lower <= comp.weight) and np.all(comp.weight <= comp.weight_upper)
    np.testing.assert_allclose(comp.weight, [0.5, 0.3, 0.2], atol=0.03)
    np.testing.assert_array_equal(comp.matched, 1.0)
    # a draw with fewer components leaves a cluster unmatched: weight 0, no parameters
    one = summarise_components([np.zeros(100, dtype=int)], [P(np.zeros((1, 2)))], pivot)
    assert one.matched.tolist() == [1.0, 0.0, 0.0] and one.weight[1] == 0.0
    assert np.isnan(one.params["mean"][0][1]).all()


def test_a_fit_summarises_its_components_with_intervals():
    import warnings

    from dpclust import DPMixture

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.5, size=(100, 2)) for c in ([0, 0], [6, 0], [0, 6])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(n_iter=100, n_chains=1, random_state=0).fit(X)
    comp = m.components_
    assert comp.weight.shape == (m.n_clusters_,) and set(comp.params) >= {"mean"}
    big = np.argsort(-comp.weight)[:3]
    means = comp.params["mean"][0][big]
    assert sorted(np.round(means).astype(int).tolist()) == [[0, 0], [0, 6], [6, 0]]
    lower, upper = comp.params["mean"][1][big], comp.params["mean"][2][big]
    assert np.all(lower < means) and np.all(means < upper)
