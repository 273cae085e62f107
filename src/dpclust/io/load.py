"""The data matrix from a file of any supported format, and the columns beside it.

:func:`load_data` tells the format from the file (:mod:`dpclust.io.files`) and hands it to
its reader: text tables and Parquet (:mod:`dpclust.io.tables`), bag-of-words counts
(:mod:`dpclust.io.counts`), NumPy and SciPy files (:mod:`dpclust.io.arrays`); it then checks
the matrix as dense data or as counts.  :func:`load_data_with_columns` also reads columns
that are not features (known labels, positions: :mod:`dpclust.io.columns`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..utils.checks import CellError, DataError, check_counts, check_dense
from .arrays import read_npy, read_npz
from .columns import (as_labels, check_column_index, check_distinct, features_besides,
                      read_text_columns, resolve_columns)
from .counts import looks_like_docword, read_docword
from .files import TEXT_FORMATS, check_file, detect_format
from .tables import read_parquet, read_parquet_column, read_table
from .text import check_dialect_args, sniff

__all__ = ["load_data", "load_data_with_columns", "load_data_with_labels"]

_KINDS = ("auto", "dense", "counts")


def load_data(path, *, kind="auto", column=None, header=None, sep=None, decimal=None):
    """Load a data matrix from a file.

    Parameters
    ----------
    path : str or os.PathLike
        The file.  Its format is told by its extension (see the module docstring).
    kind : {"auto", "dense", "counts"}, default="auto"
        ``"dense"`` returns a float array checked by :func:`~dpclust.utils.checks.check_dense`;
        ``"counts"`` a CSR count matrix checked by
        :func:`~dpclust.utils.checks.check_counts` (a dense table of counts is converted);
        ``"auto"`` gives counts for sparse formats (sparse ``.npz``, bag-of-words) and a
        dense array otherwise.
    column : str, int or list of str or int, optional
        Columns to keep from a dense table, by name (a text file with a header row, or
        Parquet) or by 0-based index.  Default: all columns (for Parquet, all but a stored
        pandas index).  Not supported for sparse formats.
    header : bool or None, default=None
        Text tables only: whether the first row holds column names.  ``None`` detects it:
        the first row is a header when none of its cells is a number, data when all are,
        and an error naming the line and the cell when it mixes both (a typo in a data row
        must not become a header).  Pass ``True`` for numeric column names such as those
        pandas writes for an unnamed DataFrame (``0,1,2``).
    sep : {"comma", "semicolon", "tab", "whitespace"}, optional
        Text tables only: the separator (``","``, ``";"``, ``"\\t"`` and ``" "`` also
        work).  Default: found by :class:`csv.Sniffer` over the first 200 lines, among tab,
        semicolon and comma in that order of preference (spreadsheets write tab- and
        semicolon-separated files named .csv), else runs of whitespace.
    decimal : {".", ","}, optional
        Text tables only: the decimal mark.  Default: a comma when the separator is not a
        comma and a cell of the first lines looks like ``1,5``, else a point.  A cell that
        looks like a number written with the other mark, or that holds another separator,
        is named in the error with the argument that fixes it.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
        A C-contiguous float64 array, or a canonical float64 CSR matrix of counts.
    meta : dict
        ``path`` (str), ``format`` (``"csv"``, ``"tsv"``, ``"txt"``, ``"npy"``, ``"npz"``,
        ``"parquet"`` or ``"docword"``), ``n_samples``, ``n_features``, ``column_names``
        (list of str for the columns kept, or None when the file has none), ``has_header``
        (whether column names were read from the file) and, for text tables,
        ``separator`` (``"comma"``, ``"semicolon"``, ``"tab"`` or ``"whitespace"``),
        ``decimal`` (``"."`` or ``","``) and ``dialect`` (one line saying both, and whether
        they were found or given).

    Raises
    ------
    DataError
        If the file is missing, a directory, empty, unreadable or not in its format, or its
        data are invalid (non-numeric cells, missing values, NaN or infinite entries, wrong
        shape; for counts, negative or fractional entries).  The message names the path.
    ValueError
        If ``kind``, ``column`` or ``header`` is not a valid value.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}.")
    if header not in (None, True, False):
        raise ValueError(f"header must be None, True or False, got {header!r}.")
    p, fmt, gz = _file_format(path)
    check_dialect_args(p, fmt, sep, decimal)
    X, names, has_header, dialect = _read_matrix(p, fmt, gz, column, header, sep, decimal)
    X = _checked(X, kind, fmt, p)
    meta = {
        "path": str(p),
        "format": fmt,
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "column_names": names,
        "has_header": has_header,
    }
    if dialect is not None:
        meta.update(separator=dialect.separator, decimal=dialect.decimal,
                    dialect=dialect.describe()
                    + (" (found in the file)" if dialect.detected else " (given)"))
    return X, meta


def _file_format(path) -> tuple[Path, str, bool]:
    """The checked path, its format (a ``.txt`` file laid out as bag-of-words is
    ``"docword"``) and whether it is gzipped."""
    p = check_file(path)
    fmt, gz = detect_format(p)
    if fmt == "txt" and looks_like_docword(p, gz):
        fmt = "docword"
    return p, fmt, gz


def _read_excel_numbers(p: Path, column) -> tuple[np.ndarray, list, bool]:
    """The columns (``column``: a selection, else all) of an Excel workbook's first sheet
    as a float64 array: every cell a number (:func:`dpclust.io.frames.excel_frame` reads
    the sheet)."""
    import pandas as pd

    from .frames import excel_frame

    frame, has_header, sheets = excel_frame(p, {})
    names = [str(c) for c in frame.columns]
    indices = (range(len(names)) if column is None
               else resolve_columns(column, names, len(names), p))
    columns = []
    for j in indices:
        values = frame.iloc[:, j]
        if not pd.api.types.is_numeric_dtype(values.dtype) \
                or pd.api.types.is_bool_dtype(values.dtype):
            raise CellError(f"{p}: column {names[j]!r} of the sheet {sheets[0]!r} holds text; "
                            "a table of numbers needs numbers in every cell (--family auto "
                            "reads mixed columns)")
        if values.isna().any():
            raise CellError(f"{p}: column {names[j]!r} of the sheet {sheets[0]!r} has "
                            f"{int(values.isna().sum())} empty cells; --family auto reads a "
                            "table with holes")
        columns.append(values.to_numpy(dtype=np.float64))
    return np.column_stack(columns), [names[j] for j in indices], has_header


def _read_matrix(p: Path, fmt: str, gz: bool, column, header, sep, decimal):
    """``(X, column names or None, has_header, dialect or None)`` by the reader of ``fmt``."""
    if fmt in TEXT_FORMATS:
        return read_table(p, gz, fmt, column, header, sep, decimal)
    if fmt == "parquet":
        X, names = read_parquet(p, column)
        return X, names, True, None
    if fmt == "excel":
        X, names, has_header = _read_excel_numbers(p, column)
        return X, names, has_header, None
    if fmt == "docword":
        X = read_docword(p, gz)
    elif fmt == "npy":
        X = read_npy(p)
    else:
        X = read_npz(p)
    if column is not None:
        if sp.issparse(X):
            raise ValueError(
                f"column selection is only supported for dense tables; {p} holds sparse counts."
            )
        X = np.asarray(X)
        if X.ndim == 2:
            X = X[:, resolve_columns(column, None, X.shape[1], p)]
    return X, None, False, None


def _checked(X, kind: str, fmt: str, p: Path):
    """``X`` checked as counts (sparse data, or ``kind="counts"``) or as dense data."""
    what = str(p)
    if sp.issparse(X):
        if kind == "dense":
            raise DataError(
                f"{p} holds sparse counts ({fmt}); load it with kind='counts' (or 'auto') "
                "and use a count-data model."
            )
        return check_counts(X, what=what)
    if kind == "counts":
        return check_counts(X, what=what)
    return check_dense(X, what=what)


# --------------------------------------------------------------------------------------------
# a table with columns besides the features (known labels, positions)


def load_data_with_labels(path, label_column, *, kind: str = "auto", column=None, sep=None,
                          decimal=None):
    """Features and known labels from one table; the label column is not a feature.

    Parameters
    ----------
    path : str or Path
        A CSV/TSV/text table (with or without a header row), a ``.npy``/``.npz`` array or a
        Parquet file.
    label_column : str or int
        Name (with a header row or in Parquet) or 0-based index of the column of labels.
        Labels may be numbers or words.
    kind : {"auto", "dense", "counts"}, default="auto"
        As in :func:`load_data`, for the features.
    column : list of str or int, optional
        Feature columns; default all but the label column.
    sep, decimal : str, optional
        As in :func:`load_data`.

    Returns
    -------
    X : features, as from :func:`load_data`
    meta : dict, as from :func:`load_data`
    labels : ndarray of shape (n_samples,)
        Numbers when every label is a number, else strings.

    Raises
    ------
    DataError
        For a missing label column, a label column among the features, a sparse or docword
        file (they have no label column), or the problems :func:`load_data` reports.
    """
    X, meta, values = load_data_with_columns(path, {"label": label_column}, kind=kind,
                                             column=column, sep=sep, decimal=decimal)
    return X, meta, as_labels(values["label"])


def load_data_with_columns(path, columns, *, kind: str = "auto", column=None, sep=None,
                           decimal=None):
    """Features and some other columns of one table (known labels, positions, ...).

    The other columns are read as they are and are not features.

    Parameters
    ----------
    path : str or Path
        A CSV/TSV/text table (with or without a header row), a ``.npy``/``.npz`` array or a
        Parquet file.
    columns : mapping of str to (str or int)
        What each column is for (a word used in messages, such as ``"label"`` or
        ``"positions"``) and the column: its name (with a header row or in Parquet) or
        0-based index.  Two entries may not name the same column.
    kind : {"auto", "dense", "counts"}, default="auto"
        As in :func:`load_data`, for the features.
    column : list of str or int, optional
        Feature columns; default all but those of ``columns``.
    sep, decimal : str, optional
        As in :func:`load_data` (text tables only).

    Returns
    -------
    X : features, as from :func:`load_data`
    meta : dict, as from :func:`load_data`
    values : dict of str to sequence of length n_samples
        Each entry of ``columns`` read as it is: str per cell for a text table, Python
        objects (numbers, dates) for Parquet, floats for an array.

    Raises
    ------
    DataError
        For a missing column, one of these columns among the features or two of them the
        same column, a sparse or docword file (they have no such columns), or the problems
        :func:`load_data` reports.
    """
    p = Path(path)
    roles = dict(columns)
    if not roles:
        raise ValueError("columns must name at least one column")
    _, fmt, gz = _file_format(p)
    what = " and ".join(f"{role} column" for role in roles)
    check_dialect_args(p, fmt, sep, decimal)
    if fmt in TEXT_FORMATS:
        X, meta, values = _text_with_columns(p, gz, fmt, roles, kind, column, sep, decimal)
    elif fmt == "parquet":
        X, meta, values = _parquet_with_columns(p, roles, what, kind, column)
    elif fmt in ("npy", "npz"):
        X, meta, values = _array_with_columns(p, roles, what, kind, column)
    elif fmt == "excel":
        raise DataError(f"{p}: an Excel sheet with a {what} is read as a table of mixed "
                        "columns: fit it with --family auto (the default) or table, or save "
                        "the sheet as .csv")
    else:
        raise DataError(f"{p} is a {fmt} file of counts; a {what} needs a table (CSV, TSV, "
                        ".npy or Parquet) that holds it")
    for role, v in values.items():
        if len(v) != X.shape[0]:
            raise DataError(f"{p}: the {role} column has {len(v)} values for "
                            f"{X.shape[0]} rows of features")
    return X, meta, values


def _text_with_columns(p: Path, gz: bool, fmt: str, roles: dict, kind, column, sep, decimal):
    dialect = sniff(p, gz, fmt, sep, decimal)
    values, found, n_columns, names, has_header = read_text_columns(p, gz, dialect, roles)
    features = features_besides(p, column, found, n_columns, names)
    X, meta = load_data(p, kind=kind, column=features, header=has_header, sep=sep,
                        decimal=decimal)
    return X, meta, values


def _parquet_with_columns(p: Path, roles: dict, what: str, kind, column):
    values, found = {}, {}
    names = index_columns = None
    for role, spec in roles.items():
        values[role], found[role], names, index_columns = read_parquet_column(p, spec, role)
    check_distinct(p, found, names)
    if column is None:
        features = [n for i, n in enumerate(names)
                    if i not in found.values() and n not in index_columns]
    else:
        features = features_besides(p, column, found, len(names), names)
    if not features:
        raise DataError(f"{p} has no feature columns besides the {what}")
    X, meta = load_data(p, kind=kind, column=features)
    return X, meta, values


def _array_with_columns(p: Path, roles: dict, what: str, kind, column):
    table, meta = load_data(p, kind="auto")
    if sp.issparse(table):
        raise DataError(f"{p} holds sparse counts; a {what} needs a table (CSV, TSV, .npy "
                        "or Parquet) that holds it")
    n_columns = table.shape[1]
    found, values = {}, {}
    for role, spec in roles.items():
        if isinstance(spec, str):
            raise DataError(f"{p} has no column names, so give the {role} column as a "
                            f"0-based column index, not a name ({spec!r})")
        found[role] = check_column_index(p, spec, n_columns)
        values[role] = table[:, found[role]]
    check_distinct(p, found, None)
    features = features_besides(p, column, found, n_columns, None)
    X = table[:, features]
    X = check_counts(X, what=str(p)) if kind == "counts" else np.ascontiguousarray(X)
    meta = dict(meta, n_features=int(X.shape[1]))
    return X, meta, values
