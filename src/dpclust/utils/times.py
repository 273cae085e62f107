"""Dates and times read from a column: ISO 8601 text, ``datetime``/``date`` objects and
``numpy.datetime64`` values, as naive UTC datetimes (the distance dependent CRP's positions
and a table's date columns)."""

from __future__ import annotations

import datetime

import numpy as np

#: a day in seconds: the unit a date column of a table is read in
DAY_SECONDS = 86_400.0


def as_datetime(v) -> datetime.datetime | None:
    """A naive UTC ``datetime`` from a datetime, date, datetime64 or ISO 8601 string
    (``2024-03-01``, ``2024-03-01 12:30``, ``2024-03-01T12:30:00+02:00``), else None."""
    if isinstance(v, np.datetime64):
        return None if np.isnat(v) else v.astype("datetime64[s]").item()
    if isinstance(v, str):
        try:
            v = datetime.datetime.fromisoformat(v.strip())
        except ValueError:
            return None
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.UTC).replace(tzinfo=None)
        return v
    if isinstance(v, datetime.date):
        return datetime.datetime(v.year, v.month, v.day)
    return None
