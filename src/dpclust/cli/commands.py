"""The subcommands: ``fit``, ``resume``, ``predict``, ``score`` and ``compare`` (in
:mod:`~dpclust.cli.compare`), and :func:`main`, which
parses the command line, runs one of them and turns every problem into one line and an exit
status."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import __version__
from ..families import FAMILIES, NUMBERS_ROUNDING, NormalInverseWishart
from ..utils.checks import DataError
from .config import (AUTO, CHECKPOINT_FILE, DATASETS, MODEL_FILE, PROG, RUN_FILE, STDIN_FILE,
                     RunConfig, UsageError, _DEMO, _EXIT_INTERRUPTED, _EXIT_OK, _EXIT_USAGE,
                     _Interrupt, _RUN_FORMAT, _config_from_args, parse_alpha)
from .data import LoadedData, _load
from ..chains.length import run_length
from ..estimators.summary import alpha_setting, chains_of
from .outputs import _prepare_out_dir, _warn, _write_json, _write_outputs
from .parser import build_parser


# --------------------------------------------------------------------------------------------
# main


def main(argv=None) -> int:
    """Run the ``dpclust`` command line and return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 for bad input or usage, 130 when interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else _EXIT_USAGE
    command_line = shlex.join([PROG, *argv])
    out_dir = Path(args.out if args.command in ("fit", "compare") else args.dir)
    try:
        if args.command == "fit":
            return _fit(args, command_line)
        if args.command == "compare":
            from .compare import run_compare

            return run_compare(args, command_line)
        if args.command in ("predict", "score"):
            return _predict(args)
        return _resume(args, command_line)
    except KeyboardInterrupt as exc:
        return _interrupted(out_dir, exc)
    except (DataError, ValueError, FileNotFoundError, PermissionError, OSError) as exc:
        _error(_describe(exc))
        return _EXIT_USAGE


@contextlib.contextmanager
def _named_data(name: str):
    """A refusal of the data at fit time (the estimator's checks call it ``X``) named
    after the file the user gave, as the checks made when it was read are."""
    try:
        yield
    except ValueError as exc:
        text = str(exc)
        if text[:2] in ("X ", "X:"):
            raise DataError(f"{name}{text[1:]}") from None
        raise


def _error(message: str) -> None:
    message = " ".join(str(message).split())  # one line, whatever the exception held
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, DataError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        return f"{where}: {exc.strerror}" if where else exc.strerror
    return str(exc) or type(exc).__name__


def _interrupted(out_dir: Path, exc: KeyboardInterrupt) -> int:
    what = f"interrupted after iteration {exc.args[0]} (--stop-after)" if isinstance(
        exc, _Interrupt) else "interrupted"
    print(f"\n{PROG}: {what}", file=sys.stderr)
    ckpt = out_dir / CHECKPOINT_FILE
    if _checkpointing(out_dir) and ckpt.is_file():
        from ..chains.checkpoint import checkpoint_iteration, load_checkpoint
        try:
            done = checkpoint_iteration(load_checkpoint(ckpt))
            at = f" (saved at iteration {done})"
        except (DataError, KeyError, AttributeError):
            at = ""
        print(f"{PROG}: continue from the checkpoint{at} with: "
              f"{shlex.join([PROG, 'resume', str(out_dir)])}", file=sys.stderr)
    elif _checkpointing(out_dir):
        print(f"{PROG}: no checkpoint was written yet, so the run cannot be resumed",
              file=sys.stderr)
    sys.stderr.flush()
    return _EXIT_INTERRUPTED


def _checkpointing(out_dir: Path) -> bool:
    try:
        run = json.loads((out_dir / RUN_FILE).read_text(encoding="utf-8"))
        return run["config"].get("checkpoint_every") is not None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _distributed(config: RunConfig) -> bool:
    """Whether the run's data are clustered on a Dask cluster."""
    return bool(config.scheduler or config.workers)


def _dask_client(config: RunConfig):
    """The Dask client of a run (None in-process); a local cluster closes with it."""
    if config.scheduler:
        from ..distributed.backend import _dask

        try:
            return _dask().Client(config.scheduler, timeout="30s")
        except OSError as exc:
            raise DataError(f"--scheduler {config.scheduler}: cannot connect ({exc})") from None
    if config.workers:
        from ..distributed import local_client

        return local_client(config.workers)
    return None


def _read_stdin(args) -> None:
    """``fit -``: copy standard input into the run folder and read it from there."""
    out_dir = Path(args.out)
    _prepare_out_dir(out_dir)
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        raise DataError("standard input is empty: pipe a CSV table into 'dpclust fit -'")
    path = out_dir / STDIN_FILE
    path.write_bytes(raw)
    args.data = str(path)


def _fit(args, command_line: str) -> int:
    if args.data == "-":
        _read_stdin(args)
    config = _config_from_args(args)
    if config.seed_drawn:
        print(f"{PROG}: random state {config.seed}, drawn at random (--random-state "
              f"{config.seed} repeats this run)", file=sys.stderr, flush=True)
    if getattr(args, "alpha_sensitivity", None) and config.model != "dp":
        raise UsageError("--alpha-sensitivity applies to --model dp (the DP mixture's alpha)")
    data = _load(config)
    weighted = _weights(data)  # refused now, before the run folder is written, if fit cannot
    for message in data.warnings:
        _warn(message)
    for sentence in data.info.get("cleaning", ()):  # a cast-vote record's counting rules
        print(f"{PROG}: {sentence}", file=sys.stderr, flush=True)
    from .tables import kinds_lines

    for line in kinds_lines(config, data):  # a table's column kinds and cleaning rules
        print(line, file=sys.stderr, flush=True)
    out_dir = Path(args.out)
    _prepare_out_dir(out_dir)
    # a checkpoint left by an earlier run in DIR would not match this run's run.json
    for stale in (CHECKPOINT_FILE, CHECKPOINT_FILE + ".tmp"):
        (out_dir / stale).unlink(missing_ok=True)
    _write_json(out_dir / RUN_FILE, {
        "format": _RUN_FORMAT, "dpclust_version": __version__, "command_line": command_line,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "config": config.to_json()})

    callback = None
    if args.stop_after is not None:
        stop = args.stop_after

        def stop_after(iteration, state, info):
            if iteration + 1 >= stop:
                raise _Interrupt(iteration + 1)

        callback = stop_after

    client = _dask_client(config)
    try:
        model = _estimator(config, data, out_dir, progress=not args.no_progress,
                           callback=callback, client=client)
        t0 = time.perf_counter()
        with _verdict_in_summary(), _named_data(config.data):
            model.fit(data.X, **weighted)
        total = time.perf_counter() - t0
    finally:
        _close(client)
    sensitivity = None
    if getattr(args, "alpha_sensitivity", None):
        sensitivity = _alpha_sensitivity(config, data, out_dir, model, args.alpha_sensitivity,
                                         progress=not args.no_progress)
    summary = _write_outputs(out_dir, config, data, model, total_seconds=total,
                             command_line=command_line, alpha_sensitivity=sensitivity)
    _print_done(out_dir, summary)
    return _EXIT_OK


def _alpha_sensitivity(config: RunConfig, data: LoadedData, out_dir: Path, model, alphas,
                       *, progress: bool) -> list:
    """The fit again with each alpha of ``alphas`` (one chain, the run's other settings, no
    checkpoint): per alpha the posterior means of the number of clusters, of the clusters
    with at least 1 % of the points and of the log-likelihood over the kept draws, the
    verdict and the seconds.  The run itself is the first row."""
    rows = [_sensitivity_row(config.alpha, model, None, main=True)]
    for text in alphas:
        if progress:
            print(f"alpha sensitivity: fitting with --alpha {text}", file=sys.stderr, flush=True)
        other = replace(config, alpha=text, chains=1, jobs=None, checkpoint_every=None,
                        until_converged=False)
        est = _estimator(other, data, out_dir, progress=False)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*has not converged",
                                    category=UserWarning)
            est.fit(data.X, **_weights(data))
        rows.append(_sensitivity_row(text, est, time.perf_counter() - t0))
    return rows


def _weights(data: LoadedData, method=None) -> dict:
    """The ``sample_weight`` argument of ``method`` (default: ``DPMixture.fit``) for the
    rows' weights (``--weights``), if any."""
    if data.weights is None:
        return {}
    if method is None:
        from ..estimators.dp_mixture import DPMixture

        method = DPMixture.fit
    return {"sample_weight": data.weights}


def _sensitivity_row(alpha_text: str, model, seconds, main: bool = False) -> dict:
    trace = model.trace_
    kept = trace.kept

    def mean(a):
        return float(np.mean(chains_of(a)[:, kept])) if len(kept) else None

    row = {"alpha": alpha_setting(alpha_text), "n_clusters": mean(trace.n_clusters),
           "clusters_1pct": mean(trace.n_large_clusters),
           "log_likelihood": mean(trace.log_likelihood),
           "alpha_mean": float(model.alpha_),
           "converged": bool(model.convergence_["converged"]),
           "chains": int(trace.n_chains)}
    if seconds is not None:
        row["seconds"] = float(seconds)
    if main:
        row["this_run"] = True
    return row


def _resume(args, command_line: str) -> int:
    from ..chains.checkpoint import checkpoint_iteration, checkpoint_seconds, load_checkpoint

    out_dir = Path(args.dir)
    if not out_dir.is_dir():
        raise DataError(f"{out_dir}: no such directory")
    run, config = _read_run(out_dir)
    ckpt_path = out_dir / CHECKPOINT_FILE
    if not ckpt_path.is_file():
        raise DataError(f"{out_dir} has no checkpoint ({CHECKPOINT_FILE}); only runs started "
                        "with --checkpoint-every can be resumed")
    ckpt = load_checkpoint(ckpt_path)
    done = checkpoint_iteration(ckpt)
    # the checkpoint knows the run's length, including an earlier `resume --n-iter`
    n_iter = ckpt["params"]["n_iter"]  # None: a run that goes on until it converges
    config = replace(config, n_iter=None if n_iter is None else int(n_iter))
    if args.no_plots:
        config = replace(config, plots=False)
    if args.iters is not None:
        if config.burn_in >= args.iters:
            raise UsageError(f"--n-iter ({args.iters}) must be larger than the run's burn-in "
                             f"({config.burn_in})")
        if args.iters < done:
            raise UsageError(f"--n-iter ({args.iters}) is less than the {done} "
                             "iterations already run")
        config = replace(config, n_iter=args.iters)
    if args.data is not None:
        if config.data in DATASETS or config.data == _DEMO:
            raise UsageError(f"this run clustered the bundled data ({config.data}); --data "
                             "gives a moved data file")
        config = replace(config, data=str(Path(args.data).absolute()))
    elif not (config.data in DATASETS or config.data == _DEMO or Path(config.data).exists()):
        raise DataError(f"the run's data file {config.data} is gone: if it was moved, give its "
                        f"new place with 'dpclust resume {out_dir} --data NEWPATH'")
    data = _load(config)
    t0 = time.perf_counter()
    client = _dask_client(config)
    try:
        with _verdict_in_summary():
            model = _estimator_class(config).resume(
                ckpt_path, data.X, n_iter=config.n_iter, progress=not args.no_progress,
                client=client, **_weights(data, _estimator_class(config).resume))
    finally:
        _close(client)
    total = time.perf_counter() - t0 + checkpoint_seconds(ckpt)
    summary = _write_outputs(
        out_dir, config, data, model, total_seconds=total,
        command_line=run.get("command_line"), resume_command_line=command_line,
        resumed_from=int(done))
    _print_done(out_dir, summary)
    return _EXIT_OK


def _read_run(out_dir: Path):
    """``(run.json's content, its RunConfig)`` of the run folder ``out_dir``."""
    run_path = out_dir / RUN_FILE
    if not run_path.is_file():
        raise DataError(f"{out_dir} has no {RUN_FILE}; is it the --out folder of 'dpclust fit'?")
    try:
        run = json.loads(run_path.read_text(encoding="utf-8"))
        return run, RunConfig.from_json(run["config"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{run_path} is damaged or not written by dpclust ({exc})") from None


def _predict(args) -> int:
    """``dpclust predict`` / ``dpclust score``: new rows under a fitted run's model."""
    out_dir = Path(args.dir)
    model_path = out_dir / MODEL_FILE
    _, config = _read_run(out_dir)
    if config.model != "dp":
        raise UsageError(f"dpclust {args.command} works with DP mixture runs; {out_dir} is a "
                         "ddCRP run, whose clusters depend on its customers' links")
    if not model_path.is_file():
        raise DataError(f"{out_dir} has no {MODEL_FILE}: the run has not finished (resume "
                        "it first) or was written by an older dpclust (fit it again)")
    from ..estimators.dp_mixture import DPMixture

    model = DPMixture.load(model_path)
    # the new rows are read as the fitted family reads them (the one auto picked)
    family = model.family_.name if config.family == AUTO else config.family
    config = replace(config, data=str(Path(args.data).absolute()), truth=None, family=family,
                     sep=args.sep or config.sep, decimal=args.decimal or config.decimal)
    from .tables import load_frame, reads_frames

    if reads_frames(family):  # the model's own schema reads the new rows
        data = load_frame(replace(config, weights=None), infer=False)
    else:
        data = _load(config)
    if args.command == "predict":
        proba = model.predict_proba(data.X)
        label = np.argmax(proba, axis=1)
        rows = ["label,probability"] + [f"{k},{p:.6g}" for k, p in
                                        zip(label.tolist(), proba.max(axis=1).tolist())]
    else:
        rows = ["log_density"] + [repr(float(v)) for v in model.score_samples(data.X)]
    text = "\n".join(rows) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        done = {"predict": "predicted", "score": "scored"}[args.command]
        print(f"{PROG}: {len(rows) - 1} rows {done}; written to {args.out}", file=sys.stderr)
    return _EXIT_OK


def _close(client) -> None:
    if client is None:
        return
    cluster = getattr(client, "_dpclust_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def _estimator_class(config: RunConfig):
    """:class:`~dpclust.DPMixture`, or :class:`~dpclust.DDCRPMixture` for ``--model ddcrp``."""
    if config.model == "ddcrp":
        from ..estimators.ddcrp import DDCRPMixture

        return DDCRPMixture
    from ..estimators.dp_mixture import DPMixture

    return DPMixture


def _estimator(config: RunConfig, data: LoadedData, out_dir: Path, *, progress: bool,
               callback=None, client=None):
    family = data.family or config.family  # the one --family auto picked, if it did
    given = dict(config.hyperparameters)
    if data.kinds:
        given["kinds"] = dict(data.kinds)
    if config.family == AUTO and family == NormalInverseWishart.name:
        # as family="auto" reads a table of numbers: values on a grid are rounded values
        given.setdefault("rounding", NUMBERS_ROUNDING)
    if config.family == AUTO and family in ("table", "diagonal") and not _distributed(config):
        # as family="auto" reads a table: few rows of complete numbers in their principal
        # axes (found from every row at once, so not on a Dask cluster)
        given.setdefault("axes", "auto")
    if given:  # the family's defaults but those given
        family = FAMILIES[family](**given)
    checkpoint = None
    if config.checkpoint_every is not None:
        checkpoint = str(out_dir / CHECKPOINT_FILE)
    # --until-converged with --n-iter N: on after N, up to --max-iter (10 N)
    n_iter, max_iter = run_length(config.n_iter, config.max_iters, config.until_converged)
    chains = dict(n_chains=config.chains, n_jobs=_jobs(config, callback),
                  max_iter=max_iter, max_time=config.max_time)
    # a run that goes on until it converges keeps its default burn-in at half its length
    burn_in = None if config.until_converged and not config.burn_in_given else config.burn_in
    if config.model == "ddcrp":
        return _estimator_class(config)(
            family=family, alpha=parse_alpha(config.alpha), decay=config.decay,
            distances=data.distances, positions=data.positions, sequential=config.sequential,
            n_iter=n_iter, burn_in=burn_in, thin=config.thin,
            store_labels=config.store_labels, point_estimate=config.point_estimate,
            random_state=config.seed, progress=progress, checkpoint=checkpoint,
            checkpoint_every=config.checkpoint_every, callback=callback, **chains)
    return _estimator_class(config)(
        family=family, alpha=parse_alpha(config.alpha), prior=config.prior,
        coarsening=config.coarsening, sampler=config.sampler, n_iter=n_iter, burn_in=burn_in, thin=config.thin,
        store_labels=config.store_labels, init_clusters=config.init_clusters,
        init=config.init, point_estimate=config.point_estimate, random_state=config.seed, progress=progress,
        checkpoint=checkpoint, checkpoint_every=config.checkpoint_every, callback=callback,
        executor=client,
        partitions=config.partitions, **chains)


def _jobs(config: RunConfig, callback) -> int | None:
    """Processes for the chains: ``--n-jobs``, or None (the estimator's choice: processes
    once the run proves long enough); one with a callback (``--stop-after``) or on a Dask
    cluster."""
    if callback is not None or config.distributed or config.chains == 1:
        return 1
    return config.jobs


@contextlib.contextmanager
def _verdict_in_summary():
    """The estimator's not-converged warning is left to the summary, the report and the
    closing line (:func:`_print_done`), which say it in the run's terms."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*has not converged", category=UserWarning)
        yield


def _print_done(out_dir: Path, summary: dict) -> None:
    from ..report.lead import against_draws, counted_rows, weights_words

    n, k = summary["data"]["n_samples"], summary["n_clusters"]
    what = "table" if "ddcrp" in summary else "cluster"
    point = FAMILIES[summary["settings"]["family"]].noun
    line = f"{PROG}: {k} {what}{'s' if k != 1 else ''} in {n} {point}{'s' if n != 1 else ''}"
    notes = [weights_words(summary, point)]
    counted = counted_rows(summary, n)
    large = sum(1 for c in summary.get("cluster_sizes") or () if c >= 0.01 * counted)
    if "ddcrp" not in summary and 0 < large < k:  # small clusters (single points) besides
        notes.append(f"{large} holding at least 1 % of the {point}s")
    if any(notes):
        line += f" ({'; '.join(note for note in notes if note)})"
    if summary.get("metrics"):
        scores = ", ".join(f"{m.upper()} {v:.3f}" for m, v in summary["metrics"].items())
        line += f" ({scores})"
    files = "report.html, labels.csv, links.csv" if "ddcrp" in summary else (
        "report.html, labels.csv")
    print(f"{line}; results in {out_dir}{os.sep} ({files}, summary.json, trace.nc)")
    drawn = against_draws(summary, point)
    if drawn:
        print(f"{PROG}: {drawn}")
    conv = summary.get("convergence")
    if conv is not None:
        from ..diagnostics import judged, quantity_name, separate_modes, settled_scale
        order = (*judged(conv), "fused_clusters")

        if conv["converged"]:
            print(f"{PROG}: converged: {conv['rule']}")
        else:
            names = ", ".join(quantity_name(q) for q in order if q in conv["failing"])
            modes = separate_modes(conv)
            todo = ("" if modes else "; run longer (a larger --max-time, or --n-iter) or "
                    "more chains")
            print(f"{PROG}: NOT converged ({names} fail: {conv['rule']}){todo}; the report's "
                  f"diagnostics table has the figures", file=sys.stderr)
            scale = settled_scale(conv, coarsened=bool(summary.get("coarsening")))
            if modes:
                print(f"{PROG}: {modes}", file=sys.stderr)
            if scale:
                print(f"{PROG}: {scale}", file=sys.stderr)
