"""The record of a run: the trace of its chains, each chain's resumable progress (a
snapshot replaced whole at the end of every iteration) and the reservoir of kept draws."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from ..diagnostics import chain_entropy

#: columns of a chain's per-iteration records (see ``ChainEstimator._step_chain``), before
#: one column per learned hyperparameter
RECORD_WIDTH = 9


#: the per-iteration arrays of a :class:`Trace` (each of shape (n_chains, n_iter))
_PER_ITERATION = ("log_joint", "n_clusters", "alpha", "seconds", "n_accepted_splits",
                  "n_accepted_merges", "size_entropy", "n_large_clusters", "log_likelihood")


@dataclass
class Trace:
    """Per-iteration record of the chains.

    Every per-iteration array has a leading chain axis, one chain included: ``log_joint``
    is of shape (n_chains, n_iter) and ``labels`` of shape (n_chains, n_kept, n_samples)
    (as ArviZ's (chain, draw) dimensions); ``kept`` is the same for every chain.  So
    ``trace_.n_clusters[:, -10:]`` is K over the last ten iterations, chain by chain,
    whatever ``n_chains``.

    Attributes
    ----------
    log_joint : ndarray of shape (n_chains, n_iter)
        The log density of the sampler's state after each iteration.  For collapsed
        samplers (parameters integrated out) ``log p(z | alpha) + sum_k log f(X_k)``, the log
        posterior of the partition up to a constant.  For samplers that hold the clusters'
        parameters (``"slice-gibbs"``, ``"beta-gibbs"``, ``"fsd"``'s weights aside) it is the
        joint density of partition *and* parameters, ``log p(z | alpha) + sum_k log
        P0(phi_k) + sum_i log f(x_i | phi_{z_i})``: a density over a space whose dimension
        grows with K, so it need not rise as the chain reaches the posterior's bulk (it
        often falls while K grows), and values at different K do not rank partitions.
    log_likelihood : ndarray of shape (n_chains, n_iter)
        ``log p(X | state)`` after each iteration: ``sum_i log f(x_i | phi_{z_i})`` for
        samplers that hold the parameters, ``sum_k log f(X_k)`` for collapsed ones.  With
        the number of clusters, it is what the convergence verdict watches.
    n_clusters : ndarray of shape (n_chains, n_iter)
    alpha : ndarray of shape (n_chains, n_iter)
    seconds : ndarray of shape (n_chains, n_iter)
        Cumulative wall-clock seconds of sampling at the end of each iteration.
    n_accepted_splits, n_accepted_merges : ndarray of shape (n_chains, n_iter)
        Accepted split and merge moves (zero for samplers without them).
    kept : ndarray of shape (n_kept,)
        Iterations (0-based) whose draws were kept (after burn-in, every ``thin``-th).
    labels : ndarray of shape (n_chains, n_kept, n_samples) or None
        The kept partitions, when ``store_labels=True``.
    size_entropy : ndarray of shape (n_chains, n_iter)
        Entropy (nats) of the cluster sizes after each iteration, ``-sum_k (N_k / N) log(N_k
        / N)``: a summary of the partition that relabelling does not change (one of the
        quantities of ``convergence_``).
    n_large_clusters : ndarray of shape (n_chains, n_iter)
        Clusters holding at least 1 % of the points after each iteration (the number of
        clusters without the small ones).
    hyper : dict of str to ndarray of shape (n_chains, n_iter)
        Each learned hyperparameter of the family (one given a
        :class:`~dpclust.priors.GammaPrior`) after each iteration, by name; empty when none
        is learned.
    """

    log_joint: np.ndarray
    n_clusters: np.ndarray
    alpha: np.ndarray
    seconds: np.ndarray
    n_accepted_splits: np.ndarray
    n_accepted_merges: np.ndarray
    kept: np.ndarray
    labels: np.ndarray | None = None
    size_entropy: np.ndarray | None = None
    n_large_clusters: np.ndarray | None = None
    log_likelihood: np.ndarray | None = None
    hyper: dict | None = None

    def __post_init__(self):
        self._after_load()

    def _after_load(self):
        """A trace of one chain without its chain axis (a model saved before the axis was
        always there) gets it back."""
        if np.ndim(self.log_joint) == 1:
            for name in _PER_ITERATION:
                value = getattr(self, name)
                if value is not None:
                    setattr(self, name, np.asarray(value)[None])
            if self.labels is not None and np.ndim(self.labels) == 2:
                self.labels = np.asarray(self.labels)[None]
            if self.hyper:
                self.hyper = {k: np.asarray(v)[None] for k, v in self.hyper.items()}

    @property
    def n_chains(self) -> int:
        """Number of chains."""
        return int(np.shape(self.log_joint)[0])

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def __getitem__(self, key):
        return getattr(self, key)


class Snapshot(NamedTuple):
    """A consistent view of the chain after ``iteration`` complete iterations.

    Replaced as a whole, in one assignment, at the end of every iteration, so that an
    interrupt at any moment leaves a snapshot whose parts agree with each other.
    """

    iteration: int
    state: object
    rng_state: dict
    elapsed: float
    n_kept: int
    reservoir: tuple
    #: the learned hyperparameters' values (:attr:`~dpclust.samplers.base.MixtureModel.hyperpriors`
    #: order; empty: none learned)
    hyper: tuple = ()


@dataclass
class Progress:
    """The chain's resumable record: everything a checkpoint needs besides the data.

    ``records`` (one tuple per iteration), ``kept`` (iteration and alpha of each kept draw)
    and ``all_labels`` (each kept partition, with ``store_labels``) only grow; the snapshot
    says how much of them is valid.
    """

    snapshot: Snapshot
    burn_in: int
    thin: int
    records: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    all_labels: list = field(default_factory=list)
    #: the names of the learned hyperparameters, in the order of ``snapshot.hyper``
    learned: tuple = ()

    def consistent(self) -> "Progress":
        """A copy cut to the snapshot (what a checkpoint must hold)."""
        snap = self.snapshot
        return Progress(snap, self.burn_in, self.thin, self.records[:snap.iteration],
                         self.kept[:snap.n_kept], self.all_labels[:snap.n_kept], self.learned)

    def after_burn_in(self) -> "Progress":
        """The kept draws from ``burn_in`` on (a run that went on until it converged
        moved its burn-in to half its length, past draws kept earlier)."""
        keep = [j for j, (it, _) in enumerate(self.kept) if it >= self.burn_in]
        stride, held = self.snapshot.reservoir
        held = tuple(d for d in held if d[1] >= self.burn_in)
        snap = self.snapshot._replace(reservoir=(stride, held))
        return Progress(snap, self.burn_in, self.thin, self.records,
                         [self.kept[j] for j in keep],
                         [self.all_labels[j] for j in keep] if self.all_labels else [],
                         self.learned)


def resolve_max_draws(max_draws, n_samples: int) -> int:
    """``max_draws``, with ``"auto"`` resolved: 200 draws up to 10⁵ points, then 2·10⁷ / n
    (at least 20), so that holding the draws and the point estimate stay affordable."""
    if isinstance(max_draws, str):
        return int(min(200, max(20, 2 * 10**7 // max(n_samples, 1))))
    return int(max_draws)


def reservoir_add(reservoir: tuple, index: int, iteration: int, labels, capacity: int,
                   params=None):
    """Hold at most ``capacity`` evenly spread kept draws, whatever the chain's length.

    Each held draw is ``(index, iteration, labels, params)``; ``params`` are the clusters'
    parameters for samplers that instantiate them (families without a collapsed form),
    else None.

    Every ``stride``-th kept draw is held; when more than ``capacity`` would be held, every
    other one is dropped and the stride doubles.  Deterministic, so a stopped and resumed
    chain holds the same draws as an uninterrupted one.
    """
    stride, draws = reservoir
    if index % stride == 0:
        draws = draws + ((index, iteration, labels, params),)
        if len(draws) > capacity:
            stride *= 2
            draws = tuple(d for d in draws if d[0] % stride == 0)
    return stride, draws


def _map_held(prog: Progress, on_state, on_draw) -> Progress:
    """``prog`` with its state and kept draws passed through ``on_state(state)`` and
    ``on_draw(labels, iteration)``."""
    snap = prog.snapshot
    stride, held = snap.reservoir
    held = tuple((i, it, on_draw(z, it), params) for i, it, z, params in held)
    snap = snap._replace(state=on_state(snap.state), reservoir=(stride, held))
    return Progress(snap, prog.burn_in, prog.thin, prog.records, prog.kept, prog.all_labels,
                    prog.learned)


def detach(model, prog: Progress) -> Progress:
    """``prog`` as a checkpoint holds it: the state and kept draws as arrays (a Dask model
    gathers them from its workers; in-process nothing changes)."""
    if model.X is not None:
        return prog
    return _map_held(prog, model.detach, lambda z, it: model.detach(z))


def attach(model, prog: Progress) -> Progress:
    """The inverse of :func:`detach`: arrays back onto the model's workers."""
    if model.X is not None:
        return prog
    return _map_held(prog, model.attach,
                     lambda z, it: model.attach(z, int(prog.records[it][1])))


def cut_lineage(model, prog: Progress, saved: Progress) -> Snapshot:
    """``prog``'s snapshot with its state and kept draws rebuilt on the model's workers from
    ``saved`` (``detach(model, prog)``, what the checkpoint just written holds), as new roots:
    a Dask cluster then forgets the tasks that made them, and rebuilds a lost partition from
    these arrays instead of replaying the chain from its start.  Draws rebuilt at an earlier
    checkpoint are roots already and stay; in-process, and on actors (no lineage), nothing
    changes."""
    snap = prog.snapshot
    if model.X is not None or getattr(model, "recovers", False):
        return snap
    stride, held = snap.reservoir
    _, saved_held = saved.snapshot.reservoir
    held = tuple((i, it, z if getattr(z, "root", False)
                  else model.attach(zs, int(prog.records[it][1])), params)
                 for (i, it, z, params), (_, _, zs, _) in zip(held, saved_held))
    return snap._replace(state=model.attach(saved.snapshot.state), reservoir=(stride, held))


#: a cluster counts as large when it holds at least this share of the points
LARGE_CLUSTER_SHARE = 0.01


def size_summaries(model, state) -> tuple[float, int]:
    """``(entropy of the cluster sizes, clusters with at least 1 % of the points)`` of a
    sampler state (sizes from the sub-cluster sampler's statistics, which stay in this
    process on a Dask cluster, or from the labels)."""
    sub = getattr(state, "sub_stats", None)
    if sub is not None:
        counts = np.asarray(model.family.count(sub), dtype=np.float64)
        counts = counts.reshape(-1, 2).sum(axis=1)  # a cluster's two sub-clusters
    else:
        counts = np.bincount(np.asarray(state.labels)).astype(np.float64)
    large = int((counts >= LARGE_CLUSTER_SHARE * counts.sum()).sum())
    return chain_entropy(counts), large



def records_trace(progs, live: bool = False) -> SimpleNamespace:
    """The quantities of the verdict from the chains' records (no point estimate);
    ``live``: every record there is, also those of iterations whose snapshot has not come
    back from a worker process yet (for the progress bar)."""
    n_done = min(len(p.records) if live else p.snapshot.iteration for p in progs)
    rec = records_array(progs, n_done)
    burn, thin = progs[0].burn_in, progs[0].thin
    return SimpleNamespace(log_joint=rec[:, :, 0], n_clusters=rec[:, :, 1], alpha=rec[:, :, 2],
                           size_entropy=rec[:, :, 6], log_likelihood=rec[:, :, 8],
                           hyper={name: rec[:, :, RECORD_WIDTH + j]
                                  for j, name in enumerate(progs[0].learned)},
                           kept=np.arange(burn, n_done, thin, dtype=np.int64))


def records_array(progs, n_done: int) -> np.ndarray:
    """The chains' first ``n_done`` records as one array of shape (chains, n_done, width):
    the :data:`RECORD_WIDTH` columns of every run, then one per learned hyperparameter."""
    width = RECORD_WIDTH + len(progs[0].snapshot.hyper)
    return np.stack([np.array(p.records[:n_done], dtype=np.float64).reshape(-1, width)
                     for p in progs])

