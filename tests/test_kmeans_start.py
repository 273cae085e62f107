"""The k-means start of partitioned data: a sample-based k-means whose labels do not depend
on the partitions (so the in-process ``partitions=`` run and a Dask cluster share it)."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.samplers._partitioned import (StartLabels, kmeans_start, nearest_centre,
                                           sample_partition)


def _start(X, rows, n_clusters=4, sample_size=20_000, seed=0, **kw):
    model = DPMixture(partitions=rows, sampler="subcluster", **kw)._target(X)
    return kmeans_start(np.random.default_rng(seed), model.partitions, model.family,
                        n_clusters, sample_size)


def test_the_sample_does_not_depend_on_the_partitions():
    whole = sample_partition(1000, 0, 7, 0.3)
    parts = np.concatenate([sample_partition(n, a, 7, 0.3) + a
                            for a, n in ((0, 150), (150, 600), (750, 250))])
    np.testing.assert_array_equal(whole, parts)
    assert 240 < len(whole) < 360


def test_nearest_centre_is_the_naive_argmin():
    rng = np.random.default_rng(0)
    F, C = rng.normal(size=(300, 3)), rng.normal(size=(5, 3))
    naive = np.argmin(((F[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(nearest_centre(F, C, chunk=7), naive)
    import scipy.sparse as sp

    np.testing.assert_array_equal(nearest_centre(sp.csr_matrix(F), C), naive)


@pytest.mark.parametrize("sample_size", [20_000, 500])
def test_the_start_is_k_means_whatever_the_partitions(sample_size):
    X, y = make_gaussian_mixture(n_samples=3000, n_clusters=4, random_state=2)
    a = _start(X, None, sample_size=sample_size)
    b = _start(X, (1000, 1200, 800), sample_size=sample_size)
    assert isinstance(a, StartLabels) and a.n_clusters == 4
    np.testing.assert_array_equal(a.labels, b.labels)
    assert normalized_mutual_info_score(y, a.labels) > 0.9


def test_a_table_start_is_scaled_by_the_sample():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 1200
    group = np.sort(rng.integers(0, 3, n))  # each partition's own scale is not the data's
    df = pd.DataFrame({"x": rng.normal(group * 300.0, 20.0), "y": rng.normal(-group, 0.3),
                       "kind": np.array(["a", "b", "c"])[group]})
    holes = rng.random(df.shape) < 0.1
    holes[:, 0] &= ~holes[:, 1:].all(axis=1)  # no row without a cell
    df = df.mask(holes)
    a = _start(df, (500, 700), n_clusters=3, family="auto")
    b = _start(df, (300, 300, 600), n_clusters=3, family="auto")
    np.testing.assert_array_equal(a.labels, b.labels)
    assert normalized_mutual_info_score(group, a.labels) > 0.8


def test_partitions_start_from_k_means_by_default():
    """``init="auto"`` with partitions is the sampled k-means: a few iterations on separated
    blobs find them."""
    X, y = make_gaussian_mixture(n_samples=2000, n_clusters=4, random_state=5)
    m = DPMixture(sampler="subcluster", partitions=(700, 900, 400), init_clusters=4,
                  n_iter=4, burn_in=2, random_state=3, store_labels=True, n_chains=1).fit(X)
    assert normalized_mutual_info_score(y, m.trace_.labels[0, 0]) > 0.9
