"""The distance dependent CRP: decays, candidate links, the prior, and the customer sampler
against exact posteriors over partitions (ALGORITHMS.md sections 4 and 6).

The default run keeps one exact case per family and per kind of distances (sequential,
non-sequential, constant); the ``slow`` marker runs the full grid of decays × families on 5
and 6 customers.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpclust.datasets import make_gaussian_mixture
from dpclust.ddcrp import (Constant, DDCRPGibbs, DDCRPModel, Exponential, Logistic, Window,
                           link_candidates, links_to_labels, parse_decay, sample_prior)
from dpclust.exact import (ddcrp_partition_log_prior, exact_posterior, partition_frequencies,
                           set_partitions, total_variation)
from split_chains import run_chain
from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.samplers import GammaPrior, crp_log_prior

X_GAUSS = np.array([[0.0, 0.0], [0.4, 0.1], [1.5, 1.2], [1.8, 1.4], [0.9, 0.8], [2.6, 0.2]])
X_DOCS = np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2], [1, 1, 1, 1],
                   [4, 0, 0, 1]], dtype=float)
POSITIONS = np.array([0.0, 1.0, 2.5, 3.0, 4.2, 6.0])


def _data(family, n):
    if family == "gaussian":
        X = X_GAUSS[:n]
        fam = NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=4.0,
                                   scale=np.eye(2)).resolve(X)
        return fam, X
    X = sp.csr_matrix(X_DOCS[:n])
    return DirichletMultinomial(concentration=0.7).resolve(X), X


def tv_to_exact(family, decay, n, n_steps, *, sequential=False, alpha=1.0, seed=0,
                distances=None, start="prior"):
    fam, X = _data(family, n)
    if distances is None:
        cands = link_candidates(decay, positions=POSITIONS[:n], sequential=sequential)
    else:
        cands = link_candidates(decay, distances=distances, sequential=sequential)
    parts, exact = exact_posterior(fam, X, ddcrp_partition_log_prior(cands, alpha))
    model = DDCRPModel(fam, X, None, cands)
    draws = run_chain(DDCRPGibbs(start=start), model, np.random.default_rng(seed), n_steps,
                      burn_in=200, init_kwargs={"alpha": alpha})
    freq = partition_frequencies(draws, parts)
    assert exact.max() < 0.75  # a spread-out posterior, or the test proves little
    return total_variation(freq, exact)


# ------------------------------------------------------------------ exact (default run)
@pytest.mark.parametrize("family,decay,sequential", [
    ("gaussian", Window(2.0), False),
    ("multinomial", Exponential(1.5), True),
    ("gaussian", Constant(), True),
])
def test_sampler_matches_exact_posterior(family, decay, sequential):
    tv = tv_to_exact(family, decay, 5, 20_000, sequential=sequential)
    assert tv < 0.025, tv


def test_sampler_matches_exact_posterior_network_distances():
    """Non-sequential distances from a sparse matrix (a small 'citation network'), from
    the all-singletons start."""
    rows = [0, 1, 1, 2, 2, 3, 3, 4, 0, 4]
    cols = [1, 0, 2, 1, 3, 2, 4, 3, 4, 0]
    D = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(5, 5))
    tv = tv_to_exact("multinomial", Exponential(1.0), 5, 20_000, distances=D,
                     start="singletons", seed=3)
    assert tv < 0.025, tv


# ------------------------------------------------------------------ exact (slow grid)
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
@pytest.mark.parametrize("decay", [Window(2.0), Exponential(1.5), Logistic(2.0, 0.5),
                                   Constant()], ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("sequential", [False, True])
def test_sampler_matches_exact_posterior_grid(family, decay, sequential):
    tv = tv_to_exact(family, decay, 6, 100_000, sequential=sequential, alpha=0.8, seed=11)
    assert tv < 0.02, tv


# ------------------------------------------------------------------ the prior
def test_sequential_constant_decay_is_the_crp():
    cands = link_candidates(Constant(), n=6, sequential=True)
    lp = ddcrp_partition_log_prior(cands, 1.3)
    ref = np.array([crp_log_prior(np.bincount(p), 1.3) for p in set_partitions(6)])
    np.testing.assert_allclose(lp, ref, atol=1e-12)


def test_partition_prior_sums_to_one():
    for decay, seq in [(Window(1.6), False), (Exponential(2.0), True), (Constant(), False)]:
        cands = link_candidates(decay, positions=POSITIONS[:5], sequential=seq)
        lp = ddcrp_partition_log_prior(cands, 0.7)
        assert math.isclose(np.exp(lp).sum(), 1.0, rel_tol=1e-10)


@pytest.mark.parametrize("decay,sequential", [(Window(2.0), False), (Logistic(2.0), True),
                                              (Constant(), False), (Constant(), True)])
def test_prior_draws_match_enumeration(decay, sequential):
    pos = POSITIONS[:5]
    cands = link_candidates(decay, positions=pos, sequential=sequential)
    exact = np.exp(ddcrp_partition_log_prior(cands, 1.0))
    draws = sample_prior(decay, positions=pos, sequential=sequential, n_draws=20_000,
                         random_state=0)
    freq = partition_frequencies(draws.labels, set_partitions(5))
    assert total_variation(freq, exact) < 0.02
    # every drawn link is allowed
    for links in draws.links[:200]:
        assert np.isfinite(cands.log_prior(links, 1.0))


def test_sequential_prior_links_only_backwards():
    draws = sample_prior("window:5", positions=np.arange(200), sequential=True, n_draws=3,
                         random_state=1)
    i = np.arange(200)
    assert (draws.links <= i).all()
    assert ((i - draws.links) < 5).all()


def test_links_to_labels_follows_cycles_and_chains():
    # 0 <- 1 <- 2 ; 3 <-> 4 ; 5 alone
    labels = links_to_labels([0, 0, 1, 4, 3, 5])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 2])


# ------------------------------------------------------------------ decays & candidates
def test_decay_values():
    d = np.array([0.0, 1.0, 2.0, 5.0, np.inf])
    np.testing.assert_allclose(Window(2)(d), [1, 1, 0, 0, 0])
    np.testing.assert_allclose(Exponential(2)(d), np.exp(-d / 2))
    # the paper's logistic: exp(-d + a) / (1 + exp(-d + a))
    a = 3.0
    np.testing.assert_allclose(Logistic(a)(d[:-1]), np.exp(-d[:-1] + a) / (1 + np.exp(-d[:-1] + a)))
    assert Logistic(a)(np.inf) == 0.0
    np.testing.assert_allclose(Constant()(d), [1, 1, 1, 1, 0])
    assert Logistic(1e4, slope=1.0).log_weight(0.0) == pytest.approx(0.0)  # no overflow


def test_parse_decay():
    assert parse_decay("logistic:14") == Logistic(14)
    assert parse_decay("logistic:14:2") == Logistic(14, slope=2)
    assert parse_decay("window:3") == Window(3)
    assert parse_decay("crp") == Constant()
    with pytest.raises(ValueError, match="unknown decay"):
        parse_decay("gaussian:3")
    with pytest.raises(ValueError, match="parameter"):
        parse_decay("window")
    with pytest.raises(ValueError, match="not a number"):
        parse_decay("window:abc")
    with pytest.raises(ValueError, match="positive"):
        Window(-1)


def test_window_candidates_from_positions_match_dense():
    rng = np.random.default_rng(0)
    for dims in (1, 2):
        P = rng.uniform(0, 10, size=(60, dims))
        P[5] = P[4]  # coincident customers are within any window
        D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
        for seq in (False, True):
            if seq and dims == 1:
                P1 = np.sort(P[:, 0])
                D1 = np.abs(P1[:, None] - P1[None, :])
                a = link_candidates(Window(1.5), positions=P1, sequential=True)
                b = link_candidates(Window(1.5), distances=D1, sequential=True)
            else:
                a = link_candidates(Window(1.5), positions=P, sequential=False)
                b = link_candidates(Window(1.5), distances=D, sequential=False)
            np.testing.assert_array_equal(a.indptr, b.indptr)
            np.testing.assert_array_equal(a.indices, b.indices)
            np.testing.assert_allclose(a.total, b.total)


def test_sparse_distances_keep_only_stored_pairs():
    # an explicit zero distance (2 -> 0) is a candidate with f(0)
    D = sp.csr_matrix((np.array([2.0, 2.0, 0.0]), (np.array([0, 1, 2]), np.array([1, 0, 0]))),
                      shape=(3, 3))
    c = link_candidates(Exponential(1.0), distances=D)
    assert list(c.row(0)[0]) == [1]
    np.testing.assert_allclose(c.row(0)[1], [-2.0])
    assert list(c.row(1)[0]) == [0]
    assert list(c.row(2)[0]) == [0] and c.row(2)[1][0] == 0.0


def test_candidate_errors():
    with pytest.raises(ValueError, match="needs distances or positions"):
        link_candidates(Window(2))
    with pytest.raises(ValueError, match="square"):
        link_candidates(Window(2), distances=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        link_candidates(Window(2), positions=[0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        link_candidates(Window(2), distances=-np.ones((3, 3)))
    with pytest.raises(ValueError, match="non-decreasing"):
        link_candidates(Window(2), positions=[0.0, 2.0, 1.0], sequential=True)
    with pytest.raises(ValueError, match="max_pairs"):
        link_candidates(Exponential(2), positions=np.arange(100.0), max_pairs=1000)
    with pytest.raises(ValueError, match="either"):
        link_candidates(Window(2), positions=[0.0], distances=np.zeros((1, 1)))


def test_datetime_positions_are_days():
    t = np.array(["2024-01-01", "2024-01-02", "2024-01-10"], dtype="datetime64[D]")
    c = link_candidates(Window(3), positions=t)
    assert list(c.row(0)[0]) == [1]
    assert list(c.row(2)[0]) == []


# ------------------------------------------------------------------ kernels & sampler
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_join_gain_matches_log_marginals(family):
    fam, X = _data(family, 6)
    kern = fam.kernel(fam.validate(X))
    kstats = kern.alloc(3)
    for k in range(3):
        kern.reset(kstats, k, kern.hyper)
    for i in (0, 2, 5):
        kern.add(kern.data, i, kstats, 0, kern.hyper)
    for i in (1, 3):
        kern.add(kern.data, i, kstats, 1, kern.hyper)
    gain = kern.log_join_gain(kstats, 0, 1, kern.hyper)
    labels = np.array([0, 1, 0, 1, 2, 0])
    sep = fam.log_marginal(fam.stats(X, labels, 3))
    both = fam.log_marginal(fam.stats(X, np.where(labels == 1, 0, labels), 3))
    assert gain == pytest.approx(both[0] - sep[0] - sep[1], abs=1e-9)
    assert kern.log_join_gain(kstats, 0, 2, kern.hyper) == 0.0  # empty slot


@pytest.mark.parametrize("decay,kw", [
    (Constant(), {"n": 400}), (Constant(), {"n": 400, "sequential": True}),
    (Window(25), {"positions": np.arange(400.0)}),
    (Logistic(20, 5), {"positions": np.arange(400.0), "sequential": True}),
])
def test_sweeps_keep_statistics_and_log_joint_exact(decay, kw):
    """Many sweeps on 400 points (tables split, join and grow the slot arrays): the
    reported log joint equals one recomputed from the links."""
    X, _ = make_gaussian_mixture(400, 4, random_state=0)
    fam = NormalInverseWishart().resolve(X)
    model = DDCRPModel(fam, X, None, link_candidates(decay, **kw))
    sampler = DDCRPGibbs(start="singletons", rebuild_every=1000)
    rng = np.random.default_rng(0)
    state = sampler.init(rng, model, alpha=0.5)
    for _ in range(8):
        state, info = sampler.step(rng, state, model)
    assert info.log_joint == pytest.approx(model.log_joint_links(state.links, 0.5), abs=1e-6)
    np.testing.assert_array_equal(state.labels, links_to_labels(state.links))
    assert info.n_clusters == state.labels.max() + 1
    assert np.isfinite(model.candidates.log_prior(state.links, 0.5))


def test_same_seed_same_chain_and_pure_step():
    X, _ = make_gaussian_mixture(120, 3, random_state=1)
    fam = NormalInverseWishart().resolve(X)
    model = DDCRPModel(fam, X, None, link_candidates(Window(10), positions=np.arange(120.0)))
    s = DDCRPGibbs()
    out = []
    for _ in range(2):
        rng = np.random.default_rng(5)
        st = s.init(rng, model, alpha=1.0)
        for _ in range(5):
            prev_links = st.links.copy()
            nxt, _ = s.step(rng, st, model)
            np.testing.assert_array_equal(st.links, prev_links)  # input state untouched
            st = nxt
        out.append(st.links)
    np.testing.assert_array_equal(out[0], out[1])


def test_alpha_prior_is_resampled():
    X, _ = make_gaussian_mixture(150, 3, random_state=2)
    fam = NormalInverseWishart().resolve(X)
    model = DDCRPModel(fam, X, GammaPrior(2.0, 1.0),
                       link_candidates(Window(8), positions=np.arange(150.0)))
    s = DDCRPGibbs()
    rng = np.random.default_rng(0)
    st = s.init(rng, model, alpha=2.0)
    alphas = []
    for _ in range(30):
        st, info = s.step(rng, st, model)
        alphas.append(info.alpha)
    assert len(set(alphas)) > 5 and all(a > 0 for a in alphas)


def test_model_checks_sizes_and_forbidden_start():
    X = X_GAUSS[:5]
    fam, _ = _data("gaussian", 5)
    with pytest.raises(ValueError, match="customers"):
        DDCRPModel(fam, X, None, link_candidates(Constant(), n=4))
    model = DDCRPModel(fam, X, None, link_candidates(Constant(), n=5, sequential=True))
    with pytest.raises(ValueError, match="forbid"):
        DDCRPGibbs().init(np.random.default_rng(0), model, links=np.array([1, 0, 2, 3, 4]))


# ------------------------------------------------------------------ the estimator
def _drifting_data(n=240, seed=0):
    """Points whose cluster changes with time: three consecutive eras."""
    X, y = make_gaussian_mixture(n, 3, random_state=seed)
    order = np.argsort(y, kind="stable")
    return X[order], y[order], np.arange(n, dtype=float)


def test_estimator_fit_and_attributes():
    from dpclust import DDCRPMixture
    X, y, t = _drifting_data()
    m = DDCRPMixture(family="gaussian", decay="window:15", positions=t, sequential=True,
                     n_iter=30, random_state=0, store_labels=True, n_chains=1).fit(X)
    assert m.links_.shape == (240,) and (m.links_ <= np.arange(240)).all()
    assert m.trace_.log_joint.shape == (1, 30) and m.trace_.labels.shape == (1, 15, 240)
    from dpclust.metrics import nmi
    assert nmi(m.labels_, y) > 0.9
    assert np.isfinite(m.trace_.log_joint).all()


def test_estimator_checkpoint_resume_is_the_same_chain(tmp_path):
    from dpclust import DDCRPMixture
    X, _, t = _drifting_data(120)
    kw = dict(family="gaussian", decay="exponential:5", positions=t, n_iter=12,
              random_state=3, n_chains=1)
    whole = DDCRPMixture(**kw).fit(X)
    path = tmp_path / "chain.pkl"
    stop = DDCRPMixture(**kw, checkpoint=path, checkpoint_every=1,
                        callback=lambda it, s, i: it < 5).fit(X)
    assert stop.n_iter_ == 6
    resumed = DDCRPMixture.resume(path, X)
    np.testing.assert_array_equal(resumed.links_, whole.links_)
    np.testing.assert_allclose(resumed.trace_.log_joint, whole.trace_.log_joint)


def test_heldout_score_prefers_the_right_decay_on_drifting_data():
    """Held-out points from the latest era: a short time decay predicts them better than
    the ordinary CRP, which mixes in the earlier eras."""
    from dpclust import DDCRPMixture
    X, _, t = _drifting_data(300, seed=4)
    train, test = slice(0, 280), slice(280, 300)
    crp = DDCRPMixture(family="gaussian", sequential=True, n_iter=30, random_state=0, n_chains=1)
    crp.fit(X[train])
    dd = DDCRPMixture(family="gaussian", decay="logistic:20:3", positions=t[train],
                      sequential=True, n_iter=30, random_state=0, n_chains=1).fit(X[train])
    s_crp = crp.score_samples(X[test]).mean()
    s_dd = dd.score_samples(X[test], positions=t[test]).mean()
    assert np.isfinite(s_crp) and np.isfinite(s_dd)
    assert s_dd > s_crp
    with pytest.raises(ValueError, match="positions"):
        dd.score_samples(X[test])


def test_estimator_reports_bad_distances_clearly():
    from dpclust import DDCRPMixture
    from dpclust.utils.checks import DataError
    X, _, t = _drifting_data(60)
    with pytest.raises(DataError, match="60 customers"):
        DDCRPMixture(family="gaussian", decay="window:3", positions=t[:50], n_chains=1,
                     n_iter=200).fit(X)
    with pytest.raises(ValueError, match="unknown decay"):
        DDCRPMixture(family="gaussian", decay="triangle:3", positions=t, n_chains=1,
                     n_iter=200).fit(X)


def test_decay_formula_and_title_name_the_parameters():
    assert Constant().formula == "f(d) = 1"
    assert Window(3).formula == "f(d) = 1[d < 3]"
    assert Exponential(5).formula == "f(d) = exp(-d / 5)"
    assert Logistic(14, slope=2).formula == "f(d) = 1 / (1 + exp((d - 14) / 2))"
    assert Constant().title == "traditional CRP (constant decay)"
    assert Window(3).title == "window decay, a = 3"
    assert Logistic(14, slope=2).title == "logistic decay, a = 14, slope = 2"
