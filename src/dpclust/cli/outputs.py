"""What a run writes into its ``--out`` folder: labels.csv, trace.csv, summary.json (strict
JSON, one key a line), links.csv, the fitted model, the ArviZ trace and the report."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import __version__
from ..report.html import json_default
from .config import (MAX_SIMILARITY_SAMPLES, MAX_SUMMARY_FEATURES, MODEL_FILE, N_TOP_ITEMS,
                     N_TOP_WORDS, RunConfig, parse_alpha)
from .data import LoadedData


# --------------------------------------------------------------------------------------------
# outputs


def _write_outputs(out_dir: Path, config: RunConfig, data: LoadedData, model, *,
                   total_seconds: float, command_line, resume_command_line=None,
                   resumed_from=None, alpha_sensitivity=None) -> dict:
    """Write labels.csv, trace.csv, summary.json, the report (and label samples); return the
    summary."""
    from ..io import save_labels_csv

    labels = np.asarray(model.labels_, dtype=np.int64)
    trace = model.trace_
    n_iter = int(model.n_iter_)
    iteration = np.arange(n_iter)

    save_labels_csv(out_dir / "labels.csv", labels,
                    certainty=getattr(model, "certainty_", None))
    if config.model == "dp":
        model.save(out_dir / MODEL_FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.to_arviz().to_netcdf(str(out_dir / "trace.nc"))
    if config.model == "ddcrp":
        _write_links_csv(out_dir / "links.csv", model.links_)
    _write_trace_csv(out_dir / "trace.csv", iteration, trace)
    if config.store_labels and trace.labels is not None:
        np.savez_compressed(out_dir / "label_samples.npz", labels=trace.labels,
                            iterations=np.asarray(trace.kept))

    summary = _summary(config, data, model, labels, total_seconds=total_seconds,
                       command_line=command_line, resume_command_line=resume_command_line,
                       resumed_from=resumed_from, out_dir=out_dir)
    if alpha_sensitivity:
        summary["alpha_sensitivity"] = alpha_sensitivity
    _write_json(out_dir / "summary.json", summary)

    trace_dict = {"iteration": iteration, "log_joint": trace.log_joint,
                  "log_likelihood": trace.log_likelihood,
                  "n_clusters": trace.n_clusters, "alpha": trace.alpha, "seconds": trace.seconds,
                  "kept": trace.kept, "n_large_clusters": trace.n_large_clusters}
    if config.plots:
        from ..report import write_report

        similarity = None
        if data.info["n_samples"] <= MAX_SIMILARITY_SAMPLES and not config.distributed:
            similarity = model.posterior_similarity()  # kept draws stay on a Dask cluster
        write_report(out_dir, summary, trace_dict, data.X, labels, similarity=similarity,
                     positions=data.positions)
    else:
        from ..report import render_html

        (out_dir / "report.html").write_text(render_html(summary, {}, labels=labels),
                                             encoding="utf-8")
    return summary


def _summary(config: RunConfig, data: LoadedData, model, labels, *, total_seconds,
             command_line, resume_command_line, resumed_from, out_dir=None) -> dict:
    from ..metrics import ari, nmi
    from ..samplers import resolve_sampler_name

    trace = model.trace_
    n_iter = int(model.n_iter_)
    n_samples = data.info["n_samples"]
    seconds = _chains_of(trace.seconds)  # each chain's own sampling time
    # the burn-in the run ended with (a run until converged moves it to half its length)
    burn_in = int(trace.kept[0]) if len(trace.kept) else config.burn_in
    sampling = float(seconds[:, -1].sum()) if seconds.shape[1] else 0.0
    if config.model == "ddcrp":
        settings = {
            "model": "ddcrp", "family": config.family,
            "sampler": "customer-assignment Gibbs",
            "alpha": _alpha_setting(config.alpha), "decay": config.decay,
            "sequential": config.sequential,
        }
        if config.positions is not None:
            settings["positions"] = config.positions
        if config.distances is not None:
            settings["distances"] = config.distances
        settings.update({"n_iter": n_iter, "burn_in": burn_in, "thin": config.thin,
                         "seed": config.seed, "point_estimate": config.point_estimate})
    else:
        settings = {
            "family": config.family,
            "sampler": (config.sampler if config.sampler != "auto"
                        else f"auto ({resolve_sampler_name('auto', n_samples, model.family_)})"),
            "alpha": _alpha_setting(config.alpha), "n_iter": n_iter,
            "burn_in": burn_in, "thin": config.thin, "seed": config.seed,
            "init_clusters": config.init_clusters, "init": config.init,
            "point_estimate": config.point_estimate,
        }
    if config.family == "multinomial":
        settings["concentration"] = 1.0 if config.concentration is None else config.concentration
    if config.family == "mallows":
        settings["nu"] = 1.0 if config.nu is None else config.nu
        settings["r"] = 1.0 if config.r is None else config.r
    if config.checkpoint_every is not None:
        settings["checkpoint_every"] = config.checkpoint_every
    if config.store_labels:
        settings["store_labels"] = True
    settings["chains"] = config.chains
    if config.until_converged:
        settings["until_converged"] = {"max_iters": model._max_iter(config.n_iter),
                                       "first_block": config.n_iter}
    if config.chains > 1:
        settings["jobs"] = int(model.n_jobs or 1)
    settings["command_line"] = command_line
    if resumed_from is not None:
        settings["resumed_from_iteration"] = resumed_from
        settings["resume_command_line"] = resume_command_line

    sizes = np.bincount(labels, minlength=int(model.n_clusters_))
    log_joint = _chains_of(trace.log_joint).astype(float)
    best_chain, best_at = np.unravel_index(int(np.argmax(log_joint)), log_joint.shape)
    n_chains = log_joint.shape[0]
    summary = {
        "dpclust_version": __version__,
        "settings": settings,
        "data": dict(data.info),
        "timings": {
            "total_seconds": float(total_seconds),
            "sampling_seconds": sampling,
            "seconds_per_iteration": sampling / (n_iter * n_chains) if n_iter else None,
            "point_updates_per_second": (n_samples * n_iter * n_chains / sampling
                                         if sampling > 0 else None),
            # the first iteration also pays for numba's compilation of the sweep kernels
            "first_iteration_seconds": float(seconds[0, 0]) if seconds.shape[1] else None,
        },
        "n_clusters": int(model.n_clusters_),
        "cluster_sizes": sizes.tolist(),
        "cluster_params": _cluster_params(config, data, model, out_dir),
        "log_joint": {"final": float(log_joint[:, -1].max()), "best": float(log_joint.max()),
                      "best_iteration": int(best_at),
                      **({"best_chain": int(best_chain)} if n_chains > 1 else {})},
        "n_clusters_posterior": _k_posterior(trace),
        "point_estimate": {"loss": config.point_estimate,
                           "expected_loss": float(model.expected_loss_)},
        "convergence": _convergence_summary(model.convergence_),
    }
    certainty = getattr(model, "certainty_", None)
    if certainty is not None:
        summary["certainty"] = {"mean": float(np.mean(certainty)),
                                "below_0.9": int((certainty < 0.9).sum()),
                                "share_below_0.9": float(np.mean(certainty < 0.9)),
                                "below_0.5": int((certainty < 0.5).sum())}
    if config.model == "ddcrp":
        summary["ddcrp"] = _ddcrp_summary(config, data, model)
    if config.family == "mallows":
        summary["mallows"] = _mallows_summary(config, model, sizes)
    if config.distributed:
        transfer = model.transfer_
        passes = max(len(transfer["params_bytes"]), 1)
        summary["dask"] = {
            "scheduler": config.scheduler, "workers": config.workers,
            "partitions": int(transfer["n_partitions"]),
            "params_bytes_per_pass": float(np.sum(transfer["params_bytes"]) / passes),
            "stats_bytes_per_pass": float(np.sum(transfer["stats_bytes"]) / passes)}
    if isinstance(parse_alpha(config.alpha), float):
        summary["alpha"] = float(model.alpha_)
    else:
        summary["alpha_posterior_mean"] = float(model.alpha_)
    if data.truth is not None:
        summary["metrics"] = {"nmi": float(nmi(data.truth, labels)),
                              "ari": float(ari(data.truth, labels))}
    warnings = list(data.warnings)
    if n_samples > MAX_SIMILARITY_SAMPLES and config.plots:
        warnings.append(f"the posterior co-clustering figure is left out for more than "
                        f"{MAX_SIMILARITY_SAMPLES:,} points")
    if config.model == "ddcrp" and config.positions is not None:
        from ..ddcrp.decay import parse_decay

        if parse_decay(config.decay).is_constant:
            warnings.append(f"the constant decay gives every row the same link weight, so the "
                            f"positions column {config.positions!r} only orders the rows "
                            "(with --sequential) and the figures; give --decay window:A, "
                            "exponential:A or logistic:A to let nearby rows cluster together")
    n_kept = len(trace.kept)
    if n_kept < 10:
        warnings.append(f"only {n_kept} draws were kept after the burn-in; run more iterations "
                        "for a reliable point estimate")
    if warnings:
        summary["warnings"] = warnings
    return summary


def _convergence_summary(conv: dict) -> dict:
    """``convergence_`` as strict JSON (an infinite or undefined R-hat as null)."""
    def num(v):
        return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None

    out = {}
    for key, value in conv.items():
        if isinstance(value, dict):
            out[key] = {k: (bool(v) if k == "converged" else num(v)) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _ddcrp_summary(config: RunConfig, data: LoadedData, model) -> dict:
    """The ddCRP part of the summary: decay, distances, tables."""
    from ..ddcrp.decay import parse_decay

    decay = parse_decay(config.decay)
    if config.positions is not None:
        what = ("differences in days" if data.positions.dtype.kind == "M"
                else "absolute differences")
        source = f"positions column {config.positions!r} ({what})"
    elif config.distances is not None:
        source = f"matrix {config.distances}"
        if sp.issparse(data.distances):
            source += " (sparse: only its stored pairs may link)"
    else:
        source = "none: the constant decay weighs every pair alike"
    links = np.asarray(model.links_)
    n_self = int(np.sum(links == np.arange(len(links))))
    return {
        "decay": config.decay,
        "decay_function": decay.formula,
        "sequential": config.sequential,
        "links": ("to oneself or an earlier row" if config.sequential
                  else "to oneself or any other row"),
        "distances": source,
        "n_tables": int(model.n_clusters_),
        "n_tables_last_iteration": int(model.trace_.n_clusters[-1]),
        "self_links_last_iteration": n_self,
        "candidate_links": int(model.candidates_.n_pairs),
    }


def _mallows_summary(config: RunConfig, model, sizes: np.ndarray) -> dict:
    """The Generalized Mallows part of the summary: the sampler's exactness, how the
    rankings split into clusters (the paper's Figure 10) and theta_j by rank, averaged over
    the clusters weighted by their sizes (Figure 11), also over the large and the small
    clusters apart."""
    from ..report.plots import LARGE_CLUSTER_SHARE, theta_by_rank
    from ..samplers import resolve_sampler_name

    family = model.family_
    sampler = resolve_sampler_name(config.sampler, int(sizes.sum()), family)
    theta = np.asarray(model.cluster_params_["theta"], dtype=np.float64)
    n = int(sizes.sum())
    by_rank = theta_by_rank(theta, sizes, large_share=LARGE_CLUSTER_SHARE)
    exact = sampler == "slice-gibbs"
    blocs = _blocs(family, model.cluster_params_, sizes)
    return {
        "n_items": int(family.n_items_),
        "ranks_with_theta": int(family.max_length_),
        "posterior": ("exact MCMC (Slice-Gibbs with the Metropolis-Hastings sigma step)"
                      if exact else
                      "approximate (Beta-Gibbs: theta from the n -> infinity Beta "
                      "approximation; its draws are not from the posterior)"),
        "exact": exact,
        "substantial_clusters": int(np.sum(sizes >= 0.01 * n)),
        "singletons": int(np.sum(sizes == 1)),
        "largest_share": float(f"{sizes.max() / n:.4g}") if n else None,
        "large_cluster_share": LARGE_CLUSTER_SHARE,
        "theta_by_rank": _rounded(by_rank["all"]),
        "theta_by_rank_large": _rounded(by_rank["large"]),
        "theta_by_rank_small": _rounded(by_rank["small"]),
        "blocs": blocs,
        "near_uniform_rule": NEAR_UNIFORM_RULE,
    }


#: when a cluster of rankings is flagged as near-uniform (see :func:`_blocs`)
NEAR_UNIFORM_RULE = ("its central ranking's first item is less than twice as likely to come "
                     "first as a uniformly random item: 1 / psi_{n-1}(theta_1) < 2 / n")


def _blocs(family, params: dict, sizes: np.ndarray) -> list:
    """The clusters holding at least 1 % of the rankings, largest first: share, central
    ranking (item names, best first), theta_1, the probability that a ranking of the cluster
    puts the central first item first (``1 / psi_{n-1}(theta_1)``, against ``1 / n`` for a
    uniform pick) and whether the cluster is near-uniform (:data:`NEAR_UNIFORM_RULE`: there
    the central ranking says little about the cluster's rankings)."""
    from ..families.mallows import log_psi

    n = int(sizes.sum())
    n_items = int(family.n_items_)
    order = np.asarray(params["central_rankings"], dtype=np.int64)
    theta = np.asarray(params["theta"], dtype=np.float64)
    out = []
    for k in np.lexsort((np.arange(len(sizes)), -sizes)):
        if n == 0 or sizes[k] < 0.01 * n:
            break
        theta1 = float(theta[k, 0]) if theta.shape[1] else 0.0
        p_top = float(np.exp(-log_psi(theta1, n_items - 1)))
        out.append({"cluster": int(k), "rankings": int(sizes[k]),
                    "share": float(f"{sizes[k] / n:.4g}"),
                    "central_ranking": [family.item_name(int(i)) for i in order[k]],
                    "theta_1": float(f"{theta1:.4g}"),
                    "top_item_probability": float(f"{p_top:.4g}"),
                    "near_uniform": bool(p_top < 2.0 / n_items)})
    return out


def _rounded(values):
    """Floats to four significant digits, for JSON (None stays None)."""
    if values is None:
        return None
    return [float(f"{v:.4g}") for v in np.asarray(values, dtype=np.float64).tolist()]


def _alpha_setting(text: str):
    value = parse_alpha(text)
    return value if isinstance(value, float) else text


def _cluster_params(config: RunConfig, data: LoadedData, model, out_dir=None) -> dict:
    """Gaussian means and covariances as nested lists (above :data:`MAX_SUMMARY_FEATURES`
    features, the means and variances in ``cluster_params.npz`` instead, with the means'
    first coordinates); for
    counts, each cluster's top words; for rankings, the first :data:`N_TOP_ITEMS` items of
    each cluster's central ranking by name (``top_items``) and its dispersions ``theta``
    (n_clusters, n_ranks)."""
    params = model.cluster_params_
    if "central_rankings" in params:
        order = np.asarray(params["central_rankings"], dtype=np.int64)[:, :N_TOP_ITEMS]
        name = model.family_.item_name
        return {"top_items": [[name(i) for i in row] for row in order.tolist()],
                "theta": [_rounded(row) for row in np.asarray(params["theta"])]}
    if "probabilities" in params:
        prob = np.asarray(params["probabilities"])
        top = np.argsort(-prob, axis=1, kind="stable")[:, :N_TOP_WORDS]
        if data.vocabulary is not None:
            words = [[data.vocabulary[i] for i in row] for row in top.tolist()]
        else:
            words = top.tolist()
        return {"top_words": words,
                "top_word_probabilities": [[float(f"{v:.4g}") for v in row] for row in
                                           np.take_along_axis(prob, top, axis=1).tolist()]}
    means = np.asarray(params.get("means", np.zeros((0, 0))))
    if means.ndim == 2 and means.shape[1] > MAX_SUMMARY_FEATURES:
        # K d x d covariances would be gigabytes: their diagonals (the variances) instead
        cov = np.asarray(params["covariances"])
        variances = np.diagonal(cov, axis1=1, axis2=2)
        if out_dir is not None:
            np.savez_compressed(Path(out_dir) / "cluster_params.npz", means=means,
                                variances=variances)
        return {"file": "cluster_params.npz (means, variances)",
                "n_features": int(means.shape[1]),
                "means": means[:, :MAX_SUMMARY_FEATURES].tolist(),
                "means_features_listed": MAX_SUMMARY_FEATURES}
    return {k: np.asarray(v).tolist() for k, v in params.items()}


def _write_links_csv(path: Path, links) -> None:
    """``customer,link``: each row's link as 0-based row numbers (itself for a self link)."""
    links = np.asarray(links, dtype=np.int64)
    lines = ["customer,link"]
    lines.extend(f"{i},{j}" for i, j in enumerate(links.tolist()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _chains_of(a) -> np.ndarray:
    """A trace array with its chain axis (a one-chain trace has none)."""
    a = np.asarray(a)
    return a[None] if a.ndim == 1 else a


def _write_trace_csv(path: Path, iteration, trace) -> None:
    several = trace.n_chains > 1
    lines = [("chain," if several else "")
             + "iteration,log_joint,log_likelihood,n_clusters,alpha,seconds"]
    columns = [_chains_of(getattr(trace, k))
               for k in ("log_joint", "log_likelihood", "n_clusters", "alpha", "seconds")]
    for c in range(columns[0].shape[0]):
        lead = f"{c}," if several else ""
        for it, lj, ll, k, a, s in zip(iteration.tolist(),
                                       *(col[c].tolist() for col in columns)):
            lines.append(f"{lead}{it},{lj!r},{ll!r},{int(k)},{a!r},{s:.6f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _k_posterior(trace) -> dict:
    """Posterior of the number of clusters over the kept draws of every chain: all the
    clusters, and those with at least 1 % of the points."""
    out = {}
    for key, name in (("all", "n_clusters"), ("large", "n_large_clusters")):
        kept = _chains_of(getattr(trace, name))[:, trace.kept].ravel()
        values, counts = np.unique(kept, return_counts=True)
        out[key] = {str(int(v)): float(c / max(kept.size, 1)) for v, c in zip(values, counts)}
    return out


def _write_json(path: Path, obj) -> None:
    path.write_text(_dumps(strict_json(obj)) + "\n", encoding="utf-8")


def strict_json(obj):
    """``obj`` with NumPy arrays and scalars as plain lists and numbers and every NaN or
    infinity as None (JSON's null), so that the file is strict JSON (RFC 8259)."""
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return strict_json(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _dumps(obj, depth: int = 0) -> str:
    """JSON with one key a line, and lists of numbers (matrix rows) kept on one line."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(obj, dict) and obj:
        items = ",\n".join(f"{inner}{json.dumps(str(k))}: {_dumps(v, depth + 1)}"
                           for k, v in obj.items())
        return "{\n" + items + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)) and any(isinstance(v, (list, tuple, dict)) for v in obj):
        items = ",\n".join(inner + _dumps(v, depth + 1) for v in obj)
        return "[\n" + items + "\n" + pad + "]"
    return json.dumps(obj, default=json_default, allow_nan=False)
