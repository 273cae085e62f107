"""Each family's operations, from which its cached entry-point module is generated.

A family with a numba face names here the functions of its kernel module that the
samplers' generic kernels call (:data:`dpclust.kernels.entry_points.OPERATIONS`); its
module ``_<name>_entry.py`` is made from the one template of
:mod:`dpclust.kernels.entry_points`.  After adding or changing a spec, write the modules
again::

    python -m dpclust.families._entry_specs

``tests/test_entry_points.py`` fails while a module differs from what its spec makes.
"""

from __future__ import annotations

from pathlib import Path

from ..kernels.entry_points import render


def _collapsed(prefix: str) -> dict:
    """The operations on cluster statistics, named ``<prefix>reset`` and so on."""
    names = ("reset", "add", "remove", "log_predictive", "log_marginal", "log_join_gain")
    return {op: f"{prefix}{op}" for op in names}


#: module name -> (whose entry points, kernel module, operations, variant or None)
SPECS = {
    "_gaussian_entry": (
        "the Gaussian family", "_gaussian_kernels",
        {**_collapsed("_niw_"), "log_likelihoods": "_gauss_log_likelihoods",
         "accumulate": "_gauss_accumulate", "score_block": "_gauss_score_block",
         "accumulate_block": "_gauss_accumulate_block"},
        # two features: the passes on instantiated parameters with unrolled operations
        {"name": "2D", "suffix": "_2d",
         "ops": {"log_likelihoods": "_gauss2_log_likelihoods",
                 "accumulate": "_gauss2_accumulate"}}),
    "_multinomial_entry": (
        "the multinomial (documents) family", "_multinomial_kernels",
        {**_collapsed("_dm_"), "log_predictives": "_dm_log_predictives",
         "log_likelihoods": "_dm_log_likelihoods", "accumulate": "_dm_accumulate"}, None),
    "_table_entry": (
        "the table families", "_table_kernels",
        {**_collapsed("_tab_"), "log_likelihoods": "_tab_log_likelihoods",
         "accumulate": "_tab_accumulate"}, None),
    "_gaussian_table_entry": (
        "a table with a full-covariance Gaussian", "_gaussian_table_kernels",
        {**_collapsed("gt_"), "log_likelihoods": "gt_log_likelihoods",
         "accumulate": "gt_accumulate"}, None),
    "_exposure_entry": (
        "counts over exposures (Plackett–Luce given its latents)", "_exposure_kernels",
        {**_collapsed("_pe_"), "log_likelihoods": "_pe_log_likelihoods",
         "accumulate": "_pe_accumulate"}, None),
}


def source(module: str) -> str:
    """What the spec of ``module`` (a key of :data:`SPECS`) generates."""
    title, kernels, ops, variant = SPECS[module]
    return render(title, kernels, ops, variant)


def write(directory: Path | None = None) -> list[Path]:
    """Write every generated module into ``directory`` (this package's); returns the paths
    written."""
    directory = Path(__file__).parent if directory is None else Path(directory)
    out = []
    for module in SPECS:
        path = directory / f"{module}.py"
        path.write_text(source(module))
        out.append(path)
    return out


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path}")
