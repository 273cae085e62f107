"""What a default fit gives on easy data: the defaults before (one chain of 200 iterations)
and now (four chains, made longer until they pass the convergence rule, within
``max_iter`` and ``max_time``; the chains move to processes when the run proves long).

For each data set, in the same run (so that the machine's speed is the same for both):

* *before*: ``DPMixture(n_chains=1, n_iter=200, n_jobs=1)``, the earlier defaults;
* *now*: ``DPMixture()``.

Each row gives the wall time, the iterations per chain, the processes that ran the chains,
the verdict of the rule and whether ``fit`` warned, the worst R-hat and smallest ESS
(against what the rule needs), the number of clusters and the NMI to the generating labels.

Data: the bundled demo (1,500 points, six 2-D clusters), 3,000 points from six separated
2-D Gaussians (``make_gaussian_mixture(3000, 6, random_state=0)``) and 10^5 points of the
same kind (``--quick``: the first two only).

Results: ``benchmarks/results/defaults.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_defaults.py [--quick]``.
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

from _common import machine_info, write_results  # noqa: E402

BEFORE = dict(n_chains=1, n_iter=200, n_jobs=1)


def _data(name):
    from dpclust.datasets import load_demo, make_gaussian_mixture

    if name == "demo":
        return load_demo()
    n = {"3,000": 3000, "100,000": 100_000}[name]
    return make_gaussian_mixture(n_samples=n, n_clusters=6, random_state=0)


def _fit(X, y, settings):
    from dpclust import DPMixture
    from dpclust.diagnostics import ESS_PER_CHAIN
    from dpclust.metrics import nmi

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        m = DPMixture(random_state=0, **settings).fit(X)
    wall = time.perf_counter() - t0
    conv = m.convergence_
    names = [q for q in ("log_likelihood", "n_clusters", "size_entropy", "alpha") if q in conv]
    return {"seconds": wall, "n_iter": int(m.n_iter_), "n_chains": int(conv["n_chains"]),
            "processes": int(m.n_processes_), "converged": bool(conv["converged"]),
            "warned": any("not converged" in str(w.message) for w in caught),
            "failing": conv["failing"],
            "worst_rhat": max(conv[q]["rhat"] for q in names),
            "min_ess": min(min(conv[q]["ess_bulk"], conv[q]["ess_tail"]) for q in names),
            "ess_needed": ESS_PER_CHAIN * conv["n_chains"],
            "n_clusters": int(m.n_clusters_), "nmi": float(nmi(y, m.labels_))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="the demo and 3,000 points only")
    args = p.parse_args(argv)
    from dpclust import DPMixture
    from dpclust.datasets import load_demo

    X, _ = load_demo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPMixture(n_iter=5, n_chains=1).fit(X)  # compile or load the kernels
        DPMixture(n_iter=5, n_chains=1, sampler="subcluster").fit(X)
    names = ["demo", "3,000"] + ([] if args.quick else ["100,000"])
    rows = []
    for name in names:
        X, y = _data(name)
        for label, settings in (("before", BEFORE), ("now", {})):
            r = _fit(X, y, settings)
            r.update(data=name, defaults=label)
            rows.append(r)
            print(f"{name:>8} {label:>6}: {r['seconds']:6.1f} s, {r['n_iter']:>6} it x "
                  f"{r['n_chains']} chains in {r['processes']} process(es), converged "
                  f"{r['converged']}, warned {r['warned']}, R-hat {r['worst_rhat']:.3f}, "
                  f"ESS {r['min_ess']:.0f}/{r['ess_needed']}, K {r['n_clusters']}, "
                  f"NMI {r['nmi']:.3f}", flush=True)
    body = ["A default `DPMixture().fit(X)` against the earlier defaults (one chain of 200 "
            "iterations), in the same run. ESS: the smallest bulk or tail ESS of the rule's "
            "quantities, against what the rule needs (100 per chain).", "",
            "| data | defaults | wall time | iterations × chains | processes | converged "
            "| warned | worst R-hat | smallest ESS | K | NMI |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        body.append(f"| {r['data']} | {r['defaults']} | {r['seconds']:.1f} s | "
                    f"{r['n_iter']:,} × {r['n_chains']} | {r['processes']} | "
                    f"{'yes' if r['converged'] else 'no'} | {'yes' if r['warned'] else 'no'} "
                    f"| {r['worst_rhat']:.3f} | {r['min_ess']:.0f} / {r['ess_needed']} | "
                    f"{r['n_clusters']} | {r['nmi']:.3f} |")
    write_results("defaults", args.quick, {"machine": machine_info(), "rows": rows},
                  "The default fit: before and now", body)


if __name__ == "__main__":
    main()
