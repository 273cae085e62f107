"""Input validation at the edges of the package (estimators, families, loaders, CLI).

Every check raises :class:`DataError` (a :class:`ValueError`) with one message that names the
problem -- the offending entry, its position, the expected shape -- so that bad input never
surfaces as a traceback from deep inside NumPy or a numba kernel.  The CLI catches
:class:`DataError` and prints its message.

Positions in messages about in-memory arrays are 0-based (``row 3, column 0`` is ``X[3, 0]``).
Nothing here is called inside hot loops.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DataError",
    "check_dense",
    "check_counts",
    "check_labels",
    "check_random_state",
    "check_positive",
    "check_int",
]


class DataError(ValueError):
    """Invalid input data: wrong shape, non-numeric, non-finite, negative counts, bad file.

    The message is meant for the end user and names the problem and where it is.
    """


# --------------------------------------------------------------------------------------------
# helpers


class CellError(DataError):
    """A cell that a table of numbers cannot hold: a hole, text, NaN or an infinity (a table
    family, which models holes and text, may read it; the command line says so)."""


class NonNumericDataError(DataError, TypeError):
    """An entry that is not a number at all (a dict, a list, ...): a DataError and a TypeError."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _short_repr(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _column_label(j: int, columns) -> str:
    if columns is not None:
        return f"column {j} ({columns[j]!r})"
    return f"column {j}"


def _is_real_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (str, bytes))


def _to_ndarray(X, what: str) -> tuple[np.ndarray, list | None]:
    """``np.asarray`` with a clear error for ragged input; also return column names if any."""
    columns = None
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a pandas DataFrame, no import needed
        columns = [c for c in X.columns]
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise DataError(
                f"{what} could not be converted to an array: its rows have different lengths."
            ) from None
        raise DataError(f"{what} could not be converted to an array ({exc}).") from None
    if columns is not None and (arr.ndim != 2 or len(columns) != arr.shape[1]):
        columns = None
    return arr, columns


def _as_numeric(arr: np.ndarray, what: str, columns) -> np.ndarray:
    """Return the 2-D ``arr`` with a numeric (bool/int/float) dtype or raise :class:`DataError`."""
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr
    if kind == "c":
        raise DataError(f"Complex data not supported: {what} has dtype {arr.dtype}; "
                        "real numbers are required.")
    if kind in "mM":
        raise DataError(
            f"{what} has {arr.dtype} (date/time) dtype; convert it to numbers first."
        )
    if kind in "US":
        for (i, j), cell in np.ndenumerate(arr):
            try:
                float(cell)
            except (TypeError, ValueError):
                raise DataError(
                    f"{what} contains strings (dtype {arr.dtype}); the first non-numeric entry "
                    f"is {_short_repr(cell.item())} at row {i}, {_column_label(j, columns)}."
                ) from None
        raise DataError(
            f"{what} holds numbers stored as strings (dtype {arr.dtype}); "
            "convert them with X.astype(float) first."
        )
    if kind == "O":
        for (i, j), cell in np.ndenumerate(arr):
            if _is_real_scalar(cell):
                continue
            if cell is None or type(cell).__name__ in ("NAType", "NaTType"):
                problem = f"a missing value ({cell})"
            elif isinstance(cell, (str, bytes)):
                problem = f"a non-numeric entry {_short_repr(cell)}"
            else:
                raise NonNumericDataError(
                    f"{what} contains a non-numeric entry {_short_repr(cell)} at row {i}, "
                    f"{_column_label(j, columns)}: float() argument must be a string or a real "
                    f"number, not '{type(cell).__name__}'.")
            raise DataError(
                f"{what} contains {problem} at row {i}, {_column_label(j, columns)}; "
                "all entries must be numbers."
            )
        return arr.astype(np.float64)
    raise DataError(f"{what} has unsupported dtype {arr.dtype}; numeric data is required.")


def _check_ndim(arr: np.ndarray, what: str) -> None:
    if arr.ndim == 2:
        return
    if arr.ndim == 0:
        raise DataError(
            f"Expected a 2-D array for {what}, got a scalar ({_short_repr(arr.item())})."
        )
    if arr.ndim == 1:
        raise DataError(
            f"Expected a 2-D array for {what}, got a 1-D array of length {arr.shape[0]} instead. "
            "Reshape your data either using X.reshape(-1, 1) if it has a single feature or "
            "X.reshape(1, -1) if it contains a single sample."
        )
    raise DataError(
        f"Expected a 2-D array for {what}, got a {arr.ndim}-D array of shape {arr.shape}."
    )


def _check_shape(shape, what: str, min_samples: int, n_features) -> None:
    n_samples, n_cols = shape
    if n_samples < min_samples:
        raise DataError(
            f"{what} has {_plural(n_samples, 'sample')}, but at least {min_samples} "
            f"{'is' if min_samples == 1 else 'are'} required."
        )
    if n_cols < 1:
        raise DataError(f"{what} has 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 "
                        "is required.")
    if n_features is not None and n_cols != n_features:
        raise DataError(
            f"{what} has {_plural(n_cols, 'feature')}, but the model was fitted with "
            f"{n_features}."
        )


def _check_finite(arr: np.ndarray, what: str, columns=None) -> None:
    finite = np.isfinite(arr)
    if finite.all():
        return
    n_nan = int(np.count_nonzero(np.isnan(arr)))
    n_inf = int(arr.size - np.count_nonzero(finite) - n_nan)
    parts = []
    if n_nan:
        parts.append(f"{n_nan} NaN")
    if n_inf:
        parts.append(f"{n_inf} infinite")
    i, j = np.argwhere(~finite)[0]
    raise CellError(
        f"{what} contains {' and '.join(parts)} "
        f"{'entry' if n_nan + n_inf == 1 else 'entries'} (the first, {float(arr[i, j])}, is at "
        f"row {i}, {_column_label(j, columns)}); remove or impute them first."
    )


# --------------------------------------------------------------------------------------------
# public checks


def check_dense(X, *, what: str = "X", min_samples: int = 1, n_features: int | None = None):
    """Validate a dense data matrix and return it as a C-contiguous float64 array.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Lists of lists, NumPy arrays and pandas DataFrames are accepted.  Scipy sparse
        matrices are rejected (use a count-data family for sparse counts).
    what : str, default="X"
        Name of the input, used as the subject of error messages.
    min_samples : int, default=1
        Smallest acceptable number of rows.
    n_features : int or None, default=None
        If given, the required number of columns (the number the model was fitted with).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        C-contiguous.  The input itself is returned when it already is such an array (no
        copy), so callers must not modify it in place.

    Raises
    ------
    DataError
        If ``X`` is sparse, not 2-D, not numeric, has NaN or infinite entries (the message
        gives their count and the first position, 0-based), has fewer than ``min_samples``
        rows, no columns, or a number of columns other than ``n_features``.
    """
    if sp.issparse(X):
        raise DataError(
            f"{what} is a scipy sparse matrix, but dense data is required here. Use a "
            "count-data model for sparse counts, or convert with X.toarray() if it fits in memory."
        )
    arr, columns = _to_ndarray(X, what)
    _check_ndim(arr, what)
    arr = _as_numeric(arr, what, columns)
    _check_shape(arr.shape, what, min_samples, n_features)
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    _check_finite(arr, what, columns)
    return arr


#: the largest magnitude, and the smallest nonzero spread of a column, that the Gaussian
#: family's sums of squares and products hold without overflow or underflow (their squares,
#: summed over up to 10^9 rows, stay far inside float64's 1e-308 .. 1e308)
MAX_MAGNITUDE = 1e100
MIN_SPREAD = 1e-100


def check_scale(X: np.ndarray, *, what: str = "X", names=None) -> None:
    """Refuse data whose scale the Gaussian statistics cannot hold in float64 (NaN, a
    missing cell of a table, is left out; ``names``: the columns' names, for the message).

    Raises
    ------
    DataError
        If an entry's magnitude exceeds :data:`MAX_MAGNITUDE` (its square would overflow the
        sums of squares) or a column varies, but by less than :data:`MIN_SPREAD` (its
        variance would underflow to zero); the message names the entry or column and says
        to rescale.
    """
    if X.size == 0:
        return
    column = (lambda j: f"column {j}") if names is None else (lambda j: repr(names[j]))
    with np.errstate(invalid="ignore"):
        big = np.abs(X) > MAX_MAGNITUDE
    if big.any():
        i, j = np.argwhere(big)[0]
        raise DataError(
            f"{what} has values as large as {float(np.nanmax(np.abs(X))):.3g} (the first at "
            f"row {i}, {column(j)}): their squares overflow the Gaussian model's statistics. "
            "Rescale the data (for example standardise each column, or change its units) "
            "and fit again.")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with every cell missing
        spread = np.nanmax(X, axis=0) - np.nanmin(X, axis=0)
    tiny = (spread > 0) & (spread < MIN_SPREAD)
    if tiny.any():
        j = int(np.flatnonzero(tiny)[0])
        raise DataError(
            f"{what}'s {column(j)} varies by only {float(spread[j]):.3g}: its variance "
            "underflows in the Gaussian model's statistics. Rescale the data (for example "
            "standardise each column, or change its units) and fit again.")


def _count_phrase(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _check_count_values(data: np.ndarray, what: str, position, *, finite: bool) -> None:
    """Raise if a stored count is non-finite, negative or fractional; ``position(k)`` -> (i, j)."""
    if finite:
        bad = ~np.isfinite(data)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            i, j = position(k)
            n_bad = _count_phrase(
                int(bad.sum()), "NaN or infinite entry", "NaN or infinite entries"
            )
            raise DataError(
                f"{what} contains {n_bad}"
                f" (the first, {float(data[k])}, is at row {i}, column {j}); counts must be finite."
            )
    bad = data < 0
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        i, j = position(k)
        raise DataError(
            f"{what} contains {_count_phrase(int(bad.sum()), 'negative entry', 'negative entries')}"
            f" (the first, {data[k]:g}, is at row {i}, column {j}); counts must be >= 0."
        )
    if data.dtype.kind == "f":
        bad = data != np.floor(data)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            i, j = position(k)
            raise DataError(
                f"{what} contains a non-integer count {float(data[k])!r} at row {i}, column {j}; "
                "counts must be whole numbers."
            )


def check_counts(X, *, what: str = "X", min_samples: int = 1, n_features: int | None = None):
    """Validate count data (documents x vocabulary) and return a canonical CSR matrix.

    Parameters
    ----------
    X : array-like or scipy sparse matrix/array of shape (n_samples, n_features)
        Entry ``(d, w)`` is how often word ``w`` occurs in document ``d``.  Sparse input is
        never densified.  Rows that sum to zero (empty documents) are allowed.
    what : str, default="X"
        Name of the input, used as the subject of error messages.
    min_samples : int, default=1
        Smallest acceptable number of rows.
    n_features : int or None, default=None
        If given, the required number of columns (the vocabulary size of the fitted model).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), dtype float64
        Canonical: sorted indices, no duplicate entries, no explicit zeros.  A new matrix
        whenever the input had to change; the input is never modified.

    Raises
    ------
    DataError
        If ``X`` is not 2-D or not numeric, or an entry is NaN, infinite, negative or not a
        whole number (the message gives the first such entry and its 0-based position), or
        the shape is wrong (see :func:`check_dense`).
    """
    if not sp.issparse(X):
        arr = check_dense(X, what=what, min_samples=min_samples, n_features=n_features)
        _check_count_values(arr.ravel(), what, lambda k: divmod(k, arr.shape[1]), finite=True)
        return sp.csr_matrix(arr)  # canonical: sorted, no duplicates, zeros dropped

    if X.ndim != 2:
        raise DataError(f"Expected a 2-D sparse matrix for {what}, got a {X.ndim}-D one.")
    kind = X.dtype.kind
    if kind not in "biuf":
        raise DataError(f"{what} has dtype {X.dtype}; counts must be real numbers.")
    _check_shape(X.shape, what, min_samples, n_features)

    csr = X.tocsr()  # may be X itself: copy before any in-place change
    if not isinstance(csr, sp.csr_matrix):
        csr = sp.csr_matrix(csr)
    fresh = csr.dtype != np.float64
    if fresh:
        csr = csr.astype(np.float64)  # astype copies
    if not csr.has_canonical_format:
        if not fresh:
            csr, fresh = csr.copy(), True
        csr.sum_duplicates()  # also sorts the indices
    _check_count_values(
        csr.data,
        what,
        lambda k: (int(np.searchsorted(csr.indptr, k, side="right") - 1), int(csr.indices[k])),
        finite=kind == "f",
    )
    if not csr.data.all():
        if not fresh:
            csr = csr.copy()
        csr.eliminate_zeros()
    return csr


def check_labels(labels, n_samples: int, *, what: str = "labels") -> np.ndarray:
    """Validate cluster labels and return them as an int64 array.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Non-negative integer labels.  Floats are accepted when they are whole numbers.
    n_samples : int
        Required length.
    what : str, default="labels"
        Name of the input, used in error messages.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype int64

    Raises
    ------
    DataError
        If ``labels`` is not 1-D, has the wrong length, or contains a non-integer, NaN or
        negative value.
    """
    if sp.issparse(labels):
        raise DataError(f"{what} must be a 1-D array, not a sparse matrix.")
    arr, _ = _to_ndarray(labels, what)
    if arr.ndim != 1:
        raise DataError(f"{what} must be a 1-D array of length {n_samples}, got shape {arr.shape}.")
    if arr.shape[0] != n_samples:
        raise DataError(f"{what} has length {arr.shape[0]}, but there are {n_samples} samples.")
    kind = arr.dtype.kind
    if kind == "O":
        bad = [i for i, v in enumerate(arr) if not _is_real_scalar(v)]
        if bad:
            raise DataError(
                f"{what} contains a non-numeric value {_short_repr(arr[bad[0]])} at index {bad[0]}."
            )
        arr = arr.astype(np.float64)
        kind = "f"
    if kind not in "biuf":
        raise DataError(f"{what} has dtype {arr.dtype}; integer labels are required.")
    if kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{what} contains a non-integer value {float(arr[i])!r} at index {i}; "
                "labels must be whole numbers."
            )
    if n_samples and arr.min() < 0:
        i = int(np.flatnonzero(arr < 0)[0])
        raise DataError(
            f"{what} contains a negative value {arr[i]:g} at index {i}; labels must be >= 0."
        )
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, SeedSequence, BitGenerator or Generator
        ``None`` gives fresh OS entropy; an int or a SeedSequence a reproducible stream; a
        Generator is returned as is (so the caller's stream advances).

    Returns
    -------
    rng : numpy.random.Generator

    Raises
    ------
    ValueError
        For a legacy :class:`numpy.random.RandomState`, a negative int or any other type.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(
        random_state, (np.random.SeedSequence, np.random.BitGenerator)
    ):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}.")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        raise ValueError(
            "random_state is a legacy numpy.random.RandomState, which is not supported; pass "
            "a numpy.random.Generator or an int instead (e.g. np.random.default_rng(seed))."
        )
    raise ValueError(
        "random_state must be None, an int, a numpy.random.SeedSequence or a "
        f"numpy.random.Generator; got {_short_repr(random_state)} of type "
        f"{type(random_state).__name__}."
    )


def check_positive(value, name: str) -> float:
    """Check that ``value`` is a finite real number > 0 and return it as a float.

    Parameters
    ----------
    value : float
        The parameter's value.
    name : str
        The parameter's name, used in the error message.

    Returns
    -------
    value : float

    Raises
    ------
    ValueError
        If ``value`` is not a real number, not finite or not > 0.
    """
    if not _is_real_scalar(value) or isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a positive number, got {_short_repr(value)}.")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}.")
    return value


def check_int(value, name: str, minimum: int = 0) -> int:
    """Check that ``value`` is an integer >= ``minimum`` and return it as an int.

    Parameters
    ----------
    value : int
        The parameter's value (Python or NumPy integer; bools are rejected).
    name : str
        The parameter's name, used in the error message.
    minimum : int, default=0
        Smallest allowed value.

    Returns
    -------
    value : int

    Raises
    ------
    ValueError
        If ``value`` is not an integer or is smaller than ``minimum``.
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_short_repr(value)}.")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}.")
    return value
