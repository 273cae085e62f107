"""The coarsened-posterior sampler against exact answers on tiny data.

* ``zeta = 1``: the allocations it reports are draws of the finite mixture's posterior
  partition, which :func:`dpclust.exact.exact_posterior` enumerates;
* ``zeta < 1``: the coarsened posterior ``p(w) p(theta) prod_i (sum_k w_k f_ik)^zeta`` by
  self-normalised importance sampling from the prior (an independent implementation of the
  densities), through the distribution of the allocation partition and the posterior mean
  of the log-likelihood.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from dpclust.exact import exact_posterior, set_partitions, total_variation
from dpclust.families import (DirichletMultinomial, GeneralizedMallows, NormalInverseWishart,
                              PlackettLuce)
from dpclust.partitions import canonical_labels
from dpclust.priors import FiniteDirichlet
from dpclust.rankings import Rankings
from dpclust.samplers.base import MixtureModel
from dpclust.samplers.coarsened import CoarsenedMixture

K = 2
ALPHA = 1.0  # weights Dir(1/2, 1/2)


def _gaussian():
    X = np.array([[-1.1], [-0.7], [0.8], [1.6]])
    fam = NormalInverseWishart(mean=[0.0], kappa=1.0, dof=3.0, scale=[[1.0]]).resolve(X)
    return fam, X


def _multinomial():
    X = np.array([[3, 0, 1], [2, 1, 0], [0, 1, 3], [0, 3, 1]], dtype=np.float64)
    fam = DirichletMultinomial(concentration=1.0).resolve(X)
    return fam, X


def _mallows():
    X = Rankings([[0, 1, 2, 3], [0, 1, 3, 2], [3, 2, 1, 0], [2, 3, 0]], n_items=4)
    fam = GeneralizedMallows(nu=2.0, r=1.0).resolve(X)
    return fam, X


def _plackett_luce():
    X = Rankings([[0, 1, 2], [0, 1], [1, 0, 3], [3, 2]], n_items=4)
    fam = PlackettLuce(worth_shape=1.0).resolve(X)
    return fam, X


def _partition_index(draws):
    """Index of each draw's partition in ``set_partitions(n)``."""
    parts = set_partitions(draws.shape[1])
    lookup = {tuple(p): j for j, p in enumerate(parts)}
    return np.array([lookup[tuple(r)] for r in canonical_labels(draws)])


def _chain(fam, X, coarsening, n_steps, seed, burn_in=300, sampler=None, accepted=None):
    model = MixtureModel(fam, X, prior=FiniteDirichlet(K, ALPHA), coarsening=coarsening)
    sampler = sampler or CoarsenedMixture()
    rng = np.random.default_rng(seed)
    state = sampler.init(rng, model, n_clusters=2)
    labels, loglik = [], []
    for t in range(n_steps):
        state, info = sampler.step(rng, state, model)
        if accepted is not None:
            accepted += state.n_accepted
        if t >= burn_in:
            labels.append(state.labels)
            loglik.append(info.log_likelihood)
    return model, np.array(labels), np.array(loglik)


def _reference(fam, X, zeta, n_draws, seed):
    """Importance sampling from the prior: ``(partition probabilities, E[log-lik])``."""
    rng = np.random.default_rng(seed)
    params = fam.sample_prior(rng, n_draws * K)
    log_f = fam.log_likelihood(X, params).reshape(len(X), n_draws, K)  # (n, M, K)
    g = rng.standard_gamma(ALPHA / K, size=(n_draws, K))
    log_w = np.log(g) - np.log(g.sum(axis=1, keepdims=True))
    A = log_f + log_w[None]
    log_s = logsumexp(A, axis=2)  # (n, M)
    loglik = log_s.sum(axis=0)
    log_iw = zeta * loglik
    iw = np.exp(log_iw - log_iw.max())
    iw /= iw.sum()
    r = np.exp(A - log_s[:, :, None])  # responsibilities (n, M, K)
    n = len(X) if not hasattr(X, "orders") else len(X.orders)
    parts = set_partitions(n)
    lookup = {tuple(p): j for j, p in enumerate(parts)}
    probs = np.zeros(len(parts))
    for z in itertools.product(range(K), repeat=n):
        p = np.prod([r[i, :, z[i]] for i in range(n)], axis=0)
        probs[lookup[tuple(canonical_labels(np.array([z]))[0])]] += iw @ p
    return probs, float(iw @ loglik), 1.0 / float((iw ** 2).sum())


CASES = {"gaussian": _gaussian, "multinomial": _multinomial, "mallows": _mallows,
         "plackett-luce": _plackett_luce}


@pytest.mark.parametrize("name", ["gaussian",
                                  pytest.param("multinomial", marks=pytest.mark.slow),
                                  pytest.param("mallows", marks=pytest.mark.slow),
                                  pytest.param("plackett-luce", marks=pytest.mark.slow)])
def test_zeta_one_matches_enumeration(name):
    fam, X = CASES[name]()
    # a share of 0.1 sends the smaller component to the prior proposal now and then
    sampler = CoarsenedMixture(vacant_share=0.1) if name == "gaussian" else None
    _, labels, _ = _chain(fam, X, None, 4000, seed=1, sampler=sampler)
    _, exact = exact_posterior(fam, X, FiniteDirichlet(K, ALPHA)) if name != "mallows" \
        else (None, _reference(fam, X, 1.0, 200_000, seed=5)[0])
    freq = np.bincount(_partition_index(labels), minlength=len(exact)) / len(labels)
    assert total_variation(freq, exact) < 0.05


@pytest.mark.parametrize("name", [pytest.param("gaussian", marks=pytest.mark.slow),
                                  # slow: the families of rankings keep zeta < 1 in the
                                  # default run, the Gaussian zeta = 1
                                  pytest.param("multinomial", marks=pytest.mark.slow),
                                  # slow (16 s): Plackett-Luce, the rankings' default,
                                  # keeps the non-conjugate case in the default run
                                  pytest.param("mallows", marks=pytest.mark.slow),
                                  "plackett-luce"])
def test_coarsened_matches_importance_sampling(name):
    fam, X = CASES[name]()
    n = fam.n_points(X)
    coarsening = 1.0  # zeta = 1 / (1 + n) = 0.2
    accepted = np.zeros(6, dtype=np.int64)
    model, labels, loglik = _chain(fam, X, coarsening, 4000, seed=2, accepted=accepted)
    assert model.zeta == pytest.approx(1.0 / (1.0 + n))
    # every allocation-free move took part (1-3, 6 and 7; 4 is off below zeta = 0.3; 8
    # needs a vacant component, which a share of 1e-9 leaves rare at K = 2)
    assert accepted[0] == 0 and np.all(accepted[1:5] > 200), accepted
    probs, mean_loglik, ess = _reference(fam, X, model.zeta, 200_000, seed=3)
    assert ess > 5_000
    freq = np.bincount(_partition_index(labels), minlength=len(probs)) / len(labels)
    assert total_variation(freq, probs) < 0.05
    sd = loglik.std()
    assert abs(loglik.mean() - mean_loglik) < 0.15 * sd
    # the same chain without coarsening is told apart (the test has power)
    _, exact_lab, exact_ll = _chain(fam, X, None, 2000, seed=4)
    assert abs(exact_ll.mean() - mean_loglik) > 0.3 * sd


@pytest.mark.slow  # (60 s) move 8 is in the default run's enumeration and one-step tests
@pytest.mark.parametrize("name", ["gaussian", "multinomial"])
def test_merges_and_splits_keep_the_coarsened_posterior(name):
    """Move 8 (a merge or a split) in a whole chain at ``zeta = 0.2``: with a vacant share
    of 0.3 a component is vacant in a fair share of the states, the move is accepted
    thousands of times, and the chain's partitions and log-likelihood still match
    importance sampling."""
    fam, X = CASES[name]()
    accepted = np.zeros(6, dtype=np.int64)
    model, labels, loglik = _chain(fam, X, 1.0, 4000, seed=2, accepted=accepted,
                                   sampler=CoarsenedMixture(vacant_share=0.3))
    assert accepted[5] > 1000, accepted
    probs, mean_loglik, _ = _reference(fam, X, model.zeta, 200_000, seed=3)
    freq = np.bincount(_partition_index(labels), minlength=len(probs)) / len(labels)
    assert total_variation(freq, probs) < 0.05
    assert abs(loglik.mean() - mean_loglik) < 0.15 * loglik.std()


@pytest.mark.slow
def test_long_chain_agrees_with_fsd_on_overlapping_clusters():
    """``zeta = 1`` on 2,000 points in four overlapping clusters: the finite mixture's
    posterior number of clusters and co-clustering of fixed pairs as the blocked Gibbs
    sampler ``fsd`` (exact for the same finite prior) finds them."""
    from dpclust.datasets import make_gaussian_mixture
    from dpclust.samplers import FiniteSymmetricDirichlet

    X, _ = make_gaussian_mixture(n_samples=2000, n_clusters=4, separation=1.5,
                                 random_state=3)
    fam = NormalInverseWishart().resolve(X)
    model = MixtureModel(fam, X, prior=FiniteDirichlet(8, 1.0))
    pairs = np.random.default_rng(0).choice(2000, size=(400, 2))
    out = {}
    for name, sampler, n_steps in (("coarsened", CoarsenedMixture(), 1500),
                                   ("fsd", FiniteSymmetricDirichlet(), 3000)):
        rng = np.random.default_rng(11)
        state = sampler.init(rng, model, n_clusters=8)
        ks, co = [], []
        for t in range(n_steps):
            state, _ = sampler.step(rng, state, model)
            if t >= n_steps // 3:
                z = state.labels
                ks.append(len(np.unique(z)))
                co.append(np.mean(z[pairs[:, 0]] == z[pairs[:, 1]]))
        out[name] = (np.mean(ks), np.mean(co))
    assert abs(out["coarsened"][0] - out["fsd"][0]) < 0.5
    assert abs(out["coarsened"][1] - out["fsd"][1]) < 0.03


@pytest.mark.slow
def test_simulation_based_calibration_zeta_one():
    """SBC (ALGORITHMS.md §6) of the allocations at ``zeta = 1``: data from the finite
    mixture's prior, ranks of the truth's statistics among the sampler's draws uniform."""
    from dpclust.calibration import simulation_based_calibration

    fam = NormalInverseWishart(mean=[0.0, 0.0], kappa=0.5, dof=4.0, scale=np.eye(2))
    result = simulation_based_calibration(fam, CoarsenedMixture(), n_samples=30,
                                          prior=FiniteDirichlet(3, 1.0), n_replicates=150,
                                          n_draws=19, thin=3, burn_in=60, n_bins=5,
                                          random_state=7)
    assert result.calibrated(level=0.001), result.p_values


def _target_draws(fam, X, zeta, n_draws, seed):
    """``n_draws`` states ``(log v, theta)`` of the coarsened posterior, by sampling
    importance resampling from the prior (weights Gamma(alpha/K) draws)."""
    rng = np.random.default_rng(seed)
    M = 50 * n_draws
    params = fam.sample_prior(rng, M * K)
    log_f = fam.log_likelihood(X, params).reshape(len(X), M, K)
    log_v = np.log(rng.standard_gamma(ALPHA / K, size=(M, K)))
    log_w = log_v - logsumexp(log_v, axis=1, keepdims=True)
    loglik = logsumexp(log_f + log_w[None], axis=2).sum(axis=0)
    iw = np.exp(zeta * loglik - (zeta * loglik).max())
    pick = rng.choice(M, size=n_draws, p=iw / iw.sum())
    return [(log_v[m], [m * K + k for k in range(K)]) for m in pick], params


@pytest.mark.parametrize("move", ["joint", "pair", "split-merge"])
def test_moves_six_to_eight_keep_the_coarsened_posterior(move):
    """One application of move 6 (a component's weight and parameters), 7 (weight passed
    between two components) or 8 (a merge or a split, with a vacant share of 0.2 so that
    one component is vacant in a fair share of the draws) to draws of the coarsened
    posterior leaves it unchanged: the mean change of the log-likelihood, of a log weight
    and of a parameter is zero within Monte Carlo error (a kernel that does not keep the
    target shifts them: without its reverse proposal density move 6 fails this test)."""
    from dpclust.families.base import take
    from dpclust.kernels import coarsened as ck
    from dpclust.samplers.coarsened.sampler import CoarsenedState, _Work
    from dpclust.samplers.coarsened.split_merge import split_merge

    fam, X = _multinomial()
    model = MixtureModel(fam, X, prior=FiniteDirichlet(K, ALPHA), coarsening=1.0)
    zeta = model.zeta
    Xu, _, c = model.distinct
    sampler = CoarsenedMixture()
    draws, params = _target_draws(fam, Xu, zeta, 4000, seed=8)
    rng = np.random.default_rng(9)
    n_total = float(c.sum())
    D = len(c)

    def stats(w):
        log_w = w.log_v - logsumexp(w.log_v)
        return [float(ck.log_mixture(w.P, w.m, w.v, c)), float(log_w[0]),
                float(w.params.log_prob[0, 0])]

    diffs, accepted = [], 0
    for log_v, idx in draws:
        theta = take(params, idx)
        state = CoarsenedState(np.zeros(len(Xu), dtype=np.int64), ALPHA, theta,
                               np.array(log_v), fam.log_likelihood(Xu, theta),
                               np.zeros(6, dtype=np.int64))
        w = _Work.of(state, fam)
        before = stats(w)
        if move == "pair":
            accepted += sampler._pair_move(rng, fam, Xu, c, zeta, ALPHA / K, w, 0)
        elif move == "split-merge":
            accepted += split_merge(rng, fam, Xu, fam.init_features(Xu), c, zeta, ALPHA / K,
                                    w, 0.2)
        else:
            rest, resp, resp_new = np.empty(D), np.empty(D), np.empty(D)
            ck.rest_sums(w.P, w.v, 0, rest)
            here, soft = ck.column_terms(rest, w.m, w.L[:, 0], w.log_v[0] - w.shift, c, resp)
            accepted += sampler._joint_move(rng, fam, Xu, c, zeta, ALPHA / K, w, 0, rest,
                                            here, soft, resp, resp_new, n_total)[2]
        diffs.append(np.subtract(stats(w), before))
    diffs = np.array(diffs)
    assert accepted > 0.1 * len(draws)
    z = diffs.mean(axis=0) / (diffs.std(axis=0) / np.sqrt(len(diffs)))
    assert np.all(np.abs(z) < 4.0), z


def test_split_halves_cut_two_groups_apart():
    """Move 8's split cuts a component's points at their first principal axis: two groups
    along a diagonal fall in different halves (whatever the scale of the weights, and on
    sparse features too), and a component no point is responsible for gives two empty
    halves without a warning."""
    import warnings

    import scipy.sparse as sp

    from dpclust.samplers.coarsened.split_merge import _halves

    rng = np.random.default_rng(0)
    group = np.repeat([0, 1], 50)
    X = rng.normal(size=(100, 3)) * 0.3 + np.where(group[:, None] == 1, 4.0, 0.0)
    weights = rng.uniform(0.5, 1.0, size=100)
    for feats in (X, sp.csr_matrix(np.abs(X))):
        A, B = _halves(feats, 0.01 * weights)
        assert np.allclose(A + B, 0.01 * weights)
        side = B > 0
        assert side[group == 0].all() != side[group == 1].all()
        assert len(np.unique(side[group == 0])) == 1 and len(np.unique(side[group == 1])) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A, B = _halves(X, np.zeros(100))
    assert not A.any() and not B.any()
