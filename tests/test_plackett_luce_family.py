"""The Plackett–Luce family (``family="plackett-luce"``) and the samplers that fit it.

Three layers (STYLE 12): the compiled kernels against the NumPy reference of
:mod:`dpclust.families._plackett_luce`; the small-n exact face against plain Monte Carlo from
the Gamma prior of the worths (other coordinates than the family's quadrature); and every
sampler that takes the family against the enumerated posterior of a few rankings, with
checks that the tests would catch a wrong new-cluster term or a new cluster drawn from the
prior.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from dpclust import DPMixture
from dpclust.exact import exact_posterior, partition_frequencies, total_variation
from split_chains import run_chain
from dpclust.families import PlackettLuce
from dpclust.families import _plackett_luce as pl
from dpclust.families._pl_kernels import log_pl_table, soft_sums
from dpclust.families.exposure import RateParams
from dpclust.families.plackett_luce import PLParams, patterns
from dpclust.priors import FiniteDirichlet, PitmanYor
from dpclust.rankings import Rankings
from dpclust.samplers import ExplicitGibbs, FiniteSymmetricDirichlet, MixtureModel

# repeated and partial ballots of 3 items (the distinct-ballot table and c_dk > 1)
BALLOTS = [[0, 1], [0, 1], [1, 0], [2], [2, 1]]


def _random_rankings(rng, N, n):
    lengths = rng.integers(1, n, size=N)
    orders = np.full((N, n - 1), -1, dtype=np.int64)
    for i, t in enumerate(lengths):
        orders[i, :t] = rng.permutation(n)[:t]
    return Rankings(orders, n)


def _naive_log_pl(ranking, p):
    out, left = 0.0, set(range(len(p)))
    for j in ranking:
        out += math.log(p[j] / sum(p[i] for i in left))
        left.remove(j)
    return out


# ------------------------------------------------------------------ kernels
@pytest.mark.parametrize("N, K", [(40, 3), (3000, 20)])  # one thread, and the parallel path
def test_log_likelihood_table_matches_the_numpy_reference(N, K):
    rng = np.random.default_rng(0)
    X = _random_rankings(rng, N, 9)
    log_p = np.log(rng.dirichlet(np.full(9, 0.3), size=K))
    log_p[0] = np.log(np.r_[0.6, 0.4, np.full(7, 1e-15)])  # worth on two items
    table = np.empty((N, K))
    log_pl_table(X.orders, X.lengths, log_p, table)
    np.testing.assert_allclose(table, pl.log_likelihood(X.orders, X.lengths, log_p),
                               rtol=1e-12, atol=1e-12)
    p = np.exp(log_p)
    for i in range(5):
        for k in (0, 1):
            assert table[i, k] == pytest.approx(
                _naive_log_pl(X.orders[i, :X.lengths[i]], p[k]), rel=1e-9)


def test_soft_sums_match_the_numpy_reference():
    rng = np.random.default_rng(1)
    X = _random_rankings(rng, 200, 6)
    w = rng.gamma(1.0, size=200) * (rng.random(200) < 0.8)
    log_p = np.log(rng.dirichlet(np.ones(6)))
    chosen, exposure = np.empty(6), np.empty(6)
    soft_sums(X.orders, X.lengths, w, np.exp(log_p), chosen, exposure)
    a, r = pl.soft_gamma_params(X.orders, X.lengths, w, log_p, 0.7)
    np.testing.assert_allclose(chosen + 0.7, a, rtol=1e-12)
    np.testing.assert_allclose(exposure + 6 * 0.7, r, rtol=1e-12)


# -------------------------------------------------------- the exact face
def _family(rankings, n, a=1.0):
    X = Rankings(_pad(rankings), n)
    return PlackettLuce(worth_shape=a).resolve(X), X


def _pad(rankings):
    width = max(len(r) for r in rankings)
    return [list(r) + [-1] * (width - len(r)) for r in rankings]


@pytest.mark.parametrize("a", [0.5, 2.0])
def test_marginal_likelihood_matches_monte_carlo_over_gamma_worths(a):
    rankings = [[0, 1, 2], [0, 1], [1, 0, 3], [3]]
    fam, X = _family(rankings, 4, a)
    exact = float(np.exp(fam.log_marginal(fam.stats(X))[0]))
    rng = np.random.default_rng(2)
    lam = rng.gamma(a, size=(400_000, 4))  # unnormalised worths: another set of coordinates
    lik = np.ones(len(lam))
    for r in rankings:
        left = lam.sum(axis=1)
        for j in r:
            lik *= lam[:, j] / left
            left = left - lam[:, j]
    se = lik.std() / np.sqrt(len(lik))
    assert abs(lik.mean() - exact) < 4 * se, (lik.mean(), exact, se)


def test_exact_face_identities():
    fam, X = _family([[0, 1], [0, 1], [2, 1, 3], [3], [1, 0]], 4)
    # one ranking has probability (n - t)! / n! under the prior
    for i in range(len(X)):
        one = fam.stats(X[np.array([i])])
        assert fam.log_marginal(one)[0] == pytest.approx(fam.log_prior_predictive(X)[i],
                                                         abs=1e-5)
    # chain rule: log f(X) = sum_i log f(x_i | x_<i)
    total = sum(fam.log_predictive(X[np.array([i])], fam.stats(X[np.arange(i)]) if i
                                   else fam.empty_stats(1))[0, 0] for i in range(len(X)))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(total, rel=1e-9)
    # statistics add up
    labels = np.array([0, 1, 0, 1, 1])
    both = fam.combine(fam.stats(X[np.flatnonzero(labels == 0)]),
                       fam.stats(X[np.flatnonzero(labels == 1)]))
    np.testing.assert_array_equal(both.counts, fam.stats(X).counts)
    assert len(patterns(4)) == 4 + 12 + 24


def test_sample_data_follows_plackett_luce():
    fam, _ = _family([[0, 1, 2]], 4)
    p = np.array([0.5, 0.25, 0.15, 0.1])
    rng = np.random.default_rng(3)
    R = fam.sample_data(PLParams(np.log(p)[None, :]), np.zeros(24_000, dtype=np.int64), rng,
                        lengths=3)
    index = {tuple(r): j for j, r in enumerate(itertools.permutations(range(4), 3))}
    observed = np.bincount([index[tuple(r)] for r in R.orders], minlength=24)
    expected = np.array([math.exp(_naive_log_pl(r, p)) for r in index]) * 24_000
    assert sps.chisquare(observed, expected).pvalue > 0.001


def test_update_params_keeps_each_cluster_posterior():
    """Two clusters updated together: each cluster's posterior mean of the worths (plain
    Monte Carlo over Dir(a), weighted by the likelihood) within 4 batch-means errors."""
    fam, X = _family([[0, 1], [0, 1], [0, 2], [2, 1], [2], [1, 2, 0]], 3, a=0.7)
    labels = np.array([0, 0, 0, 1, 1, 1])
    rng = np.random.default_rng(4)
    draws = rng.dirichlet(np.full(3, 0.7), size=400_000)
    params, out = None, []
    for t in range(10_500):
        params = fam.update_params(X, labels, params, rng, 2)
        if t >= 500:
            out.append(np.exp(params.log_worths))
    out = np.array(out)  # (draws, 2, 3)
    batches = out.reshape(50, -1, 2, 3).mean(axis=1)
    se = batches.std(axis=0, ddof=1) / np.sqrt(50)
    for k in range(2):
        lik = np.ones(len(draws))
        for i in np.flatnonzero(labels == k):
            left = np.ones(len(draws))
            for j in X.orders[i, :X.lengths[i]]:
                lik *= draws[:, j] / left
                left = left - draws[:, j]
        exact = (lik[:, None] * draws).sum(axis=0) / lik.sum()
        assert np.all(np.abs(out[:, k].mean(axis=0) - exact) < 4 * se[k] + 2e-3), (k, exact)


# -------------------------------------------------------- samplers, exactly
def _tv(sampler, prior, n_steps, seed=0, a=1.0, rankings=BALLOTS, n_items=3):
    fam, X = _family(rankings, n_items, a)
    parts, exact = exact_posterior(fam, X, prior)
    model = MixtureModel(fam, X, prior=prior)
    draws = run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=200,
                      init_kwargs={"n_clusters": 2, "alpha": prior.alpha_start})
    return total_variation(partition_frequencies(draws, parts), exact)


# With 20,000 steps the TV distance of an exact chain to the 52-partition posterior is about
# 0.017-0.02 (three seeds), about 0.025 with 12,000; a new-cluster term of 1/n instead of
# (n - t)!/n! gives 0.21 and a new cluster drawn from the prior instead of p(p | x_i) 0.085.
def test_explicit_gibbs_matches_the_enumerated_posterior():
    from dpclust.priors import DirichletProcess

    assert _tv(ExplicitGibbs(), DirichletProcess(1.0), 12_000) < 0.05


def test_fsd_matches_the_finite_mixture_posterior():
    assert _tv(FiniteSymmetricDirichlet(), FiniteDirichlet(3, 1.0), 12_000) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("a, prior", [(0.3, "dp2"), (3.0, "dp2"), (1.0, "py")])
def test_explicit_gibbs_other_shapes_and_priors(a, prior):
    from dpclust.priors import DirichletProcess

    p = DirichletProcess(2.0) if prior == "dp2" else PitmanYor(discount=0.3, strength=1.0)
    assert _tv(ExplicitGibbs(), p, 20_000, a=a, seed=1) < 0.04


@pytest.mark.slow
@pytest.mark.parametrize("broken", ["new-cluster-term", "new-cluster-draw"])
def test_explicit_gibbs_exactness_test_has_power(broken, monkeypatch):
    from dpclust.priors import DirichletProcess

    if broken == "new-cluster-term":
        monkeypatch.setattr(PlackettLuce, "log_prior_predictive",
                            lambda self, X: np.full(len(X), -math.log(self.n_items_)))
    else:
        monkeypatch.setattr(PlackettLuce, "sample_given_one",
                            lambda self, X, i, rng: self.sample_prior(rng, 1))
    assert _tv(ExplicitGibbs(), DirichletProcess(1.0), 20_000) > 0.06


# --------------------------------------------- the collapsed samplers, given the latents
def test_latent_rows_match_the_numpy_reference():
    """The latents as counts over exposures: an item chosen at stage r has exposure Z_1 +
    ... + Z_r, an unranked item the sum of all; the same as the NumPy reference's
    exposure of Z = draws / Lambda_s at the worths with each cluster's fresh scale."""
    rng = np.random.default_rng(4)
    X = _random_rankings(rng, 40, 6)
    fam = PlackettLuce().resolve(X)
    labels = rng.integers(0, 3, size=40)
    log_rates = np.log(rng.gamma(1.0, size=(3, 6)))
    out = fam.draw_latents(X, labels, RateParams(log_rates), np.random.default_rng(1))
    rng = np.random.default_rng(1)
    scale = rng.standard_gamma(6.0, size=3)  # each cluster's scale, from Gamma(n a, 1)
    draws = rng.standard_exponential((40, X.orders.shape[1]))
    ranked, idx = pl._stages(X.orders, X.lengths)
    rates = np.exp(log_rates) / np.exp(log_rates).sum(axis=1, keepdims=True) * scale[:, None]
    left = pl._available(rates[labels], ranked, idx)
    Z = np.where(ranked, draws / left, 0.0)
    for k in range(3):
        mine = labels == k
        E = pl._exposure(Z[mine], ranked[mine], idx[mine], X.lengths[mine],
                         np.zeros(mine.sum(), dtype=np.int64), 1, 6)[0]
        assert np.allclose(out.exposure[mine].sum(axis=0), E)
    assert np.array_equal(out.counts.sum(axis=1), X.lengths)


def _augmented(name):
    from dpclust.samplers import get_sampler

    fam, _ = _family(BALLOTS, 3)
    return get_sampler(name, family=fam)


# 12,000 steps: TV 0.023 (Gibbs), 0.023 (Gibbs+SAMS: explicit sweeps, proposals given the
# latents), as the explicit sampler's 0.025; 10,000 steps of the sub-cluster sampler (its
# collapsed pass, on small data): 0.026.  Latents whose unranked items are exposed to the
# first stage only (not to every stage) give 0.21.  The sub-cluster case is slow (41 s): the
# default run keeps the latents' wrapper (Gibbs, Gibbs+SAMS) and the sub-cluster sampler's
# own exact test (test_subcluster.py)
@pytest.mark.parametrize("name", ["gibbs", "gibbs+sams",
                                  pytest.param("subcluster", marks=pytest.mark.slow)])
def test_collapsed_samplers_given_the_latents_match_the_enumerated_posterior(name):
    from dpclust.priors import DirichletProcess
    from dpclust.samplers.augmented import LatentAugmented

    sampler = _augmented(name)
    assert isinstance(sampler, LatentAugmented) and sampler.name == name
    assert _tv(sampler, DirichletProcess(1.0), 12_000 if name != "subcluster" else 10_000) < 0.05


@pytest.mark.slow
def test_subcluster_pass_at_drawn_rates_matches_the_enumerated_posterior():
    """The pass the sub-cluster sampler runs on the latents from 10,000 ballots on (the
    restricted Gibbs pass at drawn rates) mixes slowly on five ballots: TV 0.044 at 10,000
    steps, 0.036 at 15,000, 0.024 and 0.016 at 40,000 (seeds 0 and 1)."""
    from dpclust.priors import DirichletProcess
    from dpclust.samplers import SubclusterSplitMerge, get_sampler

    fam, _ = _family(BALLOTS, 3)
    sampler = get_sampler(SubclusterSplitMerge(data_pass="instantiated"), family=fam)
    assert _tv(sampler, DirichletProcess(1.0), 40_000) < 0.035


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs+sams", "subcluster"])
@pytest.mark.parametrize("prior", ["py", "mfm"])
def test_samplers_given_the_latents_under_other_priors(name, prior):
    from dpclust.priors import MixtureOfFiniteMixtures

    p = (PitmanYor(discount=0.3, strength=1.0) if prior == "py"
         else MixtureOfFiniteMixtures(1.0, "poisson:2"))
    assert _tv(_augmented(name), p, 20_000, seed=1, a=0.5) < 0.04


@pytest.mark.slow
def test_samplers_given_the_latents_exactness_test_has_power(monkeypatch):
    from dpclust.families import plackett_luce as module
    from dpclust.priors import DirichletProcess

    rows = module.latent_rows

    def first_stage_only(orders, lengths, labels, rate, draws, counts, exposure):
        rows(orders, lengths, labels, rate, draws, counts, exposure)
        unranked = counts == 0  # exposed to the first stage's latent alone
        first = draws[:, 0] / rate.sum(axis=1)[labels]
        exposure[unranked] = np.broadcast_to(first[:, None], exposure.shape)[unranked]

    monkeypatch.setattr(module, "latent_rows", first_stage_only)
    assert _tv(_augmented("gibbs+sams"), DirichletProcess(1.0), 12_000) > 0.1


# ----------------------------------------------------------- the estimator
def test_samplers_that_do_not_fit_the_family_are_refused_by_name():
    X = Rankings(_pad(BALLOTS), 3)
    with pytest.raises(ValueError, match="'gibbs', 'gibbs\\+sams' or 'subcluster', not "
                                         "'slice-gibbs'"):
        DPMixture(family="plackett-luce", sampler="slice-gibbs", n_iter=2, n_chains=1).fit(X)
    with pytest.raises(ValueError, match="not 'explicit'"):
        DPMixture(family="mallows", sampler="explicit", n_iter=2, n_chains=1).fit(X)


def _generated(n_ballots, seed):
    """Three blocs over 9 items (worths from Dir(0.5)) with ballot lengths 1..8."""
    rng = np.random.default_rng(seed)
    fam = PlackettLuce().resolve(Rankings([[0, 1, 2, 3, 4, 5, 6, 7]], 9))
    truth = np.log(rng.dirichlet(np.full(9, 0.5), size=3))
    z = rng.choice(3, size=n_ballots, p=[0.5, 0.3, 0.2])
    lengths = rng.choice(np.arange(1, 9), size=n_ballots,
                         p=[0.1, 0.15, 0.2, 0.2, 0.15, 0.1, 0.05, 0.05])
    return fam.sample_data(PLParams(truth), z, rng, lengths=lengths), z, np.exp(truth)


def test_recovers_a_generated_mixture():
    """3,000 ballots of three blocs: the blocs' sizes and worths come back, and the
    clustering is nearly as good as the true model's own assignment (short ballots say
    little about their bloc, so neither is close to ARI 1).  The estimate minimises the
    normalised VI: plain VI merges two blocs whose short ballots the draws cannot tell
    apart (ARI 0.50 against the oracle's 0.69)."""
    from sklearn.metrics import adjusted_rand_score

    X, z, truth = _generated(3000, seed=5)
    fam = PlackettLuce().resolve(X)
    oracle = np.argmax(fam.log_likelihood(X, PLParams(np.log(truth)))
                       + np.log([0.5, 0.3, 0.2]), axis=1)
    est = DPMixture(family="plackett-luce", coarsening="exact", n_iter=300, init_clusters=1,
                    random_state=0, n_chains=1, point_estimate="nvi").fit(X)
    assert adjusted_rand_score(z, est.labels_) > 0.8 * adjusted_rand_score(z, oracle)
    sizes = np.bincount(est.labels_)
    big = np.flatnonzero(sizes >= 0.05 * len(z))
    assert len(big) == 3
    worths = est.cluster_params_["worths"][big]
    errors = np.abs(worths[:, None, :] - truth[None, :, :]).sum(axis=2)  # (fitted, true)
    assert np.all(errors.min(axis=0) < 0.15), errors
    assert np.all(np.isfinite(est.score_samples(X[:50])))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs+sams", "subcluster"])
def test_samplers_given_the_latents_agree_with_explicit_gibbs_on_a_thousand_ballots(name):
    """ALGORITHMS.md §6 (a): on 1,200 generated ballots of three blocs, the posterior of the
    clusters holding >= 2 % and the co-clustering of 120 ballots by explicit Gibbs and by
    the sampler given the latents, chains from 1 and from 8 clusters."""
    from test_subcluster_agreement import chain_summary

    from dpclust.samplers import get_sampler

    X, _, _ = _generated(1200, seed=2)
    fam = PlackettLuce().resolve(X)
    model = MixtureModel(fam, X)
    subset = np.random.default_rng(123).choice(len(X), size=120, replace=False)
    k_ref, co_ref = chain_summary(ExplicitGibbs(), model, [0, 1, 2, 3], 1500, subset)
    k_new, co_new = chain_summary(get_sampler(name, family=fam), model, [0, 1, 2, 3], 1500,
                                  subset)
    iu = np.triu_indices(len(subset), 1)
    assert abs(k_ref - k_new) < 0.3, (k_ref, k_new)
    assert np.abs(co_ref - co_new)[iu].mean() < 0.03


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["explicit", "fsd", "gibbs+sams", "subcluster"])
def test_simulation_based_calibration(sampler):
    """SBC (ALGORITHMS.md §6): top-3 rankings of 5 items from the model's prior; the ranks
    of the truth's statistics among the draws are uniform."""
    from dpclust.calibration import simulation_based_calibration

    fam = PlackettLuce(worth_shape=1.0).resolve(Rankings([[0, 1, 2]], 5))
    if sampler == "explicit":
        kw = dict(sampler=ExplicitGibbs())
    elif sampler != "fsd":
        from dpclust.samplers import get_sampler

        kw = dict(sampler=get_sampler(sampler, family=fam))
    else:
        kw = dict(sampler=FiniteSymmetricDirichlet(), prior=FiniteDirichlet(3, 1.0))
    result = simulation_based_calibration(fam, n_samples=30, n_replicates=200, n_draws=19,
                                          thin=3, burn_in=60, n_bins=5, random_state=3, **kw)
    assert result.calibrated(level=0.001), result.p_values
