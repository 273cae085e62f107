"""The counting rules of cast-vote records: what a cell of a ballot says, and how a ballot's
ranks become a top-t ranking.

A cell of a rank column (or a position of a ``count: a > b > c`` line) holds a candidate,
or one of the markers election offices write:

* a skipped rank: an empty cell, ``skipped``, ``undervote`` (``under vote``, ``under-vote``),
  ``blank``, or one of the caller's ``missing`` markers;
* an overvote: ``overvote`` (``over vote``, ``over-vote``): several candidates marked at
  one rank;
* a write-in: ``write-in``, ``writein``, ``write in``, ``UWI`` (RCTab's undeclared write-in),
  ``Write-in (name)`` or ``Write-in: name``.

Markers are read whatever their case and surrounding spaces.  :func:`clean_ballot` then
applies the rules of ranked-choice tabulation (RCTab's, as US jurisdictions configure it)
to one ballot; :func:`cleaning_report` counts, in ballots, what each rule changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["WRITE_IN", "BallotRules", "CleaningRule"]

#: the candidate that write-ins are read as (``write_ins="candidate"``)
WRITE_IN = "Write-in"
SKIPPED_RULES = ("skip", "skip-one", "exhaust")
OVERVOTE_RULES = ("exhaust", "skip")
WRITE_IN_RULES = ("candidate", "drop")

_SKIP_WORDS = frozenset({"", "skipped", "skip", "undervote", "blank"})
_OVER_WORDS = frozenset({"overvote"})
_WRITE_IN = re.compile(r"(write[\s_\-]*ins?|uwi|undeclared[\s_\-]*write[\s_\-]*ins?)"
                       r"(\b.*)?", re.IGNORECASE)
# kinds of cell
SKIP, OVER, TIE, NAME = "skip", "over", "tie", "name"


class CleaningRule(NamedTuple):
    """One counting rule that changed some ballots, with how many.

    Attributes
    ----------
    rule : str
        ``"write_in"``, ``"duplicate"``, ``"skipped"``, ``"skip_exhausted"``,
        ``"overvote"``, ``"tie"``, ``"empty"`` or ``"complete"``.
    count : int
        The number of ballots it applied to (a line ``5: a > b`` is 5 ballots).
    sentence : str
        What was done, for a summary: ``"412 ballots ranked a candidate twice: the later
        copies were dropped"``.
    """

    rule: str
    count: int
    sentence: str


@dataclass(frozen=True)
class BallotRules:
    """How the ranks of a ballot become a ranking (the arguments of
    :func:`~dpclust.io.read_cvr`, checked).

    Attributes
    ----------
    skipped : {"skip", "skip-one", "exhaust"}
        A skipped rank followed by a later choice: ``"skip"`` passes over it (the later
        choices move up; New York City), ``"skip-one"`` passes over one skipped rank but
        ends the ranking at two in a row (Maine), ``"exhaust"`` ends the ranking at the
        first skipped rank.
    overvote : {"exhaust", "skip"}
        ``"exhaust"`` ends the ranking before an overvoted rank (most jurisdictions);
        ``"skip"`` passes over it.
    write_ins : {"candidate", "drop"}
        ``"candidate"`` reads every write-in as the one candidate ``"Write-in"``; ``"drop"``
        reads it as a skipped rank.
    missing : frozenset of str
        More cells that mark a skipped rank (compared case-insensitively).
    """

    skipped: str = "skip"
    overvote: str = "exhaust"
    write_ins: str = "candidate"
    missing: frozenset = frozenset()

    def __post_init__(self):
        for name, allowed in (("skipped", SKIPPED_RULES), ("overvote", OVERVOTE_RULES),
                              ("write_ins", WRITE_IN_RULES)):
            value = getattr(self, name)
            if value not in allowed:
                shown = ", ".join(repr(a) for a in allowed)
                raise ValueError(f"{name} must be one of {shown}, got {value!r}")

    @property
    def skips_allowed(self) -> float:
        """How many skipped ranks in a row a later choice may follow."""
        return {"skip": float("inf"), "skip-one": 1, "exhaust": 0}[self.skipped]

    def describe(self) -> str:
        """The rules applied, in one line (for a summary)."""
        return (f"skipped ranks: {self.skipped!r}; overvotes: {self.overvote!r}; "
                f"write-ins: {self.write_ins!r}")

    def kind(self, cell) -> tuple[str, str | None]:
        """``(kind, candidate)`` of one position: a tuple of several names is a tie, a
        marker gives ``(SKIP | OVER, None)``, a write-in the candidate ``WRITE_IN`` (or a
        skip when dropped), anything else the name it holds."""
        if isinstance(cell, tuple):
            return (TIE, None) if len(cell) > 1 else self.kind(cell[0])
        word = re.sub(r"[\s_\-]+", "", cell.lower())
        if word in _SKIP_WORDS or cell.lower() in self.missing:
            return SKIP, None
        if word in _OVER_WORDS:
            return OVER, None
        if _WRITE_IN.fullmatch(cell):
            return (SKIP, "write-in") if self.write_ins == "drop" else (NAME, WRITE_IN)
        return NAME, cell


def clean_ballot(kinds, rules: BallotRules) -> tuple[list[str], set[str]]:
    """The ranking a ballot gives, best first, and the rules that changed it.

    Parameters
    ----------
    kinds : sequence of (str, str or None)
        The ballot's positions, best first, as :meth:`BallotRules.kind` reads them.
    rules : BallotRules

    Returns
    -------
    names : list of str
        The candidates ranked, each once.
    flags : set of str
        The rules (:class:`CleaningRule` names) that applied; ``"empty"`` when no
        candidate is left.
    """
    names, seen, flags, gap = [], set(), set(), 0
    for kind, name in kinds:
        if name == "write-in" or name == WRITE_IN:
            flags.add("write_in")
        if kind == TIE:
            flags.add("tie")
            break
        if kind == OVER:
            flags.add("overvote")
            if rules.overvote == "exhaust":
                break
            continue
        if kind == SKIP:
            gap += 1
            continue
        if gap:
            if gap > rules.skips_allowed:
                flags.add("skip_exhausted")
                break
            flags.add("skipped")
            gap = 0
        if name in seen:
            flags.add("duplicate")
            continue
        seen.add(name)
        names.append(name)
    if not names:
        flags.add("empty")
    return names, flags


def cleaning_report(counts: dict, rules: BallotRules) -> tuple[CleaningRule, ...]:
    """The rules that changed some ballots, in a fixed order, each with its sentence.

    ``counts`` maps a rule's name to the number of ballots it applied to; rules that
    applied to none are left out.
    """
    other_skip = "skipped='skip' moves the later choices up instead"
    sentences = {
        "write_in": (
            f"ranked a write-in: read as the candidate {WRITE_IN!r} (write_ins='drop' reads "
            "write-ins as skipped ranks instead)" if rules.write_ins == "candidate" else
            "ranked a write-in: read as a skipped rank (rule 'drop'; write_ins='candidate' "
            f"reads them as the candidate {WRITE_IN!r} instead)"),
        "duplicate": "ranked a candidate twice: the later copies were dropped",
        "skipped": ("skipped a rank and ranked later candidates: the later choices were moved "
                    f"up (rule {rules.skipped!r}; skipped='exhaust' stops the ranking at the "
                    "first skip instead)"),
        "skip_exhausted": (
            "skipped a rank and ranked later candidates: the ranking stops at the skip "
            f"(rule 'exhaust'; {other_skip})" if rules.skipped == "exhaust" else
            "skipped two ranks or more in a row before a later choice: the ranking stops "
            f"there (rule 'skip-one'; {other_skip})"),
        "overvote": (
            "had an overvote: the ranking ends before it (rule 'exhaust'; overvote='skip' "
            "passes over it instead)" if rules.overvote == "exhaust" else
            "had an overvote: it was passed over (rule 'skip'; overvote='exhaust' ends the "
            "ranking before it instead)"),
        "tie": "ranked candidates equal: the ranking ends before the tie",
        "empty": "ranked no candidate (after the rules above): left out",
        "complete": "ranked every candidate: the last choice is implied and not stored",
    }
    out = []
    for rule, sentence in sentences.items():
        n = int(counts.get(rule, 0))
        if n:
            ballots = "1 ballot" if n == 1 else f"{n:,} ballots"
            out.append(CleaningRule(rule, n, f"{ballots} {sentence}"))
    return tuple(out)
