"""Columns of a table: choosing them, and reading the columns that are not features.

:func:`resolve_columns` turns a ``column=`` selection (names or 0-based indices) into
indices; :func:`read_text_columns` reads columns such as known labels or positions from a
text table as strings; :func:`as_labels` and :func:`parse_positions` give such a column its
meaning.  :func:`~dpclust.io.load_data_with_columns` puts these together with the features.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from ..utils.checks import DataError
from ..utils.times import as_datetime
from .files import open_text, reading
from .text import TextDialect, is_number, records

__all__ = ["parse_positions"]


def resolve_columns(column, names, n_columns: int, p: Path) -> list[int]:
    """0-based indices of the selected columns."""
    if isinstance(column, (str, numbers.Integral)):
        column = [column]
    try:
        column = list(column)
    except TypeError:
        raise ValueError(
            f"column must be a column name, an index or a list of them, got {column!r}."
        ) from None
    if not column:
        raise ValueError("column must select at least one column.")
    indices = []
    for c in column:
        if isinstance(c, str):
            if names is None:
                raise DataError(
                    f"{p} has no column names (no header row), so select columns by 0-based "
                    f"index, not by name ({c!r})."
                )
            hits = [j for j, name in enumerate(names) if name == c]
            if not hits:
                shown = ", ".join(repr(n) for n in names[:12])
                shown += ", ..." if len(names) > 12 else ""
                raise DataError(f"{p} has no column named {c!r}; its columns are {shown}.")
            if len(hits) > 1:
                raise DataError(
                    f"{p} has {len(hits)} columns named {c!r}; select them by index instead."
                )
            indices.append(hits[0])
        elif isinstance(c, numbers.Integral) and not isinstance(c, (bool, np.bool_)):
            if not -n_columns <= c < n_columns:
                raise DataError(
                    f"{p}: column index {c} is out of range; the file has {n_columns} columns."
                )
            indices.append(int(c) % n_columns)
        else:
            raise ValueError(f"column entries must be names (str) or indices (int), got {c!r}.")
    return indices


def check_column_index(p: Path, j: int, n_columns: int) -> int:
    """``j`` as an index in ``0 .. n_columns - 1`` (negative counts from the end)."""
    if not -n_columns <= j < n_columns:
        raise DataError(f"{p}: column index {j} is out of range; the file has {n_columns} columns")
    return j % n_columns


def check_distinct(p: Path, found: dict, names) -> None:
    """Two roles (label, positions, ...) may not name the same column."""
    seen = {}
    for role, j in found.items():
        if j in seen:
            shown = f"{names[j]!r}" if names is not None else f"index {j}"
            raise DataError(f"{p}: the {seen[j]} and {role} columns are the same column "
                            f"({shown})")
        seen[j] = role


def features_besides(p: Path, columns, found: dict, n_columns: int, names) -> list:
    """The feature columns: ``columns`` (names or indices) or all but the columns of
    ``found`` (role -> 0-based index)."""
    if columns is None:
        features = [i for i in range(n_columns) if i not in found.values()]
        if not features:
            what = " and ".join(found)
            raise DataError(f"{p} has only the {what} column"
                            f"{'s' if len(found) > 1 else ''}; there are no features to "
                            "cluster")
        return features
    for c in columns:
        for role, j in found.items():
            if (isinstance(c, int) and -n_columns <= c < n_columns and c % n_columns == j) or (
                    isinstance(c, str) and names is not None and c == names[j]):
                why = ("the known labels must not be used as a feature" if role == "label"
                       else "it cannot also be a feature")
                raise DataError(f"the feature columns include the {role} column {c!r}; {why}")
    return list(columns)


def read_text_columns(p: Path, gz: bool, dialect: TextDialect, roles: dict):
    """Read some columns of a text table as strings, with the conventions of ``load_data``.

    Returns
    -------
    values : dict of str to list of str
        The cells of each column of ``roles``.
    found : dict of str to int
        0-based index of each column.
    n_columns : int
    names : list of str or None
        Column names when the file has a header row.
    has_header : bool
        Whether the first row holds names.  With every column given by index this is decided
        from the other cells of the first row, as the columns read may hold words.
    """
    with reading(p), open_text(p, gz) as f:
        rows = list(records(f, dialect.delimiter))
    first_line_no = rows[0][0]
    first = [c.strip() for c in rows[0][1]]
    n_columns = len(first)
    found = {}
    has_header = False
    for role, spec in roles.items():
        if isinstance(spec, str):
            if spec not in first:
                if all(is_number(c, dialect.decimal) for c in first):
                    raise DataError(f"{p} has no header row, so give the {role} column as a "
                                    f"0-based column index, not a name ({spec!r})")
                shown = (", ".join(repr(c) for c in first[:12])
                         + (", ..." if n_columns > 12 else ""))
                raise DataError(f"{p} has no column named {spec!r}; its columns are {shown}")
            found[role] = first.index(spec)
            has_header = True
        else:
            found[role] = check_column_index(p, spec, n_columns)
    if not has_header:
        others = [c for i, c in enumerate(first) if i not in found.values()]
        has_header = (not all(is_number(c, dialect.decimal) for c in others) if others
                      else False)
    names = first if has_header else None
    check_distinct(p, found, names)
    values = {role: [] for role in roles}
    for lineno, fields in rows[1 if has_header else 0:]:
        if len(fields) != n_columns:
            raise DataError(f"{p}: line {lineno} has {len(fields)} fields, but line "
                            f"{first_line_no} has {n_columns}.")
        for role, j in found.items():
            value = fields[j].strip()
            if not value:
                raise DataError(f"{p}: line {lineno}: the {role} column {j + 1} is empty")
            values[role].append(value)
    if not rows[1 if has_header else 0:]:
        raise DataError(f"{p} has a header row but no data rows.")
    return values, found, n_columns, names, has_header


def as_labels(values) -> np.ndarray:
    """Known labels as an array: integers or floats when every value is a number, else str."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        return arr
    try:
        num = np.asarray([float(v) for v in arr], dtype=np.float64)
    except (TypeError, ValueError):
        return arr.astype(str)
    return num


def parse_positions(values, *, what: str = "positions") -> np.ndarray:
    """Customers' positions from a column: numbers, or dates and times.

    Parameters
    ----------
    values : sequence of length n_samples
        Numbers, strings (numbers, or ISO 8601 dates and times such as ``2024-03-01``,
        ``2024-03-01 12:30`` or ``2024-03-01T12:30:00+02:00``), ``datetime``/``date``
        objects or ``numpy.datetime64`` values.
    what : str, default="positions"
        How messages name the values (for example ``"data.csv: the positions column
        'date'"``).

    Returns
    -------
    positions : ndarray of shape (n_samples,)
        float64 when every value is a number, else ``datetime64[s]`` (times with a time
        zone are converted to UTC).  The distance dependent CRP measures datetimes in days.

    Raises
    ------
    DataError
        For a value that is neither a number nor a date, a mix of the two, or NaN or
        infinite numbers.
    """
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1:
        raise DataError(f"{what}: expected one value per row, got shape {arr.shape}")
    if arr.size == 0:
        raise DataError(f"{what}: no values")
    if arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise DataError(f"{what}: {int(np.isnat(arr).sum())} missing times (NaT)")
        return arr.astype("datetime64[s]")
    if arr.dtype.kind in "biuf":
        out = arr.astype(np.float64)
    else:
        items = arr.tolist()
        as_numbers = [_number_or_none(v) for v in items]
        if all(v is not None for v in as_numbers):
            out = np.array(as_numbers, dtype=np.float64)
        else:
            times = []
            for i, v in enumerate(items):
                t = as_datetime(v)
                if t is None:
                    kind = ("a number among dates" if as_numbers[i] is not None
                            else "not a number")
                    raise DataError(
                        f"{what}: {v!r} (value {i + 1} of {len(items)}) is {kind}; positions "
                        "must all be numbers, or all ISO 8601 dates or times such as "
                        "2024-03-01 or 2024-03-01T12:30")
                times.append(t)
            return np.array(times, dtype="datetime64[s]")
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{what}: {int(bad.sum())} NaN or infinite values (the first is value "
                        f"{i + 1} of {len(out)})")
    return out


def _number_or_none(v):
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None
