"""Every kind of report, looked at in a real browser (headless Chromium): no raw JSON or
Python reprs in the text, nothing wider than the window, a bounded page height, every image
loaded, no script or console errors.  The runs are real ``dpclust fit`` commands on files
written here, as a user would make them.

Screenshots of the first 3,000 px of each page at 1,400 px go to
``$DPCLUST_SCREENSHOTS`` (default ``build/report-screenshots/``) for a developer to open.
Needs Debian's ``chromium`` (``.ci/run`` installs it); without it the tests are skipped and
say so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from browser import find_browser, problems, render

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path(os.environ.get("DPCLUST_SCREENSHOTS", ROOT / "build" / "report-screenshots"))
BROWSER = find_browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium found: install Debian's chromium (apt-get install "
                            "chromium; .ci/run does) to check the reports in a browser")
#: a report longer than this at 1,400 px is not read to its end
MAX_HEIGHT = 16_000


def _start(root: Path, name: str, *args: str) -> tuple[subprocess.Popen, Path]:
    """``dpclust fit`` with ``args`` started in its own process: one chain unless they say
    otherwise (the kind ``chains`` checks a report of several)."""
    out = root / name
    if "--n-chains" not in args:
        args = (*args, "--n-chains", "1")
    with open(root / f"{name}.log", "w") as log:  # the child keeps its own handle
        run = subprocess.Popen([sys.executable, "-m", "dpclust", "fit", *args, "--out",
                                str(out), "--random-state", "0"], stdout=log, stderr=subprocess.STDOUT,
                               text=True)
    return run, out / "report.html"


def _data_gaussian(tmp_path):
    return []  # the bundled demo data


def _data_documents(tmp_path):
    from dpclust.datasets import make_documents

    X, _ = make_documents(n_docs=400, n_topics=4, vocab_size=300, random_state=0)
    path = tmp_path / "docs.npz"
    sp.save_npz(path, sp.csr_matrix(X))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(f"word{w}" for w in range(X.shape[1])) + "\n")
    return [str(path), "--family", "multinomial", "--concentration", "0.1",
            "--vocab", str(vocab)]


def _data_rankings(tmp_path):
    return ["--dataset", "dublin-west", "--family", "plackett-luce", "--subsample", "600"]


def _data_ddcrp(tmp_path):
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 100, 300))
    x = np.where(t < 50, 0.0, 4.0) + rng.normal(size=300)
    path = tmp_path / "series.csv"
    np.savetxt(path, np.column_stack([t, x, rng.normal(size=300)]), delimiter=",",
               header="time,a,b", comments="")
    return [str(path), "--model", "ddcrp", "--decay", "window:10", "--positions", "time"]


def _data_chains(tmp_path):
    return ["--n-chains", "2"]


def _data_wide(tmp_path):
    rng = np.random.default_rng(0)
    z = rng.integers(0, 3, size=120)
    X = rng.normal(size=(120, 3000)) + z[:, None] * 0.5
    path = tmp_path / "wide.csv"
    np.savetxt(path, X, delimiter=",", fmt="%.4f",
               header=",".join(f"c{j}" for j in range(3000)), comments="")
    return [str(path), "--family", "diagonal"]


def _data_large(tmp_path):
    from dpclust.datasets import make_gaussian_mixture

    X, _ = make_gaussian_mixture(n_samples=100_000, n_clusters=6, random_state=0)
    path = tmp_path / "large.npy"
    np.save(path, X)
    return [str(path)]


KINDS = {
    "gaussian": (_data_gaussian, ["--n-iter", "100"]),
    "documents": (_data_documents, ["--n-iter", "60"]),
    "rankings": (_data_rankings, ["--n-iter", "60"]),
    "ddcrp": (_data_ddcrp, ["--n-iter", "30"]),
    "chains": (_data_chains, ["--n-iter", "60"]),
    "wide": (_data_wide, ["--n-iter", "20"]),
    "large": (_data_large, ["--n-iter", "10"]),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    """Every kind's report page (or its fit's output where the fit failed): the fits run
    side by side, each in its own process, as the suite's time asks."""
    root = tmp_path_factory.mktemp("reports")
    started = {}
    for kind, (make, extra) in KINDS.items():
        data = root / f"{kind}-data"
        data.mkdir()
        started[kind] = _start(root, kind, *make(data), *extra)
    out = {}
    for kind, (run, page) in started.items():
        code = run.wait(timeout=600)
        out[kind] = page if code == 0 else (root / f"{kind}.log").read_text()[-3000:]
    return out


@needs_browser
@pytest.mark.parametrize("kind", list(KINDS))
def test_report_reads_well_in_a_browser(reports, kind):
    page = reports[kind]
    assert isinstance(page, Path), f"dpclust fit failed for the {kind} report:\n{page}"
    record = render(BROWSER, page, SHOTS / f"{kind}.png")
    found = problems(record, MAX_HEIGHT)
    assert not found, f"{kind} report ({SHOTS / f'{kind}.png'}):\n" + "\n".join(found)
    assert record["images"], "the report has no figures"
