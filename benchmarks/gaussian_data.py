"""Real, continuous, multivariate data sets of more than 10,000 rows that ship inside a
registry package, for benchmarks of the Gaussian family as N grows.  Nothing is downloaded
at run time: each loader reads a file that an installed package carries.

``load_diamonds()``
    ggplot2's ``diamonds`` (53,940 round-cut diamonds), read from the CSV inside the
    ``plotnine`` wheel (``pip install plotnine``, or ``pip install --no-deps plotnine``:
    the loader reads the file without importing plotnine; MIT licence, as ggplot2's).  Four columns:
    ``log_carat``, ``log_price``, ``depth`` (total depth %) and ``table`` (table width %).
    The other three physical columns (``x``, ``y``, ``z`` in mm) are left out: they are
    nearly a function of carat (weight ~ volume, correlation of log x with log carat 0.998)
    and 20 rows have zeros in them; ``cut``, ``color`` and ``clarity`` are categorical.
``load_sample_image_pixels()``
    The RGB colours of the 273,280 pixels of one of scikit-learn's two sample photographs
    (``china.jpg`` or ``flower.jpg``, CC BY 2.0, inside the scikit-learn wheel, which
    dpclust already needs): colour quantisation, the textbook use of a Gaussian mixture.

Both record their values rounded (carat to 0.01, depth to 0.1 %, table mostly to whole
per cent, colours to whole 0-255 levels).  With ``dequantize=True`` (the default) each
value gets uniform noise across its rounding interval, from a fixed seed, so that no
Gaussian component can sit on a tie (many identical values give a cluster of zero spread,
and an exact DP mixture opens clusters on such spikes as N grows: on the diamonds'
``table`` column, 56 % and 57 % each hold 18 % of the rows).  ``standardize=True`` (the default)
centres each column and scales it to unit variance.

``nested_subsets(n, fractions, seed)`` gives the row indices of nested random subsets
(20 % inside 50 % inside 100 %), so that a figure's change with N is not a change of rows.

Run ``python benchmarks/gaussian_data.py`` for a summary of each set.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["load_diamonds", "load_sample_image_pixels", "nested_subsets"]

# Recording resolution of each diamonds column on its raw scale (the dequantisation width).
_DIAMONDS_RESOLUTION = {"carat": 0.01, "price": 1.0, "depth": 0.1, "table": 1.0}


def _package_file(package: str, *parts: str) -> Path:
    """Path of a data file inside an installed package, found without importing the
    package (importing plotnine would import matplotlib, statsmodels, ...)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"this data set ships inside the '{package}' package, which is not installed: "
            f"run `pip install {package}` (into the environment that runs this script)",
            name=package)
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed '{package}' package "
                                f"(a version that does not bundle it?); "
                                f"try `pip install --upgrade {package}`")
    return path


def _finish(X, dequantize_width, dequantize, standardize, random_state):
    X = np.asarray(X, dtype=np.float64)
    if dequantize:
        rng = np.random.default_rng(random_state)
        X = X + (rng.random(X.shape) - 0.5) * np.asarray(dequantize_width, dtype=np.float64)
    if standardize:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return np.ascontiguousarray(X)


def load_diamonds(*, dequantize=True, standardize=True, random_state=0):
    """ggplot2's diamonds: 53,940 rows, columns log carat, log price, depth %, table %.

    Parameters
    ----------
    dequantize : bool, default=True
        Add ``Uniform(-r/2, r/2)`` to each raw value, ``r`` its recording resolution
        (carat 0.01, price $1, depth 0.1 %, table 1 %), before the logs.
    standardize : bool, default=True
        Centre each column and scale it to unit variance (after the logs).
    random_state : int, default=0
        Seed of the dequantisation noise.

    Returns
    -------
    X : ndarray of shape (53940, 4), float64
    columns : list of str
        ``["log_carat", "log_price", "depth", "table"]``.

    Raises
    ------
    ModuleNotFoundError
        When ``plotnine`` (which carries ``plotnine/data/diamonds.csv``) is not installed.
    """
    import pandas as pd

    path = _package_file("plotnine", "data", "diamonds.csv")
    raw = ["carat", "price", "depth", "table"]
    frame = pd.read_csv(path, usecols=raw)[raw]
    values = frame.to_numpy(dtype=np.float64)
    if dequantize:
        rng = np.random.default_rng(random_state)
        width = np.array([_DIAMONDS_RESOLUTION[c] for c in raw])
        values = values + (rng.random(values.shape) - 0.5) * width
    values[:, 0] = np.log(values[:, 0])
    values[:, 1] = np.log(values[:, 1])
    X = _finish(values, 0.0, False, standardize, None)
    return X, ["log_carat", "log_price", "depth", "table"]


def load_sample_image_pixels(image="china.jpg", *, dequantize=True, standardize=True,
                             random_state=0):
    """RGB colours of the pixels of one of scikit-learn's sample photographs.

    Parameters
    ----------
    image : {"china.jpg", "flower.jpg"}
        Each is 427 x 640 = 273,280 pixels.
    dequantize : bool, default=True
        Add ``Uniform(-0.5, 0.5)`` to each 0-255 level.
    standardize : bool, default=True
        Centre each channel and scale it to unit variance.
    random_state : int, default=0
        Seed of the dequantisation noise.

    Returns
    -------
    X : ndarray of shape (273280, 3), float64
    columns : list of str
        ``["red", "green", "blue"]``.
    """
    try:
        from sklearn.datasets import load_sample_image
    except ImportError as exc:  # pragma: no cover - scikit-learn is a dpclust dependency
        raise ModuleNotFoundError("the sample photographs ship inside scikit-learn: "
                                  "run `pip install scikit-learn` (and pillow)") from exc
    try:
        pixels = load_sample_image(image).reshape(-1, 3)
    except ImportError as exc:
        raise ModuleNotFoundError("scikit-learn reads its sample photographs with Pillow: "
                                  "run `pip install pillow`", name="PIL") from exc
    X = _finish(pixels, 1.0, dequantize, standardize, random_state)
    return X, ["red", "green", "blue"]


def nested_subsets(n_samples, fractions=(0.2, 0.5, 1.0), seed=0):
    """Row indices of nested random subsets: the first ``round(f * n)`` rows of one random
    permutation for each fraction ``f``, so each subset contains the smaller ones."""
    order = np.random.default_rng(seed).permutation(n_samples)
    return {f: np.sort(order[:int(round(f * n_samples))]) for f in fractions}


if __name__ == "__main__":
    for name, loader in [("diamonds", load_diamonds),
                         ("china.jpg pixels", load_sample_image_pixels)]:
        try:
            X, columns = loader()
        except ModuleNotFoundError as exc:
            print(f"{name}: {exc}")
            continue
        print(f"{name}: {X.shape[0]:,} rows x {X.shape[1]} columns {columns}")
        print("  correlations:\n" + np.array2string(np.corrcoef(X.T), precision=2))
