"""Sample weights of DPMixture: whole numbers are the repeated rows (the same chain as the
rows repeated by hand, and the exact posterior of the repeated rows), other weights a power
on each row's likelihood (the exact power posterior of a table family); rows of weight 0
left out; one output per row; bad weights refused with clear messages."""

import warnings

import numpy as np
import pandas as pd
import pytest

from dpclust import DPMixture
from dpclust.estimators.summary import model_labels
from dpclust.estimators.weights import (MAX_COPIES, fold_labels, fold_mean,
                                        first_model_rows)
from dpclust.exact import exact_posterior, partition_frequencies, total_variation
from dpclust.families import NormalInverseWishart, TableFamily
from dpclust.rankings import Rankings
from dpclust.utils.checks import DataError

#: a mixed table with holes (as in tests/test_table_family.py)
MIXED = pd.DataFrame({"height": [0.1, 0.3, np.nan, 2.0],
                      "colour": ["red", "blue", "red", None],
                      "smoker": [1, 0, 1, np.nan],
                      "visits": [3, 0, np.nan, 5]})
KINDS = {"visits": "poisson"}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short chains: no verdict wanted
        yield


def _points(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(0, 0.3, (n // 2, 2)), rng.normal(3, 0.3, (n - n // 2, 2))])


def _nniw():
    return NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=4.0, scale=np.eye(2))


# --------------------------------------------------------------- whole numbers: repeat
def test_whole_weights_run_the_chain_of_the_repeated_rows():
    X = _points()
    w = np.array([2, 0, 1, 3, 1, 1, 1, 2, 0, 1, 4, 1])
    kw = dict(n_iter=30, store_labels=True, random_state=3)
    weighted = DPMixture(**kw).fit(X, sample_weight=w)
    by_hand = DPMixture(**kw).fit(np.repeat(X, w, axis=0))
    assert weighted.sample_weight_mode_ == "repeat"
    np.testing.assert_array_equal(weighted.trace_.labels, by_hand.trace_.labels)
    np.testing.assert_array_equal(weighted.trace_.log_joint, by_hand.trace_.log_joint)
    np.testing.assert_array_equal(model_labels(weighted), by_hand.labels_)
    np.testing.assert_allclose(weighted.weights_, by_hand.weights_)
    # predictions and densities are those of the repeated rows' fit
    np.testing.assert_allclose(weighted.predict_proba(X), by_hand.predict_proba(X))
    np.testing.assert_allclose(weighted.score_samples(X), by_hand.score_samples(X))
    # one output per row of X
    n = len(X)
    for values in (weighted.labels_, weighted.certainty_, weighted.label_share_,
                   weighted.fit_predict(X, sample_weight=w)):
        assert values.shape == (n,)
    assert weighted.posterior_similarity().shape == (n, n)


def test_whole_weights_give_the_exact_posterior_of_the_repeated_rows():
    """Three points with weights (2, 1, 1): the partitions of the four copies."""
    X = np.array([[0.0, 0.0], [0.8, 0.3], [1.6, 1.0]])
    model = DPMixture(family=_nniw(), sampler="gibbs", n_iter=8000, burn_in=100,
                      store_labels=True, init_clusters=1,
                      random_state=0, n_chains=1).fit(X, sample_weight=[2, 1, 1])
    copies = model._X_fit
    np.testing.assert_array_equal(copies, X[[0, 0, 1, 2]])
    parts, exact = exact_posterior(model.family_, copies, 1.0)
    # the copies of the first point are not always together: their own customers
    split = parts[:, 0] != parts[:, 1]
    assert exact[split].sum() > 0.05
    freq = partition_frequencies(model.trace_.labels, parts)
    assert total_variation(freq, exact) < 0.03
    assert freq[split].sum() == pytest.approx(exact[split].sum(), abs=0.03)


def test_weights_of_one_are_no_weights():
    X = _points()
    kw = dict(n_iter=20, random_state=1)
    plain = DPMixture(**kw).fit(X)
    ones = DPMixture(**kw).fit(X, sample_weight=np.ones(len(X)))
    np.testing.assert_array_equal(ones.labels_, plain.labels_)
    np.testing.assert_array_equal(ones.label_share_, 1.0)
    assert plain.label_share_ is None and plain.sample_weight_mode_ is None


def test_rows_of_weight_zero_are_left_out():
    X = _points()
    w = np.ones(len(X))
    w[[2, 9]] = 0
    kw = dict(n_iter=20, random_state=2)
    weighted = DPMixture(**kw).fit(X, sample_weight=w)
    kept = DPMixture(**kw).fit(X[w > 0])
    np.testing.assert_array_equal(weighted.labels_[w > 0], kept.labels_)
    # a row left out takes the cluster predict gives it; it has no certainty or copies
    np.testing.assert_array_equal(weighted.labels_[[2, 9]], weighted.predict(X[[2, 9]]))
    assert np.isnan(weighted.certainty_[[2, 9]]).all()
    np.testing.assert_array_equal(weighted.label_share_[[2, 9]], 0.0)
    P = weighted.posterior_similarity()
    assert np.isnan(P[2]).all() and not np.isnan(P[np.ix_(w > 0, w > 0)]).any()
    weighted.fuse()
    assert weighted.fused_labels_.shape == (len(X),)


def test_whole_weights_work_for_rankings():
    R = Rankings([[0, 1, 2], [0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 0, 1]], n_items=3)
    w = [3, 1, 2, 1, 1]
    kw = dict(family="mallows", n_iter=15, random_state=0, store_labels=True)
    weighted = DPMixture(**kw).fit(R, sample_weight=w)
    by_hand = DPMixture(**kw).fit(Rankings(
        [[0, 1, 2]] * 4 + [[2, 1, 0]] * 2 + [[1, 0, 2], [2, 0, 1]], n_items=3))
    np.testing.assert_array_equal(weighted.trace_.labels, by_hand.trace_.labels)
    assert weighted.labels_.shape == (5,)


def test_a_checkpointed_weighted_run_resumes_with_its_weights(tmp_path):
    X = _points()
    w = np.array([2, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1, 1])
    path = tmp_path / "run.ckpt"
    whole = DPMixture(n_iter=20, random_state=4, n_chains=1).fit(X, sample_weight=w)
    DPMixture(n_iter=10, burn_in=10 // 2, random_state=4,
              checkpoint=path, n_chains=1).fit(X, sample_weight=w)
    with pytest.raises(DataError, match="fingerprints"):
        DPMixture.resume(path, X, n_iter=20)
    resumed = DPMixture.resume(path, X, sample_weight=w, n_iter=20)
    np.testing.assert_array_equal(resumed.trace_.log_joint[:, :10], whole.trace_.log_joint[:, :10])
    assert resumed.labels_.shape == (len(X),)


def test_save_and_load_keep_the_rows(tmp_path):
    X = _points()
    w = np.array([2, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1, 1])
    model = DPMixture(n_iter=20, random_state=0, n_chains=1).fit(X, sample_weight=w)
    model.save(tmp_path / "m.npz")
    back = DPMixture.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.label_share_, model.label_share_)
    np.testing.assert_allclose(back.score_samples(X), model.score_samples(X))
    np.testing.assert_allclose(back.posterior_similarity(), model.posterior_similarity())


# --------------------------------------------------------------------- power weights
@pytest.mark.parametrize("w, mode", [([1.0, 2.5, 0.5, 1.5], "auto"),
                                     ([1, 3, 1, 2], "power")])
def test_power_weights_give_the_exact_power_posterior(w, mode):
    model = DPMixture(family=TableFamily(kinds=KINDS, kappa=0.5), sampler="gibbs",
                      n_iter=6000, burn_in=100, store_labels=True, init_clusters=1,
                      random_state=0, sample_weight_mode=mode,
                      n_chains=1).fit(MIXED, sample_weight=w)
    assert model.sample_weight_mode_ == "power"
    Xw = model._X_fit
    assert len(Xw) == 4  # each row once
    np.testing.assert_array_equal(Xw.weight, w)
    fam = model.family_
    parts, exact = exact_posterior(fam, Xw, 1.0)
    freq = partition_frequencies(model.trace_.labels, parts)
    assert total_variation(freq, exact) < 0.04
    # with whole weights the power posterior is not that of the repeated rows' partition
    # of the rows (their copies held together), unless every weight is 1
    if mode == "power":
        plain = exact_posterior(fam, Xw.with_weight(np.ones(4)), 1.0)[1]
        assert total_variation(plain, exact) > 0.05


def test_power_weights_of_a_table_leave_predictions_per_row():
    model = DPMixture(family=TableFamily(kinds=KINDS, kappa=0.5), n_iter=20,
                      random_state=0, n_chains=1).fit(MIXED, sample_weight=[1.0, 0.0, 2.5, 0.5])
    assert model.labels_.shape == (4,) and model.labels_[1] >= 0
    assert np.isnan(model.certainty_[1])
    assert model.score_samples(MIXED).shape == (4,)


# ----------------------------------------------------------------- refused weights
@pytest.mark.parametrize("w, match", [
    (np.ones((12, 2)), r"one number per row, shape \(n_samples,\)"),
    (np.ones(13), "13 entries but X has 12 rows"),
    ([1.0] * 11 + [np.nan], "NaN or infinite .first: row 11"),
    ([1.0] * 5 + [-1.0] * 7, "7 negative weight.* row 5"),
    (np.zeros(12), "zero for every row"),
    (["a"] * 12, "must be numbers"),
])
def test_bad_weights_are_refused(w, match):
    with pytest.raises(ValueError, match=match):
        DPMixture(n_iter=5, n_chains=1).fit(_points(), sample_weight=w)


def test_fractional_weights_need_a_family_that_takes_powers():
    w = np.full(12, 1.5)
    with pytest.raises(ValueError, match=r"'gaussian' family does not take a power.*"
                                         r"'table'.*Whole-number weights work for every"):
        DPMixture(n_iter=5, n_chains=1).fit(_points(), sample_weight=w)
    with pytest.raises(ValueError, match="needs whole numbers; row 0 has 1.5"):
        DPMixture(n_iter=5, sample_weight_mode="repeat", n_chains=1).fit(_points(), sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight_mode must be one of"):
        DPMixture(n_iter=5, sample_weight_mode="copies", n_chains=1).fit(_points())


def test_absurd_repetition_is_refused():
    X = _points()
    with pytest.raises(ValueError, match="copies per row.*sample_weight_mode='repeat'.*"
                                         "'power'"):
        DPMixture(n_iter=5, n_chains=1).fit(X, sample_weight=np.full(12, 60))
    with pytest.raises(ValueError, match="more than 10,000,000 rows"):
        DPMixture(n_iter=5, sample_weight_mode="repeat", n_chains=1).fit(
            X, sample_weight=np.full(12, MAX_COPIES // 10))
    # asked for explicitly, many copies per row are fine
    model = DPMixture(n_iter=3, sample_weight_mode="repeat",
                      n_chains=1).fit(X[:2], sample_weight=[60, 60])
    assert model.labels_.shape == (2,)


def test_weights_refused_where_the_model_cannot_take_them():
    X = _points()
    with pytest.raises(ValueError, match="coarsening='auto' calibrates on unweighted"):
        DPMixture(n_iter=5, coarsening="auto", n_chains=1).fit(X, sample_weight=np.ones(12))
    with pytest.raises(ValueError, match="does not combine with powers per row"):
        DPMixture(family=TableFamily(kinds=KINDS), n_iter=5, coarsening=10.0, n_chains=1).fit(
            MIXED, sample_weight=[1.0, 0.5, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"executor=None"):
        DPMixture(n_iter=5, executor="dask", n_chains=1).fit(X, sample_weight=np.ones(12))


# ------------------------------------------------------------------- the folding
def test_folding_to_rows():
    rows = np.array([0, 0, 0, 2, 3, 3])
    labels, share = fold_labels(rows, 4, [1, 0, 1, 2, 0, 1])
    np.testing.assert_array_equal(labels, [1, -1, 2, 0])  # ties: the lower label
    np.testing.assert_allclose(share, [2 / 3, 0, 1, 0.5])
    np.testing.assert_allclose(fold_mean(rows, 4, [1, 2, 3, 4, 5, 6]), [2, np.nan, 4, 5.5])
    np.testing.assert_array_equal(first_model_rows(rows, 4), [0, -1, 3, 4])


def test_a_power_weighted_run_resumes_only_with_its_weights(tmp_path):
    """The weights are part of the table's fingerprint: resuming without them is refused."""
    w = [1.0, 2.5, 0.5, 1.5]
    path = tmp_path / "run.ckpt"
    kw = dict(family="table", random_state=1)
    whole = DPMixture(n_iter=20, **kw).fit(MIXED, sample_weight=w)
    DPMixture(n_iter=10, burn_in=5, checkpoint=path, **kw).fit(MIXED, sample_weight=w)
    with pytest.raises(DataError, match="fingerprints"):
        DPMixture.resume(path, MIXED, n_iter=20)
    resumed = DPMixture.resume(path, MIXED, sample_weight=w, n_iter=20)
    np.testing.assert_array_equal(resumed.trace_.log_joint, whole.trace_.log_joint)
