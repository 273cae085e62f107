"""The sub-cluster sampler (Chang & Fisher 2013) against exact posteriors (ALGORITHMS.md §6)."""

import numpy as np
import pytest
from test_samplers_exact import tv_to_exact

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.metrics import nmi
from dpclust.samplers import MixtureModel, SubclusterSplitMerge
from dpclust.samplers._kernels import constrained_sweep

EXACT = SubclusterSplitMerge()  # restricted Gibbs + the exact random split/merge pair


def test_exact_configuration_matches_exact_posterior():
    tv = tv_to_exact(EXACT, "gaussian", 5, 60_000, seed=7)
    assert tv < 0.02, tv


@pytest.mark.slow
def test_exact_configuration_matches_exact_posterior_multinomial():
    tv = tv_to_exact(EXACT, "multinomial", 5, 150_000, seed=7)
    assert tv < 0.015, tv


@pytest.mark.slow
def test_random_pair_alone_matches_exact_posterior():
    tv = tv_to_exact(SubclusterSplitMerge(restricted_gibbs=False), "gaussian", 5, 150_000,
                     seed=8)
    assert tv < 0.02, tv


def test_restricted_gibbs_keeps_every_cluster():
    rng = np.random.default_rng(0)
    logp = rng.normal(size=(50, 4))
    logp[:, 0] -= 100.0  # nobody wants cluster 0 ...
    labels = np.repeat(np.arange(4), [1, 20, 20, 9]).astype(np.int64)  # ... but one point is in it
    counts = np.bincount(labels).astype(np.int64)
    constrained_sweep(logp, labels, counts, rng.permutation(50), rng.random(50), np.empty(4))
    assert labels[0] == 0 and np.all(np.bincount(labels, minlength=4) >= 1)
    np.testing.assert_array_equal(np.bincount(labels, minlength=4), counts)


def test_records_accepted_moves():
    X, y = make_gaussian_mixture(n_samples=400, n_clusters=3, random_state=1)
    # exact configuration: merges from 10 random clusters
    m = DPMixture(sampler="subcluster", n_iter=150, init_clusters=10, random_state=0).fit(X)
    assert m.trace_.n_accepted_merges.sum() >= 2
    assert nmi(m.labels_, y) > 0.9
    # opt-in (approximate) sub-cluster splits grow clusters from a single one
    approx = SubclusterSplitMerge(subcluster_splits=True, merges="practical")
    m = DPMixture(sampler=approx, n_iter=60, init_clusters=1, random_state=0).fit(X)
    assert m.trace_.n_accepted_splits.sum() >= 2
    assert nmi(m.labels_, y) > 0.9


def test_options_are_validated():
    with pytest.raises(ValueError, match="merges"):
        SubclusterSplitMerge(merges="all")
    with pytest.raises(ValueError, match="split_delay"):
        SubclusterSplitMerge(split_delay=-1)
    model = MixtureModel(*_tiny())
    state = SubclusterSplitMerge().init(np.random.default_rng(0), model, n_clusters=2)
    assert set(np.unique(state.sublabels)) <= {0, 1} and state.age.shape == (2,)


def _tiny():
    from dpclust.families import NormalInverseWishart

    X = np.random.default_rng(0).normal(size=(10, 2))
    return NormalInverseWishart().resolve(X), X
