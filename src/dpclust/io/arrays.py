"""NumPy and SciPy files: ``.npy`` arrays, ``.npz`` archives and sparse matrices, and
distance matrices stored in either.

``np.load`` is always called with ``allow_pickle=False``: a file of pickled objects is
refused, not run.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..utils.checks import DataError
from .files import NPY_MAGIC, ZIP_MAGIC, check_file, detect_format, read_magic

__all__ = ["load_distances"]


def read_npy(p: Path):
    """The array of a ``.npy`` file (a zip archive is read as ``.npz``)."""
    magic = read_magic(p)
    if magic.startswith(ZIP_MAGIC):
        return read_npz(p)
    if magic != NPY_MAGIC:
        raise DataError(f"{p} is not a NumPy .npy file (it lacks the NPY header).")
    try:
        return np.load(p, allow_pickle=False)
    except ValueError as exc:
        raise _numpy_load_error(p, exc, ".npy") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{p} is truncated or corrupt ({exc}).") from None


def _numpy_load_error(p: Path, exc: ValueError, kind: str) -> DataError:
    """The DataError for a ValueError raised by ``np.load``."""
    if "pickle" in str(exc):
        return DataError(f"{p} holds an object array (pickled Python objects), which is not "
                         "loaded for safety; save a numeric array instead.")
    return DataError(f"{p} is not a valid {kind} file ({exc}).")


def read_npz(p: Path):
    """The scipy sparse matrix or the single array of a ``.npz`` archive."""
    if not read_magic(p).startswith(ZIP_MAGIC):
        raise DataError(f"{p} is not a .npz file (not a zip archive).")
    try:
        with np.load(p, allow_pickle=False) as archive:
            names = list(archive.files)
            if {"format", "shape", "data"} <= set(names):
                sparse = True
            elif len(names) == 1:
                sparse = False
                X = archive[names[0]]
            else:
                shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
                raise DataError(
                    f"{p} holds {len(names)} arrays ({shown}); expected a scipy sparse matrix "
                    "saved with scipy.sparse.save_npz or an archive with a single array."
                )
        if sparse:
            X = sp.load_npz(p)
    except DataError:
        raise
    except ValueError as exc:
        raise _numpy_load_error(p, exc, ".npz") from None
    except (OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{p} is truncated or corrupt ({exc}).") from None
    return X


def load_distances(path, *, n=None):
    """A matrix of distances between customers, for the distance dependent CRP.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy`` file with a dense (n, n) array (``inf`` where two customers may not
        link), or a ``.npz`` file with a scipy sparse matrix (``scipy.sparse.save_npz``):
        only its stored pairs may link.
    n : int, optional
        The number of customers (data rows) the matrix must describe.

    Returns
    -------
    distances : ndarray of shape (n, n) or scipy.sparse.csr_matrix
        float64.  ``distances[i, j]`` is the distance from customer i to customer j; the
        diagonal is ignored.

    Raises
    ------
    DataError
        If the file is missing or unreadable, not a square numeric matrix, holds NaN or
        negative distances (off the diagonal), or does not have ``n`` rows.
    """
    p = check_file(path)
    fmt, _ = detect_format(p)
    if fmt not in ("npy", "npz"):
        raise DataError(f"{p}: distances must be a .npy file (a dense matrix) or a .npz file "
                        f"(a scipy sparse matrix), not a {fmt} file")
    D = read_npy(p) if fmt == "npy" else read_npz(p)
    if sp.issparse(D):
        D = sp.csr_matrix(D, dtype=np.float64)
        data = D.data
    else:
        D = np.asarray(D)
        if D.dtype.kind not in "biuf":
            raise DataError(f"{p}: distances must be numbers, got an array of dtype {D.dtype}")
        D = D.astype(np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise DataError(f"{p}: the distance matrix must be square (n, n), got shape {D.shape}")
    if not sp.issparse(D):
        data = D[~np.eye(D.shape[0], dtype=bool)]
    if np.isnan(data).any():
        raise DataError(f"{p}: the distance matrix holds {int(np.isnan(data).sum())} NaN "
                        "values")
    if (data < 0).any():
        raise DataError(f"{p}: distances must be >= 0; the smallest is {float(data.min())}")
    if n is not None and D.shape[0] != n:
        raise DataError(f"{p} is a {D.shape[0]} x {D.shape[0]} distance matrix, but the data "
                        f"have {n} rows")
    return D
