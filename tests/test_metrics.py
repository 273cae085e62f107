"""Tests of dpclust.metrics: hand-computed values, invariances, and agreement with sklearn."""

import numpy as np
import pytest
from scipy.stats import entropy
from sklearn.metrics import adjusted_rand_score, mutual_info_score, normalized_mutual_info_score

from dpclust.metrics import ari, contingency_table, nmi, variation_of_information


def _random_pairs(n_pairs=30, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_pairs):
        n = int(rng.integers(1, 60))
        a = rng.integers(0, int(rng.integers(1, 8)), size=n)
        b = rng.integers(0, int(rng.integers(1, 8)), size=n)
        yield a, b


def _vi_reference(a, b):
    """VI = H(U) + H(V) - 2 I(U, V) from scipy entropies and sklearn's mutual information."""
    h_a = entropy(np.unique(a, return_counts=True)[1])
    h_b = entropy(np.unique(b, return_counts=True)[1])
    return h_a + h_b - 2.0 * mutual_info_score(a, b)


# ------------------------------------------------------------------ contingency table


def test_contingency_table_hand_case():
    a = ["x", "x", "y", "y", "y"]
    b = [5, 7, 7, 7, 5]
    table = contingency_table(a, b)
    assert table.dtype == np.int64
    np.testing.assert_array_equal(table, [[1, 1], [1, 2]])


def test_contingency_table_margins():
    for a, b in _random_pairs(5):
        table = contingency_table(a, b)
        np.testing.assert_array_equal(table.sum(axis=1), np.unique(a, return_counts=True)[1])
        np.testing.assert_array_equal(table.sum(axis=0), np.unique(b, return_counts=True)[1])


# ------------------------------------------------------------------ variation of information


def test_vi_hand_cases():
    assert variation_of_information([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(2 * np.log(2))
    for n in (1, 2, 7, 50):
        vi = variation_of_information(np.zeros(n, dtype=int), np.arange(n))
        assert vi == pytest.approx(np.log(n), abs=1e-12)
    # {0,0,0,1} vs {0,0,1,1}: H(U|V) = (1/2) log 2, H(V|U) = (3/4) H(1/3, 2/3)
    expected = 0.5 * np.log(2) + 0.75 * entropy([1, 2])
    assert variation_of_information([0, 0, 0, 1], [0, 0, 1, 1]) == pytest.approx(expected)


def test_vi_zero_for_relabelled_partition():
    a = np.array([0, 0, 1, 2, 2, 1, 3])
    relabel = np.array([9, -4, 2, 100])
    assert variation_of_information(a, relabel[a]) == 0.0


def test_vi_symmetric_and_matches_entropy_formula():
    for a, b in _random_pairs():
        vi = variation_of_information(a, b)
        assert vi == pytest.approx(variation_of_information(b, a), abs=1e-12)
        assert vi == pytest.approx(_vi_reference(a, b), abs=1e-10)
        assert 0.0 <= vi <= np.log(len(a)) + 1e-12


# ------------------------------------------------------------------ NMI


@pytest.mark.parametrize("method", ["arithmetic", "geometric", "min", "max"])
def test_nmi_matches_sklearn(method):
    for a, b in _random_pairs():
        expected = normalized_mutual_info_score(a, b, average_method=method)
        assert nmi(a, b, average_method=method) == pytest.approx(expected, abs=1e-10)


def test_nmi_edge_cases_match_sklearn():
    cases = [
        ([0, 0, 0], [1, 1, 1]),  # both one cluster -> 1
        ([0, 0, 0], [0, 1, 2]),  # one cluster vs singletons -> 0
        ([0, 1, 2], [0, 0, 0]),
        ([0, 0, 1, 1], [0, 1, 0, 1]),  # independent -> 0
        ([0], [3]),
        ([0, 1, 2], [2, 0, 1]),  # identical up to relabelling -> 1
    ]
    for a, b in cases:
        assert nmi(a, b) == normalized_mutual_info_score(a, b)
    assert nmi([0, 0, 0], [1, 1, 1]) == 1.0
    assert nmi([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0


def test_nmi_invariance_and_symmetry():
    a = np.array([0, 0, 1, 1, 2, 2, 2])
    b = np.array([1, 0, 1, 1, 0, 2, 2])
    assert nmi(a, b) == pytest.approx(nmi(b, a))
    assert nmi(a, b) == pytest.approx(nmi(a + 10, 5 - b))


def test_nmi_rejects_unknown_average_method():
    with pytest.raises(ValueError, match="average_method"):
        nmi([0, 1], [0, 1], average_method="median")


# ------------------------------------------------------------------ ARI


def test_ari_matches_sklearn():
    for a, b in _random_pairs():
        assert ari(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)


def test_ari_edge_cases_match_sklearn():
    cases = [
        ([0], [0]),
        ([0, 1, 2], [0, 1, 2]),  # all singletons in both
        ([0, 0, 0], [1, 1, 1]),  # one cluster in both
        ([0, 0, 0], [0, 1, 2]),
        ([0, 0, 1, 1], [0, 1, 0, 1]),
    ]
    for a, b in cases:
        assert ari(a, b) == adjusted_rand_score(a, b)


def test_ari_hand_case_invariance_and_symmetry():
    # {0,0,1,1} vs {0,1,0,1}: tp=0, fp=fn=2, tn=2 unordered pairs -> ARI = -0.5
    assert ari([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)
    a = np.array([0, 0, 1, 1, 2, 2, 2, 3])
    b = np.array([1, 0, 1, 1, 0, 2, 2, 2])
    assert ari(a, b) == pytest.approx(ari(b, a))
    assert ari(a, b) == pytest.approx(ari(np.array(list("wxyz"))[a], -b))
    assert ari(a, 7 - a) == 1.0


def test_ari_large_n_no_overflow():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, size=200_000)
    b = np.where(rng.random(a.size) < 0.9, a, rng.integers(0, 3, size=a.size))
    assert ari(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize("func", [contingency_table, variation_of_information, nmi, ari])
def test_validation(func):
    with pytest.raises(ValueError, match="1-D"):
        func(np.zeros((2, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="1-D"):
        func(np.zeros(4), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="lengths 3 and 4"):
        func([0, 1, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
