"""Reading cast-vote records (CVRs) as election offices publish them.

Two layouts are read by :func:`read_cvr`:

* a **table** (CSV/TSV, optionally gzipped) with one column per rank -- ``rank1 .. rankK``,
  ``Rank 1``, ``Choice_1``, ``1st choice``, ``pref 1``, ``DEM Mayor Choice 1 of 5`` -- and
  any other columns (ballot id, precinct, ...), one ballot a row or, with a ``count`` (or
  ``weight``, ``ballots``, ``votes``) column, one line per group of identical ballots;
* **count lines** ``count: ballot``, as ABIF files (``.abif``) and PrefLib's ``.soi``
  write them: ``5: alice > bob > carol``, ``5:a>b>c``, ``3: Alice,Bob``; an ABIF file may
  declare its candidates with ``=token:[Full Name]`` lines.

Every cell is read by :class:`~dpclust.io.cvr_rules.BallotRules` (markers, write-ins) and
every ballot by :func:`~dpclust.io.cvr_rules.clean_ballot` (duplicates, skipped ranks,
overvotes); each distinct line is read once, however many ballots it stands for.  What
cannot be read raises one :class:`~dpclust.utils.checks.DataError` naming the path, the line
(1-based, as in an editor) and the column or rank.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..rankings.data import _PAD, Rankings, _check_items
from ..utils.checks import DataError
from .cvr_rules import (NAME, WRITE_IN, BallotRules, CleaningRule, clean_ballot,
                        cleaning_report)
from .files import TEXT_FORMATS, check_file, detect_format, open_text, reading
from .text import records, sniff

__all__ = ["CastVoteRecords", "looks_like_cvr", "read_cvr"]

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")
_RANK_COLUMN = (
    re.compile(r"(?<![a-z])(?:rank|choice|pref|preference|position)[\s_.\-]*(\d+)",
               re.IGNORECASE),
    re.compile(r"(?<!\d)(\d+)\s*(?:st|nd|rd|th)[\s_.\-]*(?:choice|rank|pref|preference)",
               re.IGNORECASE),
    re.compile(rf"\b({'|'.join(_ORDINALS)})[\s_.\-]*(?:choice|rank|pref|preference)\b",
               re.IGNORECASE),
)
_COUNT_COLUMNS = ("count", "weight", "ballots", "votes", "ballotcount", "numberofballots")
_COUNT_LINE = re.compile(r"\s*([^:*>,\[\]]*?)\s*[:*](.*)")
_DECLARATION = re.compile(r"=\s*(\[[^\]]*\]|[^:\s]+)\s*:\s*(\[[^\]]*\]|.*?)\s*")
_INT = re.compile(r"\+?\d+")
#: the most ballots one line may count: each becomes a row of the rankings in memory
_MAX_COUNT = 10**9
#: :func:`looks_like_cvr` reads this many lines of a table
_SNIFF_LINES = 200


class CastVoteRecords(NamedTuple):
    """What :func:`read_cvr` read: the rankings, and what the counting rules did.

    Attributes
    ----------
    rankings : Rankings
        One ranking per ballot, in file order (a line of ``c`` ballots gives ``c``
        rankings), ballots that rank no candidate left out.  With ``group=``, its
        ``groups`` hold each ballot's value of that column.
    cleaning : tuple of CleaningRule
        Each rule that changed some ballots, with how many and a sentence for a summary.
    n_ballots : int
        Ballots read, those left out included.
    layout : str
        How the file was read (its rank, count and ignored columns), in one line.
    rules : str
        The rules applied (:meth:`BallotRules.describe`), in one line.
    """

    rankings: Rankings
    cleaning: tuple[CleaningRule, ...]
    n_ballots: int
    layout: str
    rules: str


def read_cvr(path, *, candidates=None, skipped="skip", overvote="exhaust",
             write_ins="candidate", missing=(), group=None, count=None, contest=None,
             sep=None) -> CastVoteRecords:
    """Read ranked ballots from a cast-vote record, applying the counting rules of ranked
    choice voting and counting what each rule changed.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV/TSV/TXT table with rank columns (a header row such as ``BallotID, Precinct,
        Rank 1, Rank 2, Rank 3``), or a file of ``count: ballot`` lines (``.abif``, or any
        text file whose first line reads ``5: a > b``); ``.gz`` is read too.  A byte-order
        mark, CRLF line ends and spreadsheet quoting (``"Smith, Jo"``) are fine; blank lines
        and lines starting with ``#`` are skipped.
    candidates : sequence of str, optional
        The candidates' names: every name in the file must be one of them.  Default: the
        names found (declared first in an ABIF file, then sorted), ``"Write-in"`` last.
    skipped : {"skip", "skip-one", "exhaust"}, default="skip"
        A skipped rank followed by a later choice: ``"skip"`` moves the later choices up
        (New York City), ``"skip-one"`` does so past one skipped rank but ends the ranking
        at two in a row (Maine), ``"exhaust"`` ends the ranking at the first skipped rank.
    overvote : {"exhaust", "skip"}, default="exhaust"
        An overvoted rank ends the ranking (``"exhaust"``, most jurisdictions) or is passed
        over (``"skip"``).
    write_ins : {"candidate", "drop"}, default="candidate"
        Write-ins (``write-in``, ``UWI``, ``Write-in (name)``) are one candidate,
        ``"Write-in"``, or are read as skipped ranks (``"drop"``).
    missing : str or sequence of str, default=()
        More cells that mark a skipped rank, besides empty cells, ``skipped`` and
        ``undervote``.
    group : str, optional
        A column (such as ``"Precinct"``) kept as each ranking's group
        (``rankings.groups``), so that results can be broken down by it.  Other columns
        are ignored.
    count : str, optional
        The column of ballot counts.  Default: a column named ``count``, ``weight``,
        ``ballots`` or ``votes``, if there is one; otherwise each row is one ballot.
    contest : str, optional
        In a file that holds several contests (``Mayor Choice 1``, ``Comptroller Choice
        1``), the rank columns whose header contains this text.
    sep : {"comma", "semicolon", "tab", "whitespace"}, optional
        The separator of a table; found in the file by default.

    Returns
    -------
    cvr : CastVoteRecords
        ``cvr.rankings`` for the estimators; ``cvr.cleaning`` says, rule by rule, how many
        ballots each changed (``"412 ballots ranked a candidate twice: the later copies
        were dropped"``).

    Raises
    ------
    DataError
        If the file is missing, empty or unreadable; a table has no rank column, two
        columns of one rank, a gap in its ranks, a row with more cells than the header,
        or lacks the ``group``/``count`` column; a count is not a positive integer; a
        name is not one of ``candidates``; or no ballot ranks a candidate.  Messages give
        the path, the line and the column (or the rank).

    Notes
    -----
    Rules are applied left to right, as tabulators do: an overvote or (under
    ``"exhaust"``) a skipped rank ends the ranking, a candidate already ranked is passed
    over, and a ballot left with no candidate is left out.  A ballot that ranks every
    candidate keeps all but its last choice, which is implied (:class:`Rankings`).

    Examples
    --------
    >>> cvr = read_cvr("mayor_cvr.csv", group="Precinct")  # doctest: +SKIP
    >>> for rule in cvr.cleaning:  # doctest: +SKIP
    ...     print(rule.sentence)
    12 ballots had an overvote: the ranking ends before it (rule 'exhaust'; ...)
    """
    if isinstance(missing, str):
        missing = (missing,)
    rules = BallotRules(skipped=skipped, overvote=overvote, write_ins=write_ins,
                        missing=frozenset(str(m).strip().lower() for m in missing))
    if candidates is not None:
        candidates = _check_items(candidates, None)
    p, gz, lines_layout = _layout(path)
    if lines_layout:
        if group is not None or count is not None or contest is not None or sep is not None:
            raise DataError(f"{p} holds 'count: ballot' lines: group=, count=, contest= and "
                            "sep= apply to tables with rank columns")
        ballots = _read_count_lines(p, gz)
    else:
        ballots = _read_table(p, gz, sep, group=group, count=count, contest=contest)
    return _assemble(p, ballots, rules, candidates)


class _Ballots(NamedTuple):
    """The ballot lines of a file before the rules: each distinct line once."""

    keys: list          # distinct ballots: tuples of cells (a tuple of names is a tie)
    first_line: list    # the line each distinct ballot is first found on
    inverse: np.ndarray  # (n_lines,): the distinct ballot of each line
    counts: np.ndarray  # (n_lines,): ballots on each line
    groups: np.ndarray | None
    group_name: str | None
    declared: dict      # ABIF token -> name, in declaration order
    where: object       # (position) -> 'column 'Rank 2' (4)' or 'rank 2'
    layout: str


# --------------------------------------------------------------------------------------------
# which layout


def _layout(path) -> tuple[Path, bool, bool]:
    """``(path, gzipped, count lines?)``: ``.abif`` files and files whose first data line
    reads ``count: ...`` hold count lines; other text files are tables."""
    p = check_file(path)
    name = p.name.lower()
    gz = name.endswith(".gz")
    if Path(name.removesuffix(".gz")).suffix == ".abif":
        return p, gz, True
    fmt, gz = detect_format(p)
    if fmt not in TEXT_FORMATS:
        raise DataError(f"{p}: cast-vote records are read from a text table (.csv, .tsv or "
                        f".txt, optionally .gz) or an .abif file, not from a .{fmt} file")
    with reading(p), open_text(p, gz, newline=None) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                return p, gz, re.match(r"\d+\s*[:*]", line) is not None
    raise DataError(f"{p} contains no data (only blank or comment lines).")


def looks_like_cvr(path) -> bool:
    """Whether a file should be read by :func:`read_cvr` rather than as a plain table of
    rankings: an ``.abif`` file, a file of ``count: ballot`` lines, or a table whose header
    has rank columns and either other columns (ballot id, precinct, count) or, in its first
    lines, a marker (``undervote``, ``overvote``, ``skipped``, a write-in).

    A file that cannot be read gives False: its reader then says why.
    """
    try:
        p, gz, lines_layout = _layout(path)
        if lines_layout:
            return True
        fmt, _ = detect_format(p)
        delimiter = sniff(p, gz, fmt, None, decimal=".").delimiter
        with reading(p), open_text(p, gz) as f:
            rows = records(f, delimiter)
            _, header = next(rows)
            ranks = [j for j, h in enumerate(header) if _rank_number(h.strip()) is not None]
            if not ranks:
                return False
            if len(ranks) < len([h for h in header if h.strip()]):
                return True
            rules = BallotRules()
            for k, (_, row) in enumerate(rows):
                if k == _SNIFF_LINES:
                    break
                for cell in row:
                    cell = cell.strip()
                    if cell and (rules.kind(cell) != (NAME, cell)):
                        return True
    except (DataError, StopIteration):
        return False
    return False


# --------------------------------------------------------------------------------------------
# count lines


def _read_count_lines(p: Path, gz: bool) -> _Ballots:
    """The ballots of ``count: a > b > c`` lines, with ABIF ``=token:[Name]`` declarations;
    ``{...}`` metadata and ``#`` comments are skipped."""
    index, keys, first, inverse, counts, declared = {}, [], [], [], [], {}
    with reading(p), open_text(p, gz, newline=None) as f:
        for lineno, line in enumerate(f, 1):
            line = re.sub(r"(^|\s)#.*", "", line).strip()
            if not line or line.startswith("{"):
                continue
            if line.startswith("="):
                m = _DECLARATION.fullmatch(line)
                if m is None:
                    raise DataError(f"{p}: line {lineno}: expected a candidate declaration "
                                    f"'=token:[Full Name]', got {line[:60]!r}")
                declared[_unbracket(m.group(1))] = _unbracket(m.group(2))
                continue
            m = _COUNT_LINE.fullmatch(line)
            if m is None:
                raise DataError(f"{p}: line {lineno}: expected 'count: ballot' (such as "
                                f"'5: alice > bob'), got {line[:60]!r}")
            n = _count(m.group(1), lambda: f"{p}: line {lineno}")
            key = _ballot_cells(m.group(2))
            d = index.setdefault(key, len(keys))
            if d == len(keys):
                keys.append(key)
                first.append(lineno)
            inverse.append(d)
            counts.append(n)
    if not keys:
        raise DataError(f"{p} holds no 'count: ballot' line")
    return _Ballots(keys, first, np.array(inverse, dtype=np.int64),
                    np.array(counts, dtype=np.int64), None, None, declared,
                    lambda j: f"rank {j + 1}", "count: ballot lines")


def _ballot_cells(text: str) -> tuple:
    """``a > b=c > d`` -> ``("a", ("b", "c"), "d")``; ``a,b,,c`` -> ``("a", "b", "", "c")``
    (brackets around a name are dropped)."""
    text = text.strip()
    if not text:
        return ()
    if ">" in text:
        cells = []
        for part in text.split(">"):
            tied = tuple(_unbracket(t) for t in part.split("="))
            cells.append(tied if len(tied) > 1 else tied[0])
        return tuple(cells)
    return tuple(_unbracket(t) for t in text.split(","))


def _unbracket(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == "[" and token[-1] == "]":
        return token[1:-1].strip()
    return token


def _count(text: str, where) -> int:
    """A ballot count: a positive integer, at most :data:`_MAX_COUNT`."""
    text = text.strip()
    if not _INT.fullmatch(text) or int(text) < 1:
        raise DataError(f"{where()}: the count {text!r} is not a positive integer")
    if int(text) > _MAX_COUNT:
        raise DataError(f"{where()}: the count {text} is more ballots than can be held (at "
                        f"most {_MAX_COUNT:,} a line)")
    return int(text)


# --------------------------------------------------------------------------------------------
# tables


def _read_table(p: Path, gz: bool, sep, *, group, count, contest) -> _Ballots:
    """The ballots of a table with rank columns, one ballot (or ``count`` ballots) a row."""
    fmt, _ = detect_format(p)
    delimiter = sniff(p, gz, fmt, sep, decimal=".").delimiter
    with reading(p), open_text(p, gz) as f:
        rows = records(f, delimiter)
        head_line, header = next(rows)
        header = [c.strip() for c in header]
        ranks = _rank_columns(p, head_line, header, contest)
        count_col = _named_column(p, head_line, header, count, "count", _COUNT_COLUMNS)
        group_col = _named_column(p, head_line, header, group, "group", ())
        width = len(header)
        index, keys, first, inverse, counts, groups = {}, [], [], [], [], []
        for lineno, row in rows:
            if len(row) > width and any(c.strip() for c in row[width:]):
                raise DataError(f"{p}: line {lineno} has {len(row)} cells, but the header "
                                f"(line {head_line}) names {width} columns")
            row = row + [""] * (width - len(row))
            key = tuple(row[j].strip() for j in ranks)
            d = index.setdefault(key, len(keys))
            if d == len(keys):
                keys.append(key)
                first.append(lineno)
            inverse.append(d)
            counts.append(1 if count_col is None else _count(
                row[count_col], lambda: f"{p}: line {lineno}, column {header[count_col]!r}"))
            if group_col is not None:
                groups.append(row[group_col].strip())
    if not keys:
        raise DataError(f"{p} has a header row (line {head_line}) but no ballots")
    used = set(ranks) | {count_col, group_col}
    ignored = [h for j, h in enumerate(header) if j not in used]
    layout = f"rank columns {header[ranks[0]]!r} .. {header[ranks[-1]]!r}"
    if count_col is not None:
        layout += f"; ballot counts in {header[count_col]!r}"
    if group_col is not None:
        layout += f"; grouped by {header[group_col]!r}"
    if ignored:
        layout += "; ignored columns " + ", ".join(repr(h) for h in ignored)
    return _Ballots(keys, first, np.array(inverse, dtype=np.int64),
                    np.array(counts, dtype=np.int64),
                    None if group_col is None else np.array(groups, dtype=str),
                    None if group_col is None else header[group_col], {},
                    lambda j: f"column {header[ranks[j]]!r} ({ranks[j] + 1})", layout)


def _rank_number(cell: str) -> int | None:
    """The rank a header cell names (``Rank 2``, ``Choice_2``, ``2nd choice``, ``second
    choice``), or None."""
    for k, pattern in enumerate(_RANK_COLUMN):
        m = pattern.search(cell)
        if m is not None:
            return int(m.group(1)) if k < 2 else _ORDINALS.index(m.group(1).lower()) + 1
    return None


def _rank_columns(p: Path, line: int, header: list, contest) -> list[int]:
    """The 0-based columns of ranks 1, 2, ..., K of the header."""
    numbered = [(j, _rank_number(h)) for j, h in enumerate(header)]
    numbered = [(j, r) for j, r in numbered if r is not None]
    if contest is not None:
        numbered = [(j, r) for j, r in numbered if str(contest).lower() in header[j].lower()]
    if not numbered:
        shown = ", ".join(repr(h) for h in header[:8]) + (", ..." if len(header) > 8 else "")
        what = "no rank column" if contest is None else f"no rank column of contest {contest!r}"
        raise DataError(f"{p}: line {line}: the header has {what} (such as 'Rank 1', "
                        f"'Choice_1' or '1st choice'); its columns are {shown}. A file of "
                        "rankings without such a header is read by read_rankings_csv")
    by_rank = {}
    for j, r in numbered:
        if r in by_rank:
            raise DataError(
                f"{p}: line {line}: columns {header[by_rank[r]]!r} ({by_rank[r] + 1}) and "
                f"{header[j]!r} ({j + 1}) both hold rank {r}; if the file holds several "
                "contests, pick one with contest=")
        by_rank[r] = j
    want = list(range(1, len(by_rank) + 1))
    if sorted(by_rank) != want:
        gap = next(r for r in want if r not in by_rank)
        raise DataError(f"{p}: line {line}: the rank columns number ranks "
                        f"{', '.join(map(str, sorted(by_rank)))}: no column holds rank {gap}")
    return [by_rank[r] for r in want]


def _named_column(p: Path, line: int, header: list, name, what: str, defaults) -> int | None:
    """The column ``name`` (case-insensitive), or the first whose name is one of
    ``defaults`` when ``name`` is None."""
    keys = [re.sub(r"[\s_\-]+", "", h.lower()) for h in header]
    if name is None:
        return next((j for j, k in enumerate(keys) if k in defaults), None)
    found = [j for j, h in enumerate(header) if h.lower() == str(name).strip().lower()]
    if not found:
        others = [h for h in header if _rank_number(h) is None]
        shown = ", ".join(repr(h) for h in others) or "none"
        raise DataError(f"{p}: line {line}: the header has no {what} column {name!r}; its "
                        f"columns other than ranks are {shown}")
    return found[0]


# --------------------------------------------------------------------------------------------
# the rules, and the rankings


def _assemble(p: Path, b: _Ballots, rules: BallotRules, candidates) -> CastVoteRecords:
    """Apply the rules to each distinct ballot once, then lay the rankings out in file
    order, ballots that rank no candidate left out."""
    known = None if candidates is None else set(candidates) | {WRITE_IN}
    cleaned = []
    for d, key in enumerate(b.keys):
        kinds = [rules.kind(b.declared.get(c, c) if isinstance(c, str) else
                            tuple(b.declared.get(t, t) for t in c)) for c in key]
        for j, (kind, name) in enumerate(kinds):
            if known is not None and kind == NAME and name not in known:
                shown = ", ".join(repr(c) for c in candidates[:8])
                raise DataError(f"{p}: line {b.first_line[d]}, {b.where(j)}: unknown "
                                f"candidate {key[j]!r}; the candidates are {shown}"
                                + (", ..." if len(candidates) > 8 else ""))
        cleaned.append(clean_ballot(kinds, rules))
    if all("empty" in flags for _, flags in cleaned):
        raise DataError(f"{p}: no ballot ranks a candidate")
    items = _candidates(p, candidates, b.declared, cleaned)
    index = {name: j for j, name in enumerate(items)}
    width = max(1, max(len(names) for names, _ in cleaned))
    orders = np.full((len(cleaned), width), _PAD, dtype=np.int64)
    for d, (names, _) in enumerate(cleaned):
        orders[d, : len(names)] = [index[n] for n in names]
    lengths = (orders != _PAD).sum(axis=1)

    ballots_of = np.zeros(len(cleaned), dtype=np.int64)  # ballots of each distinct line
    np.add.at(ballots_of, b.inverse, b.counts)
    tally = {}
    for d, (_, flags) in enumerate(cleaned):
        for flag in flags:
            tally[flag] = tally.get(flag, 0) + int(ballots_of[d])
    tally["complete"] = int(ballots_of[lengths >= len(items)].sum())
    keep = lengths[b.inverse] > 0
    n_kept = int(b.counts[keep].sum())
    if n_kept > _MAX_COUNT:
        raise DataError(f"{p} counts {n_kept:,} ballots that rank a candidate; at most "
                        f"{_MAX_COUNT:,} are held in memory, one row each")
    rows = np.repeat(b.inverse[keep], b.counts[keep])
    groups = None if b.groups is None else np.repeat(b.groups[keep], b.counts[keep])
    rankings = Rankings._from_valid(orders[rows], lengths[rows], len(items), items, groups,
                                    b.group_name)
    return CastVoteRecords(rankings, cleaning_report(tally, rules), int(b.counts.sum()),
                           b.layout, rules.describe())


def _candidates(p: Path, candidates, declared: dict, cleaned) -> tuple[str, ...]:
    """The items: ``candidates``, or the declared names then the others found, sorted
    (numerically when all are numbers); ``"Write-in"`` last when a ballot ranks it."""
    found = {n for names, _ in cleaned for n in names}
    if candidates is not None:
        items = list(candidates)
    else:
        items = list(dict.fromkeys(declared.values()))
        rest = sorted(found - set(items) - {WRITE_IN})
        if all(_INT.fullmatch(n) for n in rest):
            rest.sort(key=int)
        items += rest
    if WRITE_IN in found and WRITE_IN not in items:
        items.append(WRITE_IN)
    if len(items) < 2:
        raise DataError(f"{p}: the ballots name {len(items)} candidate(s) ({', '.join(items)}); "
                        "at least 2 are needed (pass candidates= to add those no ballot ranks)")
    return tuple(items)
