"""Numeric tables: text tables (CSV, TSV, whitespace) and Parquet files.

A text table's dialect is found by :func:`~dpclust.io.text.sniff`, its numbers are parsed by
pandas' C reader, and only when that fails (or finds a missing or non-finite value) does a
line-by-line pass with the standard ``csv`` module run, to name the line and the cell of the
first problem.  Parquet files are read through pyarrow (``pip install dpclust[parquet]``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..utils.checks import CellError, DataError
from .columns import check_column_index, resolve_columns
from .files import open_text, reading
from .text import (TextDialect, header_names, is_number, records, separator_hint, sniff,
                   to_float)

# --------------------------------------------------------------------------------------------
# text tables


def _file_column(j: int, names) -> str:
    label = f"column {j + 1}"
    if names is not None:
        label += f" ({names[j]!r})"
    return label


def infer_header(p: Path, lineno: int, fields, dialect: TextDialect) -> bool:
    """Whether the first row is a header: only when none of its cells is a number.  A row
    of numbers is data; a row that mixes numbers and text is neither, and is refused with
    the cell that breaks it (a typo in a data row must not silently become a header)."""
    numeric = [is_number(c.strip(), dialect.decimal) for c in fields]
    # a data row with a missing cell (a header may leave a name empty, as pandas does for
    # its index)
    empty = [j for j, c in enumerate(fields) if not c.strip()]
    if empty and any(numeric):
        j = empty[0]
        trailing = (" (every line ending in a separator leaves an empty last column: remove "
                    "it)") if j == len(fields) - 1 else ""
        raise CellError(f"{p}: line {lineno}, column {j + 1} is empty; missing values are not "
                        f"supported{trailing}.")
    for c, number in zip(fields, numeric):
        hint = "" if number else separator_hint(c.strip(), dialect)
        if hint:
            raise DataError(f"{p}: line {lineno}, cell {c.strip()!r} is not a number{hint}.")
    if all(numeric):
        return False
    if not any(numeric):
        return True
    j = numeric.index(False)
    k = numeric.index(True)
    raise CellError(
        f"{p}: line {lineno} mixes numbers and text: column {j + 1} holds {fields[j].strip()!r}, "
        f"which is not a number, while column {k + 1} holds the number {fields[k].strip()!r}. "
        "A header row names every column and a data row holds only numbers: fix the cell "
        "(or read the file with load_data(path, header=True) if the row is a header).")


def read_table(p: Path, gz: bool, fmt: str, column, header, sep=None, decimal=None):
    """A numeric text table: ``(X, kept column names or None, has_header, dialect)``."""
    dialect = sniff(p, gz, fmt, sep, decimal)
    with reading(p), open_text(p, gz) as f:
        first_line_no, first_fields = next(records(f, dialect.delimiter), (None, None))
    if first_fields is None:
        raise DataError(f"{p} contains no data (only blank or comment lines).")
    n_fields = len(first_fields)
    if header is None:
        has_header = infer_header(p, first_line_no, first_fields, dialect)
    else:
        has_header = header
    names = header_names(first_fields) if has_header else None
    usecols = (
        list(range(n_fields)) if column is None else resolve_columns(column, names, n_fields, p)
    )
    X = _read_table_fast(p, gz, dialect, first_line_no if has_header else None, usecols)
    if X is None or X.shape[1] != len(usecols) or not np.isfinite(X).all():
        # The slow parser reads line by line and stops at the first problem, naming it.
        X = _read_table_slow(p, gz, dialect, first_line_no, has_header, n_fields, usecols,
                             names)
    if X.shape[0] == 0:
        raise DataError(f"{p} has a header row but no data rows.")
    kept = None if names is None else [names[j] for j in usecols]
    return X, kept, has_header, dialect


def _read_table_fast(p: Path, gz: bool, dialect: TextDialect, header_line, usecols):
    """The table by pandas' C reader, or None if it fails for any reason (the slow reader
    then names the problem)."""
    import pandas as pd

    try:
        frame = pd.read_csv(
            p, sep=r"\s+" if dialect.delimiter is None else dialect.delimiter,
            decimal=dialect.decimal, header=None,
            skiprows=None if header_line is None else [header_line - 1],
            comment="#", skip_blank_lines=True, skipinitialspace=True,
            # every column is parsed (columns left out may hold text), so that a row with
            # too many fields is an error rather than silently cut
            index_col=False, dtype={j: np.float64 for j in usecols}, encoding="utf-8-sig",
            compression="gzip" if gz else None,
            engine="c")
    except (ValueError, TypeError, OSError, EOFError, pd.errors.EmptyDataError):
        return None
    if frame.shape[1] <= max(usecols):
        return None
    return np.ascontiguousarray(frame[usecols].to_numpy(dtype=np.float64))


def _read_table_slow(p, gz, dialect, first_line_no, has_header, n_fields, usecols, names):
    rows = []
    n_bad = 0
    first_bad = None
    with reading(p), open_text(p, gz) as f:
        for lineno, fields in records(f, dialect.delimiter):
            if has_header and lineno == first_line_no:
                continue
            if len(fields) != n_fields:
                raise DataError(
                    f"{p}: line {lineno} has {len(fields)} fields, but line {first_line_no} "
                    f"has {n_fields}" + separator_hint(" ".join(fields), dialect) + "."
                )
            row = []
            for j in usecols:
                cell = fields[j].strip()
                if not cell:
                    raise CellError(
                        f"{p}: line {lineno}, {_file_column(j, names)} is empty; "
                        "missing values are not supported."
                    )
                value = to_float(cell, dialect.decimal)
                if value is None:
                    shown = cell if len(cell) <= 30 else cell[:27] + "..."
                    raise CellError(
                        f"{p}: line {lineno}, {_file_column(j, names)} holds the non-numeric "
                        f"value {shown!r}; all data cells must be numbers"
                        + separator_hint(cell, dialect) + "."
                    )
                if not math.isfinite(value):
                    n_bad += 1
                    if first_bad is None:
                        first_bad = (lineno, j, cell)
                row.append(value)
            rows.append(row)
    if first_bad is not None:
        lineno, j, cell = first_bad
        raise CellError(
            f"{p} contains {n_bad} NaN or infinite "
            f"{'value' if n_bad == 1 else 'values'} (the first, {cell!r}, is at line {lineno}, "
            f"{_file_column(j, names)}); remove or impute them first."
        )
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(usecols))


# --------------------------------------------------------------------------------------------
# Parquet


def import_pyarrow():
    """``(pyarrow, pyarrow.parquet)``, or a DataError saying which extra to install."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            "Reading Parquet files needs the optional dependency pyarrow: "
            "pip install dpclust[parquet]"
        ) from None
    return pa, pq


def read_parquet(p: Path, column):
    """The numeric columns of a Parquet file (``column``: a selection, or all but a stored
    pandas index) as a float64 array, and their names."""
    pa, pq = import_pyarrow()
    try:
        pfile = pq.ParquetFile(p)
        schema = pfile.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} is not a readable Parquet file ({exc}).") from None
    names = list(schema.names)
    if column is None:
        index_columns = set()
        pandas_meta = schema.pandas_metadata or {}
        for entry in pandas_meta.get("index_columns", []):
            if isinstance(entry, str):
                index_columns.add(entry)
        indices = [j for j, name in enumerate(names) if name not in index_columns]
        if not indices:
            raise DataError(f"{p} has no data columns.")
    else:
        indices = resolve_columns(column, names, len(names), p)

    def numeric(t):
        return (
            pa.types.is_integer(t)
            or pa.types.is_floating(t)
            or pa.types.is_boolean(t)
            or pa.types.is_decimal(t)
        )

    bad = [
        f"{names[j]!r} ({schema.field(j).type})"
        for j in indices
        if not numeric(schema.field(j).type)
    ]
    if bad:
        raise CellError(
            f"{p} has non-numeric {'column' if len(bad) == 1 else 'columns'} {', '.join(bad)}; "
            "all data columns must be numeric (select numeric ones with column=[...])."
        )
    try:
        table = pfile.read(columns=list(dict.fromkeys(names[j] for j in indices)))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} cannot be read: {exc}.") from None
    if table.num_rows == 0:
        raise DataError(f"{p} has no data rows.")
    columns = []
    for j in indices:
        col = table.column(names[j])
        if col.null_count:
            raise CellError(
                f"{p}: column {names[j]!r} has {col.null_count} missing (null) "
                f"{'value' if col.null_count == 1 else 'values'}; missing values are not supported."
            )
        columns.append(np.asarray(col.cast(pa.float64()).to_numpy(), dtype=np.float64))
    return np.column_stack(columns), [names[j] for j in indices]


def read_parquet_column(p: Path, label, role: str = "label"):
    """One column of a Parquet file as Python objects: ``(values, index, names,
    index_columns)``."""
    pa, pq = import_pyarrow()
    try:
        schema = pq.read_schema(p)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} is not a readable Parquet file ({exc}).") from None
    names = list(schema.names)
    index_columns = {c for c in (schema.pandas_metadata or {}).get("index_columns", [])
                     if isinstance(c, str)}
    if isinstance(label, str):
        if label not in names:
            shown = ", ".join(repr(c) for c in names[:12]) + (", ..." if len(names) > 12 else "")
            raise DataError(f"{p} has no column named {label!r}; its columns are {shown}")
        j = names.index(label)
    else:
        j = check_column_index(p, label, len(names))
    try:
        column = pq.read_table(p, columns=[names[j]]).column(0)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} cannot be read: {exc}.") from None
    if column.null_count:
        raise DataError(f"{p}: the {role} column {names[j]!r} has {column.null_count} "
                        "missing values")
    return column.to_pylist(), j, names, index_columns
