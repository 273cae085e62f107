"""Misspecified real data: coarsened posteriors and fused clusters (K that means something).

Parts (``--part``, several allowed; each merges its figures into ``results/robust.json``):

* ``ballots-calibration``: Miller & Dunson's calibration of ``alpha_c`` on the 29,988
  Dublin West ballots (Generalized Mallows components): fit against complexity over a grid,
  and the elbow :func:`dpclust.estimators.coarsening.calibrate` picks.
* ``ballots-chains``: two chains at the chosen ``alpha_c``, one from 1 cluster and one from
  30, run side by side (one process each, two cores) for at most ``--minutes``; R-hat and
  bulk/tail ESS per chain (ArviZ) of the log-likelihood, K and the clusters >= 1 %.
* ``ballots-n``: E[clusters >= 1 %] on random 3,000 / 10,000 / 29,988 ballots at the chosen
  ``alpha_c`` (coarsened) and, for the first two, under the exact DP posterior
  (slice-gibbs), the "before".
* ``gaussian``: a real Gaussian data set shipped inside a registry package (see
  ``gaussian_data.py``) at 20 % / 50 % / 100 % of its rows: the exact DP posterior, the
  coarsened one, fused clusters of the exact one and scikit-learn's
  ``BayesianGaussianMixture``.

The ballots parts fit Generalized Mallows components unless ``--family plackett-luce``
says otherwise; each family's figures are kept apart (keys and figures of Plackett–Luce end
in ``_plackett_luce``).

Usage: ``.venv/bin/python benchmarks/bench_robust.py --part ballots-calibration
ballots-chains ballots-n gaussian [--family F] [--quick]``; writes
``benchmarks/results/robust.json``, ``robust.md`` and ``robust_*.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, save_results  # noqa: E402

RESULTS = HERE / "results"
#: the finite mixture of every coarsened ballots fit (30 components, so that a chain can
#: start from 30 clusters)
BALLOTS_PRIOR = "finite:30"
#: the families of rankings the ballots parts fit, and what the markdown calls them
FAMILY_TITLES = {"mallows": "Generalized Mallows", "plackett-luce": "Plackett-Luce"}


def _key(name: str, family: str) -> str:
    """The results key (and figure stem) of a ballots part for ``family``: the plain name
    for Generalized Mallows, suffixed for the others."""
    return name if family == "mallows" else f"{name}_{family.replace('-', '_')}"


def _ballots():
    from dpclust.datasets import load_dublin_west

    R = load_dublin_west()
    return R[0] if isinstance(R, tuple) else R


def _large(trace, kept) -> np.ndarray:
    return np.asarray(trace.n_large_clusters)[..., kept]


# ------------------------------------------------------------------ calibration
def ballots_calibration(quick: bool, family: str = "mallows") -> dict:
    from dpclust import DPMixture
    from dpclust.estimators.coarsening import calibrate

    X = _ballots()
    t0 = time.perf_counter()
    cal = calibrate(DPMixture(family=family, coarsening="auto", prior=BALLOTS_PRIOR,
                              random_state=0, n_chains=1, n_iter=200), X,
                    n_iter=40 if quick else 100)
    out = {**cal.as_dict(), "seconds": time.perf_counter() - t0, "family": family}
    print("calibration:", json.dumps(out))
    _plot_calibration(out, RESULTS / f"{_key('robust_calibration', family)}.png")
    return {_key("ballots_calibration", family): out}


def _plot_calibration(cal: dict, path: Path) -> None:
    from dpclust.utils.plotting import import_matplotlib, new_figure, save_figure, style_axes

    mpl = import_matplotlib()
    fig = new_figure(mpl, (5.2, 3.6))
    ax = fig.subplots()
    style_axes(ax)
    ax.plot(cal["complexity"], cal["fit"], "o-", color="#1f4e79")
    for a, x, y in zip(cal["alpha_c"], cal["complexity"], cal["fit"]):
        ax.annotate(f"{a:g}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=8)
    i = cal["alpha_c"].index(cal["chosen"])
    ax.plot([cal["complexity"][i]], [cal["fit"][i]], "o", ms=12, mfc="none", color="#c0392b")
    ax.set_xlabel("complexity: E[clusters with >= 1 % of the ballots]")
    ax.set_ylabel("fit: E[log-likelihood] per ballot")
    ax.set_title(f"Dublin West: alpha_c chosen at the elbow, {cal['chosen']:g}", fontsize=10)
    save_figure(fig, path)


# ----------------------------------------------------------------------- chains
def _one_chain(args):
    alpha_c, init_clusters, seed, seconds, max_iter, family = args
    from dpclust import DPMixture

    X = _ballots()
    stop_at = time.perf_counter() + seconds
    it = [0]

    def budget(i, state, info):
        it[0] = i
        return time.perf_counter() < stop_at

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(family=family, coarsening=alpha_c, prior=BALLOTS_PRIOR,
                      n_iter=max_iter, init_clusters=init_clusters, init="random",
                      random_state=seed, callback=budget, n_chains=1).fit(X)
    tr = m.trace_  # one chain: chain 0
    return {"log_likelihood": np.asarray(tr.log_likelihood[0]).tolist(),
            "n_clusters": np.asarray(tr.n_clusters[0]).tolist(),
            "n_large_clusters": np.asarray(tr.n_large_clusters[0]).tolist(),
            "seconds": np.asarray(tr.seconds[0]).tolist()}


def ballots_chains(alpha_c: float, minutes: float, quick: bool, seeds=(1, 30),
                   family: str = "mallows") -> dict:
    import arviz as az

    seconds = 60.0 * (1.0 if quick else minutes)
    jobs = [(alpha_c, 1, seeds[0], seconds, 100_000, family),
            (alpha_c, 30, seeds[1], seconds, 100_000, family)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        runs = list(pool.map(_one_chain, jobs))
    wall = time.perf_counter() - t0
    n = min(len(r["log_likelihood"]) for r in runs)
    burn = n // 2
    out = {"alpha_c": alpha_c, "wall_seconds": wall, "iterations_per_chain": n,
           "burn_in": burn, "starts": [1, 30], "seeds": list(seeds), "family": family,
           "quantities": {}}
    for name in ("log_likelihood", "n_clusters", "n_large_clusters"):
        x = np.array([r[name][burn:n] for r in runs], dtype=np.float64)
        out["quantities"][name] = {
            "rhat": float(az.rhat(x)), "ess_bulk_per_chain": float(az.ess(x, method="bulk")) / 2,
            "ess_tail_per_chain": float(az.ess(x, method="tail")) / 2,
            "mean_per_chain": x.mean(axis=1).tolist()}
    q = out["quantities"]
    out["met"] = bool(all(v["rhat"] < 1.01 and v["ess_bulk_per_chain"] >= 100
                          and v["ess_tail_per_chain"] >= 100 for v in q.values()))
    print("chains:", json.dumps(out))
    _plot_chains(runs, burn, n, RESULTS / f"{_key('robust_chains', family)}.png", alpha_c,
                 family)
    return {_key("ballots_chains", family): out}


def _plot_chains(runs, burn, n, path, alpha_c, family="mallows"):
    from dpclust.utils.plotting import import_matplotlib, new_figure, save_figure, style_axes

    mpl = import_matplotlib()
    fig = new_figure(mpl, (10.0, 3.2))
    axes = fig.subplots(1, 3)
    for ax, name, label in zip(axes, ("log_likelihood", "n_clusters", "n_large_clusters"),
                               ("log-likelihood", "K (occupied)", "clusters >= 1 %")):
        style_axes(ax)
        for r, start, colour in zip(runs, (1, 30), ("#1f4e79", "#c0392b")):
            ax.plot(np.arange(n), np.asarray(r[name][:n]), lw=0.7, color=colour,
                    label=f"from {start}")
        ax.axvline(burn, color="#999999", lw=0.8, ls="--")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("iteration")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Dublin West, coarsened {FAMILY_TITLES[family]} posterior (alpha_c = "
                 f"{alpha_c:g}): two chains", fontweight="bold")
    save_figure(fig, path)


# ------------------------------------------------------------------ K against N
def _one_subset(args):
    """One chain on a random subset of the ballots (the subset drawn from seed 0)."""
    n, posterior, alpha_c, n_iter, seed, family = args
    import numba

    from dpclust import DPMixture

    numba.set_num_threads(1)
    R = _ballots()
    idx = np.sort(np.random.default_rng(0).choice(len(R.orders), n, replace=False))
    X = R[idx] if n < len(R.orders) else R
    kw = (dict(coarsening=alpha_c, prior=BALLOTS_PRIOR) if posterior == "coarsened"
          else dict(sampler="auto"))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPMixture(family=family, random_state=seed, n_iter=n_iter, n_chains=1, **kw).fit(X)
    tr = m.trace_  # one chain: chain 0
    return {"n_clusters": np.asarray(tr.n_clusters[0]).tolist(),
            "n_large_clusters": np.asarray(tr.n_large_clusters[0]).tolist(),
            "seconds": time.perf_counter() - t0}


def ballots_n(alpha_c: float, quick: bool, family: str = "mallows") -> dict:
    """E[K] and E[clusters >= 1 %] on random 3,000 / 10,000 / all ballots: two chains of
    the coarsened posterior per size (the second half of each kept), one of the exact DP
    posterior for the two smaller sizes, run two at a time."""
    import arviz as az

    n_all = len(_ballots().orders)
    sizes = (3000, 10000) if quick else (3000, 10000, n_all)
    its = {3000: 3000, 10000: 3000, n_all: 3000}
    jobs = []
    for n in sizes:
        jobs += [(n, "coarsened", alpha_c, 300 if quick else its[n], seed, family)
                 for seed in (1, 2)]
        if n <= 10000:
            jobs.append((n, "exact", alpha_c, 100 if quick else 2000, 1, family))
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        runs = list(pool.map(_one_subset, jobs))
    rows = []
    for n in sizes:
        for posterior in ("coarsened", "exact"):
            mine = [r for j, r in zip(jobs, runs) if j[0] == n and j[1] == posterior]
            if not mine:
                continue
            half = len(mine[0]["n_clusters"]) // 2
            K = np.array([r["n_clusters"][half:] for r in mine], dtype=np.float64)
            L = np.array([r["n_large_clusters"][half:] for r in mine], dtype=np.float64)
            row = {"n": n, "posterior": posterior, "chains": len(mine),
                   "iterations": 2 * half, "E_K": float(K.mean()),
                   "E_large": float(L.mean()), "sd_large": float(L.std()),
                   "mcse_large": float(L.std() / np.sqrt(max(float(az.ess(L)), 1.0))),
                   "per_chain_large": L.mean(axis=1).tolist(),
                   "seconds": float(np.mean([r["seconds"] for r in mine]))}
            print("K against N:", json.dumps(row), flush=True)
            rows.append(row)
    large = [r["E_large"] for r in rows if r["posterior"] == "coarsened"]
    return {_key("ballots_n", family): {"alpha_c": alpha_c, "rows": rows, "family": family,
                                        "coarsened_spread": float(max(large) - min(large))}}


# ------------------------------------------------------------------------ report
def write_markdown(rec: dict, path: Path) -> None:
    lines = ["# Coarsened posteriors and fused clusters on misspecified real data", ""]
    m = rec.get("machine", {})
    lines += [f"Machine: {m.get('cpu_model')}, {m.get('cpus_available')} cores; "
              f"{m.get('date')}; load {m.get('load_average_start')}.", ""]
    for family in FAMILY_TITLES:
        lines += _ballots_markdown(rec, family)
    g = rec.get("gaussian")
    if g:
        lines += [f"## {g['dataset']}", "", g.get("note", ""), "",
                  "| rows | answer | clusters (>= 1 %) | seconds |", "|---:|---|---:|---:|"]
        for r in g["rows"]:
            lines.append(f"| {r['n']} | {r['answer']} | {r['large']:.2f} | "
                         f"{r['seconds']:.0f} |")
        lines.append("")
    path.write_text("\n".join(lines) + "\n")


def _ballots_markdown(rec: dict, family: str) -> list:
    """The markdown of one family's ballots parts."""
    title = FAMILY_TITLES[family]
    lines = []
    cal = rec.get(_key("ballots_calibration", family))
    if cal:
        from dpclust.estimators.coarsening import elbow_heights, near_elbows

        heights = elbow_heights(cal["complexity"], cal["fit"])
        near = [cal["alpha_c"][i] for i in near_elbows(cal["complexity"], cal["fit"],
                                                         int(np.argmax(heights)))]
        lines += [f"## Dublin West ballots, {title}: choosing alpha_c", "",
                  "| alpha_c | zeta | fit (log-lik per ballot) | clusters >= 1 % | "
                  "height above the chord |", "|---:|---:|---:|---:|---:|"]
        for a, z, f, c, h in zip(cal["alpha_c"], cal["zeta"], cal["fit"], cal["complexity"],
                                 heights):
            mark = " **(chosen)**" if a == cal["chosen"] else ""
            lines.append(f"| {a:g}{mark} | {z:.4g} | {f:.4f} | {c:.2f} | {h:.3f} |")
        lines += ["", f"{cal['n_iter']} iterations per value, {cal['seconds']:.0f} s in all; "
                  + (f"near tie (>= 90 % of the elbow's height): {near}; " if near else
                     "no near tie; ")
                  + f"![calibration]({_key('robust_calibration', family)}.png)", ""]
    ch = rec.get(_key("ballots_chains", family))
    if ch:
        lines += [f"## {title}: two chains at alpha_c = {ch['alpha_c']:g}, from 1 and from 30 clusters",
                  "", f"{ch['iterations_per_chain']} iterations each in "
                  f"{ch['wall_seconds'] / 60:.1f} minutes (two processes), the second half "
                  "kept.", "",
                  "| quantity | R-hat | bulk ESS / chain | tail ESS / chain | chain means |",
                  "|---|---:|---:|---:|---|"]
        for name, q in ch["quantities"].items():
            lines.append(f"| {name} | {q['rhat']:.4f} | {q['ess_bulk_per_chain']:.0f} | "
                         f"{q['ess_tail_per_chain']:.0f} | "
                         f"{', '.join(f'{v:.4g}' for v in q['mean_per_chain'])} |")
        lines += ["", f"Target (R-hat < 1.01, both ESS >= 100 per chain) "
                  f"{'met' if ch['met'] else 'NOT met'}. "
                  f"![chains]({_key('robust_chains', family)}.png)", ""]
    runs = rec.get(_key("ballots_chains_runs", family), [])
    if len(runs) > 1:
        lines += ["Every pair of 10-minute chains on record (R-hat / bulk ESS per chain):", "",
                  "| alpha_c | seeds | iterations | log-likelihood | K | clusters >= 1 % | "
                  "met |", "|---:|---|---:|---|---|---|---|"]
        for r in runs:
            q = r["quantities"]
            cells = [f"{q[n]['rhat']:.3f} / {q[n]['ess_bulk_per_chain']:.0f}"
                     for n in ("log_likelihood", "n_clusters", "n_large_clusters")]
            lines.append(f"| {r['alpha_c']:g} | {r.get('seeds', [1, 30])} | "
                         f"{r['iterations_per_chain']} | " + " | ".join(cells)
                         + f" | {'yes' if r['met'] else 'no'} |")
        lines.append("")
    bn = rec.get(_key("ballots_n", family))
    if bn:
        lines += [f"## {title}: K against N (coarsened at alpha_c = {bn['alpha_c']:g}; exact DP for "
                  "comparison)", "", "| ballots | posterior | chains x iterations | E[K] | "
                  "E[clusters >= 1 %] (MCSE) | per chain | sd | seconds / chain |",
                  "|---:|---|---:|---:|---:|---|---:|---:|"]
        for r in bn["rows"]:
            per = ", ".join(f"{v:.2f}" for v in r.get("per_chain_large", []))
            lines.append(f"| {r['n']} | {r['posterior']} | {r.get('chains', 1)} x "
                         f"{r.get('iterations', '')} | {r['E_K']:.2f} | {r['E_large']:.2f} "
                         f"({r.get('mcse_large', float('nan')):.2f}) | {per} | "
                         f"{r['sd_large']:.2f} | {r['seconds']:.0f} |")
        if "coarsened_spread" in bn:
            ok = bn["coarsened_spread"] <= 1.0
            lines += ["", f"Coarsened E[clusters >= 1 %] spans "
                      f"{bn['coarsened_spread']:.2f} over the sizes (target: every two within 1 of "
                      f"each other): {'met' if ok else 'NOT met'}."]
        lines.append("")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", nargs="+", required=True,
                        choices=("ballots-calibration", "ballots-chains", "ballots-n",
                                 "gaussian"))
    parser.add_argument("--alpha-c", type=float, default=None,
                        help="the ballots' alpha_c (default: the calibration's choice in "
                             "results/robust.json, else 100); with --part gaussian, refit "
                             "only the coarsened posterior of diamonds at this alpha_c and "
                             "keep the other answers' last rows")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--chain-seeds", type=int, nargs=2, default=(1, 30),
                        help="the seeds of the chains from 1 and from 30 clusters")
    parser.add_argument("--family", choices=tuple(FAMILY_TITLES), default="mallows",
                        help="the components of the ballots parts (default: mallows)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    fam = args.family
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / ("robust_quick" if args.quick else "robust")
    payload = {"machine": machine_info()}
    for part in args.part:
        if part == "ballots-calibration":
            payload.update(ballots_calibration(args.quick, fam))
        alpha_c = args.alpha_c or _chosen(stem, payload, fam)
        if part == "ballots-chains":
            payload.update(ballots_chains(alpha_c, args.minutes, args.quick, args.chain_seeds,
                                          fam))
            payload[_key("ballots_chains_runs", fam)] = _chain_runs(
                stem, payload[_key("ballots_chains", fam)], fam)
        elif part == "ballots-n":
            payload.update(ballots_n(alpha_c, args.quick, fam))
        elif part == "gaussian":
            from bench_robust_gaussian import gaussian_part

            previous = (json.loads(stem.with_suffix(".json").read_text()).get("gaussian")
                        if args.alpha_c and stem.with_suffix(".json").exists() else None)
            payload.update(gaussian_part(args.quick, args.alpha_c, previous))
        save_results(stem, payload, write_markdown)


def _chain_runs(stem: Path, latest: dict, family: str = "mallows") -> list:
    """Every pair of chains on record for ``family`` (one per pair of seeds and alpha_c),
    the latest last: one pair meeting is not yet the rule."""
    path = stem.with_suffix(".json")
    runs = (json.loads(path.read_text()).get(_key("ballots_chains_runs", family), [])
            if path.exists() else [])
    key = (latest["alpha_c"], latest.get("seeds"))
    runs = [r for r in runs if (r["alpha_c"], r.get("seeds")) != key]
    return runs + [latest]


def _chosen(stem: Path, payload: dict, family: str = "mallows") -> float:
    key = _key("ballots_calibration", family)
    cal = payload.get(key)
    if cal is None and stem.with_suffix(".json").exists():
        cal = json.loads(stem.with_suffix(".json").read_text()).get(key)
    return float(cal["chosen"]) if cal else 100.0


if __name__ == "__main__":
    main()
