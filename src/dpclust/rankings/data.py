"""Top-t rankings in memory: the :class:`Rankings` container and :func:`check_rankings`.

A top-t ranking lists the ``t`` items a judge (a voter, a customer) likes best, best first;
the other ``n - t`` items are unranked.  :class:`Rankings` holds ``N`` such rankings of the
items ``0 .. n_items - 1`` as one integer array, one ranking per row, padded on the right
with ``-1``::

    orders = [[2, 0, 1],      # item 2 first, then 0, then 1
              [1, -1, -1],    # only item 1
              [0, 2, -1]]

This is the working form of the Generalized Mallows family.  A ranking that lists every item
(``t = n``) says nothing more than its first ``n - 1`` items, since the last one is implied;
it is stored truncated to ``t = n - 1``, so every stored ranking has ``1 <= t <= n - 1``.

:func:`check_rankings` turns what users have -- lists of item names or ids, padded arrays,
DataFrames -- into a :class:`Rankings`, and raises :class:`~dpclust.utils.checks.DataError`
naming the first bad ranking.  In messages about in-memory data, rankings (rows) and
positions within a ranking are 0-based: ``ranking 3 ... position 1`` is ``orders[3, 1]``.
"""

from __future__ import annotations

import math
import numbers
from itertools import chain

import numpy as np

from ..utils.checks import DataError, _short_repr

__all__ = ["Rankings", "check_rankings"]

_PAD = -1


# --------------------------------------------------------------------------------------------
# where an error is: in-memory rankings, or lines of a file


class _Where:
    """How error messages name a ranking, a position in it and an item.

    In memory: ``ranking 3``, ``position 1`` (0-based), items by id or by repr of their name.
    Loaders pass the file's line numbers, their own word and base for positions (``column 2``
    of a CSV line, ``rank 2`` of a PrefLib order) and how the file writes an item.
    """

    def __init__(self, what="X", *, source=None, lines=None, pos_word="position", pos_base=0,
                 items=None, id_base=None):
        self.what = what
        self.source = source
        self.lines = lines
        self.pos_word = pos_word
        self.pos_base = pos_base
        self.items = items
        self.id_base = id_base
        self.pad = "the padding -1"

    def row(self, i: int) -> str:
        if self.source is not None:
            if self.lines is not None:
                return f"{self.source}: line {int(self.lines[i])}"
            return f"{self.source}: ranking {i}"
        if self.what != "X":
            return f"ranking {i} of {self.what}"
        return f"ranking {i}"

    def pos(self, j: int) -> str:
        return f"{self.pos_word} {int(j) + self.pos_base}"

    def pos_pair(self, j1: int, j2: int) -> str:
        return f"{self.pos_word}s {int(j1) + self.pos_base} and {int(j2) + self.pos_base}"

    def item(self, v: int) -> str:
        v = int(v)
        if self.id_base is not None:
            shown = str(v + self.id_base)
            if self.items is not None and 0 <= v < len(self.items):
                shown += f" ({self.items[v]!r})"
            return shown
        if self.items is not None and 0 <= v < len(self.items):
            return repr(self.items[v])
        return str(v)


# --------------------------------------------------------------------------------------------
# the container


class Rankings:
    """Top-t rankings of items 0..n_items-1, best first.

    The working form of the Generalized Mallows family: one row of item ids per ranking,
    padded with ``-1``, and the ranking lengths.

    Parameters
    ----------
    orders : array-like of int of shape (n_rankings, max_length), or list of sequences
        One ranking per row: item ids best first, padded on the right with ``-1`` (or
        lists of different lengths).  Every row lists at least one item and no item twice.
        Integer-valued floats are accepted.  To build rankings from item names use
        :func:`check_rankings`.
    n_items : int
        Number of items ``n`` (at least 2); ids run from 0 to ``n_items - 1``.
    items : sequence of str, optional
        Display names of the items ``0 .. n_items - 1`` (distinct).
    groups : array-like of str of shape (n_rankings,), optional
        A grouping of the rankings, such as the precinct each ballot was cast in
        (:func:`dpclust.io.read_cvr` with ``group=``), so that results can be broken down
        by it.  Kept through indexing and pickling.
    group_name : str, optional
        What ``groups`` are (the column they were read from); ``"group"`` by default.

    Attributes
    ----------
    orders : ndarray of shape (n_rankings, max_length), dtype int64
        Read-only copy of the rankings, padded with ``-1``; ``max_length`` is the length of
        the longest ranking (at most ``n_items - 1``).
    lengths : ndarray of shape (n_rankings,), dtype int64
        Read-only; ``lengths[i] = t_i``, the number of items ranking ``i`` lists,
        ``1 <= t_i <= n_items - 1``.
    n_items : int
    items : tuple of str or None
    groups : ndarray of str of shape (n_rankings,) or None
        Read-only.
    group_name : str or None

    Raises
    ------
    DataError
        If ``orders`` is not a 2-D array of integers, is empty, or a ranking is empty, lists
        an item twice, lists an id outside ``0 .. n_items - 1``, or has an item after its
        ``-1`` padding; if ``items`` does not hold ``n_items`` distinct names.

    Notes
    -----
    A ranking that lists all ``n_items`` items is stored without its last item, which is
    implied: ``[2, 0, 1]`` of 3 items becomes ``[2, 0]``.  The model only ever sees
    ``t <= n - 1``.

    Examples
    --------
    >>> r = Rankings([[2, 0, 1], [1, -1, -1]], n_items=3, items=["a", "b", "c"])
    >>> r.lengths.tolist()
    [2, 1]
    >>> r.to_lists()
    [['c', 'a'], ['b']]
    """

    __slots__ = ("_distinct", "group_name", "groups", "items", "lengths", "n_items", "orders")

    def __init__(self, orders, n_items, items=None, *, groups=None, group_name=None):
        n_items = _check_n_items(n_items)
        items = None if items is None else _check_items(items, n_items)
        where = _Where("orders", items=items)
        kind, arr = _to_padded(orders, where)
        if kind == "names":
            raise DataError("orders holds item names; Rankings() takes item ids, use "
                            "check_rankings(X, items=...) to convert names")
        lengths = _validate_ids(arr, n_items, where)
        groups, group_name = _check_groups(groups, group_name, len(arr))
        self._set(arr, lengths, n_items, items, groups, group_name)

    @classmethod
    def _from_valid(cls, orders, lengths, n_items, items, groups=None, group_name=None):
        """A Rankings from arrays already checked (``orders`` is copied, not re-checked)."""
        self = cls.__new__(cls)
        self._set(np.asarray(orders, dtype=np.int64), np.asarray(lengths, dtype=np.int64),
                  n_items, items, groups, group_name)
        return self

    def _set(self, orders, lengths, n_items, items, groups=None, group_name=None):
        full = lengths >= n_items
        if full.any():  # the last item of a complete ranking is implied: drop it
            orders = orders.copy()
            orders[full, n_items - 1] = _PAD
            lengths = np.where(full, n_items - 1, lengths)
        width = int(lengths.max()) if lengths.size else 0
        orders = np.array(orders[:, :width], dtype=np.int64, order="C")
        lengths = np.array(lengths, dtype=np.int64)
        orders.flags.writeable = False
        lengths.flags.writeable = False
        self.orders = orders
        self.lengths = lengths
        self.n_items = int(n_items)
        self.items = items
        if groups is not None:
            groups = np.array(groups, dtype=str)
            groups.flags.writeable = False
            group_name = group_name or "group"
        self.groups = groups
        self.group_name = None if groups is None else str(group_name)
        self._distinct = None

    def distinct(self):
        """The distinct rankings: ``(first, inverse)`` with ``first[d]`` the first ranking
        equal to distinct ranking d (in order of first appearance) and ``inverse[i]`` the
        distinct ranking of ranking i.  Computed once (the rankings are read-only).

        Ballots repeat: the 29,988 Dublin West ballots hold 10,230 distinct rankings, so
        the samplers score each distinct ranking once per sweep.
        """
        if self._distinct is None:
            n = len(self)
            if n == 0:
                first = inverse = np.zeros(0, dtype=np.int64)
            else:
                rows = np.concatenate([self.lengths[:, None], self.orders], axis=1)
                _, first, inverse = np.unique(rows, axis=0, return_index=True,
                                              return_inverse=True)
                inverse = inverse.reshape(-1)
                by_first = np.argsort(first, kind="stable")  # number by first appearance
                relabel = np.empty_like(by_first)
                relabel[by_first] = np.arange(len(by_first))
                first = first[by_first].astype(np.int64)
                inverse = relabel[inverse].astype(np.int64)
            first.flags.writeable = False
            inverse.flags.writeable = False
            self._distinct = (first, inverse)
        return self._distinct

    # ---------------------------------------------------------------------------------------
    # array-like behaviour

    @property
    def shape(self) -> tuple[int, int]:
        """``orders.shape``: (number of rankings, length of the longest)."""
        return self.orders.shape

    @property
    def max_length(self) -> int:
        """Length of the longest ranking (``orders.shape[1]``)."""
        return self.orders.shape[1]

    def __len__(self) -> int:
        return self.orders.shape[0]

    def __iter__(self):
        for row, t in zip(self.orders, self.lengths, strict=True):
            yield row[:t]

    def __getitem__(self, index):
        """One ranking, or a subset of the rankings.

        Parameters
        ----------
        index : int, slice, array of int or array of bool
            An int gives ranking ``index`` as a read-only 1-D int64 array of item ids, best
            first, without padding.  A slice, an integer array or a boolean mask gives a
            :class:`Rankings` of those rankings (same ``n_items`` and ``items``, and their
            ``groups``), its ``orders`` trimmed to the longest ranking it holds.
        """
        if isinstance(index, numbers.Integral) and not isinstance(index, (bool, np.bool_)):
            i = int(index)
            return self.orders[i, : self.lengths[i]]
        if isinstance(index, (bool, np.bool_)):
            raise IndexError("Rankings cannot be indexed by a single bool; use a boolean "
                             "array with one entry per ranking")
        if isinstance(index, tuple):
            raise IndexError("Rankings take one index (rankings), not a tuple; index "
                             "r.orders for positions")
        if not isinstance(index, slice):
            index = np.asarray(index)
            if index.dtype.kind not in "biu" and index.size:
                raise IndexError(f"Rankings can be indexed by ints, slices and int or bool "
                                 f"arrays, not by an array of dtype {index.dtype}")
            if index.dtype.kind not in "biu":
                index = index.astype(np.int64)
        groups = None if self.groups is None else self.groups[index]
        return Rankings._from_valid(self.orders[index], self.lengths[index], self.n_items,
                                    self.items, groups, self.group_name)

    def __array__(self, dtype=None, copy=None):
        """``orders`` (read-only), so that ``np.asarray(rankings)`` works."""
        if dtype is None or np.dtype(dtype) == self.orders.dtype:
            return self.orders.copy() if copy else self.orders
        if copy is False:
            raise ValueError(f"Rankings cannot be converted to {np.dtype(dtype)} without a copy")
        return self.orders.astype(dtype)

    def __reduce__(self):
        return (_rebuild, (self.orders, self.lengths, self.n_items, self.items, self.groups,
                           self.group_name))

    def __repr__(self) -> str:
        return (f"Rankings(n={len(self)}, n_items={self.n_items}, "
                f"max length={self.max_length})")

    # ---------------------------------------------------------------------------------------
    # conversions

    def to_lists(self, names: bool = True) -> list[list]:
        """The rankings as lists, best first, without padding.

        Parameters
        ----------
        names : bool, default=True
            Give item names when the rankings have ``items``; item ids (int) otherwise.

        Returns
        -------
        rankings : list of list of str or int
            Complete rankings come back without their implied last item.
        """
        rows = [row[:t] for row, t in zip(self.orders.tolist(), self.lengths.tolist(),
                                          strict=True)]
        if names and self.items is not None:
            items = self.items
            return [[items[j] for j in row] for row in rows]
        return rows

    def item_name(self, i) -> str:
        """The display name of item ``i``: ``items[i]``, or ``str(i)`` without names."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
            raise TypeError(f"an item id must be an int, got {_short_repr(i)}")
        if not 0 <= i < self.n_items:
            raise IndexError(f"item {i} is out of range; ids run from 0 to {self.n_items - 1}")
        return self.items[i] if self.items is not None else str(int(i))


def _rebuild(orders, lengths, n_items, items, groups=None, group_name=None) -> Rankings:
    """Unpickle a :class:`Rankings` (its arrays read-only again)."""
    return Rankings._from_valid(orders, lengths, n_items, items, groups, group_name)


def _check_groups(groups, group_name, n_rankings: int):
    """``(groups, group_name)`` of :class:`Rankings`, checked: one str per ranking."""
    if groups is None:
        if group_name is not None:
            raise ValueError("group_name names the groups; pass groups= too")
        return None, None
    arr = np.asarray(groups)
    if arr.ndim != 1 or len(arr) != n_rankings:
        raise DataError(f"groups must hold one entry per ranking ({n_rankings}), got shape "
                        f"{arr.shape}")
    if group_name is not None and not isinstance(group_name, str):
        raise TypeError(f"group_name must be a str, got {_short_repr(group_name)}")
    return arr.astype(str), group_name


# --------------------------------------------------------------------------------------------
# the public check


def check_rankings(X, *, n_items=None, items=None, what: str = "X") -> Rankings:
    """Validate top-t rankings and return them as :class:`Rankings`.

    Parameters
    ----------
    X : Rankings, array-like of shape (n_rankings, max_length), or list of sequences
        One ranking per row, best first, in one of these forms:

        * a :class:`Rankings` (returned as it is, or re-checked against ``n_items`` and
          ``items`` when they are given);
        * a 2-D integer array or DataFrame of item ids padded on the right with ``-1``
          (integer-valued floats are accepted, NaN is not);
        * a list or tuple of sequences of item ids (ints), ragged or padded with ``-1``;
        * a list of sequences, or a 2-D array or DataFrame, of item names (str).  Rows
          of different lengths are fine; in arrays and DataFrames, ``None``, ``""`` and NaN
          cells are padding.

        A data set holds either ids or names, never both.
    n_items : int, optional
        Number of items ``n`` (at least 2).  With ids and no ``items``, defaults to the
        largest id + 1.  Give it when some items are never ranked.
    items : sequence of str, optional
        Names of the items ``0 .. n - 1``.  With ids, ids index ``items`` and
        ``n_items = len(items)``.  With names, every name must be in ``items`` and item
        ``j`` is ``items[j]``.  With names and no ``items``, the items are the distinct
        names that occur, sorted: items that no ranking lists must then be passed
        explicitly through ``items``.
    what : str, default="X"
        How messages name the data.

    Returns
    -------
    rankings : Rankings
        Rankings listing all ``n`` items are truncated to their first ``n - 1`` (the last
        item is implied).

    Raises
    ------
    DataError
        For an empty data set; an empty ranking (``ranking 12 is empty``); an item listed
        twice (``ranking 3 lists item 'B' twice (positions 1 and 4)``); an unknown item (an
        id below -1 or ``>= n_items``, or a name not in ``items``); an item after the
        ``-1`` padding; NaN, non-integer or boolean entries; mixed names and ids; data that
        is not one ranking per row; ``n_items`` with names but no ``items``; ``n_items``
        and ``items`` that disagree.  Rankings and positions are 0-based.

    Notes
    -----
    Validation is vectorised: 10^5 rankings of length 10 take a few tens of milliseconds
    as an array and a fraction of a second as lists of names.

    When ``X`` is a :class:`Rankings` and ``n_items`` is larger than ``X.n_items``, its
    rankings are kept as they are: a ranking that listed every one of the old items was
    stored without its last item and stays a top-(n-1) ranking in the larger set.
    """
    if n_items is not None:
        n_items = _check_n_items(n_items)
    if items is not None:
        items = _check_items(items, n_items if n_items is not None else None)
        if n_items is None:
            n_items = len(items)
    if isinstance(X, Rankings):
        return _recheck(X, n_items, items, what)
    where = _Where(what, items=items)
    kind, arr = _to_padded(X, where)
    if kind == "names":
        arr, items = _names_to_ids(arr, items, n_items, where)
        n_items = len(items)
        where.items = items
        where.pad = "an empty entry"
    elif n_items is None:
        top = int(arr.max())
        if top == 0 and int(arr.min()) >= _PAD:
            raise DataError(f"{what} lists only item 0; at least 2 items are needed (pass "
                            "n_items= to count items that no ranking lists)")
        n_items = max(top + 1, 2)  # top < 0: _validate_ids reports the empty rankings
    lengths = _validate_ids(arr, n_items, where)
    return Rankings._from_valid(arr, lengths, n_items, items)


# --------------------------------------------------------------------------------------------
# helpers


def _check_n_items(n_items) -> int:
    if isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, numbers.Integral):
        raise TypeError(f"n_items must be an int, got {_short_repr(n_items)}")
    if n_items < 2:
        raise DataError(f"n_items must be at least 2, got {int(n_items)}: a ranking of a single "
                        "item says nothing")
    return int(n_items)


def _check_items(items, n_items) -> tuple[str, ...]:
    if isinstance(items, str):
        raise TypeError("items must be a sequence of names, not a single str")
    items = tuple(items)
    for j, name in enumerate(items):
        if not isinstance(name, str):
            raise TypeError(f"items must be names (str); items[{j}] is {_short_repr(name)}")
    if n_items is not None and len(items) != n_items:
        raise DataError(f"items has {len(items)} names, but n_items is {n_items}")
    if len(items) < 2:
        raise DataError(f"items has {len(items)} name(s); at least 2 items are needed")
    if len(set(items)) != len(items):
        seen = {}
        for j, name in enumerate(items):
            if name in seen:
                raise DataError(f"items lists {name!r} twice (at {seen[name]} and {j}); item "
                                "names must be distinct")
            seen[name] = j
    return items


def _recheck(X: Rankings, n_items, items, what) -> Rankings:
    """``X`` against the ``n_items`` and ``items`` the caller asks for."""
    if n_items is None:
        return X
    if items is not None and X.items is not None:
        if items == X.items:
            return X
        index = {name: j for j, name in enumerate(items)}
        unknown = [name for name in X.items if name not in index]
        if unknown:
            raise DataError(f"{what} has the item {unknown[0]!r}, which is not in items")
        mapping = np.array([index[name] for name in X.items] + [_PAD], dtype=np.int64)
        return Rankings._from_valid(mapping[X.orders], X.lengths, n_items, items, X.groups,
                                    X.group_name)
    if X.n_items > n_items:
        raise DataError(f"{what} has {X.n_items} items, more than n_items={n_items}")
    if X.items is not None and items is None and n_items != X.n_items:
        raise DataError(f"{what} has {X.n_items} named items; to use n_items={n_items}, pass "
                        "items= with the names of all of them")
    if n_items == X.n_items and (items is None or items == X.items):
        return X
    return Rankings._from_valid(X.orders, X.lengths, n_items,
                                items if items is not None else X.items, X.groups,
                                X.group_name)


def _flat_position(lengths: np.ndarray, k: int) -> tuple[int, int]:
    """(ranking, position) of entry ``k`` of the rankings laid end to end."""
    ends = np.cumsum(lengths)
    i = int(np.searchsorted(ends, k, side="right"))
    return i, int(k - (ends[i] - lengths[i]))


def _is_missing(value) -> bool:
    if value is None or (isinstance(value, str) and value == ""):
        return True
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _to_padded(X, where: _Where) -> tuple[str, np.ndarray]:
    """(``"ids"``, int64 array padded with -1) or (``"names"``, object array, None = pad)."""
    what = where.what
    if hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "to_numpy"):
        X = X.to_numpy()  # a pandas DataFrame, no import needed
    if isinstance(X, (list, tuple)):
        return _lists_to_padded(X, where)
    if isinstance(X, (str, bytes)):
        raise DataError(f"{what} is a single string; rankings must be a list of rankings, "
                        "each a sequence of items")
    arr = np.asarray(X)
    if arr.dtype.kind not in "USO":
        return "ids", _as_id_array(arr, where)
    _check_2d(arr, what)
    flat = arr.ravel().tolist()
    lengths = np.full(arr.shape[0], arr.shape[1], dtype=np.int64)
    if any(isinstance(v, str) for v in flat):
        return "names", _names_from_flat(flat, lengths, where).reshape(arr.shape)
    return "ids", _ids_from_flat(flat, lengths, where).reshape(arr.shape)


def _lists_to_padded(X, where: _Where) -> tuple[str, np.ndarray]:
    """A list of rankings (sequences, maybe ragged) as a padded array of ids or names."""
    what = where.what
    if len(X) == 0:
        raise DataError(f"{what} is empty: it holds no rankings")
    for i, row in enumerate(X):
        if isinstance(row, (str, bytes)):
            raise DataError(f"{what} must be a list of rankings, each a sequence of items, but "
                            f"{where.row(i)} is the string {_short_repr(row)}")
        if not hasattr(row, "__len__") or not hasattr(row, "__iter__"):
            hint = " (wrap a single ranking as [ranking])" if i == 0 else ""
            raise DataError(f"{what} must be a list of rankings, each a sequence of items, but "
                            f"{where.row(i)} is {_short_repr(row)}{hint}")
    lengths = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
    width = int(lengths.max())
    if width == 0:
        raise DataError(f"{where.row(0)} is empty")
    flat = list(chain.from_iterable(X))
    filled = np.arange(width) < lengths[:, None]
    if any(isinstance(v, str) for v in flat):
        out = np.full((len(X), width), None, dtype=object)
        out[filled] = _names_from_flat(flat, lengths, where)
        return "names", out
    out = np.full((len(X), width), _PAD, dtype=np.int64)
    out[filled] = _ids_from_flat(flat, lengths, where)
    return "ids", out


def _names_from_flat(flat: list, lengths: np.ndarray, where: _Where) -> np.ndarray:
    """Names laid end to end as an object array of str, None where padding.

    Raises :class:`DataError` for a number among names (mixed data) or an entry that is
    neither a name nor a missing marker (``None``, ``""``, NaN).
    """
    out = np.empty(len(flat), dtype=object)
    if set(map(type, flat)) <= {str, type(None)}:
        out[:] = [v if v else None for v in flat]
        return out
    for k, v in enumerate(flat):
        if isinstance(v, str) and v:
            out[k] = str(v)
            continue
        if _is_missing(v):
            out[k] = None
            continue
        i, j = _flat_position(lengths, k)
        first = next(m for m, u in enumerate(flat) if isinstance(u, str) and u)
        i0, j0 = _flat_position(lengths, first)
        if isinstance(v, numbers.Real):
            raise DataError(f"{where.what} mixes item names and item ids: {where.row(i)} has "
                            f"the id {_short_repr(v)} at {where.pos(j)}, while "
                            f"{where.row(i0)} has the name {flat[first]!r} at {where.pos(j0)}; "
                            "use names throughout, or ids throughout")
        raise DataError(f"{where.row(i)} has {_short_repr(v)} at {where.pos(j)}, which is "
                        "not an item (an item name or an integer id)")
    return out


def _ids_from_flat(flat: list, lengths: np.ndarray, where: _Where) -> np.ndarray:
    """Item ids laid end to end (Python or NumPy numbers) as a 1-D int64 array."""
    if set(map(type, flat)) <= {int, np.int64, np.int32, np.intp}:
        try:
            return np.array(flat, dtype=np.int64)
        except OverflowError:
            pass  # an int too large for int64: reported below
    for k, v in enumerate(flat):
        if isinstance(v, (bool, np.bool_)):
            pass
        elif isinstance(v, numbers.Integral):
            if -(2**62) < v < 2**62:
                continue
        elif isinstance(v, numbers.Real) and math.isfinite(v) and v == math.floor(v):
            continue
        i, j = _flat_position(lengths, k)
        at = f"at {where.pos(j)}"
        if isinstance(v, (bool, np.bool_)):
            raise DataError(f"{where.row(i)} has the boolean {v} {at}; item ids must be "
                            "integers")
        if _is_missing(v):
            raise DataError(f"{where.row(i)} has a missing value ({v}) {at}; pad rankings "
                            "with -1, or give them as lists of different lengths")
        if isinstance(v, numbers.Integral):
            raise DataError(f"{where.row(i)} has an unknown item {v} {at}")
        if isinstance(v, numbers.Real):
            raise DataError(f"{where.row(i)} has a non-integer item id {v!r} {at}; item ids "
                            "must be integers")
        raise DataError(f"{where.row(i)} has {_short_repr(v)} {at}, which is not an item (an "
                        "item name or an integer id)")
    return np.array([int(v) for v in flat], dtype=np.int64)


def _check_2d(arr: np.ndarray, what: str) -> None:
    if arr.ndim != 2:
        shape = "a scalar" if arr.ndim == 0 else f"a {arr.ndim}-D array of shape {arr.shape}"
        hint = " (wrap a single ranking as [ranking])" if arr.ndim == 1 else ""
        raise DataError(f"{what} must be 2-D, one ranking per row, but it is {shape}{hint}")
    if arr.shape[0] == 0:
        raise DataError(f"{what} is empty: it holds no rankings")


def _as_id_array(orders, where: _Where) -> np.ndarray:
    """A 2-D int64 array of item ids from an array of numbers (not yet range-checked)."""
    what = where.what
    arr = np.asarray(orders)
    _check_2d(arr, what)
    kind = arr.dtype.kind
    if kind == "b":
        raise DataError(f"{what} holds booleans (dtype bool); item ids must be integers")
    if kind in "iu":
        if kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            i, j = np.argwhere(arr > np.iinfo(np.int64).max)[0]
            raise DataError(f"{where.row(i)} has an unknown item {arr[i, j]} at {where.pos(j)}")
        return np.array(arr, dtype=np.int64)
    if kind == "f":
        bad = np.isnan(arr)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(f"{where.row(i)} has a missing value (NaN) at {where.pos(j)}; pad "
                            "rankings with -1, not NaN")
        bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (np.abs(arr) > 2.0**62)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(f"{where.row(i)} has a non-integer item id {float(arr[i, j])!r} at "
                            f"{where.pos(j)}; item ids must be integers")
        return arr.astype(np.int64)
    raise DataError(f"{what} has dtype {arr.dtype}; item ids must be integers")


def _names_to_ids(arr: np.ndarray, items, n_items, where: _Where):
    """(int64 ids padded with -1, items) from an object array of names padded with None."""
    present = np.not_equal(arr, None)  # elementwise on an object array
    names = arr[present]
    if items is None:
        if n_items is not None:
            raise DataError(f"{where.what} holds item names but only n_items={n_items} was "
                            "given; pass items= with the names of the items (in the order "
                            "of their ids) instead")
        items = tuple(sorted(set(names.tolist())))
        if len(items) < 2:
            shown = f" ({items[0]!r})" if items else ""
            raise DataError(f"{where.what} names {len(items)} distinct item{shown}; at least "
                            "2 items are needed (pass items= to add items no ranking lists)")
    index = {name: j for j, name in enumerate(items)}
    ids = np.fromiter((index.get(name, -2) for name in names.tolist()), dtype=np.int64,
                      count=names.size)
    out = np.full(arr.shape, _PAD, dtype=np.int64)
    out[present] = ids
    unknown = out == -2
    if unknown.any():
        i, j = np.argwhere(unknown)[0]
        shown = ", ".join(repr(n) for n in items[:8]) + (", ..." if len(items) > 8 else "")
        raise DataError(f"{where.row(i)} has an unknown item {arr[i, j]!r} at {where.pos(j)}; "
                        f"the items are {shown}")
    return out, items


def _validate_ids(arr: np.ndarray, n_items: int, where: _Where) -> np.ndarray:
    """Check an int64 array of ids padded with -1 and return the ranking lengths."""
    n_rows, width = arr.shape
    if n_rows == 0:
        raise DataError(f"{where.what} is empty: it holds no rankings")
    if width == 0:
        raise DataError(f"{where.row(0)} is empty")
    pad = arr == _PAD
    bad = (arr < _PAD) | (arr >= n_items)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        v = int(arr[i, j])
        if where.id_base is not None:
            rule = (f"ids run from {where.id_base} to {n_items - 1 + where.id_base} "
                    f"(n_items={n_items})")
        elif where.items is not None:
            rule = f"ids index the {n_items} items, 0 to {n_items - 1}"
        else:
            rule = f"ids run from 0 to {n_items - 1} (n_items={n_items}) and -1 pads"
        raise DataError(f"{where.row(i)} has an unknown item {where.item(v)} at "
                        f"{where.pos(j)}; {rule}")
    after = np.logical_or.accumulate(pad, axis=1) & ~pad
    if after.any():
        i, j = np.argwhere(after)[0]
        raise DataError(f"{where.row(i)} has an item after {where.pad} at {where.pos(j)}")
    lengths = width - np.count_nonzero(pad, axis=1)
    empty = lengths == 0
    if empty.any():
        raise DataError(f"{where.row(int(np.flatnonzero(empty)[0]))} is empty")
    if width > 1:
        s = np.sort(arr, axis=1)
        dup = (s[:, 1:] == s[:, :-1]) & (s[:, 1:] != _PAD)
        rows = dup.any(axis=1)
        if rows.any():
            i = int(np.flatnonzero(rows)[0])
            v = int(s[i, 1:][dup[i]][0])
            j1, j2 = np.flatnonzero(arr[i] == v)[:2]
            raise DataError(f"{where.row(i)} lists item {where.item(v)} twice "
                            f"({where.pos_pair(j1, j2)})")
    return lengths.astype(np.int64)
