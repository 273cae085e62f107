"""Where a partition's rows come from: something a worker can load again after a failure.

A source is a small picklable object with ``load()`` (run on a worker) and ``name`` (for
error messages).  Files are read by the worker itself, so that the data never pass through
the client; a NumPy array held by the client is shipped once, inside the task that loads it
(the scheduler keeps it to reload the partition if its worker dies).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np

from ..utils.checks import DataError

#: file suffixes read as shards, one partition each
SHARD_SUFFIXES = (".npy", ".parquet")


class InMemory:
    """Rows held by the client, shipped inside the loading task."""

    def __init__(self, data, name: str):
        self.data = data
        self.name = name

    def load(self):
        return self.data


class NpyFile:
    """A ``.npy`` file of shape (n_rows, n_features), read by the worker."""

    def __init__(self, path):
        self.path = str(path)
        self.name = f"shard {self.path}"

    def load(self):
        try:
            return np.load(self.path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{self.name}: cannot be read as a .npy array ({exc})") from None


class ParquetFile:
    """A Parquet file whose numeric columns (or ``columns``) are the features."""

    def __init__(self, path, columns=None):
        self.path = str(path)
        self.columns = None if columns is None else list(columns)
        self.name = f"shard {self.path}"

    def load(self):
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - pyarrow ships with the dask extra
            raise ImportError("reading Parquet shards needs pyarrow: "
                              "pip install 'dpclust[dask]'") from None
        try:
            table = pq.read_table(self.path, columns=self.columns)
        except (OSError, ValueError) as exc:
            raise DataError(f"{self.name}: cannot be read as Parquet ({exc})") from None
        if table.num_columns == 0:
            raise DataError(f"{self.name}: has no columns")
        cols = []
        for name, col in zip(table.column_names, table.columns):
            arr = col.to_numpy(zero_copy_only=False)
            if not np.issubdtype(arr.dtype, np.number):
                if self.columns is not None:
                    raise DataError(f"{self.name}: column {name!r} is not numeric")
                continue
            cols.append(np.asarray(arr, dtype=np.float64))
        if not cols:
            raise DataError(f"{self.name}: has no numeric columns")
        return np.column_stack(cols)


class DaskBlock:
    """One row block of a dask array; the block itself arrives as the task's argument
    (Dask recomputes it from the array's own graph if it is lost)."""

    def __init__(self, index: int):
        self.index = index
        self.name = f"block {index} of the dask array"

    def load(self, block=None):
        return block


def shard_files(spec) -> list[Path]:
    """The shard files named by ``spec``: a directory (its ``.npy``/``.parquet`` files, in
    name order), a glob pattern, or a list of paths."""
    if isinstance(spec, (list, tuple)):
        paths = [Path(p) for p in spec]
    else:
        text = str(spec)
        if os.path.isdir(text):
            paths = sorted(p for p in Path(text).iterdir() if p.suffix in SHARD_SUFFIXES)
            if not paths:
                raise DataError(f"{text}: no .npy or .parquet shards in this directory")
        elif any(c in text for c in "*?["):
            paths = [Path(p) for p in sorted(glob.glob(text))]
            if not paths:
                raise DataError(f"{text}: no file matches this pattern")
        else:
            paths = [Path(text)]
    for p in paths:
        if p.suffix not in SHARD_SUFFIXES:
            raise DataError(f"{p}: a shard must be a .npy or .parquet file")
        if not p.exists():
            raise DataError(f"{p}: no such file")
    return paths


def file_source(path, columns=None):
    path = Path(path)
    return NpyFile(path) if path.suffix == ".npy" else ParquetFile(path, columns)
