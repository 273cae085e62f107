"""The first fit after a fresh install: cold (numba compiles every kernel it runs) and warm
(the compiled kernels loaded from numba's on-disk cache), for each path a default fit takes.

Each figure is one fresh Python process that imports dpclust and fits (a few iterations on
the warm-up's small data, ``dpclust.cli.warmup``); its wall time, import included, is what a
user waits.  *Cold*: numba's cache in an empty folder (``NUMBA_CACHE_DIR``), as after a
fresh install; *warm*: the same command again, the cache now filled.  The demo row is the
fit of the bundled demo data (1,500 points) with a fixed amount of work, one chain of 200
iterations (the default before the defaults ran four chains until they converge, whose
time, set by the sampling, ``bench_defaults.py`` measures): cold, then after the
install-time warm-up (``python -m dpclust.cli.warmup --all``, which ``make install`` runs)
in a fresh cache, then warm.

Results: ``benchmarks/results/first_fit.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_first_fit.py [--all]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import machine_info, write_results  # noqa: E402

CASE = """
import time, warnings
t0 = time.perf_counter()
from dpclust.cli.warmup import {cases}, warm_up
import io
case = [c for c in {cases} if c[0] == {name!r}]
warm_up(case, out=io.StringIO())
print("SECONDS", time.perf_counter() - t0)
"""

DEMO = """
import time, warnings
t0 = time.perf_counter()
from dpclust import DPMixture
from dpclust.datasets import load_demo
warnings.simplefilter("ignore")
X, _ = load_demo()
DPMixture(n_chains=1, n_iter=200, random_state=0).fit(X)
print("SECONDS", time.perf_counter() - t0)
"""


def _timed(code: str, cache: Path) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(HERE.parent / "src"))
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=1800)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return wall


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--all", action="store_true", help="every family and sampler")
    args = p.parse_args(argv)
    from dpclust.cli.warmup import DEFAULT_CASES, MORE_CASES

    rows = []
    names = [("DEFAULT_CASES", c[0]) for c in DEFAULT_CASES]
    if args.all:
        names += [("MORE_CASES", c[0]) for c in MORE_CASES]
    for group, name in names:
        with tempfile.TemporaryDirectory() as tmp:
            code = CASE.format(cases=group, name=name)
            cold = _timed(code, Path(tmp))
            warm = _timed(code, Path(tmp))
        rows.append({"case": name, "cold_s": cold, "warm_s": warm})
        print(f"  {name}: cold {cold:.1f} s, warm {warm:.1f} s", flush=True)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tmp2:
        cold = _timed(DEMO, Path(tmp))
        t0 = time.perf_counter()
        env = dict(os.environ, NUMBA_CACHE_DIR=tmp2, PYTHONPATH=str(HERE.parent / "src"))
        subprocess.run([sys.executable, "-m", "dpclust.cli.warmup", "--all"], env=env, check=True,
                       capture_output=True, timeout=3600)
        install = time.perf_counter() - t0
        after = _timed(DEMO, Path(tmp2))
        warm = _timed(DEMO, Path(tmp2))
    demo = {"cold_s": cold, "warm_up_s": install, "after_warm_up_s": after, "warm_s": warm}
    print(f"  demo (one chain, 200 iterations): cold {cold:.1f} s; install-time warm-up "
          f"{install:.0f} s, "
          f"then {after:.1f} s; warm {warm:.1f} s", flush=True)
    body = ["Wall time of a fresh process that imports dpclust and fits (import included): "
            "cold = numba's cache empty (a fresh install), warm = the cache filled.", "",
            "| path | cold | warm |", "|---|---|---|"]
    body += [f"| {r['case']} | {r['cold_s']:.1f} s | {r['warm_s']:.1f} s |" for r in rows]
    body += ["", "A fit of the demo data (1,500 points, one chain of 200 iterations):", "",
             "| cold | install-time warm-up (`make install`) | first fit after it | warm |",
             "|---|---|---|---|",
             f"| {cold:.1f} s | {install:.0f} s | {after:.1f} s | {warm:.1f} s |"]
    write_results("first_fit", False, {"machine": machine_info(), "cases": rows,
                                       "demo": demo}, "The first fit: cold and warm", body)


if __name__ == "__main__":
    main()
