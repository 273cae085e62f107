"""Samplers against exact posteriors over partitions of a handful of points (ALGORITHMS.md §6).

The default run keeps one fast case per sampler × family (5 points, 40,000 steps, TV < 0.02);
the ``slow`` marker runs 200,000-step chains on 6 points (203 partitions) with TV < 0.015
(``make test-slow``, about ten minutes).  At these lengths the distance is Monte Carlo noise:
it falls as one over the square root of the chain length.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad

from dpclust.exact import (exact_posterior, partition_frequencies, set_partitions,
                           total_variation)
from split_chains import run_chain
from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.samplers import (CollapsedGibbs, ExplicitGibbs, FiniteSymmetricDirichlet,
                              GammaPrior, MixtureModel, crp_log_prior,
                              finite_dirichlet_log_prior)

X_GAUSS = np.array([[0.0, 0.0], [0.4, 0.1], [1.5, 1.2], [1.8, 1.4], [0.9, 0.8], [2.6, 0.2]])
X_DOCS = np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2], [1, 1, 1, 1],
                   [4, 0, 0, 1]], dtype=float)


def gaussian_family(X):
    return NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=4.0, scale=np.eye(2)).resolve(X)


def multinomial_family(X):
    return DirichletMultinomial(concentration=0.7).resolve(sp.csr_matrix(X))


FAMILIES = {
    "gaussian": (gaussian_family, lambda X: X),
    "multinomial": (multinomial_family, lambda X: sp.csr_matrix(X)),
}


def tv_to_exact(sampler, family_name, n_points, n_steps, alpha=1.0, seed=0, log_prior=None,
                alpha_prior=None, init_clusters=1):
    make_family, prep = FAMILIES[family_name]
    raw = (X_DOCS if family_name == "multinomial" else X_GAUSS)[:n_points]
    X = prep(raw)
    fam = make_family(raw)
    parts, exact = exact_posterior(fam, X, alpha if log_prior is None else log_prior)
    model = MixtureModel(fam, X, alpha_prior)
    draws = run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=200,
                      init_kwargs={"alpha": alpha, "n_clusters": init_clusters})
    freq = partition_frequencies(draws, parts)
    # the posterior must be spread out, or the test proves little
    assert exact.max() < 0.6
    return total_variation(freq, exact)


# ------------------------------------------------------------------ fast (default run)
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_collapsed_gibbs_matches_exact_posterior(family):
    tv = tv_to_exact(CollapsedGibbs(), family, 5, 40_000)
    assert tv < 0.02, tv


# slow (14 s and 18 s): the default run keeps explicit Gibbs on Gaussian data under the
# Pitman-Yor prior and on documents under the MFM (test_priors.py)
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_explicit_gibbs_matches_exact_posterior(family):
    tv = tv_to_exact(ExplicitGibbs(), family, 5, 40_000, seed=1)
    assert tv < 0.02, tv


# slow (10 s and 11 s): the default run keeps FSD on Gaussian data in test_priors.py
# (test_fsd_sampler_matches_the_exact_posterior_of_its_finite_prior)
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_fsd_matches_finite_mixture_posterior(family):
    k = 3
    tv = tv_to_exact(FiniteSymmetricDirichlet(n_components=k), family, 5, 40_000, alpha=1.5,
                     seed=2, log_prior=lambda sizes: finite_dirichlet_log_prior(sizes, 1.5, k))
    assert tv < 0.02, tv


def gamma_mixed_crp_prior(shape, rate):
    """log of ∫ p(partition | alpha) Gamma(alpha; shape, rate) d alpha, by quadrature."""
    prior = GammaPrior(shape, rate)

    def log_prior(sizes):
        sizes = np.asarray(sizes)
        sizes = sizes[sizes > 0]

        def integrand(a):
            return math.exp(crp_log_prior(sizes, a) + prior.log_pdf(a))

        value, _ = quad(integrand, 0, np.inf, limit=200)
        return math.log(value)

    return log_prior


def test_collapsed_gibbs_with_alpha_resampling_matches_exact():
    prior = GammaPrior(2.0, 2.0)
    tv = tv_to_exact(CollapsedGibbs(), "gaussian", 5, 40_000, alpha=prior.start, seed=3,
                     log_prior=gamma_mixed_crp_prior(2.0, 2.0), alpha_prior=prior)
    assert tv < 0.02, tv


def test_a_wrong_new_cluster_term_is_detected():
    """The test has power: the CRP posterior under alpha = 1 is far from alpha = 3."""
    fam = gaussian_family(X_GAUSS[:5])
    parts, exact1 = exact_posterior(fam, X_GAUSS[:5], 1.0)
    _, exact3 = exact_posterior(fam, X_GAUSS[:5], 3.0)
    assert total_variation(exact1, exact3) > 0.1
    model = MixtureModel(fam, X_GAUSS[:5])
    draws = run_chain(CollapsedGibbs(), model, np.random.default_rng(0), 5000, burn_in=100,
                      init_kwargs={"alpha": 3.0})
    assert total_variation(partition_frequencies(draws, parts), exact1) > 0.05


# --------------------------------------------------------------------- slow versions
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
@pytest.mark.parametrize("sampler", ["gibbs", "explicit", "fsd"])
def test_samplers_on_six_points(sampler, family):
    if sampler == "gibbs":
        tv = tv_to_exact(CollapsedGibbs(), family, 6, 200_000, alpha=0.8, seed=11)
    elif sampler == "explicit":
        tv = tv_to_exact(ExplicitGibbs(), family, 6, 200_000, alpha=0.8, seed=12)
    else:
        tv = tv_to_exact(FiniteSymmetricDirichlet(n_components=4), family, 6, 200_000,
                         alpha=2.0, seed=13,
                         log_prior=lambda s: finite_dirichlet_log_prior(s, 2.0, 4))
    assert tv < 0.015, tv


@pytest.mark.slow
def test_alpha_resampling_on_six_points_multinomial():
    prior = GammaPrior(1.0, 0.5)
    tv = tv_to_exact(CollapsedGibbs(), "multinomial", 6, 200_000, alpha=prior.start, seed=14,
                     log_prior=gamma_mixed_crp_prior(1.0, 0.5), alpha_prior=prior)
    assert tv < 0.015, tv


# ------------------------------------------------------------------- sampler mechanics
def test_set_partitions_counts_bell_numbers():
    assert [len(set_partitions(n)) for n in range(1, 7)] == [1, 2, 5, 15, 52, 203]


@pytest.mark.parametrize("sampler", [CollapsedGibbs(), ExplicitGibbs(),
                                     FiniteSymmetricDirichlet(n_components=30)])
def test_step_is_pure_and_reproducible(sampler):
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 0.3, (40, 2)), rng.normal(4, 0.3, (40, 2))])
    fam = NormalInverseWishart().resolve(X)
    model = MixtureModel(fam, X)
    state = sampler.init(np.random.default_rng(1), model, n_clusters=3)
    before = state.labels.copy()
    s1, i1 = sampler.step(np.random.default_rng(5), state, model)
    s2, i2 = sampler.step(np.random.default_rng(5), state, model)
    np.testing.assert_array_equal(state.labels, before)
    np.testing.assert_array_equal(s1.labels, s2.labels)
    assert i1 == i2
    # canonical labels 0..K-1 by first appearance
    labels = s1.labels
    firsts = [int(np.flatnonzero(labels == k)[0]) for k in range(labels.max() + 1)]
    assert firsts == sorted(firsts)
    assert i1.n_clusters == labels.max() + 1


def test_collapsed_gibbs_grows_capacity_from_all_singletons():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    fam = NormalInverseWishart().resolve(X)
    model = MixtureModel(fam, X)
    sampler = CollapsedGibbs()
    state = sampler.init(rng, model, labels=np.arange(300), alpha=50.0)
    for _ in range(3):
        state, info = sampler.step(rng, state, model)
    assert 1 <= info.n_clusters <= 300
    # the log joint reported by the kernels equals the NumPy face's
    assert info.log_joint == pytest.approx(model.log_joint_reference(state.labels, state.alpha),
                                          rel=1e-9)


def test_collapsed_log_joint_stays_exact_across_cached_steps():
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(0, 1, (200, 3)), rng.normal(6, 1, (200, 3))])
    fam = NormalInverseWishart().resolve(X)
    model = MixtureModel(fam, X)
    sampler = CollapsedGibbs(rebuild_every=1000)
    state = sampler.init(rng, model)
    for _ in range(30):
        state, info = sampler.step(rng, state, model)
    assert info.log_joint == pytest.approx(model.log_joint_reference(state.labels, state.alpha),
                                          rel=1e-8)
