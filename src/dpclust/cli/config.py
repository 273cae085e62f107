"""What defines a run of ``dpclust fit``: :class:`RunConfig` (what ``run.json`` stores), the
command line's argument types, and the checks that turn parsed arguments into a config."""

from __future__ import annotations

import argparse
import math
import re
import secrets
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..chains.length import FIRST_LENGTH
from ..families import FAMILIES

PROG = "dpclust"
RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.npz"
#: the fitted model that ``dpclust predict`` and ``dpclust score`` read (DPMixture.save)
MODEL_FILE = "model.npz"
#: the posterior co-clustering figure needs an n_samples x n_samples matrix: only up to this n
MAX_SIMILARITY_SAMPLES = 2000
_RUN_FORMAT = 1
_EXIT_OK, _EXIT_USAGE, _EXIT_INTERRUPTED = 0, 2, 130
_DEMO = "demo"
_DUBLIN_WEST = "dublin-west"
#: the random stream of ``--subsample`` among those of ``--random-state``
_SUBSAMPLE_STREAM = 7
#: bundled data sets (``--dataset NAME``): their family, what the summary calls them and
#: their loader in :mod:`dpclust.datasets`
DATASETS = {_DUBLIN_WEST: ("plackett-luce", "the Dublin West 2002 election ballots",
                           "load_dublin_west")}
#: the family a file of rankings (PrefLib, a cast-vote record) gets without --family, or
#: with --family auto: Plackett–Luce, by default under the coarsened posterior
#: (:attr:`~dpclust.families.base.ConjugateFamily.default_coarsening`)
RANKINGS_FAMILY = "plackett-luce"
#: the data a run clusters without DATA, by the kind of data its family reads (default: the
#: bundled demo)
_DEMO_DATA = {"rankings": _DUBLIN_WEST}
#: options that say how to read one kind of data (``ConjugateFamily.data_kind``): (option,
#: its destination)
_DATA_KIND_OPTIONS = {"counts": (("--vocab", "vocab"),),
                      "rankings": (("--missing", "missing"), ("--index-base", "index_base"),
                                   ("--items", "items"), ("--cvr", "cvr"),
                                   ("--skipped", "skipped"), ("--overvote", "overvote"),
                                   ("--write-ins", "write_ins"), ("--group", "group"),
                                   ("--contest", "contest")),
                      "table": (("--column-type", "column_types"),)}
#: the options that read a cast-vote record (:func:`dpclust.io.read_cvr`); they imply --cvr
_CVR_OPTIONS = (("--skipped", "skipped"), ("--overvote", "overvote"),
                ("--write-ins", "write_ins"), ("--group", "group"), ("--contest", "contest"))
#: a wide data file: the summary lists this many column names
MAX_LISTED_COLUMNS = 50
_PREFLIB_SUFFIXES = (".soi", ".toi", ".soc", ".toc")
#: ``--family auto``: the family is picked from the data (:func:`dpclust.families.choose_family`),
#: which are read as a table of mixed columns (the data kind below) unless they are bundled
AUTO = "auto"
_AUTO_KIND = "table"


#: options renamed after the Python parameters they set: the old spelling -> the new one.
#: The old ones still work, with a note on stderr.
RENAMED = {"--iters": "--n-iter", "--chains": "--n-chains", "--seed": "--random-state",
           "--jobs": "--n-jobs", "--max-iters": "--max-iter"}


class _Renamed(argparse._StoreAction):
    """Stores like ``store``; given under an old spelling (:data:`RENAMED`), says the new one."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in RENAMED:
            sys.stderr.write(f"{PROG}: note: {option_string} is now {RENAMED[option_string]}, "
                             "as the Python parameter; the old spelling will go in a later "
                             "version\n")
        super().__call__(parser, namespace, values, option_string)


def add_renamed(group, new: str, *, dest: str, **kwargs):
    """Add option ``new`` with its old spelling as a hidden alias (:data:`RENAMED`)."""
    old = [o for o, n in RENAMED.items() if n == new]
    return group.add_argument(new, *old, dest=dest, action=_Renamed, **kwargs)


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
    rankings table; ``cvr`` (given or detected) reads it as a cast-vote record
    (:func:`~dpclust.io.read_cvr`) by the rules ``skipped``, ``overvote`` and ``write_ins``,
    keeping the column ``group`` and the rank columns of ``contest``.  ``hyperparameters`` holds ``(name, value)`` for the family's
    hyperparameters given on the command line (the others take the family's defaults);
    ``run.json`` lists every registered family's hyperparameters by name (null: not given).
    ``family`` may be ``"auto"`` (picked from the data when they are loaded);
    ``column_types`` holds ``(column, kind)`` pairs for the table family (``--column-type``;
    a dict in ``run.json``) and ``weights`` the column of row weights (``--weights``).
    """

    data: str = _DEMO
    model: str = "dp"
    family: str = "auto"
    sampler: str = "auto"
    alpha: str = "1.0"
    prior: str | None = None
    coarsening: float | str | None = None
    n_iter: int | None = None
    burn_in: int = 100
    thin: int = 1
    seed: int = 0
    seed_drawn: bool = False
    init_clusters: int | None = 10
    init: str | None = "auto"
    columns: tuple | None = None
    truth: str | int | None = None
    vocab: str | None = None
    point_estimate: str = "auto"
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
    cvr: bool = False
    skipped: str | None = None
    overvote: str | None = None
    write_ins: str | None = None
    group: str | None = None
    contest: str | None = None
    sep: str | None = None
    decimal: str | None = None
    hyperparameters: tuple = ()
    scheduler: str | None = None
    workers: int | None = None
    partitions: int | None = None
    chains: int = 4
    jobs: int | None = None
    until_converged: bool = True
    max_iters: int | None = None
    max_time: float | None = 300.0
    burn_in_given: bool = True
    subsample: int | None = None
    column_types: tuple | None = None
    weights: str | int | None = None

    @property
    def distributed(self) -> bool:
        """Whether the run's chain runs on a Dask cluster."""
        return bool(self.scheduler or self.workers)

    def to_json(self) -> dict:
        d = asdict(self)
        for key in ("columns", "missing"):
            d[key] = None if getattr(self, key) is None else list(getattr(self, key))
        if self.column_types is not None:
            d["column_types"] = {str(k): v for k, v in self.column_types}
        given = dict(d.pop("hyperparameters"))
        for name in _hyperparameter_owners():
            d[name] = given.get(name)
        return d

    @classmethod
    def from_json(cls, d: dict) -> RunConfig:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        for key in ("columns", "missing"):
            if kwargs.get(key) is not None:
                kwargs[key] = tuple(kwargs[key])
        if kwargs.get("column_types") is not None:
            kwargs["column_types"] = tuple((_column_token(k), v)
                                           for k, v in kwargs["column_types"].items())
        kwargs["hyperparameters"] = tuple((name, d[name]) for name in _hyperparameter_owners()
                                          if d.get(name) is not None)
        return cls(**kwargs)


def _hyperparameter_owners() -> dict:
    """Every registered family's hyperparameter names, each with the names of the families
    that have it, in the order of registration."""
    owners = {}
    for name, family in FAMILIES.items():
        for hp in family.hyperparameters:
            owners.setdefault(hp.name, []).append(name)
    return owners


def _families_reading(kind: str) -> str:
    """The families that read ``kind`` data, for messages: ``"mallows"``, ``"a or b"``
    (``auto`` among those of tables)."""
    names = [name for name, family in FAMILIES.items() if family.data_kind == kind]
    return " or ".join(names + [AUTO] * (kind == _AUTO_KIND))


def family_kind(family: str) -> str:
    """The kind of data ``family`` reads (:attr:`~dpclust.families.ConjugateFamily.data_kind`);
    ``"table"`` for ``auto``."""
    return _AUTO_KIND if family == AUTO else FAMILIES[family].data_kind


def family_class(family: str):
    """The registered family class of ``family`` (for ``auto``: None)."""
    return None if family == AUTO else FAMILIES[family]


# --------------------------------------------------------------------------------------------
# argument types (argparse turns their ArgumentTypeError into a one-line usage error)


def parse_alpha(text: str):
    """Parse ``--alpha``: ``"1.5"`` -> 1.5; ``"gamma:SHAPE,RATE"`` -> :class:`~dpclust.GammaPrior`.

    A :class:`~dpclust.GammaPrior` makes the estimator resample alpha (Escobar & West 1995).
    """
    from ..samplers import GammaPrior

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


def _coarsening_type(text: str):
    """``--coarsening``: a positive number, ``auto`` or ``exact``."""
    if text.strip().lower() in ("auto", "exact"):
        return text.strip().lower()
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(
            f"expected a positive number (alpha_c), 'auto' or 'exact', got {text!r}")
    return value


def _prior_type(text: str) -> str:
    """``--prior``: validated now (a clear message at the command line), kept as text."""
    from ..priors import get_prior

    try:
        get_prior(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _alpha_type(text: str) -> str:
    parse_alpha(text)  # validate now; keep the text, which run.json and the summary show
    return text.strip()


def _loss_type(text: str) -> str:
    """A loss's spelling (``vi``, ``binder(a=1.5)``) or ``auto``, validated."""
    from ..partitions import as_loss

    if text.strip().lower() == "auto":
        return "auto"
    try:
        return str(as_loss(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


def _option_type(convert):
    """A family's :attr:`~dpclust.families.HyperParameter.type` as an argparse type: its
    ``ValueError`` becomes the one-line usage error."""
    def parse(text: str):
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


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


def _column_types_type(text: str) -> tuple:
    """``--column-type``: ``NAME=KIND`` pairs, comma-separated (``age=gaussian,zip=categorical``),
    each KIND one of :data:`dpclust.tables.columns.OVERRIDES`."""
    from ..tables.columns import OVERRIDES

    pairs = []
    for token in text.split(","):
        name, eq, kind = token.rpartition("=")
        kind = kind.strip().lower()
        if not eq or not name.strip():
            raise argparse.ArgumentTypeError(
                f"expected NAME=KIND (e.g. age=gaussian), got {token.strip()!r}")
        if kind not in OVERRIDES:
            raise argparse.ArgumentTypeError(
                f"unknown kind {kind!r} for column {name.strip()!r}: use "
                f"{', '.join(OVERRIDES[:-1])} or {OVERRIDES[-1]}")
        pairs.append((_column_token(name), kind))
    return tuple(pairs)


def _missing_type(text: str) -> tuple:
    """``--missing``: comma-separated cells that mark an unranked position (``0,NA``)."""
    return tuple(t.strip() for t in text.split(","))


def _decay_type(text: str) -> str:
    from ..ddcrp.decay import parse_decay

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
# fit and resume


def _seed(given: int | None) -> int:
    """The run's seed: ``--random-state``, or one drawn at random (as ``random_state=None``
    in Python), written in ``run.json`` so that the run can be resumed and repeated."""
    return given if given is not None else secrets.randbelow(2**31)


def _config_from_args(args) -> RunConfig:
    n_iter = args.iters
    # as in Python: --n-iter N with --max-iter M goes on after N until the rule passes
    until = bool(args.until_converged) or n_iter is None or args.max_iters is not None
    first = FIRST_LENGTH if n_iter is None else n_iter
    burn_in = first // 2 if args.burn_in is None else args.burn_in
    if burn_in >= first:
        raise UsageError(f"--burn-in ({burn_in}) must be smaller than --n-iter ({first}"
                         + (", the first length of a run without --n-iter" if n_iter is None
                            else "") + "): otherwise no draws are kept")
    family = args.family
    if args.dataset is not None:
        if args.data is not None:
            raise UsageError(f"give DATA or --dataset {args.dataset}, not both")
        default = DATASETS[args.dataset][0]
        family = default if family in (None, AUTO) else family  # auto: what the set holds
        kind = FAMILIES[default].data_kind
        if family in FAMILIES and FAMILIES[family].data_kind != kind:
            raise UsageError(f"--dataset {args.dataset} holds {kind}: use it with --family "
                             f"{_families_reading(kind)}")
    if family in (None, AUTO) and args.data is not None:
        family = _auto_by_file(args) or family
    family = family or AUTO  # no --family: picked from the data
    if args.data is None and (args.columns is not None or args.truth is not None
                              or args.positions is not None or args.weights is not None
                              or args.column_types is not None):
        raise UsageError("--columns, --truth, --positions, --weights and --column-type "
                         "name columns of a DATA file; the bundled data have none to name")
    _check_family_options(args, family, rankings=False)
    if args.data is not None:
        data = str(Path(args.data).absolute())
    else:  # the rankings' demo: the Dublin West ballots
        data = args.dataset or _DEMO_DATA.get(family_kind(family), _DEMO)
    vocab = None if args.vocab is None else str(Path(args.vocab).absolute())
    # under auto every family's hyperparameters given, checked against the family picked
    names = (_hyperparameter_owners() if family == AUTO
             else [hp.name for hp in FAMILIES[family].hyperparameters])
    given = tuple((name, getattr(args, name)) for name in names
                  if getattr(args, name) is not None)
    config = RunConfig(
        data=data, family=family, alpha=args.alpha, prior=args.prior,
        coarsening=args.coarsening, n_iter=n_iter,
        burn_in=burn_in,
        thin=args.thin, seed=_seed(args.seed), seed_drawn=args.seed is None, columns=args.columns, truth=args.truth,
        hyperparameters=given, vocab=vocab, point_estimate=args.point_estimate,
        store_labels=args.store_labels, checkpoint_every=args.checkpoint_every,
        plots=not args.no_plots, chains=args.chains, jobs=args.jobs,
        until_converged=until, max_iters=args.max_iters,
        max_time=args.max_time or None,
        burn_in_given=args.burn_in is not None, sep=args.sep, decimal=args.decimal,
        subsample=args.subsample, column_types=_column_types(args.column_types),
        weights=args.weights)
    _check_weights(config, args.model)
    if (args.sep or args.decimal) and args.data is None:
        raise UsageError(f"{'--sep' if args.sep else '--decimal'} tells how to read a DATA "
                         "file; the bundled data need none")
    if args.max_iters is not None and args.max_iters < first:
        raise UsageError(f"--max-iter ({args.max_iters}) must be at least --n-iter ({first})")
    config = _rankings_config(config, args)
    _check_prior(args)
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


def _column_types(given) -> tuple | None:
    """The ``--column-type`` options (each a tuple of pairs) as one tuple of pairs; a column
    given two kinds is refused."""
    if not given:
        return None
    kinds = {}
    for name, kind in (pair for option in given for pair in option):
        if kinds.get(name, kind) != kind:
            raise UsageError(f"--column-type gives the column {name!r} two kinds: "
                             f"{kinds[name]} and {kind}")
        kinds[name] = kind
    return tuple(kinds.items())


def _check_weights(config: RunConfig, model: str) -> None:
    """``--weights`` fits a DP mixture (whole-number weights repeat rows with any family;
    other weights are a power on the likelihood of a table family's rows, which
    ``DPMixture.fit`` checks)."""
    if config.weights is None:
        return
    if model != "dp":
        raise UsageError("--weights applies to --model dp")


def _sampler_runs(request: str, **where) -> bool:
    """Whether ``--sampler request`` can run where the other flags put the chain (the
    estimator's own choice, :func:`dpclust.samplers.choose_sampler`, asked before the data
    are read; the caller words the refusal in flags)."""
    from ..samplers import choose_sampler

    try:
        choose_sampler(request, 0, **where)
    except ValueError:
        return False
    return True


def _check_prior(args) -> None:
    """``--prior`` belongs to the DP mixture's model, and carries its own parameters;
    ``--coarsening`` fits a finite mixture of the DP mixture's families."""
    if args.coarsening not in (None, "exact"):
        if args.model != "dp":
            raise UsageError("--coarsening applies to --model dp")
        if not _sampler_runs(args.sampler or "auto", coarsened=True):
            raise UsageError(f"--coarsening is fitted by the 'coarsened' sampler, not "
                             f"{args.sampler!r}: leave --sampler out")
        if args.alpha != "1.0":
            raise UsageError("--alpha is the Dirichlet process's concentration; under "
                             "--coarsening give the finite mixture's in --prior finite:K,ALPHA")
        if args.scheduler or args.workers or args.partitions:
            raise UsageError("--coarsening runs in-process: drop --scheduler, --workers and "
                             "--partitions")
        if getattr(args, "alpha_sensitivity", None):
            raise UsageError("--alpha-sensitivity varies the Dirichlet process's alpha; it "
                             "does not apply with --coarsening")
    if args.prior is None:
        return
    from ..priors import get_prior

    if args.model != "dp":
        raise UsageError("--prior applies to --model dp (the ddCRP's prior is its own)")
    name = get_prior(args.prior).name
    if args.coarsening not in (None, "exact") and name != "finite":
        raise UsageError(f"--coarsening fits a finite mixture with sparse weights: use "
                         f"--prior finite:K, not {args.prior}")
    if name != "dp" and args.alpha != "1.0":
        raise UsageError(f"--alpha is the Dirichlet process's concentration; the {name} prior "
                         "takes its parameters in --prior")
    if name != "dp" and getattr(args, "alpha_sensitivity", None):
        raise UsageError("--alpha-sensitivity varies the Dirichlet process's alpha: leave "
                         "--prior at dp")


def _auto_by_file(args) -> str | None:
    """The family that a file's kind decides before it is read, without ``--family``: the
    rankings' (:data:`RANKINGS_FAMILY`) for a PrefLib file, a cast-vote record or an option
    that reads rankings, the family of counts with ``--vocab``; None (picked from the data
    when they are loaded)."""
    rankings_options = [dest for _, dest in _DATA_KIND_OPTIONS["rankings"]
                        if getattr(args, dest, None) is not None]
    if rankings_options or _is_preflib(args.data) or _is_cvr(args.data):
        return RANKINGS_FAMILY  # a file of rankings needs no --family
    if getattr(args, "vocab", None) is not None:
        return next(name for name, family in FAMILIES.items() if family.data_kind == "counts")
    return None


def check_picked(config: RunConfig, picked: str) -> None:
    """Under ``--family auto``, refuse a hyperparameter that the family picked from the
    data does not have, naming the family picked (before the run starts)."""
    if config.family != AUTO:
        return
    owners = _hyperparameter_owners()
    for name, _ in config.hyperparameters:
        if picked not in owners[name]:
            raise UsageError(f"{_applies_only(name, owners[name])}; --family auto picked "
                             f"{picked} for these data (give --family to choose another)")


def _applies_only(name: str, owners: list) -> str:
    """``"--kappa applies only to --family a or b"``: the families that have the
    hyperparameter ``name``."""
    hp = next(hp for hp in FAMILIES[owners[0]].hyperparameters if hp.name == name)
    return f"{hp.option} applies only to --family {' or '.join(owners)}"


def _check_family_options(args, family: str, *, rankings: bool) -> None:
    """Refuse the hyperparameters of other families and the options that read another kind
    of data than ``family``'s: those of the families of rankings (``rankings=True``, checked
    after the data file's kind) or of the others.  Under ``auto`` the hyperparameters of the
    families of points, documents and tables wait for the family picked
    (:func:`check_picked`)."""
    def now(kind):
        return (kind == "rankings") == rankings

    for name, owners in _hyperparameter_owners().items():
        if family == AUTO and FAMILIES[owners[0]].data_kind != "rankings":
            continue
        if (family not in owners and getattr(args, name) is not None
                and now(FAMILIES[owners[0]].data_kind)):
            raise UsageError(_applies_only(name, owners))
    for kind, options in _DATA_KIND_OPTIONS.items():
        if not now(kind) or kind == family_kind(family):
            continue
        for opt, dest in options:
            if getattr(args, dest) is not None:
                raise UsageError(f"{opt} applies only to --family {_families_reading(kind)}")


def _dask_config(config: RunConfig, args) -> RunConfig:
    """Check ``--scheduler``/``--workers``/``--partitions``."""
    if args.scheduler and args.workers:
        raise UsageError("give --scheduler ADDRESS (an existing cluster) or --workers N (a "
                         "local one), not both")
    if not (args.scheduler or args.workers or args.partitions):
        return config
    cls = family_class(config.family)  # None: "auto", resolved from the data
    if cls is not None and not cls.collapsible:
        raise UsageError(f"--family {config.family} runs in-process only (no --scheduler, "
                         "--workers or --partitions)")
    if not _sampler_runs(config.sampler, where="partitions"):
        raise UsageError(f"--scheduler, --workers and --partitions run the sub-cluster "
                         f"sampler, not --sampler {config.sampler}")
    return replace(config, sampler="subcluster" if config.sampler == "auto" else config.sampler,
                   scheduler=args.scheduler, workers=args.workers, partitions=args.partitions)


def _rankings_config(config: RunConfig, args) -> RunConfig:
    """Check the options of a family of rankings (``ConjugateFamily.data_kind ==
    "rankings"``: ``--family mallows``), and that no other family got rankings."""
    from ..samplers import INSTANTIATED, family_samplers

    if family_kind(config.family) != "rankings":
        if config.data not in DATASETS and config.data != _DEMO and _is_preflib(config.data):
            raise UsageError(f"{config.data} is a PrefLib file of rankings: fit it with "
                             f"--family {_families_reading('rankings')} (this run asked for "
                             f"--family {config.family})")
        if config.data not in DATASETS and config.data != _DEMO and _is_cvr(config.data):
            raise UsageError(f"{config.data} is a cast-vote record (ranked ballots): fit it "
                             f"with --family {_families_reading('rankings')} (this run asked "
                             f"for --family {config.family})")
        _check_family_options(args, config.family, rankings=True)
        if args.sampler in INSTANTIATED:
            raise UsageError(f"--sampler {args.sampler} fits --family "
                             f"{_families_reading('rankings')} (rankings) only")
        return config
    _check_family_options(args, config.family, rankings=True)
    if args.model == "ddcrp":
        collapsed = " or ".join(name for name, family in FAMILIES.items()
                                if family.collapsible)
        raise UsageError(f"--model ddcrp needs a family with a collapsed form ({collapsed}), "
                         f"not --family {config.family}")
    if args.columns is not None or args.truth is not None:
        raise UsageError("--columns and --truth select columns of a table of numbers; a "
                         "rankings file is read whole, one ranking a row")
    fits = family_samplers(FAMILIES[config.family])
    if args.sampler not in (None, "auto", *fits):
        raise UsageError(f"--family {config.family} is fitted with --sampler "
                         f"{', '.join(fits[:-1])} or {fits[-1]}, not {args.sampler}")
    if args.init == "kmeans":
        raise UsageError(f"--init kmeans needs numeric features; --family {config.family} "
                         "starts from random clusters (--init random)")
    csv_only = [opt for opt, dest in _DATA_KIND_OPTIONS["rankings"]
                if getattr(args, dest) is not None]
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
    config = replace(config, missing=args.missing, index_base=args.index_base, items=items)
    return _cvr_config(config, args)


def _cvr_config(config: RunConfig, args) -> RunConfig:
    """Whether the rankings file is a cast-vote record (``--cvr``, an option that reads
    one, or detected), with the options that read it."""
    given = [opt for opt, dest in _CVR_OPTIONS if getattr(args, dest) is not None]
    if config.data in DATASETS or _is_preflib(config.data):
        return config
    if not (args.cvr or given or _is_cvr(config.data)):
        return config
    if args.index_base is not None:
        raise UsageError("--index-base numbers the items of a rankings table of ids; a "
                         "cast-vote record names its candidates (--items FILE lists them)")
    return replace(config, cvr=True, skipped=args.skipped, overvote=args.overvote,
                   write_ins=args.write_ins, group=args.group, contest=args.contest)


def _is_cvr(path: str) -> bool:
    """Whether ``path`` looks like a cast-vote record (:func:`~dpclust.io.looks_like_cvr`)."""
    from ..io.cvr import looks_like_cvr

    return Path(path).is_file() and looks_like_cvr(path)


def _is_preflib(path: str) -> bool:
    """Whether ``path`` is read by :func:`~dpclust.rankings.read_preflib` (by its suffix)."""
    return _preflib_suffix(path) in _PREFLIB_SUFFIXES


def _preflib_suffix(path: str) -> str:
    """The suffix of ``path`` without a ``.gz``: ``votes.soi.gz`` -> ``.soi``."""
    return Path(Path(path).name.lower().removesuffix(".gz")).suffix


def _ddcrp_config(config: RunConfig, args) -> RunConfig:
    """The run of ``--model ddcrp``: check its options and fill them in."""
    from ..ddcrp.decay import parse_decay

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
