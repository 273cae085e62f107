"""A newcomer's first minute, measured in one run beside its baselines.

* **Import**: ``import dpclust`` and ``from dpclust import DPMixture`` against ``import
  sklearn.mixture`` and ``from sklearn.mixture import BayesianGaussianMixture``, each a fresh
  Python process (median of ``--repeats``, the four taken in turn so that a drift of the
  machine's speed hits them alike).
* **The first command**: ``dpclust fit --n-iter 200`` on the bundled demo, in a fresh
  process: *cold*, numba's cache in an empty folder (``NUMBA_CACHE_DIR``) as after a fresh
  install without its warm-up; *after warm-up*, the same after ``python -m
  dpclust.cli.warmup`` (which ``make install`` runs) filled that cache; *warm*, once more.
* **The demo's default fit**: ``DPMixture(random_state=0).fit(load_demo())`` (four chains
  until the convergence rule passes), its time and its length against the shortest length
  at which the rule passes on the same chains (each prefix of the trace judged with the
  burn-in half of it): the adaptive length's overshoot.

Results: ``benchmarks/results/first_minute.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_first_minute.py [--repeats 7]`` (about two minutes
on two cores; nothing else should run meanwhile).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import machine_info, write_results  # noqa: E402

IMPORTS = {"import dpclust": "import dpclust",
           "from dpclust import DPMixture": "from dpclust import DPMixture",
           "import sklearn.mixture": "import sklearn.mixture",
           "from sklearn.mixture import BayesianGaussianMixture":
               "from sklearn.mixture import BayesianGaussianMixture"}
TIMED = "import time; t0 = time.perf_counter(); {stmt}; print(time.perf_counter() - t0)"


def _python(code: str, env=None) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=1800)
    if run.returncode:
        raise RuntimeError(run.stderr[-2000:])
    return run.stdout


def import_times(repeats: int) -> dict:
    times = {name: [] for name in IMPORTS}
    for _ in range(repeats):
        for name, stmt in IMPORTS.items():
            times[name].append(float(_python(TIMED.format(stmt=stmt)).split()[-1]))
    return {name: statistics.median(t) for name, t in times.items()}


def first_command(out: Path) -> dict:
    """Wall seconds of ``dpclust fit --n-iter 200`` on the demo: cold, after the warm-up,
    warm (each a fresh process)."""
    cli = [sys.executable, "-m", "dpclust", "fit", "--n-iter", "200", "--random-state", "0",
           "--no-progress", "--out", str(out)]
    result = {}
    with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as warmed:
        for name, cache, warm_up in (("cold", cold, False), ("after warm-up", warmed, True),
                                     ("warm", warmed, False)):
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            if warm_up:
                subprocess.run([sys.executable, "-m", "dpclust.cli.warmup"], env=env,
                               capture_output=True, check=True, timeout=1800)
            t0 = time.perf_counter()
            subprocess.run(cli, env=env, capture_output=True, check=True, timeout=1800)
            result[name] = time.perf_counter() - t0
    return result


def default_fit() -> dict:
    import warnings

    from dpclust import DPMixture
    from dpclust.datasets import load_demo
    from dpclust.diagnostics import first_passing_length
    from dpclust.metrics import nmi

    X, y = load_demo()
    DPMixture(n_chains=1, n_iter=20, random_state=1).fit(X[:200])  # kernels loaded
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(random_state=0).fit(X)
    seconds = time.perf_counter() - t0
    first = first_passing_length(m.trace_, start=200, step=10)
    return {"seconds": seconds, "n_iter": int(m.n_iter_), "first_passing_length": first,
            "overshoot": m.n_iter_ / first if first else None,
            "converged": bool(m.convergence_["converged"]), "K": int(m.n_clusters_),
            "nmi": float(nmi(m.labels_, y)), "processes": int(m.n_processes_)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    imports = import_times(args.repeats)
    base = imports["import sklearn.mixture"]
    for name, s in imports.items():
        print(f"{name:<52} {s:6.2f} s  ({s / base:.2f} x sklearn.mixture)")
    with tempfile.TemporaryDirectory() as out:
        command = first_command(Path(out) / "run")
    for name, s in command.items():
        print(f"dpclust fit --n-iter 200 (demo), {name:<14} {s:6.1f} s")
    fit = default_fit()
    print(f"default fit of the demo: {fit['seconds']:.1f} s, {fit['n_iter']} iterations a "
          f"chain; the rule first passes at {fit['first_passing_length']} "
          f"({fit['overshoot']:.2f} x); K {fit['K']}, NMI {fit['nmi']:.3f}")
    payload = {"machine": machine_info(), "repeats": args.repeats, "imports": imports,
               "first_command": command, "default_fit": fit}
    body = ["| import | seconds (median) | × `import sklearn.mixture` |", "|---|---|---|"]
    body += [f"| `{name}` | {s:.2f} | {s / base:.2f} |" for name, s in imports.items()]
    body += ["", "| `dpclust fit --n-iter 200` on the demo, a fresh process | seconds |",
             "|---|---|"]
    body += [f"| {name} | {s:.1f} |" for name, s in command.items()]
    body += ["", f"The demo's default fit (`DPMixture(random_state=0)`, four chains until "
             f"the rule passes): {fit['seconds']:.1f} s, {fit['n_iter']:,} iterations a "
             f"chain in {fit['processes']} process(es); the rule first passes on the same "
             f"chains at {fit['first_passing_length']:,} iterations, so the run is "
             f"{fit['overshoot']:.2f}× that; K {fit['K']}, NMI {fit['nmi']:.3f}, converged "
             f"{fit['converged']}."]
    write_results("first_minute", False, payload, "The first minute", body)


if __name__ == "__main__":
    main()
