"""Tests of dpclust.partitions against plain-NumPy references and hand cases."""

from math import comb

import numpy as np
import pytest

from dpclust.metrics import variation_of_information
from dpclust.partitions import (
    _canonical_2d,
    _expected_loss_unique,
    canonical_labels,
    expected_loss,
    first_minimum,
    point_estimate,
    posterior_similarity,
)

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


def test_point_estimate_brute_force_minimiser():
    draws = _random_draws(np.random.default_rng(5), 30, 12, 4)
    for loss in ("vi", "binder"):
        reference = _expected_loss_reference(draws, draws, loss)
        labels, value = point_estimate(draws, loss=loss, random_state=0, n_jobs=2)
        assert value == pytest.approx(reference.min())
        best = int(np.argmin(reference))
        np.testing.assert_array_equal(labels, _canonical_reference(draws[best]))


def test_point_estimate_thinning():
    draws = _random_draws(np.random.default_rng(6), 20, 8, 3)
    labels, value = point_estimate(draws, max_candidates=5, max_draws=7)
    cand = draws[[0, 5, 10, 14, 19]]  # round(linspace(0, 19, 5))
    used = draws[np.round(np.linspace(0, 19, 7)).astype(int)]
    reference = _expected_loss_reference(cand, used, "vi")
    assert value == pytest.approx(reference.min())
    np.testing.assert_array_equal(labels, _canonical_reference(cand[np.argmin(reference)]))
    # thinning to more than there are is the same as no thinning
    full = point_estimate(draws)
    big = point_estimate(draws, max_candidates=100, max_draws=100)
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


def test_ties_go_to_the_earliest_draw_whatever_the_rounding():
    """Expected losses equal up to rounding (sums added in another order, as over a Dask
    cluster's partitions) count as a tie, which goes to the earliest candidate."""
    assert first_minimum([1.0, 1.0 - 1e-15, 2.0]) == 0
    assert first_minimum([1.0, 1.0 - 1e-6, 2.0]) == 1
    assert first_minimum([0.0, 0.0]) == 0
    # two mirror-image partitions of four points, each drawn once: an exact tie
    draws = np.array([[0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 0, 1]])
    labels, _ = point_estimate(draws)
    np.testing.assert_array_equal(labels, draws[0])
    labels, _ = point_estimate(draws[[1, 0, 3, 2]])
    np.testing.assert_array_equal(labels, draws[1])
