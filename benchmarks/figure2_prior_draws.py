"""Figure 2 of Blei & Frazier (2010): draws from sequential distance dependent CRPs.

One prior draw of 1,000 customers at positions 0 .. 999 (distance = difference of indices,
links only to earlier customers) for each of four decays -- constant (the traditional CRP),
window, exponential and logistic -- drawn as tables against customer with the decay inset
(:func:`dpclust.report.plots.plot_prior_draws`, whose docstring explains the parameters).

Run: ``.venv/bin/python benchmarks/figure2_prior_draws.py [--seed S] [--alpha A]``; writes
``benchmarks/results/ddcrp_figure2.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dpclust.report.plots import FIGURE2_DECAYS, plot_prior_draws

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--alpha", type=float, default=1.0, help="self-link weight (default: 1)")
    parser.add_argument("--customers", type=int, default=1000,
                        help="number of customers (default: 1000)")
    parser.add_argument("--decays", nargs="+", default=list(FIGURE2_DECAYS), metavar="SPEC",
                        help="decays, one panel each (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=RESULTS / "ddcrp_figure2.png",
                        help="PNG to write (default: benchmarks/results/ddcrp_figure2.png)")
    args = parser.parse_args(argv)
    plot_prior_draws(args.decays, n=args.customers, alpha=args.alpha, random_state=args.seed,
                     path=args.out)
    print(f"wrote {args.out}")
    return args.out


if __name__ == "__main__":
    main()
