"""A full-covariance Gaussian block with holes (:mod:`dpclust.families.gaussian_table_holes`):
the observed-coordinates likelihood against scipy, the new-cluster draw and the augmentation
kernel against closed-form posterior moments, and Neal's algorithm 2 against the partition
posterior enumerated on five rows (block marginals integrated over the missing cells)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from scipy.special import logsumexp

from niw_marginals import niw_log_marginal_batched as _niw_log_marginal_batched

from dpclust.exact import partition_frequencies, set_partitions, total_variation
from split_chains import run_chain
from dpclust.families import TableFamily
from dpclust.families.gaussian import NormalInverseWishart
from dpclust.families.gaussian_table_holes import GaussianTableHoles, missing_patterns
from dpclust.samplers import (ExplicitGibbs, FiniteSymmetricDirichlet, MixtureModel,
                              crp_log_prior, finite_dirichlet_log_prior, get_sampler)

#: two real columns with one hole each, in different rows (two missing patterns)
HOLES = pd.DataFrame({"height": [0.1, 0.3, np.nan, 2.0, 1.2],
                      "weight": [1.0, np.nan, 0.5, 1.9, 1.1]})
#: the same with a category column beside them
MIXED = HOLES.assign(colour=["red", "blue", "red", None, "green"])
#: three real columns, holes of several patterns (likelihood checks)
WIDE = pd.DataFrame({"a": [0.1, np.nan, 1.0, np.nan, 2.0, 0.4],
                     "b": [1.0, 0.2, np.nan, np.nan, 1.9, 0.3],
                     "c": [0.3, 0.8, 0.5, 1.1, np.nan, np.nan]})


def resolved(df, dof=None, kappa=0.5):
    fam = TableFamily(covariance="full", kappa=kappa)
    X = fam.validate(df)
    fam = fam.resolve(X)
    if dof is not None:  # a prior whose covariance has finite variance, for moment tests
        niw = fam.niw_
        fam.niw_ = NormalInverseWishart(mean=niw.mean, kappa=niw.kappa, dof=float(dof),
                                        scale=niw.scale * (dof - len(niw.mean) - 1.0)
                                        / max(niw.dof - len(niw.mean) - 1.0, 1.0))
    return fam, X


# --------------------------------------------------------------- the likelihood
def test_full_covariance_with_holes_resolves_to_the_instantiated_family():
    fam, X = resolved(HOLES)
    assert type(fam) is GaussianTableHoles and not fam.collapsible
    assert np.allclose(fam.niw_.mean, HOLES.mean().to_numpy())  # observed column means
    assert type(get_sampler("auto", 5, fam)).__name__ == "ExplicitGibbs"
    for name in ("gibbs", "gibbs+sams", "subcluster"):  # given the missing cells
        assert type(get_sampler(name, 5, fam)).__name__ == "LatentAugmented"
    with pytest.raises(ValueError, match="not 'slice-gibbs'"):
        get_sampler("slice-gibbs", 5, fam)
    with pytest.raises(ValueError, match="sampler='explicit'"):
        fam.kernel(X)
    with pytest.raises(ValueError, match="sampler='explicit'"):
        fam.stats(X)


def test_log_likelihood_is_the_observed_coordinates_gaussian():
    fam, X = resolved(WIDE)
    params = fam.sample_prior(np.random.default_rng(0), 3)
    got = fam.log_likelihood(X, params)
    real = X.real
    for i in range(len(real)):
        o = ~np.isnan(real[i])
        for k in range(3):
            want = st.multivariate_normal(params.g_mean[k][o],
                                          params.g_cov[k][np.ix_(o, o)]).logpdf(real[i][o])
            assert got[i, k] == pytest.approx(want, rel=1e-10)
    assert {tuple(p) for p, _ in missing_patterns(real)} == {
        (True, True, True), (False, True, True), (True, False, True), (False, False, True),
        (True, True, False)}


def test_prior_predictive_is_the_student_t_marginal_of_the_observed_coordinates():
    fam, X = resolved(WIDE)
    m0, kappa0, nu0, S0 = fam.niw_._hyper()
    d = len(m0)
    df = nu0 - d + 1.0
    P = S0 * (kappa0 + 1.0) / (kappa0 * df)
    got = fam.log_prior_predictive(X)
    for i, x in enumerate(X.real):
        o = ~np.isnan(x)
        want = st.multivariate_t(m0[o], P[np.ix_(o, o)], df=df).logpdf(x[o])
        assert got[i] == pytest.approx(want, rel=1e-10)


# ------------------------------------------ block marginals over the missing cells
def _block_log_marginal(niw, real, nodes=160):
    """``log f(X_obs)`` of a block of rows with holes: the NIW marginal of the completed
    rows integrated over every missing cell (at most two) by Gauss–Legendre in
    ``x = centre + s tan(theta)``."""
    holes = np.argwhere(np.isnan(real))
    if not len(holes):
        return float(_niw_log_marginal_batched(niw, real[None])[0])
    seen = ~np.isnan(real)
    n_seen = seen.sum(axis=0)
    centre = np.where(n_seen > 0, np.where(seen, real, 0.0).sum(axis=0)
                      / np.maximum(n_seen, 1), niw.mean)
    sd = np.sqrt(np.diag(niw.scale) / max(niw.dof - real.shape[1] - 1.0, 1.0))
    u, w = np.polynomial.legendre.leggauss(nodes)
    theta = 0.5 * np.pi * u * 0.999999
    grids, logw = [], []
    for (_, j) in holes:
        grids.append(centre[j] + sd[j] * np.tan(theta))
        logw.append(np.log(w * 0.5 * np.pi * 0.999999 * sd[j] / np.cos(theta) ** 2))
    mesh = np.meshgrid(*grids, indexing="ij")
    lw = sum(np.meshgrid(*logw, indexing="ij")).ravel()
    blocks = np.repeat(real[None], mesh[0].size, axis=0)
    for (i, j), g in zip(holes, mesh):
        blocks[:, i, j] = g.ravel()
    return float(logsumexp(_niw_log_marginal_batched(niw, blocks) + lw))


def test_same_pattern_marginal_is_the_sub_prior_and_quadrature_is_accurate():
    # rows that all miss one coordinate: (mu_o, Sigma_oo) ~ NIW(m0_o, k0, nu0 - d_m, S0_oo)
    fam, X = resolved(HOLES)
    niw = fam.niw_
    m0, kappa0, nu0, S0 = niw._hyper()
    rows = np.array([[0.3, np.nan], [0.8, np.nan]])
    sub = NormalInverseWishart(mean=m0[:1], kappa=kappa0, dof=nu0 - 1.0, scale=S0[:1, :1])
    want = sub.log_marginal(sub.stats(rows[:, :1]))[0]
    assert _block_log_marginal(niw, rows) == pytest.approx(want, abs=1e-6)
    assert _block_log_marginal(niw, rows[:1]) == pytest.approx(
        fam.log_prior_predictive(fam.validate(pd.DataFrame(
            {"height": [0.3], "weight": [np.nan]})))[0], abs=1e-7)


def _exact_partition_posterior(fam, X, log_prior):
    """``p(partition | X)`` over the 52 partitions of five rows: the real block's marginal
    by :func:`_block_log_marginal`, the other columns' in closed form."""
    from dpclust.families import _table_math as _m

    parts = set_partitions(len(X))
    cache = {}

    def block(members):
        key = tuple(members)
        if key not in cache:
            sub = X[np.asarray(members)]
            rest = _m.table_stats(fam._rest(sub), np.zeros(len(sub), np.intp), 1,
                                  fam.hyper.offsets)
            cache[key] = (_block_log_marginal(fam.niw_, sub.real)
                          + _m.log_marginal(rest, fam.hyper)[0])
        return cache[key]

    logp = np.empty(len(parts))
    for j, row in enumerate(parts):
        k = int(row.max()) + 1
        sizes = np.bincount(row, minlength=k)
        logp[j] = log_prior(sizes) + sum(block(np.flatnonzero(row == c)) for c in range(k))
    return parts, np.exp(logp - logsumexp(logp))


def _tv(sampler, fam, X, n_steps, seed, log_prior, alpha=1.0):
    parts, exact = _exact_partition_posterior(fam, X, log_prior)
    assert exact.max() < 0.6
    draws = run_chain(sampler, MixtureModel(fam, X, None), np.random.default_rng(seed), n_steps,
                      burn_in=100, init_kwargs={"alpha": alpha, "n_clusters": 1})
    return total_variation(partition_frequencies(draws, parts), exact)


def test_explicit_gibbs_matches_the_exact_posterior_short():
    fam, X = resolved(HOLES)
    # 1,500 steps (a few ms each on five rows): a coarse check; the slow test is tight
    assert _tv(ExplicitGibbs(), fam, X, 1_500, seed=1,
               log_prior=lambda s: crp_log_prior(s, 1.0)) < 0.12


@pytest.mark.slow
def test_explicit_gibbs_matches_the_exact_posterior():
    for df, seed in ((HOLES, 2), (MIXED, 3)):
        fam, X = resolved(df)
        # measured 0.026 on HOLES and 0.022 on MIXED (20,000 steps, 2-4 min on a shared core)
        assert _tv(ExplicitGibbs(), fam, X, 20_000, seed=seed,
                   log_prior=lambda s: crp_log_prior(s, 1.0)) < 0.03, df.columns


@pytest.mark.slow
def test_fsd_matches_the_finite_mixture_posterior():
    fam, X = resolved(MIXED)
    k = 3
    # measured 0.042 at 20,000 steps (seed 6); 40,000 as the product's FSD test takes: not
    # yet run, so whether the gap is mixing (augmentation slows the parameters) or an error
    # is open
    assert _tv(FiniteSymmetricDirichlet(n_components=k), fam, X, 40_000, seed=6, alpha=1.5,
               log_prior=lambda s: finite_dirichlet_log_prior(s, 1.5, k)) < 0.03


def test_collapsed_samplers_given_the_missing_cells_match_the_exact_posterior_short():
    """Gibbs+SAMS on the completed rows, the missing cells drawn each iteration
    (:mod:`dpclust.samplers.augmented`): a coarse check as the explicit sampler's above."""
    fam, X = resolved(HOLES)
    assert _tv(get_sampler("gibbs+sams", 5, fam), fam, X, 1_500, seed=1,
               log_prior=lambda s: crp_log_prior(s, 1.0)) < 0.12


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs", "gibbs+sams", "subcluster"])
def test_collapsed_samplers_given_the_missing_cells_match_the_exact_posterior(name):
    # the sub-cluster sampler's imputed cells mix slowest: TV 0.034 at 20,000 steps of one
    # chain, 0.045 of two halves, 0.032 at 30,000 in two halves (HOLES, seed 2)
    steps = 30_000 if name == "subcluster" else 20_000
    for df, seed in ((HOLES, 2), (MIXED, 3)):
        fam, X = resolved(df)
        assert _tv(get_sampler(name, 5, fam), fam, X, steps, seed=seed,
                   log_prior=lambda s: crp_log_prior(s, 1.0)) < 0.04, df.columns


# ------------------------------------- parameter draws against closed-form moments
def _moments_same_pattern(niw, rows, o):
    """``E[mu]`` and ``E[Sigma]`` under ``p(theta | rows)`` for rows that all observe the
    coordinates ``o`` only: ``(mu_o, Sigma_oo)`` has the sub-prior's NIW posterior, and
    ``B = Sigma_mo Sigma_oo^-1``, ``Sigma_m|o`` and ``mu_m - B mu_o`` keep their prior
    (independent of the observed block under the NIW prior)."""
    m0, kappa0, nu0, S0 = niw._hyper()
    d = len(m0)
    m = np.setdiff1d(np.arange(d), o)
    do, dm = len(o), len(m)
    xo = rows[:, o]
    r = len(xo)
    kn, nn = kappa0 + r, nu0 - dm + r
    xbar = xo.mean(axis=0) if r else m0[o]
    mn = (kappa0 * m0[o] + r * xbar) / kn
    c = xo - xbar
    diff = xbar - m0[o]
    Sn = S0[np.ix_(o, o)] + c.T @ c + (kappa0 * r / kn) * np.outer(diff, diff)
    E_oo = Sn / (nn - do - 1.0)
    M = S0[np.ix_(m, o)] @ np.linalg.inv(S0[np.ix_(o, o)])
    S_mgo = S0[np.ix_(m, m)] - M @ S0[np.ix_(o, m)]
    E_mgo = S_mgo / (nu0 - dm - 1.0)
    mu = np.empty(d)
    mu[o], mu[m] = mn, m0[m] + M @ (mn - m0[o])
    cov = np.empty((d, d))
    cov[np.ix_(o, o)] = E_oo
    cov[np.ix_(m, o)] = M @ E_oo
    cov[np.ix_(o, m)] = (M @ E_oo).T
    cov[np.ix_(m, m)] = (E_mgo + M @ E_oo @ M.T
                         + E_mgo * np.trace(np.linalg.solve(S0[np.ix_(o, o)], E_oo)))
    return mu, cov


def _check_moments(draws_mu, draws_cov, mu, cov, n_sd=4.5):
    for a, want in ((draws_mu, mu), (draws_cov, cov)):
        a = a.reshape(len(a), -1)
        se = a.std(axis=0) / np.sqrt(len(a))
        assert np.all(np.abs(a.mean(axis=0) - want.ravel()) < n_sd * se + 1e-9), \
            (a.mean(axis=0), want.ravel(), se)


def test_sample_given_one_is_exact():
    fam, X = resolved(HOLES, dof=9)
    rng = np.random.default_rng(3)
    for i, o in ((1, np.array([0])), (2, np.array([1])), (0, np.array([0, 1]))):
        draws = [fam.sample_given_one(X, i, rng) for _ in range(2500)]
        mu = np.array([p.g_mean[0] for p in draws])
        cov = np.array([p.g_cov[0] for p in draws])
        want_mu, want_cov = _moments_same_pattern(fam.niw_, X.real[[i]], o)
        _check_moments(mu, cov, want_mu, want_cov)


def test_update_params_leaves_the_cluster_posterior_invariant():
    # three rows that miss the same coordinate: the posterior moments are closed form
    df = pd.DataFrame({"height": [0.1, 0.3, 0.2, 2.0, 1.2],
                       "weight": [np.nan, np.nan, np.nan, 1.9, 1.1]})
    fam, X = resolved(df, dof=9)
    rng = np.random.default_rng(5)
    labels = np.array([0, 0, 0, 1, 1])
    params, mus, covs = None, [], []
    for t in range(4000):
        params = fam.update_params(X, labels, params, rng, 2)
        if t >= 100:
            mus.append(params.g_mean[0])
            covs.append(params.g_cov[0])
    mu, cov = _moments_same_pattern(fam.niw_, X.real[:3], np.array([0]))
    # the chain's draws are correlated: a wider band than for independent draws
    _check_moments(np.array(mus), np.array(covs), mu, cov, n_sd=8.0)


# ------------------------------------------------------------------ estimator
@pytest.mark.filterwarnings("ignore:DPMixture. the run has not converged")
def test_dpmixture_fits_and_predicts_rows_with_holes():
    from dpclust import DPMixture

    rng = np.random.default_rng(0)
    a = rng.normal(size=(60, 2)) @ np.array([[1.0, 0.8], [0.0, 0.4]])
    b = rng.normal(size=(60, 2)) * 0.5 + np.array([4.0, -2.0])
    data = np.vstack([a, b])
    data[rng.random(data.shape) < 0.15] = np.nan
    df = pd.DataFrame(data, columns=["x", "y"])
    est = DPMixture(family=TableFamily(covariance="full"), n_iter=60, burn_in=20,
                    random_state=0, n_chains=1).fit(df)
    assert type(est.family_) is GaussianTableHoles
    truth = np.repeat([0, 1], 60)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(truth, est.labels_) > 0.8
    new = pd.DataFrame({"x": [np.nan, 4.1, 0.2], "y": [-2.1, np.nan, np.nan]})
    proba = est.predict_proba(new)
    assert proba.shape == (3, est.n_clusters_) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.all(np.isfinite(est.score_samples(new)))
    assert est.predict(new)[0] == est.predict(new)[1]
    assert "covariances" in est.cluster_params_
