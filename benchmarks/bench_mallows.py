"""DP mixtures of Generalized Mallows models (Meilă & Chen 2010): Figures 6-8 and speed.

The paper's Figures 6, 7 and 8, and the speed of Beta-Gibbs on data shaped like its college
applications.

Parts (``--parts``, default all):

* ``figure7``: the relative error of the Beta approximation of the theta integral,
  ``B(a, b + 1)`` (n → ∞, Lemma 4) against the exact ``∫ exp(-a θ) ψ_m(θ)^-b dθ``
  (quadrature), for m = 10, 20, 50 on the paper's grid (a = ν r + S from 1 to 10; the paper's
  b = 4, 8, 16, 32, i.e. ψ's exponent ν + N_j = 3, 7, 15, 31), on a wider grid, and at the
  small m = n − j of the last ranks.
* ``figure6``: the paper's four artificial data sets (10 GM clusters of equal size, n = 20,
  t = 10 or 19, θ_j = 1 or decreasing), Slice-Gibbs against Beta-Gibbs from 20 random
  clusters, α = ν = r = 1: the variation of information to the true labels at every
  iteration, averaged over replicates (new data and a new start each).
* ``figure8``: a mixture of 3 GM models (n = 12, t = 5, θ_j = 1, equal weights): held-out
  log-likelihood per ranking (2,000 test rankings) of the DP mixture (Slice-Gibbs,
  ``DPMixture.score_samples``), the Mallows-kernel KDE (width = the true θ), EBMS (width by
  its held-out heuristic) and the true model, and the VI to the true labels of the DP
  mixture, EBMS and the true model's classification, on training and test rankings, against
  the training size N.
* ``beta_bias``: where Beta-Gibbs is biased: the posterior mean of K (all clusters, and those
  with at least 1 % of the rankings) of Beta-Gibbs against Slice-Gibbs (exact) on generated
  full rankings of n = 5, 9 and 20 items (3 GM clusters, θ_j = 0.7, N = 600 and 3,000), two
  chains each from 5 clusters, second half of each chain.
* ``speed``: Beta-Gibbs (α = ν = 100, from 20 random clusters) on 53,757 generated rankings
  of 533 items of lengths 1..10 (a GM mixture of 60 clusters whose central rankings favour
  popular items: the shape of the paper's college applications), seconds and K at every
  iteration, peak memory, and the time of 500 iterations against a 30-minute target.

Figures are printed and written to ``benchmarks/results/mallows.{json,md}`` (``--quick``:
``mallows_quick.*``), plots to ``benchmarks/results/mallows_*.png``.  Everything is seeded
(``--seed``).

Run: ``.venv/bin/python benchmarks/bench_mallows.py [--quick] [--parts figure7 figure6
figure8 speed beta_bias]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
from _common import reset_peak_rss, rss_mib, run_parts
from scipy.special import logsumexp

from dpclust import DPMixture
from dpclust.families.mallows import (
    GeneralizedMallows,
    MallowsParams,
    beta_approximation_log_integral,
    log_theta_integral,
    sample_rankings,
)
from dpclust.metrics import variation_of_information
from dpclust.rankings import Rankings
from dpclust.samplers import BetaGibbs, MixtureModel, SliceGibbs

try:  # written alongside this benchmark; the part records "not available" without them
    from dpclust.rankings.baselines import RankingEBMS, RankingKDE
    BASELINES_ERROR = None
except Exception as exc:  # noqa: BLE001 (any import failure: the baselines are optional)
    RankingEBMS = RankingKDE = None
    BASELINES_ERROR = f"{type(exc).__name__}: {exc}"

PARTS = ("figure7", "figure6", "figure8", "speed", "beta_bias")

#: Figure 7: the paper's b (= ν + N_j + 1 in its notation) and the m of ψ_m it shows
FIG7_B_PAPER = (4, 8, 16, 32)
FIG7_M = (10, 20, 50)
#: Figure 6: the paper's table (n, t, theta_j for j = 1..t)
FIG6_DATASETS = {
    1: (20, 10, lambda j: np.ones_like(j, dtype=float)),
    2: (20, 19, lambda j: np.ones_like(j, dtype=float)),
    3: (20, 10, lambda j: 1.5 - (j - 1) * 0.1),
    4: (20, 19, lambda j: 1.5 - (j - 1) * 0.05),
}
FIG6_THETA_LABEL = {1: "θ_j = 1", 2: "θ_j = 1", 3: "θ_j = 1.5 − 0.1 (j − 1)",
                    4: "θ_j = 1.5 − 0.05 (j − 1)"}
#: Figure 8: items, ranking length, clusters, their theta, test rankings
FIG8_N_ITEMS, FIG8_T, FIG8_K, FIG8_THETA, FIG8_TEST = 12, 5, 3, 1.0, 2_000
#: EBMS blurring widths: its held-out heuristic, and a fixed width inside the range its
#: docstring gives for clusters of dispersion theta_c (theta_c / 5 .. theta_c / 2)
FIG8_EBMS = {"ebms": "auto", "ebms_fixed": 0.3}
#: speed: the college applications' shape (Gormley & Murphy 2006; Meilă & Chen 2010 §8)
COLLEGE_N, COLLEGE_ITEMS, COLLEGE_MAX_LENGTH, COLLEGE_CLUSTERS = 53_757, 533, 10, 60
COLLEGE_ZIPF = 0.5              # item popularity ∝ rank^-0.5
COLLEGE_THETA = (2.0, 0.5)      # theta_j from 2.0 at rank 1 down to 0.5 at rank 10
COLLEGE_LENGTH_P = 0.6          # lengths 1 + Binomial(9, 0.6): mean 6.4
TARGET_SECONDS, TARGET_ITERS = 30 * 60, 500


# --------------------------------------------------------------------------- helpers
def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (matplotlib missing: no plot; pip install matplotlib)")
        return None
    return plt


def _save_figure(fig, name, quick):
    """Write ``results/NAME[_quick].png`` and close the figure; returns the path shown in
    the markdown."""
    import matplotlib.pyplot as plt

    path = RESULTS / (name + ("_quick" if quick else "") + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path.relative_to(HERE.parent))


def full_permutations(prefixes, n):
    """Complete top-t rankings with their missing items in increasing id order."""
    out = np.empty((len(prefixes), n), dtype=np.int64)
    for i, p in enumerate(prefixes):
        p = p[p >= 0]
        out[i, :len(p)] = p
        out[i, len(p):] = np.setdiff1d(np.arange(n), p)
    return out


def mixture_log_density(fam, X, params, log_weights):
    """``log sum_k w_k GM(pi | sigma_k, theta_k)`` per ranking, and the most probable k."""
    logp = fam.log_likelihood(X, params) + np.asarray(log_weights)[None, :]
    return logsumexp(logp, axis=1), np.argmax(logp, axis=1)


def warm_up():
    """Compile (or load from numba's cache) the kernels used here, on tiny data."""
    rng = np.random.default_rng(0)
    order = np.array([rng.permutation(8) for _ in range(2)])
    y = np.repeat([0, 1], 20)
    X = Rankings(sample_rankings(order, np.ones((2, 4)), y, rng.integers(1, 5, 40), rng), 8)
    fam = GeneralizedMallows(nu=1.0).resolve(X)
    model = MixtureModel(fam, X)
    for sampler in (SliceGibbs(), BetaGibbs()):
        state = sampler.init(rng, model, n_clusters=3, alpha=1.0)
        for _ in range(2):
            state, _ = sampler.step(rng, state, model)
    est = DPMixture(family=GeneralizedMallows(nu=1.0), sampler="slice-gibbs", n_iter=4,
                    random_state=0, n_chains=1).fit(X)
    est.score_samples(X)
    est.predict(X)
    fam.log_likelihood(X, MallowsParams(order, np.ones((2, 4))))
    if RankingKDE is not None:
        try:
            RankingKDE(theta=1.0, n_items=8).fit(X).score_samples(X)
            e = RankingEBMS(theta=0.3, n_items=8).fit(X)
            e.score_samples(X)
            e.predict(X)
        except Exception as exc:  # noqa: BLE001 (the part that uses them reports it too)
            print(f"  (baselines failed in the warm-up: {type(exc).__name__}: {exc})")


# ---------------------------------------------------------------------------- figure 7
def _relative_errors(a_values, b, m):
    """Signed relative error ``(B(a, b + 1) - exact) / exact`` for each a."""
    out = []
    for a in a_values:
        exact = log_theta_integral(float(a), float(b), int(m))
        approx = beta_approximation_log_integral(float(a), float(b))
        out.append(math.expm1(approx - exact))
    return np.array(out)


def part_figure7(quick, seed):
    a_grid = np.linspace(1.0, 10.0, 19 if quick else 37)
    b_psi = [b - 1 for b in FIG7_B_PAPER]   # ψ's exponent ν + N_j (ν = 1)
    t0 = time.perf_counter()
    curves, table = [], []
    for m in FIG7_M:
        errs = {b: _relative_errors(a_grid, b, m) for b in b_psi}
        for b in b_psi:
            curves.append({"m": m, "b_psi": b, "b_paper": b + 1, "a": a_grid.tolist(),
                           "relative_error": errs[b].tolist()})
        allv = np.abs(np.concatenate(list(errs.values())))
        worst_b = min(b_psi)
        table.append({"grid": "paper", "m": m, "max_abs": float(allv.max()),
                      "median_abs": float(np.median(allv)),
                      "at_a10_b_paper4": float(errs[worst_b][-1]),
                      "at_a2_b_paper32": float(errs[max(b_psi)][np.argmin(np.abs(a_grid - 2))]),
                      "n_points": int(allv.size)})
        print(f"  m = {m:>2} (paper grid a = 1..10, b = 4..32): max |rel. error| "
              f"{allv.max():.2e}, median {np.median(allv):.2e}; at a = 10, b = 4: "
              f"{errs[worst_b][-1]:+.3e}", flush=True)
    # a wider grid: cluster sizes up to 1,000 and codes sums up to 100
    a_wide = np.geomspace(1.0, 100.0, 9 if quick else 21)
    b_wide = (1, 2, 3, 5, 10, 30, 100, 300, 1000)
    for m in FIG7_M:
        # only the (a, b) a cluster can have: S <= N_j m (each code is at most m), i.e.
        # a - nu r <= (b - nu) m with nu = r = 1
        v = np.abs(np.concatenate([_relative_errors(a_wide[a_wide - 1 <= (b - 1) * m], b, m)
                                   for b in b_wide]))
        table.append({"grid": "wide", "m": m, "max_abs": float(v.max()),
                      "median_abs": float(np.median(v)), "n_points": int(v.size)})
        print(f"  m = {m:>2} (wide grid a = 1..100, b = 1..1000, a - 1 <= (b - 1) m): max "
              f"|rel. error| {v.max():.2e}, median {np.median(v):.2e}", flush=True)
    # the last ranks: rank j of n items integrates against psi_{n-j}; Figure 6's data sets
    # 2 and 4 (n = 20, t = 19) reach m = 1
    by_rank = []
    for m in (1, 2, 5, 10, 19):
        errs = {b: _relative_errors(a_grid, b, m) for b in b_psi}
        v = np.abs(np.concatenate(list(errs.values())))
        by_rank.append({"m": m, "rank_j_of_20_items": 20 - m, "max_abs": float(v.max()),
                        "median_abs": float(np.median(v)),
                        "at_a1": {str(b + 1): float(errs[b][0]) for b in b_psi},
                        "at_a10": {str(b + 1): float(errs[b][-1]) for b in b_psi}})
        print(f"  m = {m:>2} (rank {20 - m} of n = 20): max |rel. error| {v.max():.2e}, "
              f"median {np.median(v):.2e}", flush=True)
    out = {"nu": 1.0, "b_paper": list(FIG7_B_PAPER), "b_psi": b_psi,
           "a_grid": [float(a_grid[0]), float(a_grid[-1]), len(a_grid)],
           "wide_grid": {"a": [1.0, 100.0, len(a_wide)], "b_psi": list(b_wide)},
           "table": table, "by_rank": by_rank, "curves": curves,
           "seconds": time.perf_counter() - t0}
    out["plot"] = plot_figure7(out, quick)
    return out


def plot_figure7(out, quick):
    plt = _pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(FIG7_M), figsize=(12, 3.6))
    for ax, m in zip(axes, FIG7_M):
        for c in (c for c in out["curves"] if c["m"] == m):
            ax.plot(c["a"], c["relative_error"], label=f"b = {c['b_paper']}")
        ax.axhline(0, color="k", lw=0.6)
        ax.set_title(f"n = {m}", fontsize=10)
        ax.set_xlabel("a (= ν r + S, equivalent number of inversions)")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    axes[0].set_ylabel("(Beta − exact) / exact")
    axes[0].legend(fontsize=8, title="b = ν + N_j + 1", title_fontsize=8)
    fig.suptitle("Figure 7: relative error of B(a, b) against ∫ e^{-aθ} ψ_n(θ)^{-(b-1)} dθ",
                 fontsize=10)
    fig.tight_layout()
    return _save_figure(fig, "mallows_figure7", quick)


# ---------------------------------------------------------------------------- figure 6
def conjugate_posterior_centre(rng, n, theta0=0.7, n_perms=100, sweeps=100):
    """A central ranking as in Meilă & Chen's section 6: 100 complete permutations from
    ``GM(sigma0, theta0)`` around a uniformly random ``sigma0``, then ``sigma*`` drawn from
    the posterior of sigma given them and ``theta_j = theta0`` (uniform prior), ``∝
    exp(-theta0 sum_i d_Kendall(pi_i, sigma))``, by Metropolis over adjacent transpositions
    started at ``sigma0`` (``sweeps`` passes of n - 1 proposals).  Returns ``(sigma*,
    d_Kendall(sigma*, sigma0))``."""
    sigma0 = rng.permutation(n)
    perms = full_permutations(sample_rankings(sigma0[None], np.full((1, n - 1), theta0),
                                              np.zeros(n_perms, dtype=np.int64),
                                              np.full(n_perms, n - 1), rng), n)
    rank = np.argsort(perms, axis=1)
    before = (rank[:, :, None] < rank[:, None, :]).sum(axis=0)  # [a, b]: a before b
    sigma = sigma0.copy()
    for _ in range(sweeps):
        for p in rng.integers(0, n - 1, n - 1):
            a, b = sigma[p], sigma[p + 1]
            delta = theta0 * (before[a, b] - before[b, a])  # cost of putting b before a
            if delta <= 0 or rng.random() < math.exp(-delta):
                sigma[p], sigma[p + 1] = b, a
    return sigma, kendall_distance(sigma, sigma0)


def kendall_distance(a, b) -> int:
    ra, rb = np.argsort(a), np.argsort(b)
    da = ra[:, None] < ra[None, :]
    db = rb[:, None] < rb[None, :]
    return int((da != db).sum() // 2)


def make_figure6_data(dataset, n_samples, rng, n_clusters=10):
    """One of the paper's four data sets: ``n_samples`` top-t rankings, ``n_samples / 10``
    from each of 10 GM clusters; returns (Rankings, labels, true params, info)."""
    n, t, theta_of = FIG6_DATASETS[dataset]
    centres = [conjugate_posterior_centre(rng, n) for _ in range(n_clusters)]
    order = np.array([c[0] for c in centres])
    theta = np.tile(theta_of(np.arange(1, t + 1)), (n_clusters, 1))
    y = np.repeat(np.arange(n_clusters), n_samples // n_clusters)
    y = np.concatenate([y, np.arange(n_samples - len(y))])
    X = Rankings(sample_rankings(order, theta, y, np.full(n_samples, t), rng), n)
    d = [kendall_distance(order[i], order[j]) for i in range(n_clusters) for j in range(i)]
    info = {"moved_from_sigma0": [c[1] for c in centres],
            "centre_kendall_mean": float(np.mean(d)), "centre_kendall_min": int(min(d))}
    return X, y, MallowsParams(order, theta), info


def part_figure6(quick, seed, n_iter=None, n_reps=None, n_samples=None):
    n_samples = n_samples or (1_000 if quick else 5_000)
    n_iter = n_iter or (30 if quick else 250)
    n_reps = n_reps or (3 if quick else 10)
    samplers = {"Beta-Gibbs": BetaGibbs, "Slice-Gibbs": SliceGibbs}
    print(f"  N = {n_samples:,} (10 clusters of {n_samples // 10}), {n_iter} iterations, "
          f"{n_reps} replicates, from 20 random clusters, alpha = nu = r = 1", flush=True)
    datasets = []
    t_all = time.perf_counter()
    for ds, (n, t, _) in FIG6_DATASETS.items():
        runs = {name: [] for name in samplers}
        refs = []
        for rep in range(n_reps):
            rng = np.random.default_rng([seed, ds, rep])
            X, y, params, info = make_figure6_data(ds, n_samples, rng)
            fam = GeneralizedMallows(nu=1.0, r=1.0).resolve(X)
            model = MixtureModel(fam, X)
            _, bayes = mixture_log_density(fam, X, params, np.full(10, -math.log(10)))
            info["vi_true_model"] = float(variation_of_information(bayes, y))
            refs.append(info)
            for name, cls in samplers.items():
                srng = np.random.default_rng([seed, ds, rep, 1])  # the same start for both
                sampler = cls()
                t0 = time.perf_counter()
                state = sampler.init(srng, model, n_clusters=20, alpha=1.0)
                t_init = time.perf_counter() - t0
                vis, ks, secs, joints, acc = [], [], [], [], []
                for _ in range(n_iter):
                    t0 = time.perf_counter()
                    state, step_info = sampler.step(srng, state, model)
                    secs.append(time.perf_counter() - t0)
                    vis.append(float(variation_of_information(state.labels, y)))
                    ks.append(int(step_info.n_clusters))
                    joints.append(float(step_info.log_joint))
                    acc.append(float(step_info.sigma_acceptance))
                runs[name].append({"vi": vis, "k": ks, "seconds": secs, "log_joint": joints,
                                   "sigma_acceptance": acc, "seconds_init": t_init})
            print(f"  data set {ds} (n = {n}, t = {t}) replicate {rep}: final VI "
                  + ", ".join(f"{s} {runs[s][-1]['vi'][-1]:.4f} (K = {runs[s][-1]['k'][-1]}, "
                              f"{np.mean(runs[s][-1]['seconds']) * 1e3:.0f} ms/it)"
                              for s in samplers)
                  + f"; true model's classification VI {info['vi_true_model']:.4f}", flush=True)
        summary = {}
        for name in samplers:
            vi = np.array([r["vi"] for r in runs[name]])
            secs = np.array([r["seconds"] for r in runs[name]])
            reach = [int(np.argmax(v < 0.01)) + 1 if (v < 0.01).any() else None for v in vi]
            summary[name] = {
                "vi_mean": vi.mean(axis=0).tolist(),
                "seconds_mean_cumulative": np.cumsum(secs.mean(axis=0)).tolist(),
                "final_vi": vi[:, -1].tolist(), "final_vi_mean": float(vi[:, -1].mean()),
                "final_k": [r["k"][-1] for r in runs[name]],
                "seconds_per_iter": float(secs.mean()),
                "iterations_to_vi_below_0.01": reach,
                "sigma_acceptance_mean": float(np.mean([r["sigma_acceptance"]
                                                        for r in runs[name]])),
                "k_trace_first_replicate": runs[name][0]["k"],
                "vi_trace_per_replicate": [_thin(v, 100) for v in vi.tolist()],
            }
        datasets.append({"dataset": ds, "n_items": n, "t": t, "theta": FIG6_THETA_LABEL[ds],
                         "vi_true_model": float(np.mean([r["vi_true_model"] for r in refs])),
                         "centre_kendall_mean": float(np.mean([r["centre_kendall_mean"]
                                                               for r in refs])),
                         "centre_kendall_min": int(min(r["centre_kendall_min"] for r in refs)),
                         "centres_moved_from_sigma0": int(sum(sum(r["moved_from_sigma0"])
                                                              for r in refs)),
                         "samplers": summary})
        print(f"  data set {ds}: mean final VI "
              + ", ".join(f"{s} {summary[s]['final_vi_mean']:.4f} "
                          f"({summary[s]['seconds_per_iter'] * 1e3:.0f} ms/it)" for s in samplers),
              flush=True)
    wall = time.perf_counter() - t_all
    per_point_iter = np.mean([d["samplers"][s]["seconds_per_iter"] for d in datasets
                              for s in samplers]) / n_samples
    estimate = per_point_iter * 5_000 * 250 * 10 * len(samplers) * len(datasets)
    out = {"n_samples": n_samples, "n_clusters_true": 10, "n_iter": n_iter,
           "n_replicates": n_reps, "init_clusters": 20, "alpha": 1.0, "nu": 1.0, "r": 1.0,
           "datasets": datasets, "wall_seconds": wall,
           "estimate_full_seconds": float(estimate)}
    print(f"  wall {wall:.0f} s; the full run (N = 5,000, 250 iterations, 10 replicates) "
          f"should take about {estimate / 60:.0f} min of sampling", flush=True)
    out["plot"], out["plot_seconds"] = plot_figure6(out, quick)
    return out


def _thin(values, keep):
    step = max(1, len(values) // keep)
    return values[::step] + (values[-1:] if (len(values) - 1) % step else [])


VI_FLOOR = 1e-4  # VI = 0 (the true partition) drawn at the floor of the log axis


def plot_figure6(out, quick):
    plt = _pyplot()
    if plt is None:
        return None, None
    paths = []
    for by_time in (False, True):
        fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), sharey=True)
        for ax, d in zip(axes.ravel(), out["datasets"]):
            for name, c in (("Beta-Gibbs", "C0"), ("Slice-Gibbs", "C1")):
                s = d["samplers"][name]
                x = s["seconds_mean_cumulative"] if by_time else np.arange(1, out["n_iter"] + 1)
                ax.plot(x, np.maximum(s["vi_mean"], VI_FLOOR), color=c, label=name)
            ax.axhline(max(d["vi_true_model"], VI_FLOOR), color="k", ls=":", lw=0.8,
                       label="true model's classification")
            ax.set_yscale("log")
            ax.set_ylim(VI_FLOOR * 0.8, 10)
            ax.set_title(f"data set {d['dataset']}: n = {d['n_items']}, t = {d['t']}, "
                         f"{d['theta']}", fontsize=9)
            ax.set_xlabel("seconds (mean over replicates)" if by_time else "iteration")
            ax.set_ylabel("VI to the true labels")
        axes[0, 0].legend(fontsize=8)
        fig.suptitle(f"Figure 6: N = {out['n_samples']:,}, mean of {out['n_replicates']} "
                     f"replicates, from 20 random clusters (VI = 0 drawn at {VI_FLOOR:g})",
                     fontsize=10)
        fig.tight_layout()
        paths.append(_save_figure(fig, "mallows_figure6" + ("_seconds" if by_time else ""),
                                  quick))
    return paths[0], paths[1]


# ---------------------------------------------------------------------------- figure 8
def figure8_truth(rng):
    order = np.array([rng.permutation(FIG8_N_ITEMS) for _ in range(FIG8_K)])
    return MallowsParams(order, np.full((FIG8_K, FIG8_T), FIG8_THETA))


def figure8_draw(params, n_samples, rng):
    y = rng.integers(0, FIG8_K, n_samples)
    orders = sample_rankings(params.order, params.theta, y, np.full(n_samples, FIG8_T), rng)
    return Rankings(orders, FIG8_N_ITEMS), y


def part_figure8(quick, seed, sizes=None, n_reps=None, n_iter=None, ebms_max=None):
    sizes = sizes or ((100, 300, 1_000) if quick else (100, 300, 1_000, 3_000, 10_000))
    n_reps = n_reps or (3 if quick else 10)
    n_iter = n_iter or 200
    ebms_max = ebms_max or 10_000
    baselines = BASELINES_ERROR is None
    if not baselines:
        print(f"  baselines not available ({BASELINES_ERROR}): DPM and the true model only",
              flush=True)
    print(f"  {FIG8_K} GM clusters, n = {FIG8_N_ITEMS}, t = {FIG8_T}, theta = {FIG8_THETA}, "
          f"equal weights; N = {', '.join(f'{s:,}' for s in sizes)}; {FIG8_TEST:,} test "
          f"rankings; {n_reps} replicates; DPM: Slice-Gibbs, alpha = nu = 1, {n_iter} "
          "iterations (half burn-in)", flush=True)
    rows = []
    for N in sizes:
        for rep in range(n_reps):
            rng = np.random.default_rng([seed, N, rep])
            params = figure8_truth(rng)
            X, y = figure8_draw(params, N, rng)
            X_test, y_test = figure8_draw(params, FIG8_TEST, rng)
            fam = GeneralizedMallows(n_items=FIG8_N_ITEMS).resolve(X)
            logw = np.full(FIG8_K, -math.log(FIG8_K))
            true_test, true_cls_test = mixture_log_density(fam, X_test, params, logw)
            _, true_cls = mixture_log_density(fam, X, params, logw)
            row = {"n_train": N, "replicate": rep,
                   "true": {"loglik": float(true_test.mean()),
                            "vi_train": float(variation_of_information(true_cls, y)),
                            "vi_test": float(variation_of_information(true_cls_test, y_test))}}
            t0 = time.perf_counter()
            est = DPMixture(family=GeneralizedMallows(n_items=FIG8_N_ITEMS, nu=1.0),
                            sampler="slice-gibbs", alpha=1.0, n_iter=n_iter,
                            random_state=int(rng.integers(2**31)), n_chains=1).fit(X)
            secs = time.perf_counter() - t0
            row["dpm"] = {"loglik": float(est.score_samples(X_test).mean()),
                          "vi_train": float(variation_of_information(est.labels_, y)),
                          "vi_test": float(variation_of_information(est.predict(X_test),
                                                                    y_test)),
                          "n_clusters": int(est.n_clusters_), "seconds": secs}
            if baselines:
                row["kde"] = _run_kde(X, X_test)
                for key, width in FIG8_EBMS.items():
                    row[key] = (_run_ebms(X, y, X_test, y_test, seed, width) if N <= ebms_max
                                else {"skipped": f"N > {ebms_max:,}"})
            rows.append(row)
            print(f"  N = {N:>6,} rep {rep}: test log-lik per ranking: true "
                  f"{row['true']['loglik']:.4f}, DPM {row['dpm']['loglik']:.4f} (K = "
                  f"{row['dpm']['n_clusters']}, {secs:.1f} s)"
                  + (f", KDE {_fmt_opt(row['kde'], 'loglik')}, EBMS "
                     f"{_fmt_opt(row['ebms'], 'loglik')} (θ = 0.3: "
                     f"{_fmt_opt(row['ebms_fixed'], 'loglik')})" if baselines else "")
                  + f"; VI train/test: DPM {row['dpm']['vi_train']:.3f}/"
                  f"{row['dpm']['vi_test']:.3f}"
                  + (f", EBMS {_fmt_opt(row['ebms'], 'vi_train', '.3f')}/"
                     f"{_fmt_opt(row['ebms'], 'vi_test', '.3f')} (θ = 0.3: "
                     f"{_fmt_opt(row['ebms_fixed'], 'vi_train', '.3f')}/"
                     f"{_fmt_opt(row['ebms_fixed'], 'vi_test', '.3f')})" if baselines else "")
                  + f", true {row['true']['vi_train']:.3f}/{row['true']['vi_test']:.3f}",
                  flush=True)
    out = {"n_items": FIG8_N_ITEMS, "t": FIG8_T, "n_clusters_true": FIG8_K,
           "theta": FIG8_THETA, "n_test": FIG8_TEST, "sizes": list(sizes),
           "n_replicates": n_reps, "n_iter": n_iter, "alpha": 1.0, "nu": 1.0,
           "kde_theta": FIG8_THETA, "ebms_theta": dict(FIG8_EBMS),
           "ebms_max_n": ebms_max,
           "baselines": "available" if baselines else f"not available ({BASELINES_ERROR})",
           "rows": rows, "summary": _figure8_summary(rows, sizes)}
    out["plot"] = plot_figure8(out, quick)
    return out


def _fmt_opt(res, key, fmt=".4f"):
    return format(res[key], fmt) if key in res else "—"


def _run_kde(X, X_test):
    try:
        t0 = time.perf_counter()
        kde = RankingKDE(theta=FIG8_THETA, n_items=FIG8_N_ITEMS).fit(X)
        return {"loglik": float(kde.score_samples(X_test).mean()),
                "seconds": time.perf_counter() - t0}
    except Exception as exc:  # noqa: BLE001 (a baseline still being written)
        return {"error": f"{type(exc).__name__}: {exc}"}


def _run_ebms(X, y, X_test, y_test, seed, width):
    import warnings

    try:
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ebms = RankingEBMS(theta=width, n_items=FIG8_N_ITEMS, random_state=seed).fit(X)
        return {"loglik": float(ebms.score_samples(X_test).mean()),
                "vi_train": float(variation_of_information(ebms.labels_, y)),
                "vi_test": float(variation_of_information(ebms.predict(X_test), y_test)),
                "n_clusters": int(ebms.n_clusters_), "theta": float(ebms.theta_),
                "seconds": time.perf_counter() - t0,
                "warnings": [str(w.message) for w in caught]}
    except Exception as exc:  # noqa: BLE001 (a baseline still being written)
        return {"error": f"{type(exc).__name__}: {exc}"}


def _figure8_summary(rows, sizes):
    """Mean and standard error over replicates of every figure, per N and model."""
    out = []
    for N in sizes:
        r = [x for x in rows if x["n_train"] == N]
        entry = {"n_train": N}
        for model in ("true", "dpm", "kde", *FIG8_EBMS):
            res = [x[model] for x in r if model in x]
            for key in ("loglik", "vi_train", "vi_test", "n_clusters", "seconds"):
                v = np.array([x[key] for x in res if key in x], dtype=float)
                if len(v):
                    entry[f"{model}_{key}"] = float(v.mean())
                    entry[f"{model}_{key}_se"] = (float(v.std(ddof=1) / math.sqrt(len(v)))
                                                  if len(v) > 1 else 0.0)
        out.append(entry)
    return out


def plot_figure8(out, quick):
    plt = _pyplot()
    if plt is None:
        return None
    s = out["summary"]
    N = [x["n_train"] for x in s]
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(6, 7), sharex=True)
    for model, label, c in (("true", "true", "k"), ("dpm", "DPM", "C0"),
                            ("ebms", "EBMS (θ auto)", "C1"), ("ebms_fixed", "EBMS (θ = 0.3)", "C3"),
                            ("kde", f"KDE (θ = {out['kde_theta']:g})", "C2")):
        pts = [(x["n_train"], x[f"{model}_loglik"], x[f"{model}_loglik_se"]) for x in s
               if f"{model}_loglik" in x]
        if pts:
            ax.errorbar(*zip(*pts), fmt="o-", color=c, capsize=3, label=label)
        for split, ls in (("train", "-"), ("test", "--")):
            pts = [(x["n_train"], x[f"{model}_vi_{split}"], x[f"{model}_vi_{split}_se"])
                   for x in s if f"{model}_vi_{split}" in x]
            if pts and model != "kde":
                bx.errorbar(*zip(*pts), fmt="o" + ls, color=c, capsize=3,
                            label=f"{label} {split}")
    ax.set_ylabel("test log-likelihood per ranking")
    ax.legend(fontsize=8)
    ax.set_title(f"Figure 8: {out['n_clusters_true']} GM clusters, n = {out['n_items']}, "
                 f"t = {out['t']}, θ = {out['theta']:g}; {out['n_test']:,} test rankings, "
                 f"{out['n_replicates']} replicates", fontsize=9)
    bx.set_xscale("log")
    bx.set_xticks(N, [f"{n:,}" for n in N])
    bx.minorticks_off()
    bx.set_xlabel("training rankings N")
    bx.set_ylabel("VI to the true labels")
    bx.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _save_figure(fig, "mallows_figure8", quick)


# ------------------------------------------------------------------------------ speed
def make_college_like(n_samples=COLLEGE_N, rng=None):
    """Rankings shaped like the CAO college applications (N = 53,757 students, n = 533
    courses, lists of 1..10): a GM mixture of 60 clusters, weights ~ Dirichlet(1); item
    popularity ``p_i ∝ rank_i^-0.5`` (a random order of the items); each cluster's central
    ranking is a Plackett-Luce draw from the popularities (items sorted by ``log p_i +
    Gumbel``), so its top is made of popular items; ``theta_j`` falls linearly from 2.0 at
    rank 1 to 0.5 at rank 10 (the trend of the paper's Figure 11); lengths ``1 +
    Binomial(9, 0.6)`` (mean 6.4; the paper's clusters average 6.15 to 6.63)."""
    rng = np.random.default_rng(rng)
    n, K, J = COLLEGE_ITEMS, COLLEGE_CLUSTERS, COLLEGE_MAX_LENGTH
    pop = (1.0 / np.arange(1, n + 1) ** COLLEGE_ZIPF)[rng.permutation(n)]
    order = np.array([np.argsort(-(np.log(pop) + rng.gumbel(size=n))) for _ in range(K)])
    theta = np.tile(np.linspace(*COLLEGE_THETA, J), (K, 1))
    weights = rng.dirichlet(np.ones(K))
    y = rng.choice(K, n_samples, p=weights)
    lengths = 1 + rng.binomial(J - 1, COLLEGE_LENGTH_P, n_samples)
    X = Rankings(sample_rankings(order, theta, y, lengths, rng), n)
    counts = np.sort(np.bincount(X.orders[X.orders >= 0], minlength=n))[::-1]
    share = np.cumsum(counts) / counts.sum()
    info = {"items_for_50pct": int(np.searchsorted(share, 0.5) + 1),
            "items_for_90pct": int(np.searchsorted(share, 0.9) + 1),
            "items_for_99pct": int(np.searchsorted(share, 0.99) + 1),
            "items_never_ranked": int((counts == 0).sum()),
            "mean_length": float(lengths.mean()),
            "cluster_sizes_top5": np.sort(np.bincount(y, minlength=K))[::-1][:5].tolist()}
    return X, y, info


def part_speed(quick, seed, n_iter=None, n_samples=None):
    n_iter = n_iter or (40 if quick else TARGET_ITERS)
    n_samples = n_samples or COLLEGE_N
    reset = reset_peak_rss()
    rss0, _ = rss_mib()
    t0 = time.perf_counter()
    X, y, data_info = make_college_like(n_samples, np.random.default_rng([seed, 7]))
    t_data = time.perf_counter() - t0
    print(f"  {n_samples:,} rankings of {COLLEGE_ITEMS} items (lengths 1..{COLLEGE_MAX_LENGTH}, "
          f"mean {data_info['mean_length']:.2f}), {COLLEGE_CLUSTERS} generating clusters; "
          f"{data_info['items_for_90pct']} items hold 90 % of the ranked slots, "
          f"{data_info['items_for_99pct']} hold 99 %, {data_info['items_never_ranked']} are "
          f"never ranked; generated in {t_data:.1f} s", flush=True)
    fam = GeneralizedMallows(n_items=COLLEGE_ITEMS, nu=100.0).resolve(X)
    model = MixtureModel(fam, X)
    sampler = BetaGibbs()
    rng = np.random.default_rng([seed, 8])
    t0 = time.perf_counter()
    state = sampler.init(rng, model, n_clusters=20, alpha=100.0)
    t_init = time.perf_counter() - t0
    print(f"  Beta-Gibbs, alpha = nu = 100, from 20 random clusters; init {t_init:.2f} s; "
          f"{n_iter} iterations", flush=True)
    secs, ks, joints, acc = [], [], [], []
    for it in range(n_iter):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        secs.append(time.perf_counter() - t0)
        ks.append(int(info.n_clusters))
        joints.append(float(info.log_joint))
        acc.append(float(info.sigma_acceptance))
        if it < 10 or (it + 1) % 10 == 0 or it == n_iter - 1:
            print(f"  iteration {it + 1:>4}: {secs[-1]:6.2f} s, K = {ks[-1]:>4}, "
                  f"log joint {joints[-1]:.6g}, sigma acceptance {acc[-1]:.3f}", flush=True)
    rss1, peak = rss_mib()
    sizes = np.bincount(state.labels)
    tail = max(1, n_iter // 2)
    steady = float(np.median(secs[-tail:]))
    total = t_init + sum(secs)
    projected = t_init + sum(secs[:TARGET_ITERS]) + steady * max(0, TARGET_ITERS - n_iter)
    out = {"n_samples": n_samples, "n_items": COLLEGE_ITEMS,
           "max_length": COLLEGE_MAX_LENGTH, "generating_clusters": COLLEGE_CLUSTERS,
           "zipf_exponent": COLLEGE_ZIPF, "theta_range": list(COLLEGE_THETA),
           "length_distribution": f"1 + Binomial({COLLEGE_MAX_LENGTH - 1}, "
                                  f"{COLLEGE_LENGTH_P})",
           "data": data_info, "alpha": 100.0, "nu": 100.0, "init_clusters": 20,
           "n_gibbs": sampler.n_gibbs, "sigma_step": sampler.sigma_step,
           "n_iter": n_iter, "seconds_data": t_data, "seconds_init": t_init,
           "seconds_per_iter": secs, "n_clusters": ks, "log_joint": joints,
           "sigma_acceptance": acc, "seconds_first_5": secs[:5],
           "seconds_steady_median": steady,
           "steady_window": [n_iter - tail + 1, n_iter],
           "k_steady": [int(min(ks[-tail:])), int(max(ks[-tail:]))],
           "final_k": ks[-1], "final_singletons": int((sizes == 1).sum()),
           "final_vi_to_generating": float(variation_of_information(state.labels, y)),
           "generating_clusters_1pct": int((np.bincount(y) >= 0.01 * n_samples).sum()),
           "final_clusters_1pct": int((sizes >= 0.01 * n_samples).sum()),
           "seconds_total": total, "projected_500_seconds": projected,
           "projection_measured": n_iter >= TARGET_ITERS,
           "target_seconds": TARGET_SECONDS,
           "rss_before_mib": rss0, "rss_after_mib": rss1,
           "peak_rss_mib": peak if reset else None,
           "peak_rss_note": "VmHWM reset at the start of this part" if reset else
           "peak-RSS reset unavailable: see the process's ru_maxrss",
           "data_mib": X.orders.nbytes / 2**20}
    import resource

    out["ru_maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  first iterations {', '.join(f'{s:.2f}' for s in secs[:5])} s; steady state "
          f"(median of iterations {n_iter - tail + 1}..{n_iter}) {steady:.2f} s/iteration at "
          f"K = {out['k_steady'][0]}..{out['k_steady'][1]}; final K = {ks[-1]} "
          f"({out['final_singletons']} singletons, {out['final_clusters_1pct']} with >= 1 % "
          f"of the data; the generating mixture has {out['generating_clusters_1pct']}); VI to "
          f"the generating clusters {out['final_vi_to_generating']:.3f}", flush=True)
    print(f"  {'measured' if out['projection_measured'] else 'projected'} time of "
          f"{TARGET_ITERS} iterations: {projected / 60:.1f} min (target "
          f"{TARGET_SECONDS / 60:.0f} min); RSS {rss0:.0f} MiB before the data, peak "
          f"{peak:.0f} MiB during the part", flush=True)
    out["plot"] = plot_speed(out, quick)
    return out


def plot_speed(out, quick):
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    it = np.arange(1, out["n_iter"] + 1)
    ax.plot(it, out["seconds_per_iter"], "C0-", lw=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("seconds per iteration", color="C0")
    ax.set_ylim(0, max(out["seconds_per_iter"]) * 1.1)
    bx = ax.twinx()
    bx.plot(it, out["n_clusters"], "C1-", lw=1)
    bx.set_ylabel("clusters K", color="C1")
    ax.set_title(f"Beta-Gibbs, {out['n_samples']:,} rankings of {out['n_items']} items, "
                 f"α = ν = 100", fontsize=10)
    fig.tight_layout()
    return _save_figure(fig, "mallows_speed", quick)


def part_beta_bias(quick, seed):
    """E[K] of Beta-Gibbs against Slice-Gibbs on few and many items (see the module notes)."""
    from dpclust.rankings import check_rankings
    from dpclust.samplers import BetaGibbs, MixtureModel, SliceGibbs

    cases = [(5, 600), (5, 3000), (9, 3000), (20, 3000)] if not quick else [(5, 300)]
    n_iter = 60 if quick else 400
    rows = []
    for n, N in cases:
        rng = np.random.default_rng([seed, n, N])
        order = np.array([rng.permutation(n) for _ in range(3)])
        theta = np.full((3, n - 1), 0.7)
        comp = rng.integers(3, size=N)
        X = check_rankings(sample_rankings(order, theta, comp, np.full(N, n - 1), rng),
                           n_items=n)
        model = MixtureModel(GeneralizedMallows().resolve(X), X)
        row = {"n_items": n, "n_rankings": N, "n_iter": n_iter}
        for sampler in (SliceGibbs(), BetaGibbs()):
            ks, big = [], []
            t0 = time.perf_counter()
            for chain in range(2):
                r = np.random.default_rng([seed, n, N, chain])
                state = sampler.init(r, model, n_clusters=5)
                for it in range(n_iter):
                    state, info = sampler.step(r, state, model)
                    if it >= n_iter // 2:
                        ks.append(info.n_clusters)
                        big.append(int((np.bincount(state.labels) >= 0.01 * N).sum()))
            row[sampler.name] = {"k_mean": float(np.mean(ks)), "k1_mean": float(np.mean(big)),
                                 "seconds": time.perf_counter() - t0}
        print(f"  n = {n}, N = {N}: E[K] Slice-Gibbs {row['slice-gibbs']['k_mean']:.1f} "
              f"(≥ 1 %: {row['slice-gibbs']['k1_mean']:.1f}), Beta-Gibbs "
              f"{row['beta-gibbs']['k_mean']:.1f} ({row['beta-gibbs']['k1_mean']:.1f})",
              flush=True)
        rows.append(row)
    return {"rows": rows, "generating_clusters": 3, "theta": 0.7}


def git_state():
    """HEAD and the files of the modules used here that differ from it: the samplers change
    often, and a figure is only meaningful with the code that made it."""
    import subprocess

    def run(*cmd):
        return subprocess.run(cmd, cwd=HERE.parent, capture_output=True, text=True,
                              timeout=30, check=False).stdout.rstrip("\n")

    used = ("families", "samplers", "rankings", "estimator.py", "metrics.py")
    try:
        head = run("git", "log", "-1", "--format=%h %cI %s")
        dirty = [line[3:] for line in run("git", "status", "--porcelain", "--",
                                          *(f"src/dpclust/{u}" for u in used)).splitlines()]
    except (OSError, subprocess.SubprocessError):
        return None
    return {"head": head, "src_changed": dirty}


# ---------------------------------------------------------------------------- output
def _when(part):
    """A line saying when a part ran, for how long and under what load (if recorded)."""
    if "date" not in part:
        return []
    g = part.get("git")
    code = "" if not g else (f" Code: `{g['head'][:72]}`"
                             + (f", uncommitted: {', '.join(g['src_changed'])}"
                                if g["src_changed"] else ", the modules used as committed")
                             + ".")
    return [(f"Run {part['date']}, {part['part_seconds']:.0f} s, load average "
             f"{part['load_average_start'][0]} → {part['load_average_end'][0]}.{code}"), ""]


def _se(x, key, fmt):
    v = x.get(key)
    if v is None:
        return "—"
    se = x.get(key + "_se")
    return format(v, fmt) + (f" ± {format(se, fmt)}" if se else "")


def write_markdown(payload, path):
    m = payload["machine"]
    md = ["# Generalized Mallows mixtures (Meilă & Chen 2010) benchmark", "",
          f"Machine: {m['cpu_model']}, {m['nproc']} cores; {m['date']}"
          + (" (quick run)" if payload.get("quick") else "") + ".", ""]
    f7 = payload.get("figure7")
    if f7:
        md += ["## Figure 7: relative error of the Beta approximation", "",
               "Signed error `(B(a, b) − exact) / exact` of the n → ∞ approximation "
               "`B(a, b)` (`beta_approximation_log_integral(a, b − 1)`) against the exact "
               "`∫ e^{−aθ} ψ_m(θ)^{−(b−1)} dθ` (`log_theta_integral(a, b − 1, m)`), in the "
               "paper's notation (its b = ν + N_j + 1; ν = 1).  Paper grid: a = "
               f"{f7['a_grid'][0]:g} … {f7['a_grid'][1]:g} ({f7['a_grid'][2]} points), b = "
               + ", ".join(map(str, f7["b_paper"])) + "; wide grid: a = 1 … 100, ψ's "
               "exponent ν + N_j = " + ", ".join(map(str, f7["wide_grid"]["b_psi"])) + ", only the "
               "points a cluster can reach (S ≤ N_j m: a − 1 ≤ (b − 2) m).", "",
               *_when(f7),
               ("| m (= the paper's n) | grid | max \\|rel. error\\| | median \\|rel. error\\| "
               "| at a = 10, b = 4 |"), "|---:|---|---:|---:|---:|"]
        md += [f"| {r['m']} | {r['grid']} | {r['max_abs']:.2e} | {r['median_abs']:.2e} | "
               + (f"{r['at_a10_b_paper4']:+.2e}" if "at_a10_b_paper4" in r else "") + " |"
               for r in f7["table"]]
        md += ["", ("The last ranks: rank j of n items integrates against ψ_{n−j}, so with n = "
               "20 and t = 19 (Figure 6's data sets 2 and 4) the last rank has m = 1 (paper "
               "grid):"), "",
               ("| m | rank j (n = 20) | max \\|rel. error\\| | median | at a = 1, b = 4 | "
               "at a = 10, b = 4 | at a = 10, b = 32 |"), "|---:|---:|---:|---:|---:|---:|---:|"]
        md += [f"| {r['m']} | {r['rank_j_of_20_items']} | {r['max_abs']:.2e} | "
               f"{r['median_abs']:.2e} | {r['at_a1']['4']:+.3f} | {r['at_a10']['4']:+.3f} | "
               f"{r['at_a10']['32']:+.2e} |" for r in f7["by_rank"]]
        if f7.get("plot"):
            md += ["", f"![figure 7]({Path(f7['plot']).name})"]
        md.append("")
    f6 = payload.get("figure6")
    if f6:
        md += [(f"## Figure 6: Slice-Gibbs against Beta-Gibbs, N = {f6['n_samples']:,}, "
               f"{f6['n_iter']} iterations, {f6['n_replicates']} replicates"), "",
               ("10 GM clusters of equal size, centres drawn as in the paper's section 6; "
               "both samplers from the same 20 random clusters, alpha = nu = r = 1.  VI "
               "(nats) of the current sample to the true labels; 'true model' is the "
               "classification by the true parameters.  The full run (N = 5,000, 250 "
               "iterations, 10 replicates) is estimated at "
               f"{f6['estimate_full_seconds'] / 60:.0f} min of sampling."), "", *_when(f6),
               ("| data set | t | θ | sampler | final VI (mean) | final VI per replicate | "
               "iterations to VI < 0.01 | final K | ms / iteration | true model VI |"),
               "|---:|---:|---|---|---:|---|---|---|---:|---:|"]
        for d in f6["datasets"]:
            for name, s in d["samplers"].items():
                reach = ", ".join("—" if r is None else str(r)
                                  for r in s["iterations_to_vi_below_0.01"])
                md.append(f"| {d['dataset']} | {d['t']} | {d['theta']} | {name} | "
                          f"{s['final_vi_mean']:.4f} | "
                          + ", ".join(f"{v:.3f}" for v in s["final_vi"])
                          + f" | {reach} | {', '.join(map(str, s['final_k']))} | "
                          f"{s['seconds_per_iter'] * 1e3:.1f} | {d['vi_true_model']:.4f} |")
        md += ["", "Mean Kendall distance between two true centres: "
               + ", ".join(f"data set {d['dataset']} {d['centre_kendall_mean']:.0f} "
                           f"(min {d['centre_kendall_min']})" for d in f6["datasets"])
               + " of 190 pairs."]
        if f6.get("plot"):
            md += ["", f"![figure 6]({Path(f6['plot']).name})",
                   f"![figure 6 by time]({Path(f6['plot_seconds']).name})"]
        md.append("")
    f8 = payload.get("figure8")
    if f8:
        md += [(f"## Figure 8: DPM, KDE and EBMS on {f8['n_clusters_true']} GM clusters "
               f"(n = {f8['n_items']}, t = {f8['t']}, θ = {f8['theta']:g})"), "",
               f"Mean ± s.e. over {f8['n_replicates']} replicates (new centres and data each); "
               f"test log-likelihood per ranking on {f8['n_test']:,} rankings from the same "
               f"mixture.  DPM: `DPMixture(sampler='slice-gibbs', alpha=1, nu=1, "
               f"n_iter={f8['n_iter']})`, `score_samples` and VI of `labels_` (train) and "
               f"`predict` (test); KDE: `RankingKDE(theta={f8['kde_theta']:g})` (the true θ); "
               "EBMS: `RankingEBMS(theta='auto')` (its held-out width heuristic) and "
               "`RankingEBMS(theta=0.3)`.  Baselines: " + f8["baselines"] + ".", "",
               *_when(f8),
               "| N | true | DPM | KDE | EBMS auto | EBMS 0.3 | DPM K | DPM s | EBMS auto s |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for x in f8["summary"]:
            md.append(f"| {x['n_train']:,} | {_se(x, 'true_loglik', '.4f')} | "
                      f"{_se(x, 'dpm_loglik', '.4f')} | {_se(x, 'kde_loglik', '.4f')} | "
                      f"{_se(x, 'ebms_loglik', '.4f')} | {_se(x, 'ebms_fixed_loglik', '.4f')} | "
                      f"{_se(x, 'dpm_n_clusters', '.1f')} | {_se(x, 'dpm_seconds', '.1f')} | "
                      f"{_se(x, 'ebms_seconds', '.1f')} |")
        md += ["", "VI to the true labels, train / test:", "",
               "| N | DPM | EBMS auto | EBMS 0.3 | true model |", "|---:|---|---|---|---|"]
        for x in f8["summary"]:
            md.append(f"| {x['n_train']:,} | "
                      + " | ".join(f"{_se(x, m + '_vi_train', '.3f')} / "
                                   f"{_se(x, m + '_vi_test', '.3f')}"
                                   for m in ("dpm", "ebms", "ebms_fixed", "true")) + " |")
        collapsed = [(r["n_train"], r["replicate"], k) for r in f8["rows"]
                     for k in FIG8_EBMS if r.get(k, {}).get("n_clusters") == 1]
        if collapsed:
            md += ["", "EBMS ended with one cluster in: " + ", ".join(
                f"N = {n:,} replicate {rep} ({'auto' if k == 'ebms' else '0.3'})"
                for n, rep, k in collapsed) + "."]
        errors = {r[k]["error"] for r in f8["rows"] for k in ("kde", *FIG8_EBMS)
                  if k in r and "error" in r[k]}
        if errors:
            md += ["", "Baseline errors: " + "; ".join(sorted(errors))]
        if f8.get("plot"):
            md += ["", f"![figure 8]({Path(f8['plot']).name})"]
        md.append("")
    sp_ = payload.get("speed")
    if sp_:
        d = sp_["data"]
        md += [(f"## Speed: Beta-Gibbs on {sp_['n_samples']:,} rankings of {sp_['n_items']} "
               f"items (the college applications' shape)"), "",
               (f"Generated: a GM mixture of {sp_['generating_clusters']} clusters, item "
               f"popularity ∝ rank^−{sp_['zipf_exponent']}, central rankings drawn by "
               f"popularity, θ_j from {sp_['theta_range'][0]} to {sp_['theta_range'][1]}, "
               f"lengths {sp_['length_distribution']} (mean {d['mean_length']:.2f}); "
               f"{d['items_for_90pct']} items hold 90 % of the ranked slots, "
               f"{d['items_for_99pct']} hold 99 %, {d['items_never_ranked']} are never "
               f"ranked.  alpha = nu = {sp_['alpha']:g}, from {sp_['init_clusters']} random "
               f"clusters, `BetaGibbs(n_gibbs={sp_['n_gibbs']}, "
               f"sigma_step='{sp_['sigma_step']}')`."), "", *_when(sp_),
               "| what | value |", "|---|---:|",
               f"| iterations run | {sp_['n_iter']} |",
               f"| data generation s | {sp_['seconds_data']:.1f} |",
               f"| init s | {sp_['seconds_init']:.2f} |",
               "| first 5 iterations s | "
               + ", ".join(f"{s:.2f}" for s in sp_["seconds_first_5"]) + " |",
               "| K after iterations 1–5 | " + ", ".join(map(str, sp_["n_clusters"][:5])) + " |",
               (f"| steady state s / iteration (median of iterations "
               f"{sp_['steady_window'][0]}–{sp_['steady_window'][1]}) | "
               f"{sp_['seconds_steady_median']:.2f} |"),
               f"| K over that window | {sp_['k_steady'][0]}–{sp_['k_steady'][1]} |",
               (f"| final K (singletons, ≥ 1 % of the data) | {sp_['final_k']} "
               f"({sp_['final_singletons']}, {sp_['final_clusters_1pct']}) |"),
               (f"| generating clusters with ≥ 1 % of the data | "
               f"{sp_['generating_clusters_1pct']} |"),
               f"| final VI to the generating clusters | {sp_['final_vi_to_generating']:.3f} |",
               f"| total s (init + iterations) | {sp_['seconds_total']:.0f} |",
               (f"| {'measured' if sp_['projection_measured'] else 'projected'} "
               f"{TARGET_ITERS} iterations | {sp_['projected_500_seconds'] / 60:.1f} min "
               f"(target {sp_['target_seconds'] / 60:.0f} min) |"),
               f"| RSS before the data / peak during the part MiB | "
               f"{sp_['rss_before_mib']:.0f} / "
               + (f"{sp_['peak_rss_mib']:.0f}" if sp_["peak_rss_mib"] else "—") + " |",
               f"| data (orders array) MiB | {sp_['data_mib']:.1f} |"]
        ks = sp_["n_clusters"]
        step = max(1, len(ks) // 25)
        md += ["", "K by iteration: " + ", ".join(f"{i + 1}: {ks[i]}"
                                                  for i in range(0, len(ks), step))
               + (f", {len(ks)}: {ks[-1]}" if (len(ks) - 1) % step else "") + "."]
        if sp_.get("plot"):
            md += ["", f"![speed]({Path(sp_['plot']).name})"]
        md.append("")
    bb = payload.get("beta_bias")
    if bb:
        md += ["## Where Beta-Gibbs is biased: the number of clusters", "",
               "Full rankings of n items from 3 GM clusters (θ_j = 0.7, equal weights); "
               "Slice-Gibbs (exact) and Beta-Gibbs, two chains of "
               f"{bb['rows'][0]['n_iter']} iterations each from 5 clusters, α = ν = r = 1; "
               "posterior means over the second halves.  Beta-Gibbs replaces each rank's "
               "θ-integral by its n → ∞ limit (Figure 7 above): at the last ranks of few items "
               "(m = n − j small) its predictive of an existing cluster is too flat and leaks "
               "mass to codes the rank cannot take, while the new-cluster term (n − t)!/n! is "
               "exact, so it opens clusters too readily.", "", *_when(bb),
               "| n items | N | E[K] Slice-Gibbs | E[K] Beta-Gibbs | E[K ≥ 1 %] Slice-Gibbs | "
               "E[K ≥ 1 %] Beta-Gibbs |", "|---:|---:|---:|---:|---:|---:|"]
        md += [f"| {r['n_items']} | {r['n_rankings']:,} | {r['slice-gibbs']['k_mean']:.1f} | "
               f"{r['beta-gibbs']['k_mean']:.1f} | {r['slice-gibbs']['k1_mean']:.1f} | "
               f"{r['beta-gibbs']['k1_mean']:.1f} |" for r in bb["rows"]]
        md.append("")
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on small data")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--figure6-iters", type=int, help="iterations (default 250; --quick 30)")
    p.add_argument("--figure6-reps", type=int, help="replicates (default 10; --quick 3)")
    p.add_argument("--figure6-n", type=int, help="rankings (default 5,000; --quick 1,000)")
    p.add_argument("--figure8-reps", type=int, help="replicates (default 10; --quick 3)")
    p.add_argument("--figure8-iters", type=int, help="DPM iterations (default 200)")
    p.add_argument("--speed-iters", type=int,
                   help=f"Beta-Gibbs iterations (default {TARGET_ITERS}; --quick 40)")
    p.add_argument("--speed-n", type=int, help=f"rankings (default {COLLEGE_N:,})")
    args = p.parse_args(argv)

    def run_part(part):
        if part == "figure6":
            return part_figure6(args.quick, args.seed, args.figure6_iters, args.figure6_reps,
                                args.figure6_n)
        if part == "figure8":
            return part_figure8(args.quick, args.seed, n_reps=args.figure8_reps,
                                n_iter=args.figure8_iters)
        if part == "speed":
            return part_speed(args.quick, args.seed, args.speed_iters, args.speed_n)
        return globals()[f"part_{part}"](args.quick, args.seed)

    run_parts(args.parts, run_part, RESULTS / "mallows", args.quick, warm_up, write_markdown,
              record=lambda: {"git": git_state()})

if __name__ == "__main__":
    main()
