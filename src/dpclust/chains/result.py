"""What a run of chains gives, made from the chains' progress by one pure function.

:func:`chain_result` pools the kept draws of every chain and returns a :class:`ChainResult`:
the point estimate of the partition, the trace, the posterior means of alpha and of the
learned hyperparameters, the per-point certainty and per-cluster presence, and the draws
kept for prediction.  The estimator reads it in one place
(:meth:`~dpclust.chains.ChainEstimator._summarise_chain`), under the attribute names a
fitted estimator has always had (so models saved before load unchanged).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..families.base import take
from ..partitions import cluster_presence, point_certainty, summarise_components
from ..samplers.base import SEARCH_SECONDS
from .trace import RECORD_WIDTH, Trace, records_array

#: above this many points the draws for the n x n co-clustering matrix are not kept
MAX_SIMILARITY_SAMPLES = 10_000


def draw_params(state):
    """The cluster parameters a kept draw holds: those of its clusters in label order
    (``kept_params``, for samplers whose state holds more components than the labels use),
    else the state's ``params`` (None for collapsed samplers)."""
    kept = getattr(state, "kept_params", None)
    return kept if kept is not None else getattr(state, "params", None)


@dataclass(frozen=True)
class ChainResult:
    """A run's result; each field is the fitted estimator's attribute of the same name
    (``labels_``, ...), the private ones with a leading underscore (``_pool_draws``, ...)."""

    labels_: np.ndarray
    expected_loss_: float
    n_clusters_: int
    credible_ball_: Any
    components_: Any
    n_iter_: int
    alpha_: float
    hyperparameters_: dict
    log_joint_: float
    best_log_joint_: float
    trace_: Trace
    certainty_: np.ndarray | None
    cluster_presence_: np.ndarray | None
    labels_params: Any
    chosen_draw: Any
    pool_draws: np.ndarray | None
    pool_chains: np.ndarray
    predictive_params: list
    predictive_hyper: list
    predictive_chains: np.ndarray
    predictive_draws: list
    predictive_stats: list | None
    X_fit: Any
    n_fit: int

    def attributes(self) -> dict:
        """``{attribute name: value}`` as the estimator holds them (the private fields with
        a leading underscore)."""
        return {(f.name if f.name.endswith("_") else "_" + f.name): getattr(self, f.name)
                for f in fields(self)}


def _pool(model, progs):
    """The kept draws of every chain, pooled: ``(draws, alpha, params, chain, hyper)`` of
    each (a chain stopped during burn-in gives its last state)."""
    draws, pool_alpha, pool_params, pool_chains, pool_hyper = [], [], [], [], []
    for c, prog in enumerate(progs):
        snap = prog.snapshot
        _, held = snap.reservoir
        pool_chains += [c] * max(len(held), 1)
        if held:
            alpha_of = dict(prog.kept)
            draws += [d[2] for d in held]
            pool_alpha += [alpha_of[d[1]] for d in held]
            pool_params += [d[3] for d in held]
            pool_hyper += [tuple(prog.records[d[1]][RECORD_WIDTH:]) for d in held]
        else:  # stopped during burn-in: the last state is the only draw
            # (the loop has run at least once: its record gives the number of clusters)
            draws.append(model.keep_labels(snap.state.labels, int(prog.records[-1][1])))
            pool_alpha.append(float(snap.state.alpha))
            pool_params.append(draw_params(snap.state))
            pool_hyper.append(snap.hyper)
    return draws, pool_alpha, pool_params, pool_chains, pool_hyper


def _trace(progs, records, n_kept: int, store_labels: bool) -> Trace:
    """The trace of every chain, each array with a leading chain axis."""
    return Trace(
        log_joint=records[:, :, 0], n_clusters=records[:, :, 1].astype(np.int64),
        alpha=records[:, :, 2], seconds=records[:, :, 5],
        n_accepted_splits=records[:, :, 3].astype(np.int64),
        n_accepted_merges=records[:, :, 4].astype(np.int64),
        kept=np.array([it for it, _ in progs[0].kept[:n_kept]], dtype=np.int64),
        labels=(np.array([p.all_labels[:n_kept] for p in progs])
                if store_labels else None),
        size_entropy=records[:, :, 6],
        n_large_clusters=records[:, :, 7].astype(np.int64),
        log_likelihood=records[:, :, 8],
        hyper={name: records[:, :, RECORD_WIDTH + j]
               for j, name in enumerate(progs[0].learned)})


#: collapsed samplers: at most this many kept draws get parameters drawn for the summary of
#: the components, and at most this many bytes of them are held
MAX_COMPONENT_DRAWS = 50
MAX_COMPONENT_BYTES = 200 * 1024**2


def _components(model, draws, pool_params, labels):
    """The components matched to the clusters of ``labels`` across kept draws
    (:func:`dpclust.partitions.summarise_components`): the draws' own parameters where the
    sampler kept them; for a collapsed sampler, parameters drawn from each cluster's
    conditional posterior given the draw's partition (with the partition a posterior
    draw, a draw from the joint posterior), for up to :data:`MAX_COMPONENT_DRAWS` evenly
    spaced draws.  None where the family cannot draw them or they would not fit in memory."""
    if pool_params and pool_params[0] is not None:
        return summarise_components((model.as_array(d) for d in draws), pool_params, labels)
    fam = model.family
    idx = np.unique(np.linspace(0, len(draws) - 1, min(len(draws), MAX_COMPONENT_DRAWS))
                    .round().astype(int))
    rng = np.random.default_rng(0)
    zs, params, held = [], [], 0
    for j in idx:
        z = np.asarray(model.as_array(draws[j]), dtype=np.int64)
        try:
            theta = fam.sample_posterior(model.cluster_stats(draws[j], int(z.max()) + 1), rng)
        except (NotImplementedError, AttributeError):  # a family without the draw
            return None
        except Exception as err:  # noqa: BLE001  (a summary must not cost the fit)
            warnings.warn(f"the components were not summarised: {err}", UserWarning,
                          stacklevel=2)
            return None
        held += sum(np.asarray(f).nbytes for f in theta)
        if held > MAX_COMPONENT_BYTES:
            break
        zs.append(z)
        params.append(theta)
    return summarise_components(zs, params, labels) if zs else None


def _matched_params(labels, draw, params):
    """The components of ``params`` (a draw's, in its label order) matched to the clusters
    of ``labels``: for each, the draw's component holding most of its points."""
    if params is None:
        return None
    draw = np.asarray(draw, dtype=np.int64)
    K, J = int(labels.max()) + 1, int(draw.max()) + 1
    table = np.bincount(labels * J + draw, minlength=K * J).reshape(K, J)
    return take(params, table.argmax(axis=1))


def chain_result(model, progs, *, point_estimate: str, store_labels: bool,
                 n_predictive_draws: int, search_seconds: float = SEARCH_SECONDS) -> ChainResult:
    """The result of chains ``progs`` (their :class:`~dpclust.chains.trace.Progress`) on
    ``model``: the kept draws of all chains pooled; the point estimate under the loss
    ``point_estimate``, searched for at most ``search_seconds``; ``n_predictive_draws``
    evenly spaced draws kept for the posterior predictive density."""
    X = model.X
    progs = [p.after_burn_in() for p in progs]
    draws, pool_alpha, pool_params, pool_chains, pool_hyper = _pool(model, progs)
    estimate = model.point_estimate(draws, point_estimate, search_seconds)
    labels, nearest = estimate.labels.astype(np.int64), estimate.nearest
    n_clusters = int(labels.max()) + 1
    n_done = min(p.snapshot.iteration for p in progs)
    kept_alpha = [a for p in progs for _, a in p.kept]
    # the learned hyperparameters' posterior means over the kept iterations
    hyper = {name: float(np.mean([p.records[it][RECORD_WIDTH + j] for p in progs
                                  for it, _ in p.kept] or [h[j] for h in pool_hyper]))
             for j, name in enumerate(progs[0].learned)}
    n = model.n_samples
    records = records_array(progs, n_done)
    n_kept = min(len(p.kept) for p in progs)
    # the draws behind the co-clustering matrix, where one is feasible (n x n memory)
    local = X is not None
    # a few evenly spaced draws for the posterior predictive density; their statistics
    # are computed from the training data when scoring, one draw at a time (on a Dask
    # cluster, where the training data are not at hand, now, on the workers)
    m = min(n_predictive_draws, len(draws))
    idx = np.unique(np.linspace(0, len(draws) - 1, m).round().astype(int))
    # the chain of each pooled draw (in order of iteration within a chain), for
    # quantities of the draws judged chain by chain (fused clusters)
    pool_chains = np.asarray(pool_chains, dtype=np.int64)
    return ChainResult(
        labels_=labels, expected_loss_=float(estimate.expected_loss), n_clusters_=n_clusters,
        credible_ball_=estimate.credible_ball,
        components_=_components(model, draws, pool_params, labels) if local else None,
        n_iter_=n_done, alpha_=float(np.mean(kept_alpha or pool_alpha)),
        hyperparameters_=hyper, log_joint_=float(records[:, -1, 0].max()),
        best_log_joint_=float(records[:, :, 0].max()),
        trace_=_trace(progs, records, n_kept, store_labels),
        certainty_=(point_certainty((model.as_array(d) for d in draws), labels)
                    if local else None),
        cluster_presence_=(cluster_presence((model.as_array(d) for d in draws), labels)
                           if local else None),
        # instantiated samplers: each cluster's parameters are those of the component that
        # holds most of its points in the kept draw nearest to the estimate
        labels_params=_matched_params(labels, model.as_array(draws[nearest]),
                                      pool_params[nearest]),
        chosen_draw=model.hold_labels(labels, n_clusters),
        pool_draws=(np.array(draws) if local and n <= MAX_SIMILARITY_SAMPLES else None),
        pool_chains=pool_chains,
        predictive_params=[pool_params[j] for j in idx],
        predictive_hyper=[dict(zip(progs[0].learned, pool_hyper[j])) for j in idx],
        predictive_chains=pool_chains[idx],
        predictive_draws=([(draws[j], pool_alpha[j]) for j in idx] if local else []),
        predictive_stats=(None if local else
                          [(model.cluster_stats(draws[j], draws[j].n_clusters), pool_alpha[j])
                           for j in idx]),
        X_fit=X, n_fit=n)
