"""Values rounded to a grid (:mod:`dpclust.families.gaussian_rounded`): the truncated-normal
draws against scipy, the grid ``rounding="auto"`` reads, and the collapsed samplers given
the latent values against the partition posterior enumerated on five rows (each block's
marginal integrated over its cells by Gauss–Legendre) and against one another on 1,500
rounded points (slow)."""

import numpy as np
import pandas as pd
import pytest
from niw_marginals import niw_log_marginal_batched
from scipy import stats as st
from scipy.special import logsumexp

from dpclust import DPMixture
from dpclust.exact import partition_frequencies, set_partitions, total_variation
from split_chains import run_chain
from dpclust.families import NormalInverseWishart, choose_family
from dpclust.families.gaussian_rounded import RoundedGaussian, grid_widths
from dpclust.samplers import MixtureModel, crp_log_prior, get_sampler
from dpclust.utils.truncnorm import truncated_standard_normal

#: five rows, the first column whole numbers with ties, the second recorded exactly
ROWS = np.array([[0.0, 0.2], [0.0, -0.4], [1.0, 0.9], [3.0, 2.6], [3.0, 3.3]])
#: five values of one column, all rounded, two ties
ONE = np.array([[0.0], [0.0], [1.0], [2.0], [2.0]])


# ------------------------------------------------------------ truncated normals
@pytest.mark.parametrize("a, b", [(-0.3, 0.4), (-3.0, 2.0), (-1.0, 9.0), (0.5, 0.9),
                                  (2.0, 2.2), (3.0, 8.0), (-6.5, -6.3), (0.0, 1.5),
                                  (-9.0, -2.5), (8.0, 8.05)])
def test_truncated_normal_draws_match_scipy(a, b):
    rng = np.random.default_rng(7)
    z = truncated_standard_normal(rng, np.full(20_000, a), np.full(20_000, b))
    assert np.all((z >= a) & (z <= b))
    # the KS distance of 20,000 exact draws exceeds 0.0136 with probability 0.001
    assert st.kstest(z, st.truncnorm(a, b).cdf).statistic < 0.0136


def test_truncated_normal_refuses_empty_or_infinite_intervals():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="a < b"):
        truncated_standard_normal(rng, [1.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        truncated_standard_normal(rng, [0.0], [np.inf])


# ------------------------------------------------------------ which columns
def test_grid_widths_read_the_recording_grid_where_ties_are_the_rule():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 16, 400),               # whole numbers
                         np.round(rng.normal(size=400), 1),      # one decimal, ties
                         rng.normal(size=400),                   # exact
                         np.arange(400.0)])                      # whole, no ties
    np.testing.assert_allclose(grid_widths(X), [1.0, 0.1, 0.0, 0.0])


def test_auto_family_reads_whole_number_tables_as_rounded():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 30, 300), "b": rng.normal(size=300)})
    fam = choose_family(df)
    assert fam.rounding == "auto"
    resolved = fam.resolve(fam.validate(df))
    assert isinstance(resolved, RoundedGaussian)
    np.testing.assert_allclose(resolved.widths_, [1.0, 0.0])
    # exact values stay the plain family
    plain = fam.resolve(fam.validate(rng.normal(size=(300, 2))))
    assert type(plain) is NormalInverseWishart


def test_rounding_given_is_checked():
    with pytest.raises(ValueError, match="rounding has shape"):
        NormalInverseWishart(rounding=[1.0, 1.0, 1.0]).resolve(ROWS)
    with pytest.raises(ValueError, match=">= 0"):
        NormalInverseWishart(rounding=-1.0).resolve(ROWS)
    with pytest.raises(ValueError, match="rounding must be"):
        NormalInverseWishart(rounding="yes").resolve(ROWS)


def test_rounded_family_refuses_the_samplers_that_need_its_likelihood():
    fam = NormalInverseWishart(rounding=[1.0, 0.0]).resolve(ROWS)
    with pytest.raises(ValueError, match="no closed-form cluster marginal"):
        fam.kernel(ROWS)
    with pytest.raises(ValueError, match="explicit"):
        DPMixture(family=fam, sampler="explicit", n_iter=5, n_chains=1,
                  progress=False).fit(ROWS)


# ------------------------------------------------ the exact partition posterior
def _block_log_marginal(niw, rows, widths, nodes):
    """``log p(x_block)``: the NIW marginal of the latent rows integrated over every
    rounded cell by a Gauss–Legendre product rule (``nodes`` per cell)."""
    cells = [(i, j) for i in range(len(rows)) for j in np.flatnonzero(widths > 0)]
    if not cells:
        return float(niw_log_marginal_batched(niw, rows[None].astype(np.float64))[0])
    u, w = np.polynomial.legendre.leggauss(nodes)
    grids = [rows[i, j] + 0.5 * widths[j] * u for i, j in cells]
    logw = [np.log(0.5 * widths[j] * w) for _, j in cells]
    mesh = np.meshgrid(*grids, indexing="ij")
    lw = sum(np.meshgrid(*logw, indexing="ij")).ravel()
    blocks = np.repeat(rows[None].astype(np.float64), mesh[0].size, axis=0)
    for (i, j), g in zip(cells, mesh):
        blocks[:, i, j] = g.ravel()
    return float(logsumexp(niw_log_marginal_batched(niw, blocks) + lw))


def _exact_posterior(niw, widths, X, nodes=9):
    """``p(partition | X)`` over the 52 partitions of five rows, cells of ``widths``."""
    parts = set_partitions(len(X))
    cache = {}
    logp = np.empty(len(parts))
    for n, row in enumerate(parts):
        k = int(row.max()) + 1
        total = crp_log_prior(np.bincount(row, minlength=k), 1.0)
        for c in range(k):
            key = tuple(np.flatnonzero(row == c))
            if key not in cache:
                cache[key] = _block_log_marginal(niw, X[list(key)], widths, nodes)
            total += cache[key]
        logp[n] = total
    return parts, np.exp(logp - logsumexp(logp))


def _family(X, widths):
    # clusters a priori about a cell wide (scale 0.3 per column): the cells matter, and
    # the block marginals are smooth enough over them for the product rule
    d = X.shape[1]
    return NormalInverseWishart(kappa=0.5, scale=0.3 * np.eye(d), rounding=widths).resolve(X)


def test_quadrature_of_the_exact_posterior_has_converged():
    for X, widths in ((ROWS, [1.0, 0.0]), (ONE, 1.0)):
        fam = _family(X, widths)
        niw, w = fam.latent_family(), fam.widths_
        coarse, fine = _exact_posterior(niw, w, X, 7)[1], _exact_posterior(niw, w, X, 10)[1]
        assert np.abs(coarse - fine).sum() < 1e-4
        # and the cells change the posterior: the ties no longer pull their rows together
        plain = _exact_posterior(niw, np.zeros_like(w), X)[1]
        assert np.abs(plain - fine).sum() > 0.04  # measured 0.056 and 0.278


def test_latent_values_lie_in_their_cells_and_exact_columns_stay():
    fam = _family(ROWS, [1.0, 0.0])
    rng = np.random.default_rng(3)
    labels = np.array([0, 0, 0, 1, 1])
    theta = fam.initial_latent_params(ROWS, labels, 2, rng)
    y = fam.draw_latents(ROWS, labels, theta, rng)
    y = fam.draw_latents(ROWS, labels, theta, rng, previous=y)
    assert np.all(np.abs(y[:, 0] - ROWS[:, 0]) <= 0.5)
    assert len(np.unique(y[:, 0])) == 5
    np.testing.assert_array_equal(y[:, 1], ROWS[:, 1])


def _tv(name, X, widths, n_steps, seed):
    fam = _family(X, widths)
    parts, exact = _exact_posterior(fam.latent_family(), fam.widths_, X)
    assert exact.max() < 0.6
    draws = run_chain(get_sampler(name, len(X), fam), MixtureModel(fam, X, None),
                      np.random.default_rng(seed), n_steps, burn_in=100,
                      init_kwargs={"alpha": 1.0, "n_clusters": 1})
    return total_variation(partition_frequencies(draws, parts), exact)


@pytest.mark.parametrize("name", ["gibbs+sams", "subcluster"])
def test_collapsed_samplers_given_the_latent_values_match_the_exact_posterior_short(name):
    # 1,500 steps: a coarse check; the slow test is tight
    assert _tv(name, ROWS, [1.0, 0.0], 1_500, seed=1) < 0.12


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs", "gibbs+sams", "subcluster"])
def test_collapsed_samplers_given_the_latent_values_match_the_exact_posterior(name):
    for (X, widths), seed in zip(((ROWS, [1.0, 0.0]), (ONE, 1.0)), (2, 3)):
        assert _tv(name, X, widths, 20_000, seed=seed) < 0.04, X.shape


@pytest.mark.slow
def test_samplers_given_the_latent_values_agree_on_fifteen_hundred_rounded_points():
    """ALGORITHMS.md §6 (a): five rows cannot catch an error that grows with N.  On 1,500
    points of three overlapping unit Gaussians (centres 2.5 apart) rounded to whole numbers,
    Gibbs+SAMS and the sub-cluster sampler against collapsed Gibbs, each given the latent
    values: the posterior mean of the clusters holding >= 2 % and the co-clustering of 120
    points, four chains of 3,000 iterations from 1 and from 8 clusters.  Measured: E[K]
    3.670 (Gibbs), 3.653 (Gibbs+SAMS), 3.567 (sub-cluster); co-clustering within 0.009 and
    0.016; 220 s.  The same points read as exact values give E[K] 14.9: the cells matter."""
    from test_subcluster_agreement import chain_summary, overlapping_gaussians

    X = np.rint(overlapping_gaussians(1500, 2.5, seed=4))
    fam = NormalInverseWishart(rounding="auto").resolve(X)
    np.testing.assert_array_equal(fam.widths_, [1.0, 1.0])
    model = MixtureModel(fam, X)
    subset = np.random.default_rng(123).choice(len(X), size=120, replace=False)
    iu = np.triu_indices(len(subset), 1)
    summaries = {name: chain_summary(get_sampler(name, len(X), fam), model, [0, 1, 2, 3],
                                     3000, subset)
                 for name in ("gibbs", "gibbs+sams", "subcluster")}
    k_ref, co_ref = summaries.pop("gibbs")
    for name, (k, co) in summaries.items():
        assert abs(k - k_ref) < 0.3, (name, k, k_ref)
        assert np.abs(co - co_ref)[iu].mean() < 0.05, name


# --------------------------------------------------------------- the default
def test_default_fit_of_rounded_values_keeps_the_clusters():
    rng = np.random.default_rng(0)
    c = rng.integers(0, 3, 600)
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    df = pd.DataFrame(np.rint(rng.normal(size=(600, 2)) * 1.2 + centres[c]),
                      columns=["a", "b"])
    est = DPMixture(n_iter=200, n_chains=1, progress=False, random_state=1)
    with pytest.warns(UserWarning):  # one short chain: not converged by the rule
        est.fit(df)
    assert isinstance(est.family_, RoundedGaussian)
    assert est.n_clusters_ <= 5
    from sklearn.metrics import normalized_mutual_info_score

    assert normalized_mutual_info_score(c, est.labels_) > 0.8
    np.testing.assert_array_equal(est.family_.widths_, [1.0, 1.0])
    # new rows: scored by their recorded values' density times the cells' widths
    assert np.mean(est.predict(df.head(50)) == est.labels_[:50]) > 0.9
    dens = est.score_samples(df.head(50))
    assert np.all(np.isfinite(dens)) and np.all(dens < 0.0)  # at most the cell's probability


def test_report_says_the_model_reads_rounded_values():
    from dpclust.report.lead import _lead_paragraph

    lead = _lead_paragraph({"settings": {"family": "gaussian", "rounding": [1.0, 0.0]},
                            "n_clusters": 2, "data": {"n_samples": 10}}, [6, 4])
    assert "gaussian mixture, of values rounded to a grid in 1 of 2 columns" in lead
    plain = _lead_paragraph({"settings": {"family": "gaussian", "rounding": None},
                             "n_clusters": 2, "data": {"n_samples": 10}}, [6, 4])
    assert "rounded" not in plain
