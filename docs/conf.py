"""Sphinx configuration of dpclust's documentation (``make docs``).

The API reference is generated from the numpydoc docstrings (autosummary), the user guide is
written in Markdown (MyST), and the gallery (``examples/``) is run at build time by
sphinx-gallery.  ``DPCLUST_DOCS_QUICK=1`` builds everything but runs no example (the quick
build that ``make test`` checks).

Why Sphinx rather than MkDocs: the docstrings are numpydoc reStructuredText already, and
numpydoc, autosummary and sphinx-gallery are what scikit-learn, PyMC and ArviZ build with, so
the API reference and the gallery come from the tools the field's users know, with
cross-references between them; MyST keeps the user guide in Markdown, readable on the
repository as well.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import dpclust  # noqa: E402

project = "dpclust"
author = "dpclust developers"
copyright = "dpclust developers"
release = version = dpclust.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

QUICK = os.environ.get("DPCLUST_DOCS_QUICK", "") not in ("", "0")

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "user_guide/_generated_*.md"]

# the samplers' table of the user guide, from the registry (each sampler's own description)
from dpclust.samplers.registry import samplers_table  # noqa: E402

(HERE / "user_guide" / "_generated_samplers.md").write_text(samplers_table())
templates_path = ["_templates"]

# the API reference: one page per public object, from its docstring
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "plot_gallery": "False" if QUICK else "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
}

html_theme = "pydata_sphinx_theme"
html_title = "dpclust"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_static_path: list[str] = []
html_show_sourcelink = False


def _copy_benchmark_results() -> None:
    """``benchmarks/results/*.md`` and the figures they show, into ``benchmarks/results/``
    of the documentation (the benchmark pages), and the benchmarks' README as their
    overview; quick runs' records (``*_quick.md``) are left out."""
    import shutil

    src = HERE.parent / "benchmarks" / "results"
    dest = HERE / "benchmarks" / "results"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for path in sorted(src.glob("*")):
        if path.suffix == ".png" or (path.suffix == ".md" and not path.stem.endswith("_quick")):
            shutil.copy2(path, dest / path.name)


_copy_benchmark_results()

# the benchmark pages are the scripts' own records, whose headings start at any level
suppress_warnings = ["myst.header"]
