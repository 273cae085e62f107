"""Frequency tables: one row per combination of levels and a column counting its rows.

R writes a contingency table as a data frame (``as.data.frame(table)``) with a column of
levels per variable and a last column ``Freq``: the number of people (cases, units) with
that combination.  ``vcd``'s and ``vcdExtra``'s tables, ``HairEyeColor``, ``Titanic`` and
``UCBAdmissions`` come so.  Clustered as they stand, such a table's rows are its cells,
each counted once, and ``Freq`` a feature; what is meant is the people, each cell's
combination ``Freq`` times.  So a column is read as row counts, and not modelled, when

* it is named ``Freq`` (any case), R's name for it, and the user gave it no kind;
* it holds whole numbers >= 0 on every row;
* every other column (but R's and pandas' row names) holds levels or whole numbers: text,
  categories, booleans, codes, counts (``vcdExtra``'s ``Geissler``: families by their
  numbers of boys and girls), not measurements with decimals;
* and no combination of those levels appears on two rows.

The rows then weigh as many rows as their count (``sample_weight`` with
``sample_weight_mode="repeat"``: a DPMixture fit of the people), and the other columns'
kinds are read counting each row that many times (three levels over 40 cells of 600
people are levels, not numbers).  Giving the column a kind (``kinds={"Freq": "poisson"}``,
``--column-type Freq=poisson``) or weights of one's own reads it as a feature.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .data import ROW_NAMES

#: the name R gives the counts of a table written as a data frame, whatever its case
FREQUENCY_NAME = "freq"
#: why the column is not modelled (the schema's ``dropped``)
FREQUENCY_REASON = ("row counts of a frequency table (each row a distinct combination of "
                    "the other columns' levels): each row weighs as many rows")


def frequency_column(df: pd.DataFrame, names: list, kinds: dict) \
        -> tuple[str, np.ndarray] | None:
    """The name of the column of row counts of the frequency table ``df`` (its columns
    ``names`` as text, the user's ``kinds``) and its counts, or None when ``df`` is not
    one (the module's rules)."""
    found = [n for n in names if n.strip().lower() == FREQUENCY_NAME and n not in kinds]
    if len(found) != 1:
        return None
    lookup = dict(zip(names, df.columns))
    counts = _numbers(df[lookup[found[0]]])
    if (counts is None or np.isnan(counts).any() or np.any(counts < 0)
            or np.any(counts != np.round(counts)) or counts.sum() < 1):
        return None
    others = [n for n in names if n != found[0] and n.strip().lower() not in ROW_NAMES
              and kinds.get(n) != "drop"]
    if not others:
        return None
    for name in others:
        numbers = _numbers(df[lookup[name]])
        present = numbers[~np.isnan(numbers)] if numbers is not None else None
        if present is not None and np.any(present != np.round(present)):
            return None  # a measurement: not a table's level
    if df[[lookup[n] for n in others]].duplicated().any():
        return None
    return found[0], counts


def _numbers(values: pd.Series) -> np.ndarray | None:
    """A column of numbers as floats (NaN in its holes), or None for text, categories
    and booleans (a frequency table's levels)."""
    if (isinstance(values.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(values.dtype)
            or not pd.api.types.is_numeric_dtype(values.dtype)):
        return None
    out = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    return None if np.isinf(out).any() else out


def row_counts(X, schema) -> np.ndarray | None:
    """The row counts of the table ``X`` when ``schema`` (its :class:`Schema`, or None)
    reads it as a frequency table, else None."""
    name = getattr(schema, "weights", None)
    if name is None or not isinstance(X, pd.DataFrame):
        return None
    column = {str(c): c for c in X.columns}[name]
    return pd.to_numeric(X[column], errors="coerce").to_numpy(dtype=np.float64)
