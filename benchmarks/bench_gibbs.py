"""Collapsed Gibbs throughput, side by side with scikit-learn and ``dpgmm``.

For each setting (``n_features`` in {2, 50}, 10 true clusters, ``n_samples`` in {10^4, 10^5})
the script draws one data set from a fixed seed and runs, on the same data:

* **dpclust** :class:`~dpclust.samplers.CollapsedGibbs` (Neal 2000, algorithm 3), from one
  cluster, alpha fixed at 1, for a fixed number of sweeps.  Only the sweeps are timed: numba
  is compiled beforehand by a warm-up on a tiny data set, and NMI / bookkeeping between sweeps
  is outside the clock.  Numba and BLAS are limited to one thread (the target is one core).
  Throughput is ``n_samples * sweeps / seconds`` point-updates per second.  K and NMI are those
  of the **last sample** (not the estimator's point estimate).
* **scikit-learn** ``BayesianGaussianMixture`` (20 components, 100 iterations, DP weight
  prior) with its default threading: fit time, components in use, NMI of ``predict``.
* **dpgmm** (PyTorch on the CPU, one torch thread) collapsed Gibbs, if importable: a one-sweep
  pilot on a subset gives its rate; the full data are then run for as many sweeps as fit in
  ``--dpgmm-budget`` seconds (at most the dpclust number), or, if not one sweep fits, only the
  pilot rate is reported.

A pure-NumPy per-point reference sweep (the family's NumPy ``log_predictive``, one point at a
time, deliberately not vectorised) on 2,000 2-D points gives the interpreted baseline.

Figures are printed and written to ``benchmarks/results/gibbs_throughput.{json,md}``.

Run: ``.venv/bin/python benchmarks/bench_gibbs.py [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import sys
import time
import types
import warnings
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
# Benchmark the working tree, whether or not the package is installed in the environment.
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import _load_average, machine_info
from threadpoolctl import threadpool_limits

import dpclust  # noqa: F401
from dpclust.datasets import make_gaussian_mixture
from dpclust.families import get_family
from dpclust.families.base import concatenate, take
from dpclust.metrics import nmi
from dpclust.samplers import CollapsedGibbs, MixtureModel

N_TRUE_CLUSTERS = 10
SK_COMPONENTS = 20
SK_MAX_ITER = 100
DPGMM_INIT_CLUSTERS = 20


# --------------------------------------------------------------------------- helpers
def default_sweeps(n_samples: int) -> int:
    """Sweeps per setting: 100 up to 10^4 points, 50 above."""
    return 100 if n_samples <= 10_000 else 50


def make_model(X):
    family = get_family("gaussian")
    Xw = family.validate(X)
    return MixtureModel(family.resolve(Xw), Xw)


def warm_up(seed: int) -> float:
    """Compile the numba kernels (one step on tiny data per dimension); returns seconds."""
    t0 = time.perf_counter()
    for d in (2, 50):
        X, _ = make_gaussian_mixture(200, 3, d, random_state=seed)
        model = make_model(X)
        sampler = CollapsedGibbs()
        rng = np.random.default_rng(seed)
        state = sampler.init(rng, model)
        for _ in range(2):
            state, _ = sampler.step(rng, state, model)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- dpclust
def run_dpclust(X, y, sweeps: int, seed: int, init_clusters: int = 1) -> dict:
    """Collapsed Gibbs from ``init_clusters`` random clusters (alpha = 1 fixed); only
    ``sampler.step`` is timed, on one thread.  DPMixture starts from 10 by default."""
    import numba

    model = make_model(X)
    sampler = CollapsedGibbs()
    rng = np.random.default_rng(seed)
    state = sampler.init(rng, model, n_clusters=init_clusters)
    n = X.shape[0]
    seconds = 0.0
    k_trace, nmi_trace = [], []
    old_threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with threadpool_limits(1):
            for it in range(sweeps):
                t0 = time.perf_counter()
                state, info = sampler.step(rng, state, model)
                seconds += time.perf_counter() - t0
                k_trace.append(int(info.n_clusters))
                if (it + 1) % 10 == 0 or it + 1 == sweeps:
                    nmi_trace.append([it + 1, round(float(nmi(y, state.labels)), 4)])
    finally:
        numba.set_num_threads(old_threads)
    return {
        "method": f"dpclust CollapsedGibbs (start K={init_clusters})",
        "iterations": sweeps,
        "seconds": seconds,
        "updates_per_s": n * sweeps / seconds,
        "n_clusters": k_trace[-1],
        "nmi": float(nmi(y, state.labels)),
        "note": "1 thread; sweeps only; last sample",
        "k_trace": k_trace,
        "nmi_trace": nmi_trace,
    }


# --------------------------------------------------------------------------- sklearn
def run_sklearn(X, y, seed: int, one_thread: bool = False) -> dict:
    """Fit ``BayesianGaussianMixture``; ``one_thread`` limits BLAS and OpenMP to one thread."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import BayesianGaussianMixture

    model = BayesianGaussianMixture(
        n_components=SK_COMPONENTS, max_iter=SK_MAX_ITER, n_init=1, random_state=seed,
        weight_concentration_prior_type="dirichlet_process")
    limits = threadpool_limits(1) if one_thread else contextlib.nullcontext()
    with warnings.catch_warnings(), limits:
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - t0
    labels = model.predict(X)
    k_weights = int(np.sum(model.weights_ > 1e-3))
    k_labels = len(np.unique(labels))
    return {
        "method": "sklearn BayesianGMM" + (" (1 thr)" if one_thread else ""),
        "iterations": int(model.n_iter_),
        "seconds": seconds,
        # an EM iteration touches every point once: comparable units, different work
        "updates_per_s": X.shape[0] * int(model.n_iter_) / seconds,
        "n_clusters": k_weights,
        "n_clusters_predicted": k_labels,
        "converged": bool(model.converged_),
        "nmi": float(nmi(y, labels)),
        "note": ("1 BLAS/OpenMP thread" if one_thread else "default threads")
        + f"; K = weights>1e-3 ({k_labels} distinct labels); "
        + ("converged" if model.converged_ else "not converged"),
    }


# --------------------------------------------------------------------------- dpgmm
def import_dpgmm():
    """Return ``(sampler_class, note)``; ``sampler_class`` is None when dpgmm cannot run."""
    try:
        import torch  # noqa: F401
    except Exception as exc:  # noqa: BLE001 -- ImportError, or a broken binary
        return None, f"torch not importable ({type(exc).__name__}: {exc})"
    note = ""
    try:
        import wandb  # noqa: F401
        os.environ.setdefault("WANDB_MODE", "disabled")
    except ImportError:
        # dpgmm imports wandb at module top but only uses it when an API key is configured;
        # an inert stand-in avoids installing the whole W&B client for a benchmark.
        stub = types.ModuleType("wandb")
        stub.api = types.SimpleNamespace(api_key=None)
        stub.Run = object
        sys.modules["wandb"] = stub
        note = "wandb not installed: inert in-process stub (tracking off)"
    try:
        from dpgmm.samplers import FullCovarianceCollapsedGibbsSampler
    except Exception as exc:  # noqa: BLE001 -- any import failure means "skip dpgmm"
        if note:
            sys.modules.pop("wandb", None)
        return None, f"dpgmm not importable ({type(exc).__name__}: {exc})"
    try:
        from loguru import logger
        logger.disable("dpgmm")
    except ImportError:
        pass
    return FullCovarianceCollapsedGibbsSampler, note


def _dpgmm_fit(cls, data, sweeps: int, seed: int):
    import torch

    random.seed(seed)
    np.random.seed(seed)  # dpgmm draws from the global NumPy and torch generators
    torch.manual_seed(seed)
    sampler = cls(init_strategy="init_data_stats", max_clusters_num=DPGMM_INIT_CLUSTERS,
                  batch_size=1, verbose=False, skip_epochs_ll_calc=10**9)
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        result = sampler.fit(iterations_num=sweeps, data=data)
        seconds = time.perf_counter() - t0
    labels = np.asarray(sampler.get_examples_assignment(result["cluster_assignment"]))
    return seconds, labels, len(result["cluster_assignment"])


def run_dpgmm(cls, X, y, sweeps: int, seed: int, budget: float, pilot_n: int) -> dict:
    """Pilot sweep on a subset for the rate, then as many full sweeps as ``budget`` allows."""
    import torch

    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        n = X.shape[0]
        data = torch.as_tensor(X, dtype=torch.float32)
        m = min(pilot_n, n)
        setup_s, _, _ = _dpgmm_fit(cls, data[:m], 0, seed)
        pilot_s, _, _ = _dpgmm_fit(cls, data[:m], 1, seed)
        pilot_rate = m / max(pilot_s - setup_s, 1e-9)
        projected = n / pilot_rate
        n_sweeps = min(sweeps, int(budget // projected))
        out = {"method": "dpgmm CGS (torch CPU)", "pilot_n": m,
               "pilot_updates_per_s": pilot_rate, "projected_sweep_s": projected}
        if n_sweeps == 0:
            out.update(iterations=0, seconds=None, updates_per_s=pilot_rate, n_clusters=None,
                       nmi=None, note=(f"pilot only: 1 sweep on {m} pts; a full sweep would take "
                                       f"~{projected:.0f} s > budget {budget:.0f} s"))
            return out
        setup_s, _, _ = _dpgmm_fit(cls, data, 0, seed)
        total_s, labels, k = _dpgmm_fit(cls, data, n_sweeps, seed)
        seconds = max(total_s - setup_s, 1e-9)
        out.update(iterations=n_sweeps, seconds=seconds, setup_seconds=setup_s,
                   updates_per_s=n * n_sweeps / seconds, n_clusters=k,
                   nmi=float(nmi(y, labels)),
                   note=(f"1 torch thread; {n_sweeps} sweep(s) (budget {budget:.0f} s); "
                         f"random init over {DPGMM_INIT_CLUSTERS}; last sample"))
        return out
    finally:
        torch.set_num_threads(old_threads)


# --------------------------------------------------------------------------- reference
def _put(stats, k, one):
    """Write the one-cluster statistics ``one`` into slot ``k`` of ``stats`` (in place)."""
    for a, b in zip(stats, one):
        a[k] = b[0]


def reference_sweep(family, X, labels, alpha, rng):
    """One collapsed Gibbs sweep in plain NumPy, point by point (deliberately not vectorised).

    For point i: remove it from its cluster's statistics, evaluate
    ``log N_{k,-i} + log f(x_i | X_{k,-i})`` for every cluster and ``log alpha + log f(x_i)``
    with the family's NumPy ``log_predictive``, draw, and add it back (Neal 2000, alg. 3).
    """
    k_now = int(labels.max()) + 1
    stats = family.stats(X, labels, k_now)
    empty = family.empty_stats(1)
    log_alpha = math.log(alpha)
    for i in rng.permutation(X.shape[0]):
        x = X[i:i + 1]
        one = family.stats(x)
        z = labels[i]
        _put(stats, z, family.subtract(take(stats, [z]), one))
        counts = family.count(stats)
        if counts[z] < 0.5:  # the cluster emptied: drop its slot
            stats = take(stats, np.flatnonzero(np.arange(len(counts)) != z))
            labels[labels > z] -= 1
            counts = family.count(stats)
        logw = family.log_predictive(x, concatenate(stats, empty))[0]
        logw[:-1] += np.log(counts)
        logw[-1] += log_alpha
        w = np.exp(logw - logw.max())
        k = int(np.searchsorted(np.cumsum(w), rng.random() * w.sum()))
        k = min(k, len(w) - 1)
        if k == len(counts):
            stats = concatenate(stats, one)
        else:
            _put(stats, k, family.combine(take(stats, [k]), one))
        labels[i] = k
    return labels


def run_reference(n_samples: int, sweeps: int, seed: int) -> dict:
    X, y = make_gaussian_mixture(n_samples, N_TRUE_CLUSTERS, 2, random_state=seed)
    model = make_model(X)
    rng = np.random.default_rng(seed)
    labels = np.zeros(n_samples, dtype=np.int64)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        for _ in range(sweeps):
            labels = reference_sweep(model.family, model.X, labels, 1.0, rng)
        seconds = time.perf_counter() - t0
    return {
        "setting": {"n_features": 2, "n_samples": n_samples, "n_clusters_true": N_TRUE_CLUSTERS},
        "method": "pure NumPy per-point sweep",
        "iterations": sweeps,
        "seconds": seconds,
        "updates_per_s": n_samples * sweeps / seconds,
        "n_clusters": int(labels.max()) + 1,
        "nmi": float(nmi(y, labels)),
        "note": "reference loop in this script; 1 thread; from one cluster",
    }


# --------------------------------------------------------------------------- output
def _fmt(v, spec):
    return "—" if v is None else format(v, spec)


def table(rows) -> str:
    head = ("| d | N | method | iters | seconds | updates/s | K | NMI | note |\n"
            "|---:|---:|---|---:|---:|---:|---:|---:|---|")
    lines = [head]
    for r in rows:
        s = r["setting"]
        lines.append(
            f"| {s['n_features']} | {s['n_samples']:,} | {r['method']} | {r['iterations']} | "
            f"{_fmt(r['seconds'], '.2f')} | {_fmt(r['updates_per_s'], ',.0f')} | "
            f"{_fmt(r['n_clusters'], 'd')} | {_fmt(r['nmi'], '.3f')} | {r['note']} |")
    return "\n".join(lines)


def write_results(payload: dict, path_stem: Path) -> None:
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    path_stem.with_suffix(".json").write_text(json.dumps(payload, indent=2) + "\n")
    m = payload["machine"]
    v = m["versions"]
    md = [
        "# Collapsed Gibbs throughput",
        "",
        (f"Generated by `benchmarks/bench_gibbs.py{' --quick' if payload['quick'] else ''}` "
         f"on {m['date']}."),
        "",
        (f"- machine: {m['cpu_model']}, nproc = {m['nproc']} "
         f"({m['cpus_available']} available), {m['platform']}"),
        f"- load average at start / end: {m['load_average_start']} / {m.get('load_average_end')}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val is not None)
        + (", dpgmm not installed" if v.get("dpgmm") is None else ""),
        (f"- Python {m['python']}; seed {payload['seed']}; numba warm-up "
         f"{payload['warm_up_seconds']:.1f} s (excluded)"),
        "- data: `make_gaussian_mixture(N, 10, d, random_state=seed)`",
        ("- dpclust: one numba thread and one BLAS thread; sweeps only are timed; from one "
         "cluster, alpha = 1 fixed; K and NMI of the last sample."),
        (f"- sklearn: `BayesianGaussianMixture(n_components={SK_COMPONENTS}, "
         f"max_iter={SK_MAX_ITER}, n_init=1, weight_concentration_prior_type="
         "'dirichlet_process')`, with default BLAS/OpenMP threading and again with one thread "
         "(threadpoolctl); time of `fit` (k-means initialisation included); K = components "
         "with weight > 1e-3; updates/s = N × EM iterations / s."),
        f"- dpgmm: {payload['dpgmm_status']}",
        "",
        table(payload["rows"]),
        "",
        "Target: >= 1e6 point-updates/s at d = 2, K ~ 10 on one core.",
        "",
    ]
    path_stem.with_suffix(".md").write_text("\n".join(md))


# --------------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="smoke run: small data, few sweeps (written to *_quick.{json,md})")
    p.add_argument("--sizes", type=str, default=None,
                   help="comma-separated N for d = 2 (default 10000,100000)")
    p.add_argument("--sizes-hd", type=str, default=None,
                   help="comma-separated N for the high-dimensional setting (default 10000)")
    p.add_argument("--n-features-hd", type=int, default=50,
                   help="dimension of the high-dimensional setting (default 50)")
    p.add_argument("--iters", type=int, default=None,
                   help="sweeps for every setting (default 100 at N <= 1e4, 50 above)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dpgmm-budget", type=float, default=None,
                   help="seconds of dpgmm sweeps allowed per setting (default 90; quick 10)")
    p.add_argument("--no-dpgmm", action="store_true", help="skip the dpgmm comparison")
    p.add_argument("--sklearn-threads", choices=("default", "1", "both", "none"),
                   default="both",
                   help="run sklearn with default threading, one thread, both (default) "
                        "or not at all")
    return p.parse_args(argv)


def _sizes(text, default):
    if text is None:
        return default
    return [int(float(s)) for s in text.split(",") if s.strip()]


def main(argv=None) -> int:
    args = parse_args(argv)
    quick = args.quick
    sizes_2d = _sizes(args.sizes, [2000] if quick else [10_000, 100_000])
    sizes_hd = _sizes(args.sizes_hd, [1000] if quick else [10_000])
    budget = args.dpgmm_budget if args.dpgmm_budget is not None else (10.0 if quick else 90.0)
    pilot_n = 100 if quick else 500
    ref_n, ref_sweeps = (300, 1) if quick else (2000, 2)

    settings = [(2, n) for n in sizes_2d] + [(args.n_features_hd, n) for n in sizes_hd]
    info = machine_info()
    print(f"# bench_gibbs on {info['cpu_model']} (nproc {info['nproc']}), "
          f"load {info['load_average_start']}", flush=True)
    warm = warm_up(args.seed)
    print(f"numba warm-up (excluded): {warm:.1f} s", flush=True)

    dpgmm_cls, dpgmm_note = (None, "skipped (--no-dpgmm)") if args.no_dpgmm else import_dpgmm()
    if dpgmm_cls is None:
        print(f"dpgmm: {dpgmm_note} -- skipped (see benchmarks/README.md to install it)",
              flush=True)
        dpgmm_status = f"skipped: {dpgmm_note}"
    else:
        dpgmm_status = (f"FullCovarianceCollapsedGibbsSampler on CPU, batch_size=1, one torch "
                        f"thread, random init over {DPGMM_INIT_CLUSTERS} clusters, per-iteration "
                        f"log-likelihood off; set-up time subtracted; budget {budget:.0f} s of "
                        f"sweeps per setting, pilot of 1 sweep on {pilot_n} points"
                        + (f"; {dpgmm_note}" if dpgmm_note else ""))

    rows = []
    for d, n in settings:
        sweeps = args.iters or (5 if quick else default_sweeps(n))
        X, y = make_gaussian_mixture(n, N_TRUE_CLUSTERS, d, random_state=args.seed)
        setting = {"n_features": d, "n_samples": n, "n_clusters_true": N_TRUE_CLUSTERS}
        print(f"\n== d = {d}, N = {n:,}, {N_TRUE_CLUSTERS} true clusters ==", flush=True)
        runs = [("dpclust", partial(run_dpclust, X, y, sweeps, args.seed, 1)),
                ("dpclust", partial(run_dpclust, X, y, sweeps, args.seed, 10))]
        if args.sklearn_threads in ("default", "both"):
            runs.append(("sklearn", partial(run_sklearn, X, y, args.seed)))
        if args.sklearn_threads in ("1", "both"):
            runs.append(("sklearn (1 thr)", partial(run_sklearn, X, y, args.seed, True)))
        if dpgmm_cls is not None:
            runs.append(("dpgmm", partial(run_dpgmm, dpgmm_cls, X, y, sweeps, args.seed,
                                          budget, pilot_n)))
        for name, fn in runs:
            try:
                r = fn()
            except Exception as exc:  # noqa: BLE001 -- one failure must not lose the rest
                r = {"method": name, "iterations": 0, "seconds": None, "updates_per_s": None,
                     "n_clusters": None, "nmi": None,
                     "note": f"failed: {type(exc).__name__}: {exc}"}
            r["setting"] = setting
            rows.append(r)
            print(f"  {r['method']:<28} iters {r['iterations']:>4}  "
                  f"{_fmt(r['seconds'], '8.2f')} s  {_fmt(r['updates_per_s'], '>12,.0f')} upd/s  "
                  f"K {_fmt(r['n_clusters'], 'd')}  NMI {_fmt(r['nmi'], '.3f')}  ({r['note']})",
                  flush=True)

    print(f"\n== reference: pure NumPy per-point sweep, N = {ref_n} ==", flush=True)
    ref = run_reference(ref_n, ref_sweeps, args.seed)
    rows.append(ref)
    print(f"  {ref['updates_per_s']:,.0f} updates/s ({ref['seconds']:.2f} s for "
          f"{ref_sweeps} sweep(s)), K {ref['n_clusters']}", flush=True)

    info["load_average_end"] = _load_average()
    payload = {"benchmark": "gibbs_throughput", "quick": quick, "seed": args.seed,
               "warm_up_seconds": warm, "machine": info, "dpgmm_status": dpgmm_status,
               "target_updates_per_s": 1e6, "rows": rows}
    stem = RESULTS / ("gibbs_throughput_quick" if quick else "gibbs_throughput")
    write_results(payload, stem)
    print("\n" + table(rows))
    print(f"\nwritten: {stem.with_suffix('.json')} and {stem.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
