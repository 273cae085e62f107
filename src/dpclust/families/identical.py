"""Identical rows: the keys and digests by which a family tells its rows apart.

Rows that are equal in the family's working form are exchangeable in a mixture: samplers
score such a row once per sweep (ballots cast by many voters) and the point estimate keeps
them in one cluster.  :meth:`~dpclust.families.base.ConjugateFamily.distinct` finds them in
one process; on a Dask cluster each worker sends a 16-byte digest of each of its rows'
keys (:meth:`~dpclust.families.base.ConjugateFamily.row_keys`) and the client compares
the digests.
"""

from __future__ import annotations

import hashlib

import numpy as np


def distinct_rows(a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, inverse, counts)`` of the distinct rows of a 2-D array
    (:meth:`ConjugateFamily.distinct` for families whose data are one array)."""
    _, first, inverse, counts = np.unique(np.asarray(a), axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    return first, inverse.ravel(), counts


def distinct_keys(keys) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, inverse, counts)`` of rows given as one hashable key each (bytes), the
    distinct keys numbered in order of first appearance."""
    seen: dict = {}
    inverse = np.fromiter((seen.setdefault(k, len(seen)) for k in keys), dtype=np.int64,
                          count=len(keys))
    first = np.full(len(seen), len(keys), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(keys)))
    return first, inverse, np.bincount(inverse, minlength=len(seen))


def row_digests(keys) -> np.ndarray:
    """A 16-byte BLAKE2b digest of each key (bytes), shape (n,), dtype ``S16``: rows split
    among machines compared without moving them (two different rows share a digest with
    probability about ``n^2 / 2^129``)."""
    return np.array([hashlib.blake2b(k, digest_size=16).digest() for k in keys], dtype="S16")


def array_row_keys(a) -> list[bytes]:
    """The bytes of each row of a 2-D array (``-0.0`` read as ``0.0``, as ``numpy.unique``
    compares them), the keys :func:`distinct_rows` tells rows apart by."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = a + 0.0
    return [row.tobytes() for row in np.ascontiguousarray(a)]
