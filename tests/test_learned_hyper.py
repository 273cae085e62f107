"""Learned hyperparameters of a family: exact against the enumerated posterior.

A family hyperparameter given a :class:`~dpclust.priors.GammaPrior` is resampled after each
step by slice sampling on its conditional given the partition
(:mod:`dpclust.samplers.hyper`).  The chain of (partition, hyperparameter) must match the
posterior of five points with the hyperparameter integrated out numerically (total
variation over the 52 partitions) and the hyperparameter's own posterior (Kolmogorov
distance of its draws).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpclust import DPMixture
from dpclust.exact import (exact_learned_posterior, exact_posterior, kolmogorov_distance,
                           partition_frequencies, run_chain, total_variation)
from dpclust.families import DirichletMultinomial
from dpclust.samplers import CollapsedGibbs, GammaPrior, MixtureModel, SubclusterSplitMerge
from dpclust.samplers.hyper import slice_log

X_DOCS = sp.csr_matrix(np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2],
                                 [1, 1, 1, 1]], dtype=float))
PRIOR = GammaPrior(1.0, 10.0)  # the posterior of beta far from its prior mean


def documents():
    return DirichletMultinomial(concentration=PRIOR).resolve(X_DOCS)


def test_slice_sampler_draws_its_target():
    """The slice update alone leaves a known density invariant (a Gamma on log scale)."""
    rng = np.random.default_rng(0)
    prior = GammaPrior(3.0, 0.5)
    u, draws = 0.0, []
    for _ in range(20_000):
        u = slice_log(rng, lambda v: prior.log_pdf(np.exp(v)) + v, u)
        draws.append(np.exp(u))
    from scipy import stats

    assert stats.kstest(draws[::5], stats.gamma(3.0, scale=2.0).cdf).statistic < 0.03


def test_the_learned_posterior_differs_from_the_fixed_one():
    """The test has power: integrating beta out moves the partition posterior."""
    parts, learned, grid, cdf = exact_learned_posterior(documents(), X_DOCS, 1.0)
    _, fixed = exact_posterior(
        DirichletMultinomial(concentration=PRIOR.start).resolve(X_DOCS), X_DOCS, 1.0)
    assert total_variation(learned, fixed) > 0.15
    assert learned.max() < 0.6
    # and beta's posterior is far from its prior (draws of the prior fail the test)
    prior_draws = np.random.default_rng(0).gamma(PRIOR.shape, 1 / PRIOR.rate, 5000)
    assert kolmogorov_distance(prior_draws, grid, cdf) > 0.2


@pytest.mark.parametrize("sampler, steps", [(CollapsedGibbs(), 20_000),
                                            (SubclusterSplitMerge(), 10_000)])
def test_learned_concentration_matches_exact(sampler, steps):
    fam = documents()
    parts, exact, grid, cdf = exact_learned_posterior(fam, X_DOCS, 1.0)
    draws, hyper = run_chain(sampler, MixtureModel(fam, X_DOCS), np.random.default_rng(0),
                             steps, burn_in=200, init_kwargs={"alpha": 1.0})
    tv = total_variation(partition_frequencies(draws, parts), exact)
    ks = kolmogorov_distance(hyper[:, 0], grid, cdf)
    assert tv < 0.04, tv
    assert ks < 0.05, ks
