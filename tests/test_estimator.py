"""DPMixture end to end: scikit-learn conventions, determinism, predictions, checkpoints."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpclust import DPMixture, GammaPrior, NormalInverseWishart
from dpclust.utils.checks import DataError
from dpclust.datasets import load_demo, make_documents, make_gaussian_mixture
from dpclust.metrics import nmi
from dpclust.partitions import best_draw, expected_loss, point_estimate
from dpclust.samplers import FiniteSymmetricDirichlet


@parametrize_with_checks([DPMixture(n_iter=30, n_chains=1)], expected_failed_checks=lambda est: {
    # the check fits the weighted rows shuffled: the same posterior as the repeated rows,
    # but a chain depends on the order of its rows (tests/test_weights.py checks the
    # weighted fit against the repeated rows in the same order, and the exact posterior)
    "check_sample_weight_equivalence_on_dense_data":
        "an MCMC chain depends on the order of the rows, which the check shuffles"})
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def blobs():
    return make_gaussian_mixture(n_samples=600, n_clusters=4, random_state=3)


@pytest.fixture(scope="module")
def fitted(blobs):
    X, _ = blobs
    return DPMixture(n_iter=60, store_labels=True, random_state=0, n_chains=1).fit(X)


@pytest.mark.parametrize("sampler", ["gibbs", "explicit", "fsd"])
def test_recovers_well_separated_clusters(blobs, sampler):
    X, y = blobs
    model = DPMixture(sampler=sampler, n_iter=150, random_state=1, n_chains=1).fit(X)
    sizes = np.sort(np.bincount(model.labels_))[::-1]
    assert sizes[:4].sum() >= 0.98 * len(X)  # at most a few points in extra small clusters
    assert nmi(model.labels_, y) > 0.95


def test_demo_data_is_clustered_correctly():
    X, y = load_demo()
    model = DPMixture(n_iter=80, random_state=0, n_chains=1).fit(X)
    assert nmi(model.labels_, y) > 0.95


def test_multinomial_documents():
    X, y = make_documents(n_docs=300, n_topics=4, vocab_size=150, random_state=2)
    model = DPMixture(family="multinomial", n_iter=60, random_state=0, n_chains=1).fit(X)
    assert nmi(model.labels_, y) > 0.9
    assert model.cluster_params_["probabilities"].shape == (model.n_clusters_, 150)
    # the same data dense give the same chain
    dense = DPMixture(family="multinomial", n_iter=60, random_state=0, n_chains=1).fit(X.toarray())
    np.testing.assert_array_equal(dense.labels_, model.labels_)
    # predictions on sparse and dense input agree
    np.testing.assert_allclose(model.score_samples(X[:10]), model.score_samples(X[:10].toarray()))
    assert np.mean(model.predict(X) == model.labels_) > 0.95
    Xs, ys = model.sample(20, random_state=0)
    assert sp.issparse(Xs) and Xs.shape == (20, 150) and ys.shape == (20,)
    assert np.all(np.asarray(Xs.sum(axis=1)).ravel() >= 1)


def test_same_seed_same_result(blobs):
    X, _ = blobs
    a = DPMixture(n_iter=30, random_state=7, n_chains=1).fit(X)
    b = DPMixture(n_iter=30, random_state=7, n_chains=1).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.trace_.log_joint, b.trace_.log_joint)
    g = DPMixture(n_iter=30, random_state=np.random.default_rng(7), n_chains=1).fit(X)
    np.testing.assert_array_equal(g.trace_.log_joint, a.trace_.log_joint)


def test_trace_and_fitted_attributes(fitted, blobs):
    X, _ = blobs
    m = fitted
    tr = m.trace_
    for name in ("log_joint", "n_clusters", "alpha", "seconds"):
        assert getattr(tr, name).shape == (1, 60)
    assert np.all(np.diff(tr.seconds) >= 0)
    np.testing.assert_array_equal(tr.kept, np.arange(30, 60))
    assert tr.labels.shape == (1, 30, len(X))
    assert m.n_iter_ == 60
    assert m.weights_.shape == (m.n_clusters_,)
    assert m.weights_.sum() == pytest.approx(1.0) and 0 < m.weight_new_ < 1
    assert m.cluster_params_["means"].shape == (m.n_clusters_, 2)
    assert m.cluster_params_["covariances"].shape == (m.n_clusters_, 2, 2)
    assert m.log_joint_ == tr.log_joint[0, -1]
    assert m.best_log_joint_ == tr.log_joint.max()


def test_labels_are_the_vi_point_estimate_not_the_last_draw(fitted):
    from dpclust.samplers.base import searched_estimate

    start, _ = best_draw(fitted.trace_.labels, loss="vi")
    expected = searched_estimate(fitted.trace_.labels, "vi", start)
    np.testing.assert_array_equal(fitted.labels_, expected.labels)
    assert fitted.expected_loss_ == pytest.approx(expected.expected_loss)
    loss = expected_loss(fitted.labels_[None, :], fitted.trace_.labels, "vi")[0]
    assert fitted.expected_loss_ == pytest.approx(loss)
    # searched over all partitions: never worse than the best kept draw
    assert loss <= best_draw(fitted.trace_.labels, loss="vi")[1] + 1e-12


def test_the_search_after_a_short_run_takes_a_quarter_of_its_budget(blobs, monkeypatch):
    """A run held to a few seconds is not followed by a 30 s search: the search gets a
    quarter of the run's budget (at least 1 s), and 30 s after a long or unlimited run."""
    from dpclust.samplers import base

    assert base.search_seconds(None) == base.SEARCH_SECONDS == 30.0
    assert base.search_seconds(600.0) == 30.0 and base.search_seconds(8.0) == 2.0
    assert base.search_seconds(2.0) == 1.0
    given = []
    real = base.searched_estimate

    def recorded(pool, loss, start, max_time=base.SEARCH_SECONDS, groups=None):
        given.append(max_time)
        return real(pool, loss, start, max_time, groups)

    monkeypatch.setattr(base, "searched_estimate", recorded)
    X, _ = blobs
    DPMixture(n_iter=20, max_time=8, random_state=0, n_chains=1, progress=False).fit(X)
    DPMixture(n_iter=20, max_time=None, random_state=0, n_chains=1, progress=False).fit(X)
    assert given == [2.0, 30.0]


def test_binder_point_estimate(blobs):
    X, _ = blobs
    m = DPMixture(n_iter=30, point_estimate="binder", store_labels=True, random_state=0,
                  n_chains=1).fit(X)
    draws = m.trace_.labels
    assert m.expected_loss_ == pytest.approx(expected_loss(m.labels_[None, :], draws, "binder")[0])
    assert m.expected_loss_ <= best_draw(draws, "binder")[1] + 1e-12
    _, searched = point_estimate(draws, loss="binder", random_state=0)
    assert m.expected_loss_ == pytest.approx(searched, rel=1e-3)  # both searches' optima


def test_predictions(fitted, blobs):
    X, _ = blobs
    proba = fitted.predict_proba(X[:50])
    assert proba.shape == (50, fitted.n_clusters_)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # a new point goes where it is most probable; boundary points and members of tiny extra
    # clusters of the sampled partition may land elsewhere
    assert np.mean(fitted.predict(X) == fitted.labels_) > 0.9
    scores = fitted.score_samples(X[:50])
    assert scores.shape == (50,) and np.all(np.isfinite(scores))
    assert fitted.score(X) == pytest.approx(fitted.score_samples(X).mean())
    # a point far away is much less likely than the data
    assert fitted.score_samples(np.array([[1e3, 1e3]]))[0] < scores.min() - 10


def test_score_samples_is_a_density(fitted):
    """The posterior predictive integrates to one (Riemann sum over a wide 2-D grid)."""
    m = fitted
    lo = m.cluster_params_["means"].min(0) - 12
    hi = m.cluster_params_["means"].max(0) + 12
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    cell = (hi[0] - lo[0]) / 299 * (hi[1] - lo[1]) / 299
    mass = np.exp(m.score_samples(grid)).sum() * cell
    assert 0.95 < mass < 1.01


def test_sample(fitted):
    Xs, ys = fitted.sample(200, random_state=0)
    assert Xs.shape == (200, 2) and ys.shape == (200,)
    assert set(np.unique(ys)) <= set(range(fitted.n_clusters_ + 200))
    Xs2, ys2 = fitted.sample(200, random_state=0)
    np.testing.assert_array_equal(Xs, Xs2)


def test_posterior_similarity(fitted, blobs):
    P = fitted.posterior_similarity()
    n = len(blobs[0])
    assert P.shape == (n, n)
    np.testing.assert_allclose(np.diag(P), 1.0)
    np.testing.assert_allclose(P, P.T)


def test_alpha_resampling_records_alpha(blobs):
    X, _ = blobs
    m = DPMixture(alpha=GammaPrior(1.0, 1.0), n_iter=40, random_state=0, n_chains=1).fit(X)
    assert np.unique(m.trace_.alpha).size > 10
    assert m.alpha_ > 0
    m2 = DPMixture(alpha=("gamma", 1.0, 1.0), n_iter=40, random_state=0, n_chains=1).fit(X)
    np.testing.assert_array_equal(m.trace_.alpha, m2.trace_.alpha)


def test_family_object_and_sampler_object(blobs):
    X, y = blobs
    fam = NormalInverseWishart(kappa=0.05)
    m = DPMixture(family=fam, sampler=FiniteSymmetricDirichlet(n_components=10), n_iter=200,
                  random_state=0, n_chains=1).fit(X)
    assert fam.mean is None  # the estimator resolves a copy
    assert m.family_.kappa == 0.05
    assert nmi(m.labels_, y) > 0.95


def test_bad_input_is_reported_clearly(blobs):
    X, _ = blobs
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(DataError, match="NaN"):
        DPMixture(family="gaussian", n_iter=5, n_chains=1).fit(bad)
    # the default family reads the hole as a hole (the table family), and refuses what no
    # family reads by name
    assert DPMixture(n_iter=5, n_chains=1).fit(bad).family_.name == "table"
    with pytest.raises(ValueError, match="Complex data"):
        DPMixture(n_iter=5, n_chains=1).fit(X + 1j)
    with pytest.raises(ValueError, match="Expected 2D array"):
        DPMixture(n_iter=5, n_chains=1).fit(X[:, 0])
    with pytest.raises(ValueError, match="sparse X is read as word counts"):
        DPMixture(n_iter=5, n_chains=1).fit(sp.csr_matrix(X))
    # a scale the Gaussian statistics cannot hold is refused, with no NumPy warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataError, match="row 3, column 0.*Rescale"):
            DPMixture(n_iter=5, n_chains=1).fit(np.where(np.arange(len(X))[:, None] == 3, 1e300, X))
        with pytest.raises(DataError, match="column 0 varies by only"):
            DPMixture(n_iter=5, n_chains=1).fit(X * np.array([1e-200, 1.0]))
    with pytest.raises(ValueError, match="burn_in"):
        DPMixture(n_iter=5, burn_in=5, n_chains=1).fit(X)
    with pytest.raises(ValueError, match="unknown family"):
        DPMixture(family="lognormal", n_chains=1, n_iter=200).fit(X)
    with pytest.raises(ValueError, match="unknown sampler"):
        DPMixture(sampler="hmc", n_chains=1, n_iter=200).fit(X)
    with pytest.raises(ValueError, match="alpha"):
        DPMixture(alpha=-1, n_chains=1, n_iter=200).fit(X)
    counts = sp.csr_matrix(np.array([[1, 2], [0, -1]]))
    with pytest.raises(DataError, match="negative"):
        DPMixture(family="multinomial", n_chains=1, n_iter=200).fit(counts)
    with pytest.raises(DataError, match="whole"):
        DPMixture(family="multinomial", n_chains=1, n_iter=200).fit(np.array([[1.5, 2.0]]))
    for bad in [(np.inf, 1.0), (1.0, np.inf), (np.nan, 1.0)]:
        with pytest.raises(ValueError, match="finite"):
            GammaPrior(*bad)
    with pytest.raises(ValueError, match="finite"):
        GammaPrior(1.0, 1.0, initial=np.inf)
    with pytest.raises(ValueError, match="FSD sampler keeps alpha fixed"):
        DPMixture(sampler="fsd", alpha=GammaPrior(), n_chains=1, n_iter=200).fit(X)


def test_checkpoint_resume_equals_uninterrupted_run(tmp_path, blobs):
    X, _ = blobs
    full = DPMixture(n_iter=40, random_state=5, n_chains=1).fit(X)

    ckpt = tmp_path / "chain.pkl"
    stopped = DPMixture(n_iter=40, random_state=5, checkpoint=ckpt, checkpoint_every=10,
                        callback=lambda it, state, info: it < 24, n_chains=1).fit(X)
    assert stopped.n_iter_ == 25  # the callback stopped it; checkpoint at 25 (end of run)
    resumed = DPMixture.resume(ckpt, X)
    assert resumed.n_iter_ == 40
    np.testing.assert_array_equal(resumed.labels_, full.labels_)
    np.testing.assert_array_equal(resumed.trace_.log_joint, full.trace_.log_joint)
    np.testing.assert_array_equal(resumed.trace_.kept, full.trace_.kept)


def test_resume_from_periodic_checkpoint_after_a_crash(tmp_path, blobs):
    X, _ = blobs
    full = DPMixture(n_iter=30, random_state=2, n_chains=1).fit(X)
    ckpt = tmp_path / "chain.pkl"

    def crash(it, state, info):
        if it == 17:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        DPMixture(n_iter=30, random_state=2, checkpoint=ckpt, checkpoint_every=5,
                  callback=crash, n_chains=1).fit(X)
    from dpclust.estimator import checkpoint_iteration, load_checkpoint
    assert checkpoint_iteration(load_checkpoint(ckpt)) == 18  # saved on the interrupt
    resumed = DPMixture.resume(ckpt, X)
    np.testing.assert_array_equal(resumed.labels_, full.labels_)
    np.testing.assert_array_equal(resumed.trace_.log_joint, full.trace_.log_joint)


def test_resume_rejects_other_data_and_bad_files(tmp_path, blobs):
    X, _ = blobs
    ckpt = tmp_path / "chain.pkl"
    DPMixture(n_iter=6, random_state=0, checkpoint=ckpt, n_chains=1).fit(X)
    with pytest.raises(DataError, match="differ"):
        DPMixture.resume(ckpt, X[:-1])
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(DataError, match="cannot be read"):
        DPMixture.resume(junk, X)
    with pytest.raises(DataError, match="no checkpoint"):
        DPMixture.resume(tmp_path / "missing.pkl", X)
    # a checkpoint whose content was changed after it was written is refused
    with np.load(ckpt, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    key = next(k for k in arrays if not k.startswith("__") and arrays[k].dtype.kind == "f")
    arrays[key] = arrays[key] + 1.0
    tampered = tmp_path / "tampered.npz"
    np.savez(tampered, **arrays)
    with pytest.raises(DataError, match="was changed after it was written"):
        DPMixture.resume(tampered, X)
    # a pickle (an older dpclust's checkpoint, or anything else) is never unpickled
    import pickle

    old = tmp_path / "old.pkl"
    old.write_bytes(pickle.dumps({"format": 3}, protocol=4))
    with pytest.raises(DataError, match="older dpclust"):
        DPMixture.resume(old, X)
    # extending a finished run
    longer = DPMixture.resume(ckpt, X, n_iter=10)
    assert longer.n_iter_ == 10


def test_docstring_example_runs():
    import doctest

    import dpclust.estimators.dp_mixture

    result = doctest.testmod(dpclust.estimators.dp_mixture)
    assert result.attempted > 0 and result.failed == 0


def test_large_data_keeps_no_similarity_draws(monkeypatch, blobs):
    import dpclust.chains.result as result

    X, _ = blobs
    monkeypatch.setattr(result, "MAX_SIMILARITY_SAMPLES", 100)
    m = DPMixture(n_iter=10, random_state=0, n_chains=1).fit(X)
    with pytest.raises(ValueError, match="co-clustering matrix"):
        m.posterior_similarity()
    assert np.all(np.isfinite(m.score_samples(X[:5])))


def test_extending_a_run_equals_a_longer_run(tmp_path, blobs):
    X, _ = blobs
    ckpt = tmp_path / "chain.pkl"
    DPMixture(n_iter=40, burn_in=20, max_draws=8, random_state=4, checkpoint=ckpt,
              n_chains=1).fit(X)
    extended = DPMixture.resume(ckpt, X, n_iter=80)
    longer = DPMixture(n_iter=80, burn_in=20, max_draws=8, random_state=4, n_chains=1).fit(X)
    np.testing.assert_array_equal(extended.trace_.kept, longer.trace_.kept)
    np.testing.assert_array_equal(extended.labels_, longer.labels_)
    assert extended.alpha_ == longer.alpha_
    assert extended.score(X) == longer.score(X)
    with pytest.raises(ValueError, match="already holds 80 iterations"):
        DPMixture.resume(ckpt, X, n_iter=50)


def test_kept_draws_are_bounded_however_the_run_ends(blobs):
    X, _ = blobs
    stopped = DPMixture(n_iter=300, burn_in=0, max_draws=10, store_labels=True, random_state=0,
                        callback=lambda it, state, info: it < 150, n_chains=1).fit(X)
    assert stopped.n_iter_ == 151
    assert stopped.trace_.labels.shape == (1, 151, len(X))
    assert len(stopped._pool_draws) <= 10
    from dpclust.estimator import _reservoir_add
    reservoir = (1, ())
    for j in range(1000):
        reservoir = _reservoir_add(reservoir, j, j, None, 10)
    stride, held = reservoir
    assert 5 <= len(held) <= 10 and [d[0] for d in held] == list(range(0, 1000, stride))


def test_kmeans_start():
    """init="kmeans" starts from k-means clusters (documents by word proportions);
    "auto" uses it for the sub-cluster sampler only; a bad value is named."""
    from dpclust.families import DirichletMultinomial
    from dpclust.samplers import CollapsedGibbs
    from dpclust.samplers.kmeans import kmeans_labels

    X, y = make_gaussian_mixture(n_samples=400, n_clusters=4, random_state=5)
    rng = np.random.default_rng(0)
    labels = kmeans_labels(rng, X, 4)
    assert labels.shape == (400,) and labels.max() == 3 and labels[0] == 0
    assert nmi(labels, y) > 0.9
    assert np.all(kmeans_labels(rng, X[:3], 10) == [0, 1, 2])  # at most one cluster a point
    D, topics = make_documents(n_docs=200, n_topics=3, vocab_size=90, random_state=1)
    feats = DirichletMultinomial().init_features(D)
    assert sp.issparse(feats)
    np.testing.assert_allclose(np.asarray(feats.sum(axis=1)).ravel(), 1.0)
    assert nmi(kmeans_labels(rng, feats, 3), topics) > 0.5

    class Spy(CollapsedGibbs):
        def init(self, rng, model, labels=None, **kw):
            self.start = labels
            return super().init(rng, model, labels=labels, **kw)

    for init, expect_kmeans in (("kmeans", True), ("auto", False), ("random", False)):
        spy = Spy()
        DPMixture(sampler=spy, n_iter=2, init=init, random_state=0, n_chains=1).fit(X)
        assert (spy.start is not None) == expect_kmeans
    sub = DPMixture(sampler="subcluster", n_iter=100, init_clusters=4, random_state=0,
                    n_chains=1).fit(X)
    assert nmi(sub.labels_, y) > 0.9
    with pytest.raises(ValueError, match="init must be"):
        DPMixture(init="spectral", n_chains=1, n_iter=200).fit(X)


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_save_and_load_give_the_same_predictions(tmp_path, family):
    from dpclust.datasets import make_documents, make_gaussian_mixture

    X = (make_gaussian_mixture(200, 3, random_state=0)[0] if family == "gaussian"
         else make_documents(120, random_state=0)[0])
    m = DPMixture(family=family, n_iter=12, random_state=0, n_chains=1).fit(X)
    path = tmp_path / "model.npz"
    m.save(path)
    back = DPMixture.load(path)
    np.testing.assert_array_equal(back.labels_, m.labels_)
    np.testing.assert_allclose(back.score_samples(X[:20]), m.score_samples(X[:20]))
    np.testing.assert_array_equal(back.predict(X[:20]), m.predict(X[:20]))
    assert back.get_params() == m.get_params()
    Xs, ys = back.sample(5, random_state=1)
    assert len(ys) == 5
    with pytest.raises(DataError, match="not a dpclust model"):
        ckpt = tmp_path / "c.npz"
        DPMixture(n_iter=3, checkpoint=ckpt, random_state=0, n_chains=1).fit(
            make_gaussian_mixture(50, 2, random_state=0)[0])
        DPMixture.load(ckpt)



def test_rankings_given_to_a_family_of_other_data_are_refused_by_name():
    from dpclust.rankings import Rankings

    X = Rankings([[0, 1, 2], [2, 1, 0]] * 5, 3)
    with pytest.raises(ValueError, match="rankings.*family='auto'"):
        DPMixture(family="gaussian", n_iter=5, n_chains=1).fit(X)


def test_where_a_fit_runs_is_one_parameter():
    """``executor`` replaces ``backend`` and ``client``: the old spellings map onto it with a
    FutureWarning, a stored ``backend`` (an older checkpoint or saved model) loads silently,
    and a wrong value is refused by name."""
    with pytest.warns(FutureWarning, match="executor="):
        est = DPMixture(backend="dask")
    assert est.executor == "dask" and "backend" not in est.get_params()
    with pytest.warns(FutureWarning):
        assert DPMixture(backend="local", client=None).executor is None
    with pytest.raises(TypeError, match="'n_iters'"):
        DPMixture(n_iters=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = {k: v for k, v in DPMixture().get_params().items() if k != "executor"}
        old = DPMixture._from_params({**stored, "backend": "dask",
                                      "client": None})
    assert old.executor == "dask"
    X, _ = make_gaussian_mixture(n_samples=40, n_clusters=2, random_state=0)
    with pytest.raises(ValueError, match="executor must be None"):
        DPMixture(executor="spark", n_iter=5, n_chains=1).fit(X)
