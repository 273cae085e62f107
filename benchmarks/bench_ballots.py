"""Chains that meet on real ballots: the Dublin West election (29,988 ballots, 9 candidates).

Two Slice-Gibbs chains of a DP mixture of Generalized Mallows models (α = ν = r = 1), one
started from 10 random clusters and one from 150, run side by side (one process, one core
each) for a fixed wall-clock budget.  They have met when they agree on the posterior of the
number of clusters K, of the clusters holding at least 1 % of the ballots, and of the
log-likelihood ``sum_i log GM(pi_i | sigma_{z_i}, theta_{z_i})``: over the second half of
each chain, the two means within their Monte Carlo error and R-hat (the two chains,
rank-normalised, ArviZ) below 1.05.

Configurations (``--configs``):

* ``gibbs``: ``SliceGibbs()``, the default;
* ``moves``: ``SliceGibbs(split_merge=10)``, with the exact split-merge moves;
* ``light``: ``SliceGibbs(n_gibbs=2)``, fewer cluster-parameter rounds per iteration.

Data (``--data``): ``full`` (29,988 ballots), ``10k`` and ``2k`` (a random 10,000 and
2,000).  ``--tag NAME`` keeps a run beside the others (``full-gibbs-NAME``), e.g. a longer
one.  Budgets: ``--seconds`` per chain (default 600; ``--quick`` 10 on 2,000 ballots).  Figures are printed
and written to ``benchmarks/results/ballots.{json,md}`` (the chains themselves to
``ballots_chains.npz``), trajectories (K and the
log-likelihood against iteration and seconds, both starts) to ``ballots_*.png``.

``--families`` instead compares Plackett–Luce with Generalized Mallows mixtures, exact and
coarsened, by the held-out log predictive density per ballot (``ballots_families.py``).

Run: ``.venv/bin/python benchmarks/bench_ballots.py [--quick] [--configs gibbs moves]
[--data full 10k] [--seconds 600] [--families [--alpha-c 100] [--iters 1000]]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import machine_info, write_results

CONFIGS = {"gibbs": {}, "moves": {"split_merge": 10}, "light": {"n_gibbs": 2}}
STARTS = (10, 150)


def ballots(which: str, seed: int = 5):
    from dpclust.datasets import load_dublin_west

    X = load_dublin_west()
    n = {"full": len(X), "10k": 10_000, "2k": 2_000}[which]
    if n < len(X):
        X = X[np.sort(np.random.default_rng(seed).choice(len(X), n, replace=False))]
    return X


def run_chain(args):
    """One chain for ``seconds`` of wall clock: rows (iteration, K, K >= 1 %, log-likelihood,
    log joint, accepted splits, accepted merges, seconds)."""
    which, config, start, seconds, seed = args
    import numba

    numba.set_num_threads(1)  # one core a chain: the two chains run side by side
    from dpclust.families import GeneralizedMallows
    from dpclust.samplers import MixtureModel, SliceGibbs

    X = ballots(which)
    model = MixtureModel(GeneralizedMallows().resolve(X), X)
    sampler = SliceGibbs(**CONFIGS[config])
    rng = np.random.default_rng([seed, start])
    small = MixtureModel(model.family, X[:200])  # compiled code loaded before the clock
    sampler.step(rng, sampler.init(np.random.default_rng(0), small, n_clusters=5), small)
    return record_chain(sampler, model, sampler.init(rng, model, n_clusters=start), rng,
                        seconds)


def record_chain(sampler, model, state, rng, seconds: float, t0: float | None = None):
    """Steps ``sampler`` from ``state`` for ``seconds`` of wall clock (from ``t0``, default
    now): rows (iteration, K, K >= 1 %, log-likelihood, log joint, accepted splits,
    accepted merges, seconds)."""
    t0 = time.perf_counter() if t0 is None else t0
    rows, it = [], 0
    while time.perf_counter() - t0 < seconds:
        state, info = sampler.step(rng, state, model)
        sizes = np.bincount(state.labels)
        rows.append((it, int(info.n_clusters), int((sizes >= 0.01 * model.n_samples).sum()),
                     float(info.log_likelihood), float(info.log_joint),
                     int(info.n_accepted_splits), int(info.n_accepted_merges),
                     time.perf_counter() - t0))
        it += 1
    return rows


def meeting(a, b, keep_share=0.5) -> dict:
    """Over the last ``keep_share`` of both chains (cut at the shorter one's length): means,
    Monte Carlo standard errors, ESS, R-hat and the standardised difference of each
    quantity."""
    from arviz_stats.base import array_stats

    from dpclust.diagnostics import diagnose

    n = min(len(a), len(b))
    A, B = np.asarray(a, dtype=float)[:n], np.asarray(b, dtype=float)[:n]
    first = int(round(n * (1.0 - keep_share)))
    keep = slice(first, n)
    out = {"iterations": n, "kept": n - first, "keep_share": keep_share}
    for col, name in ((1, "K"), (2, "K_1pct"), (3, "log_likelihood")):
        x = np.stack([A[keep, col], B[keep, col]])
        ess = [float(array_stats.ess(x[c][None], method="bulk", chain_axis=0, draw_axis=1))
               if np.ptp(x[c]) > 0 else float(x.shape[1]) for c in range(2)]
        mean = x.mean(axis=1)
        mcse = x.std(axis=1) / np.sqrt(np.maximum(ess, 1.0))
        se = float(np.sqrt((mcse ** 2).sum()))
        rhat = diagnose(x)["rhat"]
        out[name] = {"mean": mean.tolist(), "mcse": mcse.tolist(), "ess": ess,
                     "rhat": float(rhat),
                     "z": float(abs(mean[0] - mean[1]) / se) if se > 0 else 0.0}
    out["met"] = bool(all(out[q]["rhat"] < 1.05 and out[q]["z"] < 2.0
                          for q in ("K", "K_1pct", "log_likelihood")))
    return out


def first_meeting(a, b, col=1, tol=3.0, window=200) -> float | None:
    """Seconds (the slower chain's clock) at the first iteration at which the two chains'
    column ``col`` (1: K, 3: the log-likelihood), averaged over the last ``window``
    iterations, differ by less than ``tol``."""
    n = min(len(a), len(b))
    if n < window:
        return None
    A, B = np.asarray(a, dtype=float)[:n], np.asarray(b, dtype=float)[:n]
    ka = np.convolve(A[:, col], np.ones(window) / window, mode="valid")
    kb = np.convolve(B[:, col], np.ones(window) / window, mode="valid")
    close = np.flatnonzero(np.abs(ka - kb) < tol)
    if not len(close):
        return None
    it = int(close[0]) + window - 1
    return float(max(A[it, 7], B[it, 7]))


def analyse(res) -> None:
    """The meeting figures of one configuration's two chains (``res["chains"]``)."""
    chains = [res["chains"][str(s)] for s in STARTS]
    res["meeting"] = meeting(*chains)
    res["meeting_last_third"] = meeting(*chains, keep_share=1.0 / 3.0)
    res["first_close_seconds"] = first_meeting(*chains)
    # the log-likelihood within 1,000 nats (about 0.03 nats a ballot on the full data)
    res["loglik_close_seconds"] = first_meeting(*chains, col=3, tol=1000.0)


def plot(results, quick):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for key, res in results.items():
        fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex="col")
        for start, colour in zip(STARTS, ("#1f77b4", "#d62728")):
            rows = np.asarray(res["chains"][str(start)], dtype=float)
            if not len(rows):
                continue
            for col, (x, xl) in enumerate(((rows[:, 0], "iteration"), (rows[:, 7], "seconds"))):
                axes[0, col].plot(x, rows[:, 1], color=colour, lw=0.8,
                                  label=f"from {start} clusters")
                axes[0, col].plot(x, rows[:, 2], color=colour, lw=0.8, ls="--")
                axes[1, col].plot(x, rows[:, 3], color=colour, lw=0.8)
                axes[1, col].set_xlabel(xl)
        axes[0, 0].set_ylabel("K (dashed: clusters with ≥ 1 %)")
        axes[1, 0].set_ylabel("log-likelihood")
        lo = np.percentile(np.concatenate([np.asarray(r, dtype=float)[:, 3]
                                           for r in res["chains"].values() if len(r)]), 5)
        for ax in axes[1]:
            ax.set_ylim(bottom=lo)
        axes[0, 0].legend(frameon=False, fontsize=8)
        fig.suptitle(f"Dublin West, {key}")
        fig.tight_layout()
        fig.savefig(RESULTS / f"ballots_{key}{'_quick' if quick else ''}.png", dpi=110)
        plt.close(fig)


def _chains_file(stem: Path) -> Path:
    return stem.with_name(stem.stem + "_chains.npz")


def save_chains(results, stem: Path) -> None:
    """Every run's chains (rows of the per-iteration records) in one compressed ``.npz``
    beside the JSON, which keeps only the figures (the chains as JSON took 31 MB)."""
    arrays = {f"{key}/{start}": np.asarray(chain, dtype=np.float64).reshape(-1, 8)
              for key, res in results.items() for start, chain in res["chains"].items()}
    np.savez_compressed(_chains_file(stem), **arrays)


def load_chains(results, stem: Path) -> None:
    """Put the stored chains back into ``results`` (runs whose JSON still holds them keep
    theirs)."""
    path = _chains_file(stem)
    if not path.exists():
        return
    with np.load(path) as stored:
        for name in stored.files:
            key, start = name.rsplit("/", 1)
            if key in results:
                results[key].setdefault("chains", {})[start] = stored[name].tolist()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=["gibbs", "moves"])
    p.add_argument("--data", nargs="+", choices=["full", "10k", "2k"], default=["full", "10k"])
    p.add_argument("--tag", default="",
                   help="kept beside the other runs under DATA-CONFIG-TAG (e.g. a longer run)")
    p.add_argument("--seconds", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the figures and tables from the stored chains")
    p.add_argument("--families", action="store_true",
                   help="compare Plackett-Luce with Generalized Mallows (held-out log "
                        "predictive density, K, time per iteration: ballots_families.py) "
                        "instead of running chains")
    p.add_argument("--alpha-c", type=float, default=100.0,
                   help="the coarsened posteriors' alpha_c with --families (default: 100)")
    p.add_argument("--iters", type=int, default=1000,
                   help="iterations of each fit with --families (default: 1000)")
    args = p.parse_args(argv)
    seconds = args.seconds or (10.0 if args.quick else 600.0)
    data = ["2k"] if args.quick else args.data
    stem = RESULTS / ("ballots_quick.json" if args.quick else "ballots.json")
    stored = json.loads(stem.read_text()) if stem.exists() else {}
    results = stored.get("runs", {})
    load_chains(results, stem)
    # the machine and date of the runs, unless this one runs some
    machine = stored.get("machine") if args.report_only and "machine" in stored else None
    families = stored.get("families")
    if args.families:
        import ballots_families

        families = ballots_families.run(args.alpha_c, args.iters, args.quick)
    ctx = mp.get_context("spawn")
    for which in ([] if args.report_only or args.families else data):
        for config in args.configs:
            key = f"{which}-{config}" + (f"-{args.tag}" if args.tag else "")
            print(f"{key}: two chains (from {STARTS[0]} and {STARTS[1]} clusters), "
                  f"{seconds:.0f} s each", flush=True)
            with ctx.Pool(2) as pool:
                chains = pool.map(run_chain, [(which, config, s, seconds, args.seed)
                                              for s in STARTS])
            res = {"data": which, "config": config, "settings": CONFIGS[config],
                   "seconds": seconds, "chains": {str(s): c for s, c in zip(STARTS, chains)}}
            analyse(res)
            results[key] = res
            m = res["meeting"]
            print(f"  iterations {len(chains[0])} / {len(chains[1])}; second half: "
                  + "; ".join(f"{q} {m[q]['mean'][0]:.1f} vs {m[q]['mean'][1]:.1f} "
                              f"(R-hat {m[q]['rhat']:.3f}, z {m[q]['z']:.1f})"
                              for q in ("K", "K_1pct", "log_likelihood"))
                  + f"; met: {m['met']}; K within 3 from {res['first_close_seconds']} s",
                  flush=True)
    for res in results.values():
        analyse(res)
    plot(results, args.quick)
    body = ["Two chains of `SliceGibbs` per configuration, from 10 and from 150 random "
            "clusters, one process (core) each, for a fixed wall-clock budget; α = ν = r = 1. "
            "Means (Monte Carlo standard error) of each chain and the R-hat of the two, over "
            "the second half and (second row) the last third of each chain.  *Met*: R-hat < 1.05 "
            "and the means within two standard errors for K, K ≥ 1 % and the log-likelihood.  "
            "*Close*: the first time (slower chain's clock) the two chains' 200-iteration "
            "running means differ by less than 3 clusters (K) and 1,000 nats "
            "(log-likelihood).", "",
            "| data | configuration | seconds | iterations (10 / 150) | kept | K | K ≥ 1 % | "
            "log-likelihood | met | K close (s) | log-lik. close (s) |",
            "|---|---|---:|---|---|---|---|---|---|---:|---:|"]

    def cell(m, q, fmt):
        return (f"{m[q]['mean'][0]:{fmt}} ({m[q]['mcse'][0]:{fmt}}) / "
                f"{m[q]['mean'][1]:{fmt}} ({m[q]['mcse'][1]:{fmt}}), R-hat {m[q]['rhat']:.2f}")

    def secs(value):
        return "—" if value is None else f"{value:.0f}"

    for key, res in results.items():
        its = " / ".join(str(len(res["chains"][str(s)])) for s in STARTS)
        for m, part in ((res["meeting"], "second half"),
                        (res["meeting_last_third"], "last third")):
            body.append(f"| {res['data']} | {res['config']} {res['settings'] or ''} | "
                        f"{res['seconds']:.0f} | {its} | {part} | {cell(m, 'K', '.1f')} | "
                        f"{cell(m, 'K_1pct', '.1f')} | {cell(m, 'log_likelihood', '.0f')} | "
                        f"{'yes' if m['met'] else 'no'} | "
                        f"{secs(res['first_close_seconds'])} | "
                        f"{secs(res['loglik_close_seconds'])} |")
    body += [""] + [f"![{k}](ballots_{k}{'_quick' if args.quick else ''}.png)"
                    for k in results]
    if families:
        import ballots_families

        body += [""] + ballots_families.markdown(families)
    save_chains(results, stem)
    summaries = {k: {f: v for f, v in res.items() if f != "chains"} for k, res in results.items()}
    write_results("ballots", args.quick, {"machine": machine or machine_info(),
                                          "runs": summaries,
                                          **({"families": families} if families else {})},
                  "Chains that meet on the Dublin West ballots", body)


if __name__ == "__main__":
    main()
