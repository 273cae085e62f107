"""Every Python block of the README and the user guide runs, so that the pages cannot drift
from the code.

The blocks of a page run in order in one namespace, in a folder holding the files they
read (``points.csv``, ``survey.csv``, ``ballots.csv``, ``mayor_cvr.csv``, ``shards/``).  The
names a page leaves to the reader's own data (``X``, ``counts``, ``survey``, ``ballots``, ...)
are given small generated stand-ins (:data:`STAND_INS`).  The small-data switch: the estimators run
short (at most :data:`QUICK_ITER` iterations, two chains, no convergence loop), the Dublin
West loader returns every ninth of its ballots (3,332) and a Dask ``Client`` of any address is a local
in-process cluster.  Nothing else of a block is changed: every call, attribute and printed
expression is the page's own.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpclust
import dpclust.datasets
from dpclust import DDCRPMixture, DPMixture

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md",
         *sorted((ROOT / "docs" / "user_guide").glob("*.md"))]
#: iterations of each chain in the small-data switch
QUICK_ITER = 30


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)


def _quick(est):
    """``est`` held to the small-data switch (in place)."""
    n_iter = est.n_iter if est.n_iter is not None else QUICK_ITER
    est.n_iter = min(n_iter, QUICK_ITER)
    if est.burn_in is not None and est.burn_in >= est.n_iter:
        est.burn_in = None
    est.n_chains = min(est.n_chains, 2)
    est.max_iter = None
    est.max_time = None
    return est


class QuickDPMixture(DPMixture):
    """:class:`DPMixture` under the small-data switch (the parameters are DPMixture's)."""

    def fit(self, X, y=None, **kwargs):
        return super(QuickDPMixture, _quick(self)).fit(X, y, **kwargs)


class QuickDDCRPMixture(DDCRPMixture):
    def fit(self, X, y=None, **kwargs):
        return super(QuickDDCRPMixture, _quick(self)).fit(X, y, **kwargs)


def _documents(n, seed):
    from dpclust.datasets import make_documents

    counts, _ = make_documents(n_docs=n, n_topics=3, vocab_size=40, doc_length=30,
                               random_state=seed)
    return counts


def _survey(n=120, seed=0) -> pd.DataFrame:
    """A small mixed table with holes: numbers, yes/no answers, categories, counts."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    df = pd.DataFrame({
        "age": np.round(30 + 15 * group + rng.normal(0, 4, n), 1),
        "smoker": np.where(rng.random(n) < 0.2 + 0.6 * group, "yes", "no"),
        "zip": rng.choice(["1000", "2000", "3000"], n),
        "visits": rng.poisson(1 + 3 * group)})
    df.loc[rng.random(n) < 0.1, "age"] = np.nan
    df.loc[rng.random(n) < 0.1, "smoker"] = None
    return df


def _ballots(n=60, seed=0):
    from dpclust.rankings import Rankings

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        order = list(range(5)) if i % 2 == 0 else list(range(4, -1, -1))
        j = int(rng.integers(0, 4))
        order[j], order[j + 1] = order[j + 1], order[j]
        rows.append(order[:int(rng.integers(2, 5))])
    return Rankings(rows, n_items=5)


def _write_files(folder: Path) -> None:
    """The files the pages read, small."""
    demo, _ = dpclust.datasets.load_demo()
    pd.DataFrame(demo[::5], columns=["x", "y"]).to_csv(folder / "points.csv", index=False)
    _survey().to_csv(folder / "survey.csv", index=False)
    R = _ballots()
    lines = [",".join([str(k + 1) for k in r] + ["0"] * (5 - len(r)))
             for r in R.to_lists(names=False)]
    (folder / "ballots.csv").write_text("\n".join(lines) + "\n")
    cvr = ["Cast Vote Record,Precinct,Mayor Choice 1 of 3,Mayor Choice 2 of 3,"
           "Mayor Choice 3 of 3"]
    names = ["Adams", "Garcia", "Wiley"]
    rng = np.random.default_rng(1)
    for i in range(60):
        order = rng.permutation(3) if i % 3 else np.array([0, 1, 2])
        cvr.append(f"{100 + i},P{1 + i % 2}," + ",".join(names[k] for k in order))
    (folder / "mayor_cvr.csv").write_text("\n".join(cvr) + "\n")
    shards = folder / "shards"
    shards.mkdir()
    X, _ = dpclust.datasets.make_gaussian_mixture(n_samples=400, n_clusters=3,
                                                  random_state=2)
    for j, part in enumerate(np.array_split(X, 2)):
        np.save(shards / f"part{j}.npy", part)


def _stand_ins() -> dict:
    """The reader's own data, by the names the pages give them."""
    from dpclust.datasets import load_demo

    X, _ = load_demo()
    X = X[::5]  # 300 points
    rng = np.random.default_rng(0)
    counts = _documents(90, 0)
    days = np.sort(rng.uniform(0, 60, counts.shape[0]))
    tokens = rng.integers(0, 12, 300)
    ballots = _ballots()
    distinct = _ballots(12, seed=3)
    return {"DPMixture": dpclust.DPMixture, "X": X, "counts": counts, "days": days,
            "new_counts": _documents(10, 1), "new_days": np.sort(rng.uniform(60, 70, 10)),
            "tokens": tokens, "next_tokens": rng.integers(0, 12, 40), "survey": _survey(),
            "ballots": ballots, "distinct_ballots": distinct,
            "sample_weight": None}


def _page_stand_ins(page: Path) -> dict:
    names = _stand_ins()
    if page.name == "tables.md":  # distinct ballots and their counts
        names["counts"] = np.arange(1, len(names["distinct_ballots"]) + 1)
    return names


def _local_client(client_class):
    """A stand-in for ``distributed.Client(address)``: a local in-process cluster."""
    def make(*args, **kwargs):
        return client_class(processes=False, n_workers=2, threads_per_worker=1,
                            dashboard_address=None)
    return make


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=[p.name for p in PAGES_WITH_CODE])
def test_every_python_block_of_the_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write_files(tmp_path)
    monkeypatch.setattr(dpclust, "DPMixture", QuickDPMixture)
    monkeypatch.setattr(dpclust, "DDCRPMixture", QuickDDCRPMixture)
    whole = dpclust.datasets.load_dublin_west
    monkeypatch.setattr(dpclust.datasets, "load_dublin_west",
                        lambda: whole()[np.arange(0, 29_988, 9)])  # 3,332 ballots
    code = python_blocks(page)
    if any("distributed import Client" in block for block in code):
        distributed = pytest.importorskip("distributed")
        monkeypatch.setattr(distributed, "Client", _local_client(distributed.Client))
    namespace = _page_stand_ins(page)
    namespace["DPMixture"] = QuickDPMixture
    clients = []
    try:
        for i, block in enumerate(code):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # short runs: convergence warnings
                exec(compile(block, f"{page.name}, block {i + 1}", "exec"), namespace)
            if "client" in namespace:
                clients.append(namespace["client"])
    finally:
        for client in clients:
            client.close()


def test_the_pages_have_code_to_run():
    """The harness finds the blocks (a changed fence would silently test nothing)."""
    assert len(PAGES_WITH_CODE) >= 10
    assert sum(len(python_blocks(p)) for p in PAGES_WITH_CODE) >= 15
