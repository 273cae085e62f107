"""What a run writes into its ``--out`` folder: labels.csv, trace.csv, summary.json (strict
JSON, one key a line), links.csv, the fitted model, the ArviZ trace and the report; and,
for an exact-posterior DP mixture, the fused clusters in labels.csv, the summary and the
report."""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from .. import __version__
from ..estimators.summary import chains_of, model_labels, run_summary
from ..report.html import json_default
from ..tables.axes import as_given
from .config import MAX_SIMILARITY_SAMPLES, MODEL_FILE, PROG, RunConfig
from ..utils.checks import DataError
from .loaded import LoadedData


# --------------------------------------------------------------------------------------------
# outputs


def _warn(message: str) -> None:
    """A warning on stderr, on one line."""
    message = " ".join(str(message).split())
    print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)


def _prepare_out_dir(out_dir: Path) -> None:
    """Create ``--out`` (a directory that can be written), or say why it cannot be."""
    if out_dir.exists() and not out_dir.is_dir():
        raise DataError(f"--out {out_dir} exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    if not os.access(out_dir, os.W_OK):
        raise DataError(f"--out {out_dir} is not writable")


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

    fused_skipped = _fuse(config, model)
    fused_labels = getattr(model, "fused_labels_", None)
    save_labels_csv(out_dir / "labels.csv", labels,
                    certainty=getattr(model, "certainty_", None), fused=fused_labels,
                    rows=data.rows, n_rows=data.n_rows)
    if config.model == "dp":
        model.save(out_dir / MODEL_FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.to_arviz().to_netcdf(str(out_dir / "trace.nc"))
    if config.model == "ddcrp":
        _write_links_csv(out_dir / "links.csv", model.links_, data.rows)
    _write_trace_csv(out_dir / "trace.csv", iteration, trace)
    if config.store_labels and trace.labels is not None:
        np.savez_compressed(out_dir / "label_samples.npz", labels=trace.labels,
                            iterations=np.asarray(trace.kept))

    summary = _summary(config, data, model, total_seconds=total_seconds,
                       command_line=command_line, resume_command_line=resume_command_line,
                       resumed_from=resumed_from, out_dir=out_dir, fused_skipped=fused_skipped)
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
        # drawn for at most MAX_SIMILARITY_SAMPLES model rows (a weighted row's copies
        # count), never on a Dask cluster, where the kept draws stay on the workers
        if len(model_labels(model)) <= MAX_SIMILARITY_SAMPLES and not config.distributed:
            similarity = model.posterior_similarity()
        X = data.X
        if getattr(model.family_, "schema_", None) is not None:
            # a table's working form, its real columns as given: the figures read it
            X = as_given(model.family_.validate(X))
        write_report(out_dir, summary, trace_dict, X, labels, similarity=similarity,
                     positions=data.positions, fused_labels=fused_labels,
                     credible_ball=getattr(model, "credible_ball_", None))
    else:
        from ..report import render_html

        (out_dir / "report.html").write_text(render_html(summary, {}, labels=labels),
                                             encoding="utf-8")
    return summary


def _fuse(config: RunConfig, model) -> str | None:
    """Fuse the clusters of an exact-posterior run (:meth:`~dpclust.DPMixture.fuse`, FOLD:
    it reuses the kept draws); why not, where they are not fused.  A coarsened run is not
    fused (and says nothing): the coarsened posterior is its answer to the same misfit.
    Nor is a run whose chains have not converged, and fused clusters that outnumber the
    point estimate's are dropped (both say why on the page)."""
    if config.model != "dp":
        return ("fused clusters compare the densities of mixture components; the ddCRP's "
                "tables are groups of linked rows, so they apply to --model dp only")
    if getattr(model, "coarsening_", None) is not None:
        return None
    if config.distributed:
        return ("on a Dask cluster the kept draws stay on the workers, and fusing needs "
                "them in this process; run in-process (without --scheduler and --workers) "
                "for fused clusters")
    if not model.convergence_["converged"]:
        return ("the chains have not converged: fused clusters of draws that disagree would "
                "only add noise to the page; they are computed once the run converges (run "
                "longer, or resume it)")
    try:
        model.fuse()
    except (NotImplementedError, ValueError) as exc:
        return f"fused clusters could not be computed: {exc}"
    fused, raw = int(model.fusion_.n_clusters), int(model.n_clusters_)
    if fused > raw:  # more fused clusters than raw ones: not a summary of the raw partition
        for name in ("fusion_", "fused_labels_", "fused_per_draw_"):
            model.__dict__.pop(name, None)
        return (f"fusing gave {fused} clusters from the {raw} of the point estimate: more, "
                f"not fewer, which says the draws' components disagree point by point; the "
                f"raw clusters are shown")
    return None


def _summary(config: RunConfig, data: LoadedData, model, *, total_seconds, command_line,
             resume_command_line, resumed_from, out_dir, fused_skipped=None) -> dict:
    """The run summary (:func:`~dpclust.estimators.summary.run_summary`) with what only
    the command line knows: the data's source, the options as given, the command lines."""
    warnings = list(data.warnings)
    n_rows = len(model_labels(model))
    if n_rows > MAX_SIMILARITY_SAMPLES and config.plots:
        copies = (f" (the model's {n_rows:,}, each weighted row's copies counted)"
                  if n_rows != data.info["n_samples"] else "")
        warnings.append(f"the posterior co-clustering figure is left out for more than "
                        f"{MAX_SIMILARITY_SAMPLES:,} points{copies}")
    dask = ({"scheduler": config.scheduler, "workers": config.workers}
            if config.distributed else None)
    summary = run_summary(
        model, data=data.info, total_seconds=total_seconds, version=__version__,
        truth=data.truth, warnings=warnings, feature_names=data.vocabulary, alpha=config.alpha,
        command_line=command_line, resumed_from=resumed_from,
        resume_command_line=resume_command_line, positions=config.positions,
        distances=config.distances, dask=dask, out_dir=out_dir, fused_skipped=fused_skipped)
    if data.rules:  # the file's reading rules (holes, markers) before the family's
        if "table" in summary:
            summary["table"]["rules"] = {**data.rules, **summary["table"]["rules"]}
        else:
            summary["data"]["rules"] = dict(data.rules)
    return summary


def _write_links_csv(path: Path, links, rows=None) -> None:
    """``customer,link``: each row's link as 0-based row numbers (itself for a self link);
    ``rows``: the data rows the fitted rows are (where rows with no value were left out)."""
    links = np.asarray(links, dtype=np.int64)
    rows = np.arange(len(links)) if rows is None else np.asarray(rows, dtype=np.int64)
    lines = ["customer,link"]
    lines.extend(f"{i},{j}" for i, j in zip(rows.tolist(), rows[links].tolist()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_trace_csv(path: Path, iteration, trace) -> None:
    several = trace.n_chains > 1
    lines = [("chain," if several else "")
             + "iteration,log_joint,log_likelihood,n_clusters,alpha,seconds"]
    columns = [chains_of(getattr(trace, k))
               for k in ("log_joint", "log_likelihood", "n_clusters", "alpha", "seconds")]
    for c in range(columns[0].shape[0]):
        lead = f"{c}," if several else ""
        for it, lj, ll, k, a, s in zip(iteration.tolist(),
                                       *(col[c].tolist() for col in columns)):
            lines.append(f"{lead}{it},{lj!r},{ll!r},{int(k)},{a!r},{s:.6f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


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
