"""The sub-cluster sampler (Chang & Fisher 2013): speed target, scaling and the paper's runs.

Parts (``--parts``, default all):

* ``speed``: N = 10^6 2-D points from ten Gaussians, alpha = 10, 100 iterations from one
  cluster, on ``SPEED_DATA_SETS`` data sets (seeds ``--seed`` onwards).  dpclust
  ``SubclusterSplitMerge`` on all cores (sampler steps timed after a numba
  warm-up on tiny data; the whole ``DPMixture.fit`` is timed too), peak memory of each run in
  its own process, final K and NMI of the last sample against the truth; scikit-learn's
  ``BayesianGaussianMixture`` (20 components, 100 iterations) on the same data.
* ``scaling``: seconds per iteration against N (10^4 ... 10^6, d = 2) and against d (2 ... 64,
  N = 10^5), at the true number of clusters, and the speed-up from 1 to 2 threads.
* ``figure4``: the paper's Figure 4 on 10^5 2-D points from ten Gaussians: log joint against
  wall time for SUBC, SUBC+SUPC, collapsed Gibbs, Gibbs+SAMS and FSD, from 1 and from 10
  clusters, alpha = 1 and alpha = 100.  Plots in ``benchmarks/results/subcluster_figure4_*.png``.
* ``documents``: multinomial runs on 20 Newsgroups and CORA (``../shared/data``; skipped when
  absent): log joint against time for the same samplers and NMI against the newsgroups;
  generated documents 10x and 100x the size of 20 Newsgroups for the cost per iteration.
* ``digits``: 50 dimensions, in the spirit of the paper's MNIST run: scikit-learn's digits
  reduced to 50 principal components.

Figures are printed and written to ``benchmarks/results/subcluster.{json,md}`` (``--quick``:
``subcluster_quick.*``).

Run: ``.venv/bin/python benchmarks/bench_subcluster.py [--quick] [--parts speed scaling ...]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SHARED_DATA = HERE.parent.parent / "shared" / "data"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import _load_average, machine_info, peak_rss_mib, save_results

from dpclust.datasets import make_documents, make_gaussian_mixture
from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.metrics import nmi
from dpclust.samplers import (CollapsedGibbs, FiniteSymmetricDirichlet, GibbsSAMS, MixtureModel,
                              SubclusterSplitMerge)
from dpclust.samplers.base import kmeans_labels

PARTS = ("speed", "scaling", "figure4", "documents", "digits")

#: data sets (seeds) of the speed part: the NMI target is a property of every data set, and
#: fragments made in the first iterations are a matter of chance, so one seed says little
SPEED_DATA_SETS = 12


# --------------------------------------------------------------------------- helpers
def gaussian_model(X):
    fam = NormalInverseWishart().resolve(X)
    return MixtureModel(fam, fam.validate(X))


def document_model(X, concentration=0.1):
    fam = DirichletMultinomial(concentration=concentration).resolve(X)
    return MixtureModel(fam, fam.validate(X))


def warm_up():
    """Compile (or load) the numba kernels of every sampler on tiny data."""
    X, _ = make_gaussian_mixture(300, 3, random_state=0)
    D, _ = make_documents(n_docs=60, n_topics=2, random_state=0)
    for model in (gaussian_model(X), document_model(D)):
        for sampler in samplers(100.0).values():
            run_for(sampler, model, np.random.default_rng(0), n_iter=3)


def samplers(alpha):
    """The samplers compared in the paper's figures, by their short names."""
    return {
        "SUBC": SubclusterSplitMerge(),
        "SUBC+SUPC": SubclusterSplitMerge(super_clusters=True),
        "GIBBS": CollapsedGibbs(),
        "GIBBS+SAMS": GibbsSAMS(),
        "FSD": FiniteSymmetricDirichlet(n_components=100),
    }


def run_for(sampler, model, rng, *, n_iter=None, seconds=None, alpha=1.0, init_clusters=1,
            record=None):
    """Step ``sampler`` for ``n_iter`` iterations or ``seconds`` of wall time.

    ``init_clusters``: a number of clusters with points at random, or ``"kmeansK"`` for K
    k-means clusters (as ``DPMixture(init="kmeans")``; the k-means time is not counted).
    Only ``step`` is timed.  ``record(t, info)`` is called after each step.  Returns
    ``(state, info, seconds, iterations)``.
    """
    labels = None
    if isinstance(init_clusters, str):
        k = int(init_clusters.removeprefix("kmeans"))
        labels = kmeans_labels(rng, model.family.init_features(model.X), k)
        init_clusters = k
    state = sampler.init(rng, model, labels=labels, n_clusters=init_clusters, alpha=alpha)
    elapsed = 0.0
    it = 0
    info = None
    while (n_iter is None or it < n_iter) and (seconds is None or elapsed < seconds):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        elapsed += time.perf_counter() - t0
        it += 1
        if record is not None:
            record(elapsed, info)
    return state, info, elapsed, it


def _child(conn, fn, args):
    out = fn(*args)
    conn.send((out, peak_rss_mib()))
    conn.close()


def in_child(fn, *args):
    """Run ``fn(*args)`` in a fresh process and return ``(result, its peak RSS in MiB)``.

    A spawned process (numba's OpenMP threads do not survive a fork) that imports only what
    ``fn`` needs, so that the peak is that run's.
    """
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(child, fn, args))
    p.start()
    child.close()
    try:
        out = parent.recv()
    except EOFError:
        p.join()
        raise RuntimeError(f"{fn.__name__} failed in its process (exit code {p.exitcode})")
    p.join()
    return out


# ----------------------------------------------------------------------------- speed
def _speed_dpclust(N, n_iter, seed):
    # load the compiled kernels first (this is a fresh process): only the steps are timed
    Xw, _ = make_gaussian_mixture(500, 3, random_state=seed)
    run_for(SubclusterSplitMerge(), gaussian_model(Xw), np.random.default_rng(seed), n_iter=3)
    X, y = make_gaussian_mixture(N, 10, random_state=seed)
    base = peak_rss_mib()
    model = gaussian_model(X)
    state, info, secs, _ = run_for(SubclusterSplitMerge(), model, np.random.default_rng(seed),
                                   n_iter=n_iter, alpha=10.0)
    return {"seed": seed, "seconds": secs, "n_clusters": int(info.n_clusters),
            "nmi": float(nmi(state.labels, y)), "data_mib": X.nbytes / 2**20,
            "rss_before_mib": base, "log_joint": float(info.log_joint),
            "log_joint_truth": float(model.log_joint(y, 10.0))}


def _speed_estimator(N, n_iter, seed):
    from dpclust import DPMixture

    X, y = make_gaussian_mixture(N, 10, random_state=seed)
    t0 = time.perf_counter()
    m = DPMixture(alpha=10.0, n_iter=n_iter, init_clusters=1, random_state=seed, n_chains=1).fit(X)
    return {"seconds": time.perf_counter() - t0, "n_clusters": int(m.n_clusters_),
            "nmi": float(nmi(m.labels_, y))}


def _speed_sklearn(N, seed):
    from sklearn.mixture import BayesianGaussianMixture

    X, y = make_gaussian_mixture(N, 10, random_state=seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bgm = BayesianGaussianMixture(
            n_components=20, max_iter=100, random_state=seed,
            weight_concentration_prior_type="dirichlet_process").fit(X)
    secs = time.perf_counter() - t0
    pred = bgm.predict(X)
    return {"seconds": secs, "n_clusters": int(len(np.unique(pred))),
            "nmi": float(nmi(pred, y)), "converged": bool(bgm.converged_)}


def part_speed(quick, seed):
    N = 20_000 if quick else 1_000_000
    n_iter = 20 if quick else 100
    out = {"n_samples": N, "n_iter": n_iter, "alpha": 10.0, "runs": []}
    for s in range(1 if quick else SPEED_DATA_SETS):
        res, peak = in_child(_speed_dpclust, N, n_iter, seed + s)
        res["peak_rss_mib"] = peak
        out["runs"].append(res)
        print(f"  dpclust subcluster N={N:,} seed {seed + s}: {res['seconds']:.2f} s, "
              f"K={res['n_clusters']}, NMI={res['nmi']:.4f}, peak RSS {peak:.0f} MiB "
              f"(data {res['data_mib']:.0f} MiB)", flush=True)
    secs = [r["seconds"] for r in out["runs"]]
    good = sum(r["nmi"] >= 0.99 for r in out["runs"])
    print(f"  {len(secs)} data sets: {min(secs):.2f}-{float(np.median(secs)):.2f}-{max(secs):.2f} s "
          f"(min-median-max), NMI >= 0.99 on {good}", flush=True)
    est, peak = in_child(_speed_estimator, N, n_iter, seed)
    est["peak_rss_mib"] = peak
    out["estimator"] = est
    print(f"  DPMixture.fit (sampler='auto', point estimate included): {est['seconds']:.2f} s, "
          f"K={est['n_clusters']}, NMI={est['nmi']:.4f}, peak RSS {peak:.0f} MiB", flush=True)
    sk_sizes = [N] if quick else [100_000, N]
    out["sklearn"] = {}
    for n in sk_sizes:
        sk, peak = in_child(_speed_sklearn, n, seed)
        sk["peak_rss_mib"] = peak
        out["sklearn"][str(n)] = sk
        print(f"  sklearn BayesianGaussianMixture N={n:,}: {sk['seconds']:.1f} s, "
              f"K={sk['n_clusters']}, NMI={sk['nmi']:.3f}, converged={sk['converged']}",
              flush=True)
    return out


# --------------------------------------------------------------------------- scaling
def _per_iteration(X, y, n_jobs, n_iter=10):
    model = gaussian_model(X)
    sampler = SubclusterSplitMerge(n_threads=n_jobs)
    rng = np.random.default_rng(0)
    state = sampler.init(rng, model, labels=y, alpha=1.0)
    state, _ = sampler.step(rng, state, model)
    t0 = time.perf_counter()
    for _ in range(n_iter):
        state, _ = sampler.step(rng, state, model)
    return (time.perf_counter() - t0) / n_iter


def part_scaling(quick, seed):
    sizes = [10_000, 100_000] if quick else [10_000, 30_000, 100_000, 300_000, 1_000_000]
    dims = [2, 8] if quick else [2, 4, 8, 16, 32, 64]
    out = {"by_n": [], "by_d": [], "threads": []}
    for N in sizes:
        X, y = make_gaussian_mixture(N, 10, random_state=seed)
        t = _per_iteration(X, y, None)
        out["by_n"].append({"n_samples": N, "seconds_per_iter": t, "ns_per_point": t / N * 1e9})
        print(f"  N={N:>9,} d=2: {t * 1e3:8.2f} ms / iteration ({t / N * 1e9:.0f} ns per point)",
              flush=True)
    n_d = 20_000 if quick else 100_000
    for d in dims:
        X, y = make_gaussian_mixture(n_d, 10, d, random_state=seed)
        t = _per_iteration(X, y, None)
        out["by_d"].append({"n_features": d, "n_samples": n_d, "seconds_per_iter": t})
        print(f"  N={n_d:,} d={d:>2}: {t * 1e3:8.2f} ms / iteration", flush=True)
    N = 100_000 if quick else 1_000_000
    X, y = make_gaussian_mixture(N, 10, random_state=seed)
    one = _per_iteration(X, y, 1)
    two = _per_iteration(X, y, 2)
    out["threads"] = {"n_samples": N, "one": one, "two": two, "speedup": one / two}
    print(f"  N={N:,}: 1 thread {one * 1e3:.1f} ms, 2 threads {two * 1e3:.1f} ms per iteration: "
          f"speed-up {one / two:.2f}x", flush=True)
    ns = np.array([r["n_samples"] for r in out["by_n"]], dtype=float)
    ts = np.array([r["seconds_per_iter"] for r in out["by_n"]])
    out["growth_exponent_n"] = float(np.polyfit(np.log(ns), np.log(ts), 1)[0])
    print(f"  growth exponent in N: {out['growth_exponent_n']:.2f}", flush=True)
    return out


# --------------------------------------------------------------------------- traces
def trace_runs(model, names, seconds, alphas, inits, seed, y=None):
    """Log joint against wall time for each sampler, alpha and initial number of clusters."""
    runs = []
    for alpha in alphas:
        for init in inits:
            for name, sampler in samplers(alpha).items():
                if name not in names:
                    continue
                times, joints, ks = [], [], []

                def record(t, info, times=times, joints=joints, ks=ks):
                    times.append(t)
                    joints.append(float(info.log_joint))
                    ks.append(int(info.n_clusters))

                state, info, secs, iters = run_for(sampler, model, np.random.default_rng(seed),
                                                   seconds=seconds, alpha=alpha,
                                                   init_clusters=init, record=record)
                run = {"sampler": name, "alpha": alpha, "init_clusters": init,
                       "iterations": iters, "seconds": secs, "time": times,
                       "log_joint": joints, "n_clusters": ks}
                if y is not None:
                    run["nmi"] = float(nmi(state.labels, y))
                runs.append(run)
                print(f"  {name:<11} alpha={alpha:<6g} from {init:>2} clusters: {iters:5d} its "
                      f"in {secs:5.1f} s, K={ks[-1]:>3}, log joint {joints[-1]:.4g}"
                      + (f", NMI {run['nmi']:.3f}" if "nmi" in run else ""), flush=True)
    return runs


def plot_traces(runs, title, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (matplotlib missing: no plot)")
        return None
    # runs from k-means ("kmeansK") are drawn, dashed, in every panel of their alpha
    def shown(r, alpha, init):
        return r["alpha"] == alpha and r["init_clusters"] in (init, *kmeans)

    kmeans = {r["init_clusters"] for r in runs if isinstance(r["init_clusters"], str)}
    keys = sorted({(r["alpha"], r["init_clusters"]) for r in runs
                   if not isinstance(r["init_clusters"], str)})
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.6), squeeze=False)
    for ax, (alpha, init) in zip(axes[0], keys):
        for r in runs:
            if shown(r, alpha, init):
                start = r["init_clusters"]
                ax.plot(np.maximum(r["time"], 1e-3), r["log_joint"],
                        *(("--",) if isinstance(start, str) else ()),
                        label=r["sampler"] + (f" ({start})" if isinstance(start, str) else ""))
        ax.set_xscale("log")
        ax.set_title(f"alpha = {alpha:g}, from {init} cluster{'s' if init > 1 else ''}",
                     fontsize=9)
        ax.set_xlabel("seconds")
        lows = [np.percentile(r["log_joint"], 5) for r in runs if shown(r, alpha, init)]
        highs = [max(r["log_joint"]) for r in runs if shown(r, alpha, init)]
        ax.set_ylim(min(lows), max(highs) + 0.02 * (max(highs) - min(lows)) + 1)
    axes[0][0].set_ylabel("log joint")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path.relative_to(HERE.parent))


def part_figure4(quick, seed):
    N = 20_000 if quick else 100_000
    seconds = 3.0 if quick else 20.0
    X, y = make_gaussian_mixture(N, 10, random_state=seed)
    model = gaussian_model(X)
    truth = {str(a): float(model.log_joint(y, a)) for a in (1.0, 100.0)}
    runs = trace_runs(model, list(samplers(1.0)), seconds, (1.0, 100.0), (1, 10), seed, y)
    stem = "subcluster_figure4" + ("_quick" if quick else "")
    plot = plot_traces(runs, f"{N:,} 2-D points, ten Gaussians (truth: {truth})",
                       RESULTS / f"{stem}.png")
    return {"n_samples": N, "seconds_per_run": seconds, "log_joint_truth": truth,
            "runs": _thin_runs(runs), "plot": plot}


#: a chain's last state is one draw: an exact chain at the posterior wanders (an iteration of
#: the sub-cluster sampler may leave a freshly split cluster for the next iterations to mend),
#: so the tables give the median of the second half of the run beside the final value
LATE_NOTE = ("The final log joint is one draw of the chain; the median over the second half "
             "of the run's wall time says where the chain stays.")


def _late_median(run) -> float:
    """Median log joint over the second half of a traced run's wall time."""
    t = np.asarray(run["time"])
    late = np.asarray(run["log_joint"])[t >= t[-1] / 2]
    return float(np.median(late))


def _thin_runs(runs, keep=200):
    out = []
    for r in runs:
        r = dict(r)
        step = max(1, len(r["time"]) // keep)
        for key in ("time", "log_joint", "n_clusters"):
            r[key] = r[key][::step] + r[key][-1:]
        out.append(r)
    return out


# ------------------------------------------------------------------------- documents
def part_documents(quick, seed):
    out = {}
    seconds = 5.0 if quick else 60.0
    if (SHARED_DATA / "newsgroups_train_counts.npz").exists():
        import scipy.sparse as sp

        sets = {
            "newsgroups": (sp.load_npz(SHARED_DATA / "newsgroups_train_counts.npz"),
                           np.loadtxt(SHARED_DATA / "newsgroups_train_labels.txt", dtype=int)),
            "cora": (sp.load_npz(SHARED_DATA / "cora_counts.npz"), None),
        }
        for name, (X, labels) in sets.items():
            if quick:
                X = X[:2000]
                labels = None if labels is None else labels[:2000]
            model = document_model(X.tocsr())
            runs = trace_runs(model, ["SUBC", "SUBC+SUPC", "GIBBS", "GIBBS+SAMS", "FSD"],
                              seconds, (1.0,), (1,), seed, labels)
            runs += trace_runs(model, ["SUBC"], seconds, (1.0,), ("kmeans20",), seed, labels)
            stem = f"subcluster_{name}" + ("_quick" if quick else "")
            plot = plot_traces(runs, f"{name}: {X.shape[0]:,} documents, {X.shape[1]:,} words",
                               RESULTS / f"{stem}.png")
            out[name] = {"n_docs": X.shape[0], "vocab": X.shape[1], "runs": _thin_runs(runs),
                         "plot": plot}
        X, labels = sets["newsgroups"]
        out["newsgroups_grid"] = newsgroups_grid(X.tocsr(), labels, seconds, seed, quick)
    else:
        print(f"  {SHARED_DATA} not found: real-document runs skipped")
    scale = []
    base = 11_269
    for factor in ((1, 10) if quick else (1, 10, 100)):
        n_docs = base * factor // (20 if quick else 1)
        X, y = make_documents(n_docs=n_docs, n_topics=20, vocab_size=1000, doc_length=50,
                              random_state=seed)
        model = document_model(X)
        sampler = SubclusterSplitMerge()
        rng = np.random.default_rng(seed)
        state = sampler.init(rng, model, labels=y, alpha=1.0)
        state, _ = sampler.step(rng, state, model)
        t0 = time.perf_counter()
        for _ in range(5):
            state, info = sampler.step(rng, state, model)
        t = (time.perf_counter() - t0) / 5
        scale.append({"n_docs": n_docs, "seconds_per_iter": t, "n_clusters": int(info.n_clusters)})
        print(f"  generated documents N={n_docs:,} (V=1,000, 50 words, 20 topics): "
              f"{t:.3f} s / iteration", flush=True)
    out["generated_scaling"] = scale
    return out


def newsgroups_grid(X, labels, seconds, seed, quick):
    """The sub-cluster sampler against collapsed Gibbs on 20 Newsgroups at beta = 0.1 and
    1, full vocabulary and its 20,000 most frequent words, the same wall time each."""
    grid = []
    for top in (None, 20_000):
        Xv, yv = X, labels
        if top is not None:
            keep = np.sort(np.argsort(-np.asarray(X.sum(axis=0)).ravel())[:top])
            Xv = X[:, keep]
            ok = np.asarray(Xv.sum(axis=1)).ravel() > 0
            Xv, yv = Xv[ok], labels[ok]
        if quick:
            Xv, yv = Xv[:2000], yv[:2000]
        for beta in (0.1, 1.0):
            print(f"  newsgroups, {Xv.shape[1]:,} words, beta = {beta:g}:")
            runs = trace_runs(document_model(Xv, beta), ["SUBC", "GIBBS"], seconds, (1.0,),
                              (1,), seed, yv)
            grid.append({"vocab": int(Xv.shape[1]), "n_docs": int(Xv.shape[0]), "beta": beta,
                         "runs": [{k: r[k] for k in ("sampler", "iterations", "nmi")}
                                  | {"n_clusters": r["n_clusters"][-1],
                                     "log_joint": r["log_joint"][-1],
                                     "log_joint_half": _at_time(r, seconds / 2)}
                                  for r in runs]})
    return grid


def _at_time(run, t):
    """The log joint of ``run`` at wall time ``t`` (the last step before it)."""
    i = int(np.searchsorted(run["time"], t, side="right")) - 1
    return run["log_joint"][max(i, 0)]


# ---------------------------------------------------------------------------- digits
def part_digits(quick, seed):
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA

    X, y = load_digits(return_X_y=True)
    Z = PCA(n_components=50, random_state=seed).fit_transform(X)
    model = gaussian_model(Z)
    seconds = 5.0 if quick else 30.0
    runs = trace_runs(model, ["SUBC", "GIBBS", "GIBBS+SAMS", "FSD"], seconds, (1.0,), (1, 10),
                      seed, y)
    runs += trace_runs(model, ["SUBC"], seconds, (1.0,), ("kmeans30",), seed, y)
    stem = "subcluster_digits" + ("_quick" if quick else "")
    plot = plot_traces(runs, "digits, 50 principal components (1,797 images)",
                       RESULTS / f"{stem}.png")
    return {"n_samples": len(Z), "n_features": 50, "runs": _thin_runs(runs), "plot": plot}


# ---------------------------------------------------------------------------- output
def write_markdown(payload, path):
    md = ["# Sub-cluster sampler benchmark", "",
          f"Machine: {payload['machine']['cpu_model']}, {payload['machine']['nproc']} cores; "
          f"{payload['machine']['date']}.", ""]
    when = {part: payload[part].get("run_at", "an earlier run (before 2026-11-24)")
            for part in PARTS if isinstance(payload.get(part), dict)}
    md += ["Parts and when they ran (a run of some parts keeps the others' last figures): "
           + "; ".join(f"`{part}` {at}" for part, at in when.items()) + ".", ""]
    sp = payload.get("speed")
    if sp:
        md += [f"## Speed: N = {sp['n_samples']:,}, d = 2, ten clusters, alpha = 10, "
               f"{sp['n_iter']} iterations from one cluster", "",
               "| run | seconds | K | NMI | peak RSS MiB |", "|---|---|---|---|---|"]
        for r in sp["runs"]:
            md.append(f"| dpclust subcluster (sampler) | {r['seconds']:.2f} | {r['n_clusters']} "
                      f"| {r['nmi']:.4f} | {r['peak_rss_mib']:.0f} |")
        secs = [r["seconds"] for r in sp["runs"]]
        good = sum(r["nmi"] >= 0.99 for r in sp["runs"])
        e = sp["estimator"]
        md.append(f"| dpclust DPMixture.fit (with point estimate) | {e['seconds']:.2f} | "
                  f"{e['n_clusters']} | {e['nmi']:.4f} | {e['peak_rss_mib']:.0f} |")
        for n, r in sp["sklearn"].items():
            md.append(f"| sklearn BayesianGaussianMixture N={int(n):,} | {r['seconds']:.1f} | "
                      f"{r['n_clusters']} | {r['nmi']:.3f} | {r['peak_rss_mib']:.0f} |")
        md += ["", f"The sampler on {len(secs)} data sets (seeds {sp['runs'][0].get('seed', 0)}"
               f" onwards): {min(secs):.2f} / {float(np.median(secs)):.2f} / {max(secs):.2f} s "
               f"(min / median / max); NMI ≥ 0.99 on {good} of {len(secs)}.", ""]
    sc = payload.get("scaling")
    if sc:
        md += ["## Cost per iteration", "", "| N | d | ms / iteration |", "|---|---|---|"]
        md += [f"| {r['n_samples']:,} | 2 | {r['seconds_per_iter'] * 1e3:.1f} |"
               for r in sc["by_n"]]
        md += [f"| {r['n_samples']:,} | {r['n_features']} | {r['seconds_per_iter'] * 1e3:.1f} |"
               for r in sc["by_d"]]
        th = sc["threads"]
        md += ["", f"Growth exponent in N: {sc['growth_exponent_n']:.2f}. "
               f"Threads at N = {th['n_samples']:,}: 1 → {th['one'] * 1e3:.1f} ms, "
               f"2 → {th['two'] * 1e3:.1f} ms (speed-up {th['speedup']:.2f}).", ""]
    for key, title in (("figure4", "Figure 4"), ("digits", "Digits, 50 dimensions")):
        part = payload.get(key)
        if part:
            md += [f"## {title}", "", LATE_NOTE, "",
                   "| sampler | alpha | from K | iterations | final K | "
                   "final log joint | log joint, median of 2nd half | NMI |",
                   "|---|---|---|---|---|---|---|---|"]
            md += [f"| {r['sampler']} | {r['alpha']:g} | {r['init_clusters']} | "
                   f"{r['iterations']} | {r['n_clusters'][-1]} | {r['log_joint'][-1]:.6g} | "
                   f"{_late_median(r):.6g} | {r.get('nmi', float('nan')):.3f} |"
                   for r in part["runs"]]
            if part.get("plot"):
                md += ["", f"![{title}]({Path(part['plot']).name})"]
            md.append("")
    docs = payload.get("documents")
    if docs:
        md += ["## Documents", ""]
        for name in ("newsgroups", "cora"):
            if name in docs:
                d = docs[name]
                md += [f"### {name}: {d['n_docs']:,} documents, {d['vocab']:,} words", "",
                       LATE_NOTE, "",
                       "| sampler | from K | iterations | final K | final log joint | "
                       "log joint, median of 2nd half | NMI |",
                       "|---|---|---|---|---|---|---|"]
                md += [f"| {r['sampler']} | {r['init_clusters']} | {r['iterations']} | "
                       f"{r['n_clusters'][-1]} | {r['log_joint'][-1]:.6g} | "
                       f"{_late_median(r):.6g} | {r.get('nmi', float('nan')):.3f} |"
                       for r in d["runs"]]
                if d.get("plot"):
                    md += ["", f"![{name}]({Path(d['plot']).name})"]
                md.append("")
        if docs.get("newsgroups_grid"):
            md += ["### 20 Newsgroups: the sub-cluster sampler against collapsed Gibbs", "",
                   "The same wall time each (the benchmark's seconds), from one cluster, alpha = 1.",
                   "", "| words | beta | sampler | iterations | final K | log joint at half time "
                   "| final log joint | NMI |", "|---|---|---|---|---|---|---|---|"]
            md += [f"| {g['vocab']:,} | {g['beta']:g} | {r['sampler']} | {r['iterations']} | "
                   f"{r['n_clusters']} | {r['log_joint_half']:.6g} | {r['log_joint']:.6g} | "
                   f"{r['nmi']:.3f} |" for g in docs["newsgroups_grid"] for r in g["runs"]]
            md.append("")
        md += ["Generated documents (V = 1,000, 50 words each, 20 topics), seconds per "
               "iteration: "
               + ", ".join(f"N = {r['n_docs']:,}: {r['seconds_per_iter']:.3f}"
                           for r in docs["generated_scaling"]), ""]
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on small data")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": machine_info(), "quick": args.quick}
    t0 = time.perf_counter()
    warm_up()
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.1f} s", flush=True)
    for part in args.parts:
        print(f"\n== {part}", flush=True)
        payload[part] = globals()[f"part_{part}"](args.quick, args.seed)
        payload[part]["run_at"] = payload["machine"]["date"]  # parts may come from other runs
    payload["machine"]["load_average_end"] = _load_average()
    stem = RESULTS / ("subcluster_quick" if args.quick else "subcluster")
    save_results(stem, payload, write_markdown)


if __name__ == "__main__":
    main()
