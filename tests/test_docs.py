"""The documentation builds: Sphinx with warnings as errors, the gallery's examples not run
(``make docs`` runs them), so that a docstring, a page or a link that breaks the build is
caught by the suite."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_documentation_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    out = tmp_path / "html"
    env = dict(os.environ, DPCLUST_DOCS_QUICK="1")
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)],
        capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    index = (out / "index.html").read_text()
    assert "dpclust" in index
    # the API reference is generated from the docstrings
    page = out / "api" / "generated" / "dpclust.DPMixture.html"
    assert page.exists()
    assert "n_clusters_" in page.read_text()
    # the user guide and the benchmark pages are there
    assert (out / "user_guide" / "convergence.html").exists()
    assert any((out / "benchmarks" / "results").glob("*.html"))


def test_the_docs_and_docstrings_cite_no_file_outside_the_repository():
    """The mathematics is written into the user guide (its Mathematics page, which the
    docstrings cite by section), never cited from a development file beside the clone."""
    # the benchmark scripts may say where they read the development data from; the
    # package, the pages and the records the pages show name no file there
    outside = ("ALGORITHMS.md", "/work/shared", "../shared/")
    cited = [str(p.relative_to(ROOT))
             for top in ("src", "docs", "examples", "benchmarks")
             for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".md", ".rst")
             and "_build" not in p.parts
             and not (top == "docs" and "results" in p.parts)  # the build's copies
             and any(name in p.read_text(errors="ignore")
                     for name in (outside if top != "benchmarks" or "results" in p.parts
                                  else outside[:1]))]
    assert all(name not in (ROOT / "README.md").read_text() for name in outside)
    assert cited == []
    page = (ROOT / "docs" / "user_guide" / "mathematics.md").read_text()
    assert all(f"## {n}." in page for n in range(1, 8))
