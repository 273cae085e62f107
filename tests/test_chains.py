"""Several chains and their convergence verdict (``n_chains``, ``convergence_``,
``to_arviz``), for every estimator; the rule of :mod:`dpclust.diagnostics` on known draws."""

from __future__ import annotations

import math
import signal
import warnings

import numpy as np
import pytest

from dpclust import DDCRPMixture, DPMixture
from dpclust.chains.length import DEFAULT_MAX_TIME
from dpclust.datasets import make_gaussian_mixture
from dpclust.diagnostics import (advice, chain_entropy, convergence, diagnose,
                                 first_passing_length)


def _fit_quietly(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X)


@pytest.fixture(scope="module")
def easy():
    """Three well-separated clusters of 1,000 points: K stays 3."""
    return make_gaussian_mixture(1000, 3, separation=5.0, random_state=0)


# ------------------------------------------------------------------- the rule itself
def test_diagnose_independent_draws_pass_and_stuck_chains_fail():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 500))
    assert diagnose(iid)["converged"]
    assert diagnose(iid[:1])["converged"]  # one chain: split R-hat over its quarters
    shifted = iid.copy()
    shifted[0] += 1.0  # one chain elsewhere
    v = diagnose(shifted)
    assert not v["converged"] and v["rhat"] > 1.1
    trend = np.linspace(0, 3, 500)[None, :] + rng.normal(size=(1, 500))
    assert not diagnose(trend)["converged"]  # a drifting single chain
    walk = np.cumsum(rng.normal(size=(2, 500)), axis=1)  # ESS far below 200
    assert not diagnose(walk)["converged"]


def test_diagnose_constant_quantities():
    same = np.full((3, 100), 4.0)
    assert diagnose(same) == {"rhat": 1.0, "ess_bulk": 300.0, "ess_tail": 300.0,
                              "converged": True}
    # as many effective draws as draws, but fewer than the rule asks of any chain
    assert diagnose(np.full((3, 50), 4.0))["ess_bulk"] == 150.0
    assert not diagnose(np.full((3, 50), 4.0))["converged"]
    apart = np.full((2, 50), 4.0)
    apart[1] = 5.0  # each chain constant, not the same constant
    v = diagnose(apart)
    assert v["rhat"] == math.inf and not v["converged"]
    assert not diagnose(np.ones((1, 3)))["converged"]  # too few draws for a verdict
    with pytest.raises(ValueError, match="n_chains, n_draws"):
        diagnose(np.ones(10))


def test_chain_entropy():
    assert chain_entropy([10]) == 0.0
    assert chain_entropy([5, 5, 0, 5]) == pytest.approx(math.log(3))


# ------------------------------------------------------------------- estimators
def test_easy_run_is_converged_without_a_warning(easy):
    X, _ = easy
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        # 6,000 iterations: one chain's split R-hat of the log-likelihood sits at 1.005-1.02
        # after 2,000 (1,000 kept draws) whatever the seed, and passed at 6,000 for seeds 0-5
        m = DPMixture(n_iter=6000, random_state=1, n_chains=1).fit(X)
    conv = m.convergence_
    assert conv["converged"] and conv["failing"] == []
    assert set(conv) >= {"log_likelihood", "n_clusters", "size_entropy", "converged", "rule"}
    assert "alpha" not in conv  # fixed alpha is not a quantity of the chain
    assert conv["n_chains"] == 1 and conv["n_draws"] == 3000


def test_short_run_from_one_cluster_warns_and_names_what_fails(easy):
    X, _ = easy
    with pytest.warns(UserWarning, match="has not converged") as rec:
        m = DPMixture(n_iter=12, init_clusters=1, random_state=0, n_chains=1).fit(X)
    assert not m.convergence_["converged"]
    msg = str(rec[0].message)
    assert "the log-likelihood" in msg and "n_chains=4" in msg and "more iterations" in msg


def test_several_chains_shapes_pooling_and_reproducibility(easy):
    X, _ = easy
    X = X[:300]
    kw = dict(n_iter=40, n_chains=3, random_state=1, store_labels=True,
              alpha=("gamma", 1.0, 1.0))
    m = _fit_quietly(DPMixture(**kw), X)
    tr = m.trace_
    assert tr.n_chains == 3
    assert tr.log_joint.shape == tr.n_clusters.shape == tr.alpha.shape == (3, 40)
    assert tr.size_entropy.shape == tr.seconds.shape == (3, 40)
    assert tr.labels.shape == (3, 20, 300) and tr.kept.shape == (20,)
    assert "alpha" in m.convergence_ and m.convergence_["n_chains"] == 3
    # independent streams: the chains differ
    assert not np.array_equal(tr.log_joint[0], tr.log_joint[1])
    # the entropy recorded is that of the kept partitions
    for c in range(3):
        z = tr.labels[c, -1]
        assert tr.size_entropy[c, -1] == pytest.approx(chain_entropy(np.bincount(z)))
    # the same random_state gives the same chains
    again = _fit_quietly(DPMixture(**kw), X)
    np.testing.assert_array_equal(again.trace_.log_joint, tr.log_joint)
    np.testing.assert_array_equal(again.labels_, m.labels_)
    # the point estimate is one of the pooled draws of some chain
    pooled = tr.labels.reshape(-1, 300)
    assert any(np.array_equal(m.labels_, d) for d in pooled)
    assert m.alpha_ == pytest.approx(np.mean(tr.alpha[:, tr.kept]))
    # prediction works on the pooled draws
    assert m.score_samples(X[:5]).shape == (5,)
    assert m.predict(X[:5]).shape == (5,)


def test_one_chain_keeps_the_chain_axis_and_its_stream(easy):
    X, _ = easy
    X = X[:200]
    a = _fit_quietly(DPMixture(n_iter=20, random_state=3, n_chains=1), X)
    b = _fit_quietly(DPMixture(n_iter=20, random_state=3, n_chains=1), X)
    assert a.trace_.log_joint.shape == (1, 20) and a.trace_.n_chains == 1
    assert a.trace_.n_clusters[:, -10:].shape == (1, 10)
    np.testing.assert_array_equal(a.trace_.log_joint, b.trace_.log_joint)


def test_to_arviz_gives_the_kept_draws_of_every_chain(easy):
    import arviz as az

    X, _ = easy
    m = _fit_quietly(DPMixture(n_iter=30, n_chains=2, random_state=0, store_labels=True),
                     X[:150])
    idata = m.to_arviz()
    post, stats = idata.posterior, idata.sample_stats
    assert stats["lp"].dims == ("chain", "draw")
    assert stats["lp"].shape == (2, 15)
    assert "log_likelihood" not in idata.groups()  # ArviZ's group is pointwise
    assert set(post.data_vars) >= {"n_clusters", "size_entropy", "n_large_clusters"}
    assert post["labels"].shape == (2, 15, 150)
    np.testing.assert_array_equal(post["n_clusters"].values,
                                  m.trace_.n_clusters[:, m.trace_.kept])
    np.testing.assert_array_equal(post["draw"].values, m.trace_.kept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = az.rhat(stats, var_names=["total_log_likelihood"])["total_log_likelihood"].values
    assert float(r) == pytest.approx(m.convergence_["log_likelihood"]["rhat"])
    one = _fit_quietly(DPMixture(n_iter=20, random_state=0, n_chains=1), X[:100]).to_arviz()
    assert one.sample_stats["lp"].shape == (1, 10)
    assert one.posterior["n_clusters"].shape == (1, 10)
    assert "labels" not in one.posterior


def test_checkpoint_resume_with_several_chains_is_the_uninterrupted_run(tmp_path, easy):
    X, _ = easy
    X = X[:200]
    kw = dict(n_iter=30, n_chains=2, random_state=5, store_labels=True)
    whole = _fit_quietly(DPMixture(**kw), X)
    ckpt = tmp_path / "run.ckpt"
    calls = []

    def stop_at_11(it, state, info):
        calls.append(it)
        if it == 11 and len(calls) == 2 * 12:
            raise KeyboardInterrupt  # during the second chain's 12th iteration

    est = DPMixture(**kw, checkpoint=ckpt, checkpoint_every=5, callback=stop_at_11)
    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        resumed = DPMixture.resume(ckpt, X)
    np.testing.assert_array_equal(resumed.trace_.log_joint, whole.trace_.log_joint)
    np.testing.assert_array_equal(resumed.trace_.labels, whole.trace_.labels)
    np.testing.assert_array_equal(resumed.labels_, whole.labels_)


def test_callback_false_stops_every_chain_at_the_same_iteration(easy):
    X, _ = easy
    m = _fit_quietly(DPMixture(n_iter=50, n_chains=2, random_state=0,
                               callback=lambda it, s, i: it < 9), X[:100])
    assert m.n_iter_ == 10 and m.trace_.log_joint.shape == (2, 10)


def test_ddcrp_several_chains(easy):
    X, _ = easy
    m = _fit_quietly(DDCRPMixture(family="gaussian", decay="window:30",
                                  positions=np.arange(120), n_iter=20, n_chains=2,
                                  random_state=0), X[:120])
    assert m.trace_.log_joint.shape == (2, 20)
    assert m.links_.shape == (120,)
    assert set(m.convergence_) >= {"log_likelihood", "n_clusters", "converged"}


def test_n_chains_is_checked():
    with pytest.raises(ValueError, match="n_chains"):
        DPMixture(n_chains=0, n_iter=200).fit(np.zeros((5, 2)) + np.arange(5)[:, None])


def test_convergence_of_a_trace_and_advice(easy):
    X, _ = easy
    m = _fit_quietly(DPMixture(n_iter=12, init_clusters=1, random_state=0, n_chains=1), X)
    conv = convergence(m.trace_, alpha_resampled=False)
    assert conv == m.convergence_
    text = advice(conv)
    assert "not converged" in text and "R-hat" in text
    assert "use a sampler with split-merge moves" in text


def test_advice_does_not_suggest_the_moves_the_sampler_has():
    """A run of Gibbs+SAMS or the sub-cluster sampler that has not converged is told to run
    longer, not to take a sampler with split-merge moves: it has them."""
    from dpclust.samplers import GibbsSAMS, moves_clusters

    assert moves_clusters("gibbs+sams") and moves_clusters("auto (subcluster)")
    assert moves_clusters(GibbsSAMS()) and not moves_clusters("gibbs")
    assert not moves_clusters("no such sampler")
    from dpclust.samplers import SubclusterSplitMerge
    from dpclust.samplers.augmented import LatentAugmented

    assert moves_clusters(SubclusterSplitMerge) and moves_clusters(LatentAugmented(GibbsSAMS()))
    assert not moves_clusters(SubclusterSplitMerge(split_merge=False, multiway=0))
    conv = {"converged": False, "failing": ["n_clusters"], "n_chains": 4, "n_draws": 100,
            "rule": "the rule", "n_clusters": {"rhat": 1.05, "ess_bulk": 80.0,
                                               "ess_tail": 90.0}}
    text = advice(conv, moves_clusters=True)
    assert "split-merge moves" not in text and "To do: run longer (max_time" in text
    assert text.endswith("The sampler already splits and merges clusters, so what it needs "
                         "is time.")


def test_advice_says_when_only_the_small_clusters_have_not_settled():
    """Four chains whose number of clusters moves slowly (a small cluster that comes and
    goes every 100 iterations) while the clusters with at least 1 % of the points stay at
    6: the advice says the large ones have settled; if those move slowly too, it does not."""
    from dpclust.chains import Trace

    rng = np.random.default_rng(0)
    C, n = 4, 400
    slow = (np.arange(n)[None, :] // 100 + np.arange(C)[:, None]) % 2  # a 0/1 in blocks
    k = 6 + slow
    fields = dict(log_joint=rng.normal(size=(C, n)), n_clusters=k, alpha=np.ones((C, n)),
                  seconds=np.zeros((C, n)), n_accepted_splits=np.zeros((C, n)),
                  n_accepted_merges=np.zeros((C, n)), kept=np.arange(n),
                  size_entropy=1.5 + 0.01 * slow + 0.001 * rng.normal(size=(C, n)),
                  log_likelihood=rng.normal(size=(C, n)))
    conv = convergence(Trace(**fields, n_large_clusters=np.full((C, n), 6)),
                       alpha_resampled=False)
    assert not conv["converged"] and "n_clusters" in conv["failing"]
    assert conv["large_clusters"]["values"] == [6, 6]
    text = advice(conv)
    assert "at least 1 % of the points have settled (6 in every kept draw)" in text
    assert text.index("settled") < text.index("Otherwise: run more iterations")
    assert "coarsening=1000" in text
    # a coarsened run is not told to coarsen: a smaller alpha_c instead
    coarse = advice(conv, coarsened=True)
    assert "coarsening=1000" not in coarse and "a smaller coarsening" in coarse
    moving = convergence(Trace(**fields, n_large_clusters=k), alpha_resampled=False)
    assert not moving["large_clusters"]["converged"]
    assert "settled" not in advice(moving) and "To do: run more iterations" in advice(moving)


def test_advice_says_when_the_chains_sit_in_separate_modes():
    """Four chains each stationary at its own level, one 210 nats above the others (what
    every sampler gives R's ``ISLR::Wage``): the advice says so instead of "run longer";
    chains that wander across one level get the usual advice."""
    from dpclust.chains import Trace
    from dpclust.diagnostics import MODES_MIN_DRAWS, separate_modes
    from dpclust.report.verdict import _verdict

    rng = np.random.default_rng(1)
    C, n = 4, MODES_MIN_DRAWS
    level = np.array([-28_935.0, -29_145.0, -29_144.0, -29_146.0])[:, None]
    fields = dict(n_clusters=np.full((C, n), 10), alpha=np.ones((C, n)),
                  seconds=np.zeros((C, n)), n_accepted_splits=np.zeros((C, n)),
                  n_accepted_merges=np.zeros((C, n)), kept=np.arange(n),
                  size_entropy=1.5 + 0.001 * rng.normal(size=(C, n)))
    joint = level + 2.0 * rng.normal(size=(C, n))
    conv = convergence(Trace(**fields, log_joint=joint, log_likelihood=joint + 50.0),
                       alpha_resampled=False)
    assert not conv["converged"] and "log_likelihood" in conv["failing"]
    text = separate_modes(conv)
    assert text.startswith("The chains sit at separate levels: their mean log joint densities "
                           "over the kept draws are chain 0: -28,935, ")
    assert "while each holds its own (its two halves differ by at most" in text
    assert advice(conv, moves_clusters=True).endswith(text)
    assert "run longer" not in advice(conv, moves_clusters=True)
    html = _verdict({"convergence": conv, "settings": {"sampler": "gibbs+sams"}})
    assert "the chains sit at separate levels" in html
    # gaps of tens of nats are levels too (Ecdat's Griliches: 17 nats, R-hat 2)
    near = np.array([-24_336.0, -24_336.0, -24_341.0, -24_353.0])[:, None]
    close = near + rng.normal(size=(C, n))
    conv = convergence(Trace(**fields, log_joint=close, log_likelihood=close + 50.0),
                       alpha_resampled=False)
    assert separate_modes(conv).startswith("The chains sit at separate levels")
    # ... over runs long enough to have let them cross (esi: 704 draws a chain, one level
    # at 60 s)
    short = convergence(Trace(**{k: (v[:, :704] if isinstance(v, np.ndarray) and v.ndim == 2
                                     else v[:704]) for k, v in fields.items()},
                              log_joint=close[:, :704], log_likelihood=close[:, :704] + 50.0),
                        alpha_resampled=False)
    assert separate_modes(short) == ""
    # one level, slow drift within each chain: not separate modes
    wander = convergence(Trace(**fields, log_joint=-29_000 + np.cumsum(
        rng.normal(size=(C, n)), axis=1), log_likelihood=joint), alpha_resampled=False)
    assert separate_modes(wander) == ""
    # a single chain has no other to compare with
    one = {k: (v[:1] if isinstance(v, np.ndarray) and v.ndim == 2 else v)
           for k, v in fields.items()}
    single = convergence(Trace(**one, log_joint=joint[:1], log_likelihood=joint[:1]),
                         alpha_resampled=False)
    assert "chain_levels" not in single and separate_modes(single) == ""


# ------------------------------------------------------------------- processes
def test_chains_in_processes_are_the_chains_in_this_process(easy):
    X, _ = easy
    X = X[:300]
    kw = dict(n_iter=60, n_chains=3, random_state=4, store_labels=True)
    here = _fit_quietly(DPMixture(**kw), X)
    there = _fit_quietly(DPMixture(**kw, n_jobs=2), X)
    np.testing.assert_array_equal(there.trace_.log_joint, here.trace_.log_joint)
    np.testing.assert_array_equal(there.trace_.labels, here.trace_.labels)
    np.testing.assert_array_equal(there.labels_, here.labels_)
    assert there.convergence_ == here.convergence_


def test_interrupted_processes_save_every_chain_and_resume_exactly(tmp_path, easy,
                                                                    monkeypatch):
    """Ctrl-C while workers run: each stops after its current iteration, the checkpoint
    holds every chain, and the resumed run is the uninterrupted one."""
    import _thread

    from dpclust import _chains
    from dpclust.estimator import checkpoint_iteration, load_checkpoint

    X, _ = easy
    X = X[:200]
    kw = dict(n_iter=400, n_chains=2, random_state=6)
    whole = _fit_quietly(DPMixture(**kw), X)
    advance = _chains.ChainWorkers.advance

    def interrupting(self, target, tick=None):
        seen = []

        def tick_then_interrupt(*args):
            seen.append(args)
            if len(seen) == 30:
                _thread.interrupt_main()
            if tick is not None:
                tick(*args)

        return advance(self, target, tick_then_interrupt)

    monkeypatch.setattr(_chains.ChainWorkers, "advance", interrupting)
    ckpt = tmp_path / "par.ckpt"
    # a test run started in the background (make test &, nohup) may inherit SIGINT ignored,
    # and interrupt_main() does nothing then: Python's own handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            DPMixture(**kw, n_jobs=2, checkpoint=ckpt).fit(X)
    finally:
        signal.signal(signal.SIGINT, previous)
    done = checkpoint_iteration(load_checkpoint(ckpt))
    assert 0 < done < 400
    monkeypatch.setattr(_chains.ChainWorkers, "advance", advance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        resumed = DPMixture.resume(ckpt, X)
    np.testing.assert_array_equal(resumed.trace_.log_joint, whole.trace_.log_joint)
    np.testing.assert_array_equal(resumed.labels_, whole.labels_)


def test_n_jobs_settings_are_checked(easy):
    X, _ = easy
    with pytest.raises(ValueError, match="callback"):
        DPMixture(n_iter=5, n_chains=2, n_jobs=2, callback=lambda *a: True).fit(X[:50])
    with pytest.raises(ValueError, match="n_jobs"):
        DPMixture(n_iter=5, n_chains=2, n_jobs=0).fit(X[:50])


def test_a_worker_error_is_raised_here_with_its_traceback():
    from dpclust._chains import ChainWorkers
    from dpclust.utils.checks import DataError

    est = DPMixture(family="gaussian", n_iter=5, n_chains=1)  # which refuses holes
    bad = np.array([[0.0, np.nan], [1.0, 2.0]])  # the worker's validation refuses it
    with pytest.raises(DataError, match="NaN") as info:
        ChainWorkers(est, (bad, None, None), [None, None], 2, 10)
    assert any("chain worker" in note for note in getattr(info.value, "__notes__", []))


def test_a_script_without_a_main_guard_fails_fast_and_says_why(tmp_path):
    """Spawned workers import the script that calls fit; without ``if __name__ ==
    "__main__":`` they die on start-up.  With data larger than a pipe's buffer this used to
    hang the parent for ever (writing the worker's arguments); now it stops with a message
    that names the guard."""
    import subprocess
    import sys

    script = tmp_path / "no_guard.py"
    script.write_text(
        "import numpy as np\n"
        "from dpclust import DPMixture\n"
        "X = np.random.default_rng(0).normal(size=(20_000, 2))  # 320 kB: over a pipe buffer\n"
        "DPMixture(n_iter=5, n_chains=2, n_jobs=2, random_state=0).fit(X)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=240)
    assert run.returncode != 0
    assert "chain worker stopped unexpectedly" in run.stderr
    assert '__name__ == "__main__"' in run.stderr


# ------------------------------------------------------------------- until converged
def test_until_converged_lengthens_the_run_until_the_rule_passes(easy):
    X, _ = easy
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m = DPMixture(n_iter=100, max_iter=6400, random_state=0, n_chains=1).fit(X)
    assert m.convergence_["converged"]
    assert 101 <= m.n_iter_ <= 6400
    assert m.trace_.log_joint.shape == (1, m.n_iter_)  # always a chain axis
    # it stops within a fifth (and rounding) of the first length from which the rule passes
    # on the same chain, judged every fifth of the last failed length on the way (one
    # chain's verdict can pass at a length and fail a little later: the first length of all
    # at which it passes may come much earlier)
    first = first_passing_length(m.trace_, start=100)
    stays = first_passing_length(m.trace_, start=100, step=10, stays=True)
    assert first is not None and first <= stays
    assert m.n_iter_ <= 1.25 * stays + 10
    # the default burn-in moved with it: half of the run
    assert m.trace_.kept[0] == m.n_iter_ // 2
    assert m.convergence_["n_draws"] == m.n_iter_ // 2
    # the verdict of the first 100 iterations alone fails
    short = _fit_quietly(DPMixture(n_iter=100, random_state=0, n_chains=1), X)
    assert not short.convergence_["converged"]
    np.testing.assert_array_equal(m.trace_.log_joint[:, :100], short.trace_.log_joint)


def test_until_converged_stops_at_max_iter_and_says_so(easy):
    X, _ = easy
    with pytest.warns(UserWarning, match="has not converged"):
        m = DPMixture(n_iter=10, init_clusters=1, max_iter=30,
                      random_state=0, n_chains=2, n_jobs=2).fit(X[:300])
    assert m.n_iter_ == 30 and m.trace_.log_joint.shape == (2, 30)
    assert not m.convergence_["converged"]


def test_until_converged_with_a_fixed_burn_in_keeps_it(easy):
    X, _ = easy
    m = _fit_quietly(DPMixture(n_iter=20, burn_in=5, max_iter=40,
                               random_state=0, n_chains=1), X[:200])
    assert m.trace_.kept[0] == 5


# ------------------------------------------------------------------- the defaults
def test_defaults_are_four_chains_that_go_on_until_they_converge(easy):
    """The default fit on easy data: four chains, made longer until the rule passes, and
    no warning."""
    X, _ = easy
    est = DPMixture(random_state=0)
    assert est.n_chains == 4 and est.n_iter is None and est._until_converged()
    assert est._max_iter(200) == 200_000 and est.max_time == DEFAULT_MAX_TIME
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m = est.fit(X[:400])
    assert m.convergence_["converged"] and m.convergence_["n_chains"] == 4
    assert m.n_iter_ >= 200 and m.n_clusters_ == 3
    assert m.trace_.kept[0] == m.n_iter_ // 2
    # an explicit n_iter is a run of that length, as before
    # an explicit n_iter is a run of that length, as before; with a max_iter, the run
    # goes on from there until the rule passes
    assert not DPMixture(n_iter=300)._until_converged()
    assert DPMixture(n_iter=300, max_iter=3000)._max_iter(300) == 3000
    # until_converged= (the parameter max_iter replaced) still works, and warns
    with pytest.warns(FutureWarning, match="max_iter"):
        old = DPMixture(n_iter=300, until_converged=True)
    assert old.max_iter == 3000 and "until_converged" not in old.get_params()
    with pytest.warns(FutureWarning):
        assert DPMixture(until_converged=False).n_iter == 200


def _verdict(ess, rhat=1.0, failing=("n_clusters",), n_chains=4):
    conv = {"n_chains": n_chains, "failing": list(failing)}
    for q in failing:
        conv[q] = {"rhat": rhat, "ess_bulk": ess, "ess_tail": ess}
    return conv


def test_longer_asks_for_what_the_smallest_ess_needs_within_the_budget():
    est = DPMixture(max_time=None)
    # 4 chains need ESS 400: at 300, 1.2 x 400 / 300 = 1.6 times longer
    assert est._longer(_verdict(300.0), 1000, 50_000, 0.01, 5.0) == 1600
    # at least 1.5 times, at most twice
    assert est._longer(_verdict(390.0), 1000, 50_000, 0.01, 5.0) == 1500
    assert est._longer(_verdict(10.0), 1000, 50_000, 0.01, 5.0) == 2000
    assert est._longer(_verdict(float("nan")), 1000, 50_000, 0.01, 5.0) == 2000
    # an R-hat that fails asks for as much as brings R-hat - 1 under 0.01 (with a fifth
    # more, at most twice): 1.2 x 0.0125 / 0.01 = 1.5; far off, twice
    assert est._longer(_verdict(390.0, rhat=1.0125), 1000, 50_000, 0.01, 5.0) == 1500
    assert est._longer(_verdict(390.0, rhat=1.0150), 1000, 50_000, 0.01, 5.0) == 1800
    assert est._longer(_verdict(390.0, rhat=1.05), 1000, 50_000, 0.01, 5.0) == 2000
    assert est._longer(_verdict(390.0, rhat=float("nan")), 1000, 50_000, 0.01, 5.0) == 2000
    # capped by max_iter; nothing if less than a quarter longer
    assert est._longer(_verdict(100.0), 1000, 1800, 0.01, 5.0) == 1800
    assert est._longer(_verdict(100.0), 1000, 1200, 0.01, 5.0) is None
    # max_time: 10 s left at 0.01 s an iteration fit 1,000 more
    timed = DPMixture(max_time=20.0)
    assert timed._longer(_verdict(100.0), 1000, 50_000, 0.01, 10.0) == 2000
    assert timed._longer(_verdict(100.0), 1000, 50_000, 0.01, 19.9) is None


def test_max_time_stops_a_run_that_will_not_converge_in_time(easy):
    """A run of automatic length is held to ``max_time`` from its start, its first 200
    iterations included: past the time it stops once 10 draws (a twentieth of 200) are
    kept past a burn-in of half the run; a run of fixed length is not cut."""
    X, _ = easy
    with pytest.warns(UserWarning, match="has not converged"):
        m = DPMixture(init_clusters=1, max_time=1e-3, random_state=0, n_chains=2,
                      n_jobs=1).fit(X[:300])
    assert m.n_iter_ == 20 and m.convergence_["n_draws"] == 10
    with pytest.warns(UserWarning, match="has not converged"):
        fixed = DPMixture(init_clusters=1, max_time=1e-3, n_iter=40, random_state=0,
                          n_chains=2, n_jobs=1).fit(X[:300])
    assert fixed.n_iter_ == 40 and fixed.convergence_["n_draws"] == 20


def test_a_run_cut_by_max_time_keeps_half_of_what_it_made(easy):
    """Iterations slowed (a callback that sleeps) so that 200 would take 8 s: with
    ``max_time=1`` the run stops near 1 s, its burn-in half the run it made."""
    import time

    X, _ = easy

    def slow(it, state, info):
        time.sleep(0.01)

    t0 = time.perf_counter()
    with pytest.warns(UserWarning, match="has not converged"):
        m = DPMixture(max_time=1.0, random_state=0, n_chains=4, callback=slow,
                      sampler="gibbs").fit(X[:200])
    assert time.perf_counter() - t0 < 6.0
    assert 20 <= m.n_iter_ < 200
    assert abs(m.convergence_["n_draws"] - m.n_iter_ / 2) <= 10


def test_chains_move_to_processes_when_the_run_proves_long(easy, monkeypatch):
    """``n_jobs=None``: the chains start here and move to processes once the rest of the
    run would take longer than ``PROCESSES_PAY_AFTER`` here; the chains are the same."""
    from dpclust.chains import runner
    from dpclust.chains.processes import available_cores

    X, _ = easy
    kw = dict(n_iter=60, n_chains=2, random_state=3)
    here = _fit_quietly(DPMixture(n_jobs=1, **kw), X)
    assert here.n_processes_ == 1
    monkeypatch.setattr(runner, "PROCESSES_PAY_AFTER", 0.0)
    monkeypatch.setattr(runner, "_PROBE_SECONDS", 0.0)  # one round here, then processes
    moved = _fit_quietly(DPMixture(**kw), X)
    assert moved.n_processes_ == min(2, available_cores())
    np.testing.assert_array_equal(moved.trace_.log_joint, here.trace_.log_joint)
    np.testing.assert_array_equal(moved.labels_, here.labels_)
    # short runs stay in this process
    monkeypatch.setattr(runner, "PROCESSES_PAY_AFTER", 1e9)
    assert _fit_quietly(DPMixture(**kw), X).n_processes_ == 1


@pytest.mark.parametrize("body, expected", [
    ("def main():\n    return can_start_processes()\n\nfound = main()\n", False),
    ("def main():\n    return can_start_processes()\n\nif __name__ == '__main__':\n"
     "    found = main()\n", True),
    ("if '__main__' == __name__:\n    found = can_start_processes()\n", True),
])
def test_processes_start_only_where_the_script_is_guarded(tmp_path, monkeypatch, body,
                                                           expected):
    """The script's code runs here as the main module of a file (what ``python
    script.py`` does), so that the check reads its running statement."""
    import sys
    import types

    from dpclust.chains.processes import can_start_processes

    script = tmp_path / "script.py"
    script.write_text(body)
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    main.can_start_processes = can_start_processes
    monkeypatch.setitem(sys.modules, "__main__", main)
    exec(compile(body, str(script), "exec"), vars(main))  # noqa: S102
    assert main.found is expected
    del main.__file__  # no main file to import again: python -c, a notebook
    assert can_start_processes()


def test_the_progress_bar_shows_r_hat_and_ess(easy, monkeypatch, capsys):
    from dpclust.chains import runner

    X, _ = easy
    monkeypatch.setattr(runner, "_VERDICT_EVERY", 0.0)
    _fit_quietly(DPMixture(n_iter=120, n_chains=2, n_jobs=1, progress=True,
                           random_state=0), X[:300])
    err = capsys.readouterr().err
    assert "R-hat=" in err and "ESS=" in err and "/200" in err  # 2 chains need 200
