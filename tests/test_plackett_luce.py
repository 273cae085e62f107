"""The maths of Plackett–Luce components against quadrature over the simplex.

The reference integrates over ``p ~ Dir(a)`` by a tensor Gauss–Jacobi rule in the
stick-breaking coordinates ``V_k ~ Beta(a, (n - k - 1) a)`` (written here, independently of
:mod:`dpclust.families._plackett_luce`); the likelihood of a ranking is a product of
ratios, so the rule is exact to about 1e-10 for 3 items.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import gammaln, roots_jacobi

from dpclust.families import _plackett_luce as pl


def _simplex_rule(n: int, a: float, N: int = 60):
    """Nodes ``p`` (M, n) and weights (M,) of ``E_{p ~ Dir(a)}``."""
    sticks = []
    for k in range(n - 1):
        alpha, beta = a, (n - k - 1) * a
        x, w = roots_jacobi(N, beta - 1.0, alpha - 1.0)  # (1-x)^(beta-1) (1+x)^(alpha-1)
        sticks.append(((1.0 + x) / 2.0, w / w.sum()))
    nodes, weights = [], []
    for combo in itertools.product(*[range(N)] * (n - 1)):
        v = [sticks[k][0][i] for k, i in enumerate(combo)]
        rest, p = 1.0, []
        for vk in v:
            p.append(rest * vk)
            rest *= 1.0 - vk
        p.append(rest)
        nodes.append(p)
        weights.append(np.prod([sticks[k][1][i] for k, i in enumerate(combo)]))
    return np.array(nodes), np.array(weights)


def _pl(ranking, p):
    """``PL(ranking | p)`` for each row of ``p``, written out stage by stage."""
    out = np.ones(len(p))
    left = np.ones(len(p))
    for j in ranking:
        out *= p[:, j] / left
        left = left - p[:, j]
    return out


def _padded(rankings):
    T = max(len(r) for r in rankings)
    orders = np.full((len(rankings), T), -1, dtype=np.int64)
    for i, r in enumerate(rankings):
        orders[i, :len(r)] = r
    return orders, np.array([len(r) for r in rankings], dtype=np.int64)


def test_probabilities_of_all_top_t_rankings_sum_to_one():
    rng = np.random.default_rng(0)
    log_p = np.log(rng.dirichlet(np.ones(4), size=3))
    for t in (1, 2, 3):
        rankings = list(itertools.permutations(range(4), t))
        orders, lengths = _padded(rankings)
        L = pl.log_likelihood(orders, lengths, log_p)
        assert L.shape == (len(rankings), 3)
        np.testing.assert_allclose(np.exp(L).sum(axis=0), 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.exp(L[:, 0]),
                                   [_pl(r, np.exp(log_p[:1]))[0] for r in rankings],
                                   rtol=1e-12)


@pytest.mark.parametrize("a", [0.3, 1.0, 3.0])
def test_one_ranking_has_prior_probability_n_minus_t_factorial_over_n_factorial(a):
    # (the factor 1 / (1 - p_first) makes the rule converge slowly for small a: 2e-6 at
    # a = 0.3 with 200 nodes a stick)
    from dpclust.families import PlackettLuce
    from dpclust.rankings import Rankings

    nodes, weights = _simplex_rule(3, a, N=200)
    X = Rankings([[2, -1], [1, 0], [0, 2]], 3)
    fam = PlackettLuce(worth_shape=a).resolve(X)
    for i, ranking in enumerate(([2], [1, 0], [0, 2])):
        exact = weights @ _pl(ranking, nodes)
        assert np.exp(fam.log_prior_predictive(X))[i] == pytest.approx(exact, rel=1e-5)
    four = PlackettLuce().resolve(Rankings([[0, 1]], 4))
    assert four.log_prior_predictive(Rankings([[3, 1]], 4))[0] == pytest.approx(-np.log(12.0))


def _posterior_moments(rankings, counts, a, n=3):
    nodes, weights = _simplex_rule(n, a)
    like = np.ones(len(nodes))
    for r, c in zip(rankings, counts):
        like *= _pl(r, nodes) ** c
    post = weights * like
    post /= post.sum()
    return post @ nodes, post @ nodes ** 2


def test_draw_given_one_ranking_is_exact():
    a = 0.7
    rng = np.random.default_rng(1)
    draws = np.exp(np.array([pl.draw_given_one(rng, [2, 0], 3, a) for _ in range(40_000)]))
    m1, m2 = _posterior_moments([[2, 0]], [1], a)
    se1 = draws.std(axis=0) / np.sqrt(len(draws))
    se2 = (draws ** 2).std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - m1) < 4 * se1), (draws.mean(axis=0), m1)
    assert np.all(np.abs((draws ** 2).mean(axis=0) - m2) < 4 * se2)


class _FixedScale:
    """An rng whose scalar Gamma draw (the round's scale) is a fixed 0.001: the kernel that
    normalises inside the loop without redrawing the scale (at a vanishing Gamma rate)."""

    def __init__(self, rng):
        self._rng = rng

    def standard_gamma(self, shape, size=None):
        if size is not None:  # the clusters' scales
            return np.full(size, 1e-3)
        return self._rng.standard_gamma(shape)

    def random(self, *args):
        return self._rng.random(*args)


def _kernel_means(rng, rankings, counts, a, n_rounds):
    orders, lengths = _padded(rankings)
    log_p = np.log(np.full(3, 1.0 / 3.0))
    draws = np.empty((n_rounds, 3))
    for i in range(n_rounds):
        log_p = pl.cluster_round(rng, orders, lengths, counts, log_p, a)
        draws[i] = np.exp(log_p)
    draws = draws[1000:]
    batches = draws.reshape(50, -1, 3).mean(axis=1)  # batch means for the Monte Carlo error
    return draws.mean(axis=0), batches.std(axis=0, ddof=1) / np.sqrt(len(batches))


def test_cluster_round_keeps_the_posterior_of_the_worths():
    # repeated and partial ballots: counts enter through Gamma(c_d, .) latents
    rankings, counts, a = [[0, 1], [0, 2], [1], [2, 1]], np.array([3.0, 1.0, 2.0, 1.0]), 0.5
    exact, _ = _posterior_moments(rankings, counts, a)
    mean, se = _kernel_means(np.random.default_rng(2), rankings, counts, a, 21_000)
    assert np.all(np.abs(mean - exact) < 4 * se), (mean, exact, se)
    # without the scale's draw the kernel keeps another distribution (the test has power)
    bad, se_bad = _kernel_means(_FixedScale(np.random.default_rng(2)), rankings, counts, a,
                                21_000)
    assert np.max(np.abs(bad - exact) / se_bad) > 8, (bad, exact, se_bad)


def test_dirichlet_density_matches_scipy():
    from scipy.stats import dirichlet

    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    for a in (0.5, 2.0):
        np.testing.assert_allclose(pl.log_dirichlet_density(np.log(p), a),
                                   [dirichlet.logpdf(row, [a] * 3) for row in p])
    assert gammaln(1.0) == 0.0


def test_soft_proposal_is_a_normalised_density_and_its_draws_follow_it():
    rankings, w = [[0, 1], [0, 2], [1], [2, 1]], np.array([3.0, 1.0, 2.0, 1.0])
    orders, lengths = _padded(rankings)
    alpha, rate = pl.soft_gamma_params(orders, lengths, w, np.log([0.5, 0.3, 0.2]), 0.5)
    # item 0 chosen 3 + 1 times, item 1 3 + 2 + 1, item 2 1 + 1
    np.testing.assert_allclose(alpha, 0.5 + np.array([4.0, 6.0, 2.0]))
    p0 = np.array([0.5, 0.3, 0.2])
    naive = np.full(3, 3 * 0.5)  # n a, then the expected latents where each item was available
    for r, wd in zip(rankings, w):
        avail, left = set(range(3)), 1.0
        for j in r:
            for k in avail:
                naive[k] += wd / left
            avail.discard(j)
            left -= p0[j]
    np.testing.assert_allclose(rate, naive, rtol=1e-12)
    # the density against the Dir(1) rule (weights 2 per unit area): it integrates to 1
    nodes, weights = _simplex_rule(3, 1.0, N=120)
    dens = np.exp([pl.scaled_dirichlet_log_density(np.log(p), alpha, rate) for p in nodes])
    assert (weights * dens).sum() / 2.0 == pytest.approx(1.0, rel=1e-6)
    mean = (weights * dens) @ nodes / 2.0
    rng = np.random.default_rng(3)
    draws = np.exp(np.array([pl.scaled_dirichlet_draw(rng, alpha, rate)
                             for _ in range(20_000)]))
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4 * se), (draws.mean(axis=0), mean)
    # a smaller kappa widens it
    a2, r2 = pl.soft_gamma_params(orders, lengths, w, np.log([0.5, 0.3, 0.2]), 0.5, kappa=0.3)
    np.testing.assert_allclose(a2, 0.3 * alpha) and np.testing.assert_allclose(r2, 0.3 * rate)
