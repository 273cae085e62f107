"""What the mixture estimators share: a component family fitted to the data, the
prediction, density, sampling and saving of the fitted model, on top of the chain runner.

:class:`~dpclust.DPMixture` and :class:`~dpclust.DDCRPMixture` are its subclasses; each
says which model, sampler and starting state its chains use.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from scipy.special import logsumexp
from sklearn.base import ClusterMixin, DensityMixin
from sklearn.utils.validation import check_is_fitted

from .._version import __version__
from ..utils import safe_io as _safe_io
from ..utils.checks import DataError, check_int, check_random_state
from ..families import ConjugateFamily, get_family
from ..families.base import concatenate
from ..priors.base import split_learned
from ..fusion import Fusion, fuse
from ..tables import TableData
from ..tables.axes import as_given
from ..samplers import MixtureModel
from ..samplers.base import summarize_partitions
from ..chains import ChainEstimator

#: format of the files of ``save``
_MODEL_FORMAT = 1


def _check_data_kind(family, X) -> None:
    """Refuse rankings given to a family of other data (its arrays would be read as
    numbers), naming the families that read them."""
    from ..families import FAMILIES
    from ..rankings import Rankings

    if (isinstance(X, Rankings) and isinstance(family, ConjugateFamily)
            and family.data_kind != "rankings"):
        readers = " or ".join(repr(name) for name, cls in sorted(FAMILIES.items())
                              if cls.data_kind == "rankings")
        raise ValueError(f"the data are rankings, which the {type(family).__name__} family "
                         f"does not read: use family='auto' (Plackett-Luce) or {readers}")


class MixtureEstimator(ClusterMixin, DensityMixin, ChainEstimator):
    """A mixture of a component family's clusters fitted by MCMC: the model of the data,
    the fitted summaries (``weights_``, ``cluster_params_``), ``predict``,
    ``predict_proba``, ``score_samples``, ``sample``, ``save`` and ``load``.

    Subclasses provide the parameters (``family``, ``alpha``, the chain's settings) and,
    as for :class:`~dpclust.chains.ChainEstimator`, ``_make_model``, ``_make_sampler`` and
    ``_initial_state``.
    """

    def _check_X(self, X):
        """Validate new data against the fitted family (same number of features; a table's
        columns are found by name in a DataFrame, and an array may hold the modelled
        columns alone or every column fitted)."""
        schema = getattr(self.family_, "schema_", None)
        n_features = (_n_features_of(X) if _collapsible(self.family_)
                      and (schema is None or not hasattr(X, "columns")) else None)
        allowed = ({self.n_features_in_} if schema is None
                   else {self.n_features_in_, len(schema.columns)})
        if n_features is not None and n_features not in allowed:
            raise ValueError(f"X has {n_features} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        return self.family_.validate(X)

    # -------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Run the chain on ``X`` and summarise it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse counts for "multinomial"
        y : ignored

        Returns
        -------
        self
        """
        return super().fit(X)

    def _family(self, X=None):
        """``family`` as a family object (a copy of a family passed as an object, so that
        resolving its hyperparameters leaves the parameter as it was; ``"auto"``: the one
        :func:`~dpclust.families.choose_family` picks for ``X``)."""
        family = get_family(self.family, X)
        if isinstance(family, ConjugateFamily) and family is self.family:
            family = _copy_family(family)
        _check_data_kind(family, X)
        return family

    def _partition_rows(self, n_samples):
        """Rows per partition of the data (None: one partition)."""
        return None

    def _target(self, X):
        """The model this estimator describes for the data ``X`` (validated, the family's
        hyperparameters resolved from the data)."""
        family = self._family(X)
        return self._model_of(family, family.validate(X))

    def _model_of(self, family, Xw):
        """The model of the rows ``Xw`` (in ``family``'s working form), the family's
        hyperparameters resolved from them."""
        prior = self._partition_prior().alpha_prior
        rows = self._partition_rows(family.n_points(Xw))
        # the defaults from per-partition summaries merged in order, as on a Dask cluster;
        # the model keeps the summary (the sub-cluster pass takes its origin from it)
        summary = summarize_partitions(family, Xw, rows)
        if summary is None:
            if rows is not None:
                raise ValueError(f"partitions= needs a family with data summaries; "
                                 f"{type(family).__name__} has none")
            return self._make_model(family.resolve(Xw), Xw, prior)
        model = self._make_model(family.resolve_summary(summary), Xw, prior)
        return dataclasses.replace(model, summary=summary)

    def _finish(self, model: MixtureModel, progs):
        # fused from the previous fit's draws
        for stale in ("fusion_", "fused_labels_", "fused_per_draw_"):
            self.__dict__.pop(stale, None)
        self.family_ = model.family  # before the verdict, whose advice depends on it
        self._summarise_chain(model, progs)
        chosen = self.__dict__.pop("_chosen_draw")  # on a Dask cluster, futures: not kept
        traffic = getattr(getattr(model, "partitions", None), "traffic", None)
        if traffic is not None:
            self.transfer_ = {"params_bytes": np.array(traffic.sent),
                              "stats_bytes": np.array(traffic.received),
                              "n_partitions": len(model.partitions.rows),
                              "round_trips": int(traffic.round_trips),
                              "tasks": int(traffic.tasks),
                              "calls": int(traffic.calls),
                              "rebuilds": int(traffic.rebuilds),
                              "direct": bool(getattr(model.partitions, "direct", False))}
        fam = model.family
        fam_means, self._prior_means = self._split_learned(self.hyperparameters_)
        if fam_means:  # at the learned hyperparameters' posterior means
            fam = fam.at(fam_means)
        self.family_ = fam
        self.n_features_in_ = fam.n_features()
        if not _collapsible(fam):
            # parameters instantiated by the sampler: those of the chosen draw
            sizes = np.bincount(self.labels_, minlength=self.n_clusters_).astype(np.float64)
            self._labels_sizes = sizes
            self._set_weights(sizes)
            self.cluster_params_ = fam.describe_params(self._labels_params)
            return
        stats = model.cluster_stats(chosen, self.n_clusters_)
        self._labels_stats = stats
        self._set_weights(fam.count(stats))
        self.cluster_params_ = fam.mean_params(stats)

    def _set_weights(self, sizes):
        """``weights_``, the clusters' mixing weights given ``labels_`` (they sum to 1; for
        the DP ``N_k / N``), and ``weight_new_``, the prior's probability that one more
        point opens a new cluster (for the DP ``alpha / (N + alpha)``).  One more point
        joins cluster k with probability ``(1 - weight_new_) * weights_[k]``."""
        self.prior_ = self._partition_prior().at(getattr(self, "_prior_means", None) or {})
        log_w, log_new = self._log_weights(sizes, self.alpha_)
        self.weights_ = np.exp(log_w - logsumexp(log_w))
        self.weight_new_ = math.exp(log_new)

    def _split_learned(self, values: dict) -> tuple[dict, dict]:
        """Learned values by name (``hyperparameters_``, a draw's) as the family's and the
        partition prior's."""
        return split_learned(values, frozenset(self._partition_prior().hyperpriors()))

    def _log_weights(self, sizes, alpha, prior_values=None):
        """The prior's normalised log weights of joining each cluster of ``sizes`` or a new
        one (:meth:`~dpclust.priors.PartitionPrior.log_predictive_weights`), with the
        prior's learned parameters at ``prior_values`` where given (a draw's)."""
        prior = getattr(self, "prior_", None) or self._partition_prior()
        if prior_values:
            prior = self._partition_prior().at(prior_values)
        return prior.log_predictive_weights(np.asarray(sizes).round().astype(np.int64), alpha)

    # ----------------------------------------------------------- on disk
    def save(self, path) -> None:
        """Write the fitted model to ``path`` (an ``.npz`` file: arrays, the rest as JSON
        inside, a SHA-256 digest; no pickle, so :meth:`load` runs no code from the file).

        The file keeps what ``predict``, ``predict_proba``, ``score_samples``, ``sample`` and
        the fitted attributes need (the statistics of the predictive draws' clusters, not
        the training data); it cannot be resumed (use ``checkpoint=`` for that)."""
        check_is_fitted(self, "labels_")
        params = self._storable_params()
        state = {k: v for k, v in vars(self).items()
                 if k not in params and k not in ("callback", "executor", "_X_fit", "_recipe")}
        if (_collapsible(self.family_) and state.get("_predictive_stats") is None
                and self._predictive_draws):
            state["_predictive_stats"] = list(self._draw_stats())
        _safe_io.save(path, {"format": _MODEL_FORMAT, "class": type(self).__name__,
                             "version": __version__, "params": params, "state": state})

    @classmethod
    def load(cls, path):
        """A fitted model written by :meth:`save`.  A file changed after it was written, or
        of another kind, is refused with a clear error."""
        payload = _safe_io.load(path, what="model")
        if not isinstance(payload, dict) or payload.get("format") != _MODEL_FORMAT:
            raise DataError(f"{path} is not a dpclust model file of format {_MODEL_FORMAT}")
        if payload.get("class") != cls.__name__:
            raise DataError(f"{path} holds a {payload.get('class')}, not a {cls.__name__}")
        est = cls._from_params(payload["params"])
        est.__dict__.update(payload["state"])
        return est

    # ------------------------------------------------------------- prediction
    def predict_proba(self, X):
        """Probability that each point belongs to each cluster of ``labels_``.

        ``p(k | x) ∝ w_k f(x | X_k)`` over the ``n_clusters_`` clusters of the point estimate,
        with the clusters' mixing weights ``weights_`` (for the DP ``w_k ∝ N_k``; the
        probability of a new cluster is left out; see :meth:`score_samples` for the full
        posterior predictive density).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_clusters_)
        """
        check_is_fitted(self, "labels_")
        return self._proba(self._check_X(X))

    def _proba(self, Xw):
        """:meth:`predict_proba` of the rows ``Xw`` in the family's working form."""
        log_w = np.log(self.weights_)[None, :]
        if not _collapsible(self.family_):
            logp = self.family_.log_likelihood(Xw, self._labels_params) + log_w
        else:
            logp = self.family_.log_predictive(Xw, self._labels_stats) + log_w
        return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))

    def predict(self, X):
        """Most probable cluster of ``labels_`` for each point, shape (n_samples,)."""
        return np.argmax(self.predict_proba(X), axis=1)

    def fit_predict(self, X, y=None):
        """Fit and return ``labels_``."""
        return self.fit(X).labels_

    def score_samples(self, X):
        """Log posterior predictive density of each point, averaged over kept draws.

        ``log (1/S) sum_s [ sum_k w_k^s f(x | X_k^s) + w_new^s f(x) ]`` over ``S =
        n_predictive_draws`` evenly spaced kept draws, with the prior's predictive weights
        (for the DP ``w_k = N_k^s/(N + alpha_s)``, ``w_new = alpha_s/(N + alpha_s)``).  For multinomial data the
        density includes the multinomial coefficient (an absolute log probability).

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "labels_")
        Xw = self._check_X(X)
        fam = self.family_
        per_draw = []
        if not _collapsible(fam):
            # each draw's clusters with their sampled parameters, and a new cluster
            prior = fam.log_prior_predictive(Xw)
            for (labels, a), params in zip(self._predictive_draws, self._predictive_params):
                sizes = np.bincount(labels, minlength=len(params[0]))
                logw = np.append(*self._log_weights(sizes, a))
                logp = np.column_stack([fam.log_likelihood(Xw, params), prior])
                per_draw.append(logsumexp(logp + logw[None, :], axis=1))
            return (logsumexp(np.stack(per_draw), axis=0) - math.log(len(per_draw))
                    + fam.log_jacobian)
        # each draw's learned hyperparameters (none learned: the family's own, every draw)
        learned = getattr(self, "_predictive_hyper", None) or itertools.repeat({})
        for (st, a), hyper in zip(self._predictive_stats or self._draw_stats(), learned):
            fam_h, prior_h = self._split_learned(hyper)
            fam_s = fam.at(fam_h) if fam_h else fam  # at the draw's learned values
            logw = np.append(*self._log_weights(fam.count(st), a, prior_h))
            st = concatenate(st, fam.empty_stats(1))
            per_draw.append(logsumexp(fam_s.log_predictive(Xw, st) + logw[None, :], axis=1))
        return logsumexp(np.stack(per_draw), axis=0) - math.log(len(per_draw)) + fam.log_jacobian

    def _draw_stats(self):
        """Statistics of the predictive draws' clusters, from the training data, one draw at
        a time."""
        for labels, a in self._predictive_draws:
            labels = labels.astype(np.int64)
            yield self.family_.stats(self._X_fit, labels, int(labels.max()) + 1), a

    def score(self, X, y=None):
        """Mean log posterior predictive density of ``X``."""
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples=1, random_state=None):
        """Draw new points from the posterior predictive given ``labels_``.

        Points continue the restaurant of the fitted partition under the prior: for the DP
        an existing cluster with probability ∝ its size (counting points drawn so far), a
        new cluster ∝ alpha_ (other priors: their seating weights).
        Existing clusters' parameters are drawn once from their posterior, new clusters'
        from the prior.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features) (CSR for multinomial)
        y : ndarray of shape (n_samples,)
            Cluster of each point; ``n_clusters_`` and above are new clusters.
        """
        check_is_fitted(self, "labels_")
        n_samples = check_int(n_samples, "n_samples", 1)
        rng = check_random_state(random_state)
        fam = self.family_
        sizes = list(self._labels_sizes if not _collapsible(fam)
                     else fam.count(self._labels_stats).astype(float))
        y = np.empty(n_samples, dtype=np.int64)
        for j in range(n_samples):
            w = np.exp(np.append(*self._log_weights(sizes, self.alpha_)))
            k = int(rng.choice(len(w), p=w / w.sum()))
            if k == len(sizes):
                sizes.append(0.0)
            sizes[k] += 1.0
            y[j] = k
        n_new = len(sizes) - self.n_clusters_
        if not _collapsible(fam):  # the chosen draw's parameters
            params = self._labels_params
        else:
            params = fam.sample_posterior(self._labels_stats, rng)
        if n_new:
            params = concatenate(params, fam.sample_prior(rng, n_new))
        drawn = fam.sample_data(params, y, rng)
        # a table's rows with their real columns as given (not in their principal axes)
        return (as_given(drawn) if isinstance(drawn, TableData) else drawn), y

    # --------------------------------------------------------- fused clusters
    def fuse(self, omega=1.0, **kwargs) -> Fusion:
        """Fused clusters (FOLD): the clusters of the posterior's component *densities*.

        Where one group of the data is described by several components (skewed or
        heavy-tailed groups under Gaussian components), ``labels_`` splits it; fusing
        puts points together when their components are, on average over the posterior,
        close in Hellinger distance (:func:`dpclust.fusion.fuse`, Dombowsky & Dunson 2024).

        The convergence verdict then covers the fused clusters too:
        ``convergence_["fused_clusters"]`` judges the number of fused clusters that each
        draw alone gives (:func:`dpclust.fusion.n_fused_per_draw`), chain by chain in
        order of iteration, over every kept draw where the run stored them
        (``store_labels=True``), else over the draws that were fused (at most
        ``max_draws``, evenly spread).  The ESS of draws spread over more kept draws is a
        lower bound of the chain's, so where it falls short of the rule the entry says so
        (``judged`` False) instead of counting in the verdict; an R-hat that fails counts
        (:func:`dpclust.diagnostics.diagnose_draws`).

        Parameters
        ----------
        omega : float, default=1.0
            Weight of separating two points (larger: fewer clusters); 1 is the value of
            the authors' worked examples.
        **kwargs
            ``n_clusters``, ``max_clusters``, ``max_blocks``, ``random_state``, ``X`` (the
            training data, for a model read with :meth:`load`): see
            :func:`dpclust.fusion.fuse`.  ``max_clusters`` is ``n_clusters_`` by default:
            fusing only joins, so the fused clusters never outnumber those of ``labels_``.

        Returns
        -------
        Fusion
            Also kept as ``fusion_``; its labels as ``fused_labels_`` (n_samples,) and the
            per-draw numbers of fused clusters that were judged as ``fused_per_draw_``
            (n_chains, n_draws), until the next ``fit``.
        """
        check_is_fitted(self, "labels_")
        if kwargs.get("n_clusters") is None:
            kwargs.setdefault("max_clusters", self.n_clusters_)
        self.fusion_ = fuse(self, omega=omega, **kwargs)
        self.fused_labels_ = self.fusion_.labels
        self._judge_fused(self.fusion_, kwargs.get("X"), kwargs.get("random_state", 0))
        return self.fusion_

    def _judge_fused(self, fusion: Fusion, X, random_state) -> None:
        """``fused_per_draw_`` and ``convergence_["fused_clusters"]`` (see :meth:`fuse`);
        the run's verdict fails when that entry is judged and fails."""
        from ..diagnostics import ESS_PER_CHAIN, diagnose_draws
        from ..fusion import n_fused_per_draw

        stored = getattr(self.trace_, "labels", None)
        X = X if X is not None else getattr(self, "_X_fit", None)
        if stored is not None and X is not None and _collapsible(self.family_):
            stored = np.asarray(stored)  # (chains, draws, n): a Trace keeps the chain axis
            # each draw costs a pass over the data: at most 10^7 point-draws per chain
            n_kept, n = stored.shape[1], stored.shape[2]
            take = np.unique(np.linspace(0, n_kept - 1, min(
                n_kept, max(ESS_PER_CHAIN, 10**7 // n))).round().astype(int))
            series = np.stack([n_fused_per_draw(chain[take], X, family=self.family_,
                                                omega=fusion.omega,
                                                random_state=random_state)
                               for chain in stored])
            thinned = len(take) < n_kept
            text = (f"{len(take)} of the {n_kept} kept draws per chain, evenly spread "
                    "(stored labels)" if thinned else "every kept draw (stored labels)")
        else:
            chains = fusion.draw_chain
            per_chain = [fusion.draw_n_clusters[chains == c]
                         for c in range(int(chains.max()) + 1)]
            m = min(len(p) for p in per_chain)
            series = np.stack([p[len(p) - m:] for p in per_chain])
            kept = len(self.trace_.kept)
            thinned = series.shape[1] < kept
            text = (f"{series.shape[1]} of the {kept} kept draws per chain, evenly spread "
                    "(the draws fused)" if thinned else "every kept draw")
        self.fused_per_draw_ = series
        entry = diagnose_draws(series, draws_text=text, thinned=thinned)
        if not entry["judged"] and not _collapsible(self.family_):
            entry["reason"] += ("; the draws fused are those kept with their parameters: "
                                "raise n_predictive_draws for more")
        elif not entry["judged"] and stored is None:
            entry["reason"] += ("; store_labels=True (dpclust fit --store-labels) keeps "
                                "every kept draw")
        conv = dict(self.convergence_)
        conv["fused_clusters"] = entry
        failing = [q for q in conv["failing"] if q != "fused_clusters"]
        if entry["judged"] and not entry["converged"]:
            failing.append("fused_clusters")
        conv["failing"] = failing
        conv["converged"] = not failing
        self.convergence_ = conv

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        fam = self.family
        if isinstance(fam, str) and fam == "multinomial" or getattr(fam, "name", "") == "multinomial":
            tags.input_tags.sparse = True
            tags.input_tags.positive_only = True
        if isinstance(fam, str) and fam == "auto":  # holes are read as holes (the table)
            tags.input_tags.allow_nan = True
            tags.input_tags.string = True
        return tags


def _collapsible(family) -> bool:
    """Whether the family's cluster parameters integrate out (else the sampler instantiates
    them and the fitted summaries use the sampled parameters)."""
    return getattr(family, "collapsible", True)


def _copy_family(family: ConjugateFamily) -> ConjugateFamily:
    return type(family)(**family.get_params())


def _n_features_of(X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2:
        return int(shape[1])
    try:
        arr = np.asarray(X, dtype=object)
    except Exception:
        return None
    return int(arr.shape[1]) if arr.ndim == 2 else None
