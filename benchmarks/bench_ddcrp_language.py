"""Bayes factors of decayed CRP language models against the ordinary CRP (the spirit of
Blei & Frazier 2010, Figure 3).

Each document is a sequence of tokens, the distance between two tokens the number of tokens
between them, and the model the fully observed sequential ddCRP language model
(:class:`dpclust.ddcrp.DDCRPLanguageModel`): a token repeats an earlier token with weight
``f(distance)`` or is a fresh draw from the base distribution with weight ``alpha``.  For
every document and decay the Bayes factor ``p(doc | decay) / p(doc | CRP)`` is estimated by
:func:`dpclust.ddcrp.bayes_factor` (exact with a fixed uniform base, sequential Monte Carlo
with the base marginalised under a Dirichlet prior, the paper's hierarchical setting).

The documents are generated "bursty" text: a Zipf background vocabulary, and topical
stretches in which a handful of words recur (word repetition that decays with distance is
what the decayed models can express and the exchangeable CRP cannot).

Usage: ``.venv/bin/python benchmarks/bench_ddcrp_language.py [--quick]``; writes
``benchmarks/results/ddcrp_language[_quick].{json,md,png}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from _common import _load_average, machine_info
from dpclust.ddcrp import DDCRPLanguageModel, bayes_factor

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def bursty_documents(n_docs, length, vocab_size, rng, *, burst_words=12, burst_share=0.5,
                     mean_stretch=80):
    """Token-id documents: Zipf(1.1) background words, and stretches (geometric lengths)
    in which a share of the tokens come from a small set of stretch-specific words."""
    ranks = np.arange(1, vocab_size + 1)
    background = ranks ** -1.1
    background /= background.sum()
    docs = []
    for _ in range(n_docs):
        out = []
        while len(out) < length:
            stretch = int(rng.geometric(1 / mean_stretch))
            burst = rng.choice(vocab_size, burst_words, replace=False)
            own = rng.random(stretch) < burst_share
            out.extend(np.where(own, rng.choice(burst, stretch),
                                rng.choice(vocab_size, stretch, p=background)))
        docs.append(np.array(out[:length], dtype=np.int64))
    return docs


def decays(quick):
    widths = [10, 50, 200] if quick else [5, 10, 25, 50, 100, 200, 400]
    return ([("exponential", a, f"exponential:{a}") for a in widths]
            + [("logistic", a, f"logistic:{a}:{max(a / 5, 1):g}") for a in widths])


def run(quick, seed):
    rng = np.random.default_rng(seed)
    n_docs, length, vocab = (5, 200, 500) if quick else (20, 500, 2000)
    docs = bursty_documents(n_docs, length, vocab, rng)
    settings = {"hierarchical": {"concentration": 0.5, "n_words": vocab},
                "fixed uniform base": {"base_probs": np.full(vocab, 1 / vocab)}}
    out = {"n_docs": n_docs, "length": length, "vocab_size": vocab, "alpha": 1.0,
           "n_particles": 128 if quick else 256, "n_runs": 2, "settings": {}}
    for name, kw in settings.items():
        rows = []
        for kind, width, spec in decays(quick):
            t0 = time.perf_counter()
            bfs, ses = [], []
            for d, doc in enumerate(docs):
                est = DDCRPLanguageModel(alpha=1.0, decay=spec, **kw)
                bf = bayes_factor(est, doc, n_particles=out["n_particles"],
                                  n_runs=out["n_runs"], random_state=seed + d)
                bfs.append(bf.log_bayes_factor)
                ses.append(bf.stderr)
            bfs = np.array(bfs)
            row = {"decay": kind, "width": width, "spec": spec,
                   "mean_log_bf": float(bfs.mean()),
                   "se_across_docs": float(bfs.std(ddof=1) / np.sqrt(len(bfs))),
                   "max_mc_stderr": float(np.max(ses)), "wins": int((bfs > 0).sum()),
                   "seconds": time.perf_counter() - t0}
            rows.append(row)
            print(f"{name:20s} {spec:20s} mean log BF {row['mean_log_bf']:9.2f} "
                  f"± {row['se_across_docs']:.2f} (MC se ≤ {row['max_mc_stderr']:.3f}), "
                  f"decay better on {row['wins']}/{n_docs} docs, {row['seconds']:.1f} s",
                  flush=True)
        out["settings"][name] = rows
    return out


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["settings"])
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = result["settings"][name]
        for kind, marker in (("exponential", "o"), ("logistic", "s")):
            r = [x for x in rows if x["decay"] == kind]
            ax.errorbar([x["width"] for x in r], [x["mean_log_bf"] for x in r],
                        yerr=[x["se_across_docs"] for x in r], marker=marker, label=kind,
                        capsize=3)
        ax.axhline(0, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("decay parameter a (tokens)")
        ax.set_ylabel("mean log Bayes factor vs CRP")
        ax.set_title(name)
        ax.legend(title="decay")
    fig.suptitle(f"{result['n_docs']} bursty documents of {result['length']} tokens")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_markdown(payload, path):
    r = payload["bayes_factors"]
    md = ["# ddCRP language model: Bayes factors against the CRP", "",
          f"{r['n_docs']} generated bursty documents of {r['length']} tokens over "
          f"{r['vocab_size']:,} words; alpha = {r['alpha']}; sequential distances = token "
          f"index differences; {r['n_particles']} particles × {r['n_runs']} runs per "
          "evidence (the fixed-base evidence is exact).", "",
          f"Machine: {payload['machine']['cpu_model']}, {payload['machine']['nproc']} cores, "
          f"{payload['machine']['date']}.", ""]
    for name, rows in r["settings"].items():
        md += [f"## {name}", "", "| decay | mean log BF | se across docs | max MC se | "
               "docs favouring the decay | seconds |", "|---|---|---|---|---|---|"]
        md += [f"| {x['spec']} | {x['mean_log_bf']:.2f} | {x['se_across_docs']:.2f} | "
               f"{x['max_mc_stderr']:.3f} | {x['wins']}/{r['n_docs']} | {x['seconds']:.1f} |"
               for x in rows]
        md.append("")
    md.append(f"![Bayes factors]({Path(payload['plot']).name})")
    path.write_text("\n".join(md) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on small data")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": machine_info(), "quick": args.quick}
    stem = RESULTS / ("ddcrp_language_quick" if args.quick else "ddcrp_language")
    payload["bayes_factors"] = run(args.quick, args.seed)
    payload["plot"] = str(stem.with_suffix(".png"))
    plot(payload["bayes_factors"], stem.with_suffix(".png"))
    payload["machine"]["load_average_end"] = _load_average()
    stem.with_suffix(".json").write_text(json.dumps(payload, indent=1))
    write_markdown(payload, stem.with_suffix(".md"))
    print(f"\nwritten: {stem.with_suffix('.json')}, .md and .png")


if __name__ == "__main__":
    main()
