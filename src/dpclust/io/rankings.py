"""Reading top-t rankings from files: CSV tables and PrefLib ``.soi``/``.toi`` files.

Both loaders return a :class:`~dpclust.rankings.Rankings` and raise one
:class:`~dpclust.utils.checks.DataError` per problem, its message starting with the path and
naming the line (1-based, as in an editor).  In a CSV file a position in a ranking is its
``column`` (1-based); in a PrefLib file it is its ``rank`` (1 = the top).

A CSV file is read in steps: its records (:mod:`dpclust.io.text`), the header row, the
missing cells that end each ranking, whether the cells are item names or item ids, and the
ids those give; :func:`~dpclust.rankings.data._validate_ids` then checks every ranking.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np

from ..rankings.data import _PAD, Rankings, _check_items, _check_n_items, _validate_ids, _Where
from ..utils.checks import DataError
from .files import TEXT_FORMATS, check_file, detect_format, open_text, reading
from .text import records, sniff

__all__ = ["read_preflib", "read_rankings_csv"]

# Header cells such as ``Rank_1``, ``rank 2``, ``Position3``, ``choice.4``, ``pref_5``.
_RANK_HEADER = re.compile(r"(rank|position|pos|choice|pref|preference)[\s_.\-]*\d+",
                          re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+")
_PREFLIB_TYPES = (".soi", ".toi", ".soc", ".toc")


# --------------------------------------------------------------------------------------------
# CSV


def read_rankings_csv(path, *, items=None, n_items=None, missing=("",), index_base=None,
                      header="infer", sep=None) -> Rankings:
    """Read top-t rankings from a text table, one ranking per row, best first.

    Each row lists the items a judge ranked, best first, as item names or as integer item
    ids; a row ends at its first missing cell (an empty cell, or one of ``missing``), so
    rows may be of different lengths or padded with a marker such as ``0``.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv``, ``.tsv`` or ``.txt`` file, optionally gzipped (``.csv.gz``).  Blank
        lines and lines starting with ``#`` are skipped; the separator is found as
        :func:`dpclust.io.load_data` finds it (comma, semicolon, tab or whitespace) unless
        ``sep`` gives it.
    items : sequence of str, optional
        Names of the items.  With names in the file, every name must be one of them and
        item ``j`` is ``items[j]``; without, the items are the distinct names found,
        sorted (items no row lists must then be passed here).  With ids in the file, id
        ``index_base + j`` is ``items[j]`` and ``n_items = len(items)``.
    n_items : int, optional
        Number of items, for files of ids without ``items``; defaults to the largest id
        ``- index_base + 1``.  Give it when some items are never ranked.
    missing : str or sequence of str, default=("",)
        Cells that mark an unranked position.  Empty cells always do.  The first missing
        cell of a row ends its ranking; an item after it is an error.
    index_base : {None, 0, 1}, default=None
        The id of the first item in a file of ids: 0 when ids run ``0 .. n - 1``, 1 when
        they run ``1 .. n`` (R, PrefLib, most election data).  None infers it: 0 when some
        ranking uses the id 0, else 1 (with a ``UserWarning`` saying so); the items are then
        named by the file's ids (``"1"``, ``"2"``, ...), so that results speak of them.
        Either way, an id between the first and the last that no ranking uses is refused
        unless ``items`` or ``n_items`` says the item exists: an item nobody ranked is never
        invented.
    header : {"infer", True, False}, default="infer"
        Whether the first row names the columns.  ``"infer"`` takes it as a header when
        every non-empty cell looks like ``Rank_1``, ``rank 2``, ``Position3``, ``choice 4``
        or ``pref_5``; or when it holds a cell that is not an item (not an integer, nor one
        of ``items``) while every later cell is one.  A header of other words above rows of
        names is not detected: pass ``header=True``.
    sep : {"comma", "semicolon", "tab", "whitespace"}, optional
        The separator, as in :func:`dpclust.io.load_data`.

    Returns
    -------
    rankings : Rankings
        One ranking per data row, in file order.  Rows ranking every item are truncated to
        ``n_items - 1`` items (the last is implied).

    Raises
    ------
    DataError
        If the file is missing, empty or unreadable; a row has an item after a missing
        cell, no item at all, an item twice, an unknown name, an id below ``index_base`` or
        beyond the last item; the file mixes names and ids; or ``n_items`` is given for a
        file of names without ``items``.  Messages give the path, the line and the column.

    Notes
    -----
    Cells are read as ids when every one is an integer and as names otherwise (with
    ``items`` given, as names when every cell is one of ``items``).  Item names that are
    numbers are therefore read as ids unless ``items`` lists them.

    Examples
    --------
    The Dublin West ballots (:func:`dpclust.datasets.load_dublin_west`) are stored as::

        Rank_1,Rank_2,Rank_3,Rank_4,Rank_5,Rank_6,Rank_7,Rank_8,Rank_9
        7,9,4,2,8,0,0,0,0

    with candidates 1..9 and 0 for an unused preference.  They load with
    ``read_rankings_csv(path, missing=("0",), index_base=1)`` (and ``items=`` to name the
    candidates).  A file of names without a header, such as ``apple,pear,fig``, loads with
    the defaults.
    """
    index_base, markers, n_items, items = _check_csv_args(header, index_base, missing,
                                                          n_items, items)
    p, rows = _read_rows(path, sep)
    item_set = set(items) if items is not None else set()
    if header == "infer":
        header = _has_header(rows, markers, item_set)
    if header:
        rows = rows[1:]
        if not rows:
            raise DataError(f"{p} has a header row but no rankings.")

    lines = np.array([lineno for lineno, _ in rows], dtype=np.int64)
    width = max(len(row) for _, row in rows)
    cells = np.array([row + [""] * (width - len(row)) for _, row in rows], dtype=object)
    where = _Where(source=p, lines=lines, pos_word="column", pos_base=1)
    present = _present_cells(cells, markers, where)
    uniq, inverse = np.unique(cells[present].astype(str), return_inverse=True)
    ids = np.full(cells.shape, _PAD, dtype=np.int64)
    if _cells_are_names(p, cells, present, uniq, inverse, items, item_set, where):
        ids[present], items = _ids_of_names(p, uniq, inverse, items, n_items)
        n_items = len(items)
        where.items = items
    else:
        ids[present], n_items, items = _ids_of_numbers(p, uniq, inverse, present, items,
                                                       n_items, index_base, where)
    lengths = _validate_ids(ids, n_items, where)
    return Rankings._from_valid(ids, lengths, n_items, items)


def _check_csv_args(header, index_base, missing, n_items, items):
    """``(index_base, missing markers, n_items, items)`` of :func:`read_rankings_csv`,
    checked."""
    if header not in ("infer", True, False):
        raise ValueError(f"header must be 'infer', True or False, got {header!r}")
    if index_base is not None:
        if isinstance(index_base, bool) or not isinstance(index_base, (int, np.integer)):
            raise TypeError(f"index_base must be None, 0 or 1, got {index_base!r}")
        index_base = int(index_base)
    if isinstance(missing, str):
        missing = (missing,)
    markers = {str(m).strip() for m in missing} | {""}
    if n_items is not None:
        n_items = _check_n_items(n_items)
    if items is not None:
        items = _check_items(items, n_items)
        n_items = len(items)
    return index_base, markers, n_items, items


def _read_rows(path, sep):
    """The checked path and the data rows of a text table: ``(line number, stripped
    cells)``."""
    p = check_file(path)
    fmt, gz = detect_format(p)
    if fmt not in TEXT_FORMATS:
        raise DataError(f"{p}: rankings are read from a text table (.csv, .tsv or .txt, "
                        f"optionally .gz), not from a .{fmt} file")
    delimiter = sniff(p, gz, fmt, sep, decimal=".").delimiter
    with reading(p), open_text(p, gz) as f:
        rows = [(lineno, [c.strip() for c in fields])
                for lineno, fields in records(f, delimiter)]
    return p, rows


def _has_header(rows, markers: set, item_set: set) -> bool:
    """Whether the first row names the columns (``header="infer"``): every non-empty cell
    looks like ``Rank_1``, or a cell is not an item while every later cell is one."""

    def is_item(cell: str) -> bool:
        return cell in markers or cell in item_set or _INT.fullmatch(cell) is not None

    cells = [c for c in rows[0][1] if c]
    return bool(cells) and (
        all(_RANK_HEADER.fullmatch(c) for c in cells)
        or (len(rows) > 1 and not all(is_item(c) for c in cells)
            and all(is_item(c) for c in {c for _, row in rows[1:] for c in row})))


def _present_cells(cells: np.ndarray, markers: set, where: _Where) -> np.ndarray:
    """The cells that hold an item (a boolean mask); each ranking ends at its first missing
    cell, holds at least one item, and does not end in a repeated cell."""
    miss = np.isin(cells, list(markers))
    after = np.logical_or.accumulate(miss, axis=1) & ~miss
    if after.any():
        i, j = np.argwhere(after)[0]
        j0 = int(np.flatnonzero(miss[i])[0])
        shown = "an empty cell" if not cells[i, j0] else f"the missing marker {cells[i, j0]!r}"
        raise DataError(f"{where.row(i)}: the item {cells[i, j]!r} in column {j + 1} follows "
                        f"{shown} in column {j0 + 1}; a ranking ends at its first missing "
                        "cell")
    empty = miss.all(axis=1)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise DataError(f"{where.row(i)} is an empty ranking: it has no item before its first "
                        "missing cell")

    present = ~miss
    width = cells.shape[1]
    if width > 1:  # a row ending in a repeated cell: likely an undeclared missing marker
        last = cells[:, -1]
        tail = present[:, -1] & present[:, -2] & (cells[:, -2] == last)
        if tail.any():
            i = int(np.flatnonzero(tail)[0])
            raise DataError(f"{where.row(i)} ends with {last[i]!r} repeated (columns "
                            f"{width - 1} and {width}); if {last[i]!r} marks an unranked "
                            f"position, pass missing=({last[i]!r},)")
    return present


def _cells_are_names(p: Path, cells, present, uniq, inverse, items, item_set: set,
                     where: _Where) -> bool:
    """Whether the cells are item names (True) or item ids (False); a DataError for an
    unknown name, or a file that mixes names and ids."""
    is_int = np.array([_INT.fullmatch(u) is not None for u in uniq], dtype=bool)
    if items is not None and all(u in item_set for u in uniq):
        return True
    if is_int.all():
        return False
    if items is not None:
        bad = np.array([u not in item_set for u in uniq])
        k = int(np.flatnonzero(bad[inverse])[0])
        i, j = np.argwhere(present)[k]
        shown = ", ".join(repr(n) for n in items[:8]) + (", ..." if len(items) > 8 else "")
        raise DataError(f"{where.row(i)}: unknown item {cells[i, j]!r} in column {j + 1}; the "
                        f"items are {shown}")
    if is_int.any():
        lines = where.lines
        positions = np.argwhere(present)
        i, j = positions[int(np.flatnonzero(is_int[inverse])[0])]
        i0, j0 = positions[int(np.flatnonzero(~is_int[inverse])[0])]
        raise DataError(f"{p} mixes item names and item ids: line {lines[i]} has the id "
                        f"{cells[i, j]!r} in column {j + 1}, while line {lines[i0]} has the "
                        f"name {cells[i0, j0]!r} in column {j0 + 1}; pass items= if numbers "
                        "are item names")
    return True


def _ids_of_names(p: Path, uniq, inverse, items, n_items):
    """``(0-based ids of the present cells, items)`` of a file of item names."""
    if items is None:
        if n_items is not None:
            raise DataError(f"{p} holds item names but only n_items={n_items} was given; "
                            "pass items= with the names of the items instead")
        items = tuple(str(u) for u in uniq)
        if len(items) < 2:
            raise DataError(f"{p} names a single item ({items[0]!r}); at least 2 items "
                            "are needed (pass items= to add items no row lists)")
    index = {name: j for j, name in enumerate(items)}
    return np.array([index[u] for u in uniq], dtype=np.int64)[inverse], items


def _ids_of_numbers(p: Path, uniq, inverse, present, items, n_items, index_base,
                    where: _Where):
    """``(0-based ids of the present cells, n_items, items)`` of a file of item ids.

    ``index_base=None`` is inferred (with a warning when no ranking uses the id 0); an id
    below it, or an id between the first and the last that no ranking uses (unless
    ``items`` or ``n_items`` says that the item exists), is refused.
    """
    raw = np.array([int(u) for u in uniq], dtype=np.int64)[inverse]
    inferred = index_base is None
    if inferred:
        index_base = 0 if (raw == 0).any() else 1
        if index_base == 1 and raw.size:
            # stacklevel 3: the caller of read_rankings_csv
            warnings.warn(f"{p}: no ranking uses the item id 0, so the ids are read as "
                          f"1 .. {int(raw.max())} (index_base=1); pass index_base= to "
                          "say otherwise", UserWarning, stacklevel=3)
    low = raw < index_base
    if low.any():
        k = int(np.flatnonzero(low)[0])
        i, j = np.argwhere(present)[k]
        hint = ""
        if raw[k] == index_base - 1:
            hint = (f" (if {raw[k]} marks an unranked position, pass "
                    f"missing=({str(raw[k])!r},))")
        raise DataError(f"{where.row(i)}: item id {raw[k]} in column {j + 1} is below "
                        f"index_base={index_base}{hint}")
    where.id_base = index_base
    where.items = items
    if n_items is None:
        n_items = int(raw.max()) - index_base + 1
        if n_items < 2:
            raise DataError(f"{p} lists only the item {index_base}; at least 2 items are "
                            "needed (pass n_items= to count items no row lists)")
        unused = np.setdiff1d(np.arange(index_base, index_base + n_items), raw)
        if items is None and len(unused):
            first = int(unused[0])
            hint = (" (ids that start at 1: pass index_base=1)"
                    if first == 0 and index_base == 0 else "")
            raise DataError(
                f"{p}: item ids run from {index_base} to {int(raw.max())}, but no ranking "
                f"uses {_id_list(unused)}{hint}; to keep items that nobody ranked, pass "
                "items= with the names of all the items")
    if inferred and items is None:
        items = tuple(str(index_base + j) for j in range(n_items))
        where.items = items
    return raw - index_base, n_items, items


def _id_list(ids: np.ndarray) -> str:
    """``"the id 5"`` or ``"the ids 0, 4 and 7"`` (at most five listed)."""
    ids = [str(int(i)) for i in ids]
    if len(ids) == 1:
        return f"the id {ids[0]}"
    shown = ids[:5] + (["..."] if len(ids) > 5 else [])
    return "the ids " + ", ".join(shown[:-1]) + " and " + shown[-1]


# --------------------------------------------------------------------------------------------
# PrefLib


def read_preflib(path) -> Rankings:
    """Read a PrefLib file of orders: ``.soi`` or ``.toi`` (also ``.soc``, ``.toc``).

    PrefLib (https://www.preflib.org/format) stores ordinal preferences over alternatives
    numbered ``1 .. n``.  Both layouts are read, optionally gzipped:

    * the current one: metadata lines ``# KEY: value`` (``# NUMBER ALTERNATIVES: 9``,
      ``# ALTERNATIVE NAME 1: Joan Burton``, ...), then one line per distinct order,
      ``count: 1,3,2`` (``count`` judges gave the order 1 > 3 > 2);
    * the older one: the number of alternatives on the first line, one ``id,name`` line
      per alternative, a ``voters,sum,unique`` line, then lines ``count,1,3,2``.

    In ``.toi``/``.toc`` files ``{2,3}`` marks alternatives tied at one rank.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.soi``, ``.toi``, ``.soc`` or ``.toc`` file, or the same gzipped (``.soi.gz``).

    Returns
    -------
    rankings : Rankings
        Each line with count ``c`` gives ``c`` identical rankings, in file order.
        Alternative ``k`` is item ``k - 1``; ``items`` holds the alternatives' names when
        the file names them all (a repeated name gets `` (k)`` appended).

    Raises
    ------
    DataError
        If the file is missing, empty or unreadable, is not a PrefLib order file, lacks the
        number of alternatives, or a data line is garbled, has a count below 1, an empty
        order, an alternative outside ``1 .. n`` or one listed twice.  Messages give the
        path and the line.

    Warns
    -----
    UserWarning
        When orders have ties: a top-t ranking has none, so each is cut to the strict
        prefix before its first tie, and an order that begins with a tie is dropped.  The
        warning says how many rankings were cut and dropped.  A tie of all the remaining
        alternatives at the bottom of an order that places every alternative says the same
        as leaving them unranked, and is not counted as a cut.
    """
    p, lines = _preflib_lines(path)
    if lines[0][1].startswith("#"):
        n_alt, names, data = _preflib_current(p, lines)
    else:
        n_alt, names, data = _preflib_old(p, lines)
    if n_alt < 2:
        raise DataError(f"{p} has {n_alt} alternative(s); at least 2 are needed.")
    if not data:
        raise DataError(f"{p} holds no orders.")
    orders, counts, line_nos = _strict_orders(p, n_alt, data)

    width = max(map(len, orders))
    arr = np.full((len(orders), width), _PAD, dtype=np.int64)
    for i, order in enumerate(orders):
        arr[i, : len(order)] = order
    items = _preflib_items(names, n_alt)
    where = _Where(source=p, lines=np.array(line_nos), pos_word="rank", pos_base=1,
                   items=items, id_base=1)
    lengths = _validate_ids(arr, n_alt, where)
    counts = np.array(counts, dtype=np.int64)
    return Rankings._from_valid(np.repeat(arr, counts, axis=0), np.repeat(lengths, counts),
                                n_alt, items)


def _preflib_lines(path):
    """The checked path and the non-blank lines of a PrefLib file: ``(line number, line
    stripped)``."""
    p = check_file(path)
    name = p.name.lower()
    gz = name.endswith(".gz")
    ext = Path(name[:-3] if gz else name).suffix
    if ext not in _PREFLIB_TYPES:
        raise DataError(f"{p}: unsupported PrefLib file type {ext or '(no extension)'!r}; "
                        "expected .soi, .toi, .soc or .toc (optionally .gz).")
    with reading(p), open_text(p, gz, newline=None) as f:
        lines = [(lineno, line.strip()) for lineno, line in enumerate(f, 1)]
    lines = [(lineno, line) for lineno, line in lines if line]
    if not lines:
        raise DataError(f"{p} contains no data (only blank lines).")
    return p, lines


def _strict_orders(p: Path, n_alt: int, data):
    """``(orders, counts, line numbers)``: each order of ``data`` cut to the strict prefix
    before its first tie (0-based ids), those that begin with a tie dropped, with one
    warning saying how many were cut and dropped."""
    orders, counts, line_nos = [], [], []
    cut = dropped = cut_lines = dropped_lines = 0
    for lineno, count, groups in data:
        n_seen = _check_alternatives(p, lineno, groups, n_alt)
        t = next((g for g, group in enumerate(groups) if len(group) > 1), len(groups))
        if t == 0:
            dropped += count
            dropped_lines += 1
            continue
        if t < len(groups) and not (t == len(groups) - 1 and n_seen == n_alt):
            cut += count
            cut_lines += 1
        orders.append([group[0] - 1 for group in groups[:t]])
        counts.append(count)
        line_nos.append(lineno)
    if cut or dropped:
        parts = []
        if cut:
            parts.append(f"{cut} ranking(s) ({cut_lines} line(s)) with a tie below the top "
                         "were cut to the strict order before their first tie")
        if dropped:
            parts.append(f"{dropped} ranking(s) ({dropped_lines} line(s)) that begin with a "
                         "tie were dropped")
        # stacklevel 3: the caller of read_preflib
        warnings.warn(f"{p}: top-t rankings have no ties: {'; '.join(parts)}.", UserWarning,
                      stacklevel=3)
    if not orders:
        raise DataError(f"{p}: every order begins with a tie; no ranking is left.")
    return orders, counts, line_nos


def _check_alternatives(p: Path, lineno: int, groups, n_alt: int) -> int:
    """The number of alternatives an order lists; each must be in ``1 .. n_alt`` and listed
    once."""
    seen = set()
    for group in groups:
        for k in group:
            if not 1 <= k <= n_alt:
                raise DataError(f"{p}: line {lineno}: alternative {k} does not exist; the "
                                f"file has {n_alt} alternatives, 1 to {n_alt}")
            if k in seen:
                raise DataError(f"{p}: line {lineno} lists alternative {k} twice")
            seen.add(k)
    return len(seen)


def _preflib_current(p, lines):
    """(number of alternatives, {k: name}, data) of a file with ``# KEY: value`` metadata."""
    meta, names, data = {}, {}, []
    n_line = None
    for lineno, line in lines:
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            key = " ".join(key.split()).upper()
            if not sep:
                continue
            if key.startswith("ALTERNATIVE NAME"):
                k = key[len("ALTERNATIVE NAME"):].strip()
                if _INT.fullmatch(k):
                    names[int(k)] = value.strip()
            else:
                meta[key] = value.strip()
                if key == "NUMBER ALTERNATIVES":
                    n_line = lineno
            continue
        count, sep, order = line.partition(":")
        if not sep:
            raise DataError(f"{p}: line {lineno}: expected 'count: order' (such as "
                            f"'3: 1,4,2'), got {line[:40]!r}")
        data.append((lineno, _preflib_count(p, lineno, count),
                     _preflib_order(p, lineno, order)))
    if "NUMBER ALTERNATIVES" not in meta:
        raise DataError(f"{p} has no '# NUMBER ALTERNATIVES: n' line; it is not a PrefLib "
                        "order file in the current format.")
    value = meta["NUMBER ALTERNATIVES"]
    if not _INT.fullmatch(value):
        raise DataError(f"{p}: line {n_line}: the number of alternatives {value!r} is not an "
                        "integer")
    return int(value), names, data


def _preflib_old(p, lines):
    """(number of alternatives, {k: name}, data) of a file in the older PrefLib layout."""
    lineno, first = lines[0]
    if not _INT.fullmatch(first):
        raise DataError(f"{p}: line {lineno}: expected the number of alternatives (older "
                        f"PrefLib layout) or '# ' metadata (current layout), got "
                        f"{first[:40]!r}")
    n_alt = int(first)
    if len(lines) < n_alt + 2:
        raise DataError(f"{p} ends before its {n_alt} alternative lines and the "
                        "'voters,sum,unique' line.")
    names = {}
    for lineno, line in lines[1 : n_alt + 1]:
        k, sep, name = line.partition(",")
        if not sep or not _INT.fullmatch(k.strip()):
            raise DataError(f"{p}: line {lineno}: expected an alternative line 'id,name', got "
                            f"{line[:40]!r}")
        names[int(k)] = name.strip()
    lineno, line = lines[n_alt + 1]
    fields = [c.strip() for c in line.split(",")]
    if len(fields) != 3 or not all(_INT.fullmatch(c) for c in fields):
        raise DataError(f"{p}: line {lineno}: expected the line 'voters,sum,unique' of three "
                        f"integers, got {line[:40]!r}")
    data = []
    for lineno, line in lines[n_alt + 2 :]:
        count, sep, order = line.partition(",")
        if not sep:
            raise DataError(f"{p}: line {lineno}: expected 'count,order' (such as "
                            f"'3,1,4,2'), got {line[:40]!r}")
        data.append((lineno, _preflib_count(p, lineno, count),
                     _preflib_order(p, lineno, order)))
    return n_alt, names, data


def _preflib_count(p, lineno: int, text: str) -> int:
    text = text.strip()
    if not _INT.fullmatch(text) or int(text) < 1:
        raise DataError(f"{p}: line {lineno}: the count {text!r} is not a positive integer")
    return int(text)


def _preflib_order(p, lineno: int, text: str) -> list[list[int]]:
    """``1,{2,3},4`` -> ``[[1], [2, 3], [4]]``: groups of tied alternatives, best first."""
    groups, k, text = [], 0, text.strip()
    if not text:
        raise DataError(f"{p}: line {lineno}: the order is empty")
    while k < len(text):
        if text[k] == "{":
            end = text.find("}", k)
            if end < 0:
                raise DataError(f"{p}: line {lineno}: a '{{' is never closed")
            tokens = text[k + 1 : end].split(",")
            k = end + 1
        else:
            end = text.find(",", k)
            end = len(text) if end < 0 else end
            tokens = [text[k:end]]
            if "}" in tokens[0] or "{" in tokens[0]:
                raise DataError(f"{p}: line {lineno}: misplaced brace in {tokens[0].strip()!r}")
            k = end
        group = []
        for token in tokens:
            token = token.strip()
            if not _INT.fullmatch(token):
                what = "an empty entry" if not token else repr(token)
                raise DataError(f"{p}: line {lineno}: {what} is not an alternative number")
            group.append(int(token))
        groups.append(group)
        rest = text[k:].lstrip()
        if rest and not rest.startswith(","):
            raise DataError(f"{p}: line {lineno}: expected ',' after an alternative or a "
                            f"'{{...}}' group, got {rest[:20]!r}")
        k = len(text) - len(rest) + 1 if rest else len(text)
        if rest and not text[k:].strip():
            raise DataError(f"{p}: line {lineno}: the order ends with ','")
    return groups


def _preflib_items(names: dict, n_alt: int):
    """The names of alternatives 1..n as items 0..n-1, or None unless all are named."""
    if any(not names.get(k) for k in range(1, n_alt + 1)):
        return None
    items, taken = [], set()
    for k in range(1, n_alt + 1):
        name = names[k]
        if name in taken:
            name = f"{name} ({k})"
        items.append(name)
        taken.add(name)
    return tuple(items)
