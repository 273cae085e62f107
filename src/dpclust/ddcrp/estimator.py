"""``DDCRPMixture``: the scikit-learn style estimator of ddCRP mixtures.

It shares :class:`dpclust.DPMixture`'s machinery (trace, point estimate, checkpoints and
resume, progress bar); only the model, the sampler and the predictive density differ.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.utils.validation import check_is_fitted

from .._validation import DataError
from ..estimator import DPMixture
from .decay import parse_decay
from .distances import link_candidates
from .sampler import DDCRPGibbs, DDCRPModel


class DDCRPMixture(DPMixture):
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
    random_state, progress, checkpoint, checkpoint_every, callback
        As for :class:`~dpclust.DPMixture`.
    start : {"prior", "singletons"}, default="prior"
        Starting links: a prior draw, or every customer alone (the paper's Figure 5).

    Attributes
    ----------
    links_ : ndarray of shape (n_samples,)
        The links of the last iteration (``links_[i] == i`` for a self link).
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

    # fixed settings of the shared machinery (not parameters of this estimator)
    init_clusters = 1
    init = "random"
    sampler = "ddcrp"

    def __init__(self, family="multinomial", alpha=1.0, decay="constant", distances=None,
                 positions=None, metric="euclidean", sequential=False, n_iter=200,
                 burn_in=None, thin=1, store_labels=False, start="prior",
                 point_estimate="vi", max_draws="auto", n_predictive_draws=20,
                 random_state=None, progress=False, checkpoint=None, checkpoint_every=None,
                 callback=None):
        self.family = family
        self.alpha = alpha
        self.decay = decay
        self.distances = distances
        self.positions = positions
        self.metric = metric
        self.sequential = sequential
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

    def _finish(self, model, prog):
        super()._finish(model, prog)
        self.links_ = np.asarray(prog.snapshot.state.links, dtype=np.int64).copy()
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
        decay = parse_decay(self.decay)
        if decay.is_constant:
            W = np.ones((n_new, n_old))
        else:
            if positions is None or self.positions is None:
                raise ValueError("score_samples needs the new customers' positions (and a "
                                 "model fitted with positions) for a decay that is not "
                                 "constant")
            from scipy.spatial.distance import cdist

            from .distances import _as_positions
            old = _as_positions(self.positions)
            new = _as_positions(positions)
            if new.shape[0] != n_new:
                raise ValueError(f"positions have {new.shape[0]} rows but X has {n_new}")
            if new.shape[1] != old.shape[1]:
                raise ValueError(f"positions have {new.shape[1]} columns, the training "
                                 f"positions {old.shape[1]}")
            W = decay(cdist(new, old, metric=self.metric))
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
        return logsumexp(np.array(out), axis=0) - np.log(len(out))
