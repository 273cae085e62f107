"""The diagonal Gaussian family (``family="diagonal"``): speed in many dimensions, and its
fit against the full-covariance family where both fit.

A script of its own rather than a part of ``bench_highdim.py``: that one measures the full
covariance's blocked (BLAS) pass against the GEMM ceiling and scikit-learn, and its run
already takes ~5 minutes; this one compares two families of the library on the same data.

Parts (``--parts``):

* ``speed``: N = 10^5, d = 256, ten Gaussians with diagonal covariances.  In one process:
  a roofline floor (one NumPy pass of the N x K x d diagonal Gaussian log-densities, K = 30
  components: 10 clusters and their 20 sub-clusters, written as two GEMMs); then
  ``DPMixture(family="diagonal", sampler="auto")`` (which picks the sub-cluster sampler
  from 5,000 points) and the same with ``SubclusterSplitMerge(sequential=False)`` (the EM
  launches instead of the sequential allocations the diagonal family gets by default,
  since its pass is not blocked); and the full-covariance family
  (``family="gaussian"``) on the first ``--full-n`` rows of the same data (10^5 x 256 is
  too slow for it; 20,000 is above the 10,000 rows up to which its pass is collapsed), all
  as per-row-per-iteration costs.  Seconds per iteration are the
  median over iterations after the first (``trace_.seconds``), so compile time and the
  first iteration are left out; each fit is profiled (cProfile; the work is in compiled
  kernels, so its overhead is small) to say which kernel the time goes to.
* ``nmi``: both families, the same sampler (``"auto"``: collapsed Gibbs below 5,000
  points, so at the default ``--nmi-n 4000``; from 5,000 the sub-cluster sampler runs up to
  16 rounds of sequential moves an iteration, ~1 s an iteration for either family even at
  d = 2 on two loaded cores, too slow for twelve fits here), the same iterations and seed, on (a) ten well-separated Gaussians with diagonal
  covariances and (b) ``make_gaussian_mixture`` (random rotations: correlated
  coordinates, ellipses up to 5:1, where a diagonal model needs more clusters), d = 2,
  10, 50: NMI against the truth (scikit-learn's ``normalized_mutual_info_score`` of the
  point estimate), K found, and seconds per iteration.

Figures are printed and written to ``benchmarks/results/diagonal.{json,md}``
(``--quick``: ``diagonal_quick.*``, smaller data, ~1 minute).

Run: ``.venv/bin/python benchmarks/bench_diagonal.py [--quick] [--parts speed nmi]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import peak_rss_mib, reset_peak_rss, rss_mib, run_parts

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.samplers import SubclusterSplitMerge

#: the compiled kernels a profile names, and what to call them in the table
KERNELS = {
    "_sequential_moves": "sequential allocations",
    "_sequential_multiway": "multi-way moves",
    "_subcluster_pass": "data pass",
    "_launch_pass": "EM launches",
    "table_stats": "table_stats (NumPy)",
    "rows_by_move": "rows_by_move",
}


def make_diagonal_mixture(n, n_clusters, d, *, separation=3.0, random_state=None):
    """Ten-ish well-separated Gaussians with diagonal covariances: weights Dirichlet(5),
    standard deviations Uniform(0.2, 1) per coordinate, means uniform in a cube, two means
    at least ``separation * (max sd_j + max sd_k)`` apart (as ``make_gaussian_mixture``,
    without the rotations)."""
    rng = np.random.default_rng(random_state)
    sd = rng.uniform(0.2, 1.0, (n_clusters, d))
    smax = sd.max(axis=1)
    side = 4.0 * separation * n_clusters ** (1.0 / d)
    means = []
    while len(means) < n_clusters:
        m = rng.uniform(-side, side, d)
        k = len(means)
        if all(np.linalg.norm(m - means[j]) >= separation * (smax[j] + smax[k])
               for j in range(k)):
            means.append(m)
    means = np.array(means)
    w = rng.dirichlet(np.full(n_clusters, 5.0))
    y = np.concatenate([np.arange(n_clusters),
                        rng.choice(n_clusters, n - n_clusters, p=w)])
    rng.shuffle(y)
    X = means[y] + sd[y] * rng.standard_normal((n, d))
    return X, y.astype(np.int64)


def roofline(X, n_components=30, repeats=3):
    """Best seconds of one NumPy pass of the N x K x d diagonal Gaussian log-densities:
    ``-0.5 sum_j tau_kj (x_j - mu_kj)^2 + c_k`` as ``(X*X) @ A + X @ B + c`` (two GEMMs
    of N x d by d x K and an N x K add), the floor for a data pass that scores every point
    against K components."""
    rng = np.random.default_rng(1)
    d = X.shape[1]
    mu = rng.standard_normal((n_components, d))
    tau = rng.uniform(1.0, 25.0, (n_components, d))
    A = np.ascontiguousarray((-0.5 * tau).T)
    B = np.ascontiguousarray((tau * mu).T)
    c = 0.5 * np.log(tau / (2 * np.pi)).sum(axis=1) - 0.5 * (tau * mu * mu).sum(axis=1)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = (X * X) @ A
        out += X @ B
        out += c
        best = min(best, time.perf_counter() - t0)
    return best


def timed_fit(X, family, sampler, n_iter, seed=0, profile=False):
    """Fit; per-iteration seconds (median after the first, from the trace), wall seconds of
    the whole fit, K, and (``profile``) the seconds in each compiled kernel per iteration."""
    est = DPMixture(family=family, sampler=sampler, n_iter=n_iter, random_state=seed, n_chains=1)
    prof = cProfile.Profile() if profile else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations: no convergence verdict wanted
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        est.fit(X)
        if prof:
            prof.disable()
        wall = time.perf_counter() - t0
    seconds = np.asarray(est.trace_.seconds[0], dtype=float)  # one chain: chain 0
    secs = np.diff(seconds)
    out = {"family": family, "n_samples": len(X), "n_features": X.shape[1],
           "n_iter": n_iter, "fit_s": wall, "s_per_iter": float(np.median(secs)),
           "s_per_iter_min": float(secs.min()), "s_per_iter_max": float(secs.max()),
           "first_iter_s": float(seconds[0]),
           "sampling_s": float(seconds[-1]),
           "k": int(est.n_clusters_), "labels": est.labels_}
    if prof:
        st = pstats.Stats(prof).stats
        kern = {}
        for (_, _, fn), v in st.items():
            if fn in KERNELS:
                kern[KERNELS[fn]] = kern.get(KERNELS[fn], 0.0) + v[2]  # tottime
        out["kernels_s_per_iter"] = {k: v / n_iter for k, v in kern.items()}
        top = sorted(st.items(), key=lambda kv: -kv[1][2])[:6]
        out["top_s_per_iter"] = [[f"{Path(f).name}:{fn}", v[2] / n_iter]
                                 for (f, _, fn), v in top]
    return out


def _nmi(a, b):
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(b, a))


def _warm_up():
    X, _ = make_diagonal_mixture(6000, 3, 4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fam in ("diagonal", "gaussian"):
            DPMixture(family=fam, n_iter=3, random_state=0, n_chains=1).fit(X)
            DPMixture(family=fam, n_iter=3, random_state=0, n_chains=1).fit(X[:500])
        DPMixture(family="diagonal", sampler=SubclusterSplitMerge(sequential=False),
                  n_iter=3, random_state=0, n_chains=1).fit(X)
        Xh, _ = make_diagonal_mixture(6000, 3, 16, random_state=0)
        DPMixture(family="gaussian", n_iter=3, random_state=0, n_chains=1).fit(Xh)


def part_speed(args):
    n, d, k = (20_000, 64, 10) if args.quick else (100_000, 256, 10)
    n_iter = 6 if args.quick else args.n_iter
    n_full = min(n, 5_000 if args.quick else args.full_n)
    X, y = make_diagonal_mixture(n, k, d, random_state=0)
    print(f"  data: N={n:,} d={d} K={k}, {X.nbytes / 2**20:.0f} MiB; RSS "
          f"{rss_mib()[0]:.0f} MiB", flush=True)
    floor = roofline(X)
    print(f"  roofline (NumPy, N x 30 x d log-densities as two GEMMs): {floor:.3f} s, "
          f"{floor / n * 1e9:.0f} ns per row", flush=True)
    runs = []
    for label, fam, sampler, rows in (
            ("diagonal, sampler='auto'", "diagonal", "auto", n),
            ("diagonal, sequential=False", "diagonal", SubclusterSplitMerge(sequential=False), n),
            ("gaussian (full), sampler='auto'", "gaussian", "auto", n_full)):
        reset_peak_rss()  # each run's own peak, not the earlier runs' (the data included)
        r = timed_fit(X[:rows], fam, sampler, n_iter, profile=True)
        r["label"] = label
        r["nmi"] = _nmi(r.pop("labels"), y[:rows])
        r["ns_per_row_iter"] = r["s_per_iter"] / rows * 1e9
        r["peak_rss_mib"] = peak_rss_mib()
        runs.append(r)
        kern = ", ".join(f"{a} {b:.3f}" for a, b in sorted(r["kernels_s_per_iter"].items(),
                                                           key=lambda t: -t[1]))
        print(f"  {label} at N={rows:,}: {r['s_per_iter']:.3f} s / iteration (median of "
              f"{n_iter - 1}; {r['s_per_iter_min']:.3f}-{r['s_per_iter_max']:.3f}), "
              f"{r['ns_per_row_iter']:.0f} ns per row and iteration, first "
              f"{r['first_iter_s']:.2f} s, fit {r['fit_s']:.1f} s, K={r['k']}, "
              f"NMI {r['nmi']:.3f}, peak RSS {r['peak_rss_mib']:.0f} MiB\n"
              f"    s / iteration by kernel: {kern}\n    top functions (own time, s / "
              f"iteration): " + ", ".join(f"{a} {b:.3f}" for a, b in r["top_s_per_iter"]),
              flush=True)
    base = runs[0]["ns_per_row_iter"]
    for r in runs:
        r["ratio_to_diagonal_auto"] = r["ns_per_row_iter"] / base
        r["ratio_to_roofline"] = r["s_per_iter"] / (floor * r["n_samples"] / n)
    return {"n_samples": n, "n_features": d, "n_clusters": k, "n_iter": n_iter,
            "roofline_s": floor, "roofline_ns_per_row": floor / n * 1e9, "runs": runs}


def part_nmi(args):
    n = 4_000 if args.quick else args.nmi_n
    dims = (2, 10) if args.quick else (2, 10, 50)
    n_iter = 20 if args.quick else args.nmi_iter
    rows = []
    for kind, gen in (("diagonal", make_diagonal_mixture), ("correlated", make_gaussian_mixture)):
        for d in dims:
            X, y = gen(n, 10, d, random_state=d)
            for fam in ("diagonal", "gaussian"):
                r = timed_fit(X, fam, "auto", n_iter, seed=0)
                r.update(data=kind, nmi=_nmi(r.pop("labels"), y))
                rows.append(r)
                print(f"  {kind:>10} data, d={d:>2}, N={n:,}: {fam:>8} family "
                      f"K={r['k']:>3}, NMI {r['nmi']:.3f}, {r['s_per_iter'] * 1e3:.1f} ms / "
                      f"iteration, fit {r['fit_s']:.1f} s", flush=True)
    return {"n_samples": n, "n_iter": n_iter, "n_clusters_true": 10, "sampler": "auto",
            "rows": rows}


def write_markdown(d, path):
    md = ["# The diagonal Gaussian family", "",
          f"Machine: {d['machine'].get('cpu_model', '?')}, "
          f"{d['machine'].get('cpus_available', '?')} cores; {d['machine'].get('date')}.", ""]
    s = d.get("speed")
    if s:
        md += [f"## Speed: N = {s['n_samples']:,}, d = {s['n_features']}, "
               f"{s['n_clusters']} diagonal Gaussians", "",
               f"Roofline floor (one NumPy pass of N × 30 × d log-densities as two GEMMs): "
               f"{s['roofline_s']:.3f} s ({s['roofline_ns_per_row']:.0f} ns per row). "
               f"Seconds per iteration: median of the {s['n_iter'] - 1} iterations after "
               "the first (`trace_.seconds`); all in one process, on the same data (the "
               "full-covariance family on its first rows). Ratios are per row and "
               "iteration.  Peak RSS: the process's high-water mark during each run "
               "(restarted before it, the data included).", "",
               "| run | N | s / iter (min–max) | ns / row / iter | × diagonal auto | "
               "× roofline | K | NMI | peak RSS (MiB) |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in s["runs"]:
            md.append(f"| {r['label']} | {r['n_samples']:,} | {r['s_per_iter']:.3f} "
                      f"({r['s_per_iter_min']:.3f}–{r['s_per_iter_max']:.3f}) | "
                      f"{r['ns_per_row_iter']:.0f} | {r['ratio_to_diagonal_auto']:.2f} | "
                      f"{r['ratio_to_roofline']:.1f} | {r['k']} | {r['nmi']:.3f} | "
                      f"{r['peak_rss_mib']:.0f} |")
        md += ["", "Seconds per iteration by compiled kernel (cProfile, own time):", "",
               "| run | " + " | ".join(KERNELS.values()) + " |",
               "|---|" + "---|" * len(KERNELS)]
        for r in s["runs"]:
            kk = r.get("kernels_s_per_iter", {})
            md.append(f"| {r['label']} | " + " | ".join(
                f"{kk[v]:.3f}" if v in kk else "–" for v in KERNELS.values()) + " |")
        md += ["", "Top functions by own time (s / iteration, fit included):", ""]
        for r in s["runs"]:
            if r.get("top_s_per_iter"):
                md.append(f"* {r['label']}: " + ", ".join(
                    f"`{a}` {b:.3f}" for a, b in r["top_s_per_iter"]))
        md.append("")
    m = d.get("nmi")
    if m:
        md += [f"## NMI where both fit: N = {m['n_samples']:,}, 10 clusters, "
               f"{m['n_iter']} iterations, sampler 'auto', seed 0", "",
               "| data | d | family | K | NMI | ms / iter | fit (s) |",
               "|---|---|---|---|---|---|---|"]
        for r in m["rows"]:
            md.append(f"| {r['data']} | {r['n_features']} | {r['family']} | {r['k']} | "
                      f"{r['nmi']:.3f} | {r['s_per_iter'] * 1e3:.1f} | {r['fit_s']:.1f} |")
        md.append("")
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on smaller data")
    p.add_argument("--parts", nargs="+", default=["speed", "nmi"], choices=["speed", "nmi"])
    p.add_argument("--n-iter", type=int, default=12, help="iterations of the speed part")
    p.add_argument("--full-n", type=int, default=20_000,
                   help="rows the full-covariance family gets in the speed part")
    p.add_argument("--nmi-n", type=int, default=4_000)
    p.add_argument("--nmi-iter", type=int, default=60)
    args = p.parse_args(argv)
    parts = {"speed": part_speed, "nmi": part_nmi}
    run_parts(args.parts, lambda name: parts[name](args), RESULTS / "diagonal", args.quick,
              _warm_up, write_markdown)


if __name__ == "__main__":
    main()
