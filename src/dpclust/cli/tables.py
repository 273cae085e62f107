"""The data of a run on a table of mixed columns (``--family auto``, ``table`` and the
single-kind table families): the file read as a DataFrame (:func:`dpclust.io.frames.read_frame`,
text kept, holes read as missing), the columns that are not features taken out
(``--truth``, ``--weights``, ``--positions``), the family picked for ``auto``, and a kind
per column (:func:`dpclust.tables.infer_schema`, with the ``--column-type`` overrides)
checked before the run starts and said on stderr (:func:`kinds_lines`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..families import FAMILIES, TableFamily, choose_family
from ..utils.checks import DataError
from .config import AUTO, MAX_LISTED_COLUMNS, PROG, RunConfig, family_class
from .loaded import LoadedData, _positions_info

#: stderr lists this many columns' kinds (the summary lists them all)
MAX_PRINTED_COLUMNS = 30
#: and this many levels of a category column
MAX_PRINTED_LEVELS = 4
#: what each role's column is called in messages: its option
_OPTIONS = {"truth": "--truth", "weights": "--weights", "positions": "--positions"}


def reads_frames(family: str) -> bool:
    """Whether ``family`` reads its data file as a table of mixed columns: ``auto``, and the
    families whose likelihood is a product over a table's columns."""
    cls = family_class(family)
    return cls is None or issubclass(cls, TableFamily)


def load_frame(config: RunConfig, *, infer: bool = True):
    """The :class:`~dpclust.cli.loaded.LoadedData` of a table of mixed columns; with
    ``infer=False`` (new rows for a fitted model, whose schema reads them) no family is
    picked and no kinds are read."""
    from ..io import as_labels, parse_positions
    from ..io.frames import read_frame

    text = [name for name, kind in config.column_types or () if kind in ("categorical",
                                                                           "bernoulli")]
    frame, meta = read_frame(config.data, sep=config.sep, decimal=config.decimal,
                             text_columns=text)
    path, names = meta["path"], list(frame.columns)
    roles = {role: _name_of(path, getattr(config, role), names, _OPTIONS[role])
             for role in _OPTIONS if getattr(config, role) is not None}
    _check_distinct(path, roles)
    features = _features(path, config.columns, names, roles)
    kinds = _kinds(path, config.column_types, names, features, roles) if infer else None
    X = frame[features].reset_index(drop=True)
    info = {"source": path, "format": f"{meta['format']} (a table of mixed columns)"}
    if "dialect" in meta:
        info.update(read_as=meta["dialect"], separator=meta["separator"],
                    decimal=meta["decimal"])
    if "sheet" in meta:
        info["read_as"] = (f"the sheet {meta['sheet']!r}"
                           + (f", the first of {meta['sheets']}" if meta["sheets"] > 1 else ""))
    info["columns"] = features[:MAX_LISTED_COLUMNS]
    if len(features) > MAX_LISTED_COLUMNS:
        info["columns_not_listed"] = len(features) - MAX_LISTED_COLUMNS
    data = LoadedData(X=X, truth=None, info=info, rules=_rules_of(meta["rules"], features),
                      kinds=kinds)
    if "truth" in roles:
        info["truth_column"] = roles["truth"]
        data.truth = as_labels(_complete(path, frame[roles["truth"]], "--truth",
                                         "NMI and ARI need every row's label"))
    if "weights" in roles:
        info["weights_column"] = roles["weights"]
        data.weights = _weights(path, frame[roles["weights"]])
    if "positions" in roles:
        what = f"{path}: the positions column {roles['positions']!r}"
        data.positions = parse_positions(
            _complete(path, frame[roles["positions"]], "--positions", "").tolist(), what=what)
        info.update(_positions_info(config, data.positions))
    info["n_samples"] = int(len(X))
    info["n_features"] = int(len(features))
    if infer:
        _read_kinds(config, data, path)
    return data


def _read_kinds(config: RunConfig, data, path: str) -> None:
    """The family to fit (``auto``: :func:`_pick_family`) and, for a table family, the kind
    of each column, checked now so that a kind the values do not fit stops the run before
    it starts."""
    data.family = _pick_family(config, data.X, data.kinds, data.weights is not None)
    cls = FAMILIES[data.family]
    if config.family == AUTO:
        data.info["family_picked"] = data.family
    if not issubclass(cls, TableFamily):  # auto picked a family of plain numbers
        data.X = data.X.to_numpy(dtype=np.float64)
        return
    from ..tables import encode, infer_schema, one_kind
    from ..utils.checks import check_scale

    kinds = data.kinds if cls.kind is None else one_kind(data.X, cls.kind)
    try:
        data.schema = infer_schema(data.X, kinds)
    except ValueError as exc:
        raise DataError(f"{path}: {exc}") from None
    # the features modelled, beside the file's columns (the report's "9 features of 14
    # columns, 5 left out")
    data.info["n_columns"] = data.info["n_features"]
    data.info["n_features"] = len(data.schema.columns)
    if not data.schema.names:
        return
    encoded = encode(data.X[data.schema.names], data.schema)
    # refused now, in one line, rather than when the fit reads the table
    check_scale(encoded.real, what=path, names=[c.name for c in data.schema.real])
    _leave_out_empty_rows(data, encoded)


#: the cleaning rule of a row with no value in the columns modelled
EMPTY_ROWS_RULE = "rows with no value in the columns modelled, left out (rows)"


def _leave_out_empty_rows(data, encoded) -> None:
    """Leave out the rows whose every modelled cell is missing (a week with no record, a
    blank line of a spreadsheet under its row number): they carry nothing to cluster on.
    They are counted, said on stderr, and given empty labels in labels.csv; a table of
    nothing but such rows is left to the family to refuse (``encoded``: the modelled
    columns read under the schema)."""
    empty = encoded.missing().all(axis=1)
    if not empty.any() or empty.all():
        return
    keep = np.flatnonzero(~empty)
    data.n_rows, data.rows = int(len(empty)), keep
    data.X = data.X.iloc[keep].reset_index(drop=True)
    for name in ("truth", "weights", "positions"):
        if getattr(data, name) is not None:
            setattr(data, name, np.asarray(getattr(data, name))[keep])
    n_empty = int(empty.sum())
    data.rules[EMPTY_ROWS_RULE] = n_empty
    data.info["n_samples"] = int(len(keep))
    first = int(np.flatnonzero(empty)[0]) + 1
    data.warnings.append(f"{n_empty:,} row(s) have no value in the columns modelled (first: "
                         f"data row {first}): left out of the fit, their labels left empty "
                         "in labels.csv")


def _rules_of(by_column: dict, features: list) -> dict:
    """The cleaning rules applied to the feature columns, with their counts summed."""
    total = {}
    for name in features:
        for rule, n in by_column.get(name, {}).items():
            total[rule] = total.get(rule, 0) + n
    return total


def _name_of(path: str, spec, names: list, option: str) -> str:
    """The name of the column ``spec`` (a name or a 0-based index) of a table."""
    if isinstance(spec, int):
        if not -len(names) <= spec < len(names):
            raise DataError(f"{path}: {option} {spec}: column index out of range; the table "
                            f"has {len(names)} columns")
        return names[spec]
    if spec not in names:
        shown = ", ".join(repr(n) for n in names[:12]) + (", ..." if len(names) > 12 else "")
        raise DataError(f"{path} has no column named {spec!r} ({option}); its columns are "
                        f"{shown}")
    return spec


def _check_distinct(path: str, roles: dict) -> None:
    seen = {}
    for role, name in roles.items():
        if name in seen:
            raise DataError(f"{path}: {_OPTIONS[seen[name]]} and {_OPTIONS[role]} name the "
                            f"same column {name!r}")
        seen[name] = role


def _features(path: str, columns, names: list, roles: dict) -> list:
    """``--columns`` as names, or every column but those of ``roles``."""
    taken = {name: role for role, name in roles.items()}
    if columns is None:
        features = [n for n in names if n not in taken]
    else:
        features = [_name_of(path, c, names, "--columns") for c in columns]
    for name in features:
        if name in taken:
            raise DataError(f"--columns includes {name!r}, the {_OPTIONS[taken[name]]} "
                            "column, which is not a feature")
    if not features:
        raise DataError(f"{path} has no feature columns besides the "
                        + " and ".join(_OPTIONS[r] for r in roles) + " column"
                        + ("s" if len(roles) > 1 else ""))
    return features


def _kinds(path: str, column_types, names: list, features: list, roles: dict) -> dict:
    """``--column-type`` as ``{feature name: kind}``."""
    kinds = {}
    taken = {name: role for role, name in roles.items()}
    for spec, kind in column_types or ():
        name = _name_of(path, spec, names, f"--column-type {spec}={kind}")
        if name in taken:
            raise DataError(f"--column-type {spec}={kind}: {name!r} is the "
                            f"{_OPTIONS[taken[name]]} column, not a feature")
        if name not in features:
            raise DataError(f"--column-type {spec}={kind}: {name!r} is not among the "
                            "--columns features")
        kinds[name] = kind
    return kinds


def _holes(values: pd.Series) -> np.ndarray:
    return values.isna().to_numpy(dtype=bool)


def _complete(path: str, values: pd.Series, option: str, why: str) -> np.ndarray:
    """The values of a column that may have no missing cell."""
    hole = _holes(values)
    if hole.any():
        first = int(np.argmax(hole))
        raise DataError(f"{path}: the {option} column {values.name!r} has {int(hole.sum())} "
                        f"missing cells (the first in data row {first + 1})"
                        + (f"; {why}" if why else ""))
    return values.to_numpy()


def _weights(path: str, values: pd.Series) -> np.ndarray:
    """Row weights: positive finite numbers, no holes."""
    cells = _complete(path, values, "--weights", "give every row a weight")
    w = pd.to_numeric(pd.Series(cells), errors="coerce").to_numpy(dtype=np.float64)
    for i in range(len(w)):
        if not (np.isfinite(w[i]) and w[i] > 0):
            what = ("is not a number" if np.isnan(w[i]) else
                    "is not positive" if w[i] <= 0 else "is not finite")
            raise DataError(f"{path}: the --weights column {values.name!r} holds "
                            f"{cells[i]!r} in data row {i + 1}, which {what}; row weights "
                            "are positive numbers")
    return w


def _pick_family(config: RunConfig, X: pd.DataFrame, kinds: dict, weighted: bool) -> str:
    """The family that fits the table: the one asked for, or for ``auto`` the one
    :func:`~dpclust.families.choose_family` picks (``table`` with ``--column-type``, when
    the one picked takes no row weights but ``--weights`` gives some, and when a table of
    numbers has a column of ids or a copy of a column,
    :func:`dpclust.tables.columns_left_out`, which the ``table`` family leaves out and a
    family of plain numbers would read as a feature)."""
    from ..tables import columns_left_out

    if config.family != AUTO:
        return config.family
    if kinds:
        return "table"
    picked = choose_family(X).name
    if weighted and not FAMILIES[picked].supports_weights:
        return "table"
    if picked != "table" and columns_left_out(X):
        return "table"
    return picked


# --------------------------------------------------------------------------------------------
# what the run says on stderr at its start


def kinds_lines(config: RunConfig, data) -> list[str]:
    """Lines for stderr: the table family ``auto`` picked (a family of plain numbers or
    counts is said in the summary only), each column's kind (the first
    :data:`MAX_PRINTED_COLUMNS`), and the cleaning rules with their counts."""
    lines = []
    if config.family == AUTO and data.schema is not None:
        lines.append(f"--family auto (the default) picked {data.family} "
                     f"({_why_family(data)}; --family chooses another)")
    if data.schema is not None:
        rows = [(c.name, c.kind, _why(c, data.family)) for c in data.schema.columns]
        rows += [(name, "left out", why) for name, why in data.schema.dropped]
        width = min(max(len(r[0]) for r in rows), 24)
        hint = (" (--column-type NAME=KIND changes one)"
                if family_class(data.family).kind is None else "")
        lines.append(f"columns read as{hint}:")
        for name, kind, why in rows[:MAX_PRINTED_COLUMNS]:
            lines.append(f"  {name:<{width}}  {kind:<11}  {why}")
        if len(rows) > MAX_PRINTED_COLUMNS:
            lines.append(f"  ... and {len(rows) - MAX_PRINTED_COLUMNS} more columns "
                         "(summary.json lists them all)")
    rules = dict(data.rules or {})
    if data.schema is not None:
        rules.update(data.schema.rules)
    lines.extend(f"{rule}: {count:,}" for rule, count in rules.items())
    return [f"{PROG}: {line}" for line in lines]


def _why_family(data) -> str:
    """Why ``auto`` picked ``data.family``: for the table family, the table's columns of
    several kinds or its holes, or, for a complete table of one kind that takes it only to
    leave columns out (:func:`_pick_family`), those columns; else the family's own
    description."""
    schema = data.schema
    kinds = {c.kind for c in schema.columns}
    if data.family != "table":
        return FAMILIES[data.family].describes
    holes = bool(data.X[schema.names].isna().to_numpy().any())
    if len(kinds) > 1 or holes:
        words = {"gaussian": "numbers", "bernoulli": "yes/no", "categorical": "categories",
                 "poisson": "counts"}
        named = [words[k] for k in words if k in kinds]
        named = ", ".join(named[:-1]) + " and " + named[-1]
        what = [f"columns of {len(kinds)} kinds ({named})"] if len(kinds) > 1 else []
        return ("the table has " + " and ".join(what + (["holes"] if holes else []))
                + ": the table family models each column by its kind"
                + (" and the holes as missing" if holes else ""))
    if schema.weights is not None:
        return (f"a frequency table: its column {schema.weights} counts its rows, which "
                "the table family weighs by their counts")
    if not schema.dropped:
        return FAMILIES[data.family].describes
    names = [name for name, _ in schema.dropped]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"it leaves out {shown}, which a family of plain "
            f"{'numbers' if kinds == {'gaussian'} else 'values'} would read as "
            f"{'a feature' if len(names) == 1 else 'features'}")


def _why(column, family: str) -> str:
    why = column.why
    if why == "given":  # by --column-type, or by a single-kind family
        why = "--column-type" if family_class(family).kind is None else f"--family {family}"
    if column.levels is None:
        return why
    shown = ", ".join(str(v) for v in column.levels[:MAX_PRINTED_LEVELS])
    more = ", ..." if len(column.levels) > MAX_PRINTED_LEVELS else ""
    return f"{why}: {shown}{more}"
