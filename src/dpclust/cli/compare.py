"""``dpclust compare``: which model fits the data better, by held-out log predictive density.

Each candidate is a DP mixture fitted to the same training rows and scored on the same
held-out rows (:func:`dpclust.compare_models`).  The common case is one flag per family,
``--family mallows --family plackett-luce``; configurations of one family are ``--model``
specs, ``--model family=mallows --model family=mallows,coarsening=100``, in the grammar
of :func:`parse_model_spec`.  The data load as ``dpclust fit`` loads them
(:func:`dpclust.cli.data._load`), so files, bundled data sets and ``--subsample`` mean the
same.

Writes into ``--out DIR``: ``comparison.csv`` (the table, best first), ``comparison.json``
(the table, the sentence, the settings and the data), ``pointwise.csv`` (every held-out
row's log density under each model), ``comparison.html`` with ``comparison.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..families import FAMILIES
from .config import (add_renamed, DATASETS, PROG, RunConfig, UsageError, _DATA_KIND_OPTIONS, _DEMO,
                     _DEMO_DATA, _EXIT_OK, _coarsening_type, _families_reading, _prior_type,
                     parse_alpha)

#: the keys of a ``--model`` spec besides the family's hyperparameters
SPEC_KEYS = ("name", "family", "coarsening", "prior", "alpha", "sampler")
#: the format of ``comparison.json``
_FORMAT = 1


@dataclass(frozen=True)
class Candidate:
    """One model of a comparison as the command line gave it: a name and the settings of
    its :class:`~dpclust.DPMixture` (``alpha`` and ``prior`` as text, ``hyperparameters``
    as ``(name, value)`` pairs of the family's)."""

    name: str
    family: str
    coarsening: float | str | None = None
    prior: str | None = None
    alpha: str = "1.0"
    sampler: str = "auto"
    hyperparameters: tuple = ()

    def settings(self) -> dict:
        """What the page and ``comparison.json`` say of the model."""
        d = asdict(self)
        d.pop("name")
        d.update(dict(d.pop("hyperparameters")))
        return d


def parse_model_spec(text: str) -> dict:
    """A ``--model`` spec: ``key=value`` pairs separated by commas.

    The keys are ``family`` (required), ``name`` (default: the family and the other
    settings), ``coarsening`` (a number, ``auto`` or ``none``), ``prior``, ``alpha``,
    ``sampler``, and the family's hyperparameters (``nu``, ``r`` for mallows).  A comma
    followed by no ``key=`` continues the value before it, so ``prior=finite:20,0.05`` and
    ``alpha=gamma:1,1`` read as they do elsewhere.

    Returns
    -------
    dict
        The given keys and their values (validated; ``coarsening=none`` is None).

    Raises
    ------
    argparse.ArgumentTypeError
        For an unknown key or family, a key given twice, or a value that does not parse.
    """
    pairs = []
    for token in text.split(","):
        if "=" in token:
            key, value = token.split("=", 1)
            pairs.append([key.strip().lower(), value.strip()])
        elif pairs:
            pairs[-1][1] += "," + token.strip()
        else:
            raise argparse.ArgumentTypeError(f"expected key=value pairs (e.g. "
                                             f"family=mallows,coarsening=100), got {text!r}")
    spec = {}
    for key, value in pairs:
        if key in spec:
            raise argparse.ArgumentTypeError(f"{key}= is given twice in {text!r}")
        spec[key] = value
    family = spec.get("family", "").lower()
    if family not in FAMILIES:
        raise argparse.ArgumentTypeError(f"{text!r} needs family= one of {sorted(FAMILIES)}")
    spec["family"] = family
    hps = {hp.name: hp for hp in FAMILIES[family].hyperparameters}
    for key in spec:
        if key not in SPEC_KEYS and key not in hps:
            known = ", ".join([*SPEC_KEYS, *hps])
            raise argparse.ArgumentTypeError(f"unknown key {key}= in {text!r} (known for "
                                              f"{family}: {known})")
    if "coarsening" in spec:
        spec["coarsening"] = (None if spec["coarsening"].lower() == "none"
                              else _coarsening_type(spec["coarsening"]))
    if "prior" in spec:
        spec["prior"] = _prior_type(spec["prior"])
    if "alpha" in spec:
        parse_alpha(spec["alpha"])
    if "sampler" in spec:
        from ..samplers import SAMPLERS

        if spec["sampler"] not in ("auto", *SAMPLERS):
            raise argparse.ArgumentTypeError(f"unknown sampler {spec['sampler']!r} in "
                                             f"{text!r}")
    for key, hp in hps.items():
        if key in spec:
            try:
                spec[key] = hp.type(spec[key])
            except ValueError as exc:
                raise argparse.ArgumentTypeError(f"{key}= in {text!r}: {exc}") from None
    spec["_text"] = text
    return spec


def _family_spec(text: str) -> dict:
    """``--family NAME``: a candidate with that family and the shared settings."""
    family = text.strip().lower()
    if family not in FAMILIES:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from "
                                         f"{', '.join(sorted(FAMILIES))})")
    return {"family": family}


def _test_size_type(text: str):
    """``--test-size``: a share in (0, 1) or a number of rows."""
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"expected a share in (0, 1) or a number of "
                                             f"rows, got {text!r}") from None
        return value
    if value < 2:
        raise argparse.ArgumentTypeError(f"hold out at least 2 rows, got {value}")
    return value


def add_compare_parser(sub, add_data_args, add_rankings_reading) -> None:
    """``dpclust compare``'s options (the data options are ``fit``'s)."""
    cmp = sub.add_parser(
        "compare", help="which model fits the data better (held-out log predictive density)",
        description="Fit each model to the same training rows and score the same held-out "
                    "rows by their log posterior predictive density: the model with the "
                    "higher mean predicts new data better, by so many nats per row.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    cmp.add_argument("data", nargs="?", metavar="DATA",
                     help="data file, read as 'dpclust fit' reads it (default: the bundled "
                          "data of the models' kind: the Dublin West ballots for rankings)")
    models = cmp.add_argument_group("models (at least two, in any mix)")
    models.add_argument("--family", dest="candidates", action="append", type=_family_spec,
                        metavar="FAMILY",
                        help=f"a model of this family ({', '.join(sorted(FAMILIES))}) with "
                             "the shared settings below; repeat for each family")
    models.add_argument("--model", dest="candidates", action="append", type=parse_model_spec,
                        metavar="SPEC",
                        help="a model given as key=value pairs: family= (required), name=, "
                             "coarsening= (a number, auto or none), prior=, alpha=, "
                             "sampler=, and the family's hyperparameters (e.g. nu=, r= for "
                             "mallows); e.g. family=mallows,coarsening=100; a comma before "
                             "no key= belongs to the value, as in prior=finite:20,0.05")
    models.add_argument("--coarsening", type=_coarsening_type, metavar="A",
                        help="fit every --family model's coarsened posterior (Miller & "
                             "Dunson 2019) at alpha_c = A, or 'auto' (a --model spec sets "
                             "its own)")
    split = cmp.add_argument_group("split and chains")
    split.add_argument("--test-size", type=_test_size_type, metavar="T",
                       help="held-out share of the rows (0 < T < 1) or their number "
                            "(default: 0.2)")
    split.add_argument("--folds", type=_int(2), metavar="K",
                       help="K-fold cross-validation instead of one split: every model "
                            "fitted K times, every row held out once (K times slower)")
    add_renamed(split, "--n-iter", dest="iters", type=_int(1), default=200, metavar="N",
                help="MCMC iterations of each fit (default: %(default)s)")
    split.add_argument("--burn-in", type=_int(0), metavar="B",
                       help="iterations discarded before draws are kept (default: half of "
                            "--n-iter)")
    add_renamed(split, "--n-chains", dest="chains", type=_int(1), default=1, metavar="C",
                help="chains of each fit (default: %(default)s)")
    add_renamed(split, "--random-state", dest="seed", type=_int(0), default=0, metavar="S",
                help="seeds the split and every fit (default: %(default)s)")
    data = add_data_args(cmp)
    add_rankings_reading(data)
    out = cmp.add_argument_group("output")
    out.add_argument("--out", default="dpclust_compare", metavar="DIR",
                     help="output folder, created if needed (default: %(default)s)")
    out.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    out.add_argument("--no-plots", action="store_true",
                     help="skip the figure (comparison.html is still written)")


_EPILOG = """\
examples:
  dpclust compare --dataset dublin-west --subsample 3000 --family mallows \\
      --family plackett-luce                     # which family fits the ballots better
  dpclust compare ballots.csv --family mallows --family plackett-luce --coarsening 100
  dpclust compare points.csv --model family=gaussian \\
      --model family=gaussian,prior=finite:1,name=one-cluster --test-size 0.3
  dpclust compare votes.soi --model family=mallows --model family=mallows,coarsening=auto \\
      --folds 5

Outputs in --out: comparison.csv, comparison.json, pointwise.csv, comparison.html (+ PNG).
The table's elpd is the mean held-out log predictive density per row (nats); elpd_diff the
paired difference to the best model and se_diff its standard error over the held-out rows.
"""


def _int(minimum: int):
    from .config import _int_type

    return _int_type(minimum)


# --------------------------------------------------------------------------------------------
# the command


def candidates_from_args(args) -> list[Candidate]:
    """The models of ``dpclust compare``, in the order given, with distinct names."""
    given = args.candidates or []
    if len(given) < 2:
        raise UsageError("dpclust compare needs at least two models: --family A --family B, "
                         "or --model SPEC twice")
    out = []
    for spec in given:
        settings = {k: v for k, v in spec.items() if not k.startswith("_") and k != "name"}
        if "_text" not in spec and args.coarsening is not None:
            settings["coarsening"] = args.coarsening
        hps = tuple((hp.name, settings.pop(hp.name))
                    for hp in FAMILIES[settings["family"]].hyperparameters
                    if hp.name in settings)
        cand = Candidate(name=spec.get("name") or _default_name(settings, hps),
                         hyperparameters=hps, **settings)
        _check_candidate(cand)
        out.append(cand)
    names = [c.name for c in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"two models are called {twice[0]!r}: give each a name= in its "
                         f"--model spec (or compare different settings)")
    kinds = {FAMILIES[c.family].data_kind for c in out}
    if len(kinds) > 1:
        said = ", ".join(f"{c.name} reads {FAMILIES[c.family].data_kind}" for c in out)
        raise UsageError(f"the models must read the same kind of data: {said}")
    return out


def _default_name(settings: dict, hps: tuple) -> str:
    def text(v):
        return f"{v:g}" if isinstance(v, float) else str(v)

    rest = [f"{k}={text(v)}" for k, v in settings.items() if k != "family" and v is not None]
    rest += [f"{k}={text(v)}" for k, v in hps]
    return f"{settings['family']} ({', '.join(rest)})" if rest else settings["family"]


def _check_candidate(c: Candidate) -> None:
    """What the estimator would refuse only after the models before it were fitted."""
    if c.coarsening is None:
        return
    if c.sampler not in ("auto", "coarsened"):
        raise UsageError(f"model {c.name!r}: coarsening is fitted by the 'coarsened' "
                         f"sampler, not {c.sampler!r}")
    if c.alpha != "1.0":
        raise UsageError(f"model {c.name!r}: alpha is the Dirichlet process's; under "
                         "coarsening give the finite mixture's in prior=finite:K,ALPHA")
    if c.prior is not None:
        from ..priors import get_prior

        if get_prior(c.prior).name != "finite":
            raise UsageError(f"model {c.name!r}: coarsening fits a finite mixture: use "
                             f"prior=finite:K, not {c.prior}")


def _data_config(args, family: str) -> RunConfig:
    """The RunConfig that loads the data as ``dpclust fit`` would for ``family``."""
    kind = FAMILIES[family].data_kind
    if args.dataset is not None:
        if args.data is not None:
            raise UsageError(f"give DATA or --dataset {args.dataset}, not both")
        held = FAMILIES[DATASETS[args.dataset][0]].data_kind
        if held != kind:
            raise UsageError(f"--dataset {args.dataset} holds {held}: compare models of "
                             f"--family {_families_reading(held)}")
    for other, options in _DATA_KIND_OPTIONS.items():
        for opt, dest in options:
            if other != kind and getattr(args, dest, None) is not None:
                raise UsageError(f"{opt} applies only to --family {_families_reading(other)}")
    if kind == "rankings" and (args.columns is not None or args.truth is not None):
        raise UsageError("--columns and --truth select columns of a table of numbers; a "
                         "rankings file is read whole, one ranking a row")
    if args.data is not None:
        data = str(Path(args.data).absolute())
    else:
        data = args.dataset or _DEMO_DATA.get(kind, _DEMO)
    items = getattr(args, "items", None)
    return RunConfig(
        data=data, family=family, seed=args.seed, columns=args.columns, truth=args.truth,
        vocab=None if args.vocab is None else str(Path(args.vocab).absolute()),
        sep=args.sep, decimal=args.decimal, subsample=args.subsample,
        missing=getattr(args, "missing", None), index_base=getattr(args, "index_base", None),
        items=None if items is None else str(Path(items).absolute()))


def _estimator(c: Candidate, args):
    from ..chains.processes import available_cores
    from ..estimators.dp_mixture import DPMixture

    family = FAMILIES[c.family](**dict(c.hyperparameters)) if c.hyperparameters else c.family
    return DPMixture(family=family, coarsening=c.coarsening, prior=c.prior,
                     alpha=parse_alpha(c.alpha), sampler=c.sampler, n_iter=args.iters,
                     burn_in=args.burn_in, n_chains=args.chains,
                     n_jobs=min(args.chains, available_cores()),
                     progress=not args.no_progress, random_state=None)


def run_compare(args, command_line: str) -> int:
    """``dpclust compare``: fit, score, print the table and the sentence, write the files."""
    import warnings

    from ..estimators.comparison import compare_models
    from ..report.comparison import write_comparison_report
    from .outputs import _prepare_out_dir, _warn
    from .data import _load
    from .outputs import _write_json

    candidates = candidates_from_args(args)
    if args.burn_in is not None and args.burn_in >= args.iters:
        raise UsageError(f"--burn-in ({args.burn_in}) must be smaller than --n-iter "
                         f"({args.iters}): otherwise no draws are kept")
    if args.folds is not None and args.test_size is not None:
        raise UsageError("give --test-size (one split) or --folds K, not both")
    data = _load(_data_config(args, candidates[0].family))
    for message in data.warnings:
        _warn(message)
    out_dir = Path(args.out)
    _prepare_out_dir(out_dir)
    models = {c.name: _estimator(c, args) for c in candidates}
    noun = FAMILIES[candidates[0].family].noun
    print(f"{PROG}: comparing {len(models)} models on {data.info['n_samples']:,} {noun}s",
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the table's converged column says it
        warnings.filterwarnings("ignore", message=".*has not converged", category=UserWarning)
        result = compare_models(data.X, models, test_size=args.test_size,
                                n_splits=args.folds, random_state=args.seed)
    seconds = time.perf_counter() - t0
    payload = {
        "format": _FORMAT, "dpclust_version": __version__, "command_line": command_line,
        "sentence": result.summary(), "comparison": result.to_dict(),
        "settings": {"models": {c.name: c.settings() for c in candidates},
                     "test_size": args.test_size if args.folds is None and
                     args.test_size is not None else (0.2 if args.folds is None else None),
                     "folds": args.folds, "iters": args.iters,
                     "burn_in": args.iters // 2 if args.burn_in is None else args.burn_in,
                     "chains": args.chains, "seed": args.seed},
        "data": data.info, "total_seconds": seconds}
    result.table.to_csv(out_dir / "comparison.csv", index=False)
    _write_pointwise(out_dir / "pointwise.csv", result)
    _write_json(out_dir / "comparison.json", payload)
    write_comparison_report(out_dir, payload, plots_wanted=not args.no_plots)
    print(_table_text(result.table))
    print(f"{PROG}: {result.summary()}")
    print(f"{PROG}: results in {out_dir}/ (comparison.html, comparison.csv, "
          "comparison.json, pointwise.csv)")
    return _EXIT_OK


def _write_pointwise(path: Path, result) -> None:
    """``row,fold,<model>...``: every held-out row's log density under each model."""
    import pandas as pd

    frame = pd.DataFrame({"row": result.test_index, "fold": result.fold,
                          **{name: v for name, v in result.pointwise.items()}})
    frame.to_csv(path, index=False)


def _table_text(table) -> str:
    """The table as the terminal shows it: nats to 3 decimals, K to 1."""
    shown = table.copy()
    for col in ("elpd", "se", "elpd_diff", "se_diff"):
        shown[col] = shown[col].map(lambda v: f"{v:.3f}")
    for col in ("n_clusters", "n_large_clusters"):
        shown[col] = shown[col].map(lambda v: "-" if not np.isfinite(v) else f"{v:.1f}")
    shown["fit_seconds"] = shown["fit_seconds"].map(lambda v: f"{v:.1f}")
    return shown.to_string(index=False)
