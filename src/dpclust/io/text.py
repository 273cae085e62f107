"""Text tables: their dialect (separator and decimal mark), their records and their cells.

The dialect is found by :class:`csv.Sniffer` on the first lines (:func:`sniff`); the records
(:func:`records`) are the data-bearing lines split into fields, with their 1-based line
numbers; :func:`to_float` reads one cell, :func:`formatted_number` one written for reading
(``$ 1,234.50``, ``45 %``), and :func:`separator_hint` says what a cell that is not a number
suggests about the file's separator or decimal mark.  Numeric tables
(:mod:`dpclust.io.tables`), other columns (:mod:`dpclust.io.columns`) and rankings
(:mod:`dpclust.io.rankings`) all read text through these functions.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..utils.checks import DataError
from .files import TEXT_FORMATS, file_lines, open_text, reading

_SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs", None: "whitespace"}
_SEP_NAMES = {"comma": ",", ",": ",", "semicolon": ";", ";": ";", "tab": "\t", "\t": "\t",
              "\\t": "\t", "whitespace": None, "space": None, " ": None}
_DECIMALS = {".": "decimal points", ",": "decimal commas"}
_SAMPLE_LINES = 200
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+([eE][+-]?\d+)?$")
_DECIMAL_POINT = re.compile(r"^[+-]?\d*\.\d+([eE][+-]?\d+)?$")
#: a number with thousands separators in groups of three, by the file's decimal mark
#: (``1,234,567.5`` with decimal points, ``1.234.567,5`` with decimal commas)
_GROUPED = {".": re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?"),
            ",": re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?")}
#: currency symbols a spreadsheet writes before or after an amount
_CURRENCY = "$€£¥"


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


def check_dialect_args(p: Path, fmt: str, sep, decimal) -> None:
    """Refuse ``sep``/``decimal`` for a file that is not a text table."""
    if fmt not in TEXT_FORMATS and (sep is not None or decimal is not None):
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
    with reading(p), open_text(p, gz) as f:
        for line in f:
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                lines.append(line)
                if len(lines) == n:
                    break
    return lines


def sniff(p: Path, gz: bool, fmt: str, sep=None, decimal=None) -> TextDialect:
    """The separator and decimal mark of a text table.

    The separator is ``sep`` when given, a tab in a ``.tsv`` file, else what
    :class:`csv.Sniffer` finds consistent over the first lines among tab, semicolon and
    comma (preferred in that order: spreadsheets write tab- and semicolon-separated files
    named ``.csv``, and a semicolon or tab is never a decimal mark), else the first line's
    tab, semicolon or comma, else runs of whitespace.  The decimal mark is ``decimal`` when
    given, else a comma when the separator is not one and a cell of the first lines looks
    like ``1,5`` (unless those cells group thousands beside decimal points:
    :func:`_decimal_of`).
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
            cells = [c.strip().strip('"').strip() for line in lines
                     for c in (line.split() if delimiter is None else line.split(delimiter))]
            decimal = _decimal_of(cells)
    elif decimal == "," and delimiter == ",":
        raise DataError(f"{p}: the columns are separated by commas, so numbers cannot have a "
                        "decimal comma; give the separator (sep='semicolon', --sep semicolon)")
    return TextDialect(delimiter, decimal, detected)


def _decimal_of(cells) -> str:
    """The decimal mark of a file not separated by commas, from its cells (a currency symbol
    or a percent sign taken off): a comma when a cell looks like ``1,5`` or ``1.234,5``,
    unless every such cell is a number in thousands (``2,237``) and other cells have decimal
    points (``3.105``, ``$ 4,460.37``): then its commas group thousands."""
    bare = [_without_marks(c)[0] for c in cells]
    commas = [c for c in bare if _DECIMAL_COMMA.match(c)
              or ("," in c and _GROUPED[","].fullmatch(c))]
    if not commas:
        return "."
    if not all(_GROUPED["."].fullmatch(c) for c in commas):
        return ","
    points = any(_DECIMAL_POINT.match(c) or ("." in c and _GROUPED["."].fullmatch(c))
                 for c in bare)
    return "." if points else ","


def _without_marks(cell: str) -> tuple[str, tuple]:
    """A cell without a percent sign after it and a currency symbol before or after it,
    with the names of the marks taken off."""
    text, taken = cell.strip(), []
    if text.endswith("%"):
        text, taken = text[:-1].rstrip(), ["percent signs"]
    sign = text[:1] if text[:1] in "+-" and text[1:2] in _CURRENCY else ""
    body = text[len(sign):]
    if body[:1] in _CURRENCY:
        text, taken = sign + body[1:].lstrip(), taken + ["currency symbols"]
    elif text[-1:] in _CURRENCY:
        text, taken = text[:-1].rstrip(), taken + ["currency symbols"]
    return text, tuple(taken)


def formatted_number(cell: str, decimal: str = "."):
    """``(value, marks)`` for a number written for reading, or None: a percent sign after
    it (``63.2 %``: 63.2), a currency symbol before or after it (``$ 4,460.37``, ``12 €``),
    thousands separators in groups of three (``2,237``; ``2.237`` with decimal commas).
    ``marks`` names what was taken off (``"percent signs"``, ``"currency symbols"``,
    ``"thousands separators"``); a plain number is None here (:func:`to_float` reads it)."""
    text, taken = _without_marks(cell)
    if _GROUPED[decimal].fullmatch(text):
        text, taken = text.replace("," if decimal == "." else ".", ""), taken + (
            "thousands separators",)
    if not taken:
        return None
    value = to_float(text, decimal)
    return None if value is None else (value, taken)


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


def records(f, delimiter):
    """Yield (line number, fields) of the data-bearing lines of an open text file."""
    if delimiter is None:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                yield lineno, fields
        return
    reader = csv.reader(file_lines(f), delimiter=delimiter)
    for fields in reader:
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if fields[0].lstrip().startswith("#"):
            continue
        yield reader.line_num, fields


def to_float(cell: str, decimal: str = "."):
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


def is_number(cell: str, decimal: str = ".") -> bool:
    """Whether a cell holds a number."""
    return to_float(cell, decimal) is not None


def header_names(cells) -> list[str]:
    """A header row's names, its cells stripped; an empty cell names its column ``Unnamed:
    j`` (``j`` from 0), as pandas names the index column it writes with ``to_csv``."""
    return [c.strip() or f"Unnamed: {j}" for j, c in enumerate(cells)]


def separator_hint(cell: str, dialect: TextDialect) -> str:
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
