"""The run summary (dpclust.estimators.summary) from an estimator fitted through the API."""

from __future__ import annotations

import warnings

import numpy as np

from dpclust import DPMixture, GammaPrior
from dpclust.datasets import make_documents, make_gaussian_mixture
from dpclust.estimators.summary import alpha_setting, run_summary


def _fit(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPMixture(n_iter=20, sampler="gibbs", random_state=0, **kwargs)


def test_run_summary_from_the_estimator_alone():
    X, y = make_gaussian_mixture(n_samples=40, n_clusters=2, n_features=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _fit(alpha=GammaPrior(1.0, 2.0)).fit(X)
    s = run_summary(model, data={"n_samples": 40}, total_seconds=1.0, version="test",
                    truth=y)
    assert s["settings"]["family"] == "gaussian" and s["settings"]["alpha"] == "gamma:1,2"
    assert s["settings"]["sampler"] == "gibbs" and s["settings"]["n_iter"] == 20
    assert "alpha_posterior_mean" in s and "alpha" not in s
    assert s["n_clusters"] == model.n_clusters_ and sum(s["cluster_sizes"]) == 40
    assert set(s["cluster_params"]) == {"means", "covariances"}
    assert set(s["metrics"]) == {"nmi", "ari"} and s["dpclust_version"] == "test"
    assert "gaussian" not in s  # the Gaussian family has no block of its own


def test_run_summary_takes_the_family_s_settings_and_cluster_block():
    X, _ = make_documents(n_docs=60, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from dpclust.families import DirichletMultinomial

        model = _fit(family=DirichletMultinomial(concentration=0.5)).fit(X)
    s = run_summary(model, data={"n_samples": 60}, total_seconds=1.0, version="test",
                    alpha="1.0")
    assert s["settings"]["concentration"] == 0.5 and s["alpha"] == model.alpha_
    assert len(s["cluster_params"]["top_words"]) == model.n_clusters_
    assert np.all(np.diff(s["cluster_params"]["top_word_probabilities"][0]) <= 0)


def test_alpha_setting_is_a_number_or_the_prior_s_text():
    assert alpha_setting("1.5") == 1.5 and alpha_setting(2) == 2.0
    assert alpha_setting("gamma:1,1") == "gamma:1,1"
