"""Top-t rankings: the data layer of the Generalized Mallows family.

* :class:`Rankings` -- the working form: item ids best first, padded with ``-1``;
* :func:`check_rankings` -- lists of names or ids, arrays, DataFrames -> :class:`Rankings`.

Files of rankings are read by :func:`dpclust.io.read_rankings_csv` (CSV, one ranking per
row) and :func:`dpclust.io.read_preflib` (PrefLib ``.soi``/``.toi``/``.soc``/``.toc``).  They
used to live here; ``dpclust.rankings.read_rankings_csv`` and
``dpclust.rankings.read_preflib`` still work, with a :class:`DeprecationWarning` (once per
name) that gives the new path.
"""

import warnings

from .baselines import RankingEBMS, RankingKDE
from .data import Rankings, check_rankings

__all__ = ["RankingEBMS", "RankingKDE", "Rankings", "check_rankings"]

#: names that moved up to :mod:`dpclust.io`, which reads files and sits above this layer
_MOVED_TO_IO = ("read_preflib", "read_rankings_csv")


def __getattr__(name):
    """The readers that moved to :mod:`dpclust.io`, under their old path (warns once)."""
    if name in _MOVED_TO_IO:
        from .. import io  # upward on purpose: an alias for the old import path

        warnings.warn(f"dpclust.rankings.{name} has moved to dpclust.io.{name}; import it "
                      f"from there (from dpclust.io import {name})", DeprecationWarning,
                      stacklevel=2)
        value = getattr(io, name)
        globals()[name] = value  # later lookups find it here: the warning is given once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
