"""The ``dpclust`` argument parser: subcommands ``fit``, ``resume``, ``predict``, ``score``
and ``compare``."""

from __future__ import annotations

import argparse

from .. import __version__
from ..chains.length import DEFAULT_MAX_TIME
from ..families import FAMILIES
from .config import (add_renamed, AUTO, DATASETS, MODEL_FILE, PROG, RANKINGS_FAMILY, STDIN_FILE,
                     _EXIT_USAGE, _alpha_type, _coarsening_type, _column_types_type, _prior_type, _columns_type,
                     _decay_type, _int_type, _loss_type, _missing_type, _option_type, _truth_type)


# --------------------------------------------------------------------------------------------
# the parser


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors as one line, ``dpclust: error: <message>``, exit status 2."""

    def error(self, message):
        self.exit(_EXIT_USAGE, f"{PROG}: error: {message} (see '{self.prog} --help')\n")




_FIT_EPILOG = """\
examples:
  dpclust fit                                   # the bundled 2-D demo, report in dpclust_output/
  dpclust fit points.csv --out run1 --n-iter 500 --random-state 3
  dpclust fit iris.csv --truth species --columns sepal_length,sepal_width
  dpclust fit survey.csv --family auto      # mixed columns with holes: a kind per column
  dpclust fit survey.csv --family auto --column-type zip=categorical,visits=poisson \
      --weights w --truth group             # kinds overridden, rows weighted by column w
  dpclust fit table.parquet --alpha gamma:1,1 --sampler explicit
  dpclust fit docword.kos.txt --family multinomial --vocab vocab.kos.txt --concentration 0.1
  dpclust fit big.npy --checkpoint-every 50 --out big_run   # if stopped: dpclust resume big_run
  dpclust fit news.csv --model ddcrp --family multinomial --positions day --decay logistic:14 \
      --sequential                              # distance dependent CRP over time (in days)
  dpclust fit cites.npy --model ddcrp --distances hops.npz --decay window:3
  dpclust fit --dataset dublin-west --n-iter 300 # Irish ballots: rankings of 9 candidates
  dpclust fit ballots.csv --family mallows --missing 0 --index-base 1 --items names.txt
  dpclust fit votes.soi --family mallows --sampler beta-gibbs   # PrefLib .soi/.toi/.soc/.toc
  dpclust fit mayor_cvr.csv --family mallows --skipped exhaust --group Precinct  # a CVR

data formats: CSV/TSV/TXT (header row optional, detected), .npy, Parquet; for
--family auto, table and the single-kind families (diagonal, bernoulli, categorical,
poisson) the same files read as tables of mixed columns: text kept, empty cells and
markers such as NA, ?, -, #N/A read as missing (each rule counted in the summary); for
--family multinomial also .npz (scipy.sparse.save_npz) and UCI bag-of-words docword files;
for --family mallows a CSV/TSV/TXT table of rankings (one a row, best first, item names or
ids; a row ends at its first empty or --missing cell), a PrefLib .soi/.toi/.soc/.toc file,
or a cast-vote record (rank columns such as 'Choice 1' with markers such as undervote,
overvote, skipped, write-in; 'count: a > b' lines; .abif), each counting rule it applies
counted in the summary.
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
  dpclust fit data.csv --n-iter 2000 --checkpoint-every 100 --out run1   # interrupted ...
  dpclust resume run1                  # ... continues from run1/checkpoint.npz
  dpclust resume run1 --n-iter 4000     # extend a finished run to 4000 iterations in total
  dpclust resume run1 --data new/place/data.csv   # the data file was moved

The data are reloaded from the path recorded in DIR/run.json (or --data) and must be
unchanged (checked by fingerprint).  The labels are exactly those an uninterrupted run with
the same seed would give.
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``dpclust`` argument parser (subcommands ``fit`` and ``resume``)."""
    parser = _ArgumentParser(
        prog=PROG,
        description="Bayesian nonparametric clustering: Dirichlet-process mixtures fitted by "
                    "MCMC, where the data decide how many clusters there are.",
        epilog="Run 'dpclust fit --help', 'dpclust compare --help' or 'dpclust resume --help' "
               "for the options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_fit(sub)
    _add_resume(sub)
    _add_predict(sub)
    from .compare import add_compare_parser

    add_compare_parser(sub, _add_data_args, _add_rankings_reading)
    return parser


def _add_fit(sub) -> None:
    """``dpclust fit``: its options, group by group."""
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
    model = _add_model_args(fit)
    _add_family_args(fit, model)
    _add_ddcrp_args(fit)
    _add_chain_args(fit)
    _add_dask_args(fit)
    data = _add_data_args(fit)
    data.add_argument("--weights", type=_truth_type, metavar="COLUMN",
                      help="column (name or 0-based index) of row weights, positive numbers, "
                           "left out of the features: whole numbers repeat a row that many "
                           "times (every family); other numbers raise the row's likelihood "
                           "to that power (the table families: table, diagonal, bernoulli, "
                           "categorical, poisson)")
    _add_output_args(fit)


def _add_model_args(fit):
    """The model: ``--model``, ``--family``, ``--sampler``, ``--alpha`` and ``--prior``;
    returns the group."""
    from ..priors import PRIORS
    from ..samplers import SAMPLERS

    model = fit.add_argument_group("model")
    model.add_argument("--model", choices=("dp", "ddcrp"), default="dp",
                       help="'dp': Dirichlet-process mixture; 'ddcrp': distance dependent CRP "
                            "mixture, where nearby rows (in time, space or a given distance) "
                            "tend to share a cluster (default: %(default)s)")
    model.add_argument("--family", choices=[AUTO] + sorted(FAMILIES), help=_family_help())
    model.add_argument("--sampler", choices=["auto"] + sorted(SAMPLERS),
                       help=_sampler_help())
    model.add_argument("--alpha", type=_alpha_type, default="1.0", metavar="A",
                       help="DP concentration (the ddCRP's self-link weight): a positive "
                            "number, or gamma:SHAPE,RATE to put a Gamma prior on it and "
                            "resample it (default: %(default)s)")
    model.add_argument("--prior", type=_prior_type, metavar="PRIOR",
                       help="the prior on partitions: " + "; ".join(
                           cls.spec_help for cls in PRIORS.values())
                       + ". Pitman-Yor has more, smaller clusters than the DP; the mixture of "
                         "finite mixtures puts a prior on the number of components K, whose "
                         "posterior does not keep growing with N (default: dp with --alpha; "
                         "--model dp, samplers gibbs, explicit and gibbs+sams, or fsd for "
                         "finite)")
    model.add_argument("--coarsening", type=_coarsening_type, metavar="A",
                       help="fit the coarsened posterior (Miller & Dunson 2019): the mixture "
                            "likelihood raised to zeta = A / (A + N), which tolerates a misfit "
                            "of about 1/A nats per point between the data and the component "
                            "family, so that K stops growing with N on real data; 'auto' "
                            "chooses A at the elbow of fit against complexity over a short "
                            "grid (shown in the report). The model is then a sparse finite "
                            "mixture (--prior finite:K, default finite:20) fitted by the "
                            "'coarsened' sampler; 'exact': the exact posterior (default: "
                            "the family's default, the exact posterior but for "
                            "plackett-luce rankings, coarsened at 100 unless --sampler, "
                            "--prior or --alpha asks otherwise; --model dp)")
    model.add_argument("--alpha-sensitivity", type=_alpha_type, nargs="+", metavar="A",
                       help="after the fit, fit again (one chain, same settings) with each of "
                            "these alphas (numbers or gamma:SHAPE,RATE) and tabulate the "
                            "posterior number of clusters in the summary and report "
                            "(--model dp only)")
    return model


def _sampler_help() -> str:
    """The ``--sampler`` help, from each sampler's own one-line description."""
    from ..samplers import AUTO_SUBCLUSTER_FROM, describe_samplers

    lines = [f"'auto' (the default): gibbs below {AUTO_SUBCLUSTER_FROM:,} points (documents: "
             "gibbs+sams; a prior other than dp: gibbs+sams, or fsd for finite:K from "
             f"{AUTO_SUBCLUSTER_FROM:,}), subcluster from there on; rankings and tables with "
             "holes: their family's sampler; coarsened with --coarsening"]
    lines += [f"'{name}': {text}" for name, text in describe_samplers().items()]
    return "; ".join(lines) + " (--model dp only)"


def _family_help() -> str:
    """``--family``'s help, from what each registered family says it describes."""
    what = ", ".join(f"'{name}' for {family.describes}" for name, family in FAMILIES.items())
    bundled = "; ".join(f"{family} with --dataset {name}"
                        for name, (family, _, _) in DATASETS.items())
    return (f"component family: {what}; '{AUTO}' picks one from the data (gaussian for "
            f"complete numbers, table for text columns, 0/1 columns, a scale of 3 to 12 "
            f"whole numbers, holes or a column of "
            f"ids, which it leaves out; documents for a sparse file of counts or with "
            f"--vocab; {RANKINGS_FAMILY} for a file of rankings; said on stderr and in the "
            f"summary) (default: {AUTO}; {bundled})")


def _add_family_args(fit, model) -> None:
    """Every registered family's hyperparameters (``ConjugateFamily.hyperparameters``), in
    the "model" group or in the family's own group (``option_group``), there followed by the
    options that read the family's kind of data."""
    groups, added = {}, set()
    for family in FAMILIES.values():
        group = model
        if family.option_group is not None:
            if family.option_group not in groups:
                groups[family.option_group] = fit.add_argument_group(family.option_group)
            group = groups[family.option_group]
        for hp in family.hyperparameters:
            if hp.name not in added:
                added.add(hp.name)
                group.add_argument(hp.option, dest=hp.name, type=_option_type(hp.type),
                                   metavar=hp.metavar, help=hp.help)
        reader = _DATA_KIND_ARGS.get(family.data_kind)
        if reader is not None and family.data_kind not in added:
            added.add(family.data_kind)
            reader(group)


def _add_rankings_reading(rankings) -> None:
    """How to read a CSV file of rankings, or a cast-vote record."""
    from ..io.cvr_rules import OVERVOTE_RULES, SKIPPED_RULES, WRITE_IN_RULES

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
    rankings.add_argument("--cvr", action="store_true", default=None,
                          help="read DATA as cast-vote records; detected when DATA is one "
                               "(an .abif file, 'count: ballot' lines, or a header of rank "
                               "columns beside other columns or above markers such as "
                               "undervote), and implied by the five options below")
    rankings.add_argument("--skipped", choices=SKIPPED_RULES,
                          help="a skipped rank followed by later choices: skip (the later "
                               "choices move up; the default), skip-one (past one skipped "
                               "rank, not two in a row) or exhaust (the ranking stops there)")
    rankings.add_argument("--overvote", choices=OVERVOTE_RULES,
                          help="an overvoted rank: exhaust (the ranking ends before it; the "
                               "default) or skip (passed over)")
    rankings.add_argument("--write-ins", choices=WRITE_IN_RULES,
                          help="write-ins: candidate (one candidate 'Write-in'; the default) "
                               "or drop (read as skipped ranks)")
    rankings.add_argument("--group", metavar="COLUMN",
                          help="a column of a cast-vote record (such as Precinct) kept as "
                               "each ballot's group; other columns are ignored")
    rankings.add_argument("--contest", metavar="TEXT",
                          help="in a cast-vote record of several contests, the rank columns "
                               "whose header contains TEXT")


def _add_table_reading(group) -> None:
    """How to read a table of mixed columns: a kind per column."""
    group.add_argument("--column-type", dest="column_types", type=_column_types_type,
                       action="append", metavar="NAME=KIND",
                       help="read column NAME (a name, or a 0-based index) as KIND: "
                            "gaussian, bernoulli, categorical, poisson (counts, never "
                            "inferred) or drop (left out); repeat it or separate pairs by "
                            "commas (default: each kind inferred from the column's values, "
                            "said on stderr and in the summary; --family table or auto)")


#: options that read one kind of data, added beside the options of the family that reads it
#: (``--vocab``, for counts, is among the data options)
_DATA_KIND_ARGS = {"rankings": _add_rankings_reading, "table": _add_table_reading}


def _add_ddcrp_args(fit) -> None:
    """The distance dependent CRP's decay and distances."""
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


def _seconds(text: str) -> float:
    """A number of seconds, at least 0 (``none``: no limit, as 0)."""
    if text.strip().lower() in ("none", "inf"):
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text}")
    return value


def _add_chain_args(fit) -> None:
    """The chain: its length, seed, start, chains and checkpoints."""
    chain = fit.add_argument_group("chain")
    add_renamed(chain, "--n-iter", dest="iters", type=_int_type(1), metavar="N",
                help="MCMC iterations (sweeps over the data) of each chain (default: "
                     "200, then longer until the chains pass the convergence rule, "
                     "within --max-iter and --max-time)")
    chain.add_argument("--burn-in", type=_int_type(0), metavar="B",
                       help="iterations discarded before draws are kept (default: half the "
                            "run)")
    chain.add_argument("--thin", type=_int_type(1), default=1, metavar="T",
                       help="keep every T-th draw after the burn-in (default: %(default)s)")
    add_renamed(chain, "--random-state", dest="seed", type=_int_type(0), metavar="S",
                help="random seed; the same seed gives the same result when the run's "
                     "length does not depend on the clock (--n-iter without "
                     "--until-converged, or --max-time none) (default: a seed drawn at "
                     "random, written in the summary and run.json)")
    chain.add_argument("--init-clusters", type=_int_type(1), metavar="C",
                       help="start from C clusters (default: 10; --model dp only)")
    chain.add_argument("--init", choices=("auto", "random", "kmeans"),
                       help="how the starting clusters are made: points at random, or k-means; "
                            "auto: k-means for the sub-cluster sampler (default: auto; "
                            "--model dp only)")
    chain.add_argument("--point-estimate", type=_loss_type, default="auto", metavar="LOSS",
                       help="loss whose posterior expectation the reported partition "
                            "minimises, searched over all partitions: vi (variation of "
                            "information), binder, omari (1 - adjusted Rand), nvi, nid; vi "
                            "and binder take a weight, e.g. 'vi(a=0.5)' splits more; auto: "
                            "vi, and vi(a=0.5) for rankings (default: %(default)s)")
    add_renamed(chain, "--n-chains", dest="chains", type=_int_type(1), default=4,
                metavar="C",
                help="independent chains, their kept draws pooled; R-hat compares "
                     "them (one chain gets a split-R-hat verdict over its quarters, "
                     "blind to modes it never visited) (default: %(default)s)")
    add_renamed(chain, "--n-jobs", dest="jobs", type=_int_type(1), metavar="J",
                help="processes for the chains (default: the chains start in this "
                     "process and move to one process per chain, up to the cores, "
                     "when the rest of the run would take more than 5 s); the "
                     "result does not depend on J")
    chain.add_argument("--until-converged", action="store_true",
                       help="with --n-iter: after them, while the convergence rule fails, "
                            "make the run longer (the burn-in stays half of it unless "
                            "--burn-in is given), within --max-iter (10 x --n-iter) and "
                            "--max-time; then say whether it converged (the default "
                            "without --n-iter, and with --max-iter)")
    add_renamed(chain, "--max-iter", dest="max_iters", type=_int_type(1), metavar="N",
                help="the longest run that goes on until it converges: with --n-iter, "
                     "the run goes on after them until the rule passes, up to N, as "
                     "max_iter in Python (default: 10 x --n-iter with --until-converged, "
                     "200,000 without --n-iter)")
    chain.add_argument("--max-time", type=_seconds, default=DEFAULT_MAX_TIME, metavar="S",
                       help="seconds: a run that goes on until it converges is made longer "
                            "only as far as its pace says it ends within S of its start; "
                            "none (or 0): no limit (default: %(default)s)")
    chain.add_argument("--store-labels", action="store_true",
                       help="also write every kept partition to label_samples.npz")
    chain.add_argument("--checkpoint-every", type=_int_type(1), metavar="K",
                       help="write DIR/checkpoint.npz every K iterations (and at the end), so "
                            "that 'dpclust resume DIR' can continue an interrupted run")
    chain.add_argument("--stop-after", type=_int_type(1), metavar="N", help=argparse.SUPPRESS)
    # --stop-after N (for testing): behave as if Ctrl-C were pressed after iteration N.


def _add_dask_args(fit) -> None:
    """The chain on a Dask cluster."""
    dask = fit.add_argument_group(
        "Dask cluster (the sub-cluster sampler; pip install 'dpclust[dask]')")
    dask.add_argument("--scheduler", metavar="ADDRESS",
                      help="run the chain on the Dask cluster at ADDRESS (e.g. "
                           "tcp://10.0.0.1:8786); the data are shipped to its workers once")
    dask.add_argument("--workers", type=_int_type(1), metavar="N",
                      help="run the chain on a new local Dask cluster of N worker processes")
    dask.add_argument("--partitions", type=_int_type(1), metavar="P",
                      help="split the data into P partitions (default: one per worker); the "
                           "same --random-state and P give the same labels with or without Dask")


def _add_data_args(fit):
    """Which data, which columns, how to read them; returns the group."""
    data = fit.add_argument_group("data")
    data.add_argument("--dataset", choices=sorted(DATASETS),
                      help="cluster a bundled data set instead of DATA: 'dublin-west', the "
                           "29,988 ballots of the 2002 Irish general election in Dublin West "
                           "(rankings of 9 candidates; --family mallows unless another family "
                           "of rankings is given)")
    data.add_argument("--subsample", type=_int_type(1), metavar="N",
                      help="fit N of the rows (rankings) drawn at random with --random-state, kept in "
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
    return data


def _add_output_args(fit) -> None:
    """Where the outputs go and which."""
    out = fit.add_argument_group("output")
    out.add_argument("--out", default="dpclust_output", metavar="DIR",
                     help="output folder, created if needed (default: %(default)s)")
    out.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    out.add_argument("--no-plots", action="store_true",
                     help="skip the figures (report.html is still written, with tables only)")


def _add_resume(sub) -> None:
    """``dpclust resume DIR``."""
    res = sub.add_parser(
        "resume", help="continue a checkpointed run",
        description="Continue a run started with 'dpclust fit --checkpoint-every K' from "
                    "DIR/checkpoint.npz and write the same outputs as fit.",
        epilog=_RESUME_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    res.add_argument("dir", metavar="DIR", help="the --out folder of the interrupted run")
    add_renamed(res, "--n-iter", dest="iters", type=_int_type(1), metavar="N",
                help="new total number of iterations (default: that of the original run)")
    res.add_argument("--data", metavar="PATH",
                     help="the run's data file, moved or renamed since the run started: used "
                          "when its content is the same (checked by fingerprint)")
    res.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    res.add_argument("--no-plots", action="store_true",
                     help="skip the figures (report.html is still written, with tables only)")


def _add_predict(sub) -> None:
    """``dpclust predict`` and ``dpclust score``: new rows under a fitted model."""
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


def _add_dialect_args(group) -> None:
    """``--sep`` and ``--decimal``: how a text table is laid out, when detection is wrong."""
    group.add_argument("--sep", choices=("comma", "semicolon", "tab", "whitespace"),
                       help="text tables: the column separator (default: found in the file; "
                            "the summary says which)")
    group.add_argument("--decimal", choices=(".", ","),
                       help="text tables of numbers: the decimal mark (default: ',' when the "
                            "separator is not a comma and the numbers are written like 1,5)")
