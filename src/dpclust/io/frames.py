"""Tables of mixed columns read as a DataFrame: text kept, holes read as missing.

:func:`read_frame` reads a text table (CSV, TSV, whitespace; ``.gz`` too), a Parquet file or
a ``.npy`` array for the table families (:mod:`dpclust.families.table`), which model
missing cells rather than refuse them.  Unlike :func:`~dpclust.io.load_data` it keeps text
columns as text and reads every missing cell as missing; each such reading is a cleaning
rule, counted per column in ``meta["rules"]`` (column -> rule -> cells), so that the run
summary can say what was done to the columns it models:

* empty or blank cells, and the markers of :data:`~dpclust.tables.MISSING_MARKERS` (``NA``,
  ``?``, ``-``, ``#N/A``, ...), are missing: one rule per marker met
  (``"'NA' read as missing (cells)"``); ``None`` only in a column of numbers, where beside
  other text it is a level (:func:`dpclust.tables.columns.marked_cells`);
* a null cell of a Parquet file, a NaN of an array, an empty cell of an Excel sheet, is
  missing (``"null cells read as missing (cells)"``, ``"NaN cells read as missing
  (cells)"``, ``"empty cells read as missing (cells)"``);
* a text-table column whose present cells are all numbers (with the file's decimal mark) is
  a column of numbers, whole numbers kept whole when the column has no holes; the others
  stay text, their cells stripped of surrounding blanks.  A number written for reading
  counts as one, its marks taken off and counted (:func:`~dpclust.io.text.formatted_number`:
  ``"thousands separators taken off numbers (cells)"`` for ``2,237``, and the same for
  the currency symbol of ``$ 4,460.37`` and the percent sign of ``63.2 %``);
* in a text table, a line whose first cell starts with ``#`` is a comment unless that cell
  is a marker (``#N/A``);
* in a text table whose lines end in a line feed, a carriage return alone is a line break
  inside a cell written unquoted, not the end of a row: read as a space and counted
  (``"line breaks inside a cell read as spaces (cells)"``; :func:`~dpclust.io.files.file_lines`).

An Excel workbook (``.xlsx``, with the optional dependency openpyxl: ``pip install
dpclust[excel]``) is read from its first sheet, its cells typed as the sheet types them
(numbers, text, dates); rows with no value are skipped.
A text table's or a sheet's first row is its header when none of its cells is a number and
one at least is filled; an empty cell there names its column ``Unnamed: j`` (``j`` from 0, as
pandas names the index column it writes with ``to_csv``, whose header starts with an empty
cell, and as a trailing separator leaves one at the end).  Otherwise the file has no header
and the columns are named ``x0``, ``x1``, ... (as :func:`dpclust.tables.infer_schema` names
an array's).  Dates and the kind of each column are
left to :func:`dpclust.tables.infer_schema`.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..tables import MISSING_MARKERS
from ..tables.columns import NUMBERS_ONLY_MARKERS, marked_cells
from ..utils.checks import DataError
from .files import (CELL_BREAK, TEXT_FORMATS, check_file, detect_format, file_lines,
                    open_text, reading)
from .tables import import_pyarrow
from .text import (check_dialect_args, formatted_number, header_names, is_number, separator_hint,
                   sniff, to_float)

__all__ = ["read_frame"]

#: formats :func:`read_frame` reads
FRAME_FORMATS = (*TEXT_FORMATS, "parquet", "npy", "excel")


def read_frame(path, *, sep=None, decimal=None, text_columns=()) -> tuple[pd.DataFrame, dict]:
    """A table of mixed columns with holes, as a DataFrame.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv``/``.tsv``/``.txt`` table (optionally ``.gz``), a Parquet file, an Excel
        workbook (``.xlsx``: its first sheet) or a ``.npy`` array.
    sep, decimal : str, optional
        Text tables: as in :func:`~dpclust.io.load_data` (default: found in the file).
    text_columns : sequence of str or int, optional
        Columns of a text table kept as text even when every cell is a number (a code
        such as a postcode, to be read as categories), by name or 0-based index.

    Returns
    -------
    frame : DataFrame of shape (n_samples, n_columns)
        Numbers as ``int64`` or ``float64`` (NaN where missing), text as ``object`` (None
        where missing); Parquet columns keep their types (nulls as NaN or None).
    meta : dict
        ``path``, ``format``, ``column_names``, ``has_header``, ``rules`` (per column
        name with a rule applied: cleaning rule -> cells) and, for text tables,
        ``separator``, ``decimal`` and ``dialect``; for a workbook, ``sheet`` (the sheet
        read) and ``sheets`` (how many it has).

    Raises
    ------
    DataError
        A missing, empty or unreadable file, a row with another number of fields than the
        first, a header without data, an infinite number, a sparse ``.npz`` file.
    """
    p = check_file(path)
    fmt, gz = detect_format(p)
    if fmt not in FRAME_FORMATS:
        raise DataError(f"{p} is a {fmt} file; a table of mixed columns is read from "
                        ".csv, .tsv, .txt, .parquet, .xlsx or .npy")
    check_dialect_args(p, fmt, sep, decimal)
    rules: dict = {}
    meta = {"path": str(p), "format": fmt}
    if fmt in TEXT_FORMATS:
        dialect = sniff(p, gz, fmt, sep, decimal)
        frame, has_header = _text_frame(p, gz, dialect, text_columns, rules)
        meta.update(separator=dialect.separator, decimal=dialect.decimal,
                    dialect=dialect.describe()
                    + (" (found in the file)" if dialect.detected else " (given)"))
    elif fmt == "parquet":
        frame, has_header = _parquet_frame(p, rules), True
    elif fmt == "excel":
        frame, has_header, sheets = excel_frame(p, rules)
        meta.update(sheet=sheets[0], sheets=len(sheets))
    else:
        frame, has_header = _array_frame(p, rules), False
    if len(frame) == 0:
        raise DataError(f"{p} has no data rows.")
    meta.update(column_names=[str(c) for c in frame.columns], has_header=has_header,
                rules=rules)
    return frame, meta


def _count(rules: dict, column: str, rule: str, n: int) -> None:
    if n:
        mine = rules.setdefault(str(column), {})
        mine[rule] = mine.get(rule, 0) + int(n)


# --------------------------------------------------------------------------------------------
# text tables


def _records(p: Path, gz: bool, delimiter):
    """``(line number, fields)`` of the lines that are neither blank nor comments."""
    with reading(p), open_text(p, gz) as f:
        if delimiter is None:
            lines = ((n, line.split()) for n, line in enumerate(f, 1))
        else:
            reader = csv.reader(file_lines(f), delimiter=delimiter)
            lines = ((reader.line_num, fields) for fields in reader)
        for lineno, fields in lines:
            if not fields or all(not c.strip() for c in fields):
                continue
            first = fields[0].strip()
            if first.startswith("#") and first.lower() not in MISSING_MARKERS:
                continue
            yield lineno, fields


def _header(first: list, is_number) -> list | None:
    """The column names a first row gives (stripped cells, ``""`` for an empty one), or
    None when the row is data: a header holds no number and one name at least, and its
    empty cells are named ``Unnamed: j``."""
    if not any(c != "" for c in first) or any(c != "" and is_number(c) for c in first):
        return None
    return header_names(first)


def _text_frame(p: Path, gz: bool, dialect, text_columns, rules: dict):
    rows = list(_records(p, gz, dialect.delimiter))
    if not rows:
        raise DataError(f"{p} contains no data (only blank or comment lines).")
    first_line, first = rows[0]
    n_fields = len(first)
    names = _header([c.strip() for c in first], lambda c: is_number(c, dialect.decimal))
    has_header = names is not None
    names = names or [f"x{j}" for j in range(n_fields)]
    body = rows[1:] if has_header else rows
    if not body:
        raise DataError(f"{p} has a header row but no data rows.")
    for lineno, fields in body:
        if len(fields) != n_fields:
            raise DataError(f"{p}: line {lineno} has {len(fields)} fields, but line "
                            f"{first_line} has {n_fields}"
                            + separator_hint(" ".join(fields), dialect) + ".")
    keep_text = {names[j] if isinstance(j, int) and -n_fields <= j < n_fields else j
                 for j in text_columns}
    columns = {}
    for j, name in enumerate(names):
        cells = [fields[j] for _, fields in body]
        broken = sum(CELL_BREAK in cell for cell in cells)
        if broken:
            _count(rules, name, "line breaks inside a cell read as spaces (cells)", broken)
            cells = [cell.replace(CELL_BREAK, " ") for cell in cells]
        cells = [cell.strip() for cell in cells]
        columns[name] = _text_column(p, name, cells, [n for n, _ in body], dialect.decimal,
                                     name in keep_text, rules)
    return pd.DataFrame(columns), has_header


def _text_column(p, name, cells, lines, decimal, keep_text, rules) -> pd.Series:
    """One column of a text table: numbers when every present cell is one, else text."""
    hole = np.zeros(len(cells), dtype=bool)
    soft = np.zeros(len(cells), dtype=bool)  # holes only if the column is of numbers
    for i, cell in enumerate(cells):
        key = cell.lower()
        if key in NUMBERS_ONLY_MARKERS:
            hole[i] = soft[i] = True
        elif key in MISSING_MARKERS:
            hole[i] = True
            _count(rules, name, "empty cells read as missing (cells)" if not cell
                   else f"{cell!r} read as missing (cells)", 1)
    if not keep_text:
        numbers = np.full(len(cells), np.nan)
        marks: dict = {}
        for i, cell in enumerate(cells):
            if hole[i]:
                continue
            value = to_float(cell, decimal)
            if value is None:
                formatted = formatted_number(cell, decimal)
                if formatted is None:
                    break
                value = formatted[0]
                for mark in formatted[1]:
                    marks[mark] = marks.get(mark, 0) + 1
            if not math.isfinite(value):
                raise DataError(f"{p}: line {lines[i]}, column {name!r} holds {cell!r}, an "
                                "infinite number; remove it or leave the cell empty")
            numbers[i] = value
        else:
            for mark, n in marks.items():
                _count(rules, name, f"{mark} taken off numbers (cells)", n)
            for i in np.flatnonzero(soft):
                _count(rules, name, f"{cells[i]!r} read as missing (cells)", 1)
            if not hole.any() and np.all(numbers == np.round(numbers)) \
                    and np.all(np.abs(numbers) < 2 ** 53):
                return pd.Series(numbers.astype(np.int64), name=name)
            return pd.Series(numbers, name=name)
        _refuse_other_decimal(p, name, cells, lines, hole, decimal)
    hole &= ~soft  # beside text, "None" is a level
    return pd.Series([None if h else c for c, h in zip(cells, hole)], dtype=object, name=name)


def _refuse_other_decimal(p, name, cells, lines, hole, decimal) -> None:
    """A column whose every cell is a number written with the other decimal mark is not
    text: say which mark reads it (the decimal mark was given, or found in other lines)."""
    other = "," if decimal == "." else "."
    present = [(cell, line) for cell, line, h in zip(cells, lines, hole) if not h]
    if present and all(to_float(cell, other) is not None for cell, _ in present):
        cell, line = next((c, n) for c, n in present if to_float(c, decimal) is None)
        raise DataError(f"{p}: line {line}, column {name!r} holds {cell!r}, a number with "
                        f"the decimal mark {other!r}, but the table is read with {decimal!r}: "
                        f"give --decimal {other} (decimal={other!r})")


# --------------------------------------------------------------------------------------------
# Parquet and arrays


def _parquet_frame(p: Path, rules: dict) -> pd.DataFrame:
    pa, pq = import_pyarrow()
    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} is not a readable Parquet file ({exc}).") from None
    for name, column in zip(table.column_names, table.columns):
        _count(rules, name, "null cells read as missing (cells)", column.null_count)
    frame = table.to_pandas()
    index = (table.schema.pandas_metadata or {}).get("index_columns", [])
    if any(isinstance(c, str) for c in index):  # a stored pandas index is not a column
        frame = frame.reset_index(drop=True)
    return _marked_text(frame, rules)


def _marked_text(frame: pd.DataFrame, rules: dict) -> pd.DataFrame:
    """``frame`` with the text cells that mark a missing value (``NA``, ``?``, blank, ...)
    made None, each marker counted, and its columns named by text."""
    for name in frame.columns:
        values = frame[name]
        if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            text = values.astype("string").str.strip()
            marked = marked_cells(values)
            for cell, n in pd.Series(text[marked]).value_counts().items():
                _count(rules, name, "empty cells read as missing (cells)" if not cell
                       else f"{cell!r} read as missing (cells)", n)
            out = values.astype(object)
            frame[name] = out.where(~(marked | out.isna().to_numpy(bool)), None)
    frame.columns = [str(c) for c in frame.columns]
    return frame


def excel_frame(p: Path, rules: dict) -> tuple[pd.DataFrame, bool, list]:
    """The first sheet of an Excel workbook: ``(frame, has_header, sheet names)``, its
    empty cells and text markers of a missing cell counted in ``rules``."""
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise DataError("Reading Excel files needs the optional dependency openpyxl: pip "
                        "install dpclust[excel] (or save the sheet as .csv)") from None
    try:
        with reading(p), pd.ExcelFile(p, engine="openpyxl") as book:
            sheets = list(book.sheet_names)
            # the sheet's own text: "NA" is a marker this module counts, not pandas'
            frame = pd.read_excel(book, sheet_name=sheets[0], header=None,
                                  keep_default_na=False, na_values=[])
    except DataError:  # what ``reading`` says of a file it cannot read
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"{p} is not a readable Excel workbook ({exc}).") from None
    frame = frame.dropna(how="all").dropna(axis=1, how="all").reset_index(drop=True)
    if frame.empty:
        raise DataError(f"{p}: the sheet {sheets[0]!r} holds no data.")
    first = [v.strip() if isinstance(v, str) else "" if v is None or v != v else v
             for v in frame.iloc[0].tolist()]
    names = _header(first, lambda v: not isinstance(v, str))  # typed cells: numbers, dates
    has_header = names is not None
    if has_header:
        frame = frame.iloc[1:].reset_index(drop=True)
        frame.columns = names
    else:
        frame.columns = [f"x{j}" for j in range(frame.shape[1])]
    frame = frame.replace("", None).infer_objects()
    for name in frame.columns:  # the sheet's empty cells, in any column
        _count(rules, name, "empty cells read as missing (cells)",
               int(frame[name].isna().sum()))
    return _marked_text(frame, rules), has_header, sheets


def _array_frame(p: Path, rules: dict) -> pd.DataFrame:
    from .arrays import read_npy

    X = np.asarray(read_npy(p))
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise DataError(f"{p} holds an array of shape {X.shape} and type {X.dtype}; a table "
                        "is a 2-D array of numbers")
    if X.dtype.kind == "f":
        if np.isinf(X).any():
            raise DataError(f"{p} holds {int(np.isinf(X).sum())} infinite numbers; make them "
                            "NaN (missing) or finite")
        for j, n in enumerate(np.isnan(X).sum(axis=0)):
            _count(rules, f"x{j}", "NaN cells read as missing (cells)", n)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
