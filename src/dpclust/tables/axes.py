"""A table's real columns in their principal axes: the working form of a diagonal Gaussian
whose clusters share the data's orientation.

A diagonal Gaussian cluster can only lie along the columns.  Where the columns grow
together (a body's measures all grow with its size), it cuts the one elongated cloud into
slices, in many ways of about equal fit, and its chains do not meet.  Turned to the data's
principal axes the columns are uncorrelated over the whole table, and a diagonal cluster
there is, in the columns as given, a Gaussian with the covariance
``D^(1/2) R diag(s^2) R' D^(1/2)``: its own scales ``s^2`` along the axes ``R`` that every
cluster shares (the "equal orientation" models of Celeux & Govaert 1995, with the
orientation fixed at the data's).

The map is ``z = ((x - m) / d) R``, ``m`` and ``d`` the columns' means and deviations and
``R`` the eigenvectors of their correlation matrix (every axis kept).  It is linear with a
constant Jacobian, so a density of ``z`` is one of ``x`` times ``prod_j 1 / d_j``
(:attr:`PrincipalAxes.log_jacobian`), and the partition posterior is the same in either.

References
----------
Celeux, G. & Govaert, G. (1995). Gaussian parsimonious clustering models. Pattern
    Recognition 28(5), 781-793.
Jolliffe, I. T. (2002). Principal Component Analysis, 2nd ed. Springer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ..utils.pca import flip_signs
from .data import TableData


#: how many rows a column the automatic choice asks of complete real columns before it turns
#: them to their principal axes (:func:`takes_axes`): the correlation matrix the axes come
#: from has ``d (d - 1) / 2`` entries, and with fewer rows its smallest eigenvalues come out
#: too small, which a held-out row pays for (standard normal data, 60 columns: -149 nats a
#: row at 70 rows against -86 for the columns as given)
AXES_ROWS_PER_COLUMN = 3


def takes_axes(n_rows: int, n_columns: int) -> bool:
    """Whether the automatic choice (``family="auto"``, ``axes="auto"``) fits diagonal
    clusters to ``n_columns`` complete real columns of ``n_rows`` rows in their principal
    axes: from 2 to 150 columns, with fewer rows than the columns squared (where a full
    covariance is not chosen) but at least :data:`AXES_ROWS_PER_COLUMN` a column."""
    return (2 <= n_columns <= 150
            and AXES_ROWS_PER_COLUMN * n_columns <= n_rows < n_columns ** 2)


class PrincipalAxes(NamedTuple):
    """The map of the real columns to their principal axes, found on the training rows.

    Attributes
    ----------
    mean, sd : ndarray of shape (d,)
        The columns' means and standard deviations (a constant column: deviation 1).
    rotation : ndarray of shape (d, d)
        The axes as columns: eigenvectors of the columns' correlation matrix, by decreasing
        variance, each signed so that its largest loading is positive.
    """

    mean: np.ndarray
    sd: np.ndarray
    rotation: np.ndarray

    @classmethod
    def of(cls, real: np.ndarray, what: str = "X") -> "PrincipalAxes":
        """The axes of the rows ``real`` (n, d): complete rows of at least two columns."""
        if real.ndim != 2 or real.shape[1] < 2:
            raise ValueError(f"{what}: principal axes need at least two real columns")
        if np.isnan(real).any():
            raise ValueError(f"{what} has holes in its real columns: principal axes "
                             "(axes='principal', --axes principal) need complete rows; "
                             "without them the holes are left out exactly")
        mean = real.mean(axis=0)
        sd = real.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        z = (real - mean) / sd
        # the correlation matrix's eigenvectors: every axis, with fewer rows than columns too
        variances, vectors = np.linalg.eigh(z.T @ z / len(z))
        rotation = flip_signs(vectors[:, np.argsort(variances)[::-1]].T).T
        return cls(mean, sd, np.ascontiguousarray(rotation))

    @property
    def log_jacobian(self) -> float:
        """``log |dz / dx|``: what a log density of ``z`` gains to be one of ``x``."""
        return -float(np.log(self.sd).sum())

    def forward(self, real: np.ndarray) -> np.ndarray:
        """Rows in the columns as given -> rows in the principal axes."""
        return np.ascontiguousarray(((real - self.mean) / self.sd) @ self.rotation)

    def backward(self, z: np.ndarray) -> np.ndarray:
        """Rows (or cluster means) in the principal axes -> in the columns as given."""
        return self.mean + self.sd * (z @ self.rotation.T)

    def covariances(self, variances: np.ndarray) -> np.ndarray:
        """Each cluster's covariance in the columns as given, shape (K, d, d), from its
        variances along the axes, shape (K, d)."""
        a = self.sd[:, None] * self.rotation
        return np.einsum("ji,ki,li->kjl", a, variances, a)

    def column_variances(self, variances: np.ndarray) -> np.ndarray:
        """The diagonals of :meth:`covariances`, shape (K, d)."""
        return variances @ (self.sd[:, None] * self.rotation).T ** 2


def turned(data: TableData, axes: PrincipalAxes) -> TableData:
    """``data`` (its real columns as given) with its real columns in ``axes``; its schema
    keeps the axes, so that the family resolved on it maps new rows the same way."""
    return replace(data, real=axes.forward(data.real), schema=replace(data.schema, axes=axes))


def as_given(data: TableData) -> TableData:
    """``data`` in working form with its real columns back as the user gave them (what the
    report's figures read); ``data`` itself when its schema has no axes."""
    axes = data.schema.axes
    if axes is None:
        return data
    return replace(data, real=axes.backward(data.real), schema=replace(data.schema, axes=None))
