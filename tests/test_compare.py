"""compare_models: held-out log predictive density of several models on one split, the paired
standard error, the split, reproducibility, the errors; and ``dpclust compare`` end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpclust import DPMixture, compare_models
from dpclust.datasets import load_dublin_west, make_gaussian_mixture
from dpclust.estimators.comparison import (comparison_sentence, paired_difference,
                                           train_test_indices)

pytestmark = pytest.mark.filterwarnings("ignore:.*has not converged:UserWarning")


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_gaussian_mixture(n_samples=150, n_clusters=3, random_state=0)
    return X


@pytest.fixture(scope="module")
def gaussian_result(blobs):
    models = {"one cluster": DPMixture(prior="finite:1", init_clusters=1, n_iter=30, n_chains=1),
              "dp": DPMixture(n_iter=30, n_chains=1)}
    return compare_models(blobs, models, random_state=0)


@pytest.fixture(scope="module")
def ballots():
    X = load_dublin_west()
    return X[np.random.default_rng(1).choice(len(X), 100, replace=False)]


# --------------------------------------------------------------------------------- the maths


def test_paired_standard_error_is_that_of_the_pointwise_differences():
    a = np.array([-1.0, -2.0, -0.5, -3.0, -1.5])
    b = np.array([-1.5, -2.0, -1.0, -2.0, -2.5])
    d = a - b  # 0.5, 0, 0.5, -1, 1
    mean = d.sum() / 5
    se_sum = math.sqrt(5 * np.sum((d - mean) ** 2) / 5)  # arviz.compare's dse, on sums
    diff, se = paired_difference(a, b)
    assert diff == pytest.approx(0.2)
    assert se == pytest.approx(se_sum / 5)
    assert se == pytest.approx(math.sqrt(np.var(d) / 5))


def test_the_table_reports_the_paired_se_and_each_models_se(gaussian_result):
    r = gaussian_result
    table = r.table.set_index("model")
    best, other = r.pointwise["dp"], r.pointwise["one cluster"]
    assert table.loc["dp", "elpd"] == pytest.approx(best.mean())
    assert table.loc["dp", "se"] == pytest.approx(best.std() / math.sqrt(best.size))
    assert table.loc["one cluster", "elpd_diff"] == pytest.approx((other - best).mean())
    assert table.loc["one cluster", "se_diff"] == pytest.approx(
        (other - best).std() / math.sqrt(best.size))
    assert table.loc["dp", "elpd_diff"] == 0 and table.loc["dp", "se_diff"] == 0


# ------------------------------------------------------------------------------- the answers


def test_the_better_gaussian_model_wins_by_a_clear_margin(gaussian_result):
    r = gaussian_result
    assert r.best == "dp"
    assert list(r.table["model"]) == ["dp", "one cluster"]
    loser = r.table.iloc[1]
    assert loser["elpd_diff"] < -0.5
    assert loser["elpd_diff"] < -3 * loser["se_diff"]
    assert loser["n_clusters"] == 1 and loser["n_large_clusters"] == 1
    assert r.table.iloc[0]["n_large_clusters"] >= 2
    assert (r.table["fit_seconds"] > 0).all()
    assert r.table["converged"].dtype == bool
    text = r.summary()
    assert text.startswith("dp fits the held-out points better than one cluster by ")
    assert "nats per point (30 held-out points)" in text
    assert "dp fits" in repr(r)


def test_same_split_for_every_model_and_its_indices(gaussian_result, blobs):
    r = gaussian_result
    [(train, test)] = train_test_indices(len(blobs), random_state=0)
    assert np.array_equal(r.test_index, test)
    assert len(test) == 30 and len(train) == 120
    assert np.intersect1d(train, test).size == 0
    for name, fits in r.estimators.items():
        assert len(fits) == 1 and fits[0].labels_.shape == (120,)
        # the fitted copy scores the held-out rows as the table says
        assert np.allclose(fits[0].score_samples(blobs[test]), r.pointwise[name])
        assert r.pointwise[name].shape == (30,)


def test_the_same_random_state_gives_the_same_table(blobs, gaussian_result):
    models = {"one cluster": DPMixture(prior="finite:1", init_clusters=1, n_iter=30, n_chains=1),
              "dp": DPMixture(n_iter=30, n_chains=1)}
    again = compare_models(blobs, models, random_state=0)
    cols = ["model", "elpd", "se", "elpd_diff", "se_diff", "n_clusters", "n_large_clusters"]
    assert again.table[cols].equals(gaussian_result.table[cols])
    assert models["dp"].random_state is None  # the candidates are left as they were
    assert not hasattr(models["dp"], "labels_")


def test_k_fold_holds_every_row_out_once(blobs):
    r = compare_models(blobs[:60], {"a": DPMixture(n_iter=10, n_chains=1),
                                    "b": DPMixture(prior="finite:1", n_iter=10, n_chains=1)},
                       n_splits=3, random_state=2)
    assert np.array_equal(np.sort(r.test_index), np.arange(60))
    assert np.bincount(r.fold).tolist() == [20, 20, 20]
    assert r.n_splits == 3 and len(r.estimators["a"]) == 3
    assert set(r.table["n_test"]) == {60}
    assert "each held out once in 3 folds" in r.summary()


def test_two_mallows_configurations_on_ballots(ballots):
    models = {"exact": DPMixture(family="mallows", n_iter=8, n_chains=1),
              "coarsened": DPMixture(family="mallows", coarsening=20.0, n_iter=8, n_chains=1)}
    r = compare_models(ballots, models, test_size=0.25, random_state=0)
    assert sorted(r.table["model"]) == ["coarsened", "exact"]
    assert r.noun == "ranking"
    assert set(r.table["n_test"]) == {25}
    assert np.isfinite(r.table[["elpd", "se", "elpd_diff", "se_diff"]].to_numpy()).all()
    assert (r.table["elpd"] < 0).all()  # log probabilities of discrete rankings
    assert r.table["elpd"].is_monotonic_decreasing
    assert "nats per ranking (25 held-out rankings)" in r.summary()
    d = r.to_dict()
    json.dumps(d)
    assert d["noun"] == "ranking" and d["n_test"] == 25


def test_a_family_object_with_its_own_hyperparameters_is_a_candidate(ballots):
    from dpclust.families import GeneralizedMallows

    family = GeneralizedMallows(nu=2.0)
    r = compare_models(ballots, {"nu=1": DPMixture(family="mallows", n_iter=4, n_chains=1),
                                 "nu=2": DPMixture(family=family, n_iter=4, n_chains=1)},
                       test_size=10, random_state=5)
    assert r.estimators["nu=2"][0].family is family and family.nu == 2.0
    assert r.estimators["nu=2"][0].family_.nu == 2.0
    assert set(r.table["n_test"]) == {10}


def test_rankings_given_as_lists_of_names_share_their_items_across_the_split():
    # "d" is ranked only in a held-out ballot: the data are read once, before the split,
    # so the training part knows the item too
    [(train, test)] = train_test_indices(40, test_size=8, random_state=0)
    rng = np.random.default_rng(0)
    X = [list(rng.permutation(["a", "b", "c"])[: rng.integers(1, 3)]) for _ in range(40)]
    X[test[0]] = ["d", "a"]
    r = compare_models(X, {"a": DPMixture(family="mallows", n_iter=4, n_chains=1),
                           "b": DPMixture(family="mallows", coarsening=10.0, n_iter=4, n_chains=1)},
                       test_size=8, random_state=0)
    assert np.array_equal(r.test_index, test)
    assert np.isfinite(r.pointwise["a"]).all() and r.pointwise["b"].shape == (8,)


def test_the_sentence_says_when_the_models_are_within_two_standard_errors():
    result = {"models": [{"model": "a", "elpd_diff": 0.0, "se_diff": 0.0},
                         {"model": "b", "elpd_diff": -0.01, "se_diff": 0.02},
                         {"model": "c", "elpd_diff": -1.0, "se_diff": 0.02}],
              "n_test": 1200, "n_splits": 1, "noun": "ranking"}
    text = comparison_sentence(result)
    assert text.startswith("a and b fit the held-out rankings about as well: a is ahead by "
                           "0.010 ± 0.020 nats per ranking")
    assert "(1,200 held-out rankings)" in text and "1 more model behind" in text


# -------------------------------------------------------------------------------- the errors


@pytest.mark.parametrize("models, message", [
    ({"a": DPMixture()}, "at least 2 models"),
    ([DPMixture(), DPMixture()], "mapping of names"),
    ({"a": DPMixture(), "b": DPMixture(family="nonsense")}, "model 'b': unknown family"),
    ({"a": DPMixture(), "b": DPMixture(family="mallows")}, "same kind of data"),
    ({"a": DPMixture(n_chains=1, n_iter=200), "b": object()}, "not an estimator"),
])
def test_bad_models_are_refused_before_any_fit(blobs, models, message):
    with pytest.raises(ValueError, match=message):
        compare_models(blobs, models)


@pytest.mark.parametrize("kwargs, message", [
    (dict(test_size=0.0), "test_size must be"),
    (dict(test_size=1.0), "test_size must be"),
    (dict(test_size=1.5), "test_size must be"),
    (dict(test_size=1), "hold out at least 2"),
    (dict(test_size=149), "leave at least 2"),
    (dict(test_size=0.2, n_splits=5), "not both"),
    (dict(n_splits=1), "n_splits must be"),
    (dict(random_state=-1), "random_state"),
])
def test_bad_splits_are_refused(blobs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        compare_models(blobs, {"a": DPMixture(n_iter=2, n_chains=1),
                               "b": DPMixture(n_iter=2, n_chains=1)}, **kwargs)


# ------------------------------------------------------------------------- dpclust compare


def _run(capsys, *argv):
    from dpclust.cli import main

    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_compare_gaussian_configurations_writes_table_json_and_page(tmp_path, blobs,
                                                                        capsys):
    data = tmp_path / "points.csv"
    np.savetxt(data, blobs, delimiter=",", header="x,y", comments="")
    out = tmp_path / "cmp"
    status, stdout, err = _run(capsys, "compare", data, "--family", "gaussian", "--model",
                               "family=gaussian,prior=finite:1,name=one-cluster",
                               "--n-iter", 30, "--random-state", 3, "--no-progress", "--out", out)
    assert status == 0, err
    assert "gaussian fits the held-out points better than one-cluster by" in stdout
    assert "(30 held-out points)" in stdout
    import pandas as pd

    table = pd.read_csv(out / "comparison.csv")
    assert list(table["model"]) == ["gaussian", "one-cluster"]
    payload = json.loads((out / "comparison.json").read_text())
    assert payload["settings"]["models"]["one-cluster"]["prior"] == "finite:1"
    assert payload["comparison"]["n_test"] == 30 and payload["data"]["n_samples"] == 150
    assert payload["sentence"] in stdout
    pointwise = pd.read_csv(out / "pointwise.csv")
    assert list(pointwise.columns) == ["row", "fold", "gaussian", "one-cluster"]
    assert np.allclose(pointwise["gaussian"].mean(), table["elpd"][0])
    page = (out / "comparison.html").read_text()
    assert "Model comparison" in page and "one-cluster" in page
    assert (out / "comparison.png").is_file() and 'id="fig-comparison"' in page


def test_cli_compare_two_mallows_configurations_on_bundled_ballots(tmp_path, capsys):
    out = tmp_path / "cmp"
    status, stdout, err = _run(capsys, "compare", "--dataset", "dublin-west", "--subsample",
                               100, "--family", "mallows", "--model",
                               "family=mallows,coarsening=20,nu=2", "--n-iter", 6,
                               "--no-progress",
                               "--no-plots", "--out", out)
    assert status == 0, err
    assert "nats per ranking" in stdout and "(20 held-out rankings)" in stdout
    payload = json.loads((out / "comparison.json").read_text())
    assert sorted(m["model"] for m in payload["comparison"]["models"]) == [
        "mallows", "mallows (coarsening=20, nu=2)"]
    assert payload["data"]["subsample"]["n"] == 100
    assert payload["settings"]["models"]["mallows (coarsening=20, nu=2)"]["nu"] == 2.0
    assert not (out / "comparison.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["--family", "gaussian"], "at least two models"),
    (["--family", "gaussian", "--family", "mallows"], "same kind of data"),
    (["--family", "gaussian", "--model", "family=gaussian"], "two models are called"),
    (["--family", "gaussian", "--model", "family=gaussian,beta=2"], "unknown key beta="),
    (["--family", "gaussian", "--model", "prior=finite:2"], "needs family="),
    (["--family", "gaussian", "--family", "nonsense"], "invalid choice"),
    (["--family", "gaussian", "--model", "family=gaussian,prior=finite:1,name=b",
      "--test-size", "0.2", "--folds", "3"], "not both"),
    (["--family", "gaussian", "--model", "family=gaussian,name=b", "--test-size", "1.5"],
     "share in (0, 1)"),
    (["--dataset", "dublin-west", "--family", "gaussian", "--model", "family=gaussian,name=b"],
     "holds rankings"),
])
def test_cli_compare_usage_errors(tmp_path, capsys, argv, message):
    status, _, err = _run(capsys, "compare", *argv, "--out", tmp_path / "o")
    assert status == 2
    assert message in err and err.startswith("dpclust: error:")


def test_the_page_escapes_names_and_flags_chains_that_have_not_converged():
    from dpclust.report.comparison import render_comparison_html

    row = dict(elpd=-1.0, se=0.1, elpd_diff=0.0, se_diff=0.0, n_clusters=2.0,
               n_large_clusters=2.0, fit_seconds=1.0)
    payload = {"sentence": "a <b> fits", "comparison": {
        "models": [dict(row, model="<b>", converged=False),
                   dict(row, model="c", elpd_diff=-0.5, se_diff=None, converged=True)],
        "n_test": 10, "n_splits": 1, "noun": "ranking"}}
    page = render_comparison_html(payload)
    assert "<b>" not in page.split("<details>")[0]
    assert "&lt;b&gt;" in page and "Not converged" in page
    assert "nats per ranking" in page and "—" in page
