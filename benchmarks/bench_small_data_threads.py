"""Small data beside a second process: does a chain on a handful of points keep its speed
when another process runs on the other core?

numba's parallel regions on a few points cost more to start than their work, and between
regions the OpenMP pool's idle threads spin, waiting for the next one: a process whose
regions run on two threads keeps both cores busy while it does one core's work, and two such
processes on two cores slow each other down many times over.  dpclust runs the regions over
small work on one thread (:mod:`dpclust.utils.threads`); this script measures it.

For each case, a chain of fixed length runs (a) alone in this process and (b) at the same
time as the same chain in a second process (started and warmed first).  The figures:

* ``alone_s`` and ``beside_s``: this process's wall time for the chain, and their ratio
  ``slowdown`` (1 is ideal: each process has a core);
* ``cpu_per_thread``: this process's CPU time over its main thread's during the chain
  alone: about 1 when no other thread works, 2 when an idle thread spins beside it.

Cases (all tiny, as the exactness tests and small real tables are):

* ``subcluster-gaussian``: the sub-cluster sampler on 5 two-dimensional points;
* ``gibbs-documents-learned``: collapsed Gibbs on 5 documents with the Dirichlet
  concentration learned (its marginal is recomputed at every update);
* ``mallows-slice-gibbs``: the Mallows slice-Gibbs sampler on 5 top-t rankings of 4 items.

Results: ``benchmarks/results/small_data_threads.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_small_data_threads.py [--quick]`` (about a minute;
nothing else should run meanwhile: the figures need both cores).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from _common import machine_info, write_results  # noqa: E402

CASES = {"subcluster-gaussian": 3_000, "gibbs-documents-learned": 20_000,
         "mallows-slice-gibbs": 10_000}


def _case(name):
    """``(sampler, model)`` of a case."""
    import scipy.sparse as sp

    from dpclust.families import DirichletMultinomial, NormalInverseWishart
    from dpclust.samplers import CollapsedGibbs, GammaPrior, MixtureModel, SubclusterSplitMerge

    if name == "subcluster-gaussian":
        X = np.array([[0.0, 0.0], [0.4, 0.1], [1.5, 1.2], [1.8, 1.4], [0.9, 0.8]])
        fam = NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=4.0,
                                   scale=np.eye(2)).resolve(X)
        return SubclusterSplitMerge(), MixtureModel(fam, X)
    if name == "gibbs-documents-learned":
        X = sp.csr_matrix(np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 0, 2, 3], [0, 1, 3, 2],
                                    [1, 1, 1, 1]], dtype=float))
        fam = DirichletMultinomial(concentration=GammaPrior(1.0, 10.0)).resolve(X)
        return CollapsedGibbs(), MixtureModel(fam, X)
    from dpclust.families.mallows import GeneralizedMallows
    from dpclust.rankings import check_rankings
    from dpclust.samplers.mallows import SliceGibbs

    X = check_rankings([[0, 1, 2], [0, 1], [1, 0, 3], [3, 2], [3, 2, 1]], n_items=4)
    return SliceGibbs(n_gibbs=3), MixtureModel(GeneralizedMallows().resolve(X), X)


def run_case(name, n_steps, seed=0):
    """``(wall seconds, process CPU / main-thread CPU)`` of a chain of ``n_steps``."""
    from dpclust.exact import run_chain

    sampler, model = _case(name)
    t0, p0, h0 = time.perf_counter(), time.process_time(), time.thread_time()
    run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=0,
              init_kwargs={"alpha": 1.0})
    t1, p1, h1 = time.perf_counter(), time.process_time(), time.thread_time()
    return t1 - t0, (p1 - p0) / max(h1 - h0, 1e-9)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short chains")
    args = p.parse_args(argv)
    scale = 0.2 if args.quick else 1.0
    rows = []
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as other:
        for name, steps in CASES.items():
            n = max(50, int(steps * scale))
            other.submit(run_case, name, 50).result()  # warm both processes
            run_case(name, 50)
            alone, cpu = run_case(name, n)
            future = other.submit(run_case, name, n)
            time.sleep(0.5)  # the other process has started its chain
            beside, _ = run_case(name, n)
            future.result()
            rows.append({"case": name, "steps": n, "alone_s": round(alone, 2),
                         "beside_s": round(beside, 2), "slowdown": round(beside / alone, 2),
                         "cpu_per_thread": round(cpu, 2)})
            print(rows[-1], flush=True)
    lines = ["| case | steps | alone (s) | beside a second process (s) | slowdown | "
             "CPU / main-thread CPU |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['steps']:,} | {r['alone_s']} | {r['beside_s']} | "
              f"{r['slowdown']} | {r['cpu_per_thread']} |" for r in rows]
    write_results("small_data_threads", args.quick, {"machine": machine_info(), "rows": rows},
                  "A chain on a few points, alone and beside a second process", lines)
    print("\n".join(lines))

if __name__ == "__main__":
    main()
