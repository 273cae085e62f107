"""Chang & Fisher's Figure 5 at its real shapes: log joint against wall time on large data.

The paper (Parallel sampling of DP mixture models using sub-cluster splits, NIPS 2013,
Fig. 5) runs its sub-cluster sampler (SUBC), collapsed Gibbs, Gibbs with SAMS split/merge
moves and a finite symmetric Dirichlet approximation (FSD) from 1 and from 25 clusters on
MNIST at PCA-50, Enron, NYT and PubMed.  None of those can be downloaded here; the data sets
are drawn at their shapes from models fitted to what is at hand (``figure5_data.py``):

* ``mnist``: 70,000 x 50, ten overlapping Gaussian classes shaped like MNIST at PCA-50
  (Normal-inverse-Wishart family);
* ``enron``: 39,861 documents x 28,102 words, ``nyt``: 300,000 x 102,660, from the topic
  model fitted to 20 Newsgroups (``--shared``: the folder holding
  ``newsgroups_train_counts.npz``; its documented defaults when absent), with the corpora's
  mean document lengths (Dirichlet-multinomial family, Dirichlet(0.1) prior);
* ``pubmed``: 8.2 M documents x 141,043 words is beyond two cores' time, so a scaling curve
  instead: seconds per iteration and peak memory of SUBC (from the generating labels, after
  one warm iteration) at N = 10^5 ... 2 10^6 documents of 141,043 words, each N in its own
  process, and the fitted power law extrapolated to 8.2 M.

For ``mnist``, ``enron`` and ``nyt``: each sampler from 1 and from 25 random clusters for a
budget of wall seconds (``--seconds``; by default ``FULL_SECONDS`` of the set), alpha = 1,
in-process on all cores; with ``--dask``, SUBC also on a local Dask cluster of two worker
processes of one thread (data in two partitions).  The y axis is the log joint
``log p(z | alpha) + sum_k log f(X_k)`` with the cluster parameters integrated out, the
quantity of the other figures of ``bench_subcluster.py`` (the paper plots the likelihood
of its instantiated parameters).  Only sampler steps are timed (numba kernels compiled
first, data generation not counted).  The tables give the log joint at fractions of the
budget, the final K and the NMI of the last sample against the generating labels.

Results: ``benchmarks/results/figure5.{json,md}`` and ``figure5_*.png`` (``--quick``: small
shapes, a few seconds a run, ``figure5_quick.*``).

Run: ``.venv/bin/python benchmarks/bench_figure5.py [--quick] [--dask]
[--parts mnist enron nyt pubmed] [--seconds S] [--shared DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import numpy as np
from _common import _load_average, machine_info, peak_rss_mib, reset_peak_rss, save_results
from bench_subcluster import (_at_time, _late_median, _thin_runs, document_model,
                              gaussian_model, in_child, run_for, samplers, trace_runs)
from figure5_data import TARGETS, concentration_at, load_params, make_corpus, make_mnist_like

from dpclust.families import DirichletMultinomial, NormalInverseWishart
from dpclust.metrics import nmi
from dpclust.samplers import SubclusterSplitMerge

PARTS = ("mnist", "enron", "nyt", "pubmed")
TRACED = ("mnist", "enron", "nyt")
SAMPLERS = ("SUBC", "GIBBS", "GIBBS+SAMS", "FSD")
STARTS = (1, 25)
ALPHA = 1.0
DASK = "SUBC, Dask 2 workers"
#: Dirichlet prior of the topics' word distributions in the fitted model
DOC_CONCENTRATION = 0.1

#: (rows, columns, mean tokens per document or None) of each traced set
SHAPES = {"mnist": (70_000, 50, None), "enron": TARGETS["enron"], "nyt": TARGETS["nyt"]}
#: (the quick MNIST keeps 50 dimensions: below about 20,000 points the Normal-inverse-Wishart
#: marginal of one cluster beats the ten generating classes' and there is nothing to find)
QUICK_SHAPES = {"mnist": (20_000, 50, None), "enron": (2_000, 2_000, TARGETS["enron"][2]),
                "nyt": (2_000, 2_000, TARGETS["nyt"][2])}
#: wall seconds per run of the full run: 10 runs a set with --dask (4 samplers x 2 starts,
#: and SUBC on Dask from both), 28 minutes of budgets; a run ends after the iteration that
#: crosses its budget (FSD's iteration on the MNIST shape takes about 15 s on two cores,
#: the samplers' on the NYT shape 10-30 s), and with data, warm-ups and the PubMed curve
#: the whole run takes about 40 minutes on two cores
FULL_SECONDS = {"mnist": 40.0, "enron": 50.0, "nyt": 80.0}
QUICK_SECONDS = 1.0
#: documents of the PubMed curve (141,043 words, 89 tokens each on average)
PUBMED_SIZES = (100_000, 300_000, 1_000_000, 2_000_000)
QUICK_PUBMED_SIZES = (2_000, 6_000, 20_000)
PUBMED_STEPS = 2
#: fractions of the budget at which the tables give the log joint
TABLE_FRACTIONS = (0.1, 0.25, 0.5, 1.0)


# ------------------------------------------------------------------------------ data
def default_shared() -> Path:
    """``$DPCLUST_SHARED_DATA``, or ``shared/data`` beside the repository."""
    env = os.environ.get("DPCLUST_SHARED_DATA")
    return Path(env) if env else HERE.parent.parent / "shared" / "data"


def make_data(name, quick, params, rng):
    """The data of a traced set: ``(X, labels, model, unresolved family, description)``."""
    n, d, mean_length = (QUICK_SHAPES if quick else SHAPES)[name]
    t0 = time.perf_counter()
    if name == "mnist":
        X, y, _ = make_mnist_like(n, d, rng=rng)
        model, family = gaussian_model(X), NormalInverseWishart()
        what = f"{n:,} x {d}, ten Gaussian classes"
    else:
        c = concentration_at(params, d, np.random.default_rng(rng.integers(2**31)))
        X, y = make_corpus(params, n, d, mean_length, rng=rng, concentration=c)
        model = document_model(X, DOC_CONCENTRATION)
        family = DirichletMultinomial(concentration=DOC_CONCENTRATION)
        what = (f"{n:,} documents x {d:,} words, {X.sum() / n:.0f} tokens each, "
                f"{params.n_topics} topics of concentration {c:.0f}")
    print(f"  data: {what} ({time.perf_counter() - t0:.1f} s to draw)", flush=True)
    return X, y, model, family, what


# ------------------------------------------------------------------------------ runs
def dask_runs(X, family, y, seconds, seed):
    """SUBC on a local Dask cluster of two one-thread workers, from each start."""
    from dpclust.distributed import DaskModel, load_partitions, local_client

    with warnings.catch_warnings():  # a dashboard port already taken is of no matter here
        warnings.simplefilter("ignore", UserWarning)
        client = local_client(2, threads_per_worker=1)
    runs = []
    try:
        def on_cluster(rows):
            data, resolved, fingerprint = load_partitions(client, rows, family, partitions=2)
            return DaskModel(resolved, data, None, fingerprint)

        # the workers load the compiled kernels on a small slice first: not part of the chains
        small = on_cluster(X[:500])
        for init in STARTS:
            run_for(SubclusterSplitMerge(), small, np.random.default_rng(seed), n_iter=3,
                    init_clusters=init)
        dmodel = on_cluster(X)
        for init in STARTS:
            runs.append(_traced(SubclusterSplitMerge(), dmodel, seconds, init, seed, y,
                                DASK, dmodel.as_array))
    finally:
        cluster = client._dpclust_cluster
        client.close()
        cluster.close()
    return runs


def _traced(sampler, model, seconds, init, seed, y, name, as_array):
    """One run of ``sampler`` traced as :func:`bench_subcluster.trace_runs` traces."""
    times, joints, ks = [], [], []

    def record(t, info):
        times.append(t)
        joints.append(float(info.log_joint))
        ks.append(int(info.n_clusters))

    state, _, secs, iters = run_for(sampler, model, np.random.default_rng(seed),
                                    seconds=seconds, alpha=ALPHA, init_clusters=init,
                                    record=record)
    run = {"sampler": name, "alpha": ALPHA, "init_clusters": init, "iterations": iters,
           "seconds": secs, "time": times, "log_joint": joints, "n_clusters": ks,
           "nmi": float(nmi(as_array(state.labels), y))}
    print(f"  {name:<11} from {init:>2} clusters: {iters:5d} its in {secs:5.1f} s, "
          f"K={ks[-1]:>3}, log joint {joints[-1]:.4g}, NMI {run['nmi']:.3f}", flush=True)
    return run


def run_traced(name, args, params):
    """All runs on one traced set."""
    rng = np.random.default_rng(args.seed)
    X, y, model, family, what = make_data(name, args.quick, params, rng)
    seconds = budget(name, args)
    warm_up(X, name)
    runs = trace_runs(model, SAMPLERS, seconds, (ALPHA,), STARTS, args.seed, y)
    if args.dask:
        runs += dask_runs(X, family, y, seconds, args.seed)
    truth = float(model.log_joint(y, ALPHA))
    print(f"  log joint of the generating labels: {truth:.6g}", flush=True)
    return {"data": what, "shape": list(X.shape), "seconds_per_run": seconds,
            "log_joint_truth": truth, "runs": _thin_runs(runs)}


def warm_up(X, name, n_rows=500):
    """Compile (or load) the kernels each sampler uses on data of this kind and width: a
    few iterations of each on the first ``n_rows`` rows."""
    part = X[:n_rows]
    model = gaussian_model(part) if name == "mnist" else document_model(part, DOC_CONCENTRATION)
    for label, sampler in samplers(ALPHA).items():
        if label in SAMPLERS:
            for init in STARTS:
                run_for(sampler, model, np.random.default_rng(0), n_iter=3, init_clusters=init)


def budget(name, args) -> float:
    """Wall seconds per run on the set ``name``."""
    if args.seconds is not None:
        return args.seconds
    return QUICK_SECONDS if args.quick else FULL_SECONDS[name]


# ---------------------------------------------------------------------------- pubmed
def _pubmed_point(n_docs, vocab_size, mean_length, params, concentration, seed, n_steps):
    """Seconds per SUBC iteration on ``n_docs`` generated PubMed-like documents (run in a
    process of its own by :func:`part_pubmed`)."""
    from figure5_data import make_corpus as draw

    warm = draw(params, 200, 500, 50.0, rng=np.random.default_rng(seed))[0]
    run_for(SubclusterSplitMerge(), document_model(warm), np.random.default_rng(seed), n_iter=2)
    t0 = time.perf_counter()
    X, y = draw(params, n_docs, vocab_size, mean_length, rng=np.random.default_rng(seed),
                concentration=concentration)
    drawn = time.perf_counter() - t0
    model = document_model(X)
    sampler = SubclusterSplitMerge()
    rng = np.random.default_rng(seed)
    held = peak_rss_mib()
    reset = reset_peak_rss()  # the peak of the sampler, not of the draw
    state = sampler.init(rng, model, labels=y, alpha=ALPHA)
    state, _ = sampler.step(rng, state, model)
    t0 = time.perf_counter()
    for _ in range(n_steps):
        state, info = sampler.step(rng, state, model)
    per_iter = (time.perf_counter() - t0) / n_steps
    return {"n_docs": n_docs, "nnz": int(X.nnz), "data_mib": _csr_mib(X),
            "draw_seconds": drawn, "seconds_per_iter": per_iter,
            "n_clusters": int(info.n_clusters), "peak_before_sampling_mib": held,
            "sampling_peak_rss_mib": peak_rss_mib() if reset else None}


def _csr_mib(X) -> float:
    return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20


def part_pubmed(args, params):
    """The SUBC cost curve on PubMed-shaped documents and its extrapolation to 8.2 M."""
    n_full, vocab, mean_length = TARGETS["pubmed"]
    sizes = QUICK_PUBMED_SIZES if args.quick else PUBMED_SIZES
    vocab = 5_000 if args.quick else vocab
    c = concentration_at(params, vocab, np.random.default_rng(args.seed))
    print(f"  topic concentration at {vocab:,} words: {c:.0f}", flush=True)
    points = []
    for n in sizes:
        res, peak = in_child(_pubmed_point, n, vocab, mean_length, params, c, args.seed,
                             1 if args.quick else PUBMED_STEPS)
        res["peak_rss_mib"] = peak
        points.append(res)
        print(f"  N={n:>9,} x {vocab:,}: {res['seconds_per_iter']:.3f} s / iteration, "
              f"peak RSS {peak:.0f} MiB, while sampling {res['sampling_peak_rss_mib'] or 0:.0f} "
              f"MiB (CSR {res['data_mib']:.0f} MiB, drawn in {res['draw_seconds']:.1f} s), "
              f"K={res['n_clusters']}", flush=True)
    ns = np.array([p["n_docs"] for p in points], dtype=float)
    ts = np.array([p["seconds_per_iter"] for p in points])
    mem = np.array([p["sampling_peak_rss_mib"] or p["peak_rss_mib"] for p in points])
    slope, intercept = np.polyfit(np.log(ns), np.log(ts), 1)
    mib_per_doc, mib_base = np.polyfit(ns, mem, 1)
    out = {"vocab": vocab, "mean_length": mean_length, "concentration": c, "points": points,
           "exponent": float(slope), "target_docs": n_full,
           "seconds_per_iter_at_target": float(np.exp(intercept) * n_full**slope),
           "peak_mib_at_target": float(mib_base + mib_per_doc * n_full)}
    print(f"  seconds per iteration ~ N^{slope:.2f}: at N = {n_full:,} "
          f"{out['seconds_per_iter_at_target']:.1f} s per iteration, peak memory "
          f"{out['peak_mib_at_target'] / 1024:.1f} GiB (linear in N)", flush=True)
    return out


# ---------------------------------------------------------------------------- output
def plot_figure(payload, path):
    """One panel per traced set: samplers coloured, from 1 cluster solid, from 25 dashed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (matplotlib missing: no plot)")
        return None
    sets = [s for s in TRACED if isinstance(payload.get(s), dict)]
    if not sets:
        return None
    colours = dict(zip((*SAMPLERS, DASK), ("C3", "C0", "C2", "C1", "C4")))
    fig, axes = plt.subplots(1, len(sets), figsize=(4.4 * len(sets), 3.7), squeeze=False)
    for ax, name in zip(axes[0], sets):
        part = payload[name]
        for r in part["runs"]:
            ax.plot(np.maximum(r["time"], 1e-3), r["log_joint"], color=colours[r["sampler"]],
                    ls="-" if r["init_clusters"] == 1 else "--", lw=1.2,
                    label=f"{r['sampler']}, from {r['init_clusters']}")
        ax.axhline(part["log_joint_truth"], color="k", lw=0.6, ls=":")
        low = min(np.percentile(r["log_joint"], 5) for r in part["runs"])
        high = max(max(max(r["log_joint"]) for r in part["runs"]), part["log_joint_truth"])
        ax.set_ylim(low, high + 0.03 * (high - low) + 1)
        ax.set_xscale("log")
        rows, cols = part["shape"]
        ax.set_title(f"{name}: {rows:,} x {cols:,}, {part['seconds_per_run']:g} s a run",
                     fontsize=9)
        ax.set_xlabel("seconds")
    axes[0][0].set_ylabel("log joint (dotted: generating labels)")
    axes[0][0].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _table(part) -> list:
    fractions = TABLE_FRACTIONS
    budget_s = part["seconds_per_run"]
    head = " | ".join(f"log joint at {f * budget_s:g} s" for f in fractions)
    lines = [f"| sampler | from K | iterations | {head} | median of 2nd half | final K | NMI |",
             "|---|---|---|" + "---|" * len(fractions) + "---|---|---|"]
    for r in part["runs"]:
        at = " | ".join(f"{_at_time(r, f * budget_s):.6g}" for f in fractions)
        lines.append(f"| {r['sampler']} | {r['init_clusters']} | {r['iterations']} | {at} | "
                     f"{_late_median(r):.6g} | {r['n_clusters'][-1]} | {r['nmi']:.3f} |")
    return lines


def _mib(value) -> str:
    return "–" if value is None else f"{value:.0f}"


def write_markdown(payload, path):
    m = payload["machine"]
    md = ["# Figure 5 of Chang & Fisher (2013) at the data sets' shapes", "",
          f"Machine: {m['cpu_model']}, {m['cpus_available']} cores; {m['date']}.", "",
          "Log joint (cluster parameters integrated out) against wall seconds of sampler "
          f"steps, alpha = {ALPHA:g}; from 1 cluster (solid) and 25 random clusters (dashed).",
          ""]
    params = payload.get("corpus_params")
    if params:
        md += [f"Document model ({params['source']}): Zipf exponent "
               f"{params['zipf_exponent']}, log length {params['log_length_mean']} ± "
               f"{params['log_length_sd']} (rescaled to each corpus's mean length), "
               f"{len(params['topic_weights'])} topics, topic concentration "
               f"{params['concentration']:g} (between-topic KL {params['divergence']} nats).",
               ""]
    for name in TRACED:
        part = payload.get(name)
        if isinstance(part, dict):
            md += [f"## {name}: {part['data']}", "",
                   f"{part['seconds_per_run']:g} s per run; log joint of the generating "
                   f"labels {part['log_joint_truth']:.6g}; run at {part.get('run_at')}.", "",
                   *_table(part), ""]
    if payload.get("plot"):
        md += [f"![Figure 5]({payload['plot']})", ""]
    pub = payload.get("pubmed")
    if isinstance(pub, dict):
        md += [f"## pubmed: SUBC cost against N ({pub['vocab']:,} words, "
               f"{pub['mean_length']:g} tokens per document)", "",
               "| documents | non-zeros | CSR MiB | s / iteration | peak RSS MiB (the draw "
               "included) | peak RSS MiB while sampling | K |",
               "|---|---|---|---|---|---|---|"]
        md += [f"| {p['n_docs']:,} | {p['nnz']:,} | {p['data_mib']:.0f} | "
               f"{p['seconds_per_iter']:.3f} | {p['peak_rss_mib']:.0f} | "
               f"{_mib(p.get('sampling_peak_rss_mib'))} | {p['n_clusters']} |"
               for p in pub["points"]]
        md += ["", f"Seconds per iteration grow as N^{pub['exponent']:.2f}; extrapolated to "
               f"{pub['target_docs']:,} documents: {pub['seconds_per_iter_at_target']:.1f} s "
               f"per iteration and {pub['peak_mib_at_target'] / 1024:.1f} GiB peak while "
               "sampling (fitted linear in N). Each N runs in a process of its own; its peak "
               "is read from its own address space (`VmHWM`), and the sampler's from a "
               "high-water mark started afresh once the documents are drawn.", ""]
    path.write_text("\n".join(md))


# ------------------------------------------------------------------------------ main
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small shapes, a few seconds a run")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--seconds", type=float, default=None,
                   help="wall seconds per run (default: FULL_SECONDS of each set)")
    p.add_argument("--dask", action="store_true",
                   help="also SUBC on a local Dask cluster of 2 one-thread workers")
    p.add_argument("--shared", type=Path, default=default_shared(),
                   help="folder of newsgroups_train_counts.npz ($DPCLUST_SHARED_DATA)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": machine_info(), "quick": args.quick}
    params = load_params(args.shared, np.random.default_rng(args.seed))
    payload["corpus_params"] = params.__dict__ | {"topic_weights": list(params.topic_weights)}
    print(f"document model: {params}", flush=True)
    for part in args.parts:
        print(f"\n== {part}", flush=True)
        t0 = time.perf_counter()
        payload[part] = (part_pubmed(args, params) if part == "pubmed"
                         else run_traced(part, args, params))
        payload[part].update(run_at=machine_info()["date"],
                             part_seconds=time.perf_counter() - t0)
        print(f"  ({part}: {time.perf_counter() - t0:.0f} s)", flush=True)
    payload["machine"]["load_average_end"] = _load_average()
    stem = RESULTS / ("figure5_quick" if args.quick else "figure5")
    payload["plot"] = stem.name + "_traces.png"
    save_results(stem, payload, lambda merged, path: _finish(merged, path, stem))


def _finish(merged, path, stem):
    """Plot the merged record (parts of earlier runs included), then its markdown."""
    if plot_figure(merged, stem.with_name(merged["plot"])) is None:
        merged["plot"] = None
    write_markdown(merged, path)


if __name__ == "__main__":
    main()
