"""Files of one value a line: cluster labels written out, vocabularies and item names read in.
"""

from __future__ import annotations

import os

import numpy as np

from ..utils.checks import DataError
from .files import check_file, open_text, reading

__all__ = ["load_item_names", "load_vocabulary", "save_labels_csv"]


def save_labels_csv(path, labels, *, header="label", certainty=None, fused=None, rows=None,
                    n_rows=None):
    """Write cluster labels to a CSV file, one label a line, after a header line.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (overwritten).
    labels : array-like of shape (n_samples,)
        Integer labels (floats that are whole numbers are accepted; negative values such as
        ``-1`` for "unassigned" are written as they are).
    header : str or None, default="label"
        The header line; ``None`` writes no header.
    certainty : array-like of shape (n_samples,), optional
        A second column ``certainty`` (each point's probability of lying in the core of
        its cluster, :func:`dpclust.partitions.point_certainty`), with four decimals.
    fused : array-like of shape (n_samples,), optional
        A last column ``fused_label``: each point's fused cluster
        (:meth:`dpclust.DPMixture.fuse`).
    rows : array-like of int, shape (n_samples,), optional
        The lines (0-based, in increasing order) of ``n_rows`` that the labels belong to;
        the other lines are written with empty cells (rows of a file left out of the fit).
    n_rows : int, optional
        The number of lines with ``rows``.

    Raises
    ------
    DataError
        If ``labels`` is not a 1-D array of integers, or the file cannot be written.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise DataError(f"labels must be a 1-D array, got shape {arr.shape}.")
    if arr.dtype.kind == "f":
        if not (np.isfinite(arr).all() and (arr == np.floor(arr)).all()):
            raise DataError("labels must be whole numbers; found a fractional or NaN value.")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "biu":
        raise DataError(f"labels must be integers, got dtype {arr.dtype}.")
    if header is not None and ("\n" in str(header) or "\r" in str(header)):
        raise ValueError("header must be a single line.")
    names = [] if header is None else [str(header)]
    columns = [[str(v) for v in arr.astype(np.int64).tolist()]]
    if certainty is not None:
        cert = np.asarray(certainty, dtype=np.float64)
        if cert.shape != arr.shape:
            raise ValueError(f"certainty has shape {cert.shape}, the labels {arr.shape}")
        names.append("certainty")
        columns.append([f"{c:.4f}" for c in cert.tolist()])
    if fused is not None:
        fused = np.asarray(fused)
        if fused.shape != arr.shape:
            raise ValueError(f"fused has shape {fused.shape}, the labels {arr.shape}")
        names.append("fused_label")
        columns.append([str(v) for v in fused.astype(np.int64).tolist()])
    lines = [] if header is None else [",".join(names)]
    body = [",".join(row) for row in zip(*columns)]
    if rows is not None:
        rows = np.asarray(rows, dtype=np.int64)
        if rows.shape != arr.shape or (rows.size and (rows[0] < 0 or rows[-1] >= n_rows
                                                      or np.any(np.diff(rows) <= 0))):
            raise ValueError(f"rows must be {arr.size} increasing line numbers below "
                             f"n_rows={n_rows}")
        full = ["," * (len(columns) - 1)] * int(n_rows)
        for r, line in zip(rows.tolist(), body):
            full[r] = line
        body = full
    lines.extend(body)
    try:
        with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise DataError(f"cannot write labels to {path}: {exc.strerror or exc}") from None


def load_vocabulary(path):
    """Read a vocabulary file: one word a line, in column order of the count matrix.

    Parameters
    ----------
    path : str or os.PathLike
        A UTF-8 text file (``.gz`` accepted).  Surrounding whitespace is stripped and
        trailing blank lines are dropped; a blank line elsewhere stays (as ``""``) so that
        word ``i`` stays on line ``i + 1``.

    Returns
    -------
    words : list of str

    Raises
    ------
    DataError
        If the file is missing, empty, or not UTF-8 text.
    """
    return _read_names(path, "words")


def load_item_names(path):
    """Read the names of ranked items: one name a line, item ``j`` on line ``j + 1``.

    For ``dpclust fit --family mallows --items FILE``: in a rankings file of item ids, id
    ``index_base + j`` is the name on line ``j + 1``; in a file of names, every name must be
    one of them.

    Parameters
    ----------
    path : str or os.PathLike
        A UTF-8 text file (``.gz`` accepted), read as :func:`load_vocabulary` reads one.

    Returns
    -------
    names : list of str

    Raises
    ------
    DataError
        If the file is missing, empty, or not UTF-8 text.
    """
    return _read_names(path, "item names")


def _read_names(path, what: str) -> list:
    """One name a line, stripped; trailing blank lines dropped (others kept as ``""``)."""
    p = check_file(path)
    with reading(p), open_text(p, p.name.lower().endswith(".gz"), newline=None) as f:
        names = [w.strip() for w in f.read().split("\n")]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise DataError(f"{p} holds no {what}.")
    return names
