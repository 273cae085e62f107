"""The ``dpclust`` command: fit a Dirichlet-process mixture to a data file and report on it.

``dpclust fit [DATA]`` runs the chain and writes, into ``--out DIR``:

* ``run.json`` first (everything ``dpclust resume`` needs to reload the data and continue),
* ``labels.csv`` (header ``label,certainty``, one line per point: the point estimate of the
  partition and the point's posterior probability of lying in its cluster's core; ``label``
  alone on a Dask cluster),
* ``summary.json`` (settings, data, timings, clusters, log joint, point estimate, metrics),
* ``trace.csv`` (``iteration,log_joint,log_likelihood,n_clusters,alpha,seconds``, iterations 0-based;
  a leading ``chain`` column with ``--chains`` above 1),
* ``trace.nc``: the kept draws of every chain for ArviZ (``arviz.from_netcdf``),
* ``report.html`` with the figures as PNG files beside it (:func:`dpclust.report.write_report`),
* ``model.npz`` (DP mixtures): the fitted model (:meth:`dpclust.DPMixture.save`) that
  ``dpclust predict RUN_DIR DATA`` and ``dpclust score RUN_DIR DATA`` use on new rows,
* ``checkpoint.npz`` with ``--checkpoint-every K`` (no pickle: arrays and JSON with a
  SHA-256 digest), and ``label_samples.npz`` with ``--store-labels``,
* ``links.csv`` with ``--model ddcrp`` (header ``customer,link``: each row's link in the last
  iteration, as 0-based row numbers; ``link == customer`` for a self link).

``--model ddcrp`` fits a distance dependent CRP mixture (Blei & Frazier 2010;
:class:`dpclust.DDCRPMixture`) instead of a Dirichlet-process mixture: ``--decay`` (default
``constant``), with the distances from ``--positions COLUMN`` (numbers, or dates and times
measured in days) or ``--distances FILE`` (a dense ``.npy`` or sparse ``.npz`` matrix), and
``--sequential`` for links to earlier rows only.

``--family mallows`` clusters top-t rankings with Generalized Mallows components (Meilă &
Chen 2010; :class:`dpclust.families.GeneralizedMallows`): DATA is a table of rankings, one a
row, best first, as item names or ids (``--missing``, ``--index-base``, ``--items FILE``), or a
PrefLib ``.soi``/``.toi``/``.soc``/``.toc`` file; without DATA, or with ``--dataset
dublin-west``, the bundled Dublin West ballots.  ``--sampler`` is ``slice-gibbs`` (exact, the
default) or ``beta-gibbs`` (approximate); ``--nu`` and ``--r`` set the prior.  The summary
adds a ``mallows`` block and the report the largest clusters' central rankings with their
dispersions (the paper's Table 1), the cluster-size distribution (Figure 10) and theta_j
against rank (Figure 11).

``dpclust resume DIR`` continues a checkpointed run and writes the same files; the labels are
exactly those of an uninterrupted run with the same seed.

Every problem with the input ends in one line ``dpclust: error: <message>`` on stderr and
exit status 2; Ctrl-C ends with exit status 130 (and says how to resume, when checkpointing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shlex
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__
from .utils.checks import DataError
from .report.html import json_default

__all__ = ["RunConfig", "build_parser", "main"]

PROG = "dpclust"
RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.npz"
#: the fitted model that ``dpclust predict`` and ``dpclust score`` read (DPMixture.save)
MODEL_FILE = "model.npz"
#: the posterior co-clustering figure needs an n_samples x n_samples matrix: only up to this n
MAX_SIMILARITY_SAMPLES = 2000
N_TOP_WORDS = 10
_RUN_FORMAT = 1
_EXIT_OK, _EXIT_USAGE, _EXIT_INTERRUPTED = 0, 2, 130
_DEMO = "demo"
_DUBLIN_WEST = "dublin-west"
#: the random stream of ``--subsample`` among those of ``--seed``
_SUBSAMPLE_STREAM = 7
#: bundled data sets (``--dataset NAME``): their family, what the summary calls them and
#: their loader in :mod:`dpclust.datasets`
DATASETS = {_DUBLIN_WEST: ("mallows", "the Dublin West 2002 election ballots",
                           "load_dublin_west")}
#: items of a cluster's central ranking that the summary lists, best first
N_TOP_ITEMS = 10
#: a wide data file: the summary lists this many column names, and above this many features
#: the Gaussian clusters' means and variances go to cluster_params.npz
MAX_LISTED_COLUMNS = 50
MAX_SUMMARY_FEATURES = 50
_PREFLIB_SUFFIXES = (".soi", ".toi", ".soc", ".toc")


class UsageError(ValueError):
    """A bad combination of options, found after parsing; reported like an argparse error."""


class _Interrupt(KeyboardInterrupt):
    """Raised by the hidden ``--stop-after`` option: an interruption at a known iteration."""


# --------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run: what ``run.json`` stores and ``resume`` reads back.

    ``data`` is an absolute path, ``"demo"`` for the bundled demo data, or the name of a
    bundled data set (:data:`DATASETS`); ``columns``, ``truth`` and ``positions`` are column
    names (str) or 0-based indices (int) of a table.  ``model`` is ``"dp"`` or ``"ddcrp"``;
    ``decay``, ``positions``, ``distances`` (an absolute path) and ``sequential`` belong to
    the ddCRP, whose ``sampler`` is ``"ddcrp"`` and whose ``init_clusters`` and ``init`` are
    None.  ``missing``, ``index_base`` and ``items`` (an absolute path) say how to read a
    rankings table, and ``nu`` and ``r`` are the prior of ``family="mallows"`` (None: the
    defaults).
    """

    data: str = _DEMO
    model: str = "dp"
    family: str = "gaussian"
    sampler: str = "auto"
    alpha: str = "1.0"
    n_iter: int = 200
    burn_in: int = 100
    thin: int = 1
    seed: int = 0
    init_clusters: int | None = 10
    init: str | None = "auto"
    columns: tuple | None = None
    truth: str | int | None = None
    concentration: float | None = None
    vocab: str | None = None
    point_estimate: str = "vi"
    store_labels: bool = False
    checkpoint_every: int | None = None
    plots: bool = True
    decay: str | None = None
    positions: str | int | None = None
    distances: str | None = None
    sequential: bool = False
    missing: tuple | None = None
    index_base: int | None = None
    items: str | None = None
    sep: str | None = None
    decimal: str | None = None
    nu: float | None = None
    r: float | None = None
    scheduler: str | None = None
    workers: int | None = None
    partitions: int | None = None
    chains: int = 1
    jobs: int | None = None
    until_converged: bool = False
    max_iters: int | None = None
    burn_in_given: bool = True
    subsample: int | None = None

    @property
    def distributed(self) -> bool:
        """Whether the run's chain runs on a Dask cluster."""
        return bool(self.scheduler or self.workers)

    def to_json(self) -> dict:
        d = asdict(self)
        for key in ("columns", "missing"):
            d[key] = None if getattr(self, key) is None else list(getattr(self, key))
        return d

    @classmethod
    def from_json(cls, d: dict) -> RunConfig:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        for key in ("columns", "missing"):
            if kwargs.get(key) is not None:
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)


@dataclass
class LoadedData:
    """Data ready for the estimator, with what the summary says about them.

    ``positions`` (float64 or datetime64, shape (n_samples,)) and ``distances`` ((n, n),
    dense or sparse) are the ddCRP's, when given.  ``X`` is a
    :class:`~dpclust.rankings.Rankings` for ``family="mallows"``; ``warnings`` are what the
    loader warned about (shown on stderr and in the summary).
    """

    X: object
    truth: np.ndarray | None
    info: dict
    vocabulary: list | None = None
    positions: np.ndarray | None = None
    distances: object = None
    warnings: list = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# argument types (argparse turns their ArgumentTypeError into a one-line usage error)


def parse_alpha(text: str):
    """Parse ``--alpha``: ``"1.5"`` -> 1.5; ``"gamma:SHAPE,RATE"`` -> :class:`~dpclust.GammaPrior`.

    A :class:`~dpclust.GammaPrior` makes the estimator resample alpha (Escobar & West 1995).
    """
    from .samplers import GammaPrior

    s = text.strip()
    m = re.fullmatch(r"gamma:\s*([^,\s]+)\s*,\s*([^,\s]+)", s, flags=re.IGNORECASE)
    if m:
        try:
            shape, rate = float(m.group(1)), float(m.group(2))
        except ValueError:
            shape = rate = math.nan
        if not (math.isfinite(shape) and math.isfinite(rate) and shape > 0 and rate > 0):
            raise argparse.ArgumentTypeError(
                f"in {text!r} the Gamma shape and rate must be positive numbers")
        return GammaPrior(shape, rate)
    try:
        value = float(s)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"expected a positive number or gamma:SHAPE,RATE (e.g. 1.0 or gamma:1,1), got {text!r}")
    return value


def _alpha_type(text: str) -> str:
    parse_alpha(text)  # validate now; keep the text, which run.json and the summary show
    return text.strip()


def _int_type(minimum: int):
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value
    convert.__name__ = f"integer >= {minimum}"
    return convert


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _column_token(token: str):
    """A column given on the command line: an int (0-based index) if it looks like one."""
    token = token.strip()
    return int(token) if re.fullmatch(r"-?\d+", token) else token


def _columns_type(text: str) -> tuple:
    tokens = [t for t in text.split(",")]
    if not tokens or any(not t.strip() for t in tokens):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated column names or 0-based indices, got {text!r}")
    return tuple(_column_token(t) for t in tokens)


def _truth_type(text: str):
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a column name or 0-based index")
    return _column_token(text)


def _missing_type(text: str) -> tuple:
    """``--missing``: comma-separated cells that mark an unranked position (``0,NA``)."""
    return tuple(t.strip() for t in text.split(","))


def _decay_type(text: str) -> str:
    from .ddcrp.decay import parse_decay

    try:
        parse_decay(text)  # validate now; keep the text, which run.json and the summary show
    except ValueError as exc:
        message = str(exc)
        if not message.startswith("unknown decay"):
            message += (" (expected constant, window:A, exponential:A or logistic:A[:SLOPE], "
                        "e.g. logistic:14)")
        raise argparse.ArgumentTypeError(message) from None
    return text.strip().lower()


# --------------------------------------------------------------------------------------------
# the parser


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors as one line, ``dpclust: error: <message>``, exit status 2."""

    def error(self, message):
        self.exit(_EXIT_USAGE, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


_FIT_EPILOG = """\
examples:
  dpclust fit                                   # the bundled 2-D demo, report in dpclust_output/
  dpclust fit points.csv --out run1 --iters 500 --seed 3
  dpclust fit iris.csv --truth species --columns sepal_length,sepal_width
  dpclust fit table.parquet --alpha gamma:1,1 --sampler explicit
  dpclust fit docword.kos.txt --family multinomial --vocab vocab.kos.txt --concentration 0.1
  dpclust fit big.npy --checkpoint-every 50 --out big_run   # if stopped: dpclust resume big_run
  dpclust fit news.csv --model ddcrp --family multinomial --positions day --decay logistic:14 \
      --sequential                              # distance dependent CRP over time (in days)
  dpclust fit cites.npy --model ddcrp --distances hops.npz --decay window:3
  dpclust fit --dataset dublin-west --iters 300 # Irish ballots: rankings of 9 candidates
  dpclust fit ballots.csv --family mallows --missing 0 --index-base 1 --items names.txt
  dpclust fit votes.soi --family mallows --sampler beta-gibbs   # PrefLib .soi/.toi/.soc/.toc

data formats: CSV/TSV/TXT (header row optional, detected), .npy, Parquet; for
--family multinomial also .npz (scipy.sparse.save_npz) and UCI bag-of-words docword files;
for --family mallows a CSV/TSV/TXT table of rankings (one a row, best first, item names or
ids; a row ends at its first empty or --missing cell) or a PrefLib .soi/.toi/.soc/.toc file.
Outputs in --out: run.json, labels.csv, summary.json, trace.csv, trace.nc (ArviZ), report.html
(+ PNG figures), checkpoint.npz (--checkpoint-every), label_samples.npz (--store-labels),
links.csv (ddcrp), cluster_params.npz (Gaussian data with more than 50 features).

--model ddcrp: customers (rows) link to each other with weight f(distance) and to themselves
with weight --alpha; the tables (clusters) are the linked groups (Blei & Frazier 2010).  The
decay's width A is in the positions' units (days for dates); without --positions or
--distances only the constant decay applies.
"""

_RESUME_EPILOG = """\
examples:
  dpclust fit data.csv --iters 2000 --checkpoint-every 100 --out run1   # interrupted ...
  dpclust resume run1                  # ... continues from run1/checkpoint.npz
  dpclust resume run1 --iters 4000     # extend a finished run to 4000 iterations in total
  dpclust resume run1 --data new/place/data.csv   # the data file was moved

The data are reloaded from the path recorded in DIR/run.json (or --data) and must be
unchanged (checked by fingerprint).  The labels are exactly those an uninterrupted run with
the same seed would give.
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``dpclust`` argument parser (subcommands ``fit`` and ``resume``)."""
    from .families import FAMILIES
    from .samplers import SAMPLERS

    parser = _ArgumentParser(
        prog=PROG,
        description="Bayesian nonparametric clustering: Dirichlet-process mixtures fitted by "
                    "MCMC, where the data decide how many clusters there are.",
        epilog="Run 'dpclust fit --help' or 'dpclust resume --help' for the options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    fit = sub.add_parser(
        "fit", help="cluster a data file (or the bundled demo) and write a report",
        description="Fit a Dirichlet-process mixture by MCMC and write labels, a summary, the "
                    "trace and an HTML report.",
        epilog=_FIT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    fit.add_argument("data", nargs="?", metavar="DATA",
                     help="data file (CSV, .npy, Parquet; for counts also .npz or a docword "
                          "file; for rankings a CSV table or a PrefLib file); - reads a CSV "
                          "table from standard input (kept in the run folder as "
                          f"{STDIN_FILE}); omit it to cluster the bundled demo data (for "
                          "--family mallows: the Dublin West ballots)")
    model = fit.add_argument_group("model")
    model.add_argument("--model", choices=("dp", "ddcrp"), default="dp",
                       help="'dp': Dirichlet-process mixture; 'ddcrp': distance dependent CRP "
                            "mixture, where nearby rows (in time, space or a given distance) "
                            "tend to share a cluster (default: %(default)s)")
    model.add_argument("--family", choices=sorted(FAMILIES),
                       help="component family: 'gaussian' for real-valued features, "
                            "'multinomial' for word counts, 'mallows' for rankings "
                            "(Generalized Mallows, Meila & Chen 2010) (default: gaussian; "
                            "mallows with --dataset dublin-west)")
    model.add_argument("--sampler", choices=["auto"] + sorted(SAMPLERS),
                       help="'auto': gibbs below 5,000 points or documents, subcluster "
                            "from there on; "
                            "'gibbs': collapsed Gibbs (Neal alg. 3); 'explicit': Gibbs with "
                            "cluster parameters (Neal alg. 2); 'fsd': finite symmetric "
                            "Dirichlet approximation with 20 components; 'subcluster': the "
                            "parallel sub-cluster sampler (Chang & Fisher 2013's restricted "
                            "Gibbs with exact parallel split-merge moves; 'subcluster-exact' "
                            "is the same); 'subcluster-approx': the paper's fast sub-cluster "
                            "splits and merges (NOT exact, for comparisons); 'gibbs+sams': "
                            "collapsed Gibbs with Dahl's "
                            "merge-split moves; for --family mallows, 'slice-gibbs' (exact "
                            "MCMC) or 'beta-gibbs' (approximate: the n -> infinity Beta "
                            "approximation of Meila & Chen 2010) (default: auto, which is "
                            "slice-gibbs for mallows; --model dp only)")
    model.add_argument("--alpha", type=_alpha_type, default="1.0", metavar="A",
                       help="DP concentration (the ddCRP's self-link weight): a positive "
                            "number, or gamma:SHAPE,RATE to put a Gamma prior on it and "
                            "resample it (default: %(default)s)")
    model.add_argument("--alpha-sensitivity", type=_alpha_type, nargs="+", metavar="A",
                       help="after the fit, fit again (one chain, same settings) with each of "
                            "these alphas (numbers or gamma:SHAPE,RATE) and tabulate the "
                            "posterior number of clusters in the summary and report "
                            "(--model dp only)")
    model.add_argument("--concentration", type=_positive_float, metavar="BETA",
                       help="multinomial only: symmetric Dirichlet prior on each cluster's word "
                            "distribution (default: 1.0; smaller gives sharper clusters)")
    rankings = fit.add_argument_group("rankings (--family mallows)")
    rankings.add_argument("--nu", type=_positive_float, metavar="NU",
                          help="prior strength of each cluster's dispersions theta_j (a "
                               "pseudo-count; default: 1.0)")
    rankings.add_argument("--r", type=_positive_float, metavar="R",
                          help="prior rate of each theta_j: larger favours smaller theta_j, "
                               "that is more dispersed clusters (default: 1.0)")
    rankings.add_argument("--missing", type=_missing_type, metavar="a,b,...",
                          help="CSV cells that mark an unranked position besides empty "
                               "cells, e.g. 0 or 0,NA; a ranking ends at its first one")
    rankings.add_argument("--index-base", type=int, choices=(0, 1), metavar="{0,1}",
                          help="the id of the first item in a CSV file of item ids: 0 or 1 "
                               "(default: inferred, 0 if some ranking uses the id 0, else 1, "
                               "and said in the summary)")
    rankings.add_argument("--items", metavar="FILE",
                          help="item names, one a line: for a CSV file of ids, id "
                               "index-base + j is line j + 1; for a file of names, the names "
                               "allowed (and items that no ranking lists)")
    ddcrp = fit.add_argument_group("distance dependent CRP (--model ddcrp)")
    ddcrp.add_argument("--decay", type=_decay_type, metavar="SPEC",
                       help="how link weights fall with distance: constant (every row alike), "
                            "window:A (1 below distance A, else 0), exponential:A (exp(-d/A)) "
                            "or logistic:A[:SLOPE] (a smooth window of width A); A in the "
                            "positions' units, days for dates (default: constant)")
    ddcrp.add_argument("--positions", type=_truth_type, metavar="COLUMN",
                       help="column (name or 0-based index) of each row's position: numbers, "
                            "or dates and times (ISO 8601, e.g. 2024-03-01 or "
                            "2024-03-01T12:30; distances in days); left out of the features")
    ddcrp.add_argument("--distances", metavar="FILE",
                       help="distances between the rows instead of --positions: a dense .npy "
                            "(n, n) matrix (inf: may not link) or a scipy sparse .npz matrix, "
                            "whose stored pairs are the only ones that may link")
    ddcrp.add_argument("--sequential", action="store_true",
                       help="rows link only to themselves or to earlier rows (sort the file "
                            "by time); with the constant decay this is the ordinary CRP")
    chain = fit.add_argument_group("chain")
    chain.add_argument("--iters", type=_int_type(1), default=200, metavar="N",
                       help="MCMC iterations (sweeps over the data) (default: %(default)s)")
    chain.add_argument("--burn-in", type=_int_type(0), metavar="B",
                       help="iterations discarded before draws are kept (default: iters // 2)")
    chain.add_argument("--thin", type=_int_type(1), default=1, metavar="T",
                       help="keep every T-th draw after the burn-in (default: %(default)s)")
    chain.add_argument("--seed", type=_int_type(0), default=0, metavar="S",
                       help="random seed; the same seed gives the same result (default: "
                            "%(default)s)")
    chain.add_argument("--init-clusters", type=_int_type(1), metavar="C",
                       help="start from C clusters (default: 10; --model dp only)")
    chain.add_argument("--init", choices=("auto", "random", "kmeans"),
                       help="how the starting clusters are made: points at random, or k-means; "
                            "auto: k-means for the sub-cluster sampler (default: auto; "
                            "--model dp only)")
    chain.add_argument("--point-estimate", choices=("vi", "binder"), default="vi",
                       help="loss whose posterior expectation the reported partition "
                            "minimises: variation of information or Binder (default: "
                            "%(default)s)")
    chain.add_argument("--chains", type=_int_type(1), default=1, metavar="C",
                       help="independent chains, their kept draws pooled; R-hat compares "
                            "them (one chain gets a split-R-hat verdict over its quarters, "
                            "blind to modes it never visited) (default: %(default)s)")
    chain.add_argument("--jobs", type=_int_type(1), metavar="J",
                       help="processes for the chains (default: one per chain, at most one "
                            "per core); the result does not depend on J")
    chain.add_argument("--until-converged", action="store_true",
                       help="after --iters, while the convergence rule fails, double the run "
                            "(the burn-in stays half of it unless --burn-in is given), up to "
                            "--max-iters; then say whether it converged")
    chain.add_argument("--max-iters", type=_int_type(1), metavar="N",
                       help="the longest run of --until-converged (default: 10 x --iters)")
    chain.add_argument("--store-labels", action="store_true",
                       help="also write every kept partition to label_samples.npz")
    chain.add_argument("--checkpoint-every", type=_int_type(1), metavar="K",
                       help="write DIR/checkpoint.npz every K iterations (and at the end), so "
                            "that 'dpclust resume DIR' can continue an interrupted run")
    chain.add_argument("--stop-after", type=_int_type(1), metavar="N", help=argparse.SUPPRESS)
    # --stop-after N (for testing): behave as if Ctrl-C were pressed after iteration N.
    dask = fit.add_argument_group(
        "Dask cluster (the sub-cluster sampler; pip install 'dpclust[dask]')")
    dask.add_argument("--scheduler", metavar="ADDRESS",
                      help="run the chain on the Dask cluster at ADDRESS (e.g. "
                           "tcp://10.0.0.1:8786); the data are shipped to its workers once")
    dask.add_argument("--workers", type=_int_type(1), metavar="N",
                      help="run the chain on a new local Dask cluster of N worker processes")
    dask.add_argument("--partitions", type=_int_type(1), metavar="P",
                      help="split the data into P partitions (default: one per worker); the "
                           "same --seed and P give the same labels with or without Dask")
    data = fit.add_argument_group("data")
    data.add_argument("--dataset", choices=sorted(DATASETS),
                      help="cluster a bundled data set instead of DATA: 'dublin-west', the "
                           "29,988 ballots of the 2002 Irish general election in Dublin West "
                           "(rankings of 9 candidates; implies --family mallows)")
    data.add_argument("--subsample", type=_int_type(1), metavar="N",
                      help="fit N of the rows (rankings) drawn at random with --seed, kept in "
                           "their order; the summary and the report say so (default: all)")
    data.add_argument("--columns", type=_columns_type, metavar="a,b,...",
                      help="features to use: column names (with a header row) or 0-based "
                           "indices (default: all columns but --truth)")
    data.add_argument("--truth", type=_truth_type, metavar="COLUMN",
                      help="column (name or 0-based index) holding known labels: it is left out "
                           "of the features and used to report NMI and ARI")
    _add_dialect_args(data)
    data.add_argument("--vocab", metavar="FILE",
                      help="multinomial only: vocabulary file, one word a line, to show the top "
                           "words of each cluster instead of word indices")
    out = fit.add_argument_group("output")
    out.add_argument("--out", default="dpclust_output", metavar="DIR",
                     help="output folder, created if needed (default: %(default)s)")
    out.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    out.add_argument("--no-plots", action="store_true",
                     help="skip the figures (report.html is still written, with tables only)")

    res = sub.add_parser(
        "resume", help="continue a checkpointed run",
        description="Continue a run started with 'dpclust fit --checkpoint-every K' from "
                    "DIR/checkpoint.npz and write the same outputs as fit.",
        epilog=_RESUME_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    res.add_argument("dir", metavar="DIR", help="the --out folder of the interrupted run")
    res.add_argument("--iters", type=_int_type(1), metavar="N",
                     help="new total number of iterations (default: that of the original run)")
    res.add_argument("--data", metavar="PATH",
                     help="the run's data file, moved or renamed since the run started: used "
                          "when its content is the same (checked by fingerprint)")
    res.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    res.add_argument("--no-plots", action="store_true",
                     help="skip the figures (report.html is still written, with tables only)")
    for name, what in (("predict", "each row's most probable cluster and its probability "
                                   "(CSV: label,probability)"),
                       ("score", "each row's log posterior predictive density (CSV: "
                                 "log_density)")):
        cmd = sub.add_parser(
            name, help=f"{name} new data with a fitted run's model",
            description=f"Write {what} for the rows of DATA under the model that 'dpclust "
                        f"fit' saved in RUN_DIR/{MODEL_FILE}.  DATA is read as fit read its "
                        "data (format, columns, rankings options).")
        cmd.add_argument("dir", metavar="RUN_DIR", help="the --out folder of 'dpclust fit'")
        cmd.add_argument("data", metavar="DATA", help="the rows to " + name)
        cmd.add_argument("--out", metavar="FILE",
                         help="write the CSV here (default: standard output)")
        _add_dialect_args(cmd)
    return parser


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
    out_dir = Path(args.out if args.command == "fit" else args.dir)
    try:
        if args.command == "fit":
            return _fit(args, command_line)
        if args.command in ("predict", "score"):
            return _predict(args)
        return _resume(args, command_line)
    except KeyboardInterrupt as exc:
        return _interrupted(out_dir, exc)
    except (DataError, ValueError, FileNotFoundError, PermissionError, OSError) as exc:
        _error(_describe(exc))
        return _EXIT_USAGE


def _error(message: str) -> None:
    message = " ".join(str(message).split())  # one line, whatever the exception held
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)


def _warn(message: str) -> None:
    message = " ".join(str(message).split())
    print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)


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
        from .estimator import checkpoint_iteration, load_checkpoint
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


# --------------------------------------------------------------------------------------------
# fit and resume


def _config_from_args(args) -> RunConfig:
    n_iter = args.iters
    burn_in = n_iter // 2 if args.burn_in is None else args.burn_in
    if burn_in >= n_iter:
        raise UsageError(f"--burn-in ({burn_in}) must be smaller than --iters ({n_iter}): "
                         "otherwise no draws are kept")
    family = args.family
    if args.dataset is not None:
        if args.data is not None:
            raise UsageError(f"give DATA or --dataset {args.dataset}, not both")
        family = family or DATASETS[args.dataset][0]
        if family != DATASETS[args.dataset][0]:
            raise UsageError(f"--dataset {args.dataset} holds rankings: use it with --family "
                             f"{DATASETS[args.dataset][0]}")
    family = family or "gaussian"
    if args.data is None and (args.columns is not None or args.truth is not None
                              or args.positions is not None):
        raise UsageError("--columns, --truth and --positions select columns of a DATA file; "
                         "the demo data has none to select")
    if family != "multinomial":
        for opt, value in (("--concentration", args.concentration), ("--vocab", args.vocab)):
            if value is not None:
                raise UsageError(f"{opt} applies only to --family multinomial")
    if args.data is not None:
        data = str(Path(args.data).absolute())
    elif family == "mallows":
        data = args.dataset or _DUBLIN_WEST  # the rankings' demo: the Dublin West ballots
    else:
        data = _DEMO
    vocab = None if args.vocab is None else str(Path(args.vocab).absolute())
    config = RunConfig(
        data=data, family=family, alpha=args.alpha, n_iter=n_iter, burn_in=burn_in,
        thin=args.thin, seed=args.seed, columns=args.columns, truth=args.truth,
        concentration=args.concentration, vocab=vocab, point_estimate=args.point_estimate,
        store_labels=args.store_labels, checkpoint_every=args.checkpoint_every,
        plots=not args.no_plots, chains=args.chains, jobs=args.jobs,
        until_converged=args.until_converged, max_iters=args.max_iters,
        burn_in_given=args.burn_in is not None, sep=args.sep, decimal=args.decimal,
        subsample=args.subsample)
    if (args.sep or args.decimal) and args.data is None:
        raise UsageError(f"{'--sep' if args.sep else '--decimal'} tells how to read a DATA "
                         "file; the bundled data need none")
    if args.max_iters is not None and not args.until_converged:
        raise UsageError("--max-iters applies only with --until-converged")
    if args.max_iters is not None and args.max_iters < n_iter:
        raise UsageError(f"--max-iters ({args.max_iters}) must be at least --iters ({n_iter})")
    config = _rankings_config(config, args)
    if args.model == "dp":
        ddcrp_only = (("--decay", args.decay), ("--positions", args.positions),
                      ("--distances", args.distances), ("--sequential", args.sequential or None))
        for opt, value in ddcrp_only:
            if value is not None:
                raise UsageError(f"{opt} applies only to --model ddcrp")
        config = replace(config, sampler=args.sampler or "auto",
                         init_clusters=10 if args.init_clusters is None else args.init_clusters,
                         init=args.init or "auto")
        return _dask_config(config, args)
    if args.scheduler or args.workers or args.partitions:
        raise UsageError("--scheduler, --workers and --partitions run the sub-cluster sampler "
                         "of --model dp")
    return _ddcrp_config(config, args)


def _dask_config(config: RunConfig, args) -> RunConfig:
    """Check ``--scheduler``/``--workers``/``--partitions``."""
    if args.scheduler and args.workers:
        raise UsageError("give --scheduler ADDRESS (an existing cluster) or --workers N (a "
                         "local one), not both")
    if not (args.scheduler or args.workers or args.partitions):
        return config
    if config.family == "mallows":
        raise UsageError("--family mallows runs in-process only (no --scheduler, --workers "
                         "or --partitions)")
    if config.sampler not in ("auto", "subcluster", "subcluster-exact", "subcluster-approx"):
        raise UsageError(f"--scheduler, --workers and --partitions run the sub-cluster "
                         f"sampler, not --sampler {config.sampler}")
    init = config.init
    if (args.scheduler or args.workers) and init == "kmeans":
        raise UsageError("--init kmeans runs in-process only; on a Dask cluster the chain "
                         "starts from random clusters")
    return replace(config, sampler="subcluster" if config.sampler == "auto" else config.sampler,
                   scheduler=args.scheduler, workers=args.workers, partitions=args.partitions)


def _dask_client(config: RunConfig):
    """The Dask client of a run (None in-process); a local cluster closes with it."""
    if config.scheduler:
        from .distributed.backend import _dask

        try:
            return _dask().Client(config.scheduler, timeout="30s")
        except OSError as exc:
            raise DataError(f"--scheduler {config.scheduler}: cannot connect ({exc})") from None
    if config.workers:
        from .distributed import local_client

        return local_client(config.workers)
    return None


def _rankings_config(config: RunConfig, args) -> RunConfig:
    """Check the options of ``--family mallows`` (and that no other family got them)."""
    from .samplers import INSTANTIATED

    own = (("--nu", args.nu), ("--r", args.r), ("--missing", args.missing),
           ("--index-base", args.index_base), ("--items", args.items))
    if config.family != "mallows":
        if config.data not in DATASETS and config.data != _DEMO and _is_preflib(config.data):
            raise UsageError(f"{config.data} is a PrefLib file of rankings: fit it with "
                             f"--family mallows (this run asked for --family {config.family})")
        for opt, value in own:
            if value is not None:
                raise UsageError(f"{opt} applies only to --family mallows")
        if args.sampler in INSTANTIATED:
            raise UsageError(f"--sampler {args.sampler} fits --family mallows (rankings) only")
        return config
    if args.model == "ddcrp":
        raise UsageError("--model ddcrp needs a family with a collapsed form (gaussian or "
                         "multinomial), not --family mallows")
    if args.columns is not None or args.truth is not None:
        raise UsageError("--columns and --truth select columns of a table of numbers; a "
                         "rankings file is read whole, one ranking a row")
    if args.sampler not in (None, "auto", *INSTANTIATED):
        raise UsageError(f"--family mallows is fitted with --sampler slice-gibbs (exact) or "
                         f"beta-gibbs (approximate), not {args.sampler}")
    if args.init == "kmeans":
        raise UsageError("--init kmeans needs numeric features; --family mallows starts from "
                         "random clusters (--init random)")
    csv_only = [opt for opt, value in own[2:] if value is not None]
    if csv_only and config.data in DATASETS:
        raise UsageError(f"{csv_only[0]} tells how to read a rankings CSV file; the bundled "
                         f"data set {config.data} needs none")
    if args.decimal is not None:
        raise UsageError("--decimal applies to tables of numbers; a rankings file holds item "
                         "names or ids")
    if args.sep is not None and _is_preflib(config.data):
        raise UsageError("--sep tells how to read a CSV file; a PrefLib file has its own "
                         "layout")
    if csv_only and _is_preflib(config.data):
        raise UsageError(f"{csv_only[0]} tells how to read a rankings CSV file; a PrefLib "
                         "file numbers and names its own alternatives")
    items = None if args.items is None else str(Path(args.items).absolute())
    return replace(config, missing=args.missing, index_base=args.index_base, items=items,
                   nu=args.nu, r=args.r)


def _is_preflib(path: str) -> bool:
    """Whether ``path`` is read by :func:`~dpclust.rankings.read_preflib` (by its suffix)."""
    return _preflib_suffix(path) in _PREFLIB_SUFFIXES


def _preflib_suffix(path: str) -> str:
    """The suffix of ``path`` without a ``.gz``: ``votes.soi.gz`` -> ``.soi``."""
    return Path(Path(path).name.lower().removesuffix(".gz")).suffix


def _ddcrp_config(config: RunConfig, args) -> RunConfig:
    """The run of ``--model ddcrp``: check its options and fill them in."""
    from .ddcrp.decay import parse_decay

    for opt, value in (("--sampler", args.sampler), ("--init", args.init),
                       ("--init-clusters", args.init_clusters)):
        if value is not None:
            raise UsageError(f"{opt} does not apply to --model ddcrp, which has its own "
                             "sampler (customer-assignment Gibbs, Blei & Frazier 2010) and "
                             "starts from a draw of the ddCRP prior")
    decay = args.decay or "constant"
    if args.positions is not None and args.distances is not None:
        raise UsageError("give the distances between rows once: --positions COLUMN or "
                         "--distances FILE, not both")
    if (not parse_decay(decay).is_constant and args.positions is None
            and args.distances is None):
        raise UsageError(f"--decay {decay} needs distances between the rows: --positions "
                         "COLUMN (a column of times or numbers) or --distances FILE (only "
                         "the constant decay needs neither)")
    distances = None if args.distances is None else str(Path(args.distances).absolute())
    return replace(config, model="ddcrp", sampler="ddcrp", init_clusters=None, init=None,
                   decay=decay, positions=args.positions, distances=distances,
                   sequential=bool(args.sequential))


#: where ``dpclust fit -`` keeps the table it read from standard input (in the run folder,
#: so that ``dpclust resume`` finds it)
STDIN_FILE = "stdin.csv"


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
    if getattr(args, "alpha_sensitivity", None) and config.model != "dp":
        raise UsageError("--alpha-sensitivity applies to --model dp (the DP mixture's alpha)")
    data = _load(config)
    for message in data.warnings:
        _warn(message)
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

        def callback(iteration, state, info):
            if iteration + 1 >= stop:
                raise _Interrupt(iteration + 1)

    client = _dask_client(config)
    try:
        model = _estimator(config, data, out_dir, progress=not args.no_progress,
                           callback=callback, client=client)
        t0 = time.perf_counter()
        with _verdict_in_summary():
            model.fit(data.X)
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
            est.fit(data.X)
        rows.append(_sensitivity_row(text, est, time.perf_counter() - t0))
    return rows


def _sensitivity_row(alpha_text: str, model, seconds, main: bool = False) -> dict:
    trace = model.trace_
    kept = trace.kept

    def mean(a):
        return float(np.mean(_chains_of(a)[:, kept])) if len(kept) else None

    row = {"alpha": _alpha_setting(alpha_text), "n_clusters": mean(trace.n_clusters),
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
    from .estimator import checkpoint_iteration, checkpoint_seconds, load_checkpoint

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
    # the checkpoint knows the run's length, including an earlier `resume --iters`
    config = replace(config, n_iter=int(ckpt["params"]["n_iter"]))
    if args.no_plots:
        config = replace(config, plots=False)
    if args.iters is not None:
        if config.burn_in >= args.iters:
            raise UsageError(f"--iters ({args.iters}) must be larger than the run's burn-in "
                             f"({config.burn_in})")
        if args.iters < done:
            raise UsageError(f"--iters ({args.iters}) is less than the {done} "
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
                client=client)
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
    from .estimator import DPMixture

    model = DPMixture.load(model_path)
    data = _load(replace(config, data=str(Path(args.data).absolute()), truth=None,
                         sep=args.sep or config.sep, decimal=args.decimal or config.decimal))
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


def _add_dialect_args(group) -> None:
    """``--sep`` and ``--decimal``: how a text table is laid out, when detection is wrong."""
    group.add_argument("--sep", choices=("comma", "semicolon", "tab", "whitespace"),
                       help="text tables: the column separator (default: found in the file; "
                            "the summary says which)")
    group.add_argument("--decimal", choices=(".", ","),
                       help="text tables of numbers: the decimal mark (default: ',' when the "
                            "separator is not a comma and the numbers are written like 1,5)")


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
        from .ddcrp.estimator import DDCRPMixture

        return DDCRPMixture
    from .estimator import DPMixture

    return DPMixture


def _estimator(config: RunConfig, data: LoadedData, out_dir: Path, *, progress: bool,
               callback=None, client=None):
    from .families import DirichletMultinomial, GeneralizedMallows

    family = config.family
    if family == "multinomial" and config.concentration is not None:
        family = DirichletMultinomial(concentration=config.concentration)
    if family == "mallows" and (config.nu is not None or config.r is not None):
        family = GeneralizedMallows(nu=1.0 if config.nu is None else config.nu,
                                    r=1.0 if config.r is None else config.r)
    checkpoint = None
    if config.checkpoint_every is not None:
        checkpoint = str(out_dir / CHECKPOINT_FILE)
    chains = dict(n_chains=config.chains, n_jobs=_jobs(config, callback),
                  until_converged=config.until_converged, max_iter=config.max_iters)
    # a run that goes on until it converges keeps its default burn-in at half its length
    burn_in = None if config.until_converged and not config.burn_in_given else config.burn_in
    if config.model == "ddcrp":
        return _estimator_class(config)(
            family=family, alpha=parse_alpha(config.alpha), decay=config.decay,
            distances=data.distances, positions=data.positions, sequential=config.sequential,
            n_iter=config.n_iter, burn_in=burn_in, thin=config.thin,
            store_labels=config.store_labels, point_estimate=config.point_estimate,
            random_state=config.seed, progress=progress, checkpoint=checkpoint,
            checkpoint_every=config.checkpoint_every, callback=callback, **chains)
    return _estimator_class(config)(
        family=family, alpha=parse_alpha(config.alpha), sampler=config.sampler,
        n_iter=config.n_iter, burn_in=burn_in, thin=config.thin,
        store_labels=config.store_labels, init_clusters=config.init_clusters,
        init=config.init, point_estimate=config.point_estimate, random_state=config.seed, progress=progress,
        checkpoint=checkpoint, checkpoint_every=config.checkpoint_every, callback=callback,
        backend="dask" if client is not None else "local", client=client,
        partitions=config.partitions, **chains)


def _jobs(config: RunConfig, callback) -> int:
    """Processes for the chains: ``--jobs``, or one per chain up to the cores; one with a
    callback (``--stop-after``) or on a Dask cluster."""
    from ._chains import available_cores

    if callback is not None or config.distributed or config.chains == 1:
        return 1
    return config.jobs if config.jobs is not None else min(config.chains, available_cores())


@contextlib.contextmanager
def _verdict_in_summary():
    """The estimator's not-converged warning is left to the summary, the report and the
    closing line (:func:`_print_done`), which say it in the run's terms."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*has not converged", category=UserWarning)
        yield


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


def _prepare_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise DataError(f"--out {out_dir} exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    if not os.access(out_dir, os.W_OK):
        raise DataError(f"--out {out_dir} is not writable")


def _print_done(out_dir: Path, summary: dict) -> None:
    n, k = summary["data"]["n_samples"], summary["n_clusters"]
    what = "table" if "ddcrp" in summary else "cluster"
    point = "ranking" if "mallows" in summary else "point"
    line = f"{PROG}: {k} {what}{'s' if k != 1 else ''} in {n} {point}{'s' if n != 1 else ''}"
    if summary.get("metrics"):
        scores = ", ".join(f"{m.upper()} {v:.3f}" for m, v in summary["metrics"].items())
        line += f" ({scores})"
    files = "report.html, labels.csv, links.csv" if "ddcrp" in summary else (
        "report.html, labels.csv")
    print(f"{line}; results in {out_dir}{os.sep} ({files}, summary.json, trace.nc)")
    conv = summary.get("convergence")
    if conv is not None:
        from .diagnostics import QUANTITIES, quantity_name

        if conv["converged"]:
            print(f"{PROG}: converged: {conv['rule']}")
        else:
            names = ", ".join(quantity_name(q) for q in QUANTITIES if q in conv["failing"])
            print(f"{PROG}: NOT converged ({names} fail: {conv['rule']}); run more iterations"
                  f" (--iters) or more chains; the report's diagnostics table has the figures",
                  file=sys.stderr)


# --------------------------------------------------------------------------------------------
# data


def _load(config: RunConfig) -> LoadedData:
    """Load the data of a run: the demo, a file, or a table with a truth column; then the
    ``--subsample``, if any."""
    data = _load_rankings(config) if config.family == "mallows" else _load_table(config)
    return _subsampled(config, data)


def _subsampled(config: RunConfig, data: LoadedData) -> LoadedData:
    """``--subsample N``: N rows drawn without replacement from their own random stream of
    ``--seed`` (so a resumed run draws the same ones), kept in the data's order, with the
    truth, positions and distances that go with them."""
    if config.subsample is None:
        return data
    n_all = int(data.info["n_samples"])
    if config.subsample >= n_all:
        data.warnings.append(f"--subsample {config.subsample} is not fewer than the "
                             f"{n_all:,} rows of the data: all of them are fitted")
        return data
    rng = np.random.default_rng([config.seed, _SUBSAMPLE_STREAM])
    keep = np.sort(rng.choice(n_all, config.subsample, replace=False))
    data.X = data.X[keep]
    for name in ("truth", "positions"):
        if getattr(data, name) is not None:
            setattr(data, name, np.asarray(getattr(data, name))[keep])
    if data.distances is not None:
        data.distances = data.distances[keep][:, keep]
        if sp.issparse(data.distances):
            data.info["distance_pairs"] = int(data.distances.nnz)
    data.info["subsample"] = {"n": int(len(keep)), "of": n_all, "seed": int(config.seed)}
    data.info["n_samples"] = int(len(keep))
    if "n_nonzero" in data.info and sp.issparse(data.X):
        data.info["n_nonzero"] = int(data.X.nnz)
    if config.family == "mallows":
        data.info.update(_rankings_shape(data.X))
    return data


def _rankings_shape(X) -> dict:
    """What the summary says of a set of rankings: how many, of how many items, how long."""
    return {"n_samples": len(X), "n_items": int(X.n_items), "max_length": int(X.max_length),
            "mean_length": float(f"{float(np.mean(X.lengths)):.4g}")}


def _load_table(config: RunConfig) -> LoadedData:
    """The data of a run with points or documents: the demo, a file, or a table with a
    truth column."""
    kind = "counts" if config.family == "multinomial" else "dense"
    if config.data == _DEMO:
        from .datasets import load_demo, make_documents

        if config.family == "multinomial":
            X, y = make_documents(random_state=0)
            generator = "make_documents(random_state=0)"
        else:
            X, y = load_demo()
            generator = "load_demo()"
        info = {"source": _DEMO, "format": generator}
        data = LoadedData(X=X, truth=y, info=info)
    else:
        from .io import _as_labels, load_data, load_data_with_columns, parse_positions

        special = {}
        if config.truth is not None:
            special["label"] = config.truth
        if config.positions is not None:
            special["positions"] = config.positions
        values = {}
        if special:
            X, meta, values = load_data_with_columns(config.data, special, kind=kind,
                                                     column=config.columns, sep=config.sep,
                                                     decimal=config.decimal)
        else:
            column = None if config.columns is None else list(config.columns)
            X, meta = load_data(config.data, kind=kind, column=column, sep=config.sep,
                                decimal=config.decimal)
        info = {"source": meta["path"], "format": meta["format"]}
        if "dialect" in meta:
            info.update(read_as=meta["dialect"], separator=meta["separator"],
                        decimal=meta["decimal"])
        if meta.get("column_names") is not None:
            names = list(meta["column_names"])
            info["columns"] = names[:MAX_LISTED_COLUMNS]
            if len(names) > MAX_LISTED_COLUMNS:  # a wide file: the first ones, and a count
                info["columns_not_listed"] = len(names) - MAX_LISTED_COLUMNS
        truth = positions = None
        if config.truth is not None:
            info["truth_column"] = config.truth
            truth = _as_labels(values["label"])
        if config.positions is not None:
            positions = parse_positions(
                values["positions"],
                what=f"{meta['path']}: the positions column {config.positions!r}")
            info.update(_positions_info(config, positions))
        data = LoadedData(X=X, truth=truth, info=info, positions=positions)
    if config.distances is not None:
        from .io import load_distances

        data.distances = load_distances(config.distances, n=int(data.X.shape[0]))
        data.info["distances"] = config.distances
        if sp.issparse(data.distances):
            data.info["distance_pairs"] = int(data.distances.nnz)
    data.info["n_samples"] = int(data.X.shape[0])
    data.info["n_features"] = int(data.X.shape[1])
    if kind == "counts" and sp.issparse(data.X):
        data.info["n_nonzero"] = int(data.X.nnz)
    if config.vocab is not None:
        from .io import load_vocabulary

        words = load_vocabulary(config.vocab)
        if len(words) != data.info["n_features"]:
            raise DataError(f"{config.vocab} has {len(words)} words, but the data have "
                            f"{data.info['n_features']} columns (one per word)")
        data.vocabulary = words
        data.info["vocabulary"] = config.vocab
    return data


def _load_rankings(config: RunConfig) -> LoadedData:
    """Load the rankings of ``--family mallows``: a bundled data set, a CSV table of rankings
    (:func:`~dpclust.rankings.read_rankings_csv`) or a PrefLib file
    (:func:`~dpclust.rankings.read_preflib`).

    Items without names are named as the file numbers them (from ``--index-base`` in a CSV
    file, from 1 in a PrefLib file), so that the summary and the report speak of the items
    as the file does.
    """
    import warnings

    from .io import read_preflib, read_rankings_csv
    from .rankings import Rankings

    messages = []
    if config.data in DATASETS:
        from . import datasets

        _, description, loader = DATASETS[config.data]
        X = getattr(datasets, loader)()
        info = {"source": config.data, "format": f"{loader}()", "dataset": description}
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            if _is_preflib(config.data):
                X = read_preflib(config.data)
                first_id = 1
                fmt = f"PrefLib {_preflib_suffix(config.data)}"
            else:
                from .io import load_item_names

                items = None if config.items is None else load_item_names(config.items)
                first_id = config.index_base
                kwargs = {} if config.missing is None else {"missing": config.missing}
                try:
                    X = read_rankings_csv(config.data, items=items, index_base=first_id,
                                          sep=config.sep, **kwargs)
                except DataError as exc:
                    raise DataError(_option_names(str(exc))) from None
                fmt = "rankings table"
                if first_id is None and items is None and X.items is not None and all(
                        name.isdigit() for name in X.items):
                    # ids, their base inferred (0 when some ranking uses 0, else 1)
                    fmt += f" (item ids from {X.items[0]}, inferred: --index-base sets it)"
                first_id = first_id or 0
        messages = [_option_names(str(w.message)) for w in caught
                    if issubclass(w.category, UserWarning)]
        if X.items is None:
            fmt += f" (item ids from {first_id})"
            X = Rankings._from_valid(X.orders, X.lengths, X.n_items,
                                     tuple(str(first_id + j) for j in range(X.n_items)))
        info = {"source": config.data, "format": fmt}
        if config.items is not None:
            info["items"] = config.items
        if config.missing is not None:
            info["missing"] = list(config.missing)
    info.update(_rankings_shape(X))
    return LoadedData(X=X, truth=None, info=info, warnings=messages)


def _option_names(message: str) -> str:
    """A rankings loader's hint in terms of the command line: ``missing=('0',)`` becomes
    ``--missing 0``, ``index_base=1`` ``--index-base 1`` and ``items=`` ``--items FILE``."""
    message = re.sub(r"missing=\('((?:[^'\\]|\\.)*)',\)", r"--missing \1", message)
    message = re.sub(r"index_base=(\d+)", r"--index-base \1", message)
    message = message.replace("index_base= ", "--index-base ")
    return re.sub(r"\bpass items=", "pass --items FILE", message)


def _positions_info(config: RunConfig, positions: np.ndarray) -> dict:
    """What the summary says about the positions; checks their order for ``--sequential``."""
    dates = positions.dtype.kind == "M"
    info = {"positions_column": config.positions,
            "positions": "dates and times (distances in days)" if dates else "numbers",
            "positions_range": [_position_text(positions.min()),
                                _position_text(positions.max())]}
    if config.sequential:
        back = np.flatnonzero(positions[1:] < positions[:-1])
        if back.size:
            i = int(back[0]) + 1
            raise DataError(
                f"--sequential links each row only to itself or to earlier rows, so the "
                f"positions column {config.positions!r} must be in non-decreasing order, but "
                f"data row {i + 1} ({_position_text(positions[i])}) comes before data row "
                f"{i} ({_position_text(positions[i - 1])}); sort the file by that column")
    return info


def _position_text(value):
    """A position for JSON and messages: a float, or an ISO 8601 date and time."""
    if isinstance(value, np.datetime64):
        return str(value)
    return float(value)


# --------------------------------------------------------------------------------------------
# outputs


def _write_outputs(out_dir: Path, config: RunConfig, data: LoadedData, model, *,
                   total_seconds: float, command_line, resume_command_line=None,
                   resumed_from=None, alpha_sensitivity=None) -> dict:
    """Write labels.csv, trace.csv, summary.json, the report (and label samples); return the
    summary."""
    from .io import save_labels_csv

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
        from .report import write_report

        similarity = None
        if data.info["n_samples"] <= MAX_SIMILARITY_SAMPLES and not config.distributed:
            similarity = model.posterior_similarity()  # kept draws stay on a Dask cluster
        write_report(out_dir, summary, trace_dict, data.X, labels, similarity=similarity,
                     positions=data.positions)
    else:
        from .report import render_html

        (out_dir / "report.html").write_text(render_html(summary, {}, labels=labels),
                                             encoding="utf-8")
    return summary


def _summary(config: RunConfig, data: LoadedData, model, labels, *, total_seconds,
             command_line, resume_command_line, resumed_from, out_dir=None) -> dict:
    from .metrics import ari, nmi
    from .samplers import resolve_sampler_name

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
        from .ddcrp.decay import parse_decay

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


def _ddcrp_summary(config: RunConfig, data: LoadedData, model) -> dict:
    """The ddCRP part of the summary: decay, distances, tables."""
    from .ddcrp.decay import parse_decay

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
    from .report.plots import LARGE_CLUSTER_SHARE, theta_by_rank
    from .samplers import resolve_sampler_name

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
    from .families.mallows import log_psi

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
