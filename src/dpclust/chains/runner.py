"""The chain runner: :class:`ChainEstimator`, what every MCMC estimator of dpclust shares.

It runs new chains or resumes checkpointed ones, one iteration of each in turn in this
process or in worker processes (:mod:`dpclust.chains.processes`), with the progress bar,
the callback and checkpoints (:mod:`dpclust.chains.checkpoint`); it keeps each chain's
record (:mod:`dpclust.chains.trace`) and summarises the chains into the point estimate,
the trace and the convergence verdict.  Estimators (:mod:`dpclust.estimators`) fill in the
model, the sampler and the starting state.

References
----------
Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and credible
    balls. Bayesian Analysis 13(2) (the point estimate ``labels_``).
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._version import __version__
from ..utils.checks import DataError, check_int, check_random_state
from ..partitions import as_loss, posterior_similarity
from ..priors import PartitionPrior, get_prior
from ..samplers.base import search_seconds
from ..samplers.choice import sampler_name
from ..samplers.registry import moves_clusters
from ..diagnostics import ESS_PER_CHAIN, RHAT_MAX, advice, convergence, judged
from .checkpoint import CHECKPOINT_FORMAT, load_checkpoint, save_checkpoint
from .length import AUTO_MAX_ITER, FIRST_LENGTH
from .result import MAX_SIMILARITY_SAMPLES as _MAX_SIMILARITY_SAMPLES
from .result import chain_result, draw_params as _draw_params
from .trace import (Progress, Snapshot, attach, cut_lineage, detach, records_trace,
                    reservoir_add, resolve_max_draws, size_summaries)


#: ``n_jobs=None``: the chains move to processes when the rest of a block would take longer
#: than this in this process (starting the processes costs a second or two)
PROCESSES_PAY_AFTER = 5.0
#: ``n_jobs=None``: seconds the chains run in this process before that choice is made
_PROBE_SECONDS = 1.0
#: the most a run that goes on until it converges grows at one extension
_MAX_GROWTH = 2.0
#: a run extended because the rule failed at length L is judged every L / this many
#: iterations on the way, and stops at the first that passes
_CHECKS_PER_LENGTH = 5
#: seconds between two updates of the progress bar's R-hat and ESS
_VERDICT_EVERY = 2.0
#: a run held to ``max_time`` advances in this fraction (1 / _TIME_STEPS) of a block between
#: two looks at the clock, and one cut by it keeps at least that much of its first block
_TIME_STEPS = 20


def _time_step(n_iter: int) -> int:
    """Iterations between two looks at the clock of a run held to ``max_time`` (at least
    one): ``n_iter`` / :data:`_TIME_STEPS`."""
    return max(1, n_iter // _TIME_STEPS)


def _outside_package() -> int:
    """The ``stacklevel`` of a warning that points at the caller's line outside dpclust
    (``fit`` reaches the verdict through a depth that differs between estimators)."""
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _chain_rngs(random_state, n_chains: int) -> list:
    """One generator per chain: ``random_state`` itself for one chain (as before chains
    existed), else independent streams spawned from its ``numpy.random.SeedSequence``."""
    rng = check_random_state(random_state)
    return [rng] if n_chains == 1 else list(rng.spawn(n_chains))


class ChainEstimator(BaseEstimator):
    """What every MCMC estimator of dpclust shares: the run with its trace, kept draws,
    progress bar and checkpoints, resume, and the point estimate of the partition.

    Subclasses provide ``_target`` (the model of the data given to ``fit``),
    ``_make_model``, ``_make_sampler``, ``_initial_state`` and ``_finish`` (which calls
    ``_summarise_chain``).
    """

    # ----------------------------------------------------------------- set-up
    def _settings(self):
        """Check the chain's settings; returns ``(n_iter, burn_in, thin)`` (``n_iter=None``:
        the first length of a run that goes on until it converges)."""
        n_iter = FIRST_LENGTH if self.n_iter is None else check_int(self.n_iter, "n_iter", 1)
        burn_in = n_iter // 2 if self.burn_in is None else check_int(self.burn_in, "burn_in", 0)
        if burn_in >= n_iter:
            raise ValueError(f"burn_in={burn_in} leaves no draws: it must be < n_iter={n_iter}")
        thin = check_int(self.thin, "thin", 1)
        if self.point_estimate != "auto":
            try:
                as_loss(self.point_estimate)
            except ValueError as err:
                raise ValueError(f"point_estimate: {err}") from None
        if not (isinstance(self.max_draws, str) and self.max_draws == "auto"):
            check_int(self.max_draws, "max_draws", 1)
        check_int(self.n_predictive_draws, "n_predictive_draws", 1)
        if self.checkpoint_every is not None:
            check_int(self.checkpoint_every, "checkpoint_every", 1)
        max_time = self._time_limit()
        if max_time is not None and not (isinstance(max_time, (int, float))
                                         and not isinstance(max_time, bool) and max_time >= 0):
            raise ValueError(f"max_time must be a number of seconds (0 or None: no limit), "
                             f"got {max_time!r}")
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
        self.sampler_ = sampler_name(sampler)
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
            snapshot = Snapshot(0, state, rng.bit_generator.state, 0.0, 0, (1, ()),
                                getattr(model, "hyper_start", ()))
            progs.append(Progress(snapshot, burn_in, thin,
                                  learned=tuple(getattr(model, "hyperpriors", ()))))
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
            For a run on a Dask cluster (``executor``): the cluster to go on with (the one of the
            original run is gone with it).
        n_iter : int, optional
            A new total number of iterations, to extend a run (burn-in and thinning stay
            those of the original run).
        """
        ckpt = load_checkpoint(path)
        progs = ckpt["progress"]
        est = cls._from_params(ckpt["params"])
        if n_iter is not None:
            est.n_iter = n_iter
        done = max(p.snapshot.iteration for p in progs)
        if est.n_iter is not None and check_int(est.n_iter, "n_iter", 1) < done:
            raise ValueError(f"the checkpoint already holds {done} iterations; n_iter="
                             f"{est.n_iter} would discard some (pass n_iter >= {done})")
        if not (est._until_converged() and est.burn_in is None):
            est.burn_in = progs[0].burn_in  # as resolved when the run started
        if progress is not None:
            est.progress = progress
        est.callback = callback
        est.checkpoint = str(path)
        if client is not None:
            est.executor = client
        n_iter_, _, _ = est._settings()
        if est.n_iter is None:  # where the run that goes on until it converges had got to
            n_iter_ = max(n_iter_, done, 2 * progs[0].burn_in)
        family_ = ckpt["family"]
        est._resumed(family_)
        prior = est._partition_prior().alpha_prior
        model = est._resume_model(X, family_, prior)
        if model.fingerprint() != ckpt["fingerprint"]:
            raise DataError("the data differ from those the checkpointed run was started on "
                            f"(checkpoint {path}): their fingerprints do not match")
        progs = [attach(model, p) for p in progs]
        est._recipe = (X, family_, prior)
        rngs = []
        for p in progs:
            rng = np.random.default_rng()
            rng.bit_generator.state = p.snapshot.rng_state
            rngs.append(rng)
        sampler = est._resumed_sampler(ckpt, model.n_samples, family_)
        est.sampler_ = sampler_name(sampler)
        est._run(model, sampler, rngs, progs, n_iter_,
                 fingerprint=ckpt["fingerprint"],
                 saved_at=min(p.snapshot.iteration for p in progs))
        return est

    def _resumed_sampler(self, ckpt, n_samples, family_):
        """The sampler a resumed run goes on with: the one the checkpointed run ran."""
        return self._make_sampler(n_samples, family_)

    def _resume_model(self, X, family_, prior):
        """The model of a resumed run: ``X`` validated by the checkpoint's family."""
        return self._make_model(family_, family_.validate(X), prior)

    def _lost(self, exc, model, progs, fingerprint, saved):
        """The error to raise instead of ``exc`` when a run whose data are not in this
        process (a Dask model: ``model.X`` is None) fails, after saving what can be saved
        (``saved[0]``: the iteration of the last checkpoint); None raises ``exc`` itself."""
        return None

    def _run(self, model, sampler, rngs, progs, n_iter, *, fingerprint=None, saved_at=None):
        """Advance the chains ``progs`` (with their generators ``rngs``) to ``n_iter``
        iterations, one iteration of each chain in turn (or in processes), with
        checkpoints, the callback and the progress bar; a run that goes on until it
        converges is then extended while the rule fails and its budget allows
        (:meth:`_longer`); then summarise the chains (``_finish``)."""
        if self.checkpoint is not None and fingerprint is None:
            fingerprint = model.fingerprint()
        C = len(progs)
        # pooled: max_draws
        capacity = -(-resolve_max_draws(self.max_draws, model.n_samples) // C)
        n_workers, auto = self._n_workers(model, C)
        bar = _progress_bar(self.progress, n_iter * C,
                            sum(p.snapshot.iteration for p in progs))
        shown = _Shown(self, progs, bar)
        workers = None
        max_iter = self._max_iter(n_iter)
        started, first = time.perf_counter(), min(p.snapshot.iteration for p in progs)
        deadline = self._deadline(started)
        low = _time_step(n_iter)  # the fewest draws a run cut by its deadline keeps
        saved = [saved_at]  # the iteration of the last checkpoint, kept through an error
        self._recovery = None  # the chains' last recovery point (a Dask model on actors)
        judged_at = None  # the length of the last verdict that failed
        try:
            if n_workers > 1 and not auto:
                workers = self._workers(progs, n_workers, capacity)
            while True:
                step = n_iter if deadline is None else _time_step(n_iter)
                if judged_at is not None:  # an extension: judged on the way as well
                    step = min(step, max(1, judged_at // _CHECKS_PER_LENGTH))
                # n_jobs=None: the chains run here for a second, a round at a time, then
                # move to processes if the rest of the block would take long here
                probe = ((time.perf_counter(), min(p.snapshot.iteration for p in progs))
                         if workers is None and auto else None)
                while (done := min(p.snapshot.iteration for p in progs)) < n_iter:
                    # at whole multiples of the step, wherever the chains start: the
                    # lengths judged, and so the length a run stops at, are the same from
                    # one run to the next, in this process or in processes
                    grid = step if probe is None else 1
                    target = min(n_iter, (done // grid + 1) * grid)
                    if workers is not None:
                        self._advance_workers(workers, model, progs, target, shown,
                                              fingerprint, saved)
                    elif self._advance_here(model, sampler, rngs, progs, target, capacity,
                                            shown, fingerprint, saved):
                        break  # the callback stopped the run
                    if probe is not None and time.perf_counter() - probe[0] >= _PROBE_SECONDS:
                        if self._processes_pay(probe, progs, n_iter):
                            workers = self._workers(progs, n_workers, capacity)
                        probe = None
                    if deadline is not None and self._cut(progs, workers, n_iter, deadline,
                                                          started, first, low):
                        break
                    if (judged_at is not None and target % step == 0
                            and self._passes_early(progs, workers)):
                        n_iter = min(p.snapshot.iteration for p in progs)
                        if bar is not None:
                            bar.total = n_iter * C
                            bar.refresh()
                        break
                done = min(p.snapshot.iteration for p in progs)
                if max_iter is None or done < n_iter or done >= max_iter:
                    break
                conv = self._progress_verdict(progs)
                shown.verdict(conv)
                judged_at = done
                seconds = (time.perf_counter() - started) / max(done - first, 1)
                longer = None if conv["converged"] else self._longer(
                    conv, done, max_iter, seconds, time.perf_counter() - started)
                if longer is None:
                    break
                n_iter = longer
                if self.burn_in is None:  # a burn-in left to the default stays half
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
            lost = None if model.X is not None else self._lost(exc, model, progs,
                                                               fingerprint, saved)
            if lost is None:
                raise
            raise lost from exc
        finally:
            self.__dict__.pop("_recovery", None)
            if workers is not None:
                workers.close()
            if bar is not None:
                bar.close()
        self.n_processes_ = 1 if workers is None else len(workers.workers)
        done = min(p.snapshot.iteration for p in progs)
        if self.checkpoint is not None and saved[0] != done:
            self._save(progs, model, fingerprint)
        self.__dict__.pop("_recipe", None)
        self._finish(model, [p.consistent() for p in progs])

    def _workers(self, progs, n_workers, capacity):
        from .processes import ChainWorkers

        return ChainWorkers(self._worker_copy(), self._recipe, progs, n_workers, capacity)

    @staticmethod
    def _processes_pay(probe, progs, n_iter) -> bool:
        """``n_jobs=None``: whether the chains, run here since ``probe`` (the time and the
        iteration they started from), would take longer than ``PROCESSES_PAY_AFTER``
        seconds to finish the block here (then they move to processes)."""
        t0, before = probe
        done = min(p.snapshot.iteration for p in progs)
        if done >= n_iter or done == before:
            return False
        per_round = (time.perf_counter() - t0) / (done - before)
        return per_round * (n_iter - done) > PROCESSES_PAY_AFTER

    def _time_limit(self):
        """``max_time``, with 0 read as None: no limit."""
        return getattr(self, "max_time", None) or None

    def _deadline(self, started: float) -> float | None:
        """When a run of automatic length (``n_iter=None``) stops, its first block of
        :data:`FIRST_LENGTH` iterations included: ``max_time`` after ``started`` (None: a
        run of fixed length, or no ``max_time``, is not cut)."""
        max_time = self._time_limit()
        if max_time is None or getattr(self, "n_iter", 0) is not None \
                or not self._until_converged():
            return None
        return started + float(max_time)

    def _cut(self, progs, workers, n_iter, deadline, started, first, low) -> bool:
        """Whether a run with a ``deadline`` (:meth:`_deadline`) stops now, short of
        ``n_iter``: past the deadline, once ``low`` draws are kept past the burn-in.  While
        the chains have not reached a burn-in left to the default and their pace says the
        run will be cut, the burn-in is brought down to half the run foreseen (never below
        the iteration reached, so no draw is lost); a run that will not be cut keeps its
        burn-in, draw for draw as without a deadline."""
        now = time.perf_counter()
        done = min(p.snapshot.iteration for p in progs)
        burn_in = progs[0].burn_in
        if self.burn_in is None and first < done < burn_in:
            pace = (now - started) / (done - first)
            foreseen = done + max(int((deadline - now) / pace), 0)
            if foreseen < n_iter and max(foreseen // 2, done) < burn_in:
                burn_in = max(foreseen // 2, done)
                for p in progs:
                    p.burn_in = burn_in
                if workers is not None:
                    workers.set_burn_in(burn_in)
        return now >= deadline and done >= max(first + 2 * low, burn_in + low)

    def _passes_early(self, progs, workers) -> bool:
        """Whether the rule passes on the chains as they stand, part of the way through an
        extension (the burn-in, when left to the default, half of the run so far): the
        run then stops there, within a fifth of the length at which it first passes,
        rather than at the end of an extension up to twice as long.  The chains are the
        same whatever length they are stopped at, so stopping early changes nothing
        else."""
        keep = [p.burn_in for p in progs]
        done = min(p.snapshot.iteration for p in progs)
        if self.burn_in is None:
            for p in progs:
                p.burn_in = done // 2
        if self._progress_verdict(progs)["converged"]:
            if self.burn_in is None and workers is not None:
                workers.set_burn_in(done // 2)
            return True
        for p, b in zip(progs, keep):
            p.burn_in = b
        return False

    def _longer(self, conv, done, max_iter, seconds_per_iteration, elapsed):
        """The next length of a run that has not converged after ``done`` iterations, or
        None to stop.

        Effective sample sizes grow in proportion to the kept draws, so the run is made as
        much longer as the worst ESS needs (with a fifth more for the noise of ESS), at
        least 1.5 times and at most twice (the ESS of a short run, which has seen few of
        the posterior's rarer states, understates what a longer one gets: projecting
        further overshoots); while an R-hat fails, as much longer as brings its excess
        over 1 under the rule's (with a fifth more), for chains that mix it falls about as
        one over the kept draws: 1.5 times at R-hat 1.0125, twice from 1.0167 (it used to
        be twice whatever the R-hat); then capped by ``max_iter``
        and by what the chains' pace so far fits into ``max_time``.  An extension of less
        than a quarter is not made (the kept draws, the second half of the run, would
        barely change)."""
        need = ESS_PER_CHAIN * conv["n_chains"]
        factor = 1.5
        for name in conv["failing"]:
            v = conv[name]
            ess = min(v["ess_bulk"], v["ess_tail"])
            if np.isfinite(ess) and ess > 0:
                factor = max(factor, 1.2 * need / ess)
            else:
                factor = _MAX_GROWTH
            rhat = v["rhat"]
            if not np.isfinite(rhat):
                factor = _MAX_GROWTH
            elif rhat >= RHAT_MAX:  # R-hat - 1 falls about as 1 / (kept draws)
                factor = max(factor, 1.2 * (rhat - 1.0) / (RHAT_MAX - 1.0))
        step = 50 if done >= 200 else 1  # round lengths
        longer = min(max_iter, -(-int(done * min(factor, _MAX_GROWTH)) // step) * step)
        max_time = self._time_limit()
        if max_time is not None:
            longer = min(longer, done + int((max_time - elapsed) / seconds_per_iteration))
        return longer if longer >= 1.25 * done else None

    def _advance_workers(self, workers, model, progs, n_iter, shown, fingerprint, saved):
        """The chains in the worker processes, to ``n_iter`` iterations, in blocks of
        ``checkpoint_every`` when checkpointing (``saved[0]``: the last one's iteration)."""
        every = self.checkpoint_every

        def tick(c, k, lj, record):
            progs[c].records.append(record)  # for the bar's R-hat and ESS, until the
            shown.tick(k, lj)                # block's chains come back

        while (done := min(p.snapshot.iteration for p in progs)) < n_iter:
            target = n_iter
            if self.checkpoint is not None and every is not None:
                target = min(n_iter, (done // every + 1) * every)
            workers.advance(target, tick)
            if self.checkpoint is not None and every is not None and target % every == 0:
                saved[0] = self._save(progs, model, fingerprint)

    def _until_converged(self) -> bool:
        """Whether the run goes on until it converges: ``n_iter=None``, or a ``max_iter``
        to go on to."""
        return getattr(self, "n_iter", 0) is None or getattr(self, "max_iter", None) is not None

    def _max_iter(self, n_iter: int) -> int | None:
        """The most iterations of a run that goes on until it converges (None: exactly
        ``n_iter``)."""
        if not self._until_converged():
            return None
        max_iter = getattr(self, "max_iter", None)
        if max_iter is None:
            return AUTO_MAX_ITER
        return max(check_int(max_iter, "max_iter", 1), n_iter)

    def _progress_verdict(self, progs, live: bool = False) -> dict:
        """The rule's verdict on the chains as they stand (:mod:`dpclust.diagnostics`)."""
        prior = self._partition_prior().alpha_prior
        return convergence(records_trace(progs, live=live), alpha_resampled=prior is not None)

    def _advance_here(self, model, sampler, rngs, progs, n_iter, capacity, shown, fingerprint,
                      saved):
        """The chains in this process, one iteration of each in turn (``saved[0]``: the
        iteration of the last checkpoint written), until ``n_iter`` iterations; returns
        whether the callback stopped the run."""
        every = self.checkpoint_every
        stop = False
        recovers = getattr(model, "recovers", False)
        while not stop:
            it = min(p.snapshot.iteration for p in progs)
            if it >= n_iter:
                break
            try:
                if recovers and self._recovery_due(model, it):
                    self._recovery = [detach(model, p.consistent()) for p in progs]
                for rng, prog in zip(rngs, progs):
                    if prog.snapshot.iteration != it:
                        continue  # ahead after an interrupted round
                    info = self._step_chain(model, sampler, rng, prog, capacity)
                    shown.tick(info.n_clusters, info.log_joint)
                    if (self.callback is not None
                            and self.callback(it, prog.snapshot.state, info) is False):
                        stop = True  # the other chains finish this iteration
                if self.checkpoint is not None and every is not None and (it + 1) % every == 0:
                    saved[0] = self._save(progs, model, fingerprint, cut=True)
            except Exception as exc:
                if not (recovers and model.state_lost(exc)):
                    raise
                self._roll_back(model, rngs, progs)
                stop = False
        return stop

    def _recovery_due(self, model, it: int) -> bool:
        """Whether the chains' state is to be gathered as a recovery point before
        iteration ``it`` (a Dask model whose workers hold the state: the first iteration
        of a run, then every ``model.recover_every`` iterations since the last point or
        checkpoint)."""
        points = getattr(self, "_recovery", None)
        return (points is None or points[0].snapshot.iteration > it
                or it - points[0].snapshot.iteration >= model.recover_every)

    def _roll_back(self, model, rngs, progs):
        """After a lost worker: hold the partitions again and put every chain back at the
        last recovery point, its random stream with it; the iterations since are run
        again, to the same draws."""
        model.rebuild()
        for rng, prog, point in zip(rngs, progs, self._recovery):
            prog.snapshot = attach(model, point).snapshot
            rng.bit_generator.state = prog.snapshot.rng_state

    def _n_workers(self, model, n_chains: int) -> tuple[int, bool]:
        """Processes for the chains, and whether they start only once the run proves long
        enough to pay for them (``n_jobs=None``).

        ``n_jobs``: -1 every core, at most one per chain; None one per chain up to the
        cores, when the program can start processes
        (:func:`~dpclust.chains.processes.can_start_processes`) and there is no callback;
        1 (a Dask cluster: its chains run one after another on it) otherwise."""
        from .processes import available_cores, can_start_processes

        n_jobs = getattr(self, "n_jobs", None)
        if n_chains == 1 or model.X is None:
            return 1, False
        if n_jobs is None:
            cores = available_cores()
            if cores == 1 or self.callback is not None or not can_start_processes():
                return 1, False
            return min(cores, n_chains), True
        if n_jobs == -1:
            n_jobs = available_cores()
        n_jobs = check_int(n_jobs, "n_jobs", 1)
        if n_jobs > 1 and self.callback is not None:
            raise ValueError("callback= runs in this process: use n_jobs=1 (or None) with "
                             "several chains and a callback")
        return min(n_jobs, n_chains), False

    def _storable_params(self) -> dict:
        """The parameters a checkpoint, a saved model or a chain worker's copy keeps: all
        but the ``callback``, with a Dask client (``executor``) kept as ``"dask"`` (the
        cluster is not part of the model: a resumed run is given its own)."""
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "callback"}
        if params.get("executor") is not None and not isinstance(params["executor"], str):
            params["executor"] = "dask"
        return params

    @classmethod
    def _from_params(cls, params: dict):
        """An estimator from stored parameters (:meth:`_storable_params`), those of files
        written before ``executor`` and ``max_iter`` replaced ``backend`` and
        ``until_converged`` included: the constructor maps those as it maps them from a
        caller, without the warning meant for a caller's code."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return cls(**params)

    def _worker_copy(self):
        """This estimator's settings for a chain worker (no callback, progress bar or
        checkpoint file there: the parent process keeps those)."""
        est = type(self)(**self._storable_params())
        est.progress = False
        est.checkpoint = None
        for name in self._model_state:  # what fit decided about the model
            if name in self.__dict__:
                est.__dict__[name] = self.__dict__[name]
        return est

    #: attributes that ``fit`` sets and the model depends on, which a chain worker's copy
    #: of the estimator (and a resumed one, from the checkpoint's family) must have too
    _model_state: tuple = ()

    def _resumed(self, family_):
        """Set up a resumed estimator from the checkpoint's family (nothing by default)."""

    def _step_chain(self, model, sampler, rng, prog: Progress, capacity: int):
        """One iteration of one chain, committed to ``prog`` in one assignment; returns the
        sampler's step information."""
        snap = prog.snapshot
        it = snap.iteration
        t0 = time.perf_counter()
        if snap.hyper:  # the step, then the learned hyperparameters given its partition
            state, info, hyper = model.step(sampler, rng, snap.state, snap.hyper)
        else:
            (state, info), hyper = sampler.step(rng, snap.state, model), ()
        del prog.records[it:]  # a record left by an interrupted iteration
        n_kept, reservoir = snap.n_kept, snap.reservoir
        if it >= prog.burn_in and (it - prog.burn_in) % prog.thin == 0:
            labels = model.keep_labels(state.labels, info.n_clusters)
            del prog.kept[n_kept:], prog.all_labels[n_kept:]
            prog.kept.append((it, float(state.alpha)))
            if self.store_labels:
                prog.all_labels.append(model.as_array(labels).astype(np.int32))
            reservoir = reservoir_add(
                reservoir, n_kept, it, labels, capacity,
                None if getattr(model.family, "collapsible", True) else _draw_params(state))
            n_kept += 1
        entropy, large = size_summaries(model, state)
        elapsed = snap.elapsed + (time.perf_counter() - t0)
        prog.records.append((info.log_joint, info.n_clusters, info.alpha,
                             info.n_accepted_splits, info.n_accepted_merges, elapsed,
                             entropy, large, getattr(info, "log_likelihood", np.nan))
                            + hyper)
        # the commit: one assignment
        prog.snapshot = Snapshot(it + 1, state, rng.bit_generator.state, elapsed, n_kept,
                                  reservoir, hyper)
        return info

    def _save(self, progs, model, fingerprint, cut: bool = False) -> int:
        """Write the checkpoint (every chain's last complete iteration); returns the
        iteration all of them hold.  ``cut``: then rebuild the chains' state and kept draws
        on a Dask cluster from what was written (:func:`~.trace.cut_lineage`), so that the
        scheduler forgets the tasks before the checkpoint."""
        consistent = [detach(model, p.consistent()) for p in progs]
        save_checkpoint(self.checkpoint, {
            "format": CHECKPOINT_FORMAT, "version": __version__,
            "params": self._storable_params(),
            "sampler": getattr(self, "sampler_", None),  # what "auto" chose, for resume
            "family": model.family, "fingerprint": fingerprint, "progress": consistent,
        })
        if cut:
            for p, c in zip(progs, consistent):
                p.snapshot = cut_lineage(model, p, c)
            if getattr(model, "recovers", False):
                self._recovery = consistent
        return min(p.snapshot.iteration for p in consistent)

    def _summarise_chain(self, model, progs):
        """What any run gives (:func:`~dpclust.chains.result.chain_result`: the point
        estimate, the trace, alpha, the draws kept for prediction and the data), read onto
        the estimator in one place, then the convergence verdict."""
        # "auto": the model's loss (the family's: VI, VI with a = 0.5 for rankings; VI
        # with a = 0.75 for rows repeated as copies)
        self.loss_ = str(as_loss(self.point_estimate if self.point_estimate != "auto"
                                 else model.default_loss))
        result = chain_result(model, progs, point_estimate=self.loss_,
                              store_labels=self.store_labels,
                              n_predictive_draws=self.n_predictive_draws,
                              search_seconds=search_seconds(self._time_limit()))
        for name, value in result.attributes().items():
            setattr(self, name, value)
        self._estimate_groups = model.estimate_groups  # fused clusters keep them too
        self._check_convergence()

    def _check_convergence(self):
        """``convergence_`` from the trace; a ``UserWarning`` naming what fails when the
        run has not converged (:mod:`dpclust.diagnostics` states the rule)."""
        prior = self._partition_prior().alpha_prior
        self.convergence_ = convergence(self.trace_, alpha_resampled=prior is not None)
        if not self.convergence_["converged"]:
            family = getattr(self, "family_", None)
            coarsened = getattr(self, "coarsening_", None) is not None
            rankings = getattr(family, "data_kind", None) == "rankings" and not coarsened
            splits = moves_clusters(getattr(self, "sampler_", ""))
            warnings.warn(f"{type(self).__name__}: "
                          + advice(self.convergence_, rankings=rankings, coarsened=coarsened,
                                   moves_clusters=splits),
                          UserWarning, stacklevel=_outside_package())

    def to_arviz(self):
        """The chains as an ArviZ ``InferenceData``, its groups as ArviZ defines them.

        ``posterior`` holds the quantities of the sampled state, with dimensions (chain,
        draw) over the kept iterations: ``n_clusters``, ``n_large_clusters`` (clusters with
        at least 1 % of the points), ``size_entropy``, ``alpha`` and each learned
        hyperparameter of the family by its name (e.g. ``concentration``), and ``labels``
        (chain, draw, point) when the run had ``store_labels=True``.  ``sample_stats``
        holds the statistics of each draw: ``lp``, the log density of the sampler's state
        (``trace_.log_joint``), ``total_log_likelihood``, the data's log-likelihood under
        the state summed over the points (``trace_.log_likelihood``, the quantity
        ``convergence_`` calls ``log_likelihood``), the cumulative ``seconds`` and the
        accepted splits and merges.  There is no ``log_likelihood`` group: ArviZ keeps
        pointwise values there (for ``arviz.loo``), which the chains do not record; use
        :func:`~dpclust.compare_models` for held-out predictive comparisons.

        ``arviz.rhat``, ``arviz.ess``, ``arviz.summary`` and ``arviz.plot_trace`` work on
        it (on ``idata.sample_stats`` for ``lp`` and ``total_log_likelihood``), and
        ``to_netcdf`` writes it.  Its attributes name the estimator and the prior on
        partitions (``"dp"``, ``"pitman-yor"``, ...).

        Returns
        -------
        arviz.InferenceData
        """
        check_is_fitted(self, "trace_")
        from ..diagnostics import arviz

        tr = self.trace_
        kept = tr.kept

        def chains(a):
            return np.asarray(a)[:, kept]

        posterior = {name: chains(getattr(tr, name))
                     for name in ("n_clusters", "n_large_clusters", "size_entropy", "alpha")}
        for name, series in (tr.hyper or {}).items():  # the learned hyperparameters
            posterior[name] = chains(series)
        dims = {}
        if tr.labels is not None:
            posterior["labels"] = np.asarray(tr.labels)
            dims["labels"] = ["point"]
        stats = {"lp": chains(tr.log_joint),
                 "total_log_likelihood": chains(tr.log_likelihood),
                 "seconds": chains(tr.seconds),
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
        if self._pool_draws is None:  # the model's rows: with weights, the rows' copies
            model_labels = getattr(self, "_model_labels", None)
            n = len(self.labels_ if model_labels is None else model_labels)
            raise ValueError(
                f"the co-clustering matrix of the model's {n:,} rows would need "
                f"{n ** 2 * 8 / 2**30:.1f} GiB; it is kept only for up to "
                f"{_MAX_SIMILARITY_SAMPLES:,} rows")
        return posterior_similarity(self._pool_draws, max_samples=max_samples)



def _progress_bar(enabled: bool, total: int, initial: int):
    if not enabled:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, desc="dpclust", unit="it", dynamic_ncols=True)


class _Shown:
    """What the progress bar shows: after every iteration the last chain's number of
    clusters and log joint, and every ``_VERDICT_EVERY`` seconds the rule's worst R-hat
    and smallest ESS over the kept iterations so far (against the ESS the rule needs)."""

    def __init__(self, est, progs, bar):
        self.est, self.progs, self.bar = est, progs, bar
        self.last = time.perf_counter()
        self.judged = {}

    def tick(self, k, log_joint):
        if self.bar is None:
            return
        self.bar.update(1)
        now = time.perf_counter()
        if now - self.last >= _VERDICT_EVERY:
            self.last = now
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.verdict(self.est._progress_verdict(self.progs, live=True))
        self.bar.set_postfix({"K": int(k), "log_joint": f"{log_joint:.1f}", **self.judged},
                             refresh=False)

    def verdict(self, conv):
        """Show the verdict ``conv`` (nothing before the kept draws can be judged)."""
        names = judged(conv)
        rhats = [conv[q]["rhat"] for q in names]
        ess = [min(conv[q]["ess_bulk"], conv[q]["ess_tail"]) for q in names]
        if self.bar is None or not names or not np.isfinite(rhats + ess).all():
            return
        need = ESS_PER_CHAIN * conv["n_chains"]
        self.judged = {"R-hat": f"{max(rhats):.3f}", "ESS": f"{min(ess):.0f}/{need}"}

