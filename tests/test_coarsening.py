"""``DPMixture(coarsening=...)``, the choice of alpha_c and ``dpclust fit --coarsening``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from dpclust import DPMixture
from dpclust.cli import main
from dpclust.datasets import make_gaussian_mixture
from dpclust.estimators.coarsening import (Calibration, calibrate, elbow, elbow_heights,
                                          near_elbows)
from dpclust.estimators.summary import coarsening_summary


@pytest.fixture(scope="module")
def data():
    return make_gaussian_mixture(n_samples=400, n_clusters=3, random_state=0)


def _fit(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DPMixture(n_iter=60, random_state=0, n_chains=1, **kw).fit(X)


def test_coarsened_fit_finds_the_clusters_and_says_which_posterior(data):
    X, y = data
    from sklearn.metrics import adjusted_rand_score

    m = _fit(X, coarsening=50.0)
    assert m.prior_.name == "finite" and m.prior_.n_components == 20
    assert adjusted_rand_score(y, m.labels_) > 0.95
    info = coarsening_summary(m)
    assert info["posterior"] == "coarsened" and info["alpha_c"] == 50.0
    assert info["zeta"] == pytest.approx(50.0 / 450.0)
    assert info["tolerated_misfit_nats_per_point"] == pytest.approx(0.02)
    assert info["chosen_by"] == "user"
    assert coarsening_summary(_fit(X)) is None  # the exact posterior says nothing


@pytest.mark.parametrize("kw, message", [
    (dict(coarsening=-1.0), "positive number"),
    (dict(coarsening="tight"), "positive number"),
    (dict(coarsening=10.0, prior="dp"), "finite mixture"),
    (dict(coarsening=10.0, alpha=2.0), "finite:K,ALPHA"),
    (dict(coarsening=10.0, sampler="gibbs"), "'coarsened' sampler"),
    (dict(coarsening=10.0, partitions=2), "in-process"),
])
def test_bad_settings_are_refused(data, kw, message):
    with pytest.raises(ValueError, match=message):
        DPMixture(n_iter=5, **kw).fit(data[0])


def test_elbow_rule():
    # steep gains, then a plateau: the elbow is where the plateau starts
    assert elbow([2, 3, 4, 8, 12], [-5.0, -4.0, -3.2, -3.1, -3.05]) == 2
    assert elbow([3, 3, 3], [-1.0, -1.0, -1.0]) == 2  # flat: the largest alpha_c
    assert elbow([1, 2], [-2.0, -1.0]) == 1


def test_near_ties_of_the_elbow_are_named():
    # the diamonds' calibration (100 iterations per alpha_c = 10 ... 10,000): 100 and 300
    # are 0.62 and 0.61 above the chord, so each run may pick either
    complexity = [1.12, 1.68, 1.1, 3.02, 7.54, 11.0, 10.0]
    fit = [-5.0949, -4.6621, -4.3178, -4.0921, -3.9693, -3.9823, -4.0092]
    i = elbow(complexity, fit)
    assert i == 2 and list(near_elbows(complexity, fit, i)) == [3]
    h = elbow_heights(complexity, fit)
    assert h[2] == pytest.approx(0.62, abs=0.01) and h[3] == pytest.approx(0.61, abs=0.01)
    # a clear elbow has none
    assert len(near_elbows([2, 3, 4, 8, 12], [-5.0, -4.0, -3.2, -3.1, -3.05], 2)) == 0
    cal = Calibration(np.array([10.0, 100.0]), np.array([0.1, 0.5]), np.zeros(2), np.zeros(2),
                      100.0, 1, 50, (10.0,))
    assert cal.as_dict()["near_elbows"] == [10.0]


def test_auto_runs_the_grid_and_fits_at_the_elbow(data):
    X, _ = data
    m = _fit(X, coarsening="auto")
    cal = m.calibration_
    assert isinstance(cal, Calibration)
    assert list(cal.alpha_c) == [10.0, 30.0, 100.0, 300.0]  # the default grid below N
    assert m.coarsening_ == cal.chosen == cal.alpha_c[cal.index]
    assert np.all(np.diff(cal.zeta) > 0)
    assert cal.fit[-1] > cal.fit[0]  # less coarsening fits the data better
    info = coarsening_summary(m)
    assert info["chosen_by"] == "elbow" and info["calibration"]["chosen"] == cal.chosen
    with pytest.raises(ValueError, match="positive numbers"):
        calibrate(DPMixture(coarsening="auto", n_chains=1, n_iter=200), X, grid=[0.0, 10.0])


def test_the_grid_runs_on_a_subsample_of_the_same_effective_sample_size():
    """Above ``n_rows`` points the grid runs on a random subsample, each value at the
    alpha_c whose effective sample size zeta m equals the whole data's zeta N; values whose
    subsample would be nearly exact (zeta_m >= 1/2) are dropped."""
    X, _ = make_gaussian_mixture(n_samples=1_200, n_clusters=3, random_state=1)
    est = DPMixture(coarsening="auto", n_chains=1, n_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cal = calibrate(est, X, grid=[10.0, 100.0, 300.0, 1000.0], n_rows=400)
    assert cal.n_rows == 400
    assert list(cal.alpha_c) == [10.0, 100.0]  # E(300) = 240 >= 400 / 2: dropped
    effective = cal.alpha_c * 1_200 / (cal.alpha_c + 1_200)
    np.testing.assert_allclose(cal.alpha_subsample * 400 / (cal.alpha_subsample + 400),
                               effective)
    np.testing.assert_allclose(cal.zeta, cal.alpha_c / (cal.alpha_c + 1_200))
    assert cal.chosen in cal.alpha_c and np.all(np.isfinite(cal.fit))
    info = cal.as_dict()
    assert info["rows"] == 400 and len(info["alpha_c_subsample"]) == 2
    again = calibrate(est, X, grid=[10.0, 100.0], n_rows=400)
    np.testing.assert_array_equal(again.fit, cal.fit)  # the same subsample at the same seed
    whole = calibrate(est, X[:300], grid=[10.0, 100.0], n_rows=400)
    assert whole.n_rows == 300 and whole.alpha_subsample is None


def test_cli_coarsening(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["fit", "--random-state", "0", "--coarsening", "40", "--n-chains", "1", "--n-iter", "30", "--no-plots",
                 "--no-progress", "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["coarsening"]["alpha_c"] == 40.0
    assert summary["settings"]["sampler"] == "auto (coarsened)"
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["--coarsening", "0"], "positive number"),
    (["--coarsening", "10", "--prior", "dp"], "finite:K"),
    (["--coarsening", "10", "--sampler", "gibbs"], "'coarsened'"),
    (["--coarsening", "10", "--model", "ddcrp"], "--model dp"),
    (["--coarsening", "10", "--alpha", "2"], "finite:K,ALPHA"),
])
def test_cli_coarsening_mistakes_are_one_clear_message(tmp_path, capsys, argv, message):
    status = main(["fit", "--random-state", "0", *argv, "--n-chains", "1", "--n-iter", "4", "--no-progress", "--no-plots",
                   "--out", str(tmp_path / "bad")])
    err = capsys.readouterr().err
    assert status != 0
    assert message in err and "Traceback" not in err


def test_rankings_summary_calls_the_coarsened_sampler_exact():
    from dpclust.families import GeneralizedMallows
    from dpclust.rankings import Rankings

    X = Rankings([[0, 1, 2, 3], [0, 1, 3, 2], [3, 2, 1, 0]], n_items=4)
    fam = GeneralizedMallows().resolve(X)
    params = {"central_rankings": np.array([[0, 1, 2, 3]]), "theta": np.ones((1, 3))}
    from dpclust.samplers import get_sampler, is_exact_for

    block = fam.describe_fit(params, np.array([3.0]), sampler="coarsened")
    assert "coarsened posterior" in block["posterior"]
    assert "approximate" in fam.describe_fit(params, np.array([3.0]),
                                             sampler="beta-gibbs")["posterior"]
    # whether the draws are exact is the sampler's declaration (the summary adds it)
    assert is_exact_for(get_sampler("coarsened")) and not is_exact_for(get_sampler("beta-gibbs"))
