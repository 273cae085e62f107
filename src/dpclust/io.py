"""Reading data files and writing cluster labels.

:func:`load_data` reads a data matrix from a file whose format is told by its extension:

==========================  ==========================================================  =======
extension                   contents                                                    kind
==========================  ==========================================================  =======
``.csv``, ``.tsv``, ``.txt``  numeric table, optional header row (detected), ``.gz`` ok    dense
``.npy``                    a 2-D numeric NumPy array                                   dense
``.npz``                    a scipy sparse matrix (``scipy.sparse.save_npz``), or an     counts
                            ``np.savez`` archive holding a single array                 (dense)
``.parquet``, ``.pq``       numeric columns (needs ``pip install dpclust[parquet]``)    dense
``docword*.txt[.gz]``       UCI bag-of-words: lines ``D``, ``W``, ``NNZ``, then          counts
                            ``docID wordID count`` triples (1-based)
==========================  ==========================================================  =======

A ``.txt`` file whose content has the bag-of-words layout is read as such whatever its name.
Text tables are parsed by pandas' C reader; their separator and decimal mark are found by
:class:`csv.Sniffer` and a decimal-comma check (or given: ``sep=``, ``decimal=``), and
``meta["dialect"]`` says which (see :func:`load_data`).
Every problem -- a missing, empty, unreadable or garbled file, a non-numeric cell, a missing
value, NaN, a negative count -- raises one :class:`~dpclust.utils.checks.DataError` whose
message starts with the path and names the problem.  In messages about text files, ``line``
and ``column`` numbers are 1-based, as in an editor; in messages about arrays (``.npy``,
``.npz``, Parquet) ``row`` and ``column`` are 0-based indices.
"""

from __future__ import annotations

import csv
import datetime
import gzip
import math
import numbers
import os
import re
import warnings
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .utils.checks import DataError, check_counts, check_dense

__all__ = [
    "DataError",
    "load_data",
    "load_data_with_columns",
    "load_data_with_labels",
    "load_distances",
    "load_item_names",
    "load_vocabulary",
    "parse_positions",
    "save_labels_csv",
]

_KINDS = ("auto", "dense", "counts")
_TEXT_FORMATS = ("csv", "tsv", "txt")
_SUPPORTED = ".csv, .tsv, .txt (optionally .gz), .npy, .npz, .parquet, .pq"
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


# --------------------------------------------------------------------------------------------
# public API


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
    p = _check_file(path)
    fmt, gz = _detect_format(p)
    if fmt == "txt" and _looks_like_docword(p, gz):
        fmt = "docword"

    names = None
    has_header = False
    dialect = None
    _check_dialect_args(p, fmt, sep, decimal)
    if fmt in _TEXT_FORMATS:
        X, names, has_header, dialect = _read_table(p, gz, fmt, column, header, sep, decimal)
    elif fmt == "parquet":
        X, names = _read_parquet(p, column)
        has_header = True
    else:
        if fmt == "docword":
            X = _read_docword(p, gz)
        elif fmt == "npy":
            X = _read_npy(p)
        else:
            X = _read_npz(p)
        if column is not None:
            if sp.issparse(X):
                raise ValueError(
                    f"column selection is only supported for dense tables; {p} holds sparse counts."
                )
            X = np.asarray(X)
            if X.ndim == 2:
                X = X[:, _resolve_columns(column, None, X.shape[1], p)]

    what = str(p)
    if sp.issparse(X):
        if kind == "dense":
            raise DataError(
                f"{p} holds sparse counts ({fmt}); load it with kind='counts' (or 'auto') "
                "and use a count-data model."
            )
        X = check_counts(X, what=what)
    elif kind == "counts":
        X = check_counts(X, what=what)
    else:
        X = check_dense(X, what=what)

    meta = {
        "path": what,
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


def save_labels_csv(path, labels, *, header="label", certainty=None):
    """Write cluster labels to a CSV file, one label a line, after a header line.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (overwritten).
    labels : array-like of shape (n_samples,)
        Integer labels (floats that are whole numbers are accepted; negative values such as
        ``-1`` for "unassigned" are written as they are).
    header : str or None, default="label"
        The header line; ``None`` writes no header.
    certainty : array-like of shape (n_samples,), optional
        A second column ``certainty`` (each point's probability of lying in the core of
        its cluster, :func:`dpclust.partitions.point_certainty`), with four decimals.

    Raises
    ------
    DataError
        If ``labels`` is not a 1-D array of integers, or the file cannot be written.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise DataError(f"labels must be a 1-D array, got shape {arr.shape}.")
    if arr.dtype.kind == "f":
        if not (np.isfinite(arr).all() and (arr == np.floor(arr)).all()):
            raise DataError("labels must be whole numbers; found a fractional or NaN value.")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "biu":
        raise DataError(f"labels must be integers, got dtype {arr.dtype}.")
    if header is not None and ("\n" in str(header) or "\r" in str(header)):
        raise ValueError("header must be a single line.")
    if certainty is None:
        lines = [] if header is None else [str(header)]
        lines.extend(str(v) for v in arr.astype(np.int64).tolist())
    else:
        cert = np.asarray(certainty, dtype=np.float64)
        if cert.shape != arr.shape:
            raise ValueError(f"certainty has shape {cert.shape}, the labels {arr.shape}")
        lines = [] if header is None else [f"{header},certainty"]
        lines.extend(f"{v},{c:.4f}" for v, c in zip(arr.astype(np.int64).tolist(),
                                                   cert.tolist()))
    try:
        with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise DataError(f"cannot write labels to {path}: {exc.strerror or exc}") from None


def load_vocabulary(path):
    """Read a vocabulary file: one word a line, in column order of the count matrix.

    Parameters
    ----------
    path : str or os.PathLike
        A UTF-8 text file (``.gz`` accepted).  Surrounding whitespace is stripped and
        trailing blank lines are dropped; a blank line elsewhere stays (as ``""``) so that
        word ``i`` stays on line ``i + 1``.

    Returns
    -------
    words : list of str

    Raises
    ------
    DataError
        If the file is missing, empty, or not UTF-8 text.
    """
    return _read_names(path, "words")


def load_item_names(path):
    """Read the names of ranked items: one name a line, item ``j`` on line ``j + 1``.

    For ``dpclust fit --family mallows --items FILE``: in a rankings file of item ids, id
    ``index_base + j`` is the name on line ``j + 1``; in a file of names, every name must be
    one of them.

    Parameters
    ----------
    path : str or os.PathLike
        A UTF-8 text file (``.gz`` accepted), read as :func:`load_vocabulary` reads one.

    Returns
    -------
    names : list of str

    Raises
    ------
    DataError
        If the file is missing, empty, or not UTF-8 text.
    """
    return _read_names(path, "item names")


def _read_names(path, what: str) -> list:
    """One name a line, stripped; trailing blank lines dropped (others kept as ``""``)."""
    p = _check_file(path)
    with _reading(p), _open_text(p, p.name.lower().endswith(".gz"), newline=None) as f:
        names = [w.strip() for w in f.read().split("\n")]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise DataError(f"{p} holds no {what}.")
    return names


# --------------------------------------------------------------------------------------------
# files and formats


def _check_file(path) -> Path:
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}.") from None
    if p.is_dir():
        raise DataError(f"{p} is a directory, not a data file.")
    if not p.exists():
        raise DataError(f"{p}: no such file.")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise DataError(f"{p} cannot be read: {exc.strerror or exc}.") from None
    if size == 0:
        raise DataError(f"{p} is empty (0 bytes).")
    return p


def _detect_format(p: Path) -> tuple[str, bool]:
    name = p.name.lower()
    gz = name.endswith(".gz")
    base = name[:-3] if gz else name
    ext = os.path.splitext(base)[1]
    if ext == ".txt" and base.startswith("docword"):
        return "docword", gz
    if ext in (".csv", ".tsv", ".txt"):
        return ext[1:], gz
    if not gz:
        if ext in (".npy", ".npz"):
            return ext[1:], gz
        if ext in (".parquet", ".pq"):
            return "parquet", gz
    raise DataError(
        f"{p}: unsupported file type {p.suffix or '(no extension)'!r}; "
        f"expected one of {_SUPPORTED}."
    )


def _open_text(p: Path, gz: bool, newline=""):
    if gz:
        return gzip.open(p, "rt", encoding="utf-8-sig", newline=newline)
    return open(p, encoding="utf-8-sig", newline=newline)


@contextmanager
def _reading(p: Path):
    """Translate low-level read errors into one :class:`DataError` naming ``p``."""
    try:
        yield
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{p} is not a UTF-8 text file (undecodable byte at offset {exc.start})."
        ) from None
    except (OSError, EOFError, csv.Error, zipfile.BadZipFile) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise DataError(f"{p} cannot be read: {reason}.") from None


def _magic(p: Path) -> bytes:
    with _reading(p), open(p, "rb") as f:
        return f.read(6)


def _file_column(j: int, names) -> str:
    label = f"column {j + 1}"
    if names is not None:
        label += f" ({names[j]!r})"
    return label


def _resolve_columns(column, names, n_columns: int, p: Path) -> list[int]:
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


# --------------------------------------------------------------------------------------------
# text tables
#
# The dialect (separator and decimal mark) is found by ``csv.Sniffer`` on the first lines,
# the numbers are parsed by pandas' C reader, and only when that fails (or finds a missing
# or non-finite value) does a line-by-line pass with the standard ``csv`` module run, to
# name the line and the cell of the first problem.

_SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs", None: "whitespace"}
_SEP_NAMES = {"comma": ",", ",": ",", "semicolon": ";", ";": ";", "tab": "\t", "\t": "\t",
              "\\t": "\t", "whitespace": None, "space": None, " ": None}
_DECIMALS = {".": "decimal points", ",": "decimal commas"}
_SAMPLE_LINES = 200
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class TextDialect:
    """How a text table is laid out: what :func:`load_data` found or was told.

    Attributes
    ----------
    delimiter : str or None
        ``","``, ``";"`` or ``"\\t"``; None for runs of whitespace.
    decimal : str
        ``"."`` or ``","``.
    detected : bool
        Whether the separator was found in the file (rather than given).
    """

    delimiter: str | None
    decimal: str
    detected: bool = True

    @property
    def separator(self) -> str:
        """The separator's name: ``"comma"``, ``"semicolon"``, ``"tab"`` or ``"whitespace"``."""
        return {",": "comma", ";": "semicolon", "\t": "tab", None: "whitespace"}[self.delimiter]

    def describe(self) -> str:
        """One line for messages and summaries, e.g. ``"separated by semicolons, decimal
        commas"``."""
        return f"separated by {_SEPARATORS[self.delimiter]}, {_DECIMALS[self.decimal]}"


def _check_dialect_args(p: Path, fmt: str, sep, decimal) -> None:
    if fmt not in _TEXT_FORMATS and (sep is not None or decimal is not None):
        raise ValueError(f"sep and decimal apply to text tables; {p} is a {fmt} file.")


def _parse_sep(sep):
    try:
        return _SEP_NAMES[sep]
    except (KeyError, TypeError):
        raise ValueError(f"sep must be one of 'comma', 'semicolon', 'tab' or 'whitespace' (or "
                         f"',', ';', '\\t', ' '), got {sep!r}.") from None


def _data_lines(p: Path, gz: bool, n: int) -> list:
    """The first (up to ``n``) lines that are neither blank nor a ``#`` comment."""
    lines = []
    with _reading(p), _open_text(p, gz) as f:
        for line in f:
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                lines.append(line)
                if len(lines) == n:
                    break
    return lines


def _sniff(p: Path, gz: bool, fmt: str, sep=None, decimal=None) -> TextDialect:
    """The separator and decimal mark of a text table.

    The separator is ``sep`` when given, a tab in a ``.tsv`` file, else what
    :class:`csv.Sniffer` finds consistent over the first lines among tab, semicolon and
    comma (preferred in that order: spreadsheets write tab- and semicolon-separated files
    named ``.csv``, and a semicolon or tab is never a decimal mark), else the first line's
    tab, semicolon or comma, else runs of whitespace.  The decimal mark is ``decimal`` when
    given, else a comma when the separator is not one and a cell of the first lines looks
    like ``1,5``.
    """
    if decimal not in (None, ".", ","):
        raise ValueError(f"decimal must be '.' or ',', got {decimal!r}.")
    lines = _data_lines(p, gz, _SAMPLE_LINES)
    if not lines:
        raise DataError(f"{p} contains no data (only blank or comment lines).")
    if sep is not None:
        delimiter, detected = _parse_sep(sep), False
    elif fmt == "tsv":
        delimiter, detected = "\t", True
    else:
        sniffer = csv.Sniffer()
        sniffer.preferred = ["\t", ";", ","]
        try:
            delimiter = sniffer.sniff("".join(lines), delimiters="\t;,").delimiter
        except csv.Error:
            delimiter = _first_line_delimiter(fmt, lines[0])
        detected = True
    if decimal is None:
        decimal = "."
        if delimiter != ",":
            cells = (c.strip().strip('"').strip() for line in lines
                     for c in (line.split() if delimiter is None else line.split(delimiter)))
            if any(_DECIMAL_COMMA.match(c) for c in cells):
                decimal = ","
    elif decimal == "," and delimiter == ",":
        raise DataError(f"{p}: the columns are separated by commas, so numbers cannot have a "
                        "decimal comma; give the separator (sep='semicolon', --sep semicolon)")
    return TextDialect(delimiter, decimal, detected)


def _first_line_delimiter(fmt: str, line: str):
    """The separator when the first lines are not consistent: the first line's tab or
    semicolon if it has one, else a comma, else runs of whitespace (also in a .csv file
    whose first line has none of the three)."""
    if "\t" in line and "," not in line and ";" not in line:
        return "\t"
    if ";" in line:
        return ";"
    if "," in line or (fmt == "csv" and len(line.split()) < 2):
        return ","
    return None


def _records(f, delimiter):
    """Yield (line number, fields) of the data-bearing lines of an open text file."""
    if delimiter is None:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                yield lineno, fields
        return
    reader = csv.reader(f, delimiter=delimiter)
    for fields in reader:
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if fields[0].lstrip().startswith("#"):
            continue
        yield reader.line_num, fields


def _to_float(cell: str, decimal: str = "."):
    """The number a cell holds, or None."""
    if decimal == ",":
        if "." in cell:
            return None
        cell = cell.replace(",", ".", 1)
    if "_" in cell:  # Python's float() reads 1_000; a data file should not
        return None
    try:
        return float(cell)
    except ValueError:
        return None


def _is_number(cell: str, decimal: str = ".") -> bool:
    return _to_float(cell, decimal) is not None


def _separator_hint(cell: str, dialect: TextDialect) -> str:
    """What a non-numeric cell suggests about the file's separator or decimal mark."""
    sep = _SEPARATORS[dialect.delimiter]
    how = "found" if dialect.detected else "given"
    if _DECIMAL_COMMA.match(cell) and dialect.decimal == ".":
        if dialect.delimiter == ",":
            return (f" ({cell!r} looks like a number with a decimal comma, but the columns "
                    f"are separated by commas ({how}); a file with decimal commas separates "
                    "its columns by semicolons or tabs")
        return (f" ({cell!r} looks like a number with a decimal comma: the columns are "
                f"separated by {sep} ({how}); read it with decimal=',' (--decimal ,)")
    if dialect.decimal == "," and re.match(r"^[+-]?\d*\.\d+([eE][+-]?\d+)?$", cell):
        return (f" (the file was read with decimal commas, found in its first lines, but "
                f"{cell!r} has a decimal point: use one decimal mark throughout, or give it "
                "with decimal='.' (--decimal .))")
    for other, name in (("\t", "tabs"), (";", "semicolons"), (",", "commas")):
        if other != dialect.delimiter and other in cell:
            return (f" (the columns were read as separated by {sep} ({how}), but this cell "
                    f"holds {name}: is the file separated by {name}? Save it with one "
                    f"separator throughout, or give it with --sep)")
    if dialect.delimiter == "," and re.fullmatch(r"[+-]?\d+\s+[+-]?\d+", cell):
        return (f" ({cell!r} looks like two numbers separated by whitespace: if the file "
                "separates its columns by whitespace and writes numbers with decimal commas, "
                "read it with sep='whitespace', decimal=',' (--sep whitespace --decimal ,))")
    return ""


def _infer_header(p: Path, lineno: int, fields, dialect: TextDialect) -> bool:
    """Whether the first row is a header: only when none of its cells is a number.  A row
    of numbers is data; a row that mixes numbers and text is neither, and is refused with
    the cell that breaks it (a typo in a data row must not silently become a header)."""
    numeric = [_is_number(c.strip(), dialect.decimal) for c in fields]
    # a data row with a missing cell (a header may leave a name empty, as pandas does for
    # its index)
    empty = [j for j, c in enumerate(fields) if not c.strip()]
    if empty and any(numeric):
        j = empty[0]
        trailing = (" (every line ending in a separator leaves an empty last column: remove "
                    "it)") if j == len(fields) - 1 else ""
        raise DataError(f"{p}: line {lineno}, column {j + 1} is empty; missing values are not "
                        f"supported{trailing}.")
    for c, number in zip(fields, numeric):
        hint = "" if number else _separator_hint(c.strip(), dialect)
        if hint:
            raise DataError(f"{p}: line {lineno}, cell {c.strip()!r} is not a number{hint}.")
    if all(numeric):
        return False
    if not any(numeric):
        return True
    j = numeric.index(False)
    k = numeric.index(True)
    raise DataError(
        f"{p}: line {lineno} mixes numbers and text: column {j + 1} holds {fields[j].strip()!r}, "
        f"which is not a number, while column {k + 1} holds the number {fields[k].strip()!r}. "
        "A header row names every column and a data row holds only numbers: fix the cell "
        "(or read the file with load_data(path, header=True) if the row is a header).")


def _read_table(p: Path, gz: bool, fmt: str, column, header, sep=None, decimal=None):
    dialect = _sniff(p, gz, fmt, sep, decimal)
    with _reading(p), _open_text(p, gz) as f:
        first_line_no, first_fields = next(_records(f, dialect.delimiter), (None, None))
    if first_fields is None:
        raise DataError(f"{p} contains no data (only blank or comment lines).")
    n_fields = len(first_fields)
    if header is None:
        has_header = _infer_header(p, first_line_no, first_fields, dialect)
    else:
        has_header = header
    names = [c.strip() for c in first_fields] if has_header else None
    usecols = (
        list(range(n_fields)) if column is None else _resolve_columns(column, names, n_fields, p)
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
    with _reading(p), _open_text(p, gz) as f:
        for lineno, fields in _records(f, dialect.delimiter):
            if has_header and lineno == first_line_no:
                continue
            if len(fields) != n_fields:
                raise DataError(
                    f"{p}: line {lineno} has {len(fields)} fields, but line {first_line_no} "
                    f"has {n_fields}" + _separator_hint(" ".join(fields), dialect) + "."
                )
            row = []
            for j in usecols:
                cell = fields[j].strip()
                if not cell:
                    raise DataError(
                        f"{p}: line {lineno}, {_file_column(j, names)} is empty; "
                        "missing values are not supported."
                    )
                value = _to_float(cell, dialect.decimal)
                if value is None:
                    shown = cell if len(cell) <= 30 else cell[:27] + "..."
                    raise DataError(
                        f"{p}: line {lineno}, {_file_column(j, names)} holds the non-numeric "
                        f"value {shown!r}; all data cells must be numbers"
                        + _separator_hint(cell, dialect) + "."
                    )
                if not math.isfinite(value):
                    n_bad += 1
                    if first_bad is None:
                        first_bad = (lineno, j, cell)
                row.append(value)
            rows.append(row)
    if first_bad is not None:
        lineno, j, cell = first_bad
        raise DataError(
            f"{p} contains {n_bad} NaN or infinite "
            f"{'value' if n_bad == 1 else 'values'} (the first, {cell!r}, is at line {lineno}, "
            f"{_file_column(j, names)}); remove or impute them first."
        )
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(usecols))


# --------------------------------------------------------------------------------------------
# bag of words (UCI docword)


def _parse_ints(line: str):
    try:
        return [int(tok) for tok in line.split()]
    except ValueError:
        return None


def _looks_like_docword(p: Path, gz: bool) -> bool:
    """Whether a text file starts with lines ``D``, ``W``, ``NNZ`` and then triples."""
    lines = []
    try:
        with _open_text(p, gz) as f:
            for line in f:
                if line.strip():
                    lines.append(line)
                    if len(lines) == 4:
                        break
    except (OSError, EOFError, UnicodeDecodeError):
        return False
    if len(lines) < 3:
        return False
    head = [_parse_ints(line) for line in lines[:3]]
    if not all(h is not None and len(h) == 1 for h in head):
        return False
    if len(lines) == 4:
        body = _parse_ints(lines[3])
        return body is not None and len(body) == 3
    return head[2][0] == 0


def _read_docword(p: Path, gz: bool):
    header = []
    header_names = ("D (number of documents)", "W (vocabulary size)", "NNZ (number of entries)")
    triples = None
    with _reading(p), _open_text(p, gz) as f:
        lineno = 0
        for line in f:
            lineno += 1
            if not line.strip():
                continue
            values = _parse_ints(line)
            if values is None or len(values) != 1 or values[0] < 0:
                raise DataError(
                    f"{p}: line {lineno} should hold {header_names[len(header)]} as one "
                    f"non-negative integer, but reads {line.strip()[:30]!r}; a bag-of-words "
                    "(docword) file starts with the lines D, W and NNZ."
                )
            header.append(values[0])
            if len(header) == 3:
                break
        if len(header) < 3:
            raise DataError(
                f"{p}: a bag-of-words (docword) file starts with the three lines D, W and NNZ; "
                f"found only {len(header)}."
            )
        header_end = lineno
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                triples = np.loadtxt(f, dtype=np.int64, comments=None, ndmin=2)
        except ValueError:
            triples = None
    n_docs, n_words, nnz = header
    if n_docs < 1 or n_words < 1:
        raise DataError(f"{p}: the header says D = {n_docs} and W = {n_words}; both must be >= 1.")

    if triples is not None and triples.size == 0:
        triples = np.empty((0, 3), dtype=np.int64)
    if (
        triples is None
        or triples.shape[1] != 3
        or (triples[:, 0] < 1).any()
        or (triples[:, 0] > n_docs).any()
        or (triples[:, 1] < 1).any()
        or (triples[:, 1] > n_words).any()
        or (triples[:, 2] < 0).any()
    ):
        # The slow parser names the line of the first problem.
        triples = _read_docword_slow(p, gz, header_end, n_docs, n_words)
    if triples.shape[0] != nnz:
        raise DataError(
            f"{p}: the header says NNZ = {nnz}, but {triples.shape[0]} "
            "'docID wordID count' lines follow."
        )
    if nnz == 0:
        raise DataError(f"{p} holds no word counts (NNZ = 0).")
    # Duplicate (doc, word) pairs are summed, as in any COO -> CSR conversion.
    return sp.csr_matrix(
        (triples[:, 2].astype(np.float64), (triples[:, 0] - 1, triples[:, 1] - 1)),
        shape=(n_docs, n_words),
    )


def _read_docword_slow(p, gz, header_end, n_docs, n_words):
    rows = []
    with _reading(p), _open_text(p, gz) as f:
        for lineno, line in enumerate(f, 1):
            if lineno <= header_end or not line.strip():
                continue
            values = _parse_ints(line)
            if values is None or len(values) != 3:
                raise DataError(
                    f"{p}: line {lineno} should be three integers 'docID wordID count', but "
                    f"reads {line.strip()[:40]!r}."
                )
            doc, word, count = values
            if not 1 <= doc <= n_docs:
                raise DataError(
                    f"{p}: line {lineno}: document id {doc} is out of range 1..{n_docs}."
                )
            if not 1 <= word <= n_words:
                raise DataError(f"{p}: line {lineno}: word id {word} is out of range 1..{n_words}.")
            if count < 0:
                raise DataError(f"{p}: line {lineno}: negative count {count}; counts must be >= 0.")
            rows.append(values)
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3)


# --------------------------------------------------------------------------------------------
# NumPy and SciPy files


def _read_npy(p: Path):
    magic = _magic(p)
    if magic.startswith(_ZIP_MAGIC):
        return _read_npz(p)
    if magic != _NPY_MAGIC:
        raise DataError(f"{p} is not a NumPy .npy file (it lacks the NPY header).")
    try:
        return np.load(p, allow_pickle=False)
    except ValueError as exc:
        raise _numpy_load_error(p, exc, ".npy") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{p} is truncated or corrupt ({exc}).") from None


def _numpy_load_error(p: Path, exc: ValueError, kind: str) -> DataError:
    """The DataError for a ValueError raised by ``np.load``."""
    if "pickle" in str(exc):
        return DataError(f"{p} holds an object array (pickled Python objects), which is not "
                         "loaded for safety; save a numeric array instead.")
    return DataError(f"{p} is not a valid {kind} file ({exc}).")


def _read_npz(p: Path):
    if not _magic(p).startswith(_ZIP_MAGIC):
        raise DataError(f"{p} is not a .npz file (not a zip archive).")
    try:
        with np.load(p, allow_pickle=False) as archive:
            names = list(archive.files)
            if {"format", "shape", "data"} <= set(names):
                sparse = True
            elif len(names) == 1:
                sparse = False
                X = archive[names[0]]
            else:
                shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
                raise DataError(
                    f"{p} holds {len(names)} arrays ({shown}); expected a scipy sparse matrix "
                    "saved with scipy.sparse.save_npz or an archive with a single array."
                )
        if sparse:
            X = sp.load_npz(p)
    except DataError:
        raise
    except ValueError as exc:
        raise _numpy_load_error(p, exc, ".npz") from None
    except (OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{p} is truncated or corrupt ({exc}).") from None
    return X


# --------------------------------------------------------------------------------------------
# Parquet


def _import_pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            "Reading Parquet files needs the optional dependency pyarrow: "
            "pip install dpclust[parquet]"
        ) from None
    return pa, pq


def _read_parquet(p: Path, column):
    pa, pq = _import_pyarrow()
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
        indices = _resolve_columns(column, names, len(names), p)

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
        raise DataError(
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
            raise DataError(
                f"{p}: column {names[j]!r} has {col.null_count} missing (null) "
                f"{'value' if col.null_count == 1 else 'values'}; missing values are not supported."
            )
        columns.append(np.asarray(col.cast(pa.float64()).to_numpy(), dtype=np.float64))
    return np.column_stack(columns), [names[j] for j in indices]


# --------------------------------------------------------------------------------------------
# a table with a column of known labels


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
    return X, meta, _as_labels(values["label"])


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

    _check_file(p)
    fmt, gz = _detect_format(p)
    if fmt == "txt" and _looks_like_docword(p, gz):
        fmt = "docword"
    what = " and ".join(f"{role} column" for role in roles)
    _check_dialect_args(p, fmt, sep, decimal)
    if fmt in _TEXT_FORMATS:
        dialect = _sniff(p, gz, fmt, sep, decimal)
        values, found, n_columns, names, has_header = _read_text_columns(p, gz, dialect, roles)
        features = _features_besides(p, column, found, n_columns, names)
        X, meta = load_data(p, kind=kind, column=features, header=has_header, sep=sep,
                            decimal=decimal)
    elif fmt == "parquet":
        values, found = {}, {}
        names = index_columns = None
        for role, spec in roles.items():
            values[role], found[role], names, index_columns = _read_parquet_column(p, spec, role)
        _check_distinct(p, found, names)
        if column is None:
            features = [n for i, n in enumerate(names)
                        if i not in found.values() and n not in index_columns]
        else:
            features = _features_besides(p, column, found, len(names), names)
        if not features:
            raise DataError(f"{p} has no feature columns besides the {what}")
        X, meta = load_data(p, kind=kind, column=features)
    elif fmt in ("npy", "npz"):
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
            found[role] = _check_column_index(p, spec, n_columns)
            values[role] = table[:, found[role]]
        _check_distinct(p, found, None)
        features = _features_besides(p, column, found, n_columns, None)
        X = table[:, features]
        X = check_counts(X, what=str(p)) if kind == "counts" else np.ascontiguousarray(X)
        meta = dict(meta, n_features=int(X.shape[1]))
    else:
        raise DataError(f"{p} is a {fmt} file of counts; a {what} needs a table (CSV, TSV, "
                        ".npy or Parquet) that holds it")
    for role, v in values.items():
        if len(v) != X.shape[0]:
            raise DataError(f"{p}: the {role} column has {len(v)} values for "
                            f"{X.shape[0]} rows of features")
    return X, meta, values


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
        numbers = [_number_or_none(v) for v in items]
        if all(v is not None for v in numbers):
            out = np.array(numbers, dtype=np.float64)
        else:
            times = []
            for i, v in enumerate(items):
                t = _datetime_or_none(v)
                if t is None:
                    kind = "a number among dates" if numbers[i] is not None else "not a number"
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


def _datetime_or_none(v):
    """A naive UTC ``datetime`` from a datetime, date, datetime64 or ISO 8601 string."""
    if isinstance(v, np.datetime64):
        return None if np.isnat(v) else v.astype("datetime64[s]").item()
    if isinstance(v, str):
        try:
            v = datetime.datetime.fromisoformat(v.strip())
        except ValueError:
            return None
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.UTC).replace(tzinfo=None)
        return v
    if isinstance(v, datetime.date):
        return datetime.datetime(v.year, v.month, v.day)
    return None


def load_distances(path, *, n=None):
    """A matrix of distances between customers, for the distance dependent CRP.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy`` file with a dense (n, n) array (``inf`` where two customers may not
        link), or a ``.npz`` file with a scipy sparse matrix (``scipy.sparse.save_npz``):
        only its stored pairs may link.
    n : int, optional
        The number of customers (data rows) the matrix must describe.

    Returns
    -------
    distances : ndarray of shape (n, n) or scipy.sparse.csr_matrix
        float64.  ``distances[i, j]`` is the distance from customer i to customer j; the
        diagonal is ignored.

    Raises
    ------
    DataError
        If the file is missing or unreadable, not a square numeric matrix, holds NaN or
        negative distances (off the diagonal), or does not have ``n`` rows.
    """
    p = _check_file(path)
    fmt, _ = _detect_format(p)
    if fmt not in ("npy", "npz"):
        raise DataError(f"{p}: distances must be a .npy file (a dense matrix) or a .npz file "
                        f"(a scipy sparse matrix), not a {fmt} file")
    D = _read_npy(p) if fmt == "npy" else _read_npz(p)
    if sp.issparse(D):
        D = sp.csr_matrix(D, dtype=np.float64)
        data = D.data
    else:
        D = np.asarray(D)
        if D.dtype.kind not in "biuf":
            raise DataError(f"{p}: distances must be numbers, got an array of dtype {D.dtype}")
        D = D.astype(np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise DataError(f"{p}: the distance matrix must be square (n, n), got shape {D.shape}")
    if not sp.issparse(D):
        data = D[~np.eye(D.shape[0], dtype=bool)]
    if np.isnan(data).any():
        raise DataError(f"{p}: the distance matrix holds {int(np.isnan(data).sum())} NaN "
                        "values")
    if (data < 0).any():
        raise DataError(f"{p}: distances must be >= 0; the smallest is {float(data.min())}")
    if n is not None and D.shape[0] != n:
        raise DataError(f"{p} is a {D.shape[0]} x {D.shape[0]} distance matrix, but the data "
                        f"have {n} rows")
    return D


def _check_column_index(p: Path, j: int, n_columns: int) -> int:
    if not -n_columns <= j < n_columns:
        raise DataError(f"{p}: column index {j} is out of range; the file has {n_columns} columns")
    return j % n_columns


def _check_distinct(p: Path, found: dict, names) -> None:
    """Two roles (label, positions, ...) may not name the same column."""
    seen = {}
    for role, j in found.items():
        if j in seen:
            shown = f"{names[j]!r}" if names is not None else f"index {j}"
            raise DataError(f"{p}: the {seen[j]} and {role} columns are the same column "
                            f"({shown})")
        seen[j] = role


def _features_besides(p: Path, columns, found: dict, n_columns: int, names) -> list:
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


def _read_text_columns(p: Path, gz: bool, dialect: TextDialect, roles: dict):
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
    with _reading(p), _open_text(p, gz) as f:
        records = list(_records(f, dialect.delimiter))
    first_line_no = records[0][0]
    first = [c.strip() for c in records[0][1]]
    n_columns = len(first)
    found = {}
    has_header = False
    for role, spec in roles.items():
        if isinstance(spec, str):
            if spec not in first:
                if all(_is_number(c, dialect.decimal) for c in first):
                    raise DataError(f"{p} has no header row, so give the {role} column as a "
                                    f"0-based column index, not a name ({spec!r})")
                shown = (", ".join(repr(c) for c in first[:12])
                         + (", ..." if n_columns > 12 else ""))
                raise DataError(f"{p} has no column named {spec!r}; its columns are {shown}")
            found[role] = first.index(spec)
            has_header = True
        else:
            found[role] = _check_column_index(p, spec, n_columns)
    if not has_header:
        others = [c for i, c in enumerate(first) if i not in found.values()]
        has_header = (not all(_is_number(c, dialect.decimal) for c in others) if others
                      else False)
    names = first if has_header else None
    _check_distinct(p, found, names)
    values = {role: [] for role in roles}
    for lineno, fields in records[1 if has_header else 0:]:
        if len(fields) != n_columns:
            raise DataError(f"{p}: line {lineno} has {len(fields)} fields, but line "
                            f"{first_line_no} has {n_columns}.")
        for role, j in found.items():
            value = fields[j].strip()
            if not value:
                raise DataError(f"{p}: line {lineno}: the {role} column {j + 1} is empty")
            values[role].append(value)
    if not records[1 if has_header else 0:]:
        raise DataError(f"{p} has a header row but no data rows.")
    return values, found, n_columns, names, has_header


def _read_parquet_column(p: Path, label, role: str = "label"):
    pa, pq = _import_pyarrow()
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
        j = _check_column_index(p, label, len(names))
    try:
        column = pq.read_table(p, columns=[names[j]]).column(0)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{p} cannot be read: {exc}.") from None
    if column.null_count:
        raise DataError(f"{p}: the {role} column {names[j]!r} has {column.null_count} "
                        "missing values")
    return column.to_pylist(), j, names, index_columns


def _as_labels(values) -> np.ndarray:
    """Known labels as an array: integers or floats when every value is a number, else str."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        return arr
    try:
        num = np.asarray([float(v) for v in arr], dtype=np.float64)
    except (TypeError, ValueError):
        return arr.astype(str)
    return num
