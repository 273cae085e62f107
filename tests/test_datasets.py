"""Tests of dpclust.datasets: shapes, determinism by seed, formats, label ranges."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpclust.datasets import load_demo, make_documents, make_gaussian_mixture


def test_gaussian_mixture_shapes_and_labels():
    X, y = make_gaussian_mixture(n_samples=300, n_clusters=4, n_features=3, random_state=0)
    assert X.shape == (300, 3) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (300,) and y.dtype == np.int64
    assert set(np.unique(y)) == {0, 1, 2, 3}
    assert np.isfinite(X).all()


def test_gaussian_mixture_deterministic_by_seed():
    a = make_gaussian_mixture(200, 3, random_state=5)
    b = make_gaussian_mixture(200, 3, random_state=np.random.default_rng(5))
    c = make_gaussian_mixture(200, 3, random_state=6)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_gaussian_mixture_is_well_separated():
    # With the default separation a nearest-mean rule recovers (almost) every label.
    X, y = make_gaussian_mixture(1000, 5, 2, random_state=3)
    means = np.array([X[y == k].mean(axis=0) for k in range(5)])
    nearest = np.argmin(((X[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    assert np.mean(nearest == y) > 0.99


def test_gaussian_mixture_weights_unequal_and_every_cluster_used():
    _, y = make_gaussian_mixture(20, 20, random_state=1)
    assert np.bincount(y).tolist() == [1] * 20
    _, y = make_gaussian_mixture(3000, 4, random_state=1)
    sizes = np.bincount(y)
    assert sizes.min() > 0 and sizes.max() > 1.2 * sizes.min()


def test_gaussian_mixture_bad_arguments():
    with pytest.raises(ValueError, match="n_samples"):
        make_gaussian_mixture(3, 5)
    with pytest.raises(ValueError, match="n_clusters"):
        make_gaussian_mixture(10, 0)
    with pytest.raises(ValueError, match="separation"):
        make_gaussian_mixture(10, 2, separation=-1)


def test_load_demo():
    X, y = load_demo()
    assert X.shape == (1500, 2)
    assert set(np.unique(y)) == set(range(6))
    X2, y2 = load_demo()
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_make_documents_format_and_labels():
    X, y = make_documents(n_docs=120, n_topics=4, vocab_size=50, doc_length=30, random_state=0)
    assert isinstance(X, sp.csr_matrix)
    assert X.shape == (120, 50) and X.dtype == np.float64
    assert X.has_canonical_format and np.all(X.data > 0)
    np.testing.assert_array_equal(X.data, np.round(X.data))
    assert np.asarray(X.sum(axis=1)).min() >= 1
    assert y.shape == (120,) and y.dtype == np.int64
    assert set(np.unique(y)) == set(range(4))


def test_make_documents_deterministic_by_seed():
    a, ya = make_documents(60, 3, 40, random_state=9)
    b, yb = make_documents(60, 3, 40, random_state=9)
    c, _ = make_documents(60, 3, 40, random_state=10)
    assert (a != b).nnz == 0
    np.testing.assert_array_equal(ya, yb)
    assert (a != c).nnz > 0


def test_make_documents_topics_differ():
    # Documents of the same topic share words more than documents of different topics.
    X, y = make_documents(200, 2, 100, 100, concentration=0.05, random_state=2)
    profiles = np.array([np.asarray(X[y == k].sum(axis=0)).ravel() for k in range(2)])
    profiles /= profiles.sum(axis=1, keepdims=True)
    assert 0.5 * np.abs(profiles[0] - profiles[1]).sum() > 0.5  # total variation distance


def test_make_documents_bad_arguments():
    with pytest.raises(ValueError, match="n_docs"):
        make_documents(2, 5)
    with pytest.raises(ValueError, match="concentration"):
        make_documents(concentration=0)
