"""Top-t rankings: the data layer of the Generalized Mallows family.

* :class:`Rankings` -- the working form: item ids best first, padded with ``-1``;
* :func:`check_rankings` -- lists of names or ids, arrays, DataFrames -> :class:`Rankings`;
* :func:`read_rankings_csv`, :func:`read_preflib` -- loaders for CSV files (one ranking per
  row) and PrefLib ``.soi``/``.toi`` (and ``.soc``/``.toc``) files.
"""

from .baselines import RankingEBMS, RankingKDE
from .data import Rankings, check_rankings
from .io import read_preflib, read_rankings_csv

__all__ = ["RankingEBMS", "RankingKDE", "Rankings", "check_rankings", "read_preflib",
           "read_rankings_csv"]
