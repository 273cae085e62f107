"""Partition priors (dpclust.priors): each prior's EPPF, seating weights, split ratio and
restaurant process agree with one another, for every registered prior.

The samplers read only the seating tables and the split ratio; the exact enumeration and
the log joints read the EPPF.  So a prior is right when (1) its EPPF is a distribution over
the partitions of n points, (2) the seating weights are the EPPF's conditional of the last
point, (3) the split ratio is the EPPF's ratio, and (4) its sequential draws have the EPPF's
frequencies.
"""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpclust.exact import set_partitions
from dpclust.priors import (PRIORS, DirichletProcess, FiniteDirichlet, GammaPrior,
                            MixtureOfFiniteMixtures, PitmanYor, crp_log_prior, get_prior)

PRIOR_CASES = {
    "dp": DirichletProcess(1.3),
    "pitman-yor": PitmanYor(0.3, 0.7),
    "pitman-yor-negative-strength": PitmanYor(0.5, -0.2),
    "mfm-poisson": MixtureOfFiniteMixtures(1.0, stats.poisson(2.0, loc=1)),
    "mfm-geometric": MixtureOfFiniteMixtures(0.6, stats.geom(0.3)),
    "finite": FiniteDirichlet(3, 1.5),
}


def test_every_registered_prior_is_tested():
    assert {p.name for p in PRIOR_CASES.values()} == set(PRIORS)


def _sizes(row):
    return np.bincount(row)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_eppf_sums_to_one(name):
    prior = PRIOR_CASES[name]
    for n in range(1, 7):
        logp = [prior.log_eppf(_sizes(r), prior.alpha_start) for r in set_partitions(n)]
        assert logsumexp(logp) == pytest.approx(0.0, abs=1e-10), n


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_predictive_weights_are_the_eppf_conditional_at_any_n(name):
    """The fitted model's mixing weights (one more point joins a cluster or opens one) are
    the EPPF's conditional, on a small partition and on one of a million points (where the
    MFM's coefficients once asked for every t up to N: 75 GiB at N = 10^5)."""
    prior = PRIOR_CASES[name]
    a = prior.alpha_start
    for sizes in (np.array([3, 1, 2]), np.array([400_000, 350_000, 249_990, 10])):
        base = prior.log_eppf(sizes, a)
        if not np.isfinite(base):  # more clusters than the finite prior allows
            continue
        log_w, log_new = prior.log_predictive_weights(sizes, a)
        want = [prior.log_eppf(np.where(np.arange(len(sizes)) == k, sizes + 1, sizes), a)
                - base for k in range(len(sizes))] + [prior.log_eppf(np.append(sizes, 1), a)
                                                      - base]
        got = np.append(log_w, log_new)
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], np.array(want)[finite], atol=1e-8)
        assert np.all(got[~finite] == -np.inf)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_seating_weights_are_the_eppf_conditional(name):
    prior = PRIOR_CASES[name]
    a = prior.alpha_start
    for n in range(2, 7):
        log_join, log_new = prior.log_seat_weights(n, a)
        for row in set_partitions(n - 1):
            sizes = _sizes(row)
            base = prior.log_eppf(sizes, a)
            if not np.isfinite(base):  # a partition the prior rules out
                continue
            options = [np.append(sizes[:k], [sizes[k] + 1, *sizes[k + 1:]]) for k in
                       range(len(sizes))] + [np.append(sizes, 1)]
            want = np.array([prior.log_eppf(s, a) - base for s in options])
            got = np.append(log_join[sizes], log_new[len(sizes)])
            finite = np.isfinite(want)
            assert (np.isfinite(got) == finite).all()
            want, got = want[finite], got[finite]
            np.testing.assert_allclose(got - logsumexp(got), want - logsumexp(want),
                                       atol=1e-10)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_split_ratio_is_the_eppf_ratio(name):
    prior = PRIOR_CASES[name]
    a = prior.alpha_start
    rng = np.random.default_rng(0)
    for _ in range(30):
        others = list(rng.integers(1, 5, size=rng.integers(0, 2)))
        n_l, n_r = (int(v) for v in rng.integers(1, 6, size=2))
        merged = others + [n_l + n_r]
        split = others + [n_l, n_r]
        want = prior.log_eppf(split, a) - prior.log_eppf(merged, a)
        got = prior.log_split_ratio(n_l, n_r, len(merged), sum(merged), a)
        if math.isinf(want):
            assert got == want
        else:
            assert got == pytest.approx(want, abs=1e-10)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_sequential_draws_follow_the_eppf(name):
    prior = PRIOR_CASES[name]
    parts = set_partitions(4)
    exact = np.exp([prior.log_eppf(_sizes(r), prior.alpha_start) for r in parts])
    rng = np.random.default_rng(1)
    index = {tuple(r): j for j, r in enumerate(parts)}
    counts = np.zeros(len(parts))
    for _ in range(4000):
        counts[index[tuple(prior.sample_partition(rng, 4))]] += 1
    assert 0.5 * np.abs(counts / counts.sum() - exact).sum() < 0.04


def test_pitman_yor_without_discount_is_the_dirichlet_process():
    py, dp = PitmanYor(0.0, 1.7), DirichletProcess(1.7)
    for row in set_partitions(5):
        assert py.log_eppf(_sizes(row), 1.7) == pytest.approx(dp.log_eppf(_sizes(row), 1.7))
    assert crp_log_prior([2, 3], 1.7) == dp.log_eppf([2, 3], 1.7)


def test_finite_dirichlet_tends_to_the_dirichlet_process():
    dp = DirichletProcess(0.8)
    big = FiniteDirichlet(100_000, 0.8)
    for row in set_partitions(5):
        assert big.log_eppf(_sizes(row), 0.8) == pytest.approx(dp.log_eppf(_sizes(row), 0.8),
                                                               abs=1e-3)


def test_mfm_coefficients_satisfy_their_recursion():
    """``V_n(t) = (n + gamma t) V_{n+1}(t) + gamma V_{n+1}(t + 1)`` (Miller & Harrison
    2018, section 3.2)."""
    g = 0.7
    mfm = MixtureOfFiniteMixtures(g, stats.poisson(3.0, loc=1))
    for n in (1, 5, 40):
        v, v1 = mfm.log_v(n, 10), mfm.log_v(n + 1, 11)
        for t in range(1, 10):
            rhs = np.logaddexp(math.log(n + g * t) + v1[t], math.log(g) + v1[t + 1])
            assert v[t] == pytest.approx(rhs, rel=1e-9, abs=1e-9)


def test_mfm_tables_grow_on_demand():
    mfm = MixtureOfFiniteMixtures(1.0)
    _, short = mfm.log_seat_weights(500, 1.0, max_clusters=3)
    _, full = mfm.log_seat_weights(500, 1.0)
    assert 4 <= len(short) < len(full) == 501
    np.testing.assert_allclose(short, full[: len(short)], rtol=1e-12)


def test_prior_specs_and_errors():
    assert get_prior(None, alpha=2.0) == DirichletProcess(2.0)
    assert get_prior("pitman-yor:0.25,1") == PitmanYor(0.25, 1.0)
    assert get_prior("py:0.1,2") == PitmanYor(0.1, 2.0)
    assert get_prior("finite:7") == FiniteDirichlet(7, 1.0)
    assert get_prior("dp:gamma:2:1") == DirichletProcess(GammaPrior(2.0, 1.0))
    mfm = get_prior("mfm:0.5,poisson:4")
    assert mfm.gamma == 0.5 and mfm.k_distribution.mean() == pytest.approx(5.0)
    assert get_prior("mfm:1,geometric:0.2").k_distribution.mean() == pytest.approx(5.0)
    with pytest.raises(ValueError, match="unknown prior"):
        get_prior("chinese-buffet")
    with pytest.raises(ValueError, match="DISCOUNT,STRENGTH"):
        get_prior("pitman-yor:0.3")
    with pytest.raises(ValueError, match="discount"):
        PitmanYor(1.0, 1.0)
    with pytest.raises(ValueError, match="strength"):
        PitmanYor(0.3, -0.5)
    with pytest.raises(ValueError, match="no mass on K = 0"):
        MixtureOfFiniteMixtures(1.0, stats.poisson(2.0))
    with pytest.raises(ValueError, match="gamma"):
        MixtureOfFiniteMixtures(0.0)
    with pytest.raises(ValueError, match="unknown prior on K"):
        MixtureOfFiniteMixtures(1.0, "binomial:3")


# ------------------------------------------------------------ samplers against the exact
# posterior over the partitions of 5 points, under each prior other than the DP (whose
# cases are in test_samplers_exact.py)
from dpclust.exact import exact_posterior, partition_frequencies, total_variation  # noqa: E402
from split_chains import run_chain  # noqa: E402
from dpclust.families import DirichletMultinomial, NormalInverseWishart  # noqa: E402
from dpclust.samplers import (CollapsedGibbs, ExplicitGibbs, FiniteSymmetricDirichlet,  # noqa: E402
                              GibbsSAMS, MixtureModel, SubclusterSplitMerge)

X_GAUSS = np.array([[0.0, 0.0], [0.4, 0.1], [1.5, 1.2], [1.8, 1.4], [0.9, 0.8]])
X_DOCS = np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2], [1, 1, 1, 1]],
                  dtype=float)
SAMPLER_PRIORS = {"pitman-yor": PitmanYor(0.4, 0.5),
                  "mfm": MixtureOfFiniteMixtures(1.0, "poisson:3")}


def _model(family, prior):
    import scipy.sparse as sp

    if family == "gaussian":
        fam = NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=4.0,
                                   scale=np.eye(2)).resolve(X_GAUSS)
        return MixtureModel(fam, X_GAUSS, prior=prior)
    X = sp.csr_matrix(X_DOCS)
    return MixtureModel(DirichletMultinomial(concentration=0.7).resolve(X), X, prior=prior)


def tv_under_prior(sampler, family, prior, n_steps=30_000, seed=0):
    model = _model(family, prior)
    parts, exact = exact_posterior(model.family, model.X, prior)
    assert exact.max() < 0.6  # spread out, or the test proves little
    draws = run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=200,
                      init_kwargs={"alpha": prior.alpha_start, "n_clusters": 2})
    return total_variation(partition_frequencies(draws, parts), exact)


#: the default run: every sampler, family and prior at least once (the rest are slow).  The
#: sub-cluster sampler runs once, under Pitman-Yor (27 s; its MFM case, 28 s, is slow): it
#: reads the split ratio from the prior's contract, which test_split_terms_are_the_split_ratio
#: checks for every prior
DEFAULT_CASES = [("gibbs", "gaussian", "pitman-yor"), ("gibbs", "gaussian", "mfm"),
                 ("gibbs", "multinomial", "pitman-yor"), ("gibbs", "multinomial", "mfm"),
                 ("explicit", "gaussian", "pitman-yor"), ("explicit", "multinomial", "mfm"),
                 ("gibbs+sams", "gaussian", "mfm"), ("gibbs+sams", "multinomial", "pitman-yor"),
                 ("subcluster", "multinomial", "pitman-yor")]
#: the sub-cluster sampler's instantiated data pass (its default on partitioned data; on five
#: points the default pass is the collapsed one)
ALL_CASES = [(s, f, p) for s in ("gibbs", "explicit", "gibbs+sams", "subcluster",
                                 "subcluster-instantiated")
             for f in ("gaussian", "multinomial") for p in sorted(SAMPLER_PRIORS)]


def _check_sampler(sampler, family, prior):
    make = {"gibbs": CollapsedGibbs, "explicit": ExplicitGibbs,
            "gibbs+sams": lambda: GibbsSAMS(n_proposals=1),
            "subcluster": SubclusterSplitMerge,
            "subcluster-instantiated": lambda: SubclusterSplitMerge(data_pass="instantiated")
            }[sampler]
    steps = {"gibbs": 30_000, "explicit": 20_000, "gibbs+sams": 15_000}.get(sampler, 15_000)
    tv = tv_under_prior(make(), family, SAMPLER_PRIORS[prior], n_steps=steps,
                        seed=7 if sampler.startswith("subcluster") else 0)
    assert tv < 0.04, tv


@pytest.mark.parametrize("sampler, family, prior", DEFAULT_CASES)
def test_samplers_match_the_exact_posterior_under_each_prior(sampler, family, prior):
    _check_sampler(sampler, family, prior)


@pytest.mark.slow
@pytest.mark.parametrize("sampler, family, prior",
                         [c for c in ALL_CASES if c not in DEFAULT_CASES])
def test_every_sampler_family_and_prior_matches_the_exact_posterior(sampler, family, prior):
    _check_sampler(sampler, family, prior)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_split_terms_are_the_split_ratio(name):
    """The tables the compiled Gibbs+SAMS proposals read give every prior's scalar split
    ratio, the finite prior's bound on K (minus infinity) included."""
    prior = PRIOR_CASES[name]
    rng = np.random.default_rng(0)
    n, alpha = 60, prior.alpha_start
    log_k, log_w = prior.log_split_terms(n, alpha, 30)
    assert len(log_k) == 31 and len(log_w) == n + 1
    for _ in range(300):
        a, b, k = (int(v) for v in rng.integers(1, 30, size=3))
        want = prior.log_split_ratio(a, b, k, n, alpha)
        got = log_k[k] + log_w[a] + log_w[b] - log_w[a + b]
        if math.isinf(want):
            assert got == want
        else:
            assert got == pytest.approx(want, abs=1e-10)


@pytest.mark.parametrize("prior", sorted(SAMPLER_PRIORS))
def test_merge_split_moves_alone_match_the_exact_posterior(prior):
    """SAMS proposals without Gibbs sweeps: the prior's split ratio alone decides them."""
    tv = tv_under_prior(GibbsSAMS(n_proposals=3, gibbs=None), "gaussian",
                        SAMPLER_PRIORS[prior], n_steps=12_000, seed=3)
    assert tv < 0.04, tv


def test_reallocations_read_the_prior():
    """Reallocations keep the number of clusters, so only the prior's cluster weights
    ``W(N_k)`` enter their ratio: under Pitman-Yor they differ from the DP's."""
    sampler = GibbsSAMS(n_proposals=1, gibbs=None, n_reallocations=3)
    tv = tv_under_prior(sampler, "gaussian", PitmanYor(0.6, 0.3), n_steps=12_000, seed=4)
    assert tv < 0.04, tv


@pytest.mark.slow
def test_subcluster_sampler_matches_the_exact_posterior_of_a_finite_prior():
    """The sub-cluster sampler under the finite Dirichlet: its splits stop at the prior's
    number of components (measured TV 0.021 at 10,000 steps)."""
    tv = tv_under_prior(SubclusterSplitMerge(), "gaussian", FiniteDirichlet(3, 1.5),
                        n_steps=15_000, seed=7)
    assert tv < 0.04, tv


def test_fsd_sampler_matches_the_exact_posterior_of_its_finite_prior():
    tv = tv_under_prior(FiniteSymmetricDirichlet(), "gaussian", FiniteDirichlet(3, 1.5), seed=2)
    assert tv < 0.04, tv


class _WrongRatio(PitmanYor):
    """A Pitman–Yor prior whose split ratio is the Dirichlet process's (same strength), in
    both of its forms: the controls' broken prior."""

    def log_split_ratio(self, n_left, n_right, n_clusters, n_samples, alpha):
        return DirichletProcess(alpha).log_split_ratio(n_left, n_right, n_clusters,
                                                       n_samples, alpha)

    def log_split_terms(self, n_samples, alpha, max_clusters):
        return DirichletProcess(alpha).log_split_terms(n_samples, alpha, max_clusters)


def test_a_broken_prior_ratio_is_caught():
    """The control: Gibbs+SAMS under a Pitman–Yor model that scores its moves with the DP's
    ratio (same strength) is far from the exact Pitman–Yor posterior."""
    tv = tv_under_prior(GibbsSAMS(n_proposals=3, gibbs=None), "gaussian",
                        _WrongRatio(0.6, 0.3), n_steps=6_000, seed=3)
    assert tv > 0.06, tv


@pytest.mark.slow
def test_a_broken_prior_ratio_is_caught_in_the_subcluster_sampler():
    """The same control for the sub-cluster sampler's split-merge moves: they read the
    prior's split ratio, so scoring them with the DP's is far from the exact posterior."""
    tv = tv_under_prior(SubclusterSplitMerge(), "gaussian", _WrongRatio(0.6, 0.3),
                        n_steps=10_000, seed=7)
    assert tv > 0.06, tv


@pytest.mark.parametrize("n", [0, 1, 5, 63, 64, 65, 1000])
def test_log_counts_are_the_c_library_logs_of_every_count(n):
    """The seating tables points seated one at a time read (``sample`` asks for every n in
    turn): ``log c`` for c = 0..n exactly, read-only, whichever n asks first."""
    from dpclust.priors.base import log_counts

    for m in (n, 2 * n + 3, n):
        out = log_counts(m)
        assert out.shape == (m + 1,) and out[0] == -math.inf and not out.flags.writeable
        assert all(out[c] == math.log(c) for c in range(1, m + 1))
