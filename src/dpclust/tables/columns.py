"""Reading a user's table into :class:`~dpclust.tables.data.TableData`: a kind per column
from its dtype and values, and the cells encoded with their holes.

:func:`infer_schema` decides what each column is (the rules below), :func:`encode` reads the
cells under a schema (a fitted model's, for new data), and :func:`check_table` does both.

Rules, applied in order to each column that the user has not given a kind:

* every cell missing: left out as empty (a column given a kind is refused, naming it);
* booleans, or numbers that are all 0 and 1: ``bernoulli``;
* numbers with two values, each seen on 10 rows or more on average (a dose given or not,
  a sex coded 1 and 2): ``bernoulli``, its levels the two numbers in order.  A Gaussian on
  two values puts clusters on one of them, whose variance the data push towards 0;
* whole numbers with 3 to 12 distinct values, each present value seen on 10 rows or more
  on average (a rating scale, an income band, a code): ``categorical``, its levels the
  numbers.  A Gaussian on such a column puts clusters on single values, whose variance the
  data then push towards 0 (each tie is a spike of density), so a mixture keeps splitting
  the table by its ties;
* other numbers: ``gaussian`` (whole numbers too: a count column is ``poisson`` only when
  declared so, ``kinds={"visits": "poisson"}``);
* text that reads as numbers once spreadsheet markers of a hole (``?``, ``-``, ``NA``, ...)
  are taken as missing: as numbers (the rule is counted);
* other text, pandas categoricals: ``categorical``; with two levels ``bernoulli`` (the
  level read as *yes* is ``yes``/``true``/``y``/``t``/``1`` where present, numbered or not
  (``1. Yes``, as R's labelled factors write it), else the second in sorted order);
* one value on every row that has one (a constant, say a region every respondent shares):
  left out, since it cannot tell rows apart (counted in the schema's ``dropped``);
* text with a distinct value on more than half of its rows (more than 20 rows): a label or
  an identifier (a name, a county, an individual's code), left out likewise.  Most of its
  levels then hold one row or two: such a column says almost nothing about which rows
  belong together, and under a Dirichlet prior per cluster an unseen level is likelier in a
  small cluster than in a large one, so it would pull rows into small clusters;
* whole numbers with a distinct value on every row (more than 20 rows, at most 1 cell in
  100 missing) that are named like an id (``id``, ``uid``, ``uuid``, ``pid``, ``hid``,
  ``subject``, ``patient``, ``key``,
  ``index``, the row names R and pandas write, ``rownames`` and ``Unnamed: 0``,
  ``respondent_id``, ``RespondentID``, ``id_person``, ...: :func:`named_like_an_id`) or
  that are consecutive (``a, a+1, ..., a+n-1`` in any order, a row number): an identifier,
  left out likewise (R's row names too when they are numbers with decimals, a site 7 and
  its neighbour 7.1).  Distinct whole numbers neither so named nor consecutive (incomes,
  say) stay ``gaussian``, and so do whole numbers with a repeat or a gap in the run;
* whole numbers named like an id with more than 12 distinct values that repeat (a panel's
  unit, a person's id on each year's row): an identifier of units, left out likewise.  Its
  numbers name the units and do not measure them, and as categories its hundreds of levels
  would pull rows into small clusters as a label does;
* a column named ``Freq`` of whole numbers beside columns of levels whose every
  combination is on one row (R's data frame of a contingency table): the rows' counts, left
  out, the rows weighing as many rows (:mod:`dpclust.tables.frequency`; ``Schema.weights``);
* dates (a datetime column, or text whose every filled cell is an ISO 8601 date or time
  such as ``2007-11-09``): real numbers, the days since the first date (the column's
  ``origin``; the rule is counted), or with at most 12 distinct dates (survey waves, say)
  categories, as whole numbers of few levels are;
* a column whose values pair one to one with an earlier column's, holes in the same rows,
  numbers in the same or the reverse order (``wage`` after ``logwage``) or levels that
  repeat (a label beside its code, a 0/1 column beside its complement): a copy, left out
  likewise, the earlier column kept (:mod:`dpclust.tables.copies` says why a copy holds
  chains apart);
* a yes/no column that marks one level of a column of categories (a dummy such as ``y85``
  beside ``year``, before or after it): an indicator, left out likewise.

Missing cells are NaN, None, ``pandas.NA``, empty or blank strings and the markers of
:data:`MISSING_MARKERS`, those of :data:`NUMBERS_ONLY_MARKERS` (the text ``None``) only in a
column whose other cells are numbers (:func:`marked_cells`).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd

from ..utils.times import DAY_SECONDS, as_datetime
from .copies import find_copies, find_indicators
from .data import KINDS, ROW_NAMES, Column, Schema, TableData
from .frequency import FREQUENCY_REASON, frequency_column

#: text that a spreadsheet or a statistics package writes for a missing cell
MISSING_MARKERS = frozenset({"", "?", "-", ".", "na", "n/a", "nan", "null", "none", "missing",
                             "#n/a", "<na>"})
#: those of :data:`MISSING_MARKERS` that mark a hole only among numbers: beside other text
#: the word is an answer, a level of its own (MASS's ``survey``: exercise ``Freq``, ``Some``
#: or ``None``; "None of the above")
NUMBERS_ONLY_MARKERS = frozenset({"none"})
#: levels read as "yes" in a two-level column
YES = frozenset({"yes", "true", "y", "t", "1", "1.0"})
#: kinds a user may give a column, besides :data:`KINDS`
OVERRIDES = tuple(KINDS) + ("drop",)
#: whole numbers with at most this many distinct values (and at least 3) are levels
ORDINAL_MAX_LEVELS = 12
#: ... when the column holds at least this many observed cells per level
ORDINAL_MIN_CELLS = 10
#: a text column with a distinct value on every one of more than this many rows is an id
ID_MIN_ROWS = 20
#: ... and one of more rows than that is a label when its distinct values number more than
#: this share of its filled cells
LABEL_SHARE = 0.5
#: a column of whole numbers may miss at most this share of its cells and still be an id
ID_MAX_MISSING = 0.01
#: names of an id column, whatever their case
ID_NAMES = ROW_NAMES | frozenset({"id", "uid", "uuid", "pid", "hid", "hhid", "key", "index",
                                  "rowid",
                                  # whole numbers so named number the people of a study
                                  "subject", "subj", "patient", "participant", "respondent"})
#: abbreviations of an id (a person's, a household's) that name one after a prefix too
#: (``Ketchup.hid``, R's ``data.frame`` prefix; ``person_uid``)
ID_WORDS = frozenset({"uid", "uuid", "pid", "hid", "hhid", "rowid"})
#: an id column's name: ``id`` after a separator (``respondent_id``, ``user.id``,
#: ``person id``) or before one (``id_person``), or ``Id``/``ID`` after a lowercase letter
#: or a digit (``respondentId``, ``RespondentID``; not ``PAID`` nor ``valid``)
_ID_NAME = re.compile(r"(?i:.*[_.\s-]id|id[_.\s-].*)|.*[a-z0-9](?:Id|ID)")


def as_frame(X, kind: str | None = None) -> pd.DataFrame:
    """A DataFrame of ``X`` (a DataFrame, a 2-D array or a list of rows); columns of an array
    are named ``x0``, ``x1``, ..."""
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        return X.to_frame()
    a = np.asarray(X, dtype=object if kind in ("categorical", "bernoulli") else None)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"X must be a table (2-D), got an array of shape {a.shape}")
    return pd.DataFrame(a, columns=[f"x{j}" for j in range(a.shape[1])])


def _blank(values: pd.Series) -> np.ndarray:
    """Which cells of a column are missing (NaN, None, NA, blank or a marker;
    :func:`marked_cells`)."""
    hole = values.isna().to_numpy().copy()
    if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
        hole |= marked_cells(values)
    return hole


def marked_cells(values: pd.Series) -> np.ndarray:
    """Which cells of a column of text (or of mixed cells) hold a marker of a missing
    value: one of :data:`MISSING_MARKERS` (case and surrounding blanks aside), except that
    one of :data:`NUMBERS_ONLY_MARKERS` is a marker only where every other cell present
    is a number (``None`` among numbers is a hole, among levels an answer)."""
    text = values.astype("string").str.strip().str.lower()
    marked = text.isin(MISSING_MARKERS).fillna(False).to_numpy(dtype=bool).copy()
    soft = text.isin(NUMBERS_ONLY_MARKERS).fillna(False).to_numpy(dtype=bool)
    if soft.any():
        rest = values[~(marked | values.isna().to_numpy(dtype=bool))]
        numbers = pd.to_numeric(rest.astype("string").str.strip(), errors="coerce")
        if numbers.isna().any():  # text beside it: the word is a level
            marked &= ~soft
    return marked


def _as_numbers(values: pd.Series, hole: np.ndarray) -> np.ndarray | None:
    """The column as floats (NaN in the holes), or None where a present cell is not a number."""
    if pd.api.types.is_bool_dtype(values.dtype):
        out = values.astype("float64").to_numpy()
    elif pd.api.types.is_numeric_dtype(values.dtype):
        out = pd.to_numeric(values, errors="coerce").astype("float64").to_numpy()
    else:
        out = pd.to_numeric(values.where(~hole).astype("string").str.strip(),
                            errors="coerce").astype("float64").to_numpy()
    out = np.where(hole, np.nan, out)
    if np.any(np.isnan(out) & ~hole) or np.any(np.isinf(out)):
        return None
    return out


def _levels(values: pd.Series, hole: np.ndarray) -> tuple:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(values.cat.categories)
    present = values[~hole]
    if not pd.api.types.is_numeric_dtype(present.dtype):
        present = present.map(lambda v: v.strip() if isinstance(v, str) else v)
    try:
        return tuple(sorted(pd.unique(present)))
    except TypeError:  # mixed types: sorted by their text
        return tuple(sorted(pd.unique(present), key=str))


#: a level's leading number, as R's labelled factors write them (``"1. Yes"``, ``"2) No"``)
_ENUMERATOR = re.compile(r"^\s*\d+\s*[.):]\s*")


def _yes_no(levels: tuple) -> tuple:
    """Two levels ordered ``(no, yes)``; a level's leading number (``"1. Yes"``) is not
    part of its answer."""
    yes = [v for v in levels if _ENUMERATOR.sub("", str(v)).strip().lower() in YES]
    if len(yes) == 1:
        return tuple(v for v in levels if v is not yes[0]) + (yes[0],)
    return tuple(levels)


def infer_schema(X, kinds: dict | None = None) -> Schema:
    """The kind of each column of a table (see the module's rules).

    Parameters
    ----------
    X : DataFrame or 2-D array
    kinds : dict of str to str, optional
        A kind per column name, overriding the rules: one of ``"gaussian"``,
        ``"bernoulli"``, ``"categorical"``, ``"poisson"`` or ``"drop"``.

    Raises
    ------
    ValueError
        No column left to cluster on (saying why each was left out), a column given a
        kind its values do not fit (an empty one included) (naming the column and a cell), a kind or a name that does not exist.
    """
    df = as_frame(X)
    kinds = dict(kinds or {})
    names = [str(c) for c in df.columns]
    if len(set(names)) != len(names):
        raise ValueError("the table has two columns with the same name: "
                         + ", ".join(sorted({n for n in names if names.count(n) > 1})))
    unknown = sorted(set(kinds) - set(names))
    if unknown:
        raise ValueError(f"kinds were given for columns the table does not have: {unknown} "
                         f"(its columns: {names[:12]}{' ...' if len(names) > 12 else ''})")
    columns, dropped, rules, cells = [], [], {}, []
    frequency = frequency_column(df, names, kinds)
    weight = None if frequency is None else frequency[1]
    for name, col in zip(names, df.columns):
        values = df[col]
        chosen = kinds.get(name)
        if chosen is not None and chosen not in OVERRIDES:
            raise ValueError(f"column {name!r}: unknown kind {chosen!r}; use one of "
                             f"{list(OVERRIDES)}")
        if chosen == "drop":
            dropped.append((name, "left out as asked"))
            continue
        if frequency is not None and name == frequency[0]:
            dropped.append((name, FREQUENCY_REASON))
            continue
        if frequency is not None and chosen is None and name.strip().lower() in ROW_NAMES:
            dropped.append((name, "an identifier (row names, one per cell of the table)"))
            continue
        hole = _blank(values)
        if hole.all():
            if chosen is not None:
                raise ValueError(f"column {name!r} was given the kind {chosen!r} but has no "
                                 "values (every cell is missing)")
            dropped.append((name, "empty (every cell is missing)"))
            continue
        found = _infer_one(name, values, hole, chosen, rules, weight)
        if isinstance(found, Column):
            columns.append(found)
            cells.append(_cell_codes(values, hole))
        else:  # why it is left out
            dropped.append((name, found))
    copies = find_copies([c.name for c in columns], [c for c, _ in cells],
                         [x for _, x in cells],
                         [c.kind in ("bernoulli", "categorical") for c in columns], set(kinds))
    copies.update(find_indicators([c.name for c in columns], [c for c, _ in cells],
                                  [c.kind for c in columns], set(kinds) | set(copies)))
    if copies:
        dropped += [(c.name, copies[c.name]) for c in columns if c.name in copies]
        order = {name: j for j, name in enumerate(names)}
        dropped.sort(key=lambda d: order[d[0]])
        columns = [c for c in columns if c.name not in copies]
    if not columns:
        raise ValueError("the table has no column left to cluster on: " + "; ".join(
            f"{name!r} is {why}" for name, why in dropped[:6])
            + ("; ..." if len(dropped) > 6 else ""))
    return Schema(tuple(columns), tuple(dropped), rules,
                  weights=None if frequency is None else frequency[0])


def _infer_one(name, values, hole, chosen, rules, weight=None) -> Column | str:
    """The column's :class:`Column`, or why it is left out (an identifier).  ``weight``:
    the rows' counts in a frequency table, by which its cells count towards the rules'
    cells per level."""
    n_seen = int((~hole).sum()) if weight is None else int(weight[~hole].sum())
    text = not (pd.api.types.is_numeric_dtype(values.dtype)
                or pd.api.types.is_bool_dtype(values.dtype))
    if isinstance(values.dtype, pd.CategoricalDtype):
        numbers = None
    else:
        numbers = _as_numbers(values, hole)
    times = (_as_times(values, hole) if numbers is None and chosen in (None, "gaussian")
             else None)
    if times is not None:
        first = min(t for t in times if t is not None)
        if chosen == "gaussian" or len(np.unique(_days(times, first)[~hole])) \
                > ORDINAL_MAX_LEVELS:
            key = "dates read as days since the column's first (cells)"
            rules[key] = rules.get(key, 0) + int((~hole).sum())
            return Column(name, "gaussian", None, "given" if chosen else
                          f"dates, read as days since {_iso(first)}", _iso(first))
    if chosen in ("gaussian", "poisson"):
        if numbers is None:
            bad = _first_non_number(values, hole)
            raise ValueError(f"column {name!r} was given the kind {chosen!r} but holds text: "
                             f"{bad!r} is not a number")
        if chosen == "poisson":
            present = numbers[~hole]
            if np.any(present < 0) or np.any(present != np.round(present)):
                bad = present[(present < 0) | (present != np.round(present))][0]
                raise ValueError(f"column {name!r} was given the kind 'poisson' but {bad:g} "
                                 f"is not a count (a whole number >= 0)")
        return Column(name, chosen, None, "given")
    if chosen is None:
        constant = _constant(values, numbers, hole)
        if constant is not None:
            return constant
    if numbers is not None and not isinstance(values.dtype, pd.CategoricalDtype):
        identifier = None if chosen is not None else _numbered_id(name, numbers, hole)
        if identifier is not None:
            return identifier
        if text and chosen is None:
            rules["text read as numbers (cells)"] = (rules.get("text read as numbers (cells)", 0)
                                                     + int((~hole).sum()))
        present = np.unique(numbers[~hole])
        if chosen is None and np.all(np.isin(present, (0.0, 1.0))):
            why = "booleans" if pd.api.types.is_bool_dtype(values.dtype) else "values 0 and 1"
            return Column(name, "bernoulli", (0, 1) if not pd.api.types.is_bool_dtype(
                values.dtype) else (False, True), why)
        if chosen is None and _two_values(present, n_seen):
            levels = tuple(int(v) if v == round(v) else float(v) for v in present)
            return Column(name, "bernoulli", levels,
                          f"two values ({values.dtype})")
        if chosen is None and _whole_levels(present, n_seen):
            return Column(name, "categorical", tuple(int(v) for v in present),
                          f"{len(present)} whole-number levels (a scale or a code)")
        if chosen is None:
            return Column(name, "gaussian", None, f"numbers ({values.dtype})")
    levels = _levels(values, hole)
    if chosen is None and numbers is None and len(levels) > ID_MIN_ROWS \
            and len(levels) > LABEL_SHARE * n_seen \
            and not isinstance(values.dtype, pd.CategoricalDtype):
        if len(levels) == n_seen:
            return "an identifier (a distinct text on every row)"
        return (f"a label or an identifier ({len(levels):,} distinct texts in {n_seen:,} "
                "rows, fewer than two rows a text)")
    if chosen == "bernoulli" and len(levels) > 2:
        raise ValueError(f"column {name!r} was given the kind 'bernoulli' but has "
                         f"{len(levels)} levels: {list(levels)[:5]}")
    if chosen == "bernoulli" or (chosen is None and len(levels) <= 2):
        return Column(name, "bernoulli", _yes_no(levels),
                      "given" if chosen else f"two levels ({values.dtype})")
    return Column(name, "categorical", levels,
                  "given" if chosen else f"{len(levels)} levels ({values.dtype})")


def _cell_codes(values, hole) -> tuple[np.ndarray, np.ndarray | None]:
    """A column's cells as the index of their value (-1 in a hole) and, for a column of
    numbers, as numbers (what :func:`~dpclust.tables.copies.find_copies` compares)."""
    numbers = (None if isinstance(values.dtype, pd.CategoricalDtype)
               else _as_numbers(values, hole))
    if numbers is not None:
        return pd.factorize(numbers)[0], numbers
    text = values.astype("string").str.strip().mask(hole)
    return pd.factorize(text)[0], None


def _constant(values, numbers, hole) -> str | None:
    """Why a column is left out as a constant (one value in every filled cell), or None."""
    if numbers is not None and not isinstance(values.dtype, pd.CategoricalDtype):
        present = np.unique(numbers[~hole])
        value = None if len(present) != 1 else (
            str(bool(present[0])) if pd.api.types.is_bool_dtype(values.dtype)
            else f"{present[0]:g}")
    else:
        present = (pd.unique(values[~hole]) if isinstance(values.dtype, pd.CategoricalDtype)
                   else _levels(values, hole))  # a categorical's observed levels
        value = repr(present[0]) if len(present) == 1 else None
    if value is None:
        return None
    where = "every row" if not hole.any() else "every row that has one"
    return f"a constant ({value} on {where}: it cannot tell rows apart)"


def _whole_levels(present: np.ndarray, n_seen: int) -> bool:
    """Whether distinct numbers ``present`` (of ``n_seen`` observed cells) are the levels of
    a scale or a code: 3 to :data:`ORDINAL_MAX_LEVELS` whole numbers, with at least
    :data:`ORDINAL_MIN_CELLS` cells per level."""
    return (3 <= len(present) <= ORDINAL_MAX_LEVELS
            and n_seen >= ORDINAL_MIN_CELLS * len(present)
            and bool(np.all(present == np.round(present))))


def _two_values(present: np.ndarray, n_seen: int) -> bool:
    """Whether distinct numbers ``present`` (of ``n_seen`` observed cells) are the two
    levels of a yes/no column: two values, :data:`ORDINAL_MIN_CELLS` cells per value or
    more on average (0 and 1 are so read whatever the cells)."""
    return len(present) == 2 and n_seen >= ORDINAL_MIN_CELLS * 2


def reads_as_levels(values) -> bool:
    """Whether a column of numbers (NaN for a hole) is read as categories: two values
    (yes/no) or whole numbers of 3 to :data:`ORDINAL_MAX_LEVELS` values,
    :data:`ORDINAL_MIN_CELLS` cells per level or more (the rules of :func:`infer_schema`)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    present = np.unique(v)
    if _two_values(present, len(v)):
        return True
    if not np.all(v == np.round(v)):
        return False
    return _whole_levels(present, len(v))


def named_like_an_id(name: str) -> bool:
    """Whether a column's name says it holds identifiers: ``id``, ``uid``, ``uuid``,
    ``pid``, ``hid`` (a household's), ``key``, ``index``, ``subject``, ``patient``,
    ``participant`` or ``respondent`` (any case; the rules that read it are for whole
    numbers, so a text column of school subjects is not one), ``id`` or one of the
    abbreviations of :data:`ID_WORDS` after a separator (``respondent_id``, ``user.id``,
    ``person id``, ``Ketchup.hid``), ``id`` before one (``id_person``), or ``Id``/``ID``
    ending a camel-case name (``respondentId``, ``RespondentID``).  Words that merely end in
    *id* (``paid``, ``valid``, ``PAID``) are not ids, and neither is an index after a prefix
    (``price_index``)."""
    name = str(name).strip()
    last = re.split(r"[_.\s-]", name.lower())[-1]
    return (name.lower() in ID_NAMES or last in ID_WORDS
            or _ID_NAME.fullmatch(name) is not None)


def _numbered_id(name, numbers: np.ndarray, hole: np.ndarray) -> str | None:
    """Why a column of numbers is an identifier, or None: more than :data:`ID_MIN_ROWS`
    whole numbers, at most :data:`ID_MAX_MISSING` of the cells missing, and either distinct
    and named like an id (:func:`named_like_an_id`) or consecutive (in any row order), or
    distinct numbers of any kind under the name of R's or pandas' row names, or
    named like an id with more than :data:`ORDINAL_MAX_LEVELS` values that repeat: the units
    of a panel (a person's id on each of their years), which number them, not measure them."""
    present = numbers[~hole]
    if len(present) <= ID_MIN_ROWS or hole.sum() > ID_MAX_MISSING * len(hole):
        return None
    distinct = np.unique(present)
    if np.any(present != np.round(present)):
        # R's row names may be numbers with decimals (DAAG's rockArt: sites 7 and 7.1)
        if name.strip().lower() in ROW_NAMES and len(distinct) == len(present):
            return "an identifier (row names, a distinct number on every row)"
        return None
    if len(distinct) != len(present):
        if named_like_an_id(name) and len(distinct) > ORDINAL_MAX_LEVELS:
            return (f"an identifier of units (named like an id; {len(distinct):,} whole "
                    f"numbers, each on {len(present) / len(distinct):.1f} rows on average)")
        return None
    if named_like_an_id(name):
        return "an identifier (a distinct whole number on every row, named like an id)"
    low, high = distinct[0], distinct[-1]
    if high - low == len(distinct) - 1:
        return (f"an identifier (consecutive whole numbers, {low:.0f} to {high:.0f}, one "
                "per row)")
    return None


def numbered_ids(X) -> list[tuple[str, str]]:
    """The columns of numbers that :func:`infer_schema` leaves out as identifiers when
    given no kind for them, as ``(name, why)`` pairs in the table's order.

    A caller that would read a table of numbers as one block (the ``gaussian`` family, say)
    can ask this first, to take the rows' ids out or read the table a column at a time.
    """
    df = as_frame(X)
    found = []
    for name, col in zip((str(c) for c in df.columns), df.columns):
        values = df[col]
        if isinstance(values.dtype, pd.CategoricalDtype) \
                or pd.api.types.is_datetime64_any_dtype(values.dtype):
            continue
        hole = _blank(values)
        numbers = None if hole.all() else _as_numbers(values, hole)
        why = None if numbers is None else _numbered_id(name, numbers, hole)
        if why is not None:
            found.append((name, why))
    return found


def one_kind(df: pd.DataFrame, kind: str, named: bool = True) -> dict:
    """The kinds :func:`infer_schema` takes for a family of one kind (``"diagonal"``,
    ...): ``kind`` for every column of data.  A named table's identifiers (row names, a
    running number: :func:`numbered_ids`) get none, so the rules leave them out as ever,
    and say so; an array's columns (``named=False``) are all data."""
    ids = {name for name, _ in numbered_ids(df)} if named else set()
    return {str(c): kind for c in df.columns if str(c) not in ids}


def columns_left_out(X) -> list[tuple[str, str]]:
    """The columns of a table that :func:`infer_schema` leaves out, given no kinds, as
    identifiers (:func:`numbered_ids`) or as copies of an earlier column of numbers (the
    same values, or a transform: :func:`~dpclust.tables.copies.find_copies`): ``(name,
    why)`` pairs.

    A caller about to read a table of numbers as one block (the ``gaussian`` family, whose
    covariance a copy would make singular) asks this first, and reads the table a column at
    a time where it finds any.
    """
    ids = dict(numbered_ids(X))
    df = as_frame(X)
    kept = [(str(c), c) for c in df.columns if str(c) not in ids]
    cells = [_cell_codes(df[c], _blank(df[c])) for _, c in kept]
    copies = find_copies([name for name, _ in kept], [c for c, _ in cells],
                         [x for _, x in cells])
    return [(name, ids.get(name) or copies[name]) for name in map(str, df.columns)
            if name in ids or name in copies]


def _as_times(values, hole) -> list | None:
    """A column's dates or times (None in the holes), or None where a filled cell is not
    one (at the first such cell) or the column holds no dates (numbers, or a pandas
    categorical, are not)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return None
    if not (pd.api.types.is_datetime64_any_dtype(values.dtype) or values.dtype == object
            or isinstance(values.dtype, pd.StringDtype)):
        return None
    times = []
    for v, h in zip(values.tolist(), hole):
        t = None if h else as_datetime(v)
        if t is None and not h:
            return None
        times.append(t)
    return times


def _days(times: list, start) -> np.ndarray:
    """``times`` in days since ``start``, NaN for a hole."""
    return np.array([np.nan if t is None else (t - start).total_seconds() / DAY_SECONDS
                     for t in times])


def _iso(t) -> str:
    """A date or time as ISO text: the day alone at midnight."""
    return t.date().isoformat() if t == t.replace(hour=0, minute=0, second=0,
                                                  microsecond=0) else t.isoformat()


def _first_non_number(values, hole):
    for v, h in zip(values, hole):
        if not h:
            try:
                float(str(v).strip())
            except ValueError:
                return v
    return None


def encode(X, schema: Schema, sample_weight=None, *, what: str = "X") -> TableData:
    """Read the cells of a table under ``schema`` (columns by name for a DataFrame, in the
    schema's order for an array).

    A level that the schema does not know (new data with a category never seen in fitting)
    is read as missing; the number of such cells is kept in the result's schema rules.

    Raises
    ------
    ValueError
        A column missing from the table, a cell that does not fit its column's kind.
    """
    df = as_frame(X)
    names = [str(c) for c in df.columns]
    if not isinstance(X, pd.DataFrame):
        wanted = len(schema.columns) + len(schema.dropped)
        if df.shape[1] not in (len(schema.columns), wanted):
            raise ValueError(f"{what} has {df.shape[1]} columns, expected {len(schema.columns)}")
        df = df.set_axis([c.name for c in schema.columns] if df.shape[1] == len(schema.columns)
                         else [f"x{j}" for j in range(df.shape[1])], axis=1)
        names = list(df.columns)
    lookup = dict(zip(names, df.columns))
    missing = [c.name for c in schema.columns if c.name not in lookup]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing[:8]} that the model was fitted on")
    n = len(df)
    rules = dict(schema.rules)
    real = np.empty((n, len(schema.real)))
    code = np.empty((n, len(schema.coded)), dtype=np.int64)
    count = np.empty((n, len(schema.counts)))
    for j, c in enumerate(schema.real):
        real[:, j] = _numbers_of(df[lookup[c.name]], c, what)
    for j, c in enumerate(schema.counts):
        count[:, j] = _numbers_of(df[lookup[c.name]], c, what)
        bad = ~np.isnan(count[:, j]) & ((count[:, j] < 0) | (count[:, j] != np.round(count[:, j])))
        if bad.any():
            r = int(np.argmax(bad))
            raise ValueError(f"{what}: column {c.name!r} row {r}: {count[r, j]:g} is not a "
                             f"count (a whole number >= 0)")
    for j, c in enumerate(schema.coded):
        code[:, j], unseen = _codes_of(df[lookup[c.name]], c)
        if unseen:
            key = "levels not seen in fitting, read as missing (cells)"
            rules[key] = rules.get(key, 0) + unseen
    weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # the cells as given: a schema's principal axes are the family's to apply
    out_schema = (schema if rules == schema.rules and schema.axes is None
                  else replace(schema, rules=rules, axes=None))
    return TableData(real, code, count, weight, out_schema)


def _numbers_of(values, column: Column, what) -> np.ndarray:
    hole = _blank(values)
    if column.origin is not None:
        times = _as_times(values, hole)
        if times is None:
            bad = next((v for v, h in zip(values.tolist(), hole)
                        if not h and as_datetime(v) is None), None)
            raise ValueError(f"{what}: column {column.name!r} holds dates but {bad!r} is not "
                             "an ISO 8601 date or time (such as 2007-11-09)")
        return _days(times, as_datetime(column.origin))
    out = _as_numbers(values, hole)
    if out is None:
        bad = _first_non_number(values, hole)
        raise ValueError(f"{what}: column {column.name!r} is {column.kind} but holds "
                         f"{bad!r}, which is not a number")
    return out


def _codes_of(values, column: Column) -> tuple[np.ndarray, int]:
    hole = _blank(values)
    levels = column.levels
    index = {}
    for j, v in enumerate(levels):
        index[v] = j
        index[_key(v)] = j
    out = np.full(len(values), -1, dtype=np.int64)
    unseen = 0
    for r, (v, h) in enumerate(zip(values.tolist(), hole)):
        if h:
            continue
        j = index.get(v)
        if j is None:
            j = index.get(_key(v))
        if j is None:
            unseen += 1
        else:
            out[r] = j
    return out, unseen


def _key(v):
    """A level's text, the same for ``1``, ``1.0``, ``"1"`` and ``" 1 "``."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)).lower()
    if isinstance(v, (int, float, np.integer, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    return str(v).strip()


def check_table(X, schema: Schema | None = None, *, kinds: dict | None = None,
                kind: str | None = None, sample_weight=None, what: str = "X") -> TableData:
    """``X`` (a DataFrame, an array, or already :class:`TableData`) in working form: under
    ``schema`` when given (new data for a fitted model), else with a schema inferred from
    the data (every column of kind ``kind`` when given, else by :func:`infer_schema` with
    the overrides ``kinds``).  Rows whose every cell is missing are refused."""
    if isinstance(X, TableData):
        data = X
        if schema is not None and not schema.same_columns(X.schema):
            raise ValueError(f"{what} has other columns than the model was fitted on")
    else:
        if schema is None:
            df = as_frame(X, kind)
            if kind is not None:
                kinds = one_kind(df, kind, named=isinstance(X, pd.DataFrame))
            schema = infer_schema(df, kinds)
            X = df
        data = encode(X, schema, sample_weight, what=what)
    if len(data) == 0:
        raise ValueError(f"{what} has no rows")
    empty = data.missing().all(axis=1)
    if empty.any():
        rows = np.flatnonzero(empty)
        raise ValueError(f"{what}: {len(rows)} row(s) have every cell missing (first: row "
                         f"{rows[0]}); drop them, they carry nothing to cluster on")
    w = data.weight
    if w.shape != (len(data),) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"sample_weight must be {len(data)} positive finite numbers")
    return data
