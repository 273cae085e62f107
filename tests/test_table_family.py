"""The table families (diagonal Gaussian, Beta–Bernoulli, Dirichlet–categorical,
Gamma–Poisson and their product over the columns of a table): the contract's identities,
both faces, missing cells and row weights, and exact posteriors on five rows."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from scipy.special import betaln

from dpclust.exact import (exact_posterior, partition_frequencies, total_variation)
from split_chains import run_chain
from dpclust.families import (BetaBernoulli, numbers_family, DiagonalGaussian, DirichletCategorical,
                              GammaPoisson, TableFamily, get_family)
from dpclust.families.base import take
from dpclust.tables import TableData, infer_schema
from dpclust.samplers import (CollapsedGibbs, ExplicitGibbs, FiniteSymmetricDirichlet,
                              MixtureModel, SubclusterSplitMerge, finite_dirichlet_log_prior)

#: a mixed table with a hole in every column
MIXED = pd.DataFrame({"height": [0.1, 0.3, np.nan, 2.0, 1.2],
                      "colour": ["red", "blue", "red", None, "green"],
                      "smoker": [1, 0, 1, 1, np.nan],
                      "visits": [3, 0, np.nan, 5, 7]})
KINDS = {"visits": "poisson"}
#: complete real columns: one full-covariance Gaussian for the two of them
FULL = pd.DataFrame({"height": [0.1, 0.3, 0.9, 2.0, 1.2], "weight": [1.0, 0.2, 0.5, 1.9, 1.1],
                     "colour": ["red", "blue", "red", None, "green"],
                     "visits": [3, 0, np.nan, 5, 7]})

SINGLE = {
    "diagonal": (DiagonalGaussian(kappa=0.5),
                 np.array([[0.0, 1.0], [0.4, np.nan], [1.5, 1.2], [1.8, 0.2], [np.nan, 0.8]])),
    "bernoulli": (BetaBernoulli(concentration=0.7),
                  np.array([[1, 0, 1], [1, 1, np.nan], [0, 0, 1], [0, np.nan, 0], [1, 0, 1]])),
    "categorical": (DirichletCategorical(concentration=0.6),
                    np.array([["a", "x"], ["b", "y"], ["a", None], ["c", "y"], ["a", "z"]],
                             dtype=object)),
    "poisson": (GammaPoisson(), np.array([[0, 3], [1, np.nan], [4, 2], [5, 6], [np.nan, 1]])),
}


def resolved(family, X):
    Xw = family.validate(X)
    return family.resolve(Xw), Xw


@pytest.fixture(params=["table", "full"] + list(SINGLE))
def case(request):
    if request.param == "table":
        return resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    if request.param == "full":
        fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), FULL)
        assert type(fam).__name__ == "GaussianTable"
        return fam, X
    return resolved(*SINGLE[request.param])


# ------------------------------------------------------------------- identities
def test_log_marginal_is_the_sum_of_sequential_predictives(case):
    fam, X = case
    total, stats = 0.0, fam.empty_stats(1)
    for i in range(len(X)):
        total += fam.log_predictive(X[[i]], stats)[0, 0]
        stats = fam.combine(stats, fam.stats(X[[i]]))
    assert total == pytest.approx(fam.log_marginal(fam.stats(X))[0], rel=1e-10)
    assert fam.log_marginal(stats)[0] == pytest.approx(fam.log_marginal(fam.stats(X))[0])


def test_combine_and_subtract_are_inverse(case):
    fam, X = case
    a, b = fam.stats(X[[0, 1]]), fam.stats(X[[2, 3, 4]])
    both = fam.combine(a, b)
    assert fam.log_marginal(both)[0] == pytest.approx(fam.log_marginal(fam.stats(X))[0])
    back = fam.subtract(both, b)
    for x, y in zip(back, a):
        np.testing.assert_allclose(x, y, atol=1e-12)
    labels = np.array([1, 0, 1, 0, 0])
    batched = fam.stats(X, labels, 2)
    for k in range(2):
        one = fam.stats(X[labels == k])
        assert fam.log_marginal(batched)[k] == pytest.approx(fam.log_marginal(one)[0])


def test_weighted_statistics_are_the_statistics_of_the_rows_they_weigh(case):
    """``weighted_stats`` (the coarsened sampler's soft statistics, from matrix products)
    gives a 0/1 column the statistics of the rows it picks, and a column of 2s those of the
    rows counted twice."""
    fam, X = case
    pick = np.array([[1, 0, 2], [0, 1, 2], [1, 1, 2], [0, 1, 2], [1, 0, 2]], dtype=float)
    got = fam.weighted_stats(X, pick)
    for k in range(2):
        want = fam.log_marginal(fam.stats(X[pick[:, k] == 1]))[0]
        assert fam.log_marginal(got)[k] == pytest.approx(want, rel=1e-10)
    if not fam.supports_weights:  # the full covariance counts whole rows
        return
    doubled = fam.stats(X.with_weight(2.0 * X.weight))
    assert fam.log_marginal(got)[2] == pytest.approx(fam.log_marginal(doubled)[0], rel=1e-10)


def test_kernel_face_matches_numpy_face(case):
    fam, X = case
    kern = fam.kernel(X)
    ks = kern.alloc(4)
    for k in range(4):
        kern.reset(ks, k, kern.hyper)
    order = [3, 0, 4, 1, 2]
    for t, i in enumerate(order):
        ref = fam.log_predictive(X[[i]], fam.stats(X[order[:t]]) if t else fam.empty_stats(1))
        got = kern.log_predictive(kern.data, i, ks, 0, kern.hyper)
        assert got == pytest.approx(ref[0, 0], rel=1e-10, abs=1e-10)
        kern.add(kern.data, i, ks, 0, kern.hyper)
    assert kern.log_marginal(ks, 0, kern.hyper) == pytest.approx(
        fam.log_marginal(fam.stats(X))[0], rel=1e-10)
    # remove two rows, and the slot is the other three's
    for i in (0, 4):
        kern.remove(kern.data, i, ks, 0, kern.hyper)
    assert kern.log_marginal(ks, 0, kern.hyper) == pytest.approx(
        fam.log_marginal(fam.stats(X[[1, 2, 3]]))[0], rel=1e-9)
    # the join gain of two slots
    kern.reset(ks, 1, kern.hyper)
    for i in (0, 4):
        kern.add(kern.data, i, ks, 1, kern.hyper)
    gain = kern.log_join_gain(ks, 0, 1, kern.hyper)
    lm = fam.log_marginal
    assert gain == pytest.approx(lm(fam.stats(X))[0] - lm(fam.stats(X[[1, 2, 3]]))[0]
                                 - lm(fam.stats(X[[0, 4]]))[0], rel=1e-9)


def test_pass_kernel_likelihoods_and_raw_statistics(case):
    fam, X = case
    params = fam.sample_posterior(fam.stats(X, np.array([0, 1, 0, 1, 2]), 3),
                                  np.random.default_rng(0))
    ref = fam.log_likelihood(X, params)
    pk = fam.pass_kernel(X)
    kp = pk.pack(params)
    out = np.empty(3)
    acc = np.zeros((1, pk.n_stats))
    for i in range(len(X)):
        pk.log_likelihood(pk.data, i, kp, np.arange(3), 0, 3, out)
        np.testing.assert_allclose(out, ref[i], rtol=1e-10)
        pk.accumulate(pk.data, i, acc, 0)
    got, want = pk.unpack(acc), fam.stats(X)
    assert fam.log_marginal(got)[0] == pytest.approx(fam.log_marginal(want)[0], rel=1e-9)


def test_log_likelihood_against_scipy():
    fam, X = resolved(TableFamily(kinds=KINDS), MIXED)
    p = fam.sample_prior(np.random.default_rng(1), 2)
    ll = fam.log_likelihood(X, p)
    offsets = fam.hyper.offsets
    for i in range(len(X)):
        for k in range(2):
            want = 0.0
            if not np.isnan(X.real[i, 0]):
                want += st.norm.logpdf(X.real[i, 0], p.mean[k, 0], p.precision[k, 0] ** -0.5)
            for j in range(X.code.shape[1]):
                if X.code[i, j] >= 0:
                    want += p.log_prob[k, offsets[j] + X.code[i, j]]
            if not np.isnan(X.count[i, 0]):
                want += st.poisson.logpmf(X.count[i, 0], np.exp(p.log_rate[k, 0]))
            assert ll[i, k] == pytest.approx(want, rel=1e-10)


def test_closed_forms_of_one_column():
    """Beta-binomial, Dirichlet-categorical and negative binomial marginals."""
    fam, X = resolved(BetaBernoulli(concentration=0.7), np.array([[1], [1], [0], [1]]))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(betaln(3.7, 1.7) - betaln(0.7, 0.7))
    fam, X = resolved(GammaPoisson(count_shape=2.0), np.array([[3.0]]))
    a, b = 2.0, fam.hyper.rate[0]
    nb = st.nbinom.logpmf(3, a, b / (b + 1.0))
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(nb)
    fam, X = resolved(DiagonalGaussian(kappa=0.5), np.array([[0.7]]))
    h = fam.hyper
    scale = np.sqrt(h.b0[0] * (h.kappa0[0] + 1) / (h.a0[0] * h.kappa0[0]))
    t = st.t.logpdf(0.7, 2 * h.a0[0], h.m0[0], scale)
    assert fam.log_marginal(fam.stats(X))[0] == pytest.approx(t)


def test_a_missing_cell_is_left_out_of_the_likelihood():
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    full = fam.log_marginal(fam.stats(X))[0]
    # the same rows with the height column dropped differ by the height cells' marginal only
    without = MIXED.drop(columns="height")
    fam2 = TableFamily(kinds=KINDS, kappa=0.5)
    Xw2 = fam2.validate(without)
    f2 = fam2.resolve(Xw2)
    heights = DiagonalGaussian(kappa=0.5)
    hw = heights.validate(MIXED[["height"]].dropna())
    hf = heights.resolve(hw)
    assert full == pytest.approx(f2.log_marginal(f2.stats(Xw2))[0]
                                 + hf.log_marginal(hf.stats(hw))[0])


def test_integer_power_weights_are_repeated_cells_in_one_cluster():
    """A row of weight 3 has the likelihood of three copies of it kept together."""
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    w = np.array([1.0, 3.0, 1.0, 2.0, 1.0])
    Xw = X.with_weight(w)
    rep = X[np.repeat(np.arange(5), w.astype(int))]
    assert fam.log_marginal(fam.stats(Xw))[0] == pytest.approx(
        fam.log_marginal(fam.stats(rep))[0], rel=1e-10)
    kern = fam.kernel(Xw)
    ks = kern.alloc(2)
    for i in range(5):
        kern.add(kern.data, i, ks, 0, kern.hyper)
    assert kern.log_marginal(ks, 0, kern.hyper) == pytest.approx(
        fam.log_marginal(fam.stats(rep))[0], rel=1e-9)


# --------------------------------------------------------------- exact posteriors
def _tv(sampler, fam, X, n_steps, seed, alpha=1.0, log_prior=None):
    parts, exact = exact_posterior(fam, X, alpha if log_prior is None else log_prior)
    assert exact.max() < 0.6
    draws = run_chain(sampler, MixtureModel(fam, X, None), np.random.default_rng(seed), n_steps,
                      burn_in=200, init_kwargs={"alpha": alpha, "n_clusters": 1})
    return total_variation(partition_frequencies(draws, parts), exact)


@pytest.mark.parametrize("name", list(SINGLE))
def test_collapsed_gibbs_matches_exact_posterior_single_kind(name):
    fam, X = resolved(*SINGLE[name])
    assert _tv(CollapsedGibbs(), fam, X, 20_000, seed=1) < 0.03


def test_product_with_holes_and_weights_matches_exact_posterior():
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    X = X.with_weight(np.array([1.0, 2.0, 0.5, 1.0, 1.5]))
    assert _tv(CollapsedGibbs(), fam, X, 20_000, seed=2) < 0.03


@pytest.mark.slow
def test_explicit_gibbs_on_the_product_with_holes_and_weights():
    """The NumPy face (Neal's algorithm 2 draws parameters and scores likelihoods); the
    default run checks that face against the kernels cell by cell."""
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    X = X.with_weight(np.array([1.0, 2.0, 0.5, 1.0, 1.5]))
    assert _tv(ExplicitGibbs(), fam, X, 20_000, seed=3) < 0.03


def test_full_covariance_product_matches_exact_posterior():
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), FULL)
    assert _tv(CollapsedGibbs(), fam, X, 20_000, seed=1) < 0.03


@pytest.mark.slow
def test_full_covariance_product_with_the_subcluster_sampler():
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), FULL)
    # measured 0.028 (about 2 ms a step on five rows)
    assert _tv(SubclusterSplitMerge(data_pass="instantiated"), fam, X, 10_000, seed=4) < 0.045


def test_full_covariance_is_what_auto_takes_for_complete_real_columns():
    assert type(resolved(TableFamily(kinds=KINDS), FULL)[0]).__name__ == "GaussianTable"
    assert type(resolved(TableFamily(kinds=KINDS, covariance="diagonal"), FULL)[0]) \
        is TableFamily
    assert type(resolved(TableFamily(), FULL)[0]) is TableFamily  # visits: a real with a hole
    assert type(resolved(TableFamily(), MIXED)[0]) is TableFamily  # one real column, holes
    # holes in the real columns: the full covariance without a collapsed form
    # (tests/test_table_holes.py)
    assert type(resolved(TableFamily(kinds=KINDS, covariance="full"),
                         FULL.assign(weight=[1.0, np.nan, 0.5, 1.9, 1.1]))[0]).__name__ \
        == "GaussianTableHoles"
    fam, X = resolved(TableFamily(kinds=KINDS), FULL)
    with pytest.raises(ValueError, match="covariance='diagonal'"):
        fam.stats(X.with_weight(np.full(5, 0.5)))


@pytest.mark.slow
def test_subcluster_and_fsd_match_exact_posterior_on_the_product():
    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), MIXED)
    # 5,000 steps (about 2 ms each on five rows): measured 0.048 to 0.054 over three seeds
    assert _tv(SubclusterSplitMerge(data_pass="instantiated"), fam, X, 5_000, seed=4) < 0.08
    k = 3
    assert _tv(FiniteSymmetricDirichlet(n_components=k), fam, X, 40_000, seed=6, alpha=1.5,
               log_prior=lambda s: finite_dirichlet_log_prior(s, 1.5, k)) < 0.03


# ------------------------------------------------------------------ the columns
def test_auto_reads_a_kind_per_column():
    df = pd.DataFrame({"age": [31.0, 45.5, np.nan, 22.0] * 6,
                       "member": [True, False, True, None] * 6,
                       "yes_no": ["yes", "no", " yes", ""] * 6,
                       "city": ["Oslo", "Rome", "Lima", "Oslo"] * 6,
                       "id": [f"r{i}" for i in range(24)],
                       "as_text": ["1.5", "2", "?", "3"] * 6,
                       "n": [0, 3, 1, 2] * 6})
    fam = get_family("auto", df)
    assert isinstance(fam, TableFamily)
    X = fam.validate(df)
    kinds = {c.name: c.kind for c in X.schema.columns}
    assert kinds == {"age": "gaussian", "member": "bernoulli", "yes_no": "bernoulli",
                     "city": "categorical", "as_text": "gaussian", "n": "gaussian"}
    assert X.schema.dropped[0][0] == "id"
    assert X.schema.coded[1].levels == ("no", "yes")
    assert X.schema.rules["text read as numbers (cells)"] == 18
    assert X.n_missing == 6 + 6 + 6 + 6
    fam = TableFamily(kinds={"n": "poisson", "city": "drop"})
    X = fam.validate(df)
    assert [c.kind for c in X.schema.counts] == ["poisson"]
    assert "city" not in X.schema.names


def test_whole_numbers_of_a_few_levels_are_read_as_categories():
    """A rating scale or a band (3 to 12 whole numbers, 10 cells a level or more) is
    categorical, its levels the numbers; fewer cells, more levels, fractions or a kind the
    user gives keep the column's numbers."""
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"rating": rng.integers(1, 6, n).astype(float),
                       "band": rng.integers(1, 13, n),
                       "many": rng.integers(0, 40, n),
                       "score": rng.integers(1, 6, n) / 2.0,
                       "given": rng.integers(1, 6, n)})
    df.loc[::7, "rating"] = np.nan
    X = TableFamily(kinds={"given": "gaussian"}).validate(df)
    kinds = {c.name: c.kind for c in X.schema.columns}
    assert kinds == {"rating": "categorical", "band": "categorical", "many": "gaussian",
                     "score": "gaussian", "given": "gaussian"}
    rating = X.schema.coded[0]
    assert rating.levels == (1, 2, 3, 4, 5) and "whole-number levels" in rating.why
    np.testing.assert_array_equal(X.code[:, 0], np.where(df["rating"].isna(), -1,
                                                         df["rating"].fillna(1) - 1))
    # a short column of the same values keeps its numbers (3 levels need 30 cells)
    short = TableFamily().validate(pd.DataFrame({"r": [1, 2, 3] * 9, "x": rng.normal(size=27)}))
    assert short.schema.columns[0].kind == "gaussian"


def test_numbers_of_two_values_are_read_as_yes_no():
    """A column of two numbers (a dose given or not, a sex coded 1 and 2; 10 cells a value
    or more on average) is a yes/no column, its levels the two numbers in order, and then a
    copy of a two-level text column it pairs with; a short one keeps its numbers, and
    ``family="auto"`` takes such a table from the plain Gaussian."""
    rng = np.random.default_rng(0)
    n = 60
    arm = rng.choice(["Control", "Streptomycin"], n)
    df = pd.DataFrame({"dose_g": np.where(arm == "Control", 0, 2),
                       "sex": rng.choice([1, 2], n), "half": rng.choice([0.5, 1.5], n),
                       "x": rng.normal(size=n)})
    df.loc[3, "sex"] = np.nan
    X = TableFamily().validate(df)
    cols = {c.name: c for c in X.schema.columns}
    assert {k: c.kind for k, c in cols.items()} == {"dose_g": "bernoulli", "sex": "bernoulli",
                                                   "half": "bernoulli", "x": "gaussian"}
    assert cols["dose_g"].levels == (0, 2) and cols["dose_g"].why == "two values (int64)"
    assert cols["half"].levels == (0.5, 1.5)
    j = [c.name for c in X.schema.coded].index("sex")
    np.testing.assert_array_equal(X.code[:, j], np.where(df["sex"].isna(), -1,
                                                         df["sex"].fillna(1) - 1))
    with_arm = TableFamily().validate(df.assign(arm=arm)[["arm", "dose_g", "x"]])
    assert "dose_g" not in with_arm.schema.names
    assert "a copy of 'arm'" in dict(with_arm.schema.dropped)["dose_g"]
    short = TableFamily().validate(pd.DataFrame({"d": [0, 2] * 9, "x": rng.normal(size=18)}))
    assert short.schema.columns[0].kind == "gaussian"
    assert get_family("auto", df[["dose_g", "x"]].to_numpy(float)).name == "table"


def test_auto_on_plain_numbers_is_the_gaussian():
    X = np.random.default_rng(0).normal(size=(30, 3))
    assert get_family("auto", X).name == "gaussian"
    yes_no = (np.arange(30) % 2)[:, None]
    assert get_family("auto", np.hstack([X, yes_no])).name == "table"
    # a constant column of 1s is no yes/no question: the numbers stay plain
    assert get_family("auto", np.hstack([X, np.ones((30, 1))])).name == "gaussian"
    X[0, 0] = np.nan
    assert get_family("auto", X).name == "table"
    assert get_family("auto", np.random.default_rng(1).normal(size=(5, 60))).name == "diagonal"
    # from 50 columns a full covariance needs at least d^2 rows, and stops at 150 columns
    assert numbers_family(3600, 60).name == "gaussian"
    assert numbers_family(3599, 60).name == "diagonal"
    assert numbers_family(10 ** 6, 151).name == "diagonal"
    # below 50 columns too: with fewer rows than the columns squared, the diagonal one
    assert numbers_family(10, 49).name == "diagonal"
    assert numbers_family(2401, 49).name == "gaussian" and numbers_family(16, 4).name == "gaussian"
    assert numbers_family(15, 4).name == "diagonal"
    # fewer rows than columns squared, at least three a column: in the principal axes
    assert numbers_family(15, 4).axes == "principal" and numbers_family(147, 49).axes == "principal"
    assert numbers_family(146, 49).axes is None and numbers_family(10, 49).axes is None
    assert numbers_family(15, 4, turn=False).axes is None  # data read in parts
    assert numbers_family(10 ** 6, 151).axes is None
    assert get_family("auto", np.random.default_rng(3).normal(size=(40, 8))).axes == "principal"
    # a column of ratings (1 to 5, 40 rows a level) is read as categories by the table family
    rng = np.random.default_rng(2)
    rated = np.column_stack([rng.normal(size=200), rng.integers(1, 6, 200)])
    assert get_family("auto", rated).name == "table"
    assert get_family("auto", rated[:20]).name == "gaussian"  # too few rows a level


def test_an_empty_column_is_left_out_and_a_table_of_nothing_refused():
    """An export's empty column (``tidyr::billboard``'s weeks 66 to 76, ``Ecdat::Bwages``'s
    ``sex``) is left out, said so; a kind given to one, or a table with nothing left after
    the rules, is refused, each column's reason given."""
    df = pd.DataFrame({"a": [np.nan, None, " "], "b": [1.0, 2.0, 4.0]})
    assert infer_schema(df).dropped == (("a", "empty (every cell is missing)"),)
    with pytest.raises(ValueError, match="'a' was given the kind 'gaussian' but has no values"):
        infer_schema(df, kinds={"a": "gaussian"})
    with pytest.raises(ValueError, match="no column left to cluster on: 'a' is empty .*'b' is "
                                         "a constant"):
        infer_schema(df.assign(b=1.0))


@pytest.mark.parametrize("bad, match", [
    (pd.DataFrame({"a": [np.nan, np.nan], "b": [1.0, 2.0]}), "column 'a' was given the kind"),
    (pd.DataFrame({"a": [np.nan, 1.0, 3.0], "b": [np.nan, 2.0, 5.0]}), "row 0"),
])
def test_bad_tables_are_refused_naming_the_problem(bad, match):
    with pytest.raises(ValueError, match=match):
        TableFamily(kinds={"a": "gaussian"}).validate(bad)


def test_kinds_that_do_not_fit_are_refused():
    df = pd.DataFrame({"a": ["x", "y", "z"], "b": [1.5, 2.0, 3.0]})
    with pytest.raises(ValueError, match="'a' was given the kind 'gaussian' but holds text"):
        TableFamily(kinds={"a": "gaussian"}).validate(df)
    with pytest.raises(ValueError, match="1.5 is not a count"):
        TableFamily(kinds={"b": "poisson"}).validate(df)
    with pytest.raises(ValueError, match="columns the table does not have"):
        TableFamily(kinds={"c": "poisson"}).validate(df)
    with pytest.raises(ValueError, match="unknown kind"):
        TableFamily(kinds={"a": "ordinal"}).validate(df)


def test_new_data_are_read_under_the_fitted_columns():
    fam, X = resolved(TableFamily(kinds=KINDS), MIXED)
    new = pd.DataFrame({"visits": [1, 2], "colour": ["purple", "red"], "height": [0.5, None],
                        "smoker": [0, 1]})
    Y = fam.validate(new)
    assert Y.code[0, 0] == -1 and Y.schema.rules[
        "levels not seen in fitting, read as missing (cells)"] == 1
    assert fam.log_predictive(Y, fam.stats(X)).shape == (2, 1)
    with pytest.raises(ValueError, match="lacks the columns"):
        fam.validate(new.drop(columns="height"))


def test_sample_data_round_trip_and_describe():
    fam, X = resolved(TableFamily(kinds=KINDS), MIXED)
    params = fam.sample_prior(np.random.default_rng(2), 2)
    rows = fam.sample_data(params, np.array([0, 1, 1]), np.random.default_rng(3))
    assert len(rows) == 3 and rows.n_missing == 0
    assert np.all(rows.code[:, 1] <= 1)
    described = fam.describe()
    assert [d["kind"] for d in described] == ["gaussian", "categorical", "bernoulli", "poisson"]
    block = fam.describe_clusters(fam.mean_params(fam.stats(X, np.array([0, 0, 1, 1, 1]), 2))).block
    assert set(block["shares"]["colour"]) == {"blue", "green", "red"}
    assert len(block["means"]["height"]) == 2


def test_full_covariance_predicts_new_rows_with_holes():
    """A new row's missing real cell is integrated out of the cluster's Student-t
    predictive: the closed form against quadrature, and the complete row's value."""
    from scipy.integrate import quad

    from dpclust.families.gaussian_table_holes import observed_log_predictive

    fam, X = resolved(TableFamily(kinds=KINDS, kappa=0.5), FULL)
    stats = fam.stats(X, np.array([0, 0, 1, 1, 0]), 2)
    new = FULL.iloc[[0, 3]].copy()
    complete = fam.validate(new)
    np.testing.assert_allclose(observed_log_predictive(fam, complete, stats),
                               fam.log_predictive(complete, stats), rtol=1e-10)
    new.loc[new.index[0], "weight"] = np.nan
    holed = fam.validate(new)
    got = fam.log_predictive(holed, stats)
    for k in range(2):
        def density(w, k=k):
            row = TableData(np.array([[holed.real[0, 0], w]]), holed.code[:1], holed.count[:1],
                            np.ones(1), holed.schema)
            return np.exp(fam.log_predictive(row, take(stats, [k]))[0, 0])
        assert got[0, k] == pytest.approx(np.log(quad(density, -40, 40, limit=200)[0]), rel=1e-6)


@pytest.mark.parametrize("family", ["auto", {"colour": "categorical"},
                                    TableFamily(kinds=KINDS, covariance="diagonal")])
def test_a_fitted_table_model_saves_and_loads(family, tmp_path):
    from dpclust import DPMixture

    df = pd.concat([FULL] * 6, ignore_index=True)
    df.loc[2, "height"] = np.nan
    model = DPMixture(family=family, n_iter=10, random_state=0, progress=False, n_chains=1).fit(df)
    model.save(tmp_path / "model.npz")
    again = DPMixture.load(tmp_path / "model.npz")
    np.testing.assert_allclose(again.score_samples(df), model.score_samples(df))
    assert type(again.family_) is type(model.family_)
