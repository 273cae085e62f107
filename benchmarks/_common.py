"""Helpers shared by the benchmark scripts: what machine and versions produced a figure."""

from __future__ import annotations

import datetime
import os
import platform
from importlib import metadata
from pathlib import Path

import numpy as np

import dpclust


def rss_mib():
    """``(current, peak)`` resident memory of this process in MiB, from ``/proc/self/status``
    (``VmRSS``, ``VmHWM``); ``(None, None)`` where there is no ``/proc``.  ``VmHWM`` is the
    high-water mark of this process's own address space: ``getrusage``'s ``ru_maxrss`` is
    kept across ``execve``, so in a spawned process it also counts the parent's memory at
    the fork (a benchmark whose parent held 6.8 GiB read 6,989 MiB for every child)."""
    try:
        fields = {line.split(":")[0]: line.split(":")[1] for line in
                  Path("/proc/self/status").read_text().splitlines()
                  if line.startswith(("VmRSS", "VmHWM"))}
        return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)
    except (OSError, KeyError, ValueError):
        return None, None


def peak_rss_mib() -> float:
    """This process's peak resident memory in MiB: :func:`rss_mib`'s ``VmHWM``, or where
    there is no ``/proc`` ``ru_maxrss`` (in a spawned process a bound from above: it counts
    the parent's memory at the fork)."""
    peak = rss_mib()[1]
    if peak is None:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak


def reset_peak_rss() -> bool:
    """Start this process's peak-memory mark afresh (Linux: ``5 > /proc/self/clear_refs``), so
    that the peak :func:`rss_mib` reads next belongs to what runs from now on; False where
    that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _load_average():
    """1, 5 and 15 minute load averages (a noisy machine shows here), or None."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpus_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu_model": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            "dpclust": dpclust.__version__,
            "numpy": np.__version__,
            "numba": version("numba"),
            "scikit-learn": version("scikit-learn"),
            "scipy": version("scipy"),
            "torch": version("torch"),
            "dpgmm": version("dpgmm"),
        },
        "load_average_start": _load_average(),
    }


def save_results(stem: Path, payload: dict, write_markdown) -> None:
    """Merge ``payload`` into ``stem.json`` (running some parts keeps the others' last
    figures) and rewrite ``stem.md`` from the merged record with ``write_markdown``."""
    import json

    json_path = stem.with_suffix(".json")
    old = json.loads(json_path.read_text()) if json_path.exists() else {}
    old.update(payload)
    json_path.write_text(json.dumps(old, indent=1))
    write_markdown(old, stem.with_suffix(".md"))
    print(f"\nwritten: {json_path} and {stem.with_suffix('.md')}")


def write_results(name: str, quick: bool, payload: dict, title: str, body: list) -> None:
    """Write ``results/NAME.json`` (``payload``, with its ``machine``) and ``NAME.md``: the
    title, the machine and date, then the lines ``body`` (``NAME_quick`` with ``quick``)."""
    import json

    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    stem = results / (name + ("_quick" if quick else ""))
    stem.with_suffix(".json").write_text(json.dumps(payload, indent=1))
    m = payload["machine"]
    lines = [f"# {title}", "", f"Machine: {m['cpu_model']}, {m['cpus_available']} cores; "
             f"{m['date']}.", "", *body]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")


def table_lines(rows: list) -> list[str]:
    """A Markdown table of ``rows`` (dicts), one column per key of the first row."""
    keys = list(rows[0])
    return (["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            + ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows])


def rows_markdown(part: str, title: str):
    """A ``write_markdown`` for :func:`run_parts` whose one part returns ``{"rows": [...]}``:
    the title, then the rows as a table."""

    def write(record: dict, path: Path) -> None:
        rows = (record.get(part) or {}).get("rows") or []
        lines = [f"# {title}", ""] + (table_lines(rows) if rows else [])
        path.write_text("\n".join(lines) + "\n")

    return write


def run_parts(parts, run_part, stem: Path, quick: bool, warm_up, write_markdown,
              record=None) -> None:
    """Warm up, run each named part with ``run_part(part) -> result dict or None``, note
    when and under what load each ran (plus ``record()``, if given), and save the merged
    results under ``stem`` (``stem_quick`` with ``quick``)."""
    import time

    payload = {"machine": machine_info(), "quick": quick}
    t0 = time.perf_counter()
    warm_up()
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.1f} s", flush=True)
    for part in parts:
        print(f"\n== {part}", flush=True)
        t0 = time.perf_counter()
        started = {"date": machine_info()["date"], "load_average_start": _load_average()}
        if record is not None:
            started.update(record())
        res = run_part(part)
        print(f"  ({part}: {time.perf_counter() - t0:.0f} s)", flush=True)
        if res is not None:  # when and under what load each part ran (parts are kept)
            res.update(started, part_seconds=time.perf_counter() - t0,
                       load_average_end=_load_average())
            payload[part] = res
    payload["machine"]["load_average_end"] = _load_average()
    stem.parent.mkdir(exist_ok=True)
    save_results(stem.with_name(stem.name + ("_quick" if quick else "")), payload,
                 write_markdown)

