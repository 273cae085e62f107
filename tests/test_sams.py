"""Collapsed Gibbs with Dahl's merge-split moves against exact posteriors (ALGORITHMS.md §6)."""

import pytest
from test_samplers_exact import tv_to_exact

from dpclust import DPMixture
from dpclust.datasets import make_documents
from dpclust.metrics import nmi
from dpclust.samplers import GibbsSAMS


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_gibbs_sams_matches_exact_posterior(family):
    tv = tv_to_exact(GibbsSAMS(), family, 5, 40_000, seed=9)
    assert tv < 0.02, tv


@pytest.mark.slow
def test_sams_moves_alone_match_exact_posterior():
    """Without the Gibbs sweep, a wrong Hastings ratio could not hide behind it.

    Slow: the default run keeps the same moves alone on Gaussian data under the Pitman-Yor
    and MFM priors (test_priors.py::test_merge_split_moves_alone_match_the_exact_posterior)
    and Gibbs+SAMS under the Dirichlet process for both families (above)."""
    tv = tv_to_exact(GibbsSAMS(gibbs=None, n_proposals=3), "gaussian", 5, 40_000, seed=10)
    assert tv < 0.02, tv


@pytest.mark.slow
def test_sams_moves_alone_match_exact_posterior_multinomial():
    tv = tv_to_exact(GibbsSAMS(gibbs=None, n_proposals=3), "multinomial", 5, 120_000, seed=10)
    assert tv < 0.015, tv


def test_sams_splits_what_gibbs_cannot():
    """Documents of four topics from one cluster: single-point Gibbs stays stuck with
    merged topics, the merge-split moves separate them."""
    X, y = make_documents(n_docs=300, n_topics=4, vocab_size=150, random_state=2)
    m = DPMixture(family="multinomial", sampler=GibbsSAMS(n_proposals=5), n_iter=60,
                  init_clusters=1, random_state=0, n_chains=1).fit(X)
    assert m.trace_.n_accepted_splits.sum() >= 1
    assert nmi(m.labels_, y) > 0.95
    stuck = DPMixture(family="multinomial", n_iter=60, init_clusters=1, random_state=0,
                      n_chains=1).fit(X)
    assert nmi(stuck.labels_, y) < 0.9


def test_n_proposals_is_validated():
    with pytest.raises(ValueError, match="n_proposals"):
        GibbsSAMS(n_proposals=-1)
    assert GibbsSAMS().name == "gibbs+sams"
