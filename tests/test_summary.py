"""The run summary (dpclust.estimators.summary) from an estimator fitted through the API."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

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


def _split_groups(rng, n_per=150):
    """Two groups, each three close Gaussians: the raw partition splits them, fusing
    joins them back."""
    subs = [np.array([[0, 0], [0.6, 0.3], [-0.3, 0.6]]),
            np.array([[3.5, 0], [4.1, -0.4], [3.3, -0.6]])]
    return np.vstack([m[rng.integers(0, 3, n_per)] + 0.55 * rng.standard_normal((n_per, 2))
                      for m in subs])


def test_the_fused_block_is_the_fused_clusters_beside_the_raw_partition():
    X = _split_groups(np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(alpha=3.0, n_iter=60, random_state=0, n_chains=1).fit(X)
    s = run_summary(model, data={"n_samples": len(X)}, total_seconds=1.0, version="test")
    assert "fused" not in s  # not fused, and nothing says why
    s = run_summary(model, data={"n_samples": len(X)}, total_seconds=1.0, version="test",
                    fused_skipped="because")
    assert s["fused"] == {"computed": False, "reason": "because"}

    fusion = model.fuse()
    s = run_summary(model, data={"n_samples": len(X)}, total_seconds=1.0, version="test")
    f = s["fused"]
    assert f["computed"] and f["n_clusters"] == fusion.n_clusters <= s["n_clusters"]
    assert f["omega"] == 1.0 and f["threshold"] == 0.5 and f["n_draws"] == fusion.n_draws
    table = np.array(f["crosstab"])
    assert table.shape == (s["n_clusters"], f["n_clusters"])
    assert table.sum(axis=0).tolist() == f["sizes"] == np.bincount(fusion.labels).tolist()
    assert table.sum(axis=1).tolist() == s["cluster_sizes"]
    naive = np.zeros_like(table)
    for raw, fused in zip(model.labels_, fusion.labels):
        naive[raw, fused] += 1
    assert np.array_equal(table, naive) and f["raw_to_fused"] == table.argmax(1).tolist()
    # mean Hellinger distance over the pairs of points within and between fused clusters
    delta, n = fusion.delta, np.bincount(fusion.labels).astype(float)
    pairs = np.outer(n, n) - np.diag(n)
    same = np.eye(len(n), dtype=bool)
    h = f["hellinger"]
    assert h["within"] == pytest.approx((delta * pairs)[same].sum() / pairs[same].sum())
    assert h["between"] == pytest.approx((delta * pairs)[~same].sum() / pairs[~same].sum())
    assert 0 <= h["within"] < 0.5 < h["between"] <= 1
    assert np.allclose(h["matrix"], delta, atol=1e-4)
    assert np.allclose(h["within_cluster"], np.diag(delta), atol=1e-4)
    assert np.allclose(h["to_nearest"], np.where(same, np.inf, delta).min(1), atol=1e-4)
    # the per-draw numbers and their verdict, also in the convergence block
    per_draw = f["per_draw"]
    assert per_draw["mean"] == pytest.approx(model.fused_per_draw_.mean())
    assert sum(per_draw["distribution"].values()) == pytest.approx(1.0)
    assert per_draw["convergence"] == s["convergence"]["fused_clusters"]
    entry = s["convergence"]["fused_clusters"]
    assert entry["judged"] is True and entry["draws"] == "every kept draw"
    assert entry["n_draws"] == 30 and isinstance(entry["converged"], bool)
    json.dumps(s, allow_nan=False)  # strict JSON (no NaN here: the entry has figures)
