"""Fused clusters (FOLD, Dombowsky & Dunson 2024): the families' Hellinger distances against
integrals and sums done the long way."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpclust.families import DirichletMultinomial, GeneralizedMallows, NormalInverseWishart
from dpclust.families.base import ConjugateFamily
from dpclust.families.gaussian import GaussianParams
from dpclust.families.mallows import MallowsParams, log_gm
from dpclust.families.multinomial import MultinomialParams
from dpclust.families._mallows_hellinger import gm_hellinger
from dpclust.rankings import Rankings


# ------------------------------------------------------------------ Hellinger per family
def _gauss(mean, cov):
    mean, cov = np.asarray(mean, float), np.asarray(cov, float)
    return GaussianParams(mean, cov, np.linalg.cholesky(cov))


def test_gaussian_hellinger_1d_matches_quadrature():
    p = _gauss([[0.0], [1.3], [5.0], [0.1]], [[[1.0]], [[2.5]], [[0.3]], [[1.0]]])
    H = NormalInverseWishart().hellinger(p)
    for a, b in itertools.combinations(range(4), 2):
        fa = stats.norm(p.mean[a, 0], math.sqrt(p.cov[a, 0, 0])).pdf
        fb = stats.norm(p.mean[b, 0], math.sqrt(p.cov[b, 0, 0])).pdf
        h2, _ = integrate.quad(lambda x: 0.5 * (math.sqrt(fa(x)) - math.sqrt(fb(x))) ** 2,
                               -30, 30, points=[0.0, 1.3, 5.0], limit=200)
        assert H[a, b] == pytest.approx(math.sqrt(h2), abs=1e-7)
    assert np.allclose(H, H.T) and np.all(np.diag(H) == 0)
    assert 0 < H[0, 3] < 0.05  # close components: exact near 0, no cancellation to 0


def test_gaussian_hellinger_2d_matches_grid_integral():
    p = _gauss([[0.0, 0.0], [1.0, -0.5], [0.3, 2.0]],
               [[[1.0, 0.3], [0.3, 0.5]], [[0.6, -0.2], [-0.2, 1.2]], [[2.0, 0.0], [0.0, 0.3]]])
    H = NormalInverseWishart().hellinger(p)
    g = np.linspace(-9, 9, 721)  # a Riemann sum of a smooth, fast-decaying integrand
    xx, yy = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
    dens = [stats.multivariate_normal(p.mean[k], p.cov[k]).pdf(pts) for k in range(3)]
    step = (g[1] - g[0]) ** 2
    for a, b in itertools.combinations(range(3), 2):
        bc = np.sum(np.sqrt(dens[a] * dens[b])) * step
        assert H[a, b] == pytest.approx(math.sqrt(1 - bc), abs=1e-5)


def test_multinomial_hellinger_is_that_of_the_word_distributions():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(7), size=4)
    probs[3] = probs[0] * 1.0001
    probs[3] /= probs[3].sum()
    H = DirichletMultinomial().hellinger(MultinomialParams(np.log(probs) + 3.0))  # unnormalised
    for a, b in itertools.combinations(range(4), 2):
        direct = math.sqrt(0.5 * sum((math.sqrt(p) - math.sqrt(q)) ** 2
                                     for p, q in zip(probs[a], probs[b])))
        assert H[a, b] == pytest.approx(direct, rel=1e-9, abs=1e-12)
    assert np.allclose(H, H.T) and np.all(np.diag(H) == 0)


@pytest.fixture(scope="module")
def mallows4():
    fam = GeneralizedMallows(n_items=4).resolve(Rankings([[0, 1, 2], [1, 0, 3]], 4))
    params = MallowsParams(np.array([[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [0, 1, 3, 2]]),
                           np.array([[1.0, 0.5, 0.2], [0.7, 0.7, 0.7], [2.0, 1.0, 0.1],
                                     [0.3, 0.2, 0.1]]))
    return fam, params


def _enumerated_hellinger(params, t):
    """sqrt(1 - sum_pi sqrt(p(pi) q(pi))) over the 4!/(4-t)! top-t rankings, by log_gm."""
    perms = list(itertools.permutations(range(4), t))
    logp = np.array([[log_gm(pi, params.order[k], params.theta[k]) for k in range(4)]
                     for pi in perms])
    assert np.allclose(np.exp(logp).sum(axis=0), 1.0)  # each is a distribution over them
    bc = np.exp(0.5 * (logp[:, :, None] + logp[:, None, :])).sum(axis=0)
    out = np.sqrt(np.clip(1 - bc, 0, 1))
    np.fill_diagonal(out, 0)
    return out


def test_mallows_hellinger_sums_over_the_top_t_rankings(mallows4):
    fam, params = mallows4
    assert np.allclose(fam.hellinger(params), _enumerated_hellinger(params, 3), atol=1e-7)
    short = fam.hellinger(params, length=1)
    assert np.allclose(short, _enumerated_hellinger(params, 1), atol=1e-7)
    assert np.all(short <= fam.hellinger(params) + 1e-12)  # fewer ranks tell less apart


def test_mallows_hellinger_monte_carlo_agrees_with_enumeration(mallows4):
    fam, params = mallows4
    exact = _enumerated_hellinger(params, 3)
    mc = gm_hellinger(fam, params, max_enumerated=0, n_samples=4000,
                      rng=np.random.default_rng(0))
    assert np.allclose(mc, mc.T) and np.all(np.diag(mc) == 0)
    assert np.max(np.abs(mc - exact)) < 0.03
    again = gm_hellinger(fam, params, max_enumerated=0, n_samples=4000,
                         rng=np.random.default_rng(0))
    assert np.array_equal(mc, again)  # a fixed stream: the same estimate


def test_a_family_without_hellinger_says_so():
    class NoDistance(NormalInverseWishart):
        hellinger = ConjugateFamily.hellinger

    with pytest.raises(NotImplementedError, match="hellinger"):
        NoDistance().hellinger(_gauss([[0.0]], [[[1.0]]]))
