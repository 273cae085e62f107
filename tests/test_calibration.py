"""Simulation-based calibration (:mod:`dpclust.calibration`): the machinery on small runs
(fast), and calibrated samplers passing where a biased one fails (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.samplers import CollapsedGibbs, GibbsSAMS, SubclusterSplitMerge
from dpclust.samplers.crp import GammaPrior
from dpclust.calibration import crp_partition, prior_draw, simulation_based_calibration


def gaussian():
    return NormalInverseWishart(mean=np.zeros(2), kappa=0.1, dof=4.0,
                                scale=np.eye(2)).resolve(np.zeros((3, 2)))


def test_crp_partition_matches_the_expected_number_of_clusters():
    rng = np.random.default_rng(0)
    alpha, n = 2.0, 30
    ks = [len(np.unique(crp_partition(rng, n, alpha))) for _ in range(2000)]
    expected = sum(alpha / (alpha + i) for i in range(n))
    assert np.mean(ks) == pytest.approx(expected, abs=0.15)


def test_prior_draw_shapes_and_alpha_prior():
    rng = np.random.default_rng(1)
    a, z, params, X = prior_draw(gaussian(), 40, GammaPrior(2.0, 1.0), rng)
    assert a > 0 and z.shape == (40,) and X.shape == (40, 2)
    assert len(params.mean) == z.max() + 1


def test_ranks_are_reproducible_whatever_the_processes():
    kw = dict(n_samples=12, n_replicates=8, n_draws=9, thin=2, burn_in=10, n_bins=5,
              random_state=3)
    a = simulation_based_calibration(gaussian(), CollapsedGibbs(), **kw)
    b = simulation_based_calibration(gaussian(), CollapsedGibbs(), **kw, n_jobs=2)
    assert set(a.ranks) == {"n_clusters", "size_entropy", "co_clustering", "log_likelihood"}
    for name in a.ranks:
        np.testing.assert_array_equal(a.ranks[name], b.ranks[name])
        assert ((0 <= a.ranks[name]) & (a.ranks[name] <= 9)).all()
        assert a.histogram(name).sum() == 8
    assert set(a.p_values) == set(a.ranks)
    with pytest.raises(ValueError, match="n_bins"):
        simulation_based_calibration(gaussian(), CollapsedGibbs(), n_draws=3, n_bins=10)


def test_rank_plot(tmp_path):
    r = simulation_based_calibration(gaussian(), CollapsedGibbs(), n_samples=10,
                                     n_replicates=10, n_draws=9, thin=1, burn_in=5,
                                     n_bins=5, random_state=0)
    r.plot(tmp_path / "ranks.png", title="collapsed Gibbs")
    assert (tmp_path / "ranks.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.parametrize("sampler", [CollapsedGibbs(), GibbsSAMS(), SubclusterSplitMerge()],
                         ids=["gibbs", "gibbs+sams", "subcluster"])
def test_exact_samplers_are_calibrated(sampler):
    """200 data sets of 20 points from the prior: ranks uniform (p > 0.001) for every
    statistic."""
    r = simulation_based_calibration(gaussian(), sampler, n_samples=20, n_replicates=200,
                                     n_draws=19, thin=3, burn_in=50, n_bins=5,
                                     random_state=11, n_jobs=2)
    assert r.calibrated(0.001), r.p_values


def test_prior_draws_follow_another_partition_prior():
    """With prior=, the partitions of the calibration's data sets come from that prior."""
    from dpclust.priors import PitmanYor

    rng = np.random.default_rng(4)
    py = PitmanYor(0.5, 1.0)
    ks = [len(np.unique(prior_draw(gaussian(), 30, 1.0, rng, prior=py)[1])) for _ in range(800)]
    # E[K_n] = (s / d) [Gamma(s + 1) Gamma(s + d + n) / (Gamma(s + d) Gamma(s + n)) - 1]
    from math import lgamma, exp
    s, d, n = 1.0, 0.5, 30
    expected = s / d * (exp(lgamma(s + 1) + lgamma(s + d + n) - lgamma(s + d) - lgamma(s + n))
                        - 1)
    assert np.mean(ks) == pytest.approx(expected, abs=0.3)


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["pitman-yor:0.4,0.8", "mfm:1,poisson:2"])
@pytest.mark.parametrize("sampler", [CollapsedGibbs(), GibbsSAMS(), SubclusterSplitMerge()],
                         ids=["gibbs", "gibbs+sams", "subcluster"])
def test_other_priors_are_calibrated(sampler, prior):
    """200 data sets of 20 points drawn under Pitman–Yor and MFM priors: ranks uniform."""
    r = simulation_based_calibration(gaussian(), sampler, n_samples=20, n_replicates=200,
                                     n_draws=19, thin=3, burn_in=50, n_bins=5, prior=prior,
                                     random_state=13, n_jobs=2)
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_the_subcluster_sampler_is_calibrated_under_a_finite_prior():
    """The sub-cluster sampler under the finite Dirichlet (its splits stop at the prior's
    number of components): 200 data sets of 20 points drawn under that prior.  Its chains
    from one cluster need longer than the other priors' (no multi-way moves, and at most
    four clusters): with 50 iterations of burn-in and a thinning of 3 the number of
    clusters' ranks pile up at both ends (p = 0.0001), with 300 and 15 they are uniform
    (p = 0.94; every statistic p > 0.25), while Gibbs+SAMS passes at the short length."""
    r = simulation_based_calibration(gaussian(), SubclusterSplitMerge(), n_samples=20,
                                     n_replicates=200, n_draws=19, thin=15, burn_in=300,
                                     n_bins=5, prior="finite:4,2", random_state=17, n_jobs=2)
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_documents_and_a_gamma_prior_are_calibrated():
    fam = DirichletMultinomial(concentration=0.5).resolve(np.ones((2, 6)))
    r = simulation_based_calibration(fam, CollapsedGibbs(), n_samples=20, n_replicates=200,
                                     n_draws=19, thin=3, burn_in=50, n_bins=5,
                                     alpha=GammaPrior(2.0, 2.0), random_state=12, n_jobs=2)
    assert "alpha" in r.ranks
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_the_papers_approximate_moves_fail_calibration():
    """The power of the test: the paper's sub-cluster moves lose clusters, and the truth's
    number of clusters ranks high."""
    r = simulation_based_calibration(gaussian(), SubclusterSplitMerge.approximate(),
                                     n_samples=20, n_replicates=100, n_draws=19, thin=3,
                                     burn_in=50, n_bins=5, random_state=0, n_jobs=2)
    assert r.p_values["n_clusters"] < 1e-6
    assert r.histogram("n_clusters")[-1] > 2 * r.histogram("n_clusters")[0]


@pytest.mark.slow
def test_the_ddcrp_sampler_is_calibrated():
    """Links from the ddCRP prior (a window decay over positions), tables as clusters."""
    from dpclust.ddcrp import DDCRPGibbs, Window, link_candidates

    n = 20
    cands = link_candidates(Window(3.0), n=n, positions=np.arange(n, dtype=float))
    r = simulation_based_calibration(gaussian(), DDCRPGibbs(), n_samples=n, n_replicates=200,
                                     n_draws=19, thin=3, burn_in=50, n_bins=5,
                                     random_state=13, n_jobs=2, candidates=cands)
    assert r.calibrated(0.001), r.p_values
    with pytest.raises(ValueError, match="customers"):
        simulation_based_calibration(gaussian(), DDCRPGibbs(), n_samples=n + 1,
                                     candidates=cands)
