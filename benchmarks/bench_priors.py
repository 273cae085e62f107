"""How many clusters? The posterior of K under the Dirichlet process, Pitman–Yor and the
mixture of finite mixtures, side by side on the same data.

Two data sets: the bundled demo (1,500 points, six separated Gaussians) and 2,000 points
from three overlapping 2-D Gaussians (the agreement benchmark's data).  Each prior is fitted
by collapsed Gibbs (exact for all three), four chains, the second half of each kept; the
table gives the posterior of K (all clusters) and of K counting clusters with at least 1 %
of the points, and the figure plots P(K).  The DP's posterior keeps a tail of small
clusters that grows with N (Miller & Harrison 2013); the MFM's concentrates on the number
of components; Pitman–Yor with a positive discount has more small clusters still.

Usage: ``.venv/bin/python benchmarks/bench_priors.py [--quick]``; writes
``benchmarks/results/priors.json``, ``.md`` and ``priors.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, write_results  # noqa: E402

PRIORS = (("DP, alpha = 1", "dp"), ("Pitman-Yor(0.25, 1)", "pitman-yor:0.25,1"),
          ("MFM(gamma = 1, K - 1 ~ Poisson(1))", "mfm:1,poisson:1"))


def fit(X, prior, n_iter, seed):
    from dpclust import DPMixture

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(prior=prior, sampler="gibbs", n_iter=n_iter, n_chains=4, n_jobs=2,
                      random_state=seed).fit(X)
    half = n_iter // 2
    k = np.asarray(m.trace_.n_clusters)[:, half:].ravel()
    k1 = np.asarray(m.trace_.n_large_clusters)[:, half:].ravel()
    return {"E_K": float(k.mean()), "E_K_1pct": float(k1.mean()),
            "P_K": {str(int(v)): float((k == v).mean()) for v in np.unique(k)},
            "P_K_1pct": {str(int(v)): float((k1 == v).mean()) for v in np.unique(k1)},
            "converged": bool(m.convergence_["converged"]),
            "seconds": time.perf_counter() - t0}


def plot(out, path):
    from dpclust.utils.plotting import import_matplotlib, new_figure, save_figure, style_axes

    mpl = import_matplotlib()
    fig = new_figure(mpl, (10.0, 3.4))
    axes = fig.subplots(1, len(out["data"]))
    for ax, (name, runs) in zip(np.atleast_1d(axes), out["data"].items()):
        width = 0.8 / len(runs)
        for j, r in enumerate(runs):
            ks = np.array([int(v) for v in r["P_K"]])
            ps = np.array(list(r["P_K"].values()))
            ax.bar(ks + (j - (len(runs) - 1) / 2) * width, ps, width=width, label=r["prior"])
        ax.set_title(name)
        ax.set_xlabel("number of clusters K")
        ax.set_ylabel("posterior probability")
        ax.xaxis.set_major_locator(mpl.MaxNLocator(integer=True))
        style_axes(ax)
    np.atleast_1d(axes)[0].legend(frameon=False, fontsize=8)
    save_figure(fig, path)


def main(argv=None) -> int:
    from dpclust.datasets import load_demo, make_gaussian_mixture

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--replot", action="store_true",
                    help="draw the figure again from the stored results, fitting nothing")
    args = ap.parse_args(argv)
    suffix = "_quick" if args.quick else ""
    if args.replot:
        import json

        plot(json.loads((HERE / "results" / f"priors{suffix}.json").read_text()),
             HERE / "results" / f"priors{suffix}.png")
        return 0
    n_iter = 200 if args.quick else 1000
    demo, _ = load_demo()
    overlap, _ = make_gaussian_mixture(600 if args.quick else 2000, 3, separation=1.0,
                                       random_state=7)
    data = {"demo (1,500 points, 6 Gaussians)": demo,
            f"{len(overlap):,} points, 3 overlapping Gaussians": overlap}
    out = {"machine": machine_info(), "iterations": n_iter, "chains": 4, "data": {}}
    for name, X in data.items():
        out["data"][name] = []
        for label, spec in PRIORS:
            r = fit(X, spec, n_iter, 0)
            r.update(prior=label, spec=spec)
            out["data"][name].append(r)
            print(f"{name:40s} {label:36s} E[K] {r['E_K']:.2f}, E[K >= 1 %] "
                  f"{r['E_K_1pct']:.2f}, {r['seconds']:.0f} s, converged={r['converged']}",
                  flush=True)
    plot(out, HERE / "results" / f"priors{suffix}.png")
    body = [f"Collapsed Gibbs, 4 chains of {n_iter:,} iterations from 10 random clusters, the "
            "second half of each kept. K: all clusters; K >= 1 %: clusters holding at least "
            f"1 % of the points. Figure: `priors{suffix}.png` (P(K)).", ""]
    for name, runs in out["data"].items():
        body += [f"### {name}", "", "| prior | E[K] | P(K), most probable values | "
                 "E[K >= 1 %] | converged | seconds |", "|---|---|---|---|---|---|"]
        for r in runs:
            top = sorted(r["P_K"].items(), key=lambda kv: -kv[1])[:4]
            pk = ", ".join(f"{k}: {p:.2f}" for k, p in sorted(top, key=lambda kv: int(kv[0])))
            body.append(f"| {r['prior']} | {r['E_K']:.2f} | {pk} | {r['E_K_1pct']:.2f} | "
                        f"{'yes' if r['converged'] else 'no'} | {r['seconds']:.0f} |")
        body.append("")
    write_results("priors", args.quick, out, "The posterior of K under three priors", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
