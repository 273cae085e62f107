"""The working form of a table: real, category and count columns with holes, and row weights.

A :class:`TableData` holds a table as the table families read it (see
:mod:`dpclust.families.table`): one float array of the real columns (NaN where a cell is
missing), one integer array of the yes/no and category columns (the level's index, -1 where
missing), one float array of the count columns (NaN where missing) and the rows' weights.
Its :class:`Schema` says which column of the user's table went where, and how each was read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

#: the kinds of column, and the family each column follows within a cluster
KINDS = {
    "gaussian": "real numbers: Normal with a Normal-Gamma prior (mean and variance per cluster)",
    "bernoulli": "yes/no: Bernoulli with a Beta prior (share of yes per cluster)",
    "categorical": "categories: categorical with a Dirichlet prior (shares per cluster)",
    "poisson": "counts: Poisson with a Gamma prior (rate per cluster)",
}


#: the names R and pandas give the row names they write as a column
ROW_NAMES = frozenset({"rownames", "row.names", "row_names", "unnamed: 0"})


class Column(NamedTuple):
    """One column of the user's table as the model reads it.

    ``name`` its heading, ``kind`` one of :data:`KINDS`, ``levels`` the labels of its
    categories in the order of their codes (yes/no columns: ``(no, yes)``; None for real and
    count columns), ``why`` how the kind was chosen (``"numbers (float64)"``, ``"given"`` when
    the user gave it, ...), ``origin`` for a column of dates read as real numbers: the ISO
    date its days count from (None for other columns).
    """

    name: str
    kind: str
    levels: tuple | None = None
    why: str = ""
    origin: str | None = None


@dataclass(frozen=True)
class Schema:
    """The columns of a table in the order of the user's table, the columns left out with
    the reason, and the cleaning rules applied with the number of cells each changed."""

    columns: tuple = ()
    dropped: tuple = ()  # (name, reason) pairs
    rules: dict = field(default_factory=dict)  # rule -> cells
    #: the column of row counts of a frequency table (:mod:`dpclust.tables.frequency`),
    #: one of ``dropped``, or None
    weights: str | None = None
    #: the real columns' principal axes (:class:`~dpclust.tables.axes.PrincipalAxes`) when
    #: the working form holds them turned (a family's ``axes="principal"``), or None
    axes: object = None

    def of_kind(self, *kinds) -> list[Column]:
        """The columns of the given kinds, in table order (the order of their arrays)."""
        return [c for c in self.columns if c.kind in kinds]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def real(self) -> list[Column]:
        return self.of_kind("gaussian")

    @property
    def coded(self) -> list[Column]:
        """Yes/no and category columns: the columns of :attr:`TableData.code`."""
        return self.of_kind("bernoulli", "categorical")

    @property
    def counts(self) -> list[Column]:
        return self.of_kind("poisson")

    @property
    def n_levels(self) -> np.ndarray:
        """Number of levels of each coded column."""
        return np.array([len(c.levels) for c in self.coded], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """Where each coded column's levels start among all their levels, shape (dc + 1,)."""
        return np.concatenate([[0], np.cumsum(self.n_levels)]).astype(np.int64)

    def same_columns(self, other: "Schema") -> bool:
        return [tuple(c[:3]) for c in self.columns] == [tuple(c[:3]) for c in other.columns]


@dataclass(frozen=True, eq=False)
class TableData:
    """A table in working form (see the module's docstring).

    Attributes
    ----------
    real : ndarray of shape (n, dg)
        Real columns, NaN where missing.
    code : ndarray of shape (n, dc), int64
        Yes/no and category columns: the index of the level, -1 where missing.
    count : ndarray of shape (n, dp)
        Count columns (non-negative whole numbers), NaN where missing.
    weight : ndarray of shape (n,)
        Each row's weight, the power on its likelihood (1: an ordinary row).
    schema : Schema
        What the columns are.
    """

    real: np.ndarray
    code: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    schema: Schema

    @property
    def shape(self) -> tuple[int, int]:
        return (self.real.shape[0], len(self.schema.columns))

    def __len__(self) -> int:
        return self.real.shape[0]

    def __getitem__(self, rows) -> "TableData":
        """The rows ``rows`` (an index array, a slice or a mask)."""
        return TableData(self.real[rows], self.code[rows], self.count[rows], self.weight[rows],
                         self.schema)

    @staticmethod
    def stack(parts: list) -> "TableData":
        """The rows of several tables with the same schema, one after the other."""
        return TableData(*(np.concatenate([getattr(p, f) for p in parts])
                           for f in ("real", "code", "count", "weight")), parts[0].schema)

    def with_weight(self, weight) -> "TableData":
        return replace(self, weight=np.asarray(weight, dtype=np.float64))

    @cached_property
    def log_fact(self) -> np.ndarray:
        """``sum_j log x_ij!`` over each row's observed count cells (computed once per
        table: the statistics read it every iteration)."""
        return np.where(np.isnan(self.count), 0.0, gammaln(self.count + 1.0)).sum(axis=1)

    def __getstate__(self) -> dict:
        # the caches of :meth:`centred` and :meth:`level_matrix` stay behind (a chain
        # process builds its own): they are several times the table's size
        return {k: v for k, v in self.__dict__.items() if k not in ("_centred", "_levels")}

    def centred(self, m0) -> tuple:
        """``(x, x2, seen)`` of the real columns about ``m0``: ``x = real - m0`` with 0 in
        the holes, its square, and the observed cells as 0/1 floats (None when no cell is
        missing).  Kept for the last ``m0`` asked: samplers that score one component at a
        time over the same rows (the coarsened sampler) read them every move."""
        m0 = np.asarray(m0, dtype=np.float64)
        key, value = self.__dict__.get("_centred", (None, None))
        if key is None or not np.array_equal(key, m0):
            holes = np.isnan(self.real)
            seen = (~holes).astype(np.float64) if holes.any() else None
            x = np.where(holes, 0.0, self.real - m0)
            value = (x, x * x, seen)
            self.__dict__["_centred"] = (m0.copy(), value)
        return value

    def level_matrix(self, offsets) -> sp.csr_matrix:
        """The coded cells as a sparse 0/1 matrix, rows x levels: a 1 at the level each
        observed cell holds (column ``j``'s levels start at ``offsets[j]``), nothing for a
        hole.  A product with it sums a per-level quantity over each row's cells (a row's
        log-probabilities, a component's level counts).  Kept for the last ``offsets``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        key, value = self.__dict__.get("_levels", (None, None))
        if key is None or not np.array_equal(key, offsets):
            seen = self.code >= 0
            columns = (self.code + offsets[:-1][None, :])[seen]  # row-major: row by row
            indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
            value = sp.csr_matrix((np.ones(len(columns)), columns, indptr),
                                  shape=(len(self), int(offsets[-1])))
            self.__dict__["_levels"] = (offsets.copy(), value)
        return value

    def missing(self) -> np.ndarray:
        """Whether each cell is missing, shape (n, n_columns), in the schema's column order."""
        n = len(self)
        out = np.zeros((n, len(self.schema.columns)), dtype=bool)
        where = {c.name: j for j, c in enumerate(self.schema.columns)}
        for cols, hole in ((self.schema.real, np.isnan(self.real)),
                           (self.schema.coded, self.code < 0),
                           (self.schema.counts, np.isnan(self.count))):
            for j, c in enumerate(cols):
                out[:, where[c.name]] = hole[:, j]
        return out

    @property
    def n_missing(self) -> int:
        return int(np.isnan(self.real).sum() + (self.code < 0).sum() + np.isnan(self.count).sum())
