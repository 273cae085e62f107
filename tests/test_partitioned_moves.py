"""The sub-cluster sampler's sequential and multi-way moves on data in partitions
(:mod:`dpclust.samplers._partitioned_moves`): exact posteriors with the partition layout
in-process (the chain a Dask cluster runs, as tests/test_distributed.py checks), and the
moves' behaviour on clustered data."""

import numpy as np
import pytest
from test_samplers_exact import FAMILIES, X_DOCS, X_GAUSS

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.exact import exact_posterior, partition_frequencies, run_chain, total_variation
from dpclust.metrics import nmi
from dpclust.samplers import MixtureModel, SubclusterSplitMerge
from dpclust.samplers._partitioned_moves import (combine_first, combine_members, first_rows,
                                                 sample_members)

#: the sequential pairwise moves alone (no data pass, no pinches)
SEQUENTIAL_ALONE = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0, sequential=True,
                                        multiway=0)
#: the multi-way moves with the random pair move (irreducible), as in test_subcluster.py
MULTIWAY_ALONE = SubclusterSplitMerge(split_merge=False, random_split_merge=True,
                                      restricted_gibbs=False, sequential=True)


def tv_partitioned(sampler, family_name, rows, n_steps, seed):
    """Total variation between the chain on 5 points split into partitions ``rows`` and
    the enumerated posterior (alpha = 1)."""
    make_family, prep = FAMILIES[family_name]
    raw = (X_DOCS if family_name == "multinomial" else X_GAUSS)[:5]
    X = prep(raw)
    fam = make_family(raw)
    parts, exact = exact_posterior(fam, X, 1.0)
    model = MixtureModel(fam, X, None, partition_rows=tuple(rows))
    draws = run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=200,
                      init_kwargs={"alpha": 1.0, "n_clusters": 1})
    assert exact.max() < 0.6
    return total_variation(partition_frequencies(draws, parts), exact)


# ------------------------------------------------------------- exact posterior
def test_sequential_moves_on_partitions_match_exact_posterior():
    # measured TV 0.041 at 6,000 steps and 0.021 at 40,000 (partitions 2 + 3)
    tv = tv_partitioned(SEQUENTIAL_ALONE, "gaussian", (2, 3), 6_000, seed=13)
    assert tv < 0.07, tv


@pytest.mark.slow
@pytest.mark.parametrize("family,rows", [("gaussian", (1, 2, 2)), ("multinomial", (2, 3))])
def test_sequential_moves_on_partitions_match_exact_posterior_long(family, rows):
    tv = tv_partitioned(SEQUENTIAL_ALONE, family, rows, 40_000, seed=13)
    assert tv < 0.035, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_multiway_moves_on_partitions_match_exact_posterior(family):
    tv = tv_partitioned(MULTIWAY_ALONE, family, (2, 3), 40_000, seed=8)
    assert tv < 0.035, tv


def test_default_on_partitions_matches_exact_posterior():
    # the default sampler with its partition layout: instantiated pass, sequential and
    # multi-way moves
    tv = tv_partitioned(SubclusterSplitMerge(), "gaussian", (3, 2), 4_000, seed=5)
    assert tv < 0.08, tv


# ------------------------------------------------------------- helpers
def test_sample_members_is_layout_free_and_ordered_by_key():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=500)
    anchor = int(np.flatnonzero(labels == 1)[0])
    whole = combine_members([sample_members(labels, 1, anchor, 4, 99, 0)], 4)
    cut = [0, 130, 260, 500]
    parts = [sample_members(labels[a:b], 1, anchor, 4, 99, a) for a, b in zip(cut, cut[1:])]
    np.testing.assert_array_equal(combine_members(parts, 4), whole)
    assert len(set(whole.tolist())) == 4 and anchor not in whole
    assert np.all(labels[whole] == 1)
    first = combine_first([first_rows(labels[a:b], 3, a) for a, b in zip(cut, cut[1:])])
    np.testing.assert_array_equal(first, [np.flatnonzero(labels == k)[0] for k in range(3)])


# ------------------------------------------------------------- on clustered data
def test_partitions_find_what_in_process_finds():
    """Six Gaussians in 3-D, 3,000 points in 2 partitions from 10 random clusters: the
    sequential and multi-way moves take the fragments back (EM launches alone: K 20-40)."""
    X, y = make_gaussian_mixture(n_samples=3000, n_clusters=6, n_features=3, random_state=0)
    m = DPMixture(n_iter=40, partitions=2, init="random", random_state=0).fit(X)
    assert m.n_clusters_ <= 8 and nmi(m.labels_, y) > 0.95, (m.n_clusters_, nmi(m.labels_, y))
