"""The checkpoint file of a run: every chain's last complete iteration, the run's settings
and family and the data's fingerprint, in the no-pickle format of
:mod:`dpclust.utils.safe_io` (classes that moved since a file was written are found through
its alias table)."""

from __future__ import annotations

from pathlib import Path

from ..utils import safe_io as _safe_io
from ..utils.checks import DataError

#: format of the checkpoint files
CHECKPOINT_FORMAT = 5


def save_checkpoint(path, payload: dict) -> None:
    """Write a checkpoint atomically: arrays in an ``.npz`` file, everything else as JSON
    inside it, with a SHA-256 digest of the content (:mod:`dpclust.utils.safe_io`; no pickle)."""
    _safe_io.save(path, payload)


def load_checkpoint(path) -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`.  A file whose content does not
    match its digest, an older pickle checkpoint, or any other file is refused with a clear
    error; loading never runs code from the file."""
    path = Path(path)
    if path.is_file() and _starts_with(path, b"\x80"):  # pickle's protocol marker
        raise DataError(f"{path} is a checkpoint of an older dpclust (a pickle file, which "
                        "could run code when loaded, so it is no longer read): start the run "
                        "again with 'dpclust fit'")
    payload = _safe_io.load(path, what="checkpoint")
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise DataError(f"{path} is not a dpclust checkpoint of format {CHECKPOINT_FORMAT}")
    return payload


def _starts_with(path: Path, prefix: bytes) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(prefix)) == prefix


def checkpoint_iteration(payload: dict) -> int:
    """The iteration every chain of a loaded checkpoint has completed."""
    return min(p.snapshot.iteration for p in payload["progress"])


def checkpoint_seconds(payload: dict) -> float:
    """Sampling seconds of a loaded checkpoint's longest-running chain."""
    return max(p.snapshot.elapsed for p in payload["progress"])

