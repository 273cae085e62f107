"""Which file, in which format: the checks every reader of :mod:`dpclust.io` starts with.

:func:`check_file` refuses a missing, empty or unreadable path, :func:`detect_format` tells the
format from the extension, :func:`open_text` opens a (possibly gzipped) UTF-8 text file, and
:func:`reading` turns the low-level errors of a read into one
:class:`~dpclust.utils.checks.DataError` naming the file.  These names are shared by the
modules of :mod:`dpclust.io`; they are not part of its public API.
"""

from __future__ import annotations

import csv
import gzip
import os
import zipfile
from contextlib import contextmanager
from pathlib import Path

from ..utils.checks import DataError

#: formats read as text tables (:mod:`dpclust.io.text`)
TEXT_FORMATS = ("csv", "tsv", "txt")
SUPPORTED = ".csv, .tsv, .txt (optionally .gz), .npy, .npz, .parquet, .pq, .xlsx"
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"


def check_file(path) -> Path:
    """``path`` as a :class:`~pathlib.Path` to an existing, non-empty file.

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike.
    DataError
        If it is a directory, missing, unreadable or empty.
    """
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


def detect_format(p: Path) -> tuple[str, bool]:
    """``(format, gzipped)`` from the file name: ``"csv"``, ``"tsv"``, ``"txt"``,
    ``"docword"``, ``"npy"``, ``"npz"``, ``"parquet"`` or ``"excel"``; a DataError for
    anything else."""
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
        if ext in (".xlsx", ".xlsm"):
            return "excel", gz
        if ext == ".xls":
            raise DataError(f"{p}: the old Excel format .xls is not read; save the sheet as "
                            ".xlsx or .csv")
    raise DataError(
        f"{p}: unsupported file type {p.suffix or '(no extension)'!r}; "
        f"expected one of {SUPPORTED}."
    )


def open_text(p: Path, gz: bool, newline=""):
    """Open a UTF-8 text file (a byte-order mark is skipped), gzipped when ``gz``."""
    if gz:
        return gzip.open(p, "rt", encoding="utf-8-sig", newline=newline)
    return open(p, encoding="utf-8-sig", newline=newline)


#: a line break inside a cell written unquoted (a carriage return alone in a file whose
#: lines end in a line feed), as :func:`file_lines` hands it on: a character that ends no
#: row, which the readers of text cells count and read as a space
CELL_BREAK = "\u2028"


def file_lines(f):
    """The lines of a text file opened with ``newline=""`` (:func:`open_text`), as the
    :mod:`csv` module reads them, but for a carriage return alone in a file whose first
    line ends in a line feed (``\n`` or ``\r\n``).  There it is a line break inside a
    cell that a spreadsheet or pandas wrote unquoted (a tweet, an address of two lines),
    not the end of a row, and comes on inside its line as :data:`CELL_BREAK`; a file whose
    lines all end in a carriage return alone (old Mac spreadsheets) is read line by
    line."""
    feed = None
    pending = ""
    for line in f:
        if feed is None:
            feed = line.endswith("\n")
        if feed and line.endswith("\r"):  # a line ending "\r\n" ends with "\n"
            pending += line[:-1] + CELL_BREAK
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


@contextmanager
def reading(p: Path):
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


def read_magic(p: Path) -> bytes:
    """The first six bytes of a file (to tell .npy from zip archives)."""
    with reading(p), open(p, "rb") as f:
        return f.read(6)
