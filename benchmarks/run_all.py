"""Run every benchmark script in this folder (``bench_*.py``), one process each.

Usage: ``.venv/bin/python benchmarks/run_all.py [--quick] [--only NAME ...]``

``--quick`` is passed through to every script (a short smoke version).  Each script prints
its figures and writes them to ``benchmarks/results/``.  The exit status is non-zero if any
script failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Run every benchmarks/bench_*.py script.")
    p.add_argument("--quick", action="store_true", help="short smoke version of each benchmark")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="run only these scripts (e.g. bench_gibbs)")
    args = p.parse_args(argv)

    scripts = sorted(HERE.glob("bench_*.py"))
    if args.only:
        wanted = {name.removesuffix(".py") for name in args.only}
        scripts = [s for s in scripts if s.stem in wanted]
        missing = wanted - {s.stem for s in scripts}
        if missing:
            p.error(f"no such benchmark: {', '.join(sorted(missing))}")
    failed = []
    for script in scripts:
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        print(f"\n##### {script.name}{' --quick' if args.quick else ''}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, cwd=HERE.parent)
        print(f"##### {script.name}: exit {rc} after {time.perf_counter() - t0:.0f} s",
              flush=True)
        if rc != 0:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"\nall {len(scripts)} benchmark(s) done; results in {HERE / 'results'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
