"""What the convergence verdict costs: a 1,000-iteration fit on the bundled demo data with
the diagnostics (the per-iteration size summaries, R-hat and ESS, each point's certainty)
against the same fit with them switched off, alternately in one fresh process, and the
one-time cost of the first import and call of the statistics; the same for four chains in
two processes.

Usage: ``.venv/bin/python benchmarks/bench_diagnostics.py [--quick]``; writes
``benchmarks/results/diagnostics.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, write_results  # noqa: E402


def _fits(n_iter: int, n_chains: int, repeats: int, conn) -> None:
    """In a fresh process: the first import and call of what the verdict uses, then
    ``repeats`` fits with and without the diagnostics, alternately."""
    import warnings

    import dpclust.chains.runner as est
    from dpclust import DPMixture
    from dpclust.datasets import load_demo

    X, _ = load_demo()
    real = (est.ChainEstimator._check_convergence, est.size_summaries, est.point_certainty)
    off = (lambda self: None, lambda model, state: (0.0, 0), lambda draws, labels: None)

    def switch(on):
        (est.ChainEstimator._check_convergence, est.size_summaries,
         est.point_certainty) = real if on else off

    warnings.simplefilter("ignore")
    switch(False)
    DPMixture(n_iter=3, random_state=0, n_chains=1).fit(X[:50])  # numba kernels loaded
    switch(True)
    t0 = time.perf_counter()
    from dpclust.diagnostics import diagnose

    diagnose(np.random.default_rng(0).normal(size=(2, 50)))  # first import and call
    first = time.perf_counter() - t0
    times = {True: [], False: []}
    for _ in range(repeats):
        for on in (False, True):
            switch(on)
            t0 = time.perf_counter()
            DPMixture(n_iter=n_iter, random_state=0, n_chains=n_chains,
                      n_jobs=2 if n_chains > 1 else None).fit(X)
            times[on].append(time.perf_counter() - t0)
    conn.send((first, times[False], times[True]))
    conn.close()


def timed(n_iter: int, n_chains: int, repeats: int):
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_fits, args=(n_iter, n_chains, repeats, child))
    p.start()
    child.close()
    out = parent.recv()
    p.join()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n_iter = 200 if args.quick else 1000
    repeats = 1 if args.quick else 5
    out = {"machine": machine_info(), "n_iter": n_iter, "repeats": repeats, "runs": []}
    for n_chains in (1, 4):
        first, without, with_ = timed(n_iter, n_chains, repeats)
        row = {"n_chains": n_chains, "first_import_and_call_s": first, "without": without,
               "with": with_}
        med_with, med_without = np.median(with_), np.median(without)
        row["overhead"] = float(med_with / med_without - 1.0)
        out["runs"].append(row)
        print(f"{n_chains} chain(s), {n_iter} iterations on the demo data: "
              f"{med_without:.3f} s without the diagnostics, {med_with:.3f} s with "
              f"(median of {repeats}): overhead {100 * row['overhead']:.1f} %; once per "
              f"process, the first import and call: {first:.3f} s", flush=True)
    body = [f"`DPMixture(n_iter={n_iter})` on the bundled demo data (1,500 points), with the "
            "diagnostics (per-iteration size summaries, R-hat and ESS, each point's "
            "certainty) and without, alternately in one process, median of "
            f"{repeats}; four chains run in two processes (whose own size summaries stay "
            "on). Once per process, the first import and call of the verdict's statistics "
            "(`arviz_stats`) costs the last column.", "",
            "| chains | without (s) | with (s) | overhead | first import and call (s) |",
            "|---|---|---|---|---|"]
    for row in out["runs"]:
        body.append(f"| {row['n_chains']} | {np.median(row['without']):.3f} | "
                    f"{np.median(row['with']):.3f} | {100 * row['overhead']:.1f} % | "
                    f"{row['first_import_and_call_s']:.3f} |")
    write_results("diagnostics", args.quick, out, "The cost of the convergence verdict", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
