"""The scikit-learn style estimator: a thin facade over families, samplers and point estimates.

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and credible
    balls. Bayesian Analysis 13(2) (the point estimate ``labels_``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin, DensityMixin
from sklearn.utils.validation import check_is_fitted

from ._version import __version__
from .utils import safe_io as _safe_io
from .utils.safe_io import data_fingerprint
from .utils.checks import DataError, check_int, check_random_state
from .families import ConjugateFamily, get_family
from .families.base import concatenate
from .partitions import point_certainty, posterior_similarity
from .samplers import MixtureModel, SubclusterSplitMerge, get_sampler
from .samplers.base import kmeans_labels, summarize_partitions
from .priors import GammaPrior, PartitionPrior, get_prior
from .diagnostics import advice, chain_entropy, convergence

_CHECKPOINT_FORMAT = 5
#: format of the files of DPMixture.save
_MODEL_FORMAT = 1
#: columns of a chain's per-iteration records (see ``_step_chain``)
_RECORD_WIDTH = 9
#: above this many points the draws for the n x n co-clustering matrix are not kept
_MAX_SIMILARITY_SAMPLES = 10_000


@dataclass
class Trace:
    """Per-iteration record of the chains.

    With one chain the arrays are indexed by iteration, as below; with ``n_chains = C > 1``
    every per-iteration array gains a leading chain axis (``log_joint`` of shape (C,
    n_iter), ``labels`` of shape (C, n_kept, n_samples)); ``kept`` is the same for every
    chain.

    Attributes
    ----------
    log_joint : ndarray of shape (n_iter,)
        The log density of the sampler's state after each iteration.  For collapsed
        samplers (parameters integrated out) ``log p(z | alpha) + sum_k log f(X_k)``, the log
        posterior of the partition up to a constant.  For samplers that hold the clusters'
        parameters (``"slice-gibbs"``, ``"beta-gibbs"``, ``"fsd"``'s weights aside) it is the
        joint density of partition *and* parameters, ``log p(z | alpha) + sum_k log
        P0(phi_k) + sum_i log f(x_i | phi_{z_i})``: a density over a space whose dimension
        grows with K, so it need not rise as the chain reaches the posterior's bulk (it
        often falls while K grows), and values at different K do not rank partitions.
    log_likelihood : ndarray of shape (n_iter,)
        ``log p(X | state)`` after each iteration: ``sum_i log f(x_i | phi_{z_i})`` for
        samplers that hold the parameters, ``sum_k log f(X_k)`` for collapsed ones.  With
        the number of clusters, it is what the convergence verdict watches.
    n_clusters : ndarray of shape (n_iter,)
    alpha : ndarray of shape (n_iter,)
    seconds : ndarray of shape (n_iter,)
        Cumulative wall-clock seconds of sampling at the end of each iteration.
    n_accepted_splits, n_accepted_merges : ndarray of shape (n_iter,)
        Accepted split and merge moves (zero for samplers without them).
    kept : ndarray of shape (n_kept,)
        Iterations (0-based) whose draws were kept (after burn-in, every ``thin``-th).
    labels : ndarray of shape (n_kept, n_samples) or None
        The kept partitions, when ``store_labels=True``.
    size_entropy : ndarray of shape (n_iter,)
        Entropy (nats) of the cluster sizes after each iteration, ``-sum_k (N_k / N) log(N_k
        / N)``: a summary of the partition that relabelling does not change (one of the
        quantities of ``convergence_``).
    n_large_clusters : ndarray of shape (n_iter,)
        Clusters holding at least 1 % of the points after each iteration (the number of
        clusters without the small ones).
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

    @property
    def n_chains(self) -> int:
        """Number of chains (1 when the arrays have no chain axis)."""
        return 1 if np.ndim(self.log_joint) == 1 else int(np.shape(self.log_joint)[0])

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def __getitem__(self, key):
        return getattr(self, key)


class _Snapshot(NamedTuple):
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


@dataclass
class _Progress:
    """The chain's resumable record: everything a checkpoint needs besides the data.

    ``records`` (one tuple per iteration), ``kept`` (iteration and alpha of each kept draw)
    and ``all_labels`` (each kept partition, with ``store_labels``) only grow; the snapshot
    says how much of them is valid.
    """

    snapshot: _Snapshot
    burn_in: int
    thin: int
    records: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    all_labels: list = field(default_factory=list)

    def consistent(self) -> "_Progress":
        """A copy cut to the snapshot (what a checkpoint must hold)."""
        snap = self.snapshot
        return _Progress(snap, self.burn_in, self.thin, self.records[:snap.iteration],
                         self.kept[:snap.n_kept], self.all_labels[:snap.n_kept])

    def after_burn_in(self) -> "_Progress":
        """The kept draws from ``burn_in`` on (a run that went on until it converged
        moved its burn-in to half its length, past draws kept earlier)."""
        keep = [j for j, (it, _) in enumerate(self.kept) if it >= self.burn_in]
        stride, held = self.snapshot.reservoir
        held = tuple(d for d in held if d[1] >= self.burn_in)
        snap = self.snapshot._replace(reservoir=(stride, held))
        return _Progress(snap, self.burn_in, self.thin, self.records,
                         [self.kept[j] for j in keep],
                         [self.all_labels[j] for j in keep] if self.all_labels else [])


def _max_draws(max_draws, n_samples: int) -> int:
    """``max_draws``, with ``"auto"`` resolved: 200 draws up to 10⁵ points, then 2·10⁷ / n
    (at least 20), so that holding the draws and the point estimate stay affordable."""
    if isinstance(max_draws, str):
        return int(min(200, max(20, 2 * 10**7 // max(n_samples, 1))))
    return int(max_draws)


def _reservoir_add(reservoir: tuple, index: int, iteration: int, labels, capacity: int,
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


def _map_held(prog: _Progress, on_state, on_draw) -> _Progress:
    """``prog`` with its state and kept draws passed through ``on_state(state)`` and
    ``on_draw(labels, iteration)``."""
    snap = prog.snapshot
    stride, held = snap.reservoir
    held = tuple((i, it, on_draw(z, it), params) for i, it, z, params in held)
    snap = snap._replace(state=on_state(snap.state), reservoir=(stride, held))
    return _Progress(snap, prog.burn_in, prog.thin, prog.records, prog.kept, prog.all_labels)


def _detach(model, prog: _Progress) -> _Progress:
    """``prog`` as a checkpoint holds it: the state and kept draws as arrays (a Dask model
    gathers them from its workers; in-process nothing changes)."""
    if model.X is not None:
        return prog
    return _map_held(prog, model.detach, lambda z, it: model.detach(z))


def _attach(model, prog: _Progress) -> _Progress:
    """The inverse of :func:`_detach`: arrays back onto the model's workers."""
    if model.X is not None:
        return prog
    return _map_held(prog, model.attach,
                     lambda z, it: model.attach(z, int(prog.records[it][1])))


#: a cluster counts as large when it holds at least this share of the points
LARGE_CLUSTER_SHARE = 0.01


def _size_summaries(model, state) -> tuple[float, int]:
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


def _outside_package() -> int:
    """The ``stacklevel`` of a warning that points at the caller's line outside dpclust
    (``fit`` reaches the verdict through a depth that differs between estimators)."""
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _chain_rngs(random_state, n_chains: int) -> list:
    """One generator per chain: ``random_state`` itself for one chain (as before chains
    existed), else independent streams spawned from its ``numpy.random.SeedSequence``."""
    rng = check_random_state(random_state)
    return [rng] if n_chains == 1 else list(rng.spawn(n_chains))


def _records_trace(progs) -> SimpleNamespace:
    """The quantities of the verdict from the chains' records (no point estimate)."""
    n_done = min(p.snapshot.iteration for p in progs)
    rec = np.stack([np.array(p.records[:n_done], dtype=np.float64).reshape(-1, _RECORD_WIDTH)
                    for p in progs])
    burn, thin = progs[0].burn_in, progs[0].thin
    return SimpleNamespace(log_joint=rec[:, :, 0], n_clusters=rec[:, :, 1], alpha=rec[:, :, 2],
                           size_entropy=rec[:, :, 6], log_likelihood=rec[:, :, 8],
                           kept=np.arange(burn, n_done, thin, dtype=np.int64))


def _cluster_failure(exc) -> bool:
    """Whether an error came from a Dask cluster or the sources it reloads data from."""
    from .distributed import WorkerLost

    module = type(exc).__module__ or ""
    return (isinstance(exc, (WorkerLost, DataError, OSError))
            or module.startswith(("distributed", "tornado")))


class _ChainEstimator(BaseEstimator):
    """What every MCMC estimator of dpclust shares: the run with its trace, kept draws,
    progress bar and checkpoints, resume, and the point estimate of the partition.

    Subclasses provide ``_make_model``, ``_make_sampler``, ``_initial_state`` and
    ``_finish`` (which calls ``_summarise_chain``).
    """

    # ----------------------------------------------------------------- set-up
    def _settings(self):
        """Check the chain's settings; returns ``(n_iter, burn_in, thin)``."""
        n_iter = check_int(self.n_iter, "n_iter", 1)
        burn_in = n_iter // 2 if self.burn_in is None else check_int(self.burn_in, "burn_in", 0)
        if burn_in >= n_iter:
            raise ValueError(f"burn_in={burn_in} leaves no draws: it must be < n_iter={n_iter}")
        thin = check_int(self.thin, "thin", 1)
        if self.point_estimate not in ("vi", "binder"):
            raise ValueError(f"point_estimate must be 'vi' or 'binder', got {self.point_estimate!r}")
        if not (isinstance(self.max_draws, str) and self.max_draws == "auto"):
            check_int(self.max_draws, "max_draws", 1)
        check_int(self.n_predictive_draws, "n_predictive_draws", 1)
        if self.checkpoint_every is not None:
            check_int(self.checkpoint_every, "checkpoint_every", 1)
        self._n_chains()
        return n_iter, burn_in, thin

    def _n_chains(self) -> int:
        return check_int(getattr(self, "n_chains", 1), "n_chains", 1)

    def _partition_prior(self) -> PartitionPrior:
        """The prior on partitions: the Dirichlet process with concentration ``alpha``."""
        return get_prior(None, alpha=self.alpha)

    # ------------------------------------------------------------------- run
    def fit(self, X, y=None):
        """Validate ``X`` into the subclass's model (``_target``), run a new chain and
        summarise it; returns ``self``."""
        self._settings()
        model = self._target(X)
        alpha0 = self._partition_prior().alpha_start
        sampler = self._make_sampler(model.n_samples, model.family)
        rngs = _chain_rngs(self.random_state, self._n_chains())
        self._recipe = (X, None, None)  # how a chain worker rebuilds the model
        return self._start_chains(model, sampler, rngs, alpha0)

    def _start_chains(self, model, sampler, rngs, alpha0):
        """Run new chains (one per generator of ``rngs``) from the sampler's starting
        states; returns ``self``."""
        n_iter, burn_in, thin = self._settings()
        progs = []
        for rng in rngs:
            state = self._initial_state(rng, model, sampler, alpha0)
            snapshot = _Snapshot(0, state, rng.bit_generator.state, 0.0, 0, (1, ()))
            progs.append(_Progress(snapshot, burn_in, thin))
        self._run(model, sampler, rngs, progs, n_iter)
        return self

    @classmethod
    def resume(cls, path, X, *, n_iter=None, progress=None, callback=None, client=None):
        """Continue a checkpointed run on the same data and return the fitted estimator.

        The resumed chain is exactly the uninterrupted one: same draws, same kept draws,
        same point estimate.

        Parameters
        ----------
        path : str or path
            Checkpoint file written by a run with ``checkpoint=path``.
        X : the same data the run was started on (checked by fingerprint).
        client : distributed.Client, optional
            For a run with ``backend="dask"``: the cluster to go on with (the one of the
            original run is gone with it).
        n_iter : int, optional
            A new total number of iterations, to extend a run (burn-in and thinning stay
            those of the original run).
        """
        ckpt = load_checkpoint(path)
        progs = ckpt["progress"]
        est = cls(**ckpt["params"])
        if n_iter is not None:
            est.n_iter = n_iter
        done = max(p.snapshot.iteration for p in progs)
        if check_int(est.n_iter, "n_iter", 1) < done:
            raise ValueError(f"the checkpoint already holds {done} iterations; n_iter="
                             f"{est.n_iter} would discard some (pass n_iter >= {done})")
        if not (getattr(est, "until_converged", False) and est.burn_in is None):
            est.burn_in = progs[0].burn_in  # as resolved when the run started
        if progress is not None:
            est.progress = progress
        est.callback = callback
        est.checkpoint = str(path)
        if client is not None:
            est.client = client
        n_iter_, _, _ = est._settings()
        family_ = ckpt["family"]
        prior = est._partition_prior().alpha_prior
        model = est._resume_model(X, family_, prior)
        if model.fingerprint() != ckpt["fingerprint"]:
            raise DataError("the data differ from those the checkpointed run was started on "
                            f"(checkpoint {path}): their fingerprints do not match")
        progs = [_attach(model, p) for p in progs]
        est._recipe = (X, family_, prior)
        rngs = []
        for p in progs:
            rng = np.random.default_rng()
            rng.bit_generator.state = p.snapshot.rng_state
            rngs.append(rng)
        est._run(model, est._make_sampler(model.n_samples, family_), rngs, progs, n_iter_,
                 fingerprint=ckpt["fingerprint"],
                 saved_at=min(p.snapshot.iteration for p in progs))
        return est

    def _resume_model(self, X, family_, prior):
        """The model of a resumed run: ``X`` validated by the checkpoint's family."""
        return self._make_model(family_, family_.validate(X), prior)

    def _run(self, model, sampler, rngs, progs, n_iter, *, fingerprint=None, saved_at=None):
        """Advance the chains ``progs`` (with their generators ``rngs``) to ``n_iter``
        iterations, one iteration of each chain in turn (or in ``n_jobs`` processes), with
        checkpoints, the callback and the progress bar; then summarise them
        (``_finish``)."""
        every = self.checkpoint_every
        if self.checkpoint is not None and fingerprint is None:
            fingerprint = model.fingerprint()
        C = len(progs)
        capacity = -(-_max_draws(self.max_draws, model.n_samples) // C)  # pooled: max_draws
        n_workers = self._n_workers(model, C)
        bar = _progress_bar(self.progress, n_iter * C,
                            sum(p.snapshot.iteration for p in progs))
        workers = None
        max_iter = self._max_iter(n_iter)
        saved = [saved_at]  # the iteration of the last checkpoint, kept through an error
        try:
            if n_workers > 1:
                from ._chains import ChainWorkers

                workers = ChainWorkers(self._worker_copy(), self._recipe, progs, n_workers,
                                       capacity)
            while True:
                if workers is not None:
                    self._advance_workers(workers, model, progs, n_iter, bar, fingerprint,
                                          saved)
                else:
                    self._advance_here(model, sampler, rngs, progs, n_iter, capacity, bar,
                                       fingerprint, saved)
                done = min(p.snapshot.iteration for p in progs)
                if (max_iter is None or done < n_iter or done >= max_iter
                        or self._progress_converged(progs)):
                    break
                # not converged: double the run; a burn-in left to the default stays half
                n_iter = min(max_iter, 2 * done)
                if self.burn_in is None:
                    for p in progs:
                        p.burn_in = n_iter // 2
                    if workers is not None:
                        workers.set_burn_in(n_iter // 2)
                if bar is not None:
                    bar.total = n_iter * C
                    bar.refresh()
        except KeyboardInterrupt:
            # nothing lost: the last complete iteration of each chain (with the random
            # stream as it was then) goes to the checkpoint, so a resumed chain is the
            # uninterrupted one
            if self.checkpoint is not None and max(p.snapshot.iteration for p in progs) > 0:
                self._save(progs, model, fingerprint)
            raise
        except Exception as exc:
            if model.X is not None or not _cluster_failure(exc):
                raise
            # a Dask cluster lost what it could not recompute: save the last complete
            # iteration if its labels can still be gathered, else point to the last save
            done = min(p.snapshot.iteration for p in progs)
            if self.checkpoint is not None and done > 0:
                with contextlib.suppress(Exception):  # its labels may be lost with it
                    saved[0] = self._save(progs, model, fingerprint)
            from .distributed import WorkerLost

            where = (f"the checkpoint {self.checkpoint} holds iteration {saved[0]}: continue "
                     f"with {type(self).__name__}.resume (or 'dpclust resume')"
                     if self.checkpoint is not None and saved[0]
                     else "no checkpoint was written (pass checkpoint= and checkpoint_every=)")
            raise WorkerLost(f"the run stopped after iteration {done}: "
                             f"{exc}; {where}") from exc
        finally:
            if workers is not None:
                workers.close()
            if bar is not None:
                bar.close()
        done = min(p.snapshot.iteration for p in progs)
        if self.checkpoint is not None and saved[0] != done:
            self._save(progs, model, fingerprint)
        self.__dict__.pop("_recipe", None)
        self._finish(model, [p.consistent() for p in progs])

    def _advance_workers(self, workers, model, progs, n_iter, bar, fingerprint, saved):
        """The chains in the worker processes, to ``n_iter`` iterations, in blocks of
        ``checkpoint_every`` when checkpointing (``saved[0]``: the last one's iteration)."""
        every = self.checkpoint_every

        def tick(c, k, lj):
            if bar is not None:
                bar.update(1)
                bar.set_postfix(K=k, log_joint=f"{lj:.1f}", refresh=False)

        while (done := min(p.snapshot.iteration for p in progs)) < n_iter:
            target = n_iter
            if self.checkpoint is not None and every is not None:
                target = min(n_iter, (done // every + 1) * every)
            workers.advance(target, tick)
            if self.checkpoint is not None and every is not None and target % every == 0:
                saved[0] = self._save(progs, model, fingerprint)

    def _max_iter(self, n_iter: int) -> int | None:
        """The most iterations of a run ``until_converged`` (None: exactly ``n_iter``)."""
        if not getattr(self, "until_converged", False):
            return None
        max_iter = getattr(self, "max_iter", None)
        if max_iter is None:
            return 10 * n_iter
        return max(check_int(max_iter, "max_iter", 1), n_iter)

    def _progress_converged(self, progs) -> bool:
        """Whether the chains as they stand pass the rule (:mod:`dpclust.diagnostics`)."""
        prior = self._partition_prior().alpha_prior
        return convergence(_records_trace(progs), alpha_resampled=prior is not None)[
            "converged"]

    def _advance_here(self, model, sampler, rngs, progs, n_iter, capacity, bar, fingerprint,
                      saved):
        """The chains in this process, one iteration of each in turn (``saved[0]``: the
        iteration of the last checkpoint written)."""
        every = self.checkpoint_every
        stop = False
        while not stop:
            it = min(p.snapshot.iteration for p in progs)
            if it >= n_iter:
                break
            for rng, prog in zip(rngs, progs):
                if prog.snapshot.iteration != it:
                    continue  # ahead after an interrupted round
                info = self._step_chain(model, sampler, rng, prog, capacity)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(K=info.n_clusters, log_joint=f"{info.log_joint:.1f}",
                                    refresh=False)
                if (self.callback is not None
                        and self.callback(it, prog.snapshot.state, info) is False):
                    stop = True  # the other chains finish this iteration
            if self.checkpoint is not None and every is not None and (it + 1) % every == 0:
                saved[0] = self._save(progs, model, fingerprint)

    def _n_workers(self, model, n_chains: int) -> int:
        """Processes for the chains: ``n_jobs`` (None: 1, -1: every core), at most one per
        chain; 1 on a Dask cluster (its chains run one after another)."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is None or n_chains == 1 or model.X is None:
            return 1
        if n_jobs == -1:
            from ._chains import available_cores

            n_jobs = available_cores()
        n_jobs = check_int(n_jobs, "n_jobs", 1)
        if n_jobs > 1 and self.callback is not None:
            raise ValueError("callback= runs in this process: use n_jobs=1 (or None) with "
                             "several chains and a callback")
        return min(n_jobs, n_chains)

    def _worker_copy(self):
        """This estimator's settings for a chain worker (no callback, progress bar or
        checkpoint file there: the parent process keeps those)."""
        params = {k: v for k, v in self.get_params(deep=False).items()
                  if k not in ("callback", "client")}
        est = type(self)(**params)
        est.progress = False
        est.checkpoint = None
        return est

    def _step_chain(self, model, sampler, rng, prog: _Progress, capacity: int):
        """One iteration of one chain, committed to ``prog`` in one assignment; returns the
        sampler's step information."""
        snap = prog.snapshot
        it = snap.iteration
        t0 = time.perf_counter()
        state, info = sampler.step(rng, snap.state, model)
        del prog.records[it:]  # a record left by an interrupted iteration
        n_kept, reservoir = snap.n_kept, snap.reservoir
        if it >= prog.burn_in and (it - prog.burn_in) % prog.thin == 0:
            labels = model.keep_labels(state.labels, info.n_clusters)
            del prog.kept[n_kept:], prog.all_labels[n_kept:]
            prog.kept.append((it, float(state.alpha)))
            if self.store_labels:
                prog.all_labels.append(model.as_array(labels).astype(np.int32))
            reservoir = _reservoir_add(
                reservoir, n_kept, it, labels, capacity,
                None if getattr(model.family, "collapsible", True) else state.params)
            n_kept += 1
        entropy, large = _size_summaries(model, state)
        elapsed = snap.elapsed + (time.perf_counter() - t0)
        prog.records.append((info.log_joint, info.n_clusters, info.alpha,
                             info.n_accepted_splits, info.n_accepted_merges, elapsed,
                             entropy, large, getattr(info, "log_likelihood", np.nan)))
        # the commit: one assignment
        prog.snapshot = _Snapshot(it + 1, state, rng.bit_generator.state, elapsed, n_kept,
                                  reservoir)
        return info

    def _save(self, progs, model, fingerprint) -> int:
        """Write the checkpoint (every chain's last complete iteration); returns the
        iteration all of them hold."""
        consistent = [_detach(model, p.consistent()) for p in progs]
        save_checkpoint(self.checkpoint, {
            "format": _CHECKPOINT_FORMAT, "version": __version__,
            "params": {k: v for k, v in self.get_params().items()
                       if k not in ("callback", "client")},
            "family": model.family, "fingerprint": fingerprint, "progress": consistent,
        })
        return min(p.snapshot.iteration for p in consistent)

    def _summarise_chain(self, model, progs):
        """What any run gives: the point estimate, the trace, alpha, the convergence
        verdict, the draws kept for prediction (``_predictive_draws``) and the data
        (``_X_fit``).  The kept draws of all chains are pooled."""
        X = model.X
        C = len(progs)
        draws, pool_alpha, pool_params = [], [], []
        progs = [p.after_burn_in() for p in progs]
        for prog in progs:
            snap = prog.snapshot
            _, held = snap.reservoir
            if held:
                alpha_of = dict(prog.kept)
                draws += [d[2] for d in held]
                pool_alpha += [alpha_of[d[1]] for d in held]
                pool_params += [d[3] for d in held]
            else:  # stopped during burn-in: the last state is the only draw
                # (the loop has run at least once: its record gives the number of clusters)
                draws.append(model.keep_labels(snap.state.labels, int(prog.records[-1][1])))
                pool_alpha.append(float(snap.state.alpha))
                pool_params.append(getattr(snap.state, "params", None))
        labels, loss, chosen = model.point_estimate(draws, self.point_estimate)
        # the parameters of the chosen draw (instantiated samplers)
        self._labels_params = pool_params[chosen]
        self._chosen_draw = draws[chosen]
        self.labels_ = labels.astype(np.int64)
        self.expected_loss_ = float(loss)
        self.n_clusters_ = int(self.labels_.max()) + 1
        n_done = min(p.snapshot.iteration for p in progs)
        self.n_iter_ = n_done
        kept_alpha = [a for p in progs for _, a in p.kept]
        self.alpha_ = float(np.mean(kept_alpha or pool_alpha))
        n = model.n_samples
        records = np.stack([np.array(p.records[:n_done], dtype=np.float64).reshape(-1, _RECORD_WIDTH)
                            for p in progs])
        n_kept = min(len(p.kept) for p in progs)
        last = records[:, -1, 0]
        self.log_joint_ = float(last.max())
        self.best_log_joint_ = float(records[:, :, 0].max())
        one = (lambda a: a[0]) if C == 1 else (lambda a: a)
        self.trace_ = Trace(
            log_joint=one(records[:, :, 0]), n_clusters=one(records[:, :, 1].astype(np.int64)),
            alpha=one(records[:, :, 2]), seconds=one(records[:, :, 5]),
            n_accepted_splits=one(records[:, :, 3].astype(np.int64)),
            n_accepted_merges=one(records[:, :, 4].astype(np.int64)),
            kept=np.array([it for it, _ in progs[0].kept[:n_kept]], dtype=np.int64),
            labels=(one(np.array([p.all_labels[:n_kept] for p in progs]))
                    if self.store_labels else None),
            size_entropy=one(records[:, :, 6]),
            n_large_clusters=one(records[:, :, 7].astype(np.int64)),
            log_likelihood=one(records[:, :, 8]))
        self._check_convergence()
        # the draws behind the co-clustering matrix, where one is feasible (n x n memory)
        local = X is not None
        self.certainty_ = (point_certainty((model.as_array(d) for d in draws), self.labels_)
                           if local else None)
        self._pool_draws = (np.array(draws) if local and n <= _MAX_SIMILARITY_SAMPLES
                            else None)
        # a few evenly spaced draws for the posterior predictive density; their statistics
        # are computed from the training data when scoring, one draw at a time (on a Dask
        # cluster, where the training data are not at hand, now, on the workers)
        m = min(self.n_predictive_draws, len(draws))
        idx = np.unique(np.linspace(0, len(draws) - 1, m).round().astype(int))
        self._predictive_params = [pool_params[j] for j in idx]
        if local:
            self._predictive_draws = [(draws[j], pool_alpha[j]) for j in idx]
            self._predictive_stats = None
        else:
            self._predictive_draws = []
            self._predictive_stats = [
                (model.cluster_stats(draws[j], draws[j].n_clusters), pool_alpha[j])
                for j in idx]
        self._X_fit = X
        self._n_fit = n

    def _check_convergence(self):
        """``convergence_`` from the trace; a ``UserWarning`` naming what fails when the
        run has not converged (:mod:`dpclust.diagnostics` states the rule)."""
        prior = self._partition_prior().alpha_prior
        self.convergence_ = convergence(self.trace_, alpha_resampled=prior is not None)
        if not self.convergence_["converged"]:
            from .families.mallows import GeneralizedMallows

            rankings = isinstance(getattr(self, "family_", None), GeneralizedMallows)
            warnings.warn(f"{type(self).__name__}: "
                          + advice(self.convergence_, rankings=rankings),
                          UserWarning, stacklevel=_outside_package())

    def to_arviz(self):
        """The chains as an ArviZ ``InferenceData``.

        Its ``posterior`` group holds ``log_joint``, ``n_clusters``, ``alpha`` and
        ``size_entropy`` with dimensions (chain, draw), over the kept iterations, and
        ``labels`` (chain, draw, point) when the run had ``store_labels=True``; its
        ``sample_stats`` group the per-iteration ``seconds`` and accepted splits and
        merges of the same draws.  ``arviz.rhat``, ``arviz.ess``, ``arviz.summary`` and
        ``arviz.plot_trace`` work on it, and ``to_netcdf`` writes it.  Its attributes name
        the estimator and the prior on partitions (``"dp"``, ``"pitman-yor"``, ...).

        Returns
        -------
        arviz.InferenceData
        """
        check_is_fitted(self, "trace_")
        from .diagnostics import arviz

        tr = self.trace_
        kept = tr.kept

        def chains(a):
            a = np.asarray(a)
            a = a[None] if tr.n_chains == 1 else a
            return a[:, kept]

        posterior = {name: chains(getattr(tr, name))
                     for name in ("log_likelihood", "log_joint", "n_clusters", "alpha",
                                  "size_entropy", "n_large_clusters")}
        dims = {}
        if tr.labels is not None:
            posterior["labels"] = np.asarray(tr.labels)[None] if tr.n_chains == 1 \
                else np.asarray(tr.labels)
            dims["labels"] = ["point"]
        stats = {"seconds": chains(tr.seconds),
                 "n_accepted_splits": chains(tr.n_accepted_splits),
                 "n_accepted_merges": chains(tr.n_accepted_merges)}
        az = arviz()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.from_dict(posterior=posterior, sample_stats=stats, dims=dims,
                                coords={"draw": kept},
                                attrs={"estimator": type(self).__name__,
                                       "prior": self._partition_prior().name,
                                       "dpclust_version": __version__})

    # ---------------------------------------------------------------- summary
    def posterior_similarity(self, max_samples=10_000):
        """Posterior co-clustering matrix ``P[i, j] = Pr(z_i = z_j | X)`` from the kept draws.

        Returns
        -------
        similarity : ndarray of shape (n_samples, n_samples)
        """
        check_is_fitted(self, "labels_")
        if self._pool_draws is None:
            raise ValueError(
                f"the co-clustering matrix of {len(self.labels_):,} points would need "
                f"{len(self.labels_) ** 2 * 8 / 2**30:.1f} GiB; it is kept only for up to "
                f"{_MAX_SIMILARITY_SAMPLES:,} points")
        return posterior_similarity(self._pool_draws, max_samples=max_samples)



class DPMixture(ClusterMixin, DensityMixin, _ChainEstimator):
    """Dirichlet-process mixture model fitted by MCMC; the data decide the number of clusters.

    Parameters
    ----------
    family : {"gaussian", "multinomial", "mallows"} or ConjugateFamily, default="gaussian"
        The component family: ``"gaussian"`` is
        :class:`~dpclust.families.NormalInverseWishart` with data-driven defaults,
        ``"multinomial"`` is :class:`~dpclust.families.DirichletMultinomial` for count vectors
        (dense or ``scipy.sparse``), ``"mallows"`` is
        :class:`~dpclust.families.GeneralizedMallows` for top-t rankings (lists of item ids
        or names, best first, or a :class:`~dpclust.rankings.Rankings`), or pass a
        configured family object.
    alpha : float or GammaPrior, default=1.0
        DP concentration.  A :class:`~dpclust.GammaPrior` (or ``("gamma", shape, rate)``)
        puts a prior on it and resamples it every iteration (Escobar & West 1995).  The
        shorthand for ``prior=DirichletProcess(alpha)``.
    prior : PartitionPrior, str or None, default=None
        The prior on partitions (:mod:`dpclust.priors`): None is the Dirichlet process with
        ``alpha``; :class:`~dpclust.priors.PitmanYor` (``"pitman-yor:D,S"``),
        :class:`~dpclust.priors.MixtureOfFiniteMixtures` (``"mfm:GAMMA,poisson:MU"``) or
        :class:`~dpclust.priors.FiniteDirichlet` (``"finite:K"``) change what the model
        says about the number of clusters (the README's "How many clusters?").  The
        estimator keeps its name for all of them: the Dirichlet process is its default.
        Collapsed Gibbs, explicit Gibbs and Gibbs+SAMS fit every prior (``"auto"`` picks
        collapsed Gibbs for a prior other than the DP); the sub-cluster sampler and the
        rankings' samplers fit the Dirichlet process only, and ``"fsd"`` the finite prior.
    sampler : str or sampler object, default="auto"
        ``"auto"``: ``"gibbs"`` below 5,000 points (or documents), ``"subcluster"`` from
        there on.
        ``"gibbs"``: collapsed Gibbs (Neal's algorithm 3); ``"explicit"``: Gibbs with
        explicit cluster parameters (Neal's algorithm 2, the lecture notes' variant);
        ``"fsd"``: finite symmetric Dirichlet approximation with 20 components (pass
        ``FiniteSymmetricDirichlet(n_components=K)`` for another K); ``"subcluster"``: the
        parallel sampler of Chang & Fisher (2013), the one that scales: restricted Gibbs
        with instantiated parameters (collapsed for documents and for Gaussian data up to
        10,000 points) and exact parallel split-merge moves
        (:class:`~dpclust.samplers.SubclusterSplitMerge`; ``"subcluster-exact"`` is the
        same); ``"subcluster-approx"``: the paper's fast sub-cluster splits and merges,
        **not exact** (for comparisons with the paper); ``"gibbs+sams"``:
        collapsed Gibbs with Dahl's merge-split moves.  For rankings (``"mallows"``, which
        has no collapsed form): ``"slice-gibbs"`` (the default there; exact MCMC with its
        Metropolis-Hastings step for the central ranking) or ``"beta-gibbs"`` (faster,
        approximate), :class:`~dpclust.samplers.SliceGibbs` and
        :class:`~dpclust.samplers.BetaGibbs` (Meilă & Chen 2010).
    n_iter : int, default=200
        Number of MCMC iterations (sweeps over the data).
    burn_in : int or None, default=None
        Iterations discarded before draws are kept; ``None`` means ``n_iter // 2``.
    thin : int, default=1
        Keep every ``thin``-th draw after burn-in.
    store_labels : bool, default=False
        Keep every kept partition in ``trace_.labels`` (n_kept × n_samples integers).
    init_clusters : int, default=10
        Start from this many clusters (at most one per point).  Samplers that move one
        point at a time merge clusters far more easily than they split them (a new cluster
        must grow from a single point), so starting above the expected number of clusters
        mixes better than starting from one.
    init : {"auto", "random", "kmeans"}, default="auto"
        How the ``init_clusters`` starting clusters are made: points assigned at random, or
        k-means (k-means++ seeds, 20 Lloyd iterations; documents by their word
        proportions).  ``"auto"``: k-means for the sub-cluster sampler on Gaussian data,
        random otherwise.  The sub-cluster sampler's splits break a cluster that mixes
        several groups into pieces that its exact merges reassemble slowly: on the bundled
        demo (1,500 points, six clusters) it reaches NMI 0.997 in 100 iterations from
        k-means, but K = 58 after 10 iterations and NMI 0.987 after 400 from ten random
        clusters; on 10^5 points it reaches NMI 0.9999 from k-means.
    point_estimate : {"vi", "binder"}, default="vi"
        Loss whose posterior expectation ``labels_`` minimises among the kept draws.
    max_draws : int or "auto", default="auto"
        At most this many kept draws (evenly spaced) are held for the point estimate and the
        co-clustering matrix, which cost O(max_draws² × n) and O(max_draws × n) memory.
        ``"auto"``: 200, fewer beyond 100,000 points (``2·10⁷ / n``, at least 20).
    n_predictive_draws : int, default=20
        Kept draws (evenly spaced) averaged over by ``score_samples``.
    random_state : int, Generator or None, default=None
        Seed or ``numpy.random.Generator``; the same seed gives the same result.
    progress : bool, default=False
        Show a progress bar (iteration, number of clusters, log joint) on stderr.
    checkpoint : str or path, optional
        File to which the chain state is written every ``checkpoint_every`` iterations and at
        the end; :meth:`resume` continues from it with nothing lost.
    checkpoint_every : int or None, default=None
        Iterations between checkpoints (``None``: only at the end, if ``checkpoint`` is set).
    callback : callable, optional
        ``callback(iteration, state, info)`` after every iteration; returning ``False`` stops
        the run early (the draws kept so far are used).
    backend : {"local", "dask"}, default="local"
        ``"dask"``: run the sub-cluster sampler on a Dask cluster (``client``), with ``X`` a
        dask array, shard files (a directory, glob pattern or list of ``.npy``/``.parquet``
        files, one partition each) or an in-memory array shipped once to the workers.  Data,
        labels and kept draws stay on the workers; each iteration sends the cluster
        parameters and gathers per-cluster statistics.  Needs ``pip install
        'dpclust[dask]'``; starts from random clusters (``init="kmeans"`` is in-process
        only); ``posterior_similarity`` is not kept.
    client : distributed.Client or None, default=None
        The cluster of ``backend="dask"`` (None: Dask's current client).
    partitions : int, sequence of int or None, default=None
        Rows per partition of the sub-cluster sampler's data pass (an int: that many equal
        partitions).  Each partition has its own random streams and statistics, combined
        in order, so the same ``random_state`` and partitions give exactly the same chain
        in-process and on a Dask cluster.  None: one partition in-process, a dask array's
        own row chunks (or one partition per worker) with ``backend="dask"``.
    n_chains : int, default=1
        Independent chains, their streams spawned from ``random_state``
        (``numpy.random.SeedSequence``), run one iteration of each in turn in this process
        (on a Dask cluster, one after another on the same workers).  Their kept draws are
        pooled for ``labels_``, the co-clustering matrix, ``predict``, ``score_samples``
        and ``sample`` (at most ``max_draws`` in all); ``trace_`` gains a leading chain
        axis; ``convergence_`` compares them.  With one chain, R-hat compares the chain's
        quarters.
    n_jobs : int or None, default=None
        Processes for the chains (None: 1, the chains take turns in this process; -1: one
        per core, at most one per chain).  Each process gets its share of the cores for
        its numba threads; the result does not depend on ``n_jobs``.  The processes are
        spawned: a script must call ``fit`` under ``if __name__ == "__main__":``; a
        ``callback`` needs ``n_jobs=1``.  Each process loads the data and the compiled
        kernels (a second or two), so processes pay for themselves on runs longer than
        that.
    until_converged : bool, default=False
        After ``n_iter`` iterations, while ``convergence_`` fails and the run is shorter
        than ``max_iter``, double the run (the chains go on where they are); a burn-in
        left to the default stays half of the run, so the verdict and the kept draws are
        those of the second half.  ``n_iter_`` says how long it ran.
    max_iter : int or None, default=None
        The longest run of ``until_converged`` (None: ``10 * n_iter``).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Point estimate of the partition: the kept draw with the least posterior expected
        variation of information (or Binder loss) to the other kept draws.
    n_clusters_ : int
        Number of clusters in ``labels_``.
    weights_ : ndarray of shape (n_clusters_,)
        Posterior mean mixing weights given ``labels_``: the prior's probability that one
        more point joins each cluster (for the DP ``N_k / (N + alpha)``); ``weight_new_``
        (for the DP ``alpha / (N + alpha)``) is the mass left for a new cluster.
    prior_ : PartitionPrior
        The prior on partitions the chains targeted (:mod:`dpclust.priors`).
    cluster_params_ : dict of arrays
        Posterior means of the cluster parameters given ``labels_`` (``"means"`` and
        ``"covariances"`` for Gaussians, ``"probabilities"`` for multinomials).  For
        rankings, the sampled parameters of the draw ``labels_`` is: ``"central_rankings"``
        (item ids best first), ``"theta"`` (dispersion per rank, larger = tighter) and
        ``"top_items"`` (each cluster's first five items by name).
    family_ : ConjugateFamily
        The family with every hyperparameter resolved.
    alpha_ : float
        Posterior mean of alpha over the kept draws (the fixed value if not resampled).
    trace_ : Trace
        Per-iteration ``log_joint``, ``n_clusters``, ``alpha``, ``size_entropy``,
        ``seconds`` (and ``labels``), with a leading chain axis when ``n_chains > 1``.
    certainty_ : ndarray of shape (n_samples,) or None
        Each point's posterior probability of lying in the core of its cluster of
        ``labels_`` (:func:`dpclust.partitions.point_certainty` over the pooled kept
        draws); None on a Dask cluster.
    convergence_ : dict
        The verdict of :func:`dpclust.diagnostics.convergence` on the kept iterations:
        per quantity (``log_joint``, ``n_clusters``, ``size_entropy``, and ``alpha`` when
        resampled) the rank-normalised split ``rhat``, ``ess_bulk``, ``ess_tail`` and
        ``converged`` (R-hat < 1.01, both ESS >= 100 per chain; Vehtari et al. 2021), and
        overall ``converged`` and ``failing``.  A run that has not converged warns
        (``UserWarning``) with what to do.  :meth:`to_arviz` gives the chains to ArviZ.
    n_iter_ : int
        Iterations run.
    expected_loss_ : float
        Posterior expected loss of ``labels_``.
    n_features_in_ : int
    transfer_ : dict
        Only with ``backend="dask"``: ``params_bytes`` (the cluster parameters sent for
        each data pass, once to every worker that runs a partition) and ``stats_bytes`` (the
        statistics gathered from all partitions) per pass, and ``n_partitions``.

    Notes
    -----
    The fitted estimator keeps a reference to the (validated) training data: the posterior
    predictive density of :meth:`score_samples` is computed from the training points of each
    kept draw, which holds far less memory than per-draw cluster statistics would for large
    vocabularies.

    References
    ----------
    Neal (2000), algorithms 2 and 3; Escobar & West (1995); Wade & Ghahramani (2018).

    Examples
    --------
    >>> from dpclust import DPMixture
    >>> from dpclust.datasets import make_gaussian_mixture
    >>> X, y = make_gaussian_mixture(n_samples=300, n_clusters=3, random_state=0)
    >>> model = DPMixture(n_iter=100, random_state=0).fit(X)
    >>> model.n_clusters_
    3
    """

    def __init__(self, family="gaussian", alpha=1.0, sampler="auto", n_iter=200, burn_in=None,
                 thin=1, store_labels=False, init_clusters=10, init="auto", point_estimate="vi",
                 max_draws="auto", n_predictive_draws=20, random_state=None, progress=False,
                 checkpoint=None, checkpoint_every=None, callback=None, backend="local",
                 client=None, partitions=None, n_chains=1, n_jobs=None,
                 until_converged=False, max_iter=None, prior=None):
        self.family = family
        self.alpha = alpha
        self.prior = prior
        self.sampler = sampler
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.store_labels = store_labels
        self.init_clusters = init_clusters
        self.init = init
        self.point_estimate = point_estimate
        self.max_draws = max_draws
        self.n_predictive_draws = n_predictive_draws
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.callback = callback
        self.backend = backend
        self.client = client
        self.partitions = partitions
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.until_converged = until_converged
        self.max_iter = max_iter

    # ----------------------------------------------------------------- set-up
    def _settings(self):
        out = super()._settings()
        check_int(self.init_clusters, "init_clusters", 1)
        if self.init not in ("auto", "random", "kmeans"):
            raise ValueError(f"init must be 'auto', 'random' or 'kmeans', got {self.init!r}")
        backend = getattr(self, "backend", "local")  # estimators built on this one may lack it
        if backend not in ("local", "dask"):
            raise ValueError(f"backend must be 'local' or 'dask', got {backend!r}")
        if backend == "dask" and self.init == "kmeans":
            raise ValueError("init='kmeans' runs in-process only: use init='random' (or "
                             "'auto') with backend='dask'")
        return out

    def _partition_prior(self) -> PartitionPrior:
        """``prior`` resolved (the Dirichlet process with ``alpha`` when None)."""
        prior = getattr(self, "prior", None)
        resolved = get_prior(prior, alpha=self.alpha)
        if prior is not None and resolved.name != "dp" and not (
                isinstance(self.alpha, (int, float)) and self.alpha == 1.0):
            raise ValueError(f"alpha={self.alpha!r} is the Dirichlet process's concentration; "
                             f"the {resolved.title} prior takes its own parameters: leave "
                             f"alpha at its default")
        return resolved

    def _check_sampler_prior(self, sampler, prior: PartitionPrior):
        """Refuse a sampler that cannot target ``prior`` (its ``priors``: names, or None
        for every prior of :mod:`dpclust.priors`)."""
        supported = getattr(sampler, "priors", ("dp",))
        if supported is not None and prior.name not in supported:
            name = getattr(sampler, "name", type(sampler).__name__)
            raise ValueError(f"the {name!r} sampler fits the "
                             f"{' or '.join(supported)} prior, not the {prior.title}: use "
                             f"sampler='gibbs', 'explicit' or 'gibbs+sams'")
        if prior.alpha_prior is not None and prior.name != "dp":
            raise ValueError("only the Dirichlet process's alpha can be resampled")

    @property
    def _distributed(self) -> bool:
        return getattr(self, "backend", "local") == "dask"

    @property
    def _partitions(self):
        return getattr(self, "partitions", None)

    def _initial_labels(self, rng, family, X, sampler):
        """k-means labels when ``init`` asks for them (None: the sampler's random start)."""
        if self._distributed:
            return None
        use_kmeans = (self.init == "kmeans"
                      or (self.init == "auto" and isinstance(sampler, SubclusterSplitMerge)
                          and family.kmeans_start))
        if not use_kmeans or self.init_clusters == 1:
            return None
        features = family.init_features(X)
        if features is None:
            if self.init == "kmeans":
                raise ValueError(f"init='kmeans' needs data that k-means can use; "
                                 f"{type(family).__name__} has none: use init='random'")
            return None
        return kmeans_labels(rng, features, self.init_clusters)

    def _make_sampler(self, n_samples, family):
        sampler = self._sampler_for(n_samples, family)
        self._check_sampler_prior(sampler, self._partition_prior())
        return sampler

    def _sampler_for(self, n_samples, family):
        if self._partitions is not None or self._distributed:
            sampler = get_sampler("subcluster" if self.sampler == "auto" else self.sampler,
                                  n_samples, family)
            if not isinstance(sampler, SubclusterSplitMerge):
                raise ValueError(
                    "backend='dask' and partitions= are for the sub-cluster sampler "
                    f"('subcluster' or 'subcluster-approx'), not {self.sampler!r}")
            return sampler
        return get_sampler(self.sampler, n_samples, family, self._partition_prior())

    def _partition_rows(self, n_samples):
        """Rows per partition of ``partitions`` for ``n_samples`` points (None: one)."""
        if self._partitions is None:
            return None
        from .distributed.backend import partition_rows

        return tuple(partition_rows(n_samples, self._partitions))

    def _make_model(self, family_, Xw, alpha_prior):
        return MixtureModel(family_, Xw, alpha_prior, prior=self._partition_prior(),
                            partition_rows=self._partition_rows(family_.n_points(Xw)))

    def _dask_model(self, X, family, prior):
        """The data on the Dask cluster of ``client``, validated and summarised there."""
        from .distributed.backend import DaskModel, load_partitions

        client = self.client
        if client is None:
            from .distributed.backend import _dask

            try:
                client = _dask().get_client()
            except ValueError:
                raise ValueError("backend='dask' needs a Dask cluster: pass client=Client(...)"
                                 " (or create one first)") from None
        data, resolved, fingerprint = load_partitions(client, X, family, self.partitions)
        return DaskModel(resolved, data, prior, fingerprint)

    def _resume_model(self, X, family_, prior):
        if self._distributed:
            return self._dask_model(X, family_, prior)
        return super()._resume_model(X, family_, prior)

    def _initial_state(self, rng, model, sampler, alpha0):
        labels = self._initial_labels(rng, model.family, model.X, sampler)
        return sampler.init(rng, model, labels=labels, n_clusters=self.init_clusters,
                            alpha=alpha0)

    def _check_X(self, X):
        """Validate new data against the fitted family (same number of features)."""
        n_features = _n_features_of(X) if _collapsible(self.family_) else None
        if n_features is not None and n_features != self.n_features_in_:
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

    def _target(self, X):
        """The model this estimator describes for the data ``X`` (validated, the family's
        hyperparameters resolved from the data)."""
        family = get_family(self.family)
        if isinstance(family, ConjugateFamily) and family is self.family:
            family = _copy_family(family)
        prior = self._partition_prior().alpha_prior
        if self._distributed:
            return self._dask_model(X, family, prior)
        Xw = family.validate(X)
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
        self.family_ = model.family  # before the verdict, whose advice depends on it
        self._summarise_chain(model, progs)
        chosen = self.__dict__.pop("_chosen_draw")  # on a Dask cluster, futures: not kept
        traffic = getattr(getattr(model, "partitions", None), "traffic", None)
        if traffic is not None:
            self.transfer_ = {"params_bytes": np.array(traffic.sent),
                              "stats_bytes": np.array(traffic.received),
                              "n_partitions": len(model.partitions.rows)}
        fam = model.family
        self.family_ = fam
        self.n_features_in_ = fam.n_features()
        n = model.n_samples
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
        """``weights_`` and ``weight_new_``: the prior's predictive weights of one more point
        given the clusters of ``labels_`` (for the DP ``N_k / (N + alpha)`` and
        ``alpha / (N + alpha)``)."""
        self.prior_ = self._partition_prior()
        log_w, log_new = self._log_weights(sizes, self.alpha_)
        self.weights_ = np.exp(log_w)
        self.weight_new_ = math.exp(log_new)

    def _log_weights(self, sizes, alpha):
        """The prior's normalised log weights of joining each cluster of ``sizes`` or a new
        one (:meth:`~dpclust.priors.PartitionPrior.log_predictive_weights`)."""
        prior = getattr(self, "prior_", None) or self._partition_prior()
        return prior.log_predictive_weights(np.asarray(sizes).round().astype(np.int64), alpha)

    # ------------------------------------------------------------- prediction
    # ----------------------------------------------------------- on disk
    def save(self, path) -> None:
        """Write the fitted model to ``path`` (an ``.npz`` file: arrays, the rest as JSON
        inside, a SHA-256 digest; no pickle, so :meth:`load` runs no code from the file).

        The file keeps what ``predict``, ``predict_proba``, ``score_samples``, ``sample`` and
        the fitted attributes need (the statistics of the predictive draws' clusters, not
        the training data); it cannot be resumed (use ``checkpoint=`` for that)."""
        check_is_fitted(self, "labels_")
        params = {k: v for k, v in self.get_params().items() if k not in ("callback", "client")}
        state = {k: v for k, v in vars(self).items()
                 if k not in params and k not in ("callback", "client", "_X_fit", "_recipe")}
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
        est = cls(**payload["params"])
        est.__dict__.update(payload["state"])
        return est

    def predict_proba(self, X):
        """Probability that each point belongs to each cluster of ``labels_``.

        ``p(k | x) ∝ w_k f(x | X_k)`` over the ``n_clusters_`` clusters of the point estimate,
        with the prior's predictive weights ``weights_`` (for the DP ``w_k ∝ N_k``; the
        probability of a new cluster is left out; see :meth:`score_samples` for the full
        posterior predictive density).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_clusters_)
        """
        check_is_fitted(self, "labels_")
        Xw = self._check_X(X)
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
            return logsumexp(np.stack(per_draw), axis=0) - math.log(len(per_draw))
        for st, a in self._predictive_stats or self._draw_stats():
            logw = np.append(*self._log_weights(fam.count(st), a))
            st = concatenate(st, fam.empty_stats(1))
            per_draw.append(logsumexp(fam.log_predictive(Xw, st) + logw[None, :], axis=1))
        return logsumexp(np.stack(per_draw), axis=0) - math.log(len(per_draw))

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
            if n_new:
                params = concatenate(params, fam.sample_prior(rng, n_new))
            return fam.sample_data(params, y, rng), y
        params = fam.sample_posterior(self._labels_stats, rng)
        if n_new:
            params = concatenate(params, fam.sample_prior(rng, n_new))
        return fam.sample_data(params, y, rng), y

    # ---------------------------------------------------------------- summary
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        fam = self.family
        if isinstance(fam, str) and fam == "multinomial" or getattr(fam, "name", "") == "multinomial":
            tags.input_tags.sparse = True
            tags.input_tags.positive_only = True
        return tags


# ----------------------------------------------------------------- checkpoints
def save_checkpoint(path, payload: dict) -> None:
    """Write a checkpoint atomically: arrays in an ``.npz`` file, everything else as JSON
    inside it, with a SHA-256 digest of the content (:mod:`dpclust.utils.safe_io`; no pickle)."""
    _safe_io.save(path, payload)


def load_checkpoint(path) -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`.  A file whose content does not
    match its digest, an older pickle checkpoint, or any other file is refused with a clear
    error; loading never runs code from the file."""
    path = Path(path)
    if path.is_file() and _starts_with(path, b"\x80"):  # pickle's protocol marker
        raise DataError(f"{path} is a checkpoint of an older dpclust (a pickle file, which "
                        "could run code when loaded, so it is no longer read): start the run "
                        "again with 'dpclust fit'")
    payload = _safe_io.load(path, what="checkpoint")
    if not isinstance(payload, dict) or payload.get("format") != _CHECKPOINT_FORMAT:
        raise DataError(f"{path} is not a dpclust checkpoint of format {_CHECKPOINT_FORMAT}")
    return payload


def _starts_with(path: Path, prefix: bytes) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(prefix)) == prefix


def checkpoint_iteration(payload: dict) -> int:
    """The iteration every chain of a loaded checkpoint has completed."""
    return min(p.snapshot.iteration for p in payload["progress"])


def checkpoint_seconds(payload: dict) -> float:
    """Sampling seconds of a loaded checkpoint's longest-running chain."""
    return max(p.snapshot.elapsed for p in payload["progress"])


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


def _progress_bar(enabled: bool, total: int, initial: int):
    if not enabled:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, desc="dpclust", unit="it", dynamic_ncols=True)


__all__ = ["DPMixture", "GammaPrior", "Trace", "save_checkpoint", "load_checkpoint",
           "data_fingerprint"]
