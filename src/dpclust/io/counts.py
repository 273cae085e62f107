"""Count matrices from UCI bag-of-words (docword) files.

A docword file holds the lines ``D`` (documents), ``W`` (vocabulary size) and ``NNZ``
(entries), then ``NNZ`` lines ``docID wordID count`` (1-based).  It is read by NumPy in one
pass; only when that fails does a line-by-line pass run, to name the line of the first
problem.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..utils.checks import DataError
from .files import open_text, reading


def _parse_ints(line: str):
    try:
        return [int(tok) for tok in line.split()]
    except ValueError:
        return None


def looks_like_docword(p: Path, gz: bool) -> bool:
    """Whether a text file starts with lines ``D``, ``W``, ``NNZ`` and then triples."""
    lines = []
    try:
        with open_text(p, gz) as f:
            for line in f:
                if line.strip():
                    lines.append(line)
                    if len(lines) == 4:
                        break
    except (OSError, EOFError, UnicodeDecodeError):
        return False
    if len(lines) < 3:
        return False
    head = [_parse_ints(line) for line in lines[:3]]
    if not all(h is not None and len(h) == 1 for h in head):
        return False
    if len(lines) == 4:
        body = _parse_ints(lines[3])
        return body is not None and len(body) == 3
    return head[2][0] == 0


def read_docword(p: Path, gz: bool):
    """The counts of a docword file as a (D, W) CSR matrix of float64."""
    header = []
    header_names = ("D (number of documents)", "W (vocabulary size)", "NNZ (number of entries)")
    triples = None
    with reading(p), open_text(p, gz) as f:
        lineno = 0
        for line in f:
            lineno += 1
            if not line.strip():
                continue
            values = _parse_ints(line)
            if values is None or len(values) != 1 or values[0] < 0:
                raise DataError(
                    f"{p}: line {lineno} should hold {header_names[len(header)]} as one "
                    f"non-negative integer, but reads {line.strip()[:30]!r}; a bag-of-words "
                    "(docword) file starts with the lines D, W and NNZ."
                )
            header.append(values[0])
            if len(header) == 3:
                break
        if len(header) < 3:
            raise DataError(
                f"{p}: a bag-of-words (docword) file starts with the three lines D, W and NNZ; "
                f"found only {len(header)}."
            )
        header_end = lineno
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                triples = np.loadtxt(f, dtype=np.int64, comments=None, ndmin=2)
        except ValueError:
            triples = None
    n_docs, n_words, nnz = header
    if n_docs < 1 or n_words < 1:
        raise DataError(f"{p}: the header says D = {n_docs} and W = {n_words}; both must be >= 1.")

    if triples is not None and triples.size == 0:
        triples = np.empty((0, 3), dtype=np.int64)
    if (
        triples is None
        or triples.shape[1] != 3
        or (triples[:, 0] < 1).any()
        or (triples[:, 0] > n_docs).any()
        or (triples[:, 1] < 1).any()
        or (triples[:, 1] > n_words).any()
        or (triples[:, 2] < 0).any()
    ):
        # The slow parser names the line of the first problem.
        triples = _read_docword_slow(p, gz, header_end, n_docs, n_words)
    if triples.shape[0] != nnz:
        raise DataError(
            f"{p}: the header says NNZ = {nnz}, but {triples.shape[0]} "
            "'docID wordID count' lines follow."
        )
    if nnz == 0:
        raise DataError(f"{p} holds no word counts (NNZ = 0).")
    # Duplicate (doc, word) pairs are summed, as in any COO -> CSR conversion.
    return sp.csr_matrix(
        (triples[:, 2].astype(np.float64), (triples[:, 0] - 1, triples[:, 1] - 1)),
        shape=(n_docs, n_words),
    )


def _read_docword_slow(p, gz, header_end, n_docs, n_words):
    rows = []
    with reading(p), open_text(p, gz) as f:
        for lineno, line in enumerate(f, 1):
            if lineno <= header_end or not line.strip():
                continue
            values = _parse_ints(line)
            if values is None or len(values) != 3:
                raise DataError(
                    f"{p}: line {lineno} should be three integers 'docID wordID count', but "
                    f"reads {line.strip()[:40]!r}."
                )
            doc, word, count = values
            if not 1 <= doc <= n_docs:
                raise DataError(
                    f"{p}: line {lineno}: document id {doc} is out of range 1..{n_docs}."
                )
            if not 1 <= word <= n_words:
                raise DataError(f"{p}: line {lineno}: word id {word} is out of range 1..{n_words}.")
            if count < 0:
                raise DataError(f"{p}: line {lineno}: negative count {count}; counts must be >= 0.")
            rows.append(values)
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3)
