"""The fully observed ddCRP language model, and the evidence and Bayes factors of sequential
ddCRP models, against exact enumerations on a handful of customers (ALGORITHMS.md sections 4
and 6)."""

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from dpclust.utils.checks import DataError
from dpclust.ddcrp import (Constant, DDCRPLanguageModel, DDCRPMixture, Exponential,
                           LanguageGibbs, LanguageTarget, Logistic, Window, WordBase,
                           link_candidates)
from dpclust.ddcrp.evidence import bayes_factor, log_evidence
from dpclust.ddcrp.language import same_word_candidates
from dpclust.exact import (ddcrp_partition_log_prior, partition_frequencies, set_partitions,
                           total_variation)
from split_chains import run_chain
from dpclust.samplers import GammaPrior

WORDS = np.array([0, 1, 0, 0, 1, 0])


def _exact(model, alpha):
    parts = set_partitions(model.n_samples)
    lp = ddcrp_partition_log_prior(model.candidates, alpha) + np.array(
        [model.log_likelihood(p) for p in parts])
    return parts, lp


def _language(words, decay, sequential, base):
    words = np.asarray(words)
    kw = {} if decay.is_constant else {"positions": np.arange(len(words), dtype=float)}
    cands = link_candidates(decay, n=len(words), sequential=sequential, **kw)
    return LanguageTarget(base.resolve(words), words, None, cands)


# ------------------------------------------------------------------ the sampler, exactly
@pytest.mark.parametrize("words,decay,sequential,base,start", [
    ([0, 0, 1, 0, 0], Window(3.5), False, WordBase(0.5, n_words=3), "prior"),
    ([0, 0, 1, 0, 0], Constant(), True, WordBase(probs=[0.2, 0.5, 0.3]), "singletons"),
])
def test_language_sampler_matches_exact_posterior(words, decay, sequential, base, start):
    alpha = 1.3
    model = _language(words, decay, sequential, base)
    parts, lp = _exact(model, alpha)
    exact = np.exp(lp - logsumexp(lp))
    assert exact.max() < 0.75 and (exact > 0).sum() > 5
    draws = run_chain(LanguageGibbs(start=start), model, np.random.default_rng(1), 15_000,
                      burn_in=200, init_kwargs={"alpha": alpha})
    assert total_variation(partition_frequencies(draws, parts), exact) < 0.03


@pytest.mark.slow
@pytest.mark.parametrize("decay", [Window(2.5), Exponential(1.5), Logistic(2.0, slope=0.7),
                                   Constant()])
@pytest.mark.parametrize("sequential", [False, True])
@pytest.mark.parametrize("hierarchical", [False, True])
def test_language_sampler_matches_exact_posterior_grid(decay, sequential, hierarchical):
    base = WordBase(0.8, n_words=3) if hierarchical else WordBase(probs=[0.3, 0.5, 0.2])
    model = _language(WORDS, decay, sequential, base)
    parts, lp = _exact(model, 1.1)
    exact = np.exp(lp - logsumexp(lp))
    draws = run_chain(LanguageGibbs(), model, np.random.default_rng(2), 60_000, burn_in=200,
                      init_kwargs={"alpha": 1.1})
    assert total_variation(partition_frequencies(draws, parts), exact) < 0.02


def test_language_sweeps_keep_tables_single_word_and_log_joint_exact():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 4, 80)
    model = _language(words, Exponential(4.0), False, WordBase(0.5))
    sampler = LanguageGibbs()
    state = sampler.init(rng, model, alpha=0.7)
    for _ in range(30):
        state, info = sampler.step(rng, state, model)
        for t in range(state.labels.max() + 1):
            assert len(set(words[state.labels == t])) == 1
        assert info.log_joint == pytest.approx(model.log_joint_links(state.links, 0.7),
                                               abs=1e-9)
        assert info.n_clusters == state.labels.max() + 1


@pytest.mark.parametrize("sequential", [False, True])
def test_same_word_candidates_of_the_constant_decay(sequential):
    words = np.array([2, 0, 2, 1, 2, 0])
    cands = link_candidates(Constant(), n=6, sequential=sequential)
    got = same_word_candidates(cands, words)
    for i in range(6):
        j, lf = got.row(i)
        want = [k for k in range(6) if k != i and words[k] == words[i]
                and (k < i or not sequential)]
        np.testing.assert_array_equal(j, want)
        np.testing.assert_array_equal(lf, 0.0)
    np.testing.assert_array_equal(got.total, cands.total)  # the prior's normaliser


def test_word_base_likelihood():
    words = np.array([0, 1, 0, 2])
    base = WordBase(np.array([0.5, 1.0, 2.0])).resolve(words)
    # tables {0, 2} (word 0), {1}, {3}: a Pólya urn draw of words 0, 1, 2
    want = math.log(0.5 / 3.5) + math.log(1.0 / 4.5) + math.log(2.0 / 5.5)
    assert base.log_likelihood(words, [0, 1, 0, 2]) == pytest.approx(want)
    assert base.log_likelihood(words, [0, 0, 1, 2]) == -np.inf  # a table of two words
    fixed = WordBase(probs=[0.2, 0.3, 0.5]).resolve(words)
    assert fixed.log_likelihood(words, [0, 1, 2, 3]) == pytest.approx(
        math.log(0.2 * 0.3 * 0.2 * 0.5))


# ------------------------------------------------------------------ the estimator
TEXT = ("the cat sat on the mat and the cat saw the dog the dog ran to the mat").split()


def test_language_estimator_on_tokens():
    lm = DDCRPLanguageModel(decay="exponential:3", n_iter=40, random_state=0, n_chains=1).fit(TEXT)
    assert lm.vocabulary_ == tuple(sorted(set(TEXT)))
    words = np.array([lm.vocabulary_.index(w) for w in TEXT])
    assert lm.links_.shape == (len(TEXT),)
    assert (lm.links_ <= np.arange(len(TEXT))).all()  # sequential by default
    np.testing.assert_array_equal(lm.table_words_[lm.labels_], words)
    assert lm.trace_.log_joint.shape == (1, 40)


@pytest.mark.parametrize("kw", [{"decay": "logistic:4:1"}, {"decay": "constant"},
                                {"decay": "window:5", "base_probs": np.full(10, 0.1)}])
def test_language_predictive_is_a_distribution_over_the_vocabulary(kw):
    lm = DDCRPLanguageModel(n_iter=20, random_state=1, **kw).fit(TEXT)
    vocab = lm.vocabulary_
    total = sum(math.exp(lm.score_samples([w])[0]) for w in vocab)
    assert total == pytest.approx(1.0, abs=1e-9)
    assert lm.score(TEXT[:3]) == pytest.approx(np.mean(lm.score_samples(TEXT[:3])))


def test_language_heldout_prefers_a_decay_on_drifting_text():
    rng = np.random.default_rng(0)
    words = np.concatenate([rng.integers(0, 10, 300) + 10 * k for k in range(4)])
    train, test = words[:1100], words[1100:]
    scores = {}
    for decay in ("constant", "exponential:30"):
        lm = DDCRPLanguageModel(decay=decay, n_words=40, n_iter=30, random_state=0, n_chains=1)
        scores[decay] = lm.fit(train).score(test)
    assert scores["exponential:30"] > scores["constant"] + 0.1


def test_language_checkpoint_resume_is_the_same_chain(tmp_path):
    kw = dict(decay="exponential:3", n_iter=10, random_state=3, n_chains=1)
    whole = DDCRPLanguageModel(**kw).fit(TEXT)
    path = tmp_path / "lm.pkl"
    DDCRPLanguageModel(**kw, checkpoint=path, checkpoint_every=1,
                       callback=lambda it, s, i: it < 4).fit(TEXT)
    resumed = DDCRPLanguageModel.resume(path, TEXT)
    np.testing.assert_array_equal(resumed.links_, whole.links_)
    np.testing.assert_allclose(resumed.trace_.log_joint, whole.trace_.log_joint)


@pytest.mark.parametrize("words,message", [
    ([], "empty"),
    ([[0, 1], [1, 0]], "1-D"),
    ([0, -1, 2], r"words\[1\] = -1 is negative"),
    ([0, 1.5], r"words\[1\] = 1.5 is not an integer"),
    ([0, float("nan")], "not an integer"),
])
def test_language_bad_text_is_named(words, message):
    with pytest.raises(DataError, match=message):
        DDCRPLanguageModel(n_iter=2, n_chains=1).fit(words)


def test_language_unknown_words_and_bad_base():
    lm = DDCRPLanguageModel(n_iter=4, random_state=0, n_chains=1).fit(TEXT)
    with pytest.raises(DataError, match="'bird' is not in the vocabulary"):
        lm.score_samples(["the", "bird"])
    with pytest.raises(DataError, match="sum to 1"):
        DDCRPLanguageModel(base_probs=[0.5, 0.4], n_iter=2, n_chains=1).fit([0, 1])
    with pytest.raises(DataError, match="probability zero"):
        DDCRPLanguageModel(base_probs=[1.0, 0.0], n_iter=2, n_chains=1).fit([0, 1])
    with pytest.raises(DataError, match="not a word id"):
        DDCRPLanguageModel(n_words=2, n_iter=2, n_chains=1).fit([0, 2])


# ------------------------------------------------------------------ evidence, Bayes factors
def _exact_log_evidence(est, X):
    model = est._target(X)
    return float(logsumexp(_exact(model, float(est.alpha))[1]))


@pytest.mark.parametrize("est", [
    DDCRPLanguageModel(alpha=1.3, decay="exponential:1.5", concentration=0.7, n_words=3, n_chains=1,
                       n_iter=200),
    DDCRPLanguageModel(alpha=0.8, decay="constant", concentration=2.0, n_chains=1, n_iter=200),
])
def test_language_evidence_matches_enumeration(est):
    ev = log_evidence(est, WORDS, n_particles=1000, n_runs=4, random_state=0)
    assert ev.stderr > 0
    assert ev.log_evidence == pytest.approx(_exact_log_evidence(est, WORDS),
                                            abs=max(4 * ev.stderr, 0.005))


def test_language_evidence_with_a_fixed_base_is_exact():
    est = DDCRPLanguageModel(alpha=0.8, decay="window:2.5", base_probs=[0.5, 0.3, 0.2], n_chains=1,
                             n_iter=200)
    ev = log_evidence(est, WORDS, random_state=0)
    assert ev.stderr == 0
    assert ev.log_evidence == pytest.approx(_exact_log_evidence(est, WORDS), abs=1e-10)


DOCS = np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2], [1, 1, 1, 1]])
POINTS = np.array([[0.0, 0.0], [0.4, 0.1], [1.5, 1.2], [1.8, 1.4], [0.9, 0.8]])


@pytest.mark.parametrize("est,X", [
    (DDCRPMixture(family="multinomial", alpha=1.1, decay="exponential:1.2",
                  positions=np.arange(5.0), sequential=True, n_chains=1, n_iter=200), DOCS),
    (DDCRPMixture(family="gaussian", alpha=0.9, decay="constant", sequential=True, n_chains=1,
                  n_iter=200), POINTS),
])
def test_mixture_evidence_matches_enumeration(est, X):
    ev = log_evidence(est, X, n_particles=500, n_runs=4, random_state=0)
    assert ev.log_evidence == pytest.approx(_exact_log_evidence(est, X),
                                            abs=max(4 * ev.stderr, 0.01))


def test_bayes_factor_against_the_crp():
    est = DDCRPMixture(family="multinomial", alpha=1.1, decay="window:1.5",
                       positions=np.arange(5.0), sequential=True, n_chains=1, n_iter=200)
    bf = bayes_factor(est, DOCS, n_particles=500, n_runs=3, random_state=0)
    crp = DDCRPMixture(family="multinomial", alpha=1.1, decay="constant", sequential=True,
                       n_chains=1, n_iter=200)
    want = _exact_log_evidence(est, DOCS) - _exact_log_evidence(crp, DOCS)
    assert bf.log_bayes_factor == pytest.approx(want, abs=max(4 * bf.stderr, 0.02))
    assert bf.log_bayes_factor == pytest.approx(
        bf.evidence.log_evidence - bf.reference.log_evidence)


def test_evidence_needs_sequential_distances_and_a_fixed_alpha():
    with pytest.raises(ValueError, match="sequential"):
        log_evidence(DDCRPMixture(family="multinomial", decay="window:2",
                                  positions=np.arange(5.0), n_chains=1, n_iter=200), DOCS)
    with pytest.raises(ValueError, match="fixed alpha"):
        log_evidence(DDCRPLanguageModel(alpha=GammaPrior(1.0, 1.0), n_chains=1, n_iter=200), WORDS)
    with pytest.raises(TypeError, match="DDCRPMixture"):
        log_evidence(object(), WORDS)


def test_heldout_score_reads_datetimes_from_one_origin():
    t = np.datetime64("2024-01-01") + np.arange(40).astype("timedelta64[D]")
    rng = np.random.default_rng(0)
    X = np.where(np.arange(40)[:, None] < 20, 0.0, 4.0) + rng.normal(size=(40, 2)) * 0.3
    m = DDCRPMixture(family="gaussian", decay="window:5", positions=t[:30], sequential=True,
                     n_iter=20, random_state=0, n_chains=1).fit(X[:30])
    # the new customers' dates are read in days from the training data's first date, so
    # a new day-31 customer sees the last training days, not the first ones
    near = m.score_samples(np.array([[4.0, 4.0]]), positions=t[31:32])
    far = m.score_samples(np.array([[0.0, 0.0]]), positions=t[31:32])
    assert near[0] > far[0] + 2
