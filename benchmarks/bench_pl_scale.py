"""Plackett–Luce at scale: the split–merge samplers given the Gamma latents against explicit
Gibbs, on the Dublin West ballots (29,988, 9 candidates) and on the ballots replicated ten
times (299,880).

For each data set and sampler, two chains of the exact posterior (DP, α = 1, worth shape 1),
one started from 10 random clusters and one from 150, run side by side (one process, one
core each) for a fixed wall-clock budget, as ``bench_ballots.py`` runs the Mallows chains:

* ``explicit``: Neal's algorithm 2 with the worths in the state (each distinct ballot
  scored once a sweep);
* ``gibbs+sams``: what ``sampler="gibbs+sams"`` runs on this family: a sweep of explicit
  Gibbs, then merge–split proposals given the latents (here ten a sweep:
  ``LatentAugmented(GibbsSAMS(gibbs=None, n_proposals=10), explicit_sweep=True)``,
  :mod:`dpclust.samplers.augmented`);
* ``collapsed+sams``: collapsed Gibbs sweeps on the augmented ballots and one proposal
  (``LatentAugmented(GibbsSAMS())``);
* ``subcluster``: what ``sampler="subcluster"`` runs: the sub-cluster sampler's exact
  split–merge moves given the latents, with the restricted Gibbs pass at drawn worths;
  ``subcluster-collapsed``: the same with the collapsed pass (``data_pass="collapsed"``).

Figures: seconds per iteration (the median over the second half of the chain from 10
clusters; the ratio to explicit Gibbs in the same run), and whether the two chains meet
(R-hat < 1.05 and means within two standard errors, over the second half, for K, the
clusters holding ≥ 1 % and the log-likelihood ``sum_i log PL(pi_i | p_{z_i})``; the
"close" columns: the first second at which their 200-iteration running means are within 3
clusters and within 1,000 nats, times the replication for the replicated ballots).
Printed and written to ``benchmarks/results/pl_scale.{json,md}``.

Run: ``.venv/bin/python benchmarks/bench_pl_scale.py [--quick] [--seconds 300]
[--data full x10] [--samplers explicit gibbs+sams subcluster]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import machine_info, write_results
from bench_ballots import first_meeting, meeting, record_chain

STARTS = (10, 150)
SAMPLERS = ("explicit", "gibbs+sams", "collapsed+sams", "subcluster",
            "subcluster-collapsed")
REPLICATION = {"full": 1, "x10": 10, "2k": 1}


def ballots(which: str):
    from dpclust.datasets import load_dublin_west

    X = load_dublin_west()
    if which == "2k":
        return X[np.sort(np.random.default_rng(5).choice(len(X), 2000, replace=False))]
    return X[np.tile(np.arange(len(X)), REPLICATION[which])]


def configured(name: str, fam):
    """The sampler of configuration ``name`` (module notes) for the family ``fam``."""
    from dpclust.samplers import ExplicitGibbs, GibbsSAMS, SubclusterSplitMerge
    from dpclust.samplers.augmented import LatentAugmented

    return {"explicit": ExplicitGibbs(),
            "gibbs+sams": LatentAugmented(GibbsSAMS(gibbs=None, n_proposals=10),
                                          explicit_sweep=True),
            "collapsed+sams": LatentAugmented(GibbsSAMS()),
            "subcluster": LatentAugmented(SubclusterSplitMerge(data_pass="instantiated")),
            "subcluster-collapsed": LatentAugmented(
                SubclusterSplitMerge(data_pass="collapsed"))}[name]


def run_chain(args):
    """One chain for ``seconds`` of wall clock: rows (iteration, K, K >= 1 %,
    log-likelihood, log joint, accepted splits, accepted merges, seconds)."""
    which, name, start, seconds, seed = args
    import numba

    numba.set_num_threads(1)  # one core a chain: the two chains run side by side
    from dpclust.families import PlackettLuce
    from dpclust.samplers import MixtureModel

    X = ballots(which)
    fam = PlackettLuce().resolve(X)
    model = MixtureModel(fam, X)
    sampler = configured(name, fam)
    small = MixtureModel(fam, X[:300])  # compiled code loaded before the clock
    sampler.step(np.random.default_rng(0),
                 sampler.init(np.random.default_rng(0), small, n_clusters=5), small)
    rng = np.random.default_rng([seed, start])
    t0 = time.perf_counter()  # the start counts: it draws the latents and worths
    return record_chain(sampler, model, sampler.init(rng, model, n_clusters=start), rng,
                        seconds, t0)


def per_iteration(rows) -> float:
    """Median seconds an iteration over the second half of a chain."""
    t = np.asarray(rows, dtype=float)[:, 7]
    return float(np.median(np.diff(t[len(t) // 2:]))) if len(t) > 3 else float("nan")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--data", nargs="+", choices=list(REPLICATION), default=["full", "x10"])
    p.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    p.add_argument("--seconds", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    seconds = args.seconds or (15.0 if args.quick else 300.0)
    data = ["2k"] if args.quick else args.data
    ctx = mp.get_context("spawn")
    runs = {}
    for which in data:
        for name in args.samplers:
            print(f"{which} {name}: two chains (from {STARTS[0]} and {STARTS[1]} clusters), "
                  f"{seconds:.0f} s each", flush=True)
            with ctx.Pool(2) as pool:
                chains = pool.map(run_chain, [(which, name, s, seconds, args.seed)
                                              for s in STARTS])
            scale = REPLICATION[which]
            res = {"data": which, "sampler": name, "seconds": seconds,
                   "iterations": [len(c) for c in chains],
                   "s_per_iteration": per_iteration(chains[0]),
                   "meeting": meeting(*chains),
                   "K_close_seconds": first_meeting(*chains),
                   "loglik_close_seconds": first_meeting(*chains, col=3,
                                                          tol=1000.0 * scale)}
            runs[f"{which}-{name}"] = res
            m = res["meeting"]
            print(f"  {res['iterations']} iterations, {res['s_per_iteration']:.3f} s each; "
                  + "; ".join(f"{q} {m[q]['mean'][0]:.1f} vs {m[q]['mean'][1]:.1f} "
                              f"(R-hat {m[q]['rhat']:.3f})"
                              for q in ("K", "K_1pct", "log_likelihood"))
                  + f"; met: {m['met']}", flush=True)
    body = ["Two chains per sampler, from 10 and 150 random clusters, one core each, "
            f"{seconds:.0f} s each; the exact posterior (DP α = 1, worth shape 1).  "
            "s / it.: median over the second half of the chain from 10 clusters; × explicit: "
            "its ratio to explicit Gibbs on the same data in this run.  Means over the second "
            "half (chain from 10 / from 150) and the two chains' R-hat.  *Met*: R-hat < 1.05 "
            "and means within two standard errors for all three.  *Close*: first second "
            "at which the 200-iteration running means are within 3 clusters / 1,000 nats "
            "(× the replication).", "",
            "| data | sampler | iterations | s / it. | × explicit | K | K ≥ 1 % | "
            "log-likelihood | met | K close (s) | log-lik. close (s) |",
            "|---|---|---|---:|---:|---|---|---|---|---:|---:|"]

    def cell(m, q, fmt):
        return (f"{m[q]['mean'][0]:{fmt}} / {m[q]['mean'][1]:{fmt}}, "
                f"R-hat {m[q]['rhat']:.2f}")

    def secs(v):
        return "—" if v is None else f"{v:.0f}"

    for res in runs.values():
        base = runs.get(f"{res['data']}-explicit")
        ratio = (f"{res['s_per_iteration'] / base['s_per_iteration']:.2f}" if base else "—")
        m = res["meeting"]
        body.append(f"| {res['data']} | {res['sampler']} | "
                    f"{' / '.join(map(str, res['iterations']))} | "
                    f"{res['s_per_iteration']:.3f} | {ratio} | {cell(m, 'K', '.1f')} | "
                    f"{cell(m, 'K_1pct', '.1f')} | {cell(m, 'log_likelihood', '.0f')} | "
                    f"{'yes' if m['met'] else 'no'} | {secs(res['K_close_seconds'])} | "
                    f"{secs(res['loglik_close_seconds'])} |")
        res["x_explicit"] = ratio
    for line in body[3:]:
        print(line)
    write_results("pl_scale", args.quick, {"machine": machine_info(), "runs": runs},
                  "Plackett–Luce at scale: split–merge moves given the latents", body)


if __name__ == "__main__":
    main()
