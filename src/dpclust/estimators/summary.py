"""The run summary (``summary.json``): what a fitted estimator says about its run.

:func:`run_summary` builds it from the fitted :class:`~dpclust.DPMixture` or
:class:`~dpclust.DDCRPMixture` and from what only the caller knows (where the data came
from, the command line, file names).  The report (:mod:`dpclust.report`) reads it; its
layout (keys and nesting) is the format of ``summary.json``.  What the family adds (its
hyperparameters, the ``cluster_params`` block and a block of its own) comes from the family
itself (:meth:`~dpclust.families.ConjugateFamily.describe_clusters`,
:meth:`~dpclust.families.ConjugateFamily.describe_fit`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..families.base import CLUSTER_PARAMS_FILE
from ..tables import TableData

__all__ = ["run_summary", "alpha_setting", "chains_of", "coarsening_summary", "learned_summary",
           "fused_summary", "table_summary"]

#: the raw-by-fused table is left out of the summary beyond this many cells, and the
#: matrix of Hellinger distances between fused clusters beyond this many fused clusters
MAX_CROSSTAB_CELLS = 2500
MAX_HELLINGER_MATRIX = 20


def run_summary(estimator, *, data: dict, total_seconds: float, version: str, truth=None,
                warnings=(), feature_names=None, alpha=None, command_line=None,
                resumed_from=None, resume_command_line=None, positions=None, distances=None,
                dask=None, out_dir=None, fused_skipped=None) -> dict:
    """The summary of a fitted estimator's run, as ``summary.json`` holds it.

    Parameters
    ----------
    estimator : DPMixture or DDCRPMixture
        Fitted (or resumed) estimator.
    data : dict
        What the summary says about the data (``source``, ``format``, ``n_samples``, ...);
        copied as the ``data`` block.
    total_seconds : float
        Wall-clock time of the whole run.
    version : str
        The dpclust version that ran.
    truth : array-like of shape (n_samples,), optional
        Known labels: the summary adds NMI and ARI.
    warnings : sequence of str
        What the caller warned about; the summary's own warnings follow.
    feature_names : list of str, optional
        Names of the data's columns (a vocabulary), for the family's cluster description.
    alpha : str or float, optional
        The concentration as given (``"1.0"``, ``"gamma:1,1"``); default: the estimator's.
    command_line, resume_command_line : str, optional
        The command that started (resumed) the run.
    resumed_from : int, optional
        The iteration the run was resumed from.
    positions, distances : str or int, optional
        The ddCRP's positions column and distances file, as given.
    dask : dict, optional
        ``{"scheduler": ..., "workers": ...}`` of a run on a Dask cluster.
    out_dir : path, optional
        Where cluster parameters too large for the summary go
        (:data:`~dpclust.families.base.CLUSTER_PARAMS_FILE`).
    fused_skipped : str, optional
        Why the caller did not fuse the clusters (:func:`fused_summary`).

    Returns
    -------
    summary : dict
        JSON-able (NaN and infinities aside, which the writer turns into null).
    """
    from ..metrics import ari, nmi

    labels = model_labels(estimator)  # sizes count the model's rows (a row's copies)
    alpha = _alpha_text(estimator) if alpha is None else alpha
    trace = estimator.trace_
    n_iter = int(estimator.n_iter_)
    sizes = np.bincount(labels, minlength=int(estimator.n_clusters_))
    log_joint = chains_of(trace.log_joint).astype(float)
    best_chain, best_at = np.unravel_index(int(np.argmax(log_joint)), log_joint.shape)
    settings = _settings(estimator, data["n_samples"], alpha=alpha, positions=positions,
                         distances=distances)
    settings.update(_run_settings(estimator, command_line=command_line,
                                  resumed_from=resumed_from,
                                  resume_command_line=resume_command_line))
    summary = {
        "dpclust_version": version,
        "settings": settings,
        "data": dict(data),
        "timings": _timings(trace, n_iter, data["n_samples"], total_seconds),
        "n_clusters": int(estimator.n_clusters_),
        "cluster_sizes": sizes.tolist(),
        "cluster_params": _cluster_params(estimator, feature_names, out_dir),
        "log_joint": {"final": float(log_joint[:, -1].max()), "best": float(log_joint.max()),
                      "best_iteration": int(best_at),
                      **({"best_chain": int(best_chain)} if log_joint.shape[0] > 1 else {})},
        "n_clusters_posterior": _k_posterior(trace),
        "point_estimate": _point_estimate(estimator),
        "convergence": _convergence_summary(estimator.convergence_),
    }
    summary.update(_weights_and_certainty(estimator, data.get("weights_column"), len(labels)))
    summary.update(_uncertainty(estimator))
    if _is_ddcrp(estimator):
        summary["ddcrp"] = _ddcrp_summary(estimator, positions, distances)
    n = int(sizes.sum())
    own = estimator.family_.describe_fit(estimator.cluster_params_, sizes,
                                         sampler=_sampler_name(estimator, n))
    if own is not None:
        if "posterior" in own:  # exactness is the sampler's declaration
            own["exact"] = _sampler_exact(estimator, n)
        summary[estimator.family_.name] = own
    table = table_summary(estimator)
    if table is not None:
        summary["table"] = table
    blocs = _blocs(estimator, labels)
    if blocs is not None:
        summary["blocs"] = blocs
    profiles = _profiles(estimator, labels)
    if profiles is not None:
        summary["profiles"] = profiles
    if dask is not None:
        summary["dask"] = _dask_summary(estimator, dask)
    prior = getattr(estimator, "prior_", None)
    if prior is not None and not prior.is_dirichlet_process:
        summary["prior"] = prior.describe()
    elif isinstance(alpha_setting(alpha), float):
        summary["alpha"] = float(estimator.alpha_)
    else:
        summary["alpha_posterior_mean"] = float(estimator.alpha_)
    learned = learned_summary(estimator)
    if learned:
        summary["learned"] = learned
    coarsening = coarsening_summary(estimator)
    if coarsening is not None:
        summary["coarsening"] = coarsening
    fused = fused_summary(estimator, skipped=fused_skipped)
    if fused is not None:
        summary["fused"] = fused
    if truth is not None:
        rows = np.asarray(estimator.labels_, dtype=np.int64)  # one per row, as the truth
        summary["metrics"] = {"nmi": float(nmi(truth, rows)), "ari": float(ari(truth, rows))}
    warnings = list(warnings) + _warnings(estimator, positions)
    if warnings:
        summary["warnings"] = warnings
    return summary


def _weights_and_certainty(estimator, column, n_model_rows: int) -> dict:
    """The ``weights`` block (:func:`weights_summary`) and the ``certainty`` block, those
    that apply."""
    out = {}
    weights = weights_summary(estimator, column, n_model_rows)
    if weights is not None:
        out["weights"] = weights
    certainty = getattr(estimator, "certainty_", None)
    if certainty is not None:
        out["certainty"] = _certainty(certainty)
    return out


def weights_summary(estimator, column=None, n_model_rows: int = 0) -> dict | None:
    """How the rows were weighted (None without weights): ``mode`` (``"repeat"``: a row
    counted as its weight's number of rows; ``"power"``: its likelihood raised to it),
    ``column`` (the weights' column: the one given, or a frequency table's counts,
    :mod:`dpclust.tables.frequency`), ``counted`` (whether the table's counts were read
    so without being asked) and ``n_model_rows`` (the rows the model holds)."""
    mode = getattr(estimator, "sample_weight_mode_", None)
    if mode is None:
        return None
    counted = getattr(estimator, "_counted", None)
    return {"mode": mode, "column": column if column is not None else counted,
            "counted": counted is not None, "n_model_rows": int(n_model_rows)}


def model_labels(estimator) -> np.ndarray:
    """The point estimate over the rows the model was fitted on: with sample weights
    (:mod:`dpclust.estimators.weights`) one label per copy of a row (rows of weight 0
    left out), the rows of ``_X_fit``; else ``labels_``."""
    labels = getattr(estimator, "_model_labels", None)
    return np.asarray(estimator.labels_ if labels is None else labels, dtype=np.int64)


def table_summary(estimator) -> dict | None:
    """How a table family read the table (None for other families): the ``table`` block.

    ``columns``: one row per column modelled, in the table's order, as the family's
    ``describe()`` gives it (``column``, ``kind``, ``levels``: the number of levels of a
    yes/no or category column, ``why``: how the kind was chosen); ``dropped``: ``[name,
    why]`` per column left out; ``rules``: each cleaning rule applied with the number of
    cells it changed (those of :func:`dpclust.tables.infer_schema`; the command line puts
    those of the file's reading first).
    """
    family = estimator.family_
    schema = getattr(family, "schema_", None)
    if schema is None:
        return None
    modelled = set(schema.names)
    return {"columns": [row for row in family.describe() if row["column"] in modelled],
            "dropped": [[name, why] for name, why in schema.dropped],
            "rules": dict(schema.rules)}


def _blocs(estimator, labels):
    """The blocs of a fit to rankings, read from its ballots
    (:func:`dpclust.rankings.blocs.describe_blocs`); None for other data, or when the
    training data are not at hand."""
    X = getattr(estimator, "_X_fit", None)
    if estimator.family_.data_kind != "rankings" or X is None:
        return None
    from ..rankings.blocs import describe_blocs

    return describe_blocs(X, labels, presence=getattr(estimator, "cluster_presence_", None))


def _profiles(estimator, labels):
    """Per cluster of the point estimate and column of a table, what its rows hold
    (:func:`dpclust.tables.profiles.column_profiles`, bounded by
    :func:`~dpclust.tables.profiles.as_summary`); None for other data, or when the
    training data are not at hand."""
    X = getattr(estimator, "_X_fit", None)
    if not isinstance(X, TableData):
        return None
    from ..tables.profiles import as_summary, column_profiles

    return as_summary(column_profiles(X, labels, int(estimator.n_clusters_)))


def _uncertainty(estimator) -> dict:
    """Each cluster's presence in the draws and its component's weight with an interval
    (the relabelled components), where the fit has them."""
    out = {}
    components = getattr(estimator, "components_", None)
    if components is not None:
        out["components"] = {
            "level": components.level,
            "weight": [round(float(w), 5) for w in components.weight],
            "weight_interval": [[round(float(a), 5), round(float(b), 5)] for a, b in
                                zip(components.weight_lower, components.weight_upper)],
            "matched": [round(float(m), 4) for m in components.matched]}
    presence = getattr(estimator, "cluster_presence_", None)
    if presence is not None:
        out["cluster_presence"] = [round(float(p), 4) for p in presence]
    return out


def _point_estimate(estimator) -> dict:
    """The loss the partition minimises, its expected value and the credible ball around
    it (without the bounds' labels)."""
    out = {"loss": str(getattr(estimator, "loss_", estimator.point_estimate)),
           "expected_loss": float(estimator.expected_loss_)}
    ball = getattr(estimator, "credible_ball_", None)
    if ball is not None:
        out["credible_ball"] = ball.as_dict()
    return out


def _certainty(certainty: np.ndarray) -> dict:
    """How sure the point estimate is of its points (their posterior probability of lying
    in their cluster's core): the mean, and how many fall below 0.9 and 0.5 (rows of
    sample weight 0, NaN, left out)."""
    certainty = np.asarray(certainty, dtype=np.float64)
    certainty = certainty[~np.isnan(certainty)]
    return {"mean": float(np.mean(certainty)),
            "below_0.9": int((certainty < 0.9).sum()),
            "share_below_0.9": float(np.mean(certainty < 0.9)),
            "below_0.5": int((certainty < 0.5).sum())}


def _is_ddcrp(estimator) -> bool:
    """Whether the estimator is a distance dependent CRP mixture (it has customer links)."""
    return hasattr(estimator, "links_")


def _settings(estimator, n_samples: int, *, alpha, positions, distances) -> dict:
    """The model's settings: family, sampler, alpha, the ddCRP's decay and distances, the
    chain's length and start, and the family's hyperparameters."""
    trace = estimator.trace_
    n_iter = int(estimator.n_iter_)
    # the burn-in the run ended with (a run until converged moves it to half its length)
    burn_in = int(trace.kept[0]) if len(trace.kept) else estimator.burn_in
    family = estimator.family_
    if _is_ddcrp(estimator):
        settings = {"model": "ddcrp", "family": family.name,
                    "sampler": "customer-assignment Gibbs",
                    "alpha": alpha_setting(alpha), "decay": estimator.decay,
                    "sequential": estimator.sequential}
        if positions is not None:
            settings["positions"] = positions
        if distances is not None:
            settings["distances"] = distances
        settings.update({"n_iter": n_iter, "burn_in": burn_in, "thin": estimator.thin,
                         "seed": estimator.random_state,
                         "point_estimate": estimator.point_estimate})
    else:
        sampler = estimator.sampler
        settings = {
            "family": family.name,
            "sampler": (sampler if sampler != "auto"
                        else f"auto ({_sampler_name(estimator, n_samples)})"),
            "sampler_exact": _sampler_exact(estimator, n_samples),
            **_prior_settings(estimator, alpha),
            **({"coarsening": getattr(estimator, "coarsening", None)}
               if getattr(estimator, "coarsening", None) is not None else {}),
            "n_iter": n_iter,
            "burn_in": burn_in, "thin": estimator.thin, "seed": estimator.random_state,
            "init_clusters": estimator.init_clusters, "init": estimator.init,
            "point_estimate": estimator.point_estimate,
        }
    settings.update(family.settings())
    return settings


def coarsening_summary(estimator) -> dict | None:
    """Which posterior the run shows: under ``coarsening``, ``alpha_c``, the power
    ``zeta = alpha_c / (alpha_c + N)``, the misfit it tolerates (the expected relative
    entropy between the data's distribution and the model's, ``1 / alpha_c`` nats per
    point under the coarsening prior ``Exp(alpha_c)``) and, under ``"auto"``, the
    calibration grid; None for the exact posterior."""
    alpha_c = getattr(estimator, "coarsening_", None)
    if alpha_c is None:
        return None
    n = int(getattr(estimator, "_n_fit", 0) or len(estimator.labels_))
    given = getattr(estimator, "coarsening", None)
    out = {"posterior": "coarsened", "alpha_c": float(alpha_c),
           "zeta": float(alpha_c / (alpha_c + n)),
           "tolerated_misfit_nats_per_point": float(1.0 / alpha_c),
           "chosen_by": ("elbow" if given == "auto" else "user" if given is not None
                         else "family default")}
    calibration = getattr(estimator, "calibration_", None)
    if calibration is not None:
        out["calibration"] = calibration.as_dict()
    return out


def fused_summary(estimator, skipped: str | None = None) -> dict | None:
    """The fused clusters (FOLD, :meth:`~dpclust.DPMixture.fuse`) beside the raw partition.

    ``n_clusters``, ``sizes``, ``omega``; ``raw_to_fused`` (the fused cluster of each raw
    cluster's points, the one most of them are in) and ``crosstab`` (points of raw cluster
    ``k`` in fused cluster ``f``; left out beyond :data:`MAX_CROSSTAB_CELLS` cells); the
    mean Hellinger distance between points' components (posterior mean over the draws)
    within and between fused clusters (``hellinger``: ``within`` and ``between`` over all
    pairs of points, ``within_cluster`` and ``to_nearest`` per fused cluster, and the
    ``matrix`` between fused clusters up to :data:`MAX_HELLINGER_MATRIX` of them); and
    ``per_draw``: the number of fused clusters each judged draw gives (its mean and
    distribution, and the convergence entry of ``convergence["fused_clusters"]``).
    ``{"computed": False, "reason": ...}`` when ``skipped`` says why they were not
    computed; None when the estimator was not fused and nothing says why.
    """
    fusion = getattr(estimator, "fusion_", None)
    if fusion is None:
        return None if skipped is None else {"computed": False, "reason": str(skipped)}
    raw = model_labels(estimator)
    fused = np.asarray(fusion.labels, dtype=np.int64)
    K, F = int(raw.max()) + 1, int(fusion.n_clusters)
    table = np.zeros((K, F), dtype=np.int64)
    np.add.at(table, (raw, fused), 1)
    sizes = np.bincount(fused, minlength=F).astype(np.float64)
    delta = np.asarray(fusion.delta, dtype=np.float64)
    within_pairs = sizes * (sizes - 1.0)
    between_pairs = np.outer(sizes, sizes)
    np.fill_diagonal(between_pairs, 0.0)
    out = {
        "computed": True, "method": "FOLD (Dombowsky & Dunson 2024)",
        "n_clusters": F, "sizes": sizes.astype(np.int64).tolist(),
        "omega": float(fusion.omega),
        "threshold": float(fusion.omega / (1.0 + fusion.omega)),
        "n_raw_clusters": K,
        "raw_to_fused": np.argmax(table, axis=1).tolist(),
        "hellinger": {
            "within": _weighted_mean(np.diag(delta), within_pairs),
            "between": _weighted_mean(delta, between_pairs) if F > 1 else None,
            "within_cluster": np.round(np.diag(delta), 4).tolist(),
            "to_nearest": (np.round(np.where(np.eye(F, dtype=bool), np.inf, delta).min(1),
                                    4).tolist() if F > 1 else [None])},
        "n_draws": int(fusion.n_draws), "exact": bool(fusion.exact),
    }
    if F <= MAX_HELLINGER_MATRIX:
        out["hellinger"]["matrix"] = np.round(delta, 4).tolist()
    if K * F <= MAX_CROSSTAB_CELLS:
        out["crosstab"] = table.tolist()
    series = getattr(estimator, "fused_per_draw_", None)
    entry = (getattr(estimator, "convergence_", None) or {}).get("fused_clusters")
    if series is not None:
        values, counts = np.unique(np.asarray(series), return_counts=True)
        out["per_draw"] = {
            "mean": float(np.mean(series)),
            "distribution": {str(int(v)): float(c / series.size)
                             for v, c in zip(values, counts)},
            "n_chains": int(series.shape[0]), "n_draws": int(series.shape[1]),
            **({"convergence": _convergence_summary({"e": entry})["e"]}
               if entry is not None else {})}
    return out


def _weighted_mean(values, weights) -> float | None:
    w = np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    return float((np.asarray(values) * w).sum() / total) if total > 0 else None


def _prior_settings(estimator, alpha) -> dict:
    """The prior on partitions as the settings show it: the Dirichlet process's alpha as
    given, or another prior by name with its parameters."""
    prior = getattr(estimator, "prior_", None)
    if prior is None or prior.is_dirichlet_process:
        return {"alpha": alpha_setting(alpha)}
    return {"prior": prior.label()}


def _run_settings(estimator, *, command_line, resumed_from, resume_command_line) -> dict:
    """How the run went: checkpoints, stored labels, chains, until converged, the command
    lines."""
    settings = {}
    if estimator.checkpoint_every is not None:
        settings["checkpoint_every"] = estimator.checkpoint_every
    if estimator.store_labels:
        settings["store_labels"] = True
    settings["chains"] = estimator.n_chains
    if estimator._until_converged():
        first = estimator._settings()[0]
        settings["until_converged"] = {"max_iters": estimator._max_iter(first),
                                       "first_block": first,
                                       "max_time": getattr(estimator, "max_time", None)}
    if estimator.n_chains > 1:
        settings["jobs"] = int(getattr(estimator, "n_processes_", 1))
    settings["command_line"] = command_line
    if resumed_from is not None:
        settings["resumed_from_iteration"] = resumed_from
        settings["resume_command_line"] = resume_command_line
    return settings


def _timings(trace, n_iter: int, n_samples: int, total_seconds: float) -> dict:
    seconds = chains_of(trace.seconds)  # each chain's own sampling time
    n_chains = seconds.shape[0]
    sampling = float(seconds[:, -1].sum()) if seconds.shape[1] else 0.0
    return {
        "total_seconds": float(total_seconds),
        "sampling_seconds": sampling,
        "seconds_per_iteration": sampling / (n_iter * n_chains) if n_iter else None,
        "point_updates_per_second": (n_samples * n_iter * n_chains / sampling
                                     if sampling > 0 else None),
        # the first iteration also pays for numba's compilation of the sweep kernels
        "first_iteration_seconds": float(seconds[0, 0]) if seconds.shape[1] else None,
    }


def _sampler_name(estimator, n_samples: int) -> str:
    """The sampler that ran: the fitted estimator's ``sampler_`` (``"auto"`` resolved when
    the fit chose it); a model saved before ``sampler_`` existed has it chosen again."""
    name = getattr(estimator, "sampler_", None)
    if name is not None:
        return name
    from ..samplers import choose_sampler

    if _is_ddcrp(estimator):
        return "ddcrp"
    return choose_sampler(estimator.sampler, n_samples, estimator.family_,
                          getattr(estimator, "prior_", None), where=estimator._where,
                          coarsened=getattr(estimator, "coarsening_", None) is not None).name


def _sampler_exact(estimator, n_samples: int) -> bool:
    """Whether the sampler that ran is exact MCMC for the fitted prior (its declaration)."""
    from ..samplers import SAMPLERS, is_exact_for

    name = _sampler_name(estimator, n_samples)
    if name not in SAMPLERS:
        return True
    return is_exact_for(SAMPLERS[name](), getattr(estimator, "prior_", None))


def _cluster_params(estimator, feature_names, out_dir) -> dict:
    """The family's description of the fitted clusters; arrays too large for the summary go
    to :data:`~dpclust.families.base.CLUSTER_PARAMS_FILE` in ``out_dir``."""
    described = estimator.family_.describe_clusters(estimator.cluster_params_,
                                                    feature_names=feature_names)
    if described.arrays is not None and out_dir is not None:
        np.savez_compressed(Path(out_dir) / CLUSTER_PARAMS_FILE, **described.arrays)
    return described.block


def _ddcrp_summary(estimator, positions, distances) -> dict:
    """The ddCRP part of the summary: decay, distances, tables."""
    from ..ddcrp.decay import parse_decay

    decay = parse_decay(estimator.decay)
    if positions is not None:
        what = ("differences in days" if np.asarray(estimator.positions).dtype.kind == "M"
                else "absolute differences")
        source = f"positions column {positions!r} ({what})"
    elif distances is not None:
        source = f"matrix {distances}"
        if sp.issparse(estimator.distances):
            source += " (sparse: only its stored pairs may link)"
    else:
        source = "none: the constant decay weighs every pair alike"
    links = np.asarray(estimator.links_)
    n_self = int(np.sum(links == np.arange(len(links))))
    return {
        "decay": estimator.decay,
        "decay_function": decay.formula,
        "sequential": estimator.sequential,
        "links": ("to oneself or an earlier row" if estimator.sequential
                  else "to oneself or any other row"),
        "distances": source,
        "n_tables": int(estimator.n_clusters_),
        # the first chain's, whose links ``links_`` holds
        "n_tables_last_iteration": int(np.atleast_2d(estimator.trace_.n_clusters)[0, -1]),
        "self_links_last_iteration": n_self,
        "candidate_links": int(estimator.candidates_.n_pairs),
    }


def _dask_summary(estimator, dask: dict) -> dict:
    """Where the chain ran on a Dask cluster and what it shipped per pass."""
    transfer = estimator.transfer_
    passes = max(len(transfer["params_bytes"]), 1)
    return {"scheduler": dask.get("scheduler"), "workers": dask.get("workers"),
            "partitions": int(transfer["n_partitions"]),
            "params_bytes_per_pass": float(np.sum(transfer["params_bytes"]) / passes),
            "stats_bytes_per_pass": float(np.sum(transfer["stats_bytes"]) / passes),
            "round_trips": int(transfer.get("round_trips", 0)),
            "direct_connections": bool(transfer.get("direct", False)),
            "rebuilds": int(transfer.get("rebuilds", 0))}


def _warnings(estimator, positions) -> list:
    """What the run itself warns about: a constant decay given positions, too few draws."""
    out = []
    if _is_ddcrp(estimator) and positions is not None:
        from ..ddcrp.decay import parse_decay

        if parse_decay(estimator.decay).is_constant:
            out.append(f"the constant decay gives every row the same link weight, so the "
                       f"positions column {positions!r} only orders the rows "
                       "(with --sequential) and the figures; give --decay window:A, "
                       "exponential:A or logistic:A to let nearby rows cluster together")
    n_kept = len(estimator.trace_.kept)
    if n_kept < 10:
        out.append(f"only {n_kept} draws were kept after the burn-in; run more iterations "
                   "for a reliable point estimate")
    return out


def _convergence_summary(conv: dict) -> dict:
    """``convergence_`` as strict JSON (an infinite or undefined R-hat as null)."""
    def num(v):
        if isinstance(v, (bool, np.bool_, str)):
            return bool(v) if not isinstance(v, str) else v
        if isinstance(v, (int, np.integer)):
            return int(v)
        if isinstance(v, (list, tuple)):
            return [num(x) for x in v]
        return float(v) if isinstance(v, (float, np.floating)) and math.isfinite(v) else None

    out = {}
    for key, value in conv.items():
        if isinstance(value, dict):
            out[key] = {k: (bool(v) if k == "converged" else num(v)) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _k_posterior(trace) -> dict:
    """Posterior of the number of clusters over the kept draws of every chain: all the
    clusters, and those with at least 1 % of the points."""
    out = {}
    for key, name in (("all", "n_clusters"), ("large", "n_large_clusters")):
        kept = chains_of(getattr(trace, name))[:, trace.kept].ravel()
        values, counts = np.unique(kept, return_counts=True)
        out[key] = {str(int(v)): float(c / max(kept.size, 1)) for v, c in zip(values, counts)}
    return out


def learned_summary(estimator) -> dict:
    """Each learned hyperparameter of the family (given a GammaPrior) and of the partition
    prior (a GammaPrior or BetaPrior): its posterior mean and central 95 % interval over
    the kept draws of every chain, its prior, and whose it is (``"family"`` or
    ``"prior"``)."""
    trace = estimator.trace_
    families = estimator.family_.hyperpriors()
    partition = estimator._partition_prior().hyperpriors()
    out = {}
    for name, series in (trace.hyper or {}).items():
        kept = chains_of(series)[:, trace.kept].ravel()
        prior = families.get(name) or partition[name]
        out[name] = {"mean": float(f"{kept.mean():.4g}"),
                     "interval_95": [float(f"{v:.4g}") for v in np.quantile(kept, [0.025, 0.975])],
                     "prior": prior.describe(),
                     "of": "family" if name in families else "prior"}
    return out


def chains_of(a) -> np.ndarray:
    """A trace array with its chain axis (a one-chain trace has none)."""
    a = np.asarray(a)
    return a[None] if a.ndim == 1 else a


def alpha_setting(text):
    """The concentration as the summary shows it: a number as a float, a prior
    (``"gamma:1,1"``) as its text."""
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return float(text)
    except ValueError:
        return text


def _alpha_text(estimator) -> str | float:
    """The estimator's ``alpha`` as a setting: a number, or ``gamma:SHAPE,RATE``."""
    alpha = estimator.alpha
    if isinstance(alpha, (int, float)):
        return float(alpha)
    return f"gamma:{alpha.shape:g},{alpha.rate:g}"
