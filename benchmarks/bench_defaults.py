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

``--models``: instead, on the 10^5 points, what two changes of the model give where the
default does not converge within its budget (the coarsened posterior at a fixed
``coarsening``; the MFM prior, fitted by Gibbs+SAMS), each with two chains of a fixed 200
iterations in one process, against the default sampler with the same work, so that their
time per iteration and their mixing per iteration compare.  Results:
``benchmarks/results/defaults_models.{json,md}``.
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


MODELS = (("DP (the default model and sampler)", {}),
          ("coarsened, coarsening=1000", {"coarsening": 1000.0}),
          ("MFM prior (Gibbs+SAMS)", {"prior": "mfm"}))


def run_models():
    """The 10^5 points under each of :data:`MODELS`, two chains of 200 iterations."""
    X, y = _data("100,000")
    rows = []
    for label, settings in MODELS:
        r = _fit(X, y, dict(settings, n_chains=2, n_iter=200, n_jobs=1))
        r.update(model=label, s_per_iteration=r["seconds"] / (2 * r["n_iter"]))
        rows.append(r)
        print(f"{label}: {r['seconds']:.1f} s ({r['s_per_iteration']:.3f} s a chain-iteration)"
              f", R-hat {r['worst_rhat']:.3f}, ESS {r['min_ess']:.0f} of 200 draws, "
              f"K {r['n_clusters']}, NMI {r['nmi']:.3f}", flush=True)
    body = ["10^5 points from six separated 2-D Gaussians; two chains of 200 iterations each "
            "(the second half kept: 200 draws in all), in one process, in the same run. "
            "ESS: the smallest bulk or tail ESS of the rule's quantities (200 would be "
            "independent draws; the rule asks for 100 a chain).", "",
            "| model | wall time | s a chain-iteration | worst R-hat | smallest ESS | K | NMI |",
            "|---|---|---|---|---|---|---|"]
    for r in rows:
        body.append(f"| {r['model']} | {r['seconds']:.1f} s | {r['s_per_iteration']:.3f} | "
                    f"{r['worst_rhat']:.3f} | {r['min_ess']:.0f} | {r['n_clusters']} | "
                    f"{r['nmi']:.3f} |")
    write_results("defaults_models", False, {"machine": machine_info(), "rows": rows},
                  "Changes of the model at 10^5 points", body)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="the demo and 3,000 points only")
    p.add_argument("--models", action="store_true",
                   help="the coarsened posterior and the MFM prior at 10^5 points")
    args = p.parse_args(argv)
    from dpclust import DPMixture
    from dpclust.datasets import load_demo

    X, _ = load_demo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPMixture(n_iter=5, n_chains=1).fit(X)  # compile or load the kernels
        DPMixture(n_iter=5, n_chains=1, sampler="subcluster").fit(X)
        if args.models:
            for _, settings in MODELS[1:]:
                DPMixture(n_iter=3, n_chains=1, **settings).fit(X)
    if args.models:
        return run_models()
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
