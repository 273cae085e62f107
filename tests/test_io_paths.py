"""Readers that moved to dpclust.io are still found under their old path, which says where
they went, and the low layer that held them does not import dpclust.io until asked."""

import subprocess
import sys
import warnings

import pytest

import dpclust.io
import dpclust.rankings

MOVED = ["read_preflib", "read_rankings_csv"]


@pytest.mark.parametrize("name", MOVED)
def test_old_path_gives_the_same_function_and_warns_once(name, monkeypatch):
    monkeypatch.delitem(vars(dpclust.rankings), name, raising=False)  # as if never asked
    with pytest.warns(DeprecationWarning, match=rf"moved to dpclust\.io\.{name}"):
        old = getattr(dpclust.rankings, name)
    assert old is getattr(dpclust.io, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(dpclust.rankings, name) is old
        exec(f"from dpclust.rankings import {name} as again")  # the import statement too


def test_unknown_names_are_still_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'read_parquet'"):
        dpclust.rankings.read_parquet  # noqa: B018
    assert not set(MOVED) & set(dpclust.rankings.__all__)


def test_rankings_does_not_import_io():
    code = "import sys, dpclust.rankings; print('dpclust.io' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
