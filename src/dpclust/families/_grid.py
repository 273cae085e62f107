"""Which columns of a table of numbers are recorded to a grid, and how wide its cells are:
what ``NormalInverseWishart(rounding=...)`` reads (:mod:`dpclust.families.gaussian_rounded`)."""

from __future__ import annotations

import numpy as np

#: the finest grid ``rounding="auto"`` looks for: 10^-MAX_DECIMALS
MAX_DECIMALS = 6
#: ``rounding="auto"`` takes a column as rounded when at most this share of its values are
#: distinct (ties are the rule, not the exception)
MAX_DISTINCT_SHARE = 0.5


def grid_widths(X) -> np.ndarray:
    """Each column's recording grid as ``rounding="auto"`` reads it: ``10^-p`` for the
    smallest ``p`` in ``0 .. MAX_DECIMALS`` of which every value is a multiple, when at
    most :data:`MAX_DISTINCT_SHARE` of the column's values are distinct; 0 (recorded
    exactly) otherwise.  Shape (n_features,)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    out = np.zeros(d)
    for j in range(d):
        v = X[:, j]
        if n < 2 or len(np.unique(v)) > MAX_DISTINCT_SHARE * n:
            continue
        for p in range(MAX_DECIMALS + 1):
            s = v * 10.0 ** p
            if np.all(np.abs(s - np.rint(s)) <= 1e-6):
                out[j] = 10.0 ** -p
                break
    return out


def check_widths(widths, d: int) -> np.ndarray:
    """``rounding`` given as a width or one per column, checked: shape (d,), finite, >= 0."""
    w = np.broadcast_to(np.asarray(widths, dtype=np.float64), (d,)).copy() \
        if np.ndim(widths) == 0 else np.asarray(widths, dtype=np.float64)
    if w.shape != (d,):
        raise ValueError(f"rounding has shape {w.shape}, expected a width or ({d},) for {d} "
                         "features")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("rounding widths must be finite and >= 0 (0: a column recorded "
                         "exactly)")
    return w


__all__ = ["grid_widths", "check_widths", "MAX_DECIMALS", "MAX_DISTINCT_SHARE"]
