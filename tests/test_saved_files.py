"""Checkpoints and models written before a class moved still load (the alias table of
:mod:`dpclust.utils.safe_io`): the files of ``tests/saved_files.py``, written by the tree
of commit c0826e1, whose classes lived in ``dpclust.estimator``."""

from __future__ import annotations

import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import saved_files as saved  # noqa: E402

from dpclust import DDCRPMixture, DPMixture  # noqa: E402
from dpclust.utils import safe_io  # noqa: E402
from dpclust.utils.checks import DataError  # noqa: E402


@pytest.fixture(scope="module")
def X():
    X = np.load(saved.X_PATH)
    np.testing.assert_array_equal(X, saved.data())
    return X


def _copy(path, tmp_path):
    """A copy to resume from (a resumed run writes its checkpoint back)."""
    return shutil.copy(path, tmp_path / path.name)


def _quietly(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def test_old_dp_checkpoint_resumes_as_the_uninterrupted_run(X, tmp_path):
    from dpclust.estimator import checkpoint_iteration, load_checkpoint

    assert checkpoint_iteration(load_checkpoint(saved.DP_CHECKPOINT)) == 6
    path = _copy(saved.DP_CHECKPOINT, tmp_path)
    resumed = _quietly(lambda: DPMixture.resume(path, X, n_iter=10))
    # the file records no sampler: the resumed run goes on with the one "auto" chose when
    # it was written (Gibbs; Gaussian data below 5,000 points take Gibbs+SAMS now)
    assert resumed.sampler_ == "gibbs"
    whole = _quietly(lambda: DPMixture(**{**saved.DP_KW, "n_iter": 10, "sampler": "gibbs"}).fit(X))
    assert resumed.n_iter_ == 10
    np.testing.assert_array_equal(resumed.labels_, whole.labels_)
    np.testing.assert_array_equal(resumed.trace_.log_joint, whole.trace_.log_joint)
    assert resumed.alpha_ == whole.alpha_


def test_old_ddcrp_checkpoint_resumes_as_the_uninterrupted_run(X, tmp_path):
    path = _copy(saved.DDCRP_CHECKPOINT, tmp_path)
    resumed = _quietly(lambda: DDCRPMixture.resume(path, X, n_iter=10))
    whole = _quietly(lambda: DDCRPMixture(**{**saved.DDCRP_KW, "n_iter": 10}).fit(X))
    assert resumed.n_iter_ == 10
    np.testing.assert_array_equal(resumed.labels_, whole.labels_)
    np.testing.assert_array_equal(resumed.links_, whole.links_)
    np.testing.assert_array_equal(resumed.trace_.log_joint, whole.trace_.log_joint)


def test_old_model_loads_and_predicts(X):
    from dpclust.estimator import Trace

    model = DPMixture.load(saved.DP_MODEL)
    # the sampler "auto" chose when the file was written
    whole = _quietly(lambda: DPMixture(**saved.DP_MODEL_KW, sampler="gibbs").fit(X))
    assert model.n_iter_ == 10 and isinstance(model.trace_, Trace)
    np.testing.assert_array_equal(model.trace_.log_joint, whole.trace_.log_joint)
    # the same chain; its labels_ were the best draw then, the searched estimate now
    np.testing.assert_array_equal(model.trace_.n_clusters, whole.trace_.n_clusters)
    assert whole.expected_loss_ <= model.expected_loss_ + 1e-12
    assert np.mean(model.predict(X) == model.labels_) > 0.9
    np.testing.assert_allclose(model.score_samples(X[:5]), whole.score_samples(X[:5]))


def test_a_class_outside_dpclust_is_still_refused():
    with pytest.raises(DataError, match="not dpclust's"):
        safe_io._dpclust_class("os:PathLike")
