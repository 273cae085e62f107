"""The searched point estimate of a partition against the best draw, at scale and on real fits.

*scale*: draws perturbed from a known consensus partition of ``n`` items (10 clusters; in
each draw 10 % of the items move to a random cluster, one of 12, and with probability 0.3
a cluster splits in two or two clusters merge), so that no draw is the consensus.  For each
size: the seconds the search (:func:`dpclust.partitions.point_estimate`, its defaults, a
3-minute budget) takes, the expected VI of its estimate and of the best draw (where
scoring every draw against every draw is affordable) over the consensus's, and the
clusters found.

*real*: default fits of real data (the 2-D demo, the Dublin West ballots as ``make demo``
fits them, 20 Newsgroups when ``../shared/data`` is there), their kept draws stored: the
expected VI of the searched estimate against the best draw's, the clusters of each, the
95 % credible ball (radius, clusters inside, the three bounds), and the search's seconds.

Results: ``benchmarks/results/point_estimate.{json,md}``.
Run: ``.venv/bin/python benchmarks/bench_point_estimate.py [--parts scale real] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _common import run_parts  # noqa: E402

from dpclust.partitions import best_draw, credible_ball, expected_loss, point_estimate  # noqa: E402

SIZES = [(1_000, 100), (1_000, 500), (10_000, 100), (10_000, 500), (100_000, 100),
         (100_000, 500), (1_000_000, 100)]
QUICK_SIZES = [(1_000, 100), (10_000, 100)]
#: scoring every draw against every draw (the best draw) costs n_draws^2 * n table cells
BEST_DRAW_BUDGET = 5e9


def perturbed_draws(n, n_draws, seed=0, k=10):
    """A consensus of ``k`` clusters and ``n_draws`` draws around it, none equal to it."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    draws = np.repeat(truth[None, :], n_draws, axis=0).astype(np.int32)
    moved = rng.random(draws.shape) < 0.1
    draws[moved] = rng.integers(0, k + 2, size=int(moved.sum()))
    for d in draws:
        u = rng.random()
        if u < 0.3:  # a cluster splits in two
            c = rng.integers(k)
            half = (d == c) & (rng.random(n) < 0.5)
            d[half] = k + 2
        elif u < 0.6:  # two clusters merge
            a, b = rng.choice(k, 2, replace=False)
            d[d == b] = a
    return truth, draws


def scale_row(n, n_draws):
    truth, draws = perturbed_draws(n, n_draws)
    t0 = time.perf_counter()
    consensus = expected_loss(truth[None, :], draws)[0]
    t_score = time.perf_counter() - t0
    t0 = time.perf_counter()
    labels, value = point_estimate(draws, random_state=0, max_time=180)
    t_search = time.perf_counter() - t0
    row = {"n": n, "n_draws": n_draws, "consensus_vi": consensus, "search_vi": value,
           "search_over_consensus": value / consensus, "search_seconds": t_search,
           "search_clusters": int(labels.max()) + 1, "score_one_seconds": t_score}
    if n_draws * n_draws * n <= BEST_DRAW_BUDGET:
        t0 = time.perf_counter()
        best, drawn = best_draw(draws, n_jobs=-1)
        row.update(best_draw_vi=drawn, best_draw_over_consensus=drawn / consensus,
                   best_draw_seconds=time.perf_counter() - t0,
                   best_draw_clusters=int(best.max()) + 1)
    print(f"  n {n:>9,}  draws {n_draws:>4}: search {t_search:7.1f} s, VI/consensus "
          f"{value / consensus:.5f}, K {row['search_clusters']}"
          + (f"; best draw VI/consensus {row['best_draw_over_consensus']:.4f}"
             if "best_draw_vi" in row else ""), flush=True)
    return row


def real_fits(quick):
    """(name, draws) of default fits of real data, their kept draws."""
    from dpclust import DPMixture
    from dpclust.datasets import load_demo, load_dublin_west

    warnings.simplefilter("ignore")
    X, _ = load_demo()
    yield "2-D demo (1,500 points)", DPMixture(random_state=0, store_labels=True).fit(X)
    ballots = load_dublin_west()
    X = ballots[0] if isinstance(ballots, tuple) else ballots
    est = DPMixture(family="auto", random_state=0, store_labels=True,
                    max_time=120 if quick else 300).fit(X)
    yield "Dublin West ballots (the demo's fit)", est
    news = HERE.parent.parent / "shared" / "data" / "newsgroups_train_counts.npz"
    if news.exists() and not quick:
        import scipy.sparse as sp

        counts = sp.load_npz(news)
        est = DPMixture(family="multinomial", random_state=0, store_labels=True,
                        n_chains=1, n_iter=100).fit(counts)
        yield "20 Newsgroups (11,269 posts, one chain of 100 iterations)", est


def real_row(name, est):
    """The fit's own loss (``loss_``: VI, for rankings VI with a = 0.5), and plain VI."""
    draws = np.asarray(est.trace_.labels)
    draws = draws.reshape(-1, draws.shape[-1])
    row = _loss_row(name, draws, est.loss_)
    if est.loss_ != "vi":
        row["plain_vi"] = _loss_row(name, draws, "vi")
    row.update(estimator_clusters=int(est.n_clusters_),
               estimator_expected_loss=float(est.expected_loss_))
    return row


def _loss_row(name, draws, loss):
    t0 = time.perf_counter()
    labels, value = point_estimate(draws, loss, random_state=0)
    seconds = time.perf_counter() - t0
    best, drawn = best_draw(draws, loss, n_jobs=-1)
    ball = credible_ball(draws, labels, loss)
    sizes = np.bincount(labels)
    row = {"data": name, "loss": loss, "n": int(draws.shape[1]),
           "n_draws": int(draws.shape[0]),
           "clusters_1pct": int((sizes >= 0.01 * sizes.sum()).sum()),
           "search_vi": value, "best_draw_vi": drawn, "search_seconds": seconds,
           "search_clusters": int(labels.max()) + 1,
           "best_draw_clusters": int(best.max()) + 1,
           "ball": ball.as_dict()}
    print(f"  {name}, {loss}: search {value:.4f} (K {row['search_clusters']}, "
          f"{row['clusters_1pct']} of them >= 1 %) vs best draw {drawn:.4f} "
          f"(K {row['best_draw_clusters']}); ball {ball.describe()}", flush=True)
    return row


def write_markdown(record, path):
    lines = ["# The searched point estimate against the best draw", "",
             f"Machine: {record['machine']['cpu_model']}, "
             f"{record['machine']['cpus_available']} cores.", ""]
    scale = record.get("scale")
    if scale:
        lines += ["## At scale: draws perturbed from a known consensus (10 clusters)", "",
                  "| items | draws | search s | search VI / consensus VI | clusters | "
                  "best draw VI / consensus VI | best draw s |",
                  "|---|---|---|---|---|---|---|"]
        for r in scale["rows"]:
            lines.append(
                f"| {r['n']:,} | {r['n_draws']} | {r['search_seconds']:.1f} | "
                f"{r['search_over_consensus']:.5f} | {r['search_clusters']} | "
                + (f"{r['best_draw_over_consensus']:.4f} | {r['best_draw_seconds']:.1f} |"
                   if "best_draw_vi" in r else "— | — |"))
        lines.append("")
    real = record.get("real")
    if real:
        lines += ["## Default fits of real data: expected loss of the estimate", "",
                  "| data | loss | items | draws | best draw (K) | searched (K; ≥ 1 %) | "
                  "search s | 95 % ball radius | clusters in the ball | coarsest / finest "
                  "/ farthest bound (K, distance) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        rows = [x for r in real["rows"] for x in (r, r.get("plain_vi")) if x]
        for r in rows:
            b = r["ball"]
            bounds = " / ".join(f"{b[k]['n_clusters']}, {b[k]['distance']:.3f}"
                                for k in ("upper_vertical", "lower_vertical", "horizontal"))
            lines.append(
                f"| {r['data']} | {r.get('loss', 'vi')} | {r['n']:,} | {r['n_draws']} | "
                f"{r['best_draw_vi']:.4f} ({r['best_draw_clusters']}) | {r['search_vi']:.4f} "
                f"({r['search_clusters']}; {r.get('clusters_1pct', '—')}) | "
                f"{r['search_seconds']:.1f} | "
                f"{b['radius']:.3f} | {b['n_clusters_range'][0]}–{b['n_clusters_range'][1]}"
                f" | {bounds} |")
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", nargs="+", default=["scale", "real"], choices=["scale", "real"])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)

    def warm_up():
        truth, draws = perturbed_draws(200, 20)
        point_estimate(draws, random_state=0)
        credible_ball(draws, truth)

    def run_part(part):
        if part == "scale":
            return {"rows": [scale_row(n, s) for n, s in (QUICK_SIZES if args.quick
                                                          else SIZES)]}
        return {"rows": [real_row(name, est) for name, est in real_fits(args.quick)]}

    run_parts(args.parts, run_part, HERE / "results" / "point_estimate", args.quick, warm_up,
              write_markdown)


if __name__ == "__main__":
    main()
