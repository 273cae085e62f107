"""The families' cached entry-point modules are what the one template makes of their specs
(``python -m dpclust.families._entry_specs`` writes them again after a change)."""

from pathlib import Path

import pytest

from dpclust.families import _entry_specs
from dpclust.kernels.entry_points import OPERATIONS, render

HERE = Path(_entry_specs.__file__).parent


@pytest.mark.parametrize("module", sorted(_entry_specs.SPECS))
def test_generated_module_is_fresh(module):
    on_disk = (HERE / f"{module}.py").read_text()
    assert on_disk == _entry_specs.source(module), (
        f"{module}.py differs from its spec, or a compiled kernel changed since it was "
        f"written: run python -m dpclust.families._entry_specs")


def test_the_modules_are_written_again_when_a_compiled_kernel_changes():
    """Numba judges a cached function by its own file alone: the generated modules carry the
    digest of the kernels they call (the generic sweeps, the families' operations), so that
    editing one makes the freshness test fail until they, and their caches, are renewed."""
    from dpclust.kernels.entry_points import kernel_sources

    sources = kernel_sources()
    for name in ("kernels/gibbs.py", "kernels/subcluster/sequential.py", "kernels/streams.py",
                 "families/_table_kernels.py", "families/_gaussian_kernels.py"):
        assert name in sources
    assert not any(s.endswith("_entry.py") or s.endswith("entry_points.py") for s in sources)
    assert "KERNEL_SOURCES" in _entry_specs.source("_table_entry")


def test_a_spec_must_name_every_operation():
    ops = {op: f"_x_{op}" for op in OPERATIONS if op != "log_marginal"}
    with pytest.raises(ValueError, match="log_marginal"):
        render("a family", "_x_kernels", ops)
    with pytest.raises(ValueError, match="unknown operations"):
        render("a family", "_x_kernels", {**ops, "log_marginal": "m", "shout": "s"})


def test_every_entry_point_is_cached_and_looked_up_by_its_name():
    from dpclust.families._gaussian_entry import ENTRY_POINTS, ENTRY_POINTS_2D

    assert set(ENTRY_POINTS) == set(ENTRY_POINTS_2D)
    assert ENTRY_POINTS_2D["data_pass"] is not ENTRY_POINTS["data_pass"]
    assert ENTRY_POINTS_2D["collapsed_sweep"] is ENTRY_POINTS["collapsed_sweep"]
    for fn in ENTRY_POINTS.values():
        assert fn._cache.__class__.__name__ != "NullCache"  # numba caches it on disk
