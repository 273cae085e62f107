"""The data of a run as the loaders return them (:class:`LoadedData`), with what the summary
says of the ddCRP's positions: shared by the loaders of :mod:`dpclust.cli.data` and
:mod:`dpclust.cli.tables`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..utils.checks import DataError
from .config import RunConfig


@dataclass
class LoadedData:
    """Data ready for the estimator, with what the summary says about them.

    ``positions`` (float64 or datetime64, shape (n_samples,)) and ``distances`` ((n, n),
    dense or sparse) are the ddCRP's, when given.  ``X`` is a
    :class:`~dpclust.rankings.Rankings` for a family of rankings (``family="mallows"``);
    ``warnings`` are what the
    loader warned about (shown on stderr and in the summary).  A table of mixed columns
    (:mod:`dpclust.cli.tables`) also has ``family``, the family to fit (the one ``auto``
    picked), ``schema``, the kind of each column (:class:`dpclust.tables.Schema`), ``rules``,
    the cleaning rules of its reading with their counts, ``kinds``, the ``--column-type``
    overrides by column name, and ``weights``, shape (n_samples,), the rows' weights
    (``--weights``).  ``rows`` (0-based data rows of the file, increasing) are the rows of
    ``X`` where rows with no value to cluster on were left out, ``n_rows`` the file's data
    rows: labels.csv gives the left-out rows empty labels.
    """

    X: object
    truth: np.ndarray | None
    info: dict
    vocabulary: list | None = None
    positions: np.ndarray | None = None
    distances: object = None
    warnings: list = field(default_factory=list)
    family: str | None = None
    schema: object = None
    rules: dict = field(default_factory=dict)
    kinds: dict | None = None
    weights: np.ndarray | None = None
    rows: np.ndarray | None = None
    n_rows: int | None = None


def _positions_info(config: RunConfig, positions: np.ndarray) -> dict:
    """What the summary says about the positions; checks their order for ``--sequential``."""
    dates = positions.dtype.kind == "M"
    info = {"positions_column": config.positions,
            "positions": "dates and times (distances in days)" if dates else "numbers",
            "positions_range": [_position_text(positions.min()),
                                _position_text(positions.max())]}
    if config.sequential:
        back = np.flatnonzero(positions[1:] < positions[:-1])
        if back.size:
            i = int(back[0]) + 1
            raise DataError(
                f"--sequential links each row only to itself or to earlier rows, so the "
                f"positions column {config.positions!r} must be in non-decreasing order, but "
                f"data row {i + 1} ({_position_text(positions[i])}) comes before data row "
                f"{i} ({_position_text(positions[i - 1])}); sort the file by that column")
    return info


def _position_text(value):
    """A position for JSON and messages: a float, or an ISO 8601 date and time."""
    if isinstance(value, np.datetime64):
        return str(value)
    return float(value)
