"""Family maths against scipy and against the identities of the contract (STYLE.md habit 12).

Layer one of the test pyramid: every operation of :class:`NormalInverseWishart` and
:class:`DirichletMultinomial` -- the batched NumPy face and the numba kernel face -- is checked
against an independent computation (scipy distributions, the textbook update formulas of
ALGORITHMS.md section 1, a hand-worked example) and against identities that must hold
whatever the numbers:

* ``log_marginal(X) == sum_i log_predictive(x_i | x_<i)`` and ``log_marginal(empty) == 0``;
* ``stats(A u B) == combine(stats(A), stats(B))``, ``subtract(stats(A u B), stats(B)) == stats(A)``;
* the kernel face agrees with the NumPy face after any sequence of adds and removes.

All randomness comes from fixed seeds; statistical checks use a few thousand draws and
thresholds (5 standard errors, KS p > 0.001) with margin.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats as st
from scipy.special import gammaln, logsumexp, multigammaln, poch

from dpclust.utils.checks import DataError
from dpclust.families import DirichletMultinomial, NormalInverseWishart, get_family
from dpclust.families._linalg import (
    chol_downdate,
    chol_update,
    gram_upper,
    log_det_chol,
    log_multigamma,
    lower_inverses,
    lower_times,
    padded,
    solve_lower,
)
from dpclust.families.base import concatenate, take
from dpclust.families._gaussian_kernels import _chol2_rank_one
from dpclust.families.gaussian import GaussianParams
from dpclust.families._multinomial_kernels import _log_rising
from dpclust.families.multinomial import MultinomialParams, log_multinomial_coefficients

DIMS = [1, 2, 3, 5]  # d == 2 runs the unrolled kernels, the others the generic loops
PRIORS = ["explicit", "default"]
N_POINTS = 40

# ============================================================================================
# helpers: Gaussian


def _random_spd(rng, d, scale=1.0):
    A = rng.normal(size=(d, d))
    return scale * (A @ A.T / d + 0.5 * np.eye(d))


def _gaussian_data(d, n=N_POINTS, seed=0):
    """Correlated data away from the origin, so that no formula gets a free zero."""
    rng = np.random.default_rng(seed)
    C = np.linalg.cholesky(_random_spd(rng, d, scale=2.0))
    offset = rng.normal(3.0, 2.0, size=d)
    return offset + rng.normal(size=(n, d)) @ C.T


def _gaussian_family(d, prior, X, seed=1):
    if prior == "explicit":
        rng = np.random.default_rng(seed + 100 * d)
        fam = NormalInverseWishart(mean=rng.normal(size=d), kappa=0.7, dof=d + 1.5,
                                   scale=_random_spd(rng, d))
    else:
        fam = NormalInverseWishart()
    return fam.resolve(X)


@pytest.fixture(params=[(d, p) for d in DIMS for p in PRIORS],
                ids=[f"d{d}-{p}" for d in DIMS for p in PRIORS])
def gaussian(request):
    d, prior = request.param
    X = _gaussian_data(d, seed=10 + d)
    return _gaussian_family(d, prior, X), X


def _hyper(fam):
    return (np.asarray(fam.mean, float), float(fam.kappa), float(fam.dof),
            np.asarray(fam.scale, float))


def _niw_textbook(fam, X):
    """kappa_n, nu_n, m_n, S_n from the raw points by the formulas of ALGORITHMS.md section 1."""
    m0, k0, nu0, S0 = _hyper(fam)
    n = X.shape[0]
    if n == 0:
        return k0, nu0, m0.copy(), S0.copy()
    xbar = X.mean(axis=0)
    scatter = (X - xbar).T @ (X - xbar)
    kn = k0 + n
    nun = nu0 + n
    mn = (k0 * m0 + n * xbar) / kn
    Sn = S0 + scatter + (k0 * n / kn) * np.outer(xbar - m0, xbar - m0)
    return kn, nun, mn, Sn


def _niw_log_marginal_textbook(fam, X):
    m0, k0, nu0, S0 = _hyper(fam)
    n, d = X.shape[0], m0.shape[0]
    kn, nun, _, Sn = _niw_textbook(fam, X)
    return (-0.5 * n * d * math.log(math.pi) + multigammaln(nun / 2, d) - multigammaln(nu0 / 2, d)
            + 0.5 * nu0 * np.linalg.slogdet(S0)[1] - 0.5 * nun * np.linalg.slogdet(Sn)[1]
            + 0.5 * d * (math.log(k0) - math.log(kn)))


def _student_t_logpdf(fam, Y, X):
    """log f(y | X) by scipy's multivariate t with the textbook posterior."""
    d = Y.shape[1]
    kn, nun, mn, Sn = _niw_textbook(fam, X)
    df = nun - d + 1
    shape = Sn * (kn + 1) / (kn * df)
    return np.atleast_1d(st.multivariate_t.logpdf(Y, loc=mn, shape=shape, df=df))


def _assert_gaussian_stats_equal(a, b, rtol=1e-10, atol=1e-8):
    np.testing.assert_allclose(a.n, b.n, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.mean, b.mean, rtol=rtol, atol=atol)
    np.testing.assert_allclose(a.scatter, b.scatter, rtol=rtol, atol=atol)


# ============================================================================================
# Gaussian: predictive, marginal, statistics


def test_gaussian_log_predictive_is_scipy_multivariate_t(gaussian):
    fam, X = gaussian
    d = X.shape[1]
    Y = _gaussian_data(d, n=7, seed=99)
    # clusters of 0, 1, 5 and all points, batched in one call
    sizes = [0, 1, 5, N_POINTS]
    stats = concatenate(*(fam.stats(X[:m]) for m in sizes))
    got = fam.log_predictive(Y, stats)
    assert got.shape == (7, len(sizes))
    for k, m in enumerate(sizes):
        np.testing.assert_allclose(got[:, k], _student_t_logpdf(fam, Y, X[:m]), rtol=1e-10,
                                   atol=1e-10)


def test_gaussian_log_marginal_sequential_identity(gaussian):
    fam, X = gaussian
    log_marginal = fam.log_marginal(fam.stats(X))[0]
    sequential = sum(fam.log_predictive(X[i:i + 1], fam.stats(X[:i]))[0, 0]
                     for i in range(X.shape[0]))
    np.testing.assert_allclose(log_marginal, sequential, rtol=1e-10)
    # ... and against the closed form written out from ALGORITHMS.md
    np.testing.assert_allclose(log_marginal, _niw_log_marginal_textbook(fam, X), rtol=1e-10)


def test_gaussian_log_marginal_of_empty_is_zero(gaussian):
    fam, X = gaussian
    np.testing.assert_allclose(fam.log_marginal(fam.empty_stats(3)), 0.0, atol=1e-12)
    np.testing.assert_allclose(fam.log_marginal(fam.stats(X[:0])), 0.0, atol=1e-12)


def test_gaussian_batched_log_marginal_matches_per_cluster(gaussian):
    fam, X = gaussian
    labels = np.random.default_rng(3).integers(0, 3, size=X.shape[0])
    batched = fam.log_marginal(fam.stats(X, labels, 4))  # cluster 3 is empty
    for k in range(3):
        np.testing.assert_allclose(batched[k], _niw_log_marginal_textbook(fam, X[labels == k]),
                                   rtol=1e-10)
    assert batched[3] == pytest.approx(0.0, abs=1e-12)


def test_gaussian_stats_combine_subtract(gaussian):
    fam, X = gaussian
    A, B = X[:25], X[25:]
    whole = fam.stats(X)
    _assert_gaussian_stats_equal(fam.combine(fam.stats(A), fam.stats(B)), whole)
    _assert_gaussian_stats_equal(fam.subtract(whole, fam.stats(B)), fam.stats(A))
    _assert_gaussian_stats_equal(fam.subtract(whole, fam.stats(A)), fam.stats(B))
    # with an empty set on either side, and removing everything
    empty = fam.empty_stats(1)
    _assert_gaussian_stats_equal(fam.combine(empty, fam.stats(A)), fam.stats(A))
    _assert_gaussian_stats_equal(fam.combine(fam.stats(A), empty), fam.stats(A))
    _assert_gaussian_stats_equal(fam.subtract(whole, whole), empty)
    with pytest.raises(ValueError):
        fam.subtract(fam.stats(A), whole)


def test_gaussian_stats_add_remove_single_points(gaussian):
    fam, X = gaussian
    stats = fam.empty_stats(1)
    for i in range(10):
        stats = fam.add(stats, X[i:i + 1])
        _assert_gaussian_stats_equal(stats, fam.stats(X[:i + 1]))
    for i in range(9, -1, -1):
        stats = fam.remove(stats, X[i:i + 1])
        _assert_gaussian_stats_equal(stats, fam.stats(X[:i]))
    # add/remove act on every cluster of a batch
    two = concatenate(fam.stats(X[:5]), fam.stats(X[5:12]))
    added = fam.add(two, X[20:21])
    _assert_gaussian_stats_equal(take(added, [0]), fam.stats(X[[0, 1, 2, 3, 4, 20]]))
    _assert_gaussian_stats_equal(take(added, [1]), fam.stats(X[[5, 6, 7, 8, 9, 10, 11, 20]]))


def test_gaussian_batched_stats_with_labels(gaussian):
    fam, X = gaussian
    labels = np.random.default_rng(4).integers(0, 4, size=X.shape[0])
    labels[labels == 2] = 1  # cluster 2 is empty
    batched = fam.stats(X, labels, 5)
    assert batched.n.shape == (5,)
    for k in range(5):
        _assert_gaussian_stats_equal(take(batched, [k]), fam.stats(X[labels == k]))
    # n_clusters defaults to labels.max() + 1
    assert len(fam.count(fam.stats(X, labels))) == labels.max() + 1


@pytest.mark.parametrize("d", [2, 3, 9])
def test_stats_at_rows_matches_stats_of_the_subset(d):
    """``stats_at`` (compiled below 8 features, reading rows where they are) gives the
    statistics of the copied rows; the multinomial family uses the base default."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(400, d)) * 3.0 + 5.0
    fam = NormalInverseWishart().resolve(X)
    rows = rng.choice(400, 150, replace=False)
    labels = rng.integers(0, 3, size=150)  # slot 3 stays empty
    got = fam.stats_at(X, rows, labels, 4)
    want = fam.stats(X[rows], labels, 4)
    np.testing.assert_array_equal(got.n, want.n)
    np.testing.assert_allclose(got.mean, want.mean, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got.scatter, want.scatter, rtol=1e-11, atol=1e-10)
    D = sp.random(50, 20, density=0.3, random_state=1, format="csr") * 10
    D.data = np.ceil(D.data)
    dm = DirichletMultinomial().resolve(D)
    Dw = dm.validate(D)
    got = dm.stats_at(Dw, rows[rows < 50], np.zeros((rows < 50).sum(), dtype=np.int64), 1)
    np.testing.assert_allclose(dm.count(got), [(rows < 50).sum()])


def test_gaussian_posterior_matches_textbook(gaussian):
    fam, X = gaussian
    labels = np.arange(X.shape[0]) % 3
    post = fam.posterior(fam.stats(X, labels, 4))
    for k in range(4):
        kn, nun, mn, Sn = _niw_textbook(fam, X[labels == k])
        assert post.kappa[k] == pytest.approx(kn, rel=1e-14)
        assert post.dof[k] == pytest.approx(nun, rel=1e-14)
        np.testing.assert_allclose(post.mean[k], mn, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(post.scale[k], Sn, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(post.scale_chol[k] @ post.scale_chol[k].T, Sn, rtol=1e-10,
                                   atol=1e-10)
        assert np.allclose(post.scale_chol[k], np.tril(post.scale_chol[k]))


def test_gaussian_mean_params(gaussian):
    fam, X = gaussian
    d = X.shape[1]
    labels = np.arange(X.shape[0]) % 2
    out = fam.mean_params(fam.stats(X, labels, 3))
    for k in range(3):
        _, nun, mn, Sn = _niw_textbook(fam, X[labels == k])
        np.testing.assert_allclose(out["means"][k], mn, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out["covariances"][k], Sn / (nun - d - 1), rtol=1e-10,
                                   atol=1e-12)


def test_gaussian_mean_params_without_finite_mean_reports_scale_over_dof():
    # nu0 = d - 0.5 is a valid prior but E[Sigma] does not exist: the docstring promises S/nu
    d = 3
    S0 = np.diag([1.0, 2.0, 3.0])
    fam = NormalInverseWishart(mean=np.zeros(d), kappa=1.0, dof=d - 0.5, scale=S0).resolve(
        np.zeros((2, d)))
    out = fam.mean_params(fam.empty_stats(1))
    np.testing.assert_allclose(out["covariances"][0], S0 / (d - 0.5))


# ============================================================================================
# Gaussian: posterior draws, likelihood, data draws

N_DRAWS = 4000


def _ks_ok(a, b):
    return st.ks_2samp(a, b).pvalue > 1e-3


def test_gaussian_sample_posterior_is_niw(gaussian):
    fam, X = gaussian
    d = X.shape[1]
    data = X[:20]
    kn, nun, mn, Sn = _niw_textbook(fam, data)
    stats = take(fam.stats(data), np.zeros(N_DRAWS, dtype=np.intp))
    params = fam.sample_posterior(stats, np.random.default_rng(2024 + d))
    assert params.mean.shape == (N_DRAWS, d)
    assert params.cov.shape == params.chol.shape == (N_DRAWS, d, d)
    np.testing.assert_allclose(params.chol @ np.swapaxes(params.chol, 1, 2), params.cov,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(params.cov, np.swapaxes(params.cov, 1, 2), atol=1e-12)

    # Sigma ~ InvWishart(nu_n, S_n): mean S_n / (nu_n - d - 1) within 5 standard errors
    Sigma = params.cov
    se = Sigma.std(axis=0, ddof=1) / math.sqrt(N_DRAWS)
    assert np.all(np.abs(Sigma.mean(axis=0) - Sn / (nun - d - 1)) < 5 * se)
    ref = st.invwishart(df=nun, scale=Sn).rvs(size=N_DRAWS, random_state=7 + d)
    ref = np.asarray(ref).reshape(N_DRAWS, d, d)
    assert _ks_ok(Sigma[:, 0, 0], ref[:, 0, 0])
    assert _ks_ok(Sigma[:, -1, 0], ref[:, -1, 0])
    assert _ks_ok(np.linalg.slogdet(Sigma)[1], np.linalg.slogdet(ref)[1])

    # mu | Sigma ~ N(m_n, Sigma / kappa_n)
    mu = params.mean
    se_mu = mu.std(axis=0, ddof=1) / math.sqrt(N_DRAWS)
    assert np.all(np.abs(mu.mean(axis=0) - mn) < 5 * se_mu)
    z = np.linalg.solve(params.chol, (mu - mn)[:, :, None])[:, :, 0] * math.sqrt(kn)
    for j in {0, d - 1}:
        assert st.kstest(z[:, j], "norm").pvalue > 1e-3
    # the standardised coordinates are uncorrelated with unit variance
    np.testing.assert_allclose(np.cov(z, rowvar=False).reshape(d, d), np.eye(d), atol=0.1)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_gaussian_sample_prior_draws_from_the_prior(d):
    fam = _gaussian_family(d, "explicit", _gaussian_data(d))
    S0 = np.asarray(fam.scale)
    K = 2000
    params = fam.sample_prior(np.random.default_rng(5), n_clusters=K)
    ref = np.asarray(st.invwishart(df=fam.dof, scale=S0).rvs(size=K, random_state=6))
    assert _ks_ok(np.linalg.slogdet(params.cov)[1], np.linalg.slogdet(ref.reshape(-1, d, d))[1])
    assert _ks_ok(params.mean[:, 0], np.asarray(fam.mean)[0] + np.sqrt(
        ref.reshape(-1, d, d)[:, 0, 0] / fam.kappa) * np.random.default_rng(7).normal(size=K))


def test_gaussian_sample_posterior_reproducible(gaussian):
    fam, X = gaussian
    stats = fam.stats(X, np.arange(X.shape[0]) % 3, 3)
    a = fam.sample_posterior(stats, np.random.default_rng(11))
    b = fam.sample_posterior(stats, np.random.default_rng(11))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def _some_gaussian_params(d, K=3, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(K, d)) * 3
    covs = np.stack([_random_spd(rng, d) for _ in range(K)])
    return GaussianParams(means, covs, np.linalg.cholesky(covs))


@pytest.mark.parametrize("d", DIMS)
def test_gaussian_log_likelihood_is_scipy_multivariate_normal(d):
    fam = NormalInverseWishart().resolve(_gaussian_data(d))
    params = _some_gaussian_params(d)
    Y = _gaussian_data(d, n=9, seed=5) / 2
    got = fam.log_likelihood(Y, params)
    assert got.shape == (9, 3)
    for k in range(3):
        ref = st.multivariate_normal.logpdf(Y, mean=params.mean[k], cov=params.cov[k])
        np.testing.assert_allclose(got[:, k], ref, rtol=1e-10)
    # also for parameters drawn by the family itself
    drawn = fam.sample_posterior(fam.stats(Y, np.arange(9) % 2, 2), np.random.default_rng(1))
    got = fam.log_likelihood(Y, drawn)
    for k in range(2):
        ref = st.multivariate_normal.logpdf(Y, mean=drawn.mean[k], cov=drawn.cov[k])
        np.testing.assert_allclose(got[:, k], ref, rtol=1e-9)


@pytest.mark.parametrize("d", DIMS)
def test_gaussian_sample_data_moments(d):
    fam = NormalInverseWishart().resolve(_gaussian_data(d))
    params = _some_gaussian_params(d, K=2, seed=d)
    n_each = 10_000
    components = np.repeat([0, 1], n_each)
    Y = fam.sample_data(params, components, np.random.default_rng(8))
    assert Y.shape == (2 * n_each, d)
    for k in range(2):
        Yk = Y[components == k]
        cov = params.cov[k]
        se_mean = np.sqrt(np.diag(cov) / n_each)
        assert np.all(np.abs(Yk.mean(axis=0) - params.mean[k]) < 5 * se_mean)
        var = np.diag(cov)
        se_cov = np.sqrt((np.outer(var, var) + cov ** 2) / n_each)
        assert np.all(np.abs(np.cov(Yk, rowvar=False).reshape(d, d) - cov) < 6 * se_cov)


# ============================================================================================
# Gaussian: resolve()


@pytest.mark.parametrize("d", DIMS)
def test_gaussian_resolve_defaults(d):
    X = _gaussian_data(d, n=60, seed=d)
    fam = NormalInverseWishart()
    assert not fam.is_resolved
    res = fam.resolve(X)
    assert res.is_resolved and res is not fam
    assert fam.mean is None and fam.scale is None  # the original is left unresolved
    np.testing.assert_allclose(res.mean, X.mean(axis=0))
    assert res.dof == d + 2
    assert res.kappa == 0.01
    # (dof - d - 1) * C / 10^(2/d) with C the empirical covariance (up to a 1e-6 ridge):
    # a cluster fills a tenth of the data's volume
    C = np.atleast_2d(np.cov(X, rowvar=False))
    np.testing.assert_allclose(res.scale, (res.dof - d - 1) * C / 10 ** (2 / d), rtol=1e-5,
                               atol=1e-5 * np.trace(C) / d)
    assert res.n_features() == d


def test_gaussian_resolve_keeps_explicit_values():
    X = _gaussian_data(3)
    S0 = np.diag([1.0, 2.0, 3.0])
    res = NormalInverseWishart(mean=[1, 2, 3], kappa=2, dof=7, scale=S0).resolve(X)
    np.testing.assert_array_equal(res.mean, [1.0, 2.0, 3.0])
    assert (res.kappa, res.dof) == (2.0, 7.0)
    np.testing.assert_array_equal(res.scale, S0)
    # an explicit dof changes the default scale by the factor dof - d - 1
    res = NormalInverseWishart(dof=9).resolve(X)
    np.testing.assert_allclose(res.scale, 5 * np.cov(X, rowvar=False) / 10 ** (2 / 3), rtol=1e-5)


@pytest.mark.parametrize("kwargs, match", [
    ({"mean": np.zeros(2)}, r"mean has shape \(2,\), expected \(3,\)"),
    ({"mean": np.zeros((3, 1))}, "mean has shape"),
    ({"scale": np.eye(2)}, r"scale has shape \(2, 2\), expected \(3, 3\)"),
    ({"scale": np.diag([1.0, -1.0, 1.0])}, "positive definite"),
    ({"scale": np.ones((3, 3))}, "positive definite"),
    ({"scale": np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])}, "symmetric"),
    ({"dof": 2.0}, r"dof must exceed n_features - 1 = 2"),
    ({"dof": 1.0}, "dof"),
    ({"kappa": 0.0}, "kappa must be positive"),
    ({"kappa": -1.0}, "kappa"),
])
def test_gaussian_resolve_rejects_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NormalInverseWishart(**kwargs).resolve(_gaussian_data(3))


@pytest.mark.parametrize("kwargs", [
    {"mean": [np.nan, 0.0, 0.0]},
    {"mean": [np.inf, 0.0, 0.0]},
    {"kappa": np.inf},
    {"dof": np.inf},
    {"scale": np.diag([1.0, np.inf, 1.0])},
], ids=["nan-mean", "inf-mean", "inf-kappa", "inf-dof", "inf-scale"])
def test_gaussian_resolve_rejects_non_finite_hyperparameters(kwargs):
    # otherwise every log marginal is NaN and the samplers run on garbage (STYLE.md habit 8)
    with pytest.raises(ValueError, match="finite"):
        NormalInverseWishart(**kwargs).resolve(_gaussian_data(3))


def test_gaussian_unresolved_family_has_no_dimension():
    with pytest.raises(ValueError, match="resolved"):
        NormalInverseWishart().n_features()


@pytest.mark.parametrize("X", [
    np.column_stack([np.linspace(0, 1, 20), np.full(20, 4.0)]),           # a constant column
    np.column_stack([np.arange(20.0), 2 * np.arange(20.0), np.ones(20)]),  # rank one
    np.full((10, 3), 7.0),                                                 # all equal
    np.array([[1.0, 2.0, 3.0]]),                                           # one point
], ids=["constant-column", "rank-one", "constant", "one-point"])
def test_gaussian_resolve_singular_covariance_gives_pd_scale(X):
    res = NormalInverseWishart().resolve(X)
    assert np.all(np.linalg.eigvalsh(res.scale) > 0)
    np.linalg.cholesky(res.scale)
    assert np.all(np.isfinite(res.log_marginal(res.stats(X))))
    assert np.all(np.isfinite(res.log_predictive(X, res.stats(X))))


# ============================================================================================
# Gaussian and multinomial: the numba kernel face against the NumPy face


def _reference_slot(fam, X, members):
    if len(members):
        return fam.stats(fam.subset(X, np.asarray(members, dtype=np.intp)))
    return fam.empty_stats(1)


def _check_kernel_against_numpy(fam, X, kern, kstats, slots, probe, rtol):
    for k, members in enumerate(slots):
        ref = _reference_slot(fam, X, members)
        lm = kern.log_marginal(kstats, k, kern.hyper)
        np.testing.assert_allclose(lm, fam.log_marginal(ref)[0], rtol=rtol, atol=rtol,
                                   err_msg=f"log_marginal of slot {k} ({len(members)} points)")
        expected = fam.log_predictive(fam.subset(X, probe), ref)[:, 0]
        got = [kern.log_predictive(kern.data, int(i), kstats, k, kern.hyper) for i in probe]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol,
                                   err_msg=f"log_predictive of slot {k} ({len(members)} points)")
    if kern.log_predictives is not None:  # every slot at once: the very same values
        order = np.arange(len(slots))[::-1].copy()
        out = np.empty(len(slots) + 1)
        for i in probe:
            kern.log_predictives(kern.data, int(i), kstats, order, 0, len(slots), kern.hyper,
                                 out)
            each = [kern.log_predictive(kern.data, int(i), kstats, int(k), kern.hyper)
                    for k in order]
            np.testing.assert_array_equal(out[:len(slots)], each)


def _run_kernel_sequence(fam, X, seed, n_moves=300, capacity=8, rtol=1e-8, check_every=25,
                         by_point=False):
    """Random adds, removes and moves between slots; slot 0 is emptied and refilled midway
    (``by_point``: in the layout of ``alloc_by_point``)."""
    rng = np.random.default_rng(seed)
    N = fam.n_points(X)
    kern = fam.kernel(X)
    kstats = (kern.alloc_by_point if by_point else kern.alloc)(capacity)
    for k in range(capacity):
        kern.reset(kstats, k, kern.hyper)
    slots = [[] for _ in range(capacity)]
    where = np.full(N, -1)

    def add(i, k):
        kern.add(kern.data, int(i), kstats, k, kern.hyper)
        slots[k].append(int(i))
        where[i] = k

    def remove(i):
        k = int(where[i])
        kern.remove(kern.data, int(i), kstats, k, kern.hyper)
        slots[k].remove(int(i))
        where[i] = -1

    probe = rng.choice(N, size=min(N, 6), replace=False)
    # empty slots are the prior predictive
    _check_kernel_against_numpy(fam, X, kern, kstats, slots, probe, rtol)
    for i in range(min(20, N)):          # fill slot 0 one point at a time, checking each step
        add(i, 0)
        _check_kernel_against_numpy(fam, X, kern, kstats, slots[:1], probe, rtol)
    for move in range(n_moves):
        i = int(rng.integers(N))
        if where[i] >= 0:
            remove(i)
            if rng.random() < 0.5:
                add(i, int(rng.integers(capacity)))
        else:
            add(i, int(rng.integers(capacity)))
        if move == n_moves // 2:
            for j in list(slots[0]):     # empty slot 0 completely ...
                remove(j)
            assert slots[0] == []
            # up to rounding (sum_w lgamma(beta_w) is summed in another order): the prior
            _check_kernel_against_numpy(fam, X, kern, kstats, slots[:1], probe, 1e-11)
            for j in np.flatnonzero(where < 0)[:5]:  # ... and refill it
                add(j, 0)
        if move % check_every == 0:
            _check_kernel_against_numpy(fam, X, kern, kstats, slots, probe, rtol)
    assert sum(len(s) for s in slots) == np.sum(where >= 0)
    _check_kernel_against_numpy(fam, X, kern, kstats, slots, np.arange(N), rtol)
    return kern, kstats, slots


def test_gaussian_kernel_matches_numpy_face(gaussian):
    fam, X = gaussian
    kern, kstats, slots = _run_kernel_sequence(fam, X, seed=X.shape[1])
    # a slot emptied by removals equals a freshly reset one, which is the prior predictive
    k = 1
    for i in list(slots[k]):
        kern.remove(kern.data, i, kstats, k, kern.hyper)
    prior = fam.log_predictive(X, fam.empty_stats(1))[:, 0]
    got = [kern.log_predictive(kern.data, i, kstats, k, kern.hyper) for i in range(len(X))]
    np.testing.assert_allclose(got, prior, rtol=1e-12, atol=1e-12)
    assert kern.log_marginal(kstats, k, kern.hyper) == pytest.approx(0.0, abs=1e-12)


def test_gaussian_kernel_stable_far_from_origin_and_over_long_sequences():
    # large offset and a wide range of scales: rank-one downdates must not drift
    for d in (2, 4):
        rng = np.random.default_rng(d)
        X = 1e3 + rng.normal(size=(60, d)) * np.logspace(-1, 1, d)
        fam = NormalInverseWishart().resolve(X)
        _run_kernel_sequence(fam, X, seed=d, n_moves=1500, check_every=500)


def test_gaussian_kernel_alloc_layout():
    X = _gaussian_data(3)
    kern = NormalInverseWishart().resolve(X).kernel(X)
    kstats = kern.alloc(5)
    assert isinstance(kstats, tuple)
    assert all(a.shape[0] == 5 for a in kstats)   # slot-first, scratch included


# ============================================================================================
# _linalg: rank-one Cholesky update and downdate


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6])
def test_chol_update_and_downdate(d):
    rng = np.random.default_rng(d)
    for trial in range(5):
        M = _random_spd(rng, d, scale=10.0 ** rng.uniform(-2, 2))
        L = np.linalg.cholesky(M)
        v = rng.normal(size=d) * math.sqrt(np.trace(M) / d)

        L1 = L.copy()
        ratio = chol_update(L1, v.copy())
        Mp = M + np.outer(v, v)
        np.testing.assert_allclose(L1, np.linalg.cholesky(Mp), rtol=1e-10, atol=1e-12)
        assert ratio ** 2 == pytest.approx(np.linalg.det(Mp) / np.linalg.det(M), rel=1e-10)

        # downdate back: exactly the inverse operation
        L2 = L1.copy()
        ratio_down = chol_downdate(L2, v.copy())
        np.testing.assert_allclose(L2, L, rtol=1e-9, atol=1e-12)
        assert ratio * ratio_down == pytest.approx(1.0, rel=1e-10)

        # a downdate that keeps M - w w^T positive definite: |L^{-1} w| = 0.9
        u = rng.normal(size=d)
        w = 0.9 * L @ (u / np.linalg.norm(u))
        Mm = M - np.outer(w, w)
        L3 = L.copy()
        ratio = chol_downdate(L3, w.copy())
        np.testing.assert_allclose(L3, np.linalg.cholesky(Mm), rtol=1e-9, atol=1e-12)
        assert ratio ** 2 == pytest.approx(np.linalg.det(Mm) / np.linalg.det(M), rel=1e-9)
        assert np.allclose(L3, np.tril(L3))


def test_chol2_rank_one_matches_generic_update():
    rng = np.random.default_rng(0)
    for _ in range(20):
        M = _random_spd(rng, 2)
        L = np.linalg.cholesky(M)
        v = rng.normal(size=2)
        for sign, fn in ((1.0, chol_update), (-1.0, chol_downdate)):
            if sign < 0:
                v = 0.8 * v / np.linalg.norm(np.linalg.solve(L, v))
            A, B = L.copy(), L.copy()
            r_unrolled = _chol2_rank_one(A, v[0], v[1], sign)
            r_generic = fn(B, v.copy())
            np.testing.assert_allclose(A, B, rtol=1e-12, atol=1e-14)
            assert r_unrolled == pytest.approx(r_generic, rel=1e-12)
            np.testing.assert_allclose(A @ A.T, M + sign * np.outer(v, v), rtol=1e-10,
                                       atol=1e-12)


def test_linalg_helpers():
    rng = np.random.default_rng(1)
    for d in range(1, 7):
        L = np.linalg.cholesky(_random_spd(rng, d))
        assert log_det_chol(L) == pytest.approx(np.linalg.slogdet(L @ L.T)[1], rel=1e-12,
                                                abs=1e-12)
        B = rng.normal(size=(d, 4))
        np.testing.assert_allclose(solve_lower(L, B), np.linalg.solve(L, B), rtol=1e-10,
                                   atol=1e-12)
        for a in (0.5 * d + 0.1, 3.7, 50.0):
            assert log_multigamma(a, d) == pytest.approx(multigammaln(a, d), rel=1e-12)


@pytest.mark.parametrize("d,n", [(1, 1), (3, 5), (9, 0), (64, 17), (64, 2048)])
def test_blas_helpers_match_numpy(d, n):
    """The BLAS calls of the blocked passes: ``trmm`` on the first n columns of a padded
    array (the padding and the upper triangle of P untouched and unread), ``syrk``'s upper
    triangle, and ``trtri`` inverses of a stack of factors."""
    rng = np.random.default_rng(d + n)
    P = np.tril(rng.normal(size=(d, d))) + 3.0 * np.eye(d)
    garbage = P + np.triu(np.full((d, d), 99.0), 1)
    ld = padded(n)
    assert ld >= n and ld % 8 == 0 and ld % 512 != 0
    Z = rng.normal(size=(d, ld))
    expected, tail = P @ Z[:, :n], Z[:, n:].copy()
    lower_times(garbage, Z, n)
    np.testing.assert_allclose(Z[:, :n], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(Z[:, n:], tail)

    Y = rng.normal(size=(n, d))
    S = np.full((d, d), 7.0)
    gram_upper(Y, S)
    upper = np.triu_indices(d)
    np.testing.assert_allclose(S[upper], (Y.T @ Y)[upper], rtol=1e-12, atol=1e-12)
    assert np.all(S[np.tril_indices(d, -1)] == 7.0)

    chol = np.linalg.cholesky(np.stack([_random_spd(rng, d) for _ in range(3)]))
    out = np.empty_like(chol)
    assert lower_inverses(chol, out) == -1
    np.testing.assert_allclose(out @ chol, np.broadcast_to(np.eye(d), chol.shape), atol=1e-10)
    assert np.all(np.triu(out, 1) == 0.0)
    chol[1, d - 1, d - 1] = 0.0
    assert lower_inverses(chol, out) == 1  # the singular factor is named


@pytest.mark.parametrize("d", [2, 3, 9])
def test_pass_kernel_unpacks_raw_statistics(d):
    """The passes' raw statistics (count, sum and upper triangle of the sum of outer
    products about the data's mean) unpack to the family's statistics; an empty slot gives
    zeros."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(300, d)) * 3.0 + 5.0
    fam = NormalInverseWishart().resolve(X)
    pk = fam.pass_kernel(X)
    shift = pk.data[1]
    labels = rng.integers(0, 3, size=len(X))  # slot 3 stays empty
    upper = np.triu_indices(d)
    acc = np.zeros((4, pk.n_stats))
    for x, k in zip(X, labels):
        y = x - shift
        acc[k, 0] += 1.0
        acc[k, 1:1 + d] += y
        acc[k, 1 + d:] += np.outer(y, y)[upper]
    got = pk.unpack(acc)
    want = fam.stats(X, labels, 4)
    np.testing.assert_array_equal(got.n, want.n)
    np.testing.assert_allclose(got.mean, want.mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.scatter, want.scatter, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(got.scatter, np.swapaxes(got.scatter, 1, 2))
    assert np.all(got.mean[3] == 0.0) and np.all(got.scatter[3] == 0.0)


# ============================================================================================
# Dirichlet-multinomial


V_SMALL = 12


def _count_data(n=30, V=V_SMALL, seed=0):
    """Documents with counts 1..12 and some with one word repeated 13..40 times (lgamma
    branch of ``_log_rising``), plus an empty document; canonical CSR via ``validate``."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(V))
    dense = np.stack([rng.multinomial(rng.integers(1, 15), p) for _ in range(n)]).astype(float)
    dense[3, 2] += 25
    dense[7, 0] = 13
    dense[11, 5] += 40
    dense[13, :] = 0          # an empty document
    dense[17, 4] = 12         # exactly at the branch boundary
    assert dense.max() > 12 and np.any((dense >= 1) & (dense <= 12))
    return dense


def _dm_family(concentration, X):
    return DirichletMultinomial(concentration).resolve(X)


DM_PRIORS = {
    "scalar-1": 1.0,
    "scalar-0.05": 0.05,
    "vector": np.linspace(0.1, 3.0, V_SMALL),
}


@pytest.fixture(params=list(DM_PRIORS), ids=list(DM_PRIORS))
def multinomial(request):
    dense = _count_data()
    fam = DirichletMultinomial(DM_PRIORS[request.param])
    X = fam.validate(dense)
    return fam.resolve(X), X, dense


def _dm_log_marginal_reference(beta, dense_rows):
    """sum_i log Mult(x_i) + the Dirichlet-multinomial term of the pooled counts, by hand."""
    dense_rows = np.atleast_2d(dense_rows)
    beta = np.broadcast_to(beta, dense_rows.shape[1])
    log_mult = sum(gammaln(r.sum() + 1) - gammaln(r + 1).sum() for r in dense_rows)
    n_w = dense_rows.sum(axis=0)
    B = beta.sum()
    return (log_mult + gammaln(B) - gammaln(B + n_w.sum())
            + (gammaln(beta + n_w) - gammaln(beta)).sum())


def test_dm_validate_returns_canonical_csr(multinomial):
    fam, X, dense = multinomial
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.has_canonical_format
    np.testing.assert_array_equal(X.toarray(), dense)


def test_dm_log_marginal_of_one_document_is_scipy_dirichlet_multinomial(multinomial):
    fam, X, dense = multinomial
    beta = fam.beta
    labels = np.arange(X.shape[0])
    got = fam.log_marginal(fam.stats(X, labels, X.shape[0]))
    for i in range(X.shape[0]):
        ref = st.dirichlet_multinomial.logpmf(dense[i], beta, int(dense[i].sum()))
        assert got[i] == pytest.approx(ref, rel=1e-10, abs=1e-10), i


def test_dm_log_marginal_of_a_set_is_coefficients_plus_pooled_term(multinomial):
    fam, X, dense = multinomial
    got = fam.log_marginal(fam.stats(X))[0]
    assert got == pytest.approx(_dm_log_marginal_reference(fam.beta, dense), rel=1e-12)
    np.testing.assert_allclose(fam.log_marginal(fam.empty_stats(2)), 0.0, atol=1e-12)


def test_dm_log_marginal_hand_worked_example():
    # V = 2, beta = (1, 1): theta ~ Uniform(0, 1) on the first word's probability.
    fam = DirichletMultinomial(1.0).resolve(sp.csr_matrix(np.ones((1, 2))))
    # docs (1,0), (0,1): P = E[theta (1 - theta)] = 1/2 - 1/3 = 1/6
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(-math.log(6), rel=1e-14)
    # docs (2,0), (1,1): P = E[theta^2 * 2 theta (1 - theta)] = 2 (1/4 - 1/5) = 1/10
    # (log Mult = 0 + log 2; pooled (3, 1): lgamma 2 - lgamma 6 + lgamma 4 + lgamma 2 = -log 20)
    X = sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 1.0]]))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(-math.log(10), rel=1e-14)
    # one doc (1,1): P = 2 E[theta (1 - theta)] = 1/3; prior predictive of it the same
    X = sp.csr_matrix(np.array([[1.0, 1.0]]))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(-math.log(3), rel=1e-14)
    assert fam.log_predictive(X, fam.empty_stats(1))[0, 0] == pytest.approx(-math.log(3))
    # after seeing (2,0): P((1,1) | (2,0)) = (1/10) / (1/3) = 3/10
    seen = fam.stats(sp.csr_matrix(np.array([[2.0, 0.0]])))
    assert fam.log_predictive(X, seen)[0, 0] == pytest.approx(math.log(0.3), rel=1e-13)


def test_dm_log_predictive_sequential_identity(multinomial):
    fam, X, dense = multinomial
    total = fam.log_marginal(fam.stats(X))[0]
    sequential = sum(fam.log_predictive(X[i], fam.stats(X[:i]))[0, 0] for i in range(X.shape[0]))
    assert total == pytest.approx(sequential, rel=1e-10)


def test_dm_log_predictive_batched_is_a_ratio_of_marginals(multinomial):
    fam, X, dense = multinomial
    labels = np.arange(X.shape[0]) % 3
    stats = fam.stats(X, labels, 4)   # cluster 3 empty
    got = fam.log_predictive(X, stats)
    assert got.shape == (X.shape[0], 4)
    for k in range(4):
        rows = dense[labels == k]
        base = _dm_log_marginal_reference(fam.beta, rows) if len(rows) else 0.0
        for i in (0, 3, 7, 11, 13, 17):
            joint = _dm_log_marginal_reference(fam.beta, np.vstack([rows, dense[i]]))
            assert got[i, k] == pytest.approx(joint - base, rel=1e-10, abs=1e-10)


def _assert_count_stats_equal(a, b):
    np.testing.assert_allclose(a.n, b.n, atol=1e-12)
    np.testing.assert_allclose(a.counts, b.counts, atol=1e-9)
    np.testing.assert_allclose(a.log_mult, b.log_mult, rtol=1e-12, atol=1e-10)


def test_dm_stats_combine_subtract_add_remove(multinomial):
    fam, X, dense = multinomial
    A, B = X[:12], X[12:]
    whole = fam.stats(X)
    _assert_count_stats_equal(fam.combine(fam.stats(A), fam.stats(B)), whole)
    _assert_count_stats_equal(fam.subtract(whole, fam.stats(B)), fam.stats(A))
    _assert_count_stats_equal(fam.subtract(whole, whole), fam.empty_stats(1))
    with pytest.raises(ValueError):
        fam.subtract(fam.stats(A), whole)
    stats = fam.empty_stats(1)
    for i in range(8):
        stats = fam.add(stats, X[i])
        _assert_count_stats_equal(stats, fam.stats(X[:i + 1]))
    for i in range(7, -1, -1):
        stats = fam.remove(stats, X[i])
        _assert_count_stats_equal(stats, fam.stats(X[:i]))
    np.testing.assert_array_equal(whole.counts[0], dense.sum(axis=0))
    assert whole.log_mult[0] == pytest.approx(
        sum(gammaln(r.sum() + 1) - gammaln(r + 1).sum() for r in dense), rel=1e-12)


def test_dm_batched_stats_with_labels(multinomial):
    fam, X, dense = multinomial
    labels = np.random.default_rng(2).integers(0, 4, size=X.shape[0])
    labels[labels == 1] = 0   # cluster 1 empty
    batched = fam.stats(X, labels, 5)
    for k in range(5):
        _assert_count_stats_equal(take(batched, [k]), fam.stats(X[np.flatnonzero(labels == k)]))
        np.testing.assert_array_equal(batched.counts[k], dense[labels == k].sum(axis=0))


@pytest.mark.parametrize("fmt", ["csc", "coo", "csr_array"])
@pytest.mark.parametrize("n_docs, V", [(20, 20), (30, 12)], ids=["square", "tall"])
def test_dm_accepts_any_sparse_format_like_csr(fmt, n_docs, V):
    # ``_as_csr`` converts dense input; other sparse formats must not give silently wrong
    # numbers (CSC's indptr runs over columns)
    dense = _count_data(n=n_docs, V=V, seed=4)
    X = sp.csr_matrix(dense)
    fam = DirichletMultinomial(0.5).resolve(X)
    Y = {"csc": sp.csc_matrix, "coo": sp.coo_matrix, "csr_array": sp.csr_array}[fmt](dense)
    labels = np.arange(n_docs) % 3
    ref = fam.stats(X, labels, 3)
    _assert_count_stats_equal(fam.stats(Y, labels, 3), ref)
    np.testing.assert_allclose(fam.log_predictive(Y, ref), fam.log_predictive(X, ref),
                               rtol=1e-12)
    params = fam.sample_posterior(ref, np.random.default_rng(0))
    np.testing.assert_allclose(fam.log_likelihood(Y, params), fam.log_likelihood(X, params),
                               rtol=1e-12)


def test_dm_log_multinomial_coefficients():
    dense = _count_data(seed=3)
    got = log_multinomial_coefficients(sp.csr_matrix(dense))
    ref = [gammaln(r.sum() + 1) - gammaln(r + 1).sum() for r in dense]
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("a", [0.01, 0.5, 1.0, 7.3, 1e3, 1e6])
def test_log_rising_both_branches(a):
    for m in range(0, 41):
        ref = math.log(poch(a, m)) if m else 0.0
        got = _log_rising(a, float(m))
        assert got == pytest.approx(ref, rel=1e-9, abs=1e-12), (a, m)


@pytest.mark.parametrize("by_point", [False, True])
def test_dm_kernel_matches_numpy_face(multinomial, by_point):
    fam, X, dense = multinomial
    kern, kstats, slots = _run_kernel_sequence(fam, X, seed=7, n_moves=300, by_point=by_point)
    assert kstats[2].flags.f_contiguous == by_point  # the counts slot-minor for a pass
    k = 2
    for i in list(slots[k]):
        kern.remove(kern.data, i, kstats, k, kern.hyper)
    np.testing.assert_array_equal(kstats[2][k], 0.0)   # counts of the emptied slot
    prior = fam.log_predictive(X, fam.empty_stats(1))[:, 0]
    got = [kern.log_predictive(kern.data, i, kstats, k, kern.hyper) for i in range(X.shape[0])]
    np.testing.assert_allclose(got, prior, rtol=1e-12, atol=1e-12)
    assert kern.log_marginal(kstats, k, kern.hyper) == pytest.approx(0.0, abs=1e-10)


def test_dm_kernels_of_the_same_documents_share_their_arrays(multinomial):
    # a model's collapsed and pass kernel read one copy of the corpus (8 bytes a non-zero
    # each before); the copy is not part of the family's saved or pickled state
    import copy
    import gc
    import pickle
    import weakref

    from dpclust.utils.safe_io import _Encoder

    fam, X, _ = multinomial
    X = fam.validate(X)
    kern, pk = fam.kernel(X), fam.pass_kernel(X)
    assert all(a is b for a, b in zip(kern.data, pk.data))
    assert np.shares_memory(kern.data[2], X.data)  # the values are the data's own
    other = fam.kernel(X.copy())  # other documents: arrays of their own
    assert not np.shares_memory(other.data[1], kern.data[1])
    for twin in (pickle.loads(pickle.dumps(fam)), copy.deepcopy(fam)):
        assert "_data_of" not in vars(twin)
        np.testing.assert_array_equal(twin.kernel(X).data[1], kern.data[1])
    encoder = _Encoder()
    encoder(fam)
    assert not any(a.size == X.nnz for a in encoder.arrays.values())
    indices = weakref.ref(kern.data[1])
    del kern, pk
    gc.collect()
    assert indices() is None  # the family does not keep the arrays once the kernels go


def test_dm_kernel_long_documents():
    # long documents on a large vocabulary: sums of many lgamma differences
    rng = np.random.default_rng(0)
    V = 300
    dense = rng.poisson(rng.gamma(0.3, 3.0, size=V), size=(40, V)).astype(float)
    fam = DirichletMultinomial(0.1)
    X = fam.validate(dense)
    _run_kernel_sequence(fam.resolve(X), X, seed=1, n_moves=300, check_every=100)


def test_dm_sample_posterior():
    rng = np.random.default_rng(0)
    V = 5
    fam = DirichletMultinomial(np.array([0.5, 1.0, 2.0, 0.2, 3.0])).resolve(sp.csr_matrix((1, V)))
    data = sp.csr_matrix(rng.integers(0, 4, size=(6, V)).astype(float))
    conc = fam.posterior(fam.stats(data)).concentration[0]
    K = N_DRAWS
    params = fam.sample_posterior(take(fam.stats(data), np.zeros(K, dtype=np.intp)),
                                  np.random.default_rng(1))
    assert params.log_prob.shape == (K, V)
    np.testing.assert_allclose(logsumexp(params.log_prob, axis=1), 0.0, atol=1e-12)
    theta = np.exp(params.log_prob)
    A = conc.sum()
    p = conc / A
    se = np.sqrt(p * (1 - p) / (A + 1) / K)
    assert np.all(np.abs(theta.mean(axis=0) - p) < 5 * se)
    for w in range(V):   # marginals are Beta(conc_w, A - conc_w)
        assert st.kstest(theta[:, w], st.beta(conc[w], A - conc[w]).cdf).pvalue > 1e-3


def test_dm_sample_posterior_tiny_concentration_has_no_minus_inf():
    V = 1000
    fam = DirichletMultinomial(0.01).resolve(sp.csr_matrix((1, V)))
    data = sp.csr_matrix(([5.0, 1.0], ([0, 0], [3, 999])), shape=(1, V))
    stats = concatenate(fam.empty_stats(1), fam.stats(data))
    K = 2000
    params = fam.sample_posterior(take(stats, np.repeat([0, 1], K // 2)),
                                  np.random.default_rng(3))
    assert np.all(np.isfinite(params.log_prob))
    np.testing.assert_allclose(logsumexp(params.log_prob, axis=1), 0.0, atol=1e-10)
    # log theta_0 of the prior draws follows log Beta(0.01, 9.99), even deep in the tail
    a, b = 0.01, 0.01 * (V - 1)
    log_theta = params.log_prob[: K // 2, 0]
    assert st.kstest(log_theta, lambda t: st.beta.cdf(np.exp(t), a, b)).pvalue > 1e-3
    # a posteriori theta_3 ~ Beta(5.01, 16 - 5.01): most of the mass not on the 999 others
    theta3 = np.exp(params.log_prob[K // 2:, 3])
    assert st.kstest(theta3, st.beta(5.01, 16.0 - 5.01).cdf).pvalue > 1e-3
    # log-likelihoods stay finite, also for words the draw gives almost no mass
    ll = fam.log_likelihood(data, params)
    assert np.all(np.isfinite(ll))


def test_dm_log_likelihood_is_scipy_multinomial(multinomial):
    fam, X, dense = multinomial
    params = fam.sample_posterior(fam.stats(X, np.arange(X.shape[0]) % 3, 3),
                                  np.random.default_rng(4))
    got = fam.log_likelihood(X, params)
    assert got.shape == (X.shape[0], 3)
    for k in range(3):
        p = np.exp(params.log_prob[k])
        p = p / p.sum()
        ref = [st.multinomial.logpmf(r, int(r.sum()), p) for r in dense]
        np.testing.assert_allclose(got[:, k], ref, rtol=1e-9, atol=1e-9)


def test_dm_mean_params_and_sample_data():
    dense = _count_data(seed=5)
    fam = DirichletMultinomial(0.5).resolve(sp.csr_matrix(dense))
    stats = fam.stats(sp.csr_matrix(dense))
    probs = fam.mean_params(stats)["probabilities"]
    np.testing.assert_allclose(probs[0], (0.5 + dense.sum(0)) / (0.5 * V_SMALL + dense.sum()))
    params = MultinomialParams(np.log(probs))
    Y = fam.sample_data(params, np.zeros(3000, dtype=np.intp), np.random.default_rng(0))
    assert sp.issparse(Y) and Y.shape == (3000, V_SMALL)
    lengths = np.asarray(Y.sum(axis=1)).ravel()
    assert lengths.min() >= 1
    assert lengths.mean() == pytest.approx(fam.mean_length_, rel=0.05)
    freq = np.asarray(Y.sum(axis=0)).ravel() / lengths.sum()
    np.testing.assert_allclose(freq, probs[0], atol=0.01)


def test_dm_resolve_and_validation_of_concentration():
    X = sp.csr_matrix(np.ones((2, 4)))
    fam = DirichletMultinomial(0.3).resolve(X)
    np.testing.assert_array_equal(fam.beta, np.full(4, 0.3))
    assert fam.n_features() == 4
    with pytest.raises(ValueError, match="concentration has shape"):
        DirichletMultinomial(np.ones(3)).resolve(X)
    with pytest.raises(ValueError, match="positive"):
        DirichletMultinomial(0.0).resolve(X)
    with pytest.raises(ValueError, match="positive"):
        DirichletMultinomial([1.0, -1.0, 1.0, 1.0]).resolve(X)
    with pytest.raises(ValueError, match="resolved"):
        DirichletMultinomial().n_features()


@pytest.mark.parametrize("to_sparse", [False, True], ids=["dense", "csr"])
def test_dm_validate_rejects_bad_counts_naming_the_position(to_sparse):
    fam = DirichletMultinomial()
    conv = sp.csr_matrix if to_sparse else np.asarray
    neg = np.ones((4, 5))
    neg[2, 3] = -1.0
    with pytest.raises(DataError, match=r"negative.*row 2, column 3"):
        fam.validate(conv(neg))
    frac = np.ones((4, 5))
    frac[1, 0] = 1.5
    with pytest.raises(DataError, match=r"non-integer count 1\.5 at row 1, column 0"):
        fam.validate(conv(frac))
    nan = np.ones((4, 5))
    nan[3, 4] = np.nan
    with pytest.raises(DataError, match=r"row 3, column 4"):
        fam.validate(conv(nan))
    # after resolve the vocabulary size is enforced
    res = fam.resolve(fam.validate(np.ones((2, 5))))
    with pytest.raises(DataError, match="5"):
        res.validate(np.ones((2, 6)))


def test_dm_never_densifies_a_large_corpus():
    """N = 50,000 documents over V = 30,000 words (12 GB if densified)."""
    rng = np.random.default_rng(0)
    N, V = 50_000, 30_000
    lengths = rng.integers(1, 40, size=N)
    rows = np.repeat(np.arange(N), lengths)
    cols = rng.integers(0, V, size=rows.size)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(N, V))
    X.sum_duplicates()
    fam = DirichletMultinomial(0.1)
    tracemalloc.start()
    try:
        X = fam.validate(X)
        fam = fam.resolve(X)
        whole = fam.stats(X)
        labels = rng.integers(0, 4, size=N)
        stats = fam.stats(X, labels, 4)
        lp = fam.log_predictive(X, stats)
        lm = fam.log_marginal(stats)
        params = fam.sample_posterior(stats, np.random.default_rng(1))
        ll = fam.log_likelihood(X, params)
        kern = fam.kernel(X)
        kstats = kern.alloc(2)
        kern.reset(kstats, 0, kern.hyper)
        for i in range(100):
            kern.add(kern.data, i, kstats, 0, kern.hyper)
        k_lp = kern.log_predictive(kern.data, 500, kstats, 0, kern.hyper)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5e9, f"peak traced memory {peak / 1e9:.2f} GB"
    assert whole.counts.shape == (1, V) and whole.counts.sum() == lengths.sum()
    assert lp.shape == (N, 4) and np.all(np.isfinite(lp))
    assert np.all(np.isfinite(lm)) and np.all(np.isfinite(ll))
    ref = fam.log_predictive(X[500], fam.stats(X[:100]))[0, 0]
    assert k_lp == pytest.approx(ref, rel=1e-10)


# ============================================================================================
# the contract helpers


def test_take_concatenate_and_get_family():
    X = _gaussian_data(2)
    fam = NormalInverseWishart().resolve(X)
    stats = fam.stats(X, np.arange(X.shape[0]) % 3, 3)
    both = concatenate(take(stats, [2]), take(stats, slice(0, 2)))
    _assert_gaussian_stats_equal(take(both, [1, 2, 0]), stats)
    _assert_gaussian_stats_equal(take(stats, np.array([True, False, True])), take(stats, [0, 2]))
    assert isinstance(get_family("gaussian"), NormalInverseWishart)
    assert isinstance(get_family("Multinomial"), DirichletMultinomial)
    assert get_family(fam) is fam
    with pytest.raises(ValueError, match="unknown family"):
        get_family("lognormal")
    assert "NormalInverseWishart(" in repr(fam)


# ------------------------------------------------------------------ describing themselves
def test_families_register_by_name_with_their_kind_of_data():
    from dpclust.families import FAMILIES, GeneralizedMallows

    assert list(FAMILIES) == ["gaussian", "multinomial", "mallows", "plackett-luce", "table",
                              "diagonal", "bernoulli", "categorical", "poisson"]
    assert {n: f.data_kind for n, f in FAMILIES.items()} == {
        "gaussian": "dense", "multinomial": "counts", "mallows": "rankings",
        "plackett-luce": "rankings", "table": "table", "diagonal": "dense",
        "bernoulli": "dense", "categorical": "dense", "poisson": "dense"}
    assert all(f.name == n for n, f in FAMILIES.items())
    assert [hp.option for hp in GeneralizedMallows.hyperparameters] == ["--nu", "--r"]
    assert DirichletMultinomial(concentration=0.5).settings() == {"concentration": 0.5}
    assert GeneralizedMallows(nu=2.0).settings() == {"nu": 2.0, "r": 1.0}
    assert NormalInverseWishart().settings() == {"rounding": None}


def test_register_family_refuses_what_is_not_a_named_family():
    from dpclust.families import ConjugateFamily, register_family

    with pytest.raises(TypeError):
        register_family(object)
    with pytest.raises(ValueError):
        register_family(type("Nameless", (ConjugateFamily,), {}))


def test_multinomial_describes_its_clusters_by_their_top_words():
    prob = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    block = DirichletMultinomial().describe_clusters(
        {"probabilities": prob}, feature_names=["a", "b", "c"]).block
    assert block["top_words"] == [["b", "c", "a"], ["a", "c", "b"]]
    assert block["top_word_probabilities"][0] == [0.6, 0.3, 0.1]
    table = DirichletMultinomial.cluster_table(block)
    assert [c.heading for c in table.columns] == ["top words"]
    assert table.columns[0].cell(1) == "a, c, b" and table.columns[0].cell(5) == ""


def test_gaussian_describes_wide_clusters_beside_the_summary():
    from dpclust.families.base import CLUSTER_PARAMS_FILE
    from dpclust.families.gaussian import MAX_SUMMARY_FEATURES

    d = MAX_SUMMARY_FEATURES + 3
    params = {"means": np.ones((2, d)), "covariances": np.stack([np.eye(d)] * 2)}
    described = NormalInverseWishart().describe_clusters(params)
    assert described.block["file"].startswith(CLUSTER_PARAMS_FILE)
    assert np.array(described.block["means"]).shape == (2, MAX_SUMMARY_FEATURES)
    assert described.arrays["variances"].shape == (2, d)
    narrow = NormalInverseWishart().describe_clusters({"means": np.zeros((1, 2))})
    assert narrow.block == {"means": [[0.0, 0.0]]} and narrow.arrays is None
    column = NormalInverseWishart.cluster_table(described.block).columns[0]
    assert column.heading == "mean" and column.cell(0) == "(1, 1, 1, 1, 1, …)"


def test_dm_log_marginal_unions_are_the_added_rows(multinomial):
    """The documents' merge marginals, read from the two rows of each pair without adding
    copies of them, are the marginals of the added rows to the last bit."""
    fam, X, dense = multinomial
    n = X.shape[0]
    stats = fam.stats(X, np.arange(n) % 5, 5)
    i, j = np.array([0, 1, 2, 4]), np.array([3, 4, 0, 2])
    want = fam.log_marginal(fam.combine(take(stats, i), take(stats, j)))
    np.testing.assert_array_equal(fam.log_marginal_unions(stats, i, j), want)


def test_an_estimator_with_a_family_object_is_cloned_with_a_copy_of_it():
    """scikit-learn's ``clone`` (what ``coarsening="auto"`` calibrates with) calls
    ``get_params(deep=False)`` on every parameter: a family object is rebuilt from its own."""
    from sklearn.base import clone

    from dpclust import DPMixture
    from dpclust.families import NormalInverseWishart

    fam = NormalInverseWishart(kappa=0.05, rounding="auto")
    copy = clone(DPMixture(family=fam, coarsening="auto")).family
    assert copy is not fam and copy.get_params() == fam.get_params()


def _family_rows():
    """Each family that finds identical rows, with rows that repeat (``-0.0`` beside
    ``0.0`` in the Gaussian's; a top-2 ranking beside a full one that starts alike)."""
    from dpclust.families import GeneralizedMallows, PlackettLuce
    from dpclust.rankings import check_rankings

    rankings = check_rankings([[0, 1, 2], [0, 1], [2, 1, 0], [0, 1, 2], [0, 1]], n_items=3)
    docs = sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 1], [1, 0, 2], [0, 3, 0]]))
    gauss = np.array([[0.0, 1.0], [-0.0, 1.0], [0.5, 2.0], [0.5, 2.0], [1.0, 0.0]])
    table = pd.DataFrame({"a": [1.5, 1.5, np.nan, 2.5, np.nan], "b": ["x", "x", "y", "y", "y"]})
    return [(NormalInverseWishart(), gauss, [0, 0, 1, 1, 2]),
            (DirichletMultinomial(), docs, [0, 1, 0, 2]),
            (GeneralizedMallows(), rankings, None), (PlackettLuce(), rankings, None),
            (get_family("table"), table, [0, 0, 1, 2, 1])]


@pytest.mark.parametrize("case", range(5))
def test_row_keys_tell_apart_the_rows_distinct_tells_apart(case):
    """``row_keys`` (what a Dask fit compares across workers) and ``distinct`` see the same
    identical rows, and equal rows get equal digests."""
    from dpclust.families.identical import distinct_keys, row_digests
    from dpclust.partitions import canonical_labels

    family, X, expected = _family_rows()[case]
    X = family.validate(X)
    _, inverse, counts = family.distinct(X)
    keys = family.row_keys(X)
    assert len(keys) == family.n_points(X) and all(isinstance(k, bytes) for k in keys)
    np.testing.assert_array_equal(canonical_labels(distinct_keys(keys)[1]),
                                  canonical_labels(inverse))
    digests = row_digests(keys)
    assert digests.dtype == np.dtype("S16")
    np.testing.assert_array_equal(canonical_labels(np.unique(digests, return_inverse=True)[1]),
                                  canonical_labels(inverse))
    if expected is not None:
        np.testing.assert_array_equal(canonical_labels(inverse), expected)
    else:
        assert len(counts) < family.n_points(X)


def test_a_family_that_takes_every_row_as_distinct_has_no_keys():
    """Counts with continuous exposures: every row is its own (a Dask fit then looks for no
    identical rows)."""
    from dpclust.families.exposure import ExposureData, GammaExposure

    X = ExposureData(np.array([[1.0], [1.0], [2.0]]), np.array([[0.5], [0.5], [1.0]]))
    family = GammaExposure()
    assert family.row_keys(X) is None
    np.testing.assert_array_equal(family.distinct(X)[1], np.arange(3))


def test_a_table_finds_its_identical_rows_holes_and_weights_included():
    """Rows of a mixed table that agree in every cell (a hole equal to a hole) and in
    weight are one distinct row: a frequency table's people, a survey's identical answers;
    the samplers that score parameters score each once, and the point estimate keeps
    them together."""
    from dpclust.partitions import canonical_labels
    from dpclust.samplers.base import MixtureModel

    frame = pd.DataFrame({"a": [1.5, 1.5, np.nan, np.nan, 1.5, -0.0, 0.0],
                          "b": ["x", "x", None, None, "y", "x", "x"],
                          "c": [1, 1, 0, 0, 1, 1, 1]})
    family = get_family("table")
    X = family.validate(frame)
    family = family.resolve(X)
    _, inverse, counts = family.distinct(X)
    np.testing.assert_array_equal(canonical_labels(inverse), [0, 0, 1, 1, 2, 3, 3])
    np.testing.assert_array_equal(counts, [2, 2, 1, 2])
    heavier = X.with_weight(np.array([1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(canonical_labels(family.distinct(heavier)[1]),
                                  [0, 1, 2, 2, 3, 4, 4])
    model = MixtureModel(family, X, None)
    assert model.repeats
    np.testing.assert_array_equal(canonical_labels(model.estimate_groups),
                                  [0, 0, 1, 1, 2, 3, 3])
