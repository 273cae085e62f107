"""Collapsed Gibbs with Dahl's merge-split moves against exact posteriors (ALGORITHMS.md §6)."""

import pytest
from test_samplers_exact import tv_to_exact

from dpclust import DPMixture
from dpclust.datasets import make_documents
from dpclust.metrics import nmi
from dpclust.samplers import GibbsSAMS


# the Gaussian case is slow (12 s): the default run keeps the documents'.  One proposal a
# sweep, the sampler's own default (the table families' ten repeat the same move; ten would
# take 40 s here)
@pytest.mark.parametrize("family", [pytest.param("gaussian", marks=pytest.mark.slow),
                                    "multinomial"])
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


def test_reallocations_match_exact_posterior():
    """Reallocations (points moved between two clusters by one sequential allocation)
    beside one SAMS proposal and no Gibbs sweep, so that a wrong reallocation ratio could
    not hide behind the sweep: three reallocations for each proposal."""
    sampler = GibbsSAMS(gibbs=None, n_proposals=1, n_reallocations=3)
    tv = tv_to_exact(sampler, "multinomial", 5, 40_000, seed=11)
    assert tv < 0.02, tv


def test_sams_splits_what_gibbs_cannot():
    """Documents of four topics from one cluster: single-point Gibbs stays stuck with
    merged topics, the merge-split moves separate them."""
    from dpclust.families import DirichletMultinomial

    X, y = make_documents(n_docs=300, n_topics=4, vocab_size=150, random_state=2)
    fixed = DirichletMultinomial(concentration=1.0)  # learned, it moves Gibbs out (NMI 1)
    m = DPMixture(family=fixed, sampler=GibbsSAMS(n_proposals=5), n_iter=60,
                  init_clusters=1, random_state=0, n_chains=1).fit(X)
    assert m.trace_.n_accepted_splits.sum() >= 1
    assert nmi(m.labels_, y) > 0.95
    stuck = DPMixture(family=fixed, sampler="gibbs", n_iter=60, init_clusters=1,
                      random_state=0, n_chains=1).fit(X)
    assert nmi(stuck.labels_, y) < 0.9


def test_n_proposals_is_validated():
    with pytest.raises(ValueError, match="n_proposals"):
        GibbsSAMS(n_proposals=-1)
    with pytest.raises(ValueError, match="n_reallocations"):
        GibbsSAMS(n_reallocations=-2)
    assert GibbsSAMS().name == "gibbs+sams"


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_split_log_marginals_entry_point_and_generic_kernel_agree(family):
    """The move's three marginals (``MixtureModel.log_split_ratio``) from the family's
    cached entry point and from the generic kernel a family without one runs, against
    the family's NumPy face."""
    import numpy as np

    from dpclust.datasets import make_gaussian_mixture
    from dpclust.kernels import gibbs as generic
    from dpclust.kernels.gibbs import dispatch

    if family == "gaussian":
        X = make_gaussian_mixture(60, 2, random_state=0)[0]
    else:
        X = make_documents(60, 2, vocab_size=30, doc_length=20, random_state=0)[0]
    from dpclust.families import get_family
    from dpclust.samplers.base import MixtureModel

    fam = get_family(family)
    Xv = fam.validate(X)
    fam = fam.resolve(Xv)
    model = MixtureModel(fam, Xv, None)
    kern = model.kernel
    left, right = np.arange(0, 25), np.arange(25, 60)
    fn, fns = dispatch(kern, "split_log_marginals")
    assert fns == ()  # the cached entry point
    got = np.empty(3)
    fn(kern.data, kern.alloc(3), kern.hyper, left, right, got)
    again = np.empty(3)
    generic.split_log_marginals(kern.data, kern.alloc(3), kern.hyper, left, right, again,
                                kern.reset, kern.add, kern.log_marginal)
    np.testing.assert_array_equal(got, again)
    labels = np.r_[np.zeros(25, int), np.ones(35, int)]
    stats = fam.stats(model.X, labels, 2)
    want = fam.log_marginal(stats)
    np.testing.assert_allclose(got[:2], want, rtol=1e-9)
    np.testing.assert_allclose(got[2], fam.log_marginal(fam.stats(model.X, labels * 0, 1))[0],
                               rtol=1e-9)
