"""Columns that copy an earlier column of the table: the same information written twice.

A column is a *copy* of an earlier one when the two have their holes in the same rows and
their values pair one to one on the other rows (each value of one meets a single value of
the other, and the other way round), and either

* both are numbers in the same or the reverse order: the same values, or a transform of the
  other (``logwage`` beside ``wage``, degrees Fahrenheit beside Celsius, ``agesq`` beside
  ``age``); or
* the copy is read as levels (yes/no or categories) whose values repeat (at most
  :data:`COPY_MAX_SHARE` of the rows hold distinct values): a label beside its code, a 0/1
  column beside its complement.  A column of levels says only which rows share a value,
  and the earlier column says that already.

Real numbers that pair one to one with another column in another order are kept: a
city's median income beside its population, repeated on the rows of each city, pairs one
to one with it, but its values place the cities otherwise.  So are distinct values in no
common order, which pair one to one with any other column of distinct values.

A yes/no column that marks one level of a column of categories (``DesMoines`` beside
``Location``, the year dummies ``y81`` … ``y93`` of a panel beside ``year``) is an
*indicator* of it, in either order: 1 (or 0) on exactly the rows of that level, holes in
the same rows, each value on at least :data:`INDICATOR_MIN_ROWS` rows.  The categories say
it already, and the indicator is left out.

The earlier column is kept and the copy left out.  A model that reads both counts the same
information twice, and under a cluster family with independent columns (or a covariance
fitted per cluster) a smooth transform of a real column lets thin clusters follow the curve
piece by piece, each with a tiny spread about it: the partition then cuts the column into
slices, and as many posterior modes as ways of cutting it hold the chains apart.
"""

from __future__ import annotations

import numpy as np

#: distinct values on at most this share of the rows make a one-to-one pairing a recoding
COPY_MAX_SHARE = 0.5
#: columns of at most this many filled cells are not compared (a pairing could be chance)
COPY_MIN_ROWS = 20
#: an indicator marks a level of at least this many rows and leaves as many (a yes/no
#: column with one odd row matches a level of one row by chance: a fingerprint bit, a
#: site's one record)
INDICATOR_MIN_ROWS = 5


def find_copies(names: list, codes: list, numbers: list, coded=None, keep=frozenset()) -> dict:
    """The columns that copy an earlier one.

    Parameters
    ----------
    names : list of str
        The columns' names, in the table's order.
    codes : list of ndarray of int
        Each column's cells as the index of their value, ``0 .. m - 1`` in order of first
        appearance (as :func:`pandas.factorize` gives them), -1 in a hole.
    numbers : list of ndarray or None
        Each column's cells as numbers (NaN in a hole), None for a column of text.
    coded : list of bool, optional
        Whether each column is read as levels (yes/no or categories); none when not given.
    keep : set of str
        Columns never left out as copies (those the user gave a kind).

    Returns
    -------
    dict of str to str
        For each copy, by name, why it is left out (naming the column it copies).
    """
    coded = [False] * len(names) if coded is None else coded
    kept: dict = {}  # (number of values, holes) -> indices of the columns kept so far
    found = {}
    for j, c in enumerate(codes):
        hole = c < 0
        n_rows = int((~hole).sum())
        m = int(c.max()) + 1 if n_rows else 0
        key = (m, np.packbits(hole).tobytes())
        why = None
        if names[j] not in keep and n_rows > COPY_MIN_ROWS:
            for i in kept.get(key, ()):
                why = _copy_of(names[i], codes[i], c, numbers[i], numbers[j], m,
                               coded[j] and m <= COPY_MAX_SHARE * n_rows)
                if why is not None:
                    break
        if why is None:
            kept.setdefault(key, []).append(j)
        else:
            found[names[j]] = why
    return found


def _copy_of(name, a, b, x, y, m: int, levels: bool) -> str | None:
    """Why column ``b`` (codes; numbers ``y`` or None) copies column ``name`` (``a``,
    ``x``), both of ``m`` values with the same holes, or None; ``levels``: ``b`` is read as
    levels whose values repeat."""
    if not _one_to_one(a, b, m):
        return None
    if x is not None and y is not None:
        hole = a < 0
        if np.array_equal(x[~hole], y[~hole]):
            return f"a copy of {name!r} (the same values on every row)"
        if _same_order(x, y, hole):
            return (f"a copy of {name!r}: a transform of it (its values follow that "
                    "column's order one to one)")
    if levels:
        return (f"a copy of {name!r}: a recoding of it (its {m:,} values pair one to one "
                "with that column's)")
    return None


def _one_to_one(a: np.ndarray, b: np.ndarray, m: int) -> bool:
    """Whether two columns of ``m`` values each, with the same holes, pair their values one
    to one: exactly ``m`` distinct pairs."""
    present = a >= 0
    pairs = a[present].astype(np.int64) * m + b[present]
    return len(np.unique(pairs)) == m


def _same_order(x, y, hole: np.ndarray) -> bool:
    """Whether ``y`` rises, or falls, with ``x`` over the filled rows."""
    order = np.argsort(x[~hole], kind="stable")
    step = np.diff(y[~hole][order])
    return bool(np.all(step >= 0) or np.all(step <= 0))


def find_indicators(names: list, codes: list, kinds: list, keep=frozenset()) -> dict:
    """The yes/no columns that mark one level of a column of categories (the module notes).

    Parameters
    ----------
    names, codes : as :func:`find_copies`
    kinds : list of str
        Each column's kind (``"bernoulli"``, ``"categorical"``, ...).
    keep : set of str
        Columns never left out (those the user gave a kind).

    Returns
    -------
    dict of str to str
        For each indicator, by name, why it is left out (naming the column it marks).
    """
    found = {}
    levels = [int(c.max()) + 1 for c in codes]
    wide = [i for i, kind in enumerate(kinds) if kind == "categorical" and levels[i] >= 3]
    for j, kind in enumerate(kinds):
        if kind != "bernoulli" or names[j] in keep:
            continue
        b = codes[j]
        if int((b >= 0).sum()) <= COPY_MIN_ROWS:
            continue
        for i in wide:
            m = levels[i]
            if _marks_one_level(codes[i], b, m):
                found[names[j]] = (f"an indicator of one of the {m:,} levels of {names[i]!r} "
                                   "(its value tells that level's rows from the others, "
                                   "which that column says already)")
                break
    return found


def _marks_one_level(a: np.ndarray, b: np.ndarray, m: int) -> bool:
    """Whether the two-valued column ``b`` (codes 0, 1; -1 in a hole) takes one value on
    the rows of a single level of ``a`` (``m`` levels) and the other on the rest, holes in
    the same rows."""
    hole = a < 0
    if not np.array_equal(hole, b < 0):
        return False
    pairs = np.unique(a[~hole].astype(np.int64) * 2 + b[~hole])
    if len(pairs) != m:  # some level of a meets both values of b
        return False
    ones = int((pairs % 2).sum())
    if ones != 1 and ones != m - 1:
        return False
    fewer = min(int((b == 1).sum()), int((b == 0).sum()))
    return fewer >= INDICATOR_MIN_ROWS
