"""Reading data files and writing cluster labels.

:func:`load_data` reads a data matrix from a file whose format is told by its extension:

==========================  ==========================================================  =======
extension                   contents                                                    kind
==========================  ==========================================================  =======
``.csv``, ``.tsv``, ``.txt``  numeric table, optional header row (detected), ``.gz`` ok    dense
``.npy``                    a 2-D numeric NumPy array                                   dense
``.npz``                    a scipy sparse matrix (``scipy.sparse.save_npz``), or an     counts
                            ``np.savez`` archive holding a single array                 (dense)
``.parquet``, ``.pq``       numeric columns (needs ``pip install dpclust[parquet]``)    dense
``docword*.txt[.gz]``       UCI bag-of-words: lines ``D``, ``W``, ``NNZ``, then          counts
                            ``docID wordID count`` triples (1-based)
==========================  ==========================================================  =======

A ``.txt`` file whose content has the bag-of-words layout is read as such whatever its name.
Text tables are parsed by pandas' C reader; their separator and decimal mark are found by
:class:`csv.Sniffer` and a decimal-comma check (or given: ``sep=``, ``decimal=``), and
``meta["dialect"]`` says which (see :func:`load_data`).
Every problem -- a missing, empty, unreadable or garbled file, a non-numeric cell, a missing
value, NaN, a negative count -- raises one :class:`~dpclust.utils.checks.DataError` whose
message starts with the path and names the problem.  In messages about text files, ``line``
and ``column`` numbers are 1-based, as in an editor; in messages about arrays (``.npy``,
``.npz``, Parquet) ``row`` and ``column`` are 0-based indices.

Top-t rankings are read by :func:`read_rankings_csv` (one ranking a row of a text table),
:func:`read_preflib` (PrefLib ``.soi``/``.toi``/``.soc``/``.toc`` files) and :func:`read_cvr`
(cast-vote records as election offices publish them, and ABIF ``count: a > b`` lines).

The package is split by what is read; its modules share their helpers by plain names, and
only the names of ``__all__`` are its public API:

* :mod:`~dpclust.io.files` -- checking a path, telling its format, opening text, read errors;
* :mod:`~dpclust.io.text` -- a text table's dialect (separator, decimal mark), records, cells;
* :mod:`~dpclust.io.columns` -- selecting columns; labels and positions from a column;
* :mod:`~dpclust.io.tables` -- numeric text tables and Parquet files;
* :mod:`~dpclust.io.counts` -- UCI bag-of-words count matrices;
* :mod:`~dpclust.io.arrays` -- ``.npy``/``.npz`` files and distance matrices;
* :mod:`~dpclust.io.load` -- :func:`load_data` and its variants with other columns;
* :mod:`~dpclust.io.lines` -- one value a line: labels written, vocabularies and item names;
* :mod:`~dpclust.io.rankings` -- rankings from CSV and PrefLib files;
* :mod:`~dpclust.io.cvr` -- ranked ballots from cast-vote records and ABIF files, by the
  counting rules of :mod:`~dpclust.io.cvr_rules`.
"""

from ..utils.checks import DataError
from .arrays import load_distances
from .columns import as_labels, parse_positions
from .cvr import CastVoteRecords, read_cvr
from .cvr_rules import BallotRules, CleaningRule
from .lines import load_item_names, load_vocabulary, save_labels_csv
from .load import load_data, load_data_with_columns, load_data_with_labels
from .rankings import read_preflib, read_rankings_csv
from .text import TextDialect

#: the name under which :mod:`dpclust.cli` imports :func:`~dpclust.io.columns.as_labels`
_as_labels = as_labels

__all__ = [
    "BallotRules",
    "CastVoteRecords",
    "CleaningRule",
    "DataError",
    "TextDialect",
    "load_data",
    "load_data_with_columns",
    "load_data_with_labels",
    "load_distances",
    "load_item_names",
    "load_vocabulary",
    "parse_positions",
    "read_cvr",
    "read_preflib",
    "read_rankings_csv",
    "save_labels_csv",
]
