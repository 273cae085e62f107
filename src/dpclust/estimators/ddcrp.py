"""``DDCRPMixture`` and ``DDCRPLanguageModel``: the scikit-learn style estimators of
ddCRP mixtures and of the fully observed ddCRP language model.

``DDCRPMixture`` is a sibling of :class:`dpclust.DPMixture`: both are mixtures of a
component family (:class:`~dpclust.estimators.mixture.MixtureEstimator`) run by the chain
runner (trace, point estimate, checkpoints and resume, progress bar); only the model, the
sampler and the predictive density differ.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.utils.validation import check_is_fitted

from ..utils.checks import DataError
from ..chains import ChainEstimator
from ..chains.length import DEFAULT_MAX_TIME, renamed_run_length
from ..chains.renamed import no_other_keywords, without_renamed
from ..samplers.crp import resolve_alpha
from ..ddcrp.decay import parse_decay
from ..ddcrp.distances import link_candidates, new_customer_weights
from ..ddcrp.language import LanguageGibbs, LanguageTarget, WordBase
from ..ddcrp.sampler import DDCRPGibbs, DDCRPModel
from .mixture import MixtureEstimator


class DDCRPMixture(MixtureEstimator):
    """Distance dependent CRP mixture fitted by the customer-assignment Gibbs sampler.

    Customers (data points) link to each other with probability decaying with their
    distance, and to themselves with weight ``alpha``; the tables are the connected
    components of the links and each table's points share one component of ``family``
    (Blei & Frazier 2010).

    Parameters
    ----------
    family : {"gaussian", "multinomial"} or ConjugateFamily, default="multinomial"
        Component family (documents as counts in the paper; Gaussian points work the same).
    alpha : float or GammaPrior, default=1.0
        Self-link weight.  A :class:`~dpclust.GammaPrior` resamples it by
        Metropolis-Hastings on log alpha.
    decay : Decay or str, default="constant"
        ``Window(a)``, ``Exponential(a)``, ``Logistic(a, slope)``, ``Constant()`` or a string
        such as ``"logistic:14"``.  The constant decay with ``sequential=True`` is the
        ordinary CRP.
    distances : array (n, n) or sparse matrix, optional
        Distances between customers (a sparse matrix lists the only pairs that may link).
    positions : array (n,) or (n, p), optional
        Times (numbers or datetimes, in days) or coordinates; distances by ``metric``.
    metric : str, default="euclidean"
    sequential : bool, default=False
        Links only to oneself or to earlier rows (sort the data by time).
    n_iter, burn_in, thin, store_labels, point_estimate, max_draws, n_predictive_draws,
    random_state, progress, checkpoint, checkpoint_every, callback, n_chains,
    n_jobs, max_iter, max_time
        As for :class:`~dpclust.DPMixture`.
    start : {"prior", "singletons"}, default="prior"
        Starting links: a prior draw, or every customer alone (the paper's Figure 5).  Which
        mixes faster depends on the data: a prior draw with a wide decay can seat unlike
        documents together, tables that take many sweeps to come apart (the held-out
        benchmark starts from singletons for this reason), while from singletons a cluster
        can stay split in two interleaved tables for a while.  Compare ``trace_`` of both.

    Attributes
    ----------
    links_ : ndarray of shape (n_samples,)
        The links of the last iteration (``links_[i] == i`` for a self link), of the first
        chain.
    labels_, n_clusters_, trace_, alpha_, family_, ...
        As for :class:`~dpclust.DPMixture`; ``trace_.log_joint`` is the ddCRP log joint
        ``log p(c | D, alpha) + sum_tables log f(X_table)`` and ``trace_.n_clusters`` the
        number of tables.
    candidates_ : LinkCandidates
        Who may link to whom.

    Examples
    --------
    >>> import numpy as np
    >>> from dpclust import DDCRPMixture
    >>> from dpclust.datasets import make_gaussian_mixture
    >>> X, y = make_gaussian_mixture(200, 2, random_state=0)
    >>> m = DDCRPMixture(family="gaussian", decay="window:20", positions=np.arange(200),
    ...                  n_iter=30, random_state=0).fit(X)
    >>> m.links_.shape
    (200,)
    """

    #: the sampler its chains run (not a parameter)
    sampler = "ddcrp"

    @without_renamed
    def __init__(self, family="multinomial", alpha=1.0, decay="constant", distances=None,
                 positions=None, metric="euclidean", sequential=False, n_iter=None,
                 burn_in=None, thin=1, store_labels=False, start="prior",
                 point_estimate="vi", max_draws="auto", n_predictive_draws=20,
                 random_state=None, progress=False, checkpoint=None, checkpoint_every=None,
                 callback=None, n_chains=4, n_jobs=None,
                 max_iter=None, max_time=DEFAULT_MAX_TIME, **renamed):
        self.family = family
        self.alpha = alpha
        self.decay = decay
        self.distances = distances
        self.positions = positions
        self.metric = metric
        self.sequential = sequential
        n_iter, max_iter = renamed_run_length(n_iter, max_iter, renamed)
        no_other_keywords(type(self).__name__, renamed)
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.store_labels = store_labels
        self.start = start
        self.point_estimate = point_estimate
        self.max_draws = max_draws
        self.n_predictive_draws = n_predictive_draws
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.callback = callback
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.max_iter = max_iter
        self.max_time = max_time

    def _make_sampler(self, n_samples, family):
        return DDCRPGibbs(start=self.start)

    def _make_model(self, family_, Xw, prior):
        n = family_.n_points(Xw)
        try:
            cands = link_candidates(parse_decay(self.decay), n=n, distances=self.distances,
                                    positions=self.positions, metric=self.metric,
                                    sequential=self.sequential)
        except ValueError as exc:
            raise DataError(str(exc)) from None
        return DDCRPModel(family_, Xw, prior, cands)

    def _initial_state(self, rng, model, sampler, alpha0):
        return sampler.init(rng, model, alpha=alpha0)

    def _finish(self, model, progs):
        super()._finish(model, progs)
        # the first chain's (the links of several chains are not pooled)
        self.links_ = np.asarray(progs[0].snapshot.state.links, dtype=np.int64).copy()
        self.candidates_ = model.candidates

    # ------------------------------------------------------------- prediction
    def score_samples(self, X, positions=None):
        """Held-out predictive log density of new customers, one at a time given the
        training customers (Blei & Frazier 2010, section 3, "Prediction").

        ``p(x | past) ≈ (1/B) sum_b [alpha f(x) + sum_j f(d_{x,j}) f(x | X_{table_b(j)})]
        / (alpha + sum_j f(d_{x,j}))`` over B kept draws, where j runs over the training
        customers the new one may link to.  With a constant decay the new customer may
        link to every training customer (no positions needed); otherwise its positions
        are needed (distances to the training customers by ``metric``).

        Parameters
        ----------
        X : new data, (n_new, n_features)
        positions : array (n_new,) or (n_new, p)
            Positions (times) of the new customers, in the training positions' units.

        Returns
        -------
        log_density : ndarray of shape (n_new,)
        """
        check_is_fitted(self, "labels_")
        Xw = self._check_X(X)
        fam = self.family_
        n_new = fam.n_points(Xw)
        n_old = fam.n_points(self._X_fit)
        try:
            W = new_customer_weights(parse_decay(self.decay), n_new, n_old,
                                     fit_positions=self.positions, positions=positions,
                                     metric=self.metric, sequential=self.sequential)
        except ValueError as exc:
            raise DataError(str(exc)) from None
        prior_pred = fam.log_predictive(Xw, fam.empty_stats(1))[:, 0]
        out = []
        for labels, alpha in self._predictive_draws:
            k = int(labels.max()) + 1
            stats = fam.stats(self._X_fit, labels, k)
            logp = fam.log_predictive(Xw, stats)  # (n_new, k)
            table_w = np.zeros((n_new, k))
            np.add.at(table_w.T, labels, W.T)  # sum of f over each table's customers
            with np.errstate(divide="ignore"):
                terms = np.concatenate([np.log(alpha) + prior_pred[:, None],
                                        np.log(table_w) + logp], axis=1)
            out.append(logsumexp(terms, axis=1) - np.log(alpha + W.sum(axis=1)))
        return logsumexp(np.array(out), axis=0) - np.log(len(out)) + fam.log_jacobian


class DDCRPLanguageModel(ChainEstimator):
    """The fully observed ddCRP language model (Blei & Frazier 2010, 3.1), fitted by the
    customer-assignment Gibbs sampler.

    Every token of a text is a customer; each table carries one word drawn from a base
    distribution G0 and every customer at the table is that word.  With G0 ~ Dirichlet
    (``concentration``) marginalised, the tables' words form a Pólya urn; with ``base_probs``
    G0 is fixed.  A token either starts a new table (weight ``alpha`` times the probability
    of its word as a new table's word) or links to an earlier token of the same word (weight
    ``f(d)``), so the model is a decayed, smoothed cache of the text.

    Parameters
    ----------
    alpha : float or GammaPrior, default=1.0
        Self-link weight.
    decay : Decay or str, default="constant"
        How a link's weight decays with the distance between tokens (e.g. ``"logistic:50"``
        on positions in the text).  Sequential and constant is the ordinary CRP.
    distances, positions, metric :
        As for :class:`DDCRPMixture`; by default a token's position is its index.
    sequential : bool, default=True
        Links only to earlier tokens (the paper's setting).
    concentration : float or array of shape (n_words,), default=1.0
        Dirichlet prior on G0 (ignored with ``base_probs``).
    base_probs : array of shape (n_words,), optional
        A fixed G0.
    n_words : int, optional
        Vocabulary size when the words are integer ids (default: largest id + 1).
    n_iter, burn_in, thin, store_labels, start, point_estimate, max_draws,
    n_predictive_draws, random_state, progress, checkpoint, checkpoint_every, callback,
    n_chains, n_jobs, max_iter, max_time
        As for :class:`DDCRPMixture`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_tokens,)
        The point estimate of the tables.
    links_ : ndarray of shape (n_tokens,)
        The links of the last iteration.
    table_words_ : ndarray
        Word id of each table of ``labels_``.
    vocabulary_ : tuple of str or None
        The words, when the text was given as tokens (ids index it).
    base_ : WordBase
        The resolved base distribution.
    trace_ : Trace
        Log joint ``log p(c | D, alpha) + log p(w | tables)`` and number of tables per
        iteration.

    Examples
    --------
    >>> from dpclust.ddcrp import DDCRPLanguageModel
    >>> text = "the cat sat on the mat and the cat ran".split()
    >>> lm = DDCRPLanguageModel(decay="exponential:3", n_iter=50, random_state=0).fit(text)
    >>> lm.links_.shape
    (10,)
    """

    @without_renamed
    def __init__(self, alpha=1.0, decay="constant", distances=None, positions=None,
                 metric="euclidean", sequential=True, concentration=1.0, base_probs=None,
                 n_words=None, n_iter=None, burn_in=None, thin=1, store_labels=False,
                 start="prior", point_estimate="vi", max_draws="auto",
                 n_predictive_draws=20, random_state=None, progress=False, checkpoint=None,
                 checkpoint_every=None, callback=None, n_chains=4, n_jobs=None,
                 max_iter=None, max_time=DEFAULT_MAX_TIME, **renamed):
        self.alpha = alpha
        self.decay = decay
        self.distances = distances
        self.positions = positions
        self.metric = metric
        self.sequential = sequential
        self.concentration = concentration
        self.base_probs = base_probs
        self.n_words = n_words
        n_iter, max_iter = renamed_run_length(n_iter, max_iter, renamed)
        no_other_keywords(type(self).__name__, renamed)
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.store_labels = store_labels
        self.start = start
        self.point_estimate = point_estimate
        self.max_draws = max_draws
        self.n_predictive_draws = n_predictive_draws
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.callback = callback
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.max_iter = max_iter
        self.max_time = max_time

    def _positions(self, n):
        """The tokens' positions: as given, else their indices (when a decay needs them)."""
        if self.positions is not None or self.distances is not None:
            return self.positions
        return None if parse_decay(self.decay).is_constant else np.arange(n, dtype=np.float64)

    def _make_sampler(self, n_samples, family):
        return LanguageGibbs(start=self.start)

    def _make_model(self, family_, Xw, prior):
        n = family_.n_points(Xw)
        try:
            cands = link_candidates(parse_decay(self.decay), n=n, distances=self.distances,
                                    positions=self._positions(n), metric=self.metric,
                                    sequential=self.sequential)
        except ValueError as exc:
            raise DataError(str(exc)) from None
        return LanguageTarget(family_, Xw, prior, cands)

    def _initial_state(self, rng, model, sampler, alpha0):
        return sampler.init(rng, model, alpha=alpha0)

    def fit(self, X, y=None):
        """Run the chain on a text.

        Parameters
        ----------
        X : sequence of str (tokens) or of int (word ids), length n_tokens
        y : ignored

        Returns
        -------
        self
        """
        return super().fit(X)

    def _target(self, X):
        """The model for the text ``X`` (tokens are numbered in sorted order)."""
        arr = np.asarray(X, dtype=object) if isinstance(X, (list, tuple)) else np.asarray(X)
        vocabulary = None
        if arr.ndim == 1 and arr.size and all(isinstance(w, (str, bytes)) for w in arr):
            vocabulary = tuple(sorted({w if isinstance(w, str) else w.decode() for w in arr}))
        base = WordBase(self.concentration, self.base_probs, self.n_words, vocabulary)
        words = base.validate(X)
        _, prior = resolve_alpha(self.alpha)
        return self._make_model(base.resolve(words), words, prior)

    def _finish(self, model, progs):
        self._summarise_chain(model, progs)
        self.base_ = model.family
        self.vocabulary_ = model.family.vocabulary
        self.links_ = np.asarray(progs[0].snapshot.state.links, dtype=np.int64).copy()
        self.candidates_ = model.candidates
        first = np.empty(self.n_clusters_, dtype=np.int64)
        first[self.labels_[::-1]] = model.X[::-1]
        self.table_words_ = first

    # ------------------------------------------------------------- prediction
    def score_samples(self, X, positions=None):
        """Held-out predictive log probability of each new token given the training text
        (Blei & Frazier 2010, section 3, "Prediction"), averaged over kept draws:

        ``p(v | past) = [alpha p(v | tables' words) + sum_j f(d_j) 1[w_j = v]]
        / (alpha + sum_j f(d_j))``

        where ``p(v | tables' words) = (lambda_v + m_v) / (Λ + K)`` (or ``G0(v)`` when
        fixed).

        Parameters
        ----------
        X : sequence of tokens or word ids, length n_new
        positions : array (n_new,) or (n_new, p), optional
            Positions of the new tokens; by default they follow the training text
            (positions n, n + 1, ...) when the model used token indices.

        Returns
        -------
        log_prob : ndarray of shape (n_new,)
        """
        check_is_fitted(self, "labels_")
        new = self.base_.validate(X)
        words = self._X_fit
        n_old, n_new = len(words), len(new)
        fit_positions = self._positions(n_old)
        if positions is None and self.positions is None and self.distances is None:
            positions = np.arange(n_old, n_old + n_new, dtype=np.float64)
        try:
            W = new_customer_weights(parse_decay(self.decay), n_new, n_old,
                                     fit_positions=fit_positions, positions=positions,
                                     metric=self.metric, sequential=self.sequential)
        except ValueError as exc:
            raise DataError(str(exc)) from None
        same = (W * (words[None, :] == new[:, None])).sum(axis=1)
        total = W.sum(axis=1)
        out = []
        for labels, alpha in self._predictive_draws:
            first = np.empty(int(labels.max()) + 1, dtype=np.int64)
            first[labels[::-1]] = words[::-1]
            log_new = self.base_.log_new_table(first)[new]
            with np.errstate(divide="ignore"):
                out.append(np.logaddexp(np.log(alpha) + log_new, np.log(same))
                           - np.log(alpha + total))
        return logsumexp(np.array(out), axis=0) - np.log(len(out))

    def score(self, X, y=None, positions=None):
        """Mean held-out log probability per token."""
        return float(np.mean(self.score_samples(X, positions=positions)))
