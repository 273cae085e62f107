"""What every sampler shares: the model it targets, the diagnostics it returns, relabelling.

A sampler is a small frozen configuration object with two methods (the BlackJAX shape):

* ``init(rng, model, labels=None) -> state``
* ``step(rng, state, model) -> (state, info)``, pure: the input state is not modified.

Every state is a NamedTuple with at least ``labels`` (int64, canonical: clusters numbered
0..K-1 by first appearance) and ``alpha``; every info is a :class:`StepInfo`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..families.base import ConjugateFamily, FamilyKernel, take
from ..partitions import canonical_labels
from ..kernels import gibbs as _kernels
from ..priors import DirichletProcess, GammaPrior, PartitionPrior
from ..priors.base import split_learned
from ..utils.safe_io import data_fingerprint


class StepInfo(NamedTuple):
    """Diagnostics of one sampler step (not needed by the next step)."""

    log_joint: float
    n_clusters: int
    alpha: float
    n_accepted_splits: int = 0
    n_accepted_merges: int = 0
    #: ``log p(X | state)``: ``sum_i log f(x_i | theta_{z_i})`` for samplers that hold
    #: the clusters' parameters, ``sum_k log f(X_k)`` (parameters integrated out) for
    #: collapsed ones; NaN when a sampler does not say
    log_likelihood: float = float("nan")


#: the time budget of the search for the point estimate after a fit
SEARCH_SECONDS = 30.0
#: ... and at most this share of a run's own budget (``max_time``), at least a second
SEARCH_SHARE = 0.25
#: the loss ``point_estimate="auto"`` takes for data whose rows repeat as copies (a
#: frequency table's people): the draws share a row's copies out among clusters, as a
#: latent class model gives a row a probability of each class, and plain VI's estimate
#: then joins those clusters (one cluster for ``vcdExtra``'s Vietnam).  Measured on five
#: R frequency tables, ``a = 0.75`` agreed with a latent class model's classes at least
#: as well as VI on each (adjusted Rand 0.58 against 0.40 on average), ``a = 0.5`` less
#: well on two of them (``benchmarks/bench_frequency_tables.py``)
COPIES_LOSS = "vi(a=0.75)"


def search_seconds(max_time: float | None) -> float:
    """The search's budget after a run held to ``max_time`` seconds (None: no limit):
    :data:`SEARCH_SECONDS`, or a quarter of a shorter run's budget (at least 1 s), so that
    a short run is not followed by a search four times as long."""
    if max_time is None:
        return SEARCH_SECONDS
    return min(SEARCH_SECONDS, max(1.0, SEARCH_SHARE * float(max_time)))


class Estimate(NamedTuple):
    """The point estimate of a fit's partition and what goes with it."""

    labels: np.ndarray
    expected_loss: float
    #: the index of the kept draw nearest to the estimate (whose parameters an
    #: instantiated sampler's clusters take)
    nearest: int
    #: the 95 % credible ball around it (:func:`dpclust.partitions.credible_ball`)
    credible_ball: Any


def searched_estimate(pool, loss, start, max_time: float = SEARCH_SECONDS,
                      groups=None) -> Estimate:
    """The point estimate (:func:`dpclust.partitions.point_estimate`) of the kept draws
    ``pool``, its runs started from ``start`` (the best draw) and from random orders at a
    fixed seed, so that the same draws give the same estimate in-process and on a Dask
    cluster, within ``max_time`` seconds, each of ``groups`` (None: no groups) kept in one
    cluster; the nearest draw and the credible ball around it."""
    from ..partitions import credible_ball, pair_losses, point_estimate

    labels, value = point_estimate(pool, loss=loss, random_state=0, n_starts=0,
                                   starts=np.asarray(start)[None, :],
                                   max_time=max_time, groups=groups)
    distances = pair_losses(labels, pool, loss)  # the nearest draw's and the ball's
    return Estimate(labels.astype(np.int64), value, int(np.argmin(distances)),
                    credible_ball(pool, labels, loss, distances=distances))


class ChainData:
    """What the estimators ask of a target's data besides the sampler: a fingerprint for
    checkpoints, kept draws, the point estimate and cluster statistics.  Here for data in
    this process; :class:`dpclust.distributed.DaskModel` answers the same on a Dask cluster,
    where labels and kept draws stay on the workers."""

    #: points the point estimate keeps in one cluster (one integer each), or None
    estimate_groups = None

    @property
    def default_loss(self) -> str:
        """The loss ``point_estimate="auto"`` reports: the family's ``default_loss`` (VI;
        VI with ``a = 0.5`` for rankings)."""
        return getattr(self.family, "default_loss", "vi")

    def fingerprint(self) -> str:
        """A short hash of the data, stored in checkpoints."""
        return data_fingerprint(self.X)

    def keep_labels(self, labels, n_clusters: int):
        """A kept draw of the partition (int32 labels)."""
        return np.asarray(labels).astype(np.int32)

    def hold_labels(self, labels, n_clusters: int):
        """A labelling made on the client (the point estimate) held as kept draws are."""
        return np.asarray(labels).astype(np.int32)

    def as_array(self, labels) -> np.ndarray:
        """Labels (or a kept draw) as an array."""
        return np.asarray(labels)

    def point_estimate(self, draws, loss: str, max_time: float = SEARCH_SECONDS):
        """The :class:`Estimate`: the search over all partitions
        (:func:`searched_estimate`) from the best kept draw, within ``max_time`` seconds,
        identical rows (the model's ``estimate_groups``, where it has them) kept
        together."""
        from ..partitions import best_draw

        pool = np.asarray(draws)
        return searched_estimate(pool, loss, best_draw(pool, loss)[0], max_time,
                                 self.estimate_groups)

    def cluster_stats(self, draw, n_clusters: int):
        """The family's statistics of the clusters of a kept draw."""
        return self.family.stats(self.X, np.asarray(draw, dtype=np.int64), int(n_clusters))

    def detach(self, state):
        """The state as a checkpoint holds it (nothing to do in-process)."""
        return state

    def attach(self, state, n_clusters: int | None = None):
        return state


@dataclass(frozen=True, eq=False)
class MixtureModel(ChainData):
    """The target: a mixture of ``family`` components for the data ``X`` under a partition
    prior (the Dirichlet process unless ``prior`` says otherwise).

    Parameters
    ----------
    family : ConjugateFamily
        A resolved family (hyperparameters fixed).
    X : data in the family's working form (validated).
    alpha_prior : GammaPrior or None
        Prior on the Dirichlet process's concentration; ``None`` keeps alpha fixed at the
        state's value.  Ignored when ``prior`` is given (a
        :class:`~dpclust.priors.DirichletProcess` carries its own).
    prior : PartitionPrior or None
        The prior on partitions (:mod:`dpclust.priors`); None is the Dirichlet process.
    partition_rows : tuple of int or None
        Rows per partition for the sub-cluster sampler's data pass (None: one partition).
        Each partition's random streams and statistics are its own and the partitions are
        combined in order, so the same partitions give the same chain here and on a Dask
        cluster (:mod:`dpclust.distributed`).
    summary : the family's data summary, when the caller has made it (else made on demand)
    groups : ndarray of shape (n_samples,) or None
        The row of the data each point copies, when whole-number weights repeat rows: the
        point estimate keeps a row's copies in one cluster.  None: no copies.
    """

    family: ConjugateFamily
    X: Any
    alpha_prior: GammaPrior | None = None
    partition_rows: tuple | None = field(default=None, kw_only=True)
    summary: Any = field(default=None, kw_only=True)
    prior: PartitionPrior | None = field(default=None, kw_only=True)
    coarsening: float | None = field(default=None, kw_only=True)
    groups: Any = field(default=None, kw_only=True)

    @cached_property
    def estimate_groups(self) -> np.ndarray | None:
        """The rows the point estimate keeps in one cluster: identical rows where the
        family finds them (:meth:`~dpclust.families.base.ConjugateFamily.distinct`: the
        same ballot cast by many voters, the same document, the same Gaussian row), else
        the copies of repeated rows (``groups``).  Identical rows are exchangeable in a
        mixture, so a reader could not tell why two of them sit in different clusters,
        and the draws' splitting of them says only that their cluster is uncertain."""
        _, inverse, counts = self.distinct_index
        return inverse if len(counts) < self.n_samples else self.groups

    @cached_property
    def copies(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(rows, start)``: the points of each group of identical rows that has more than
        one (``rows[start[r]:start[r + 1]]``, the groups of :attr:`estimate_groups`), which
        the block moves of :mod:`dpclust.kernels.copies` move between clusters; None where
        no row repeats."""
        groups = self.estimate_groups
        if groups is None:
            return None
        sizes = np.bincount(groups)
        rows = np.argsort(groups, kind="stable")
        keep = sizes[groups[rows]] > 1
        rows = rows[keep].astype(np.int64)
        start = np.concatenate([[0], np.cumsum(sizes[sizes > 1])]).astype(np.int64)
        return (rows, start) if len(rows) else None

    @property
    def default_loss(self) -> str:
        """The loss ``point_estimate="auto"`` reports: the family's ``default_loss``, but
        :data:`COPIES_LOSS` where that is plain VI and rows repeat as copies (``groups``)."""
        loss = ChainData.default_loss.fget(self)
        return COPIES_LOSS if loss == "vi" and self.groups is not None else loss

    @cached_property
    def zeta(self) -> float:
        """The power of the coarsened posterior, ``alpha_c / (alpha_c + N)`` (Miller &
        Dunson 2019); 1 (the exact posterior) without ``coarsening``."""
        if self.coarsening is None:
            return 1.0
        return float(self.coarsening) / (float(self.coarsening) + self.n_samples)

    @cached_property
    def distinct_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, inverse, counts)`` of
        :meth:`~dpclust.families.base.ConjugateFamily.distinct`, found once: the first row of
        each distinct row, every row's distinct row and each distinct row's multiplicity
        (float), without a copy of the data."""
        first, inverse, counts = self.family.distinct(self.X)
        return (np.asarray(first, dtype=np.int64), np.asarray(inverse, dtype=np.int64),
                np.asarray(counts, dtype=np.float64))

    @cached_property
    def distinct(self):
        """``(X_distinct, inverse, counts)``: the distinct rows of the data (in the family's
        working form), each row's distinct row and each distinct row's multiplicity
        (:meth:`~dpclust.families.base.ConjugateFamily.distinct`)."""
        first, inverse, counts = self.distinct_index
        return self.family.subset(self.X, first), inverse, counts

    @cached_property
    def repeats(self) -> bool:
        """Whether some rows of the data repeat and the family counts them once
        (:meth:`~dpclust.families.base.ConjugateFamily.distinct`: ballots)."""
        return len(self.distinct_index[0]) < self.n_samples

    @cached_property
    def partition_prior(self) -> PartitionPrior:
        """The prior on partitions every sampler reads (:mod:`dpclust.priors`)."""
        if self.prior is not None:
            return self.prior
        return DirichletProcess(1.0 if self.alpha_prior is None else self.alpha_prior)

    def seat_tables(self, alpha: float, max_clusters: int | None = None):
        """The prior's seating weights ``(log_join, log_new)`` for one point given the
        others (:meth:`~dpclust.priors.PartitionPrior.log_seat_weights`), for the Gibbs
        sweeps."""
        return self.partition_prior.log_seat_weights(self.n_samples, alpha, max_clusters)

    @cached_property
    def n_samples(self) -> int:
        return self.family.n_points(self.X)

    @cached_property
    def kernel(self) -> FamilyKernel:
        return self.family.kernel(self.X)

    @cached_property
    def pass_kernel(self):
        """The family's instantiated-parameter numba face (or None): the sub-cluster pass."""
        return self.family.pass_kernel(self.X, summary=self.data_summary)

    @cached_property
    def data_summary(self):
        """The family's summary of the data (:meth:`~ConjugateFamily.summarize`), made
        partition by partition and merged in order, as on a Dask cluster."""
        if self.summary is not None:
            return self.summary
        return summarize_partitions(self.family, self.X, self.partition_rows)

    @cached_property
    def partitions(self):
        """The sub-cluster sampler's data side in this process."""
        from ._partitioned import LocalPartitions

        return LocalPartitions(self, self.partition_rows)

    @cached_property
    def log_prior_predictive(self) -> np.ndarray:
        """``log f(x_i)`` under the prior, for every point, shape (n,)."""
        return self.family.log_predictive(self.X, self.family.empty_stats(1))[:, 0]

    def log_joint(self, labels: np.ndarray, alpha: float) -> float:
        """``log p(z | alpha) + sum_k log f(X_k)`` (Mathematics §2).

        Computed with the family's compiled kernels (one pass over the data).
        """
        counts, log_lik = self._log_likelihood(labels)
        return self.partition_prior.log_eppf(counts, alpha) + log_lik

    def log_likelihood(self, labels: np.ndarray) -> float:
        """``sum_k log f(X_k)`` of the partition ``labels`` (parameters integrated out)."""
        return self._log_likelihood(labels)[1]

    def _log_likelihood(self, labels):
        labels = np.asarray(labels, dtype=np.int64)
        k = int(labels.max()) + 1
        kern = self.kernel
        kstats = kern.alloc(k)
        counts = np.zeros(k, dtype=np.int64)
        rebuild, fns = _kernels.dispatch(kern, "rebuild_stats")
        rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
        sum_log_marginals, fns = _kernels.dispatch(kern, "sum_log_marginals")
        active = np.flatnonzero(counts).astype(np.int64)
        log_lik = sum_log_marginals(kstats, kern.hyper, active, len(active), *fns)
        return counts, float(log_lik)

    def log_split_ratio(self, left, right, alpha: float, n_clusters: int = 1) -> float:
        """``log p(split) - log p(merged)`` of two disjoint point sets (index arrays), with
        ``n_clusters`` clusters in the merged state: the prior's ratio
        (:meth:`~dpclust.priors.PartitionPrior.log_split_ratio`; for the Dirichlet process
        ``log alpha + lgamma(N_l) + lgamma(N_r) - lgamma(N_c)``) plus ``log f(X_l) +
        log f(X_r) - log f(X_c)``, the target ratio of every split/merge move
        (Mathematics §3)."""
        kern = self.kernel
        logf = np.empty(3)
        split, fns = _kernels.dispatch(kern, "split_log_marginals")
        split(kern.data, kern.alloc(3), kern.hyper, np.ascontiguousarray(left, dtype=np.int64),
              np.ascontiguousarray(right, dtype=np.int64), logf, *fns)
        return split_target(self.partition_prior, len(left), len(right), n_clusters,
                            self.n_samples, alpha, logf)

    def log_joint_reference(self, labels: np.ndarray, alpha: float) -> float:
        """The same log joint through the family's NumPy face (for testing the kernels)."""
        labels = np.asarray(labels)
        k = int(labels.max()) + 1
        stats = self.family.stats(self.X, labels, k)
        sizes = self.family.count(stats)
        return (self.partition_prior.log_eppf(sizes, alpha)
                + float(self.family.log_marginal(stats).sum()))

    # ------------------------------------------------ learned hyperparameters
    @cached_property
    def hyperpriors(self) -> dict:
        """The learned hyperparameters and their priors, by name (empty: none): the
        family's (:meth:`~dpclust.families.base.ConjugateFamily.hyperpriors`), then the
        partition prior's (:meth:`~dpclust.priors.PartitionPrior.hyperpriors`, say the
        Pitman–Yor discount)."""
        family, prior = self.family.hyperpriors(), self.partition_prior.hyperpriors()
        both = set(family) & set(prior)
        if both:
            raise ValueError(f"the family and the partition prior both learn {sorted(both)}")
        return {**family, **prior}

    @cached_property
    def prior_learned(self) -> frozenset:
        """The names of :attr:`hyperpriors` that are the partition prior's."""
        return frozenset(self.partition_prior.hyperpriors())

    @property
    def hyper_start(self) -> tuple:
        """The learned hyperparameters' values a chain starts from, in the order of
        :attr:`hyperpriors` (empty: none learned)."""
        values = {**self.family.learned_values(), **self.partition_prior.learned_values()}
        return tuple(float(values[name]) for name in self.hyperpriors)

    def split_hyper(self, hyper) -> tuple[dict, dict]:
        """``hyper`` (values in the order of :attr:`hyperpriors`, or a dict by name) as the
        family's values and the partition prior's, two dicts by name."""
        values = hyper if isinstance(hyper, dict) else dict(zip(self.hyperpriors, hyper))
        return split_learned(values, self.prior_learned)

    def at(self, hyper: tuple) -> "MixtureModel":
        """The model with the learned hyperparameters at ``hyper`` (in the order of
        :attr:`hyperpriors`): what one step of the sampler targets.  The data, their
        summary and the distinct rows are shared; the kernels are made for the new
        values."""
        if not hyper:
            return self
        fam_values, prior_values = self.split_hyper(hyper)
        family = self.family.at(fam_values) if fam_values else self.family
        changes = {"family": family, "summary": self.data_summary}
        if prior_values:
            changes["prior"] = self.partition_prior.at(prior_values)
        out = dataclasses.replace(self, **changes)
        # what does not depend on the learned values is shared: the data and their forms,
        # and the instantiated pass (which scores points given sampled parameters)
        for name in ("n_samples", "distinct", "repeats", "hyperpriors", "prior_learned",
                     "pass_kernel"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name]
        if not fam_values:  # the family as it was: its kernel and predictive too
            if "log_prior_predictive" in self.__dict__:
                out.__dict__["log_prior_predictive"] = self.log_prior_predictive
            if self.family.collapsible:
                out.__dict__["kernel"] = self.kernel
            return out
        # (a family without a collapsed form has no kernel to share)
        khyper = family.kernel_hyper(self.kernel) if self.family.collapsible else None
        if khyper is not None:  # the same data arrays, the prior at the new values
            out.__dict__["kernel"] = self.kernel._replace(hyper=khyper)
        return out

    def state_stats(self, state):
        """The family's statistics of the clusters of a sampler state: summed from the
        sub-cluster sampler's per-sub-cluster statistics (no pass over the data), else
        from the labels."""
        sub = getattr(state, "sub_stats", None)
        fam = self.family
        if sub is not None:
            k = len(fam.count(sub)) // 2
            return fam.combine(take(sub, slice(0, 2 * k, 2)),
                               take(sub, slice(1, 2 * k, 2)))
        labels = np.asarray(state.labels, dtype=np.int64)
        return fam.stats(self.X, labels, int(labels.max()) + 1)

    def update_hyper(self, rng, hyper: tuple, state) -> tuple:
        """The learned hyperparameters after one update given the partition of ``state``, or
        given its components' parameters where it holds them
        (:func:`dpclust.samplers.hyper.update_hyper`), then the partition prior's given the
        block sizes (:func:`dpclust.samplers.hyper.update_prior_hyper`), in the order of
        :attr:`hyperpriors`."""
        from .hyper import update_hyper, update_prior_hyper

        values, prior_values = self.split_hyper(hyper)
        if values:
            family = self.family.at(values)
            params = getattr(state, "params", None)
            if params is not None:  # a sampler that holds the components' parameters
                values = update_hyper(rng, family, values, params=params)
            else:
                values = update_hyper(rng, family, values, stats=self.state_stats(state))
        if prior_values:
            prior = self.partition_prior.at(prior_values)
            prior_values = update_prior_hyper(rng, prior, prior_values,
                                              self.state_sizes(state), state.alpha)
        out = {**values, **prior_values}
        return tuple(float(out[name]) for name in self.hyperpriors)

    def state_sizes(self, state) -> np.ndarray:
        """The block sizes of a sampler state's partition (zeros for empty labels)."""
        if getattr(state, "sub_stats", None) is not None:
            return np.asarray(self.family.count(self.state_stats(state)), dtype=np.float64)
        return np.bincount(np.asarray(state.labels, dtype=np.int64)).astype(np.float64)

    def step(self, sampler, rng, state, hyper: tuple = ()):
        """One iteration of a chain: ``sampler``'s step at the learned hyperparameters'
        values ``hyper`` (:meth:`at`), then their update given the new state
        (:meth:`update_hyper`); returns ``(state, info, hyper)``.  Without learned
        hyperparameters, the sampler's step alone."""
        if not hyper:
            state, info = sampler.step(rng, state, self)
            return state, info, hyper
        state, info = sampler.step(rng, state, self.at(hyper))
        hyper = self.update_hyper(rng, hyper, state)
        if self.family.kernel_stats_hold_prior and getattr(state, "cache", None) is not None:
            state = state._replace(cache=None)  # its statistics hold the old values' prior
        return state, info, hyper

    def update_alpha(self, rng, alpha: float, n_clusters: int) -> float:
        """The prior's concentration after one update (Escobar & West for a Dirichlet
        process with a Gamma prior on alpha; unchanged otherwise)."""
        return self.partition_prior.update_alpha(rng, alpha, n_clusters, self.n_samples)

def split_target(prior, n_left: int, n_right: int, n_clusters: int, n_samples: int,
                 alpha: float, logf) -> float:
    """``log p(split) - log p(merged)`` of a split into sides of ``n_left`` and ``n_right``
    points with ``n_clusters`` clusters in the merged state: the partition prior's
    :meth:`~dpclust.priors.PartitionPrior.log_split_ratio` (for the Dirichlet process
    ``log alpha + lgamma(N_l) + lgamma(N_r) - lgamma(N_c)``) plus ``log f(X_l) + log f(X_r)
    - log f(X_c)`` from ``logf`` (the three log marginals in that order): the target ratio
    of every split-merge move (Mathematics §3)."""
    ratio = prior.log_split_ratio(int(n_left), int(n_right), int(n_clusters), int(n_samples),
                                  alpha)
    return float(ratio + logf[0] + logf[1] - logf[2])


def summarize_partitions(family, X, rows=None):
    """``family.summarize`` of each partition of ``rows`` rows (None: one), merged in order."""
    n = family.n_points(X)
    rows = [n] if rows is None else [int(r) for r in rows]
    out, start = None, 0
    for r in rows:
        rows_x = X if r == n else family.subset(X, np.arange(start, start + r))
        part = family.summarize(rows_x)
        if part is None:
            return None
        out = part if out is None else family.merge_summaries(out, part)
        start += r
    return out


def log_likelihood_rows(model: MixtureModel, params) -> np.ndarray:
    """``log f(x_i; theta_k)`` for every point and component, shape (n, K), each distinct
    row of the data scored once."""
    if not model.repeats:
        return model.family.log_likelihood(model.X, params)
    Xd, inverse, _ = model.distinct
    return model.family.log_likelihood(Xd, params)[inverse]


def instantiated_log_joint(model: MixtureModel, labels, params, alpha: float):
    """``(log joint, log-likelihood)`` of a state with instantiated parameters: ``log
    p(z | alpha) + sum_k log p(theta_k) + sum_i log f(x_i; theta_{z_i})`` and the last sum
    (the Generalized Mallows samplers' ``instantiated_log_joint`` for any family with
    :meth:`~dpclust.families.base.ConjugateFamily.log_prior`)."""
    fam = model.family
    Xd, inverse, _ = model.distinct
    labels = np.asarray(labels, dtype=np.int64)
    K = len(params[0])
    # each distinct row against its own cluster's component only (not the (D, K) table
    # the next sweep computes anyway), counted as often as the cluster holds it
    pairs, repeats = np.unique(inverse * K + labels, return_counts=True)
    rows, comps = pairs // K, pairs % K
    log_lik = 0.0
    for k in np.unique(comps):
        mine = comps == k
        scores = fam.log_likelihood(fam.subset(Xd, rows[mine]), take(params, [k]))[:, 0]
        log_lik += float(repeats[mine] @ scores)
    counts = np.bincount(labels, minlength=K)
    counts = counts[counts > 0]
    log_joint = (model.partition_prior.log_eppf(counts, alpha)
                 + float(model.family.log_prior(params).sum()) + log_lik)
    return log_joint, log_lik


def relabel(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber labels 0..K-1 by first appearance (:func:`dpclust.partitions.canonical_labels`).

    Returns ``(new_labels, old_ids)`` with ``old_ids[k]`` the old label of new cluster k.
    """
    labels = np.asarray(labels)
    new = canonical_labels(labels)
    first = np.empty(int(new.max()) + 1, dtype=np.int64)
    first[new[::-1]] = np.arange(len(new) - 1, -1, -1)  # first position of each new label
    return new, labels[first]


def initial_labels(rng, n_samples: int, labels=None, n_clusters: int = 1) -> np.ndarray:
    """Starting partition: the given labels, or a uniform random one over ``n_clusters``."""
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n_samples,):
            raise ValueError(f"initial labels have shape {labels.shape}, expected ({n_samples},)")
        if labels.min() < 0:
            raise ValueError("initial labels must be non-negative")
        return relabel(labels)[0]
    if n_clusters < 1:
        raise ValueError(f"the initial number of clusters must be >= 1, got {n_clusters}")
    if n_clusters == 1:
        return np.zeros(n_samples, dtype=np.int64)
    return relabel(rng.integers(0, min(n_clusters, n_samples), size=n_samples))[0]
