"""The distance dependent CRP (Blei & Frazier 2010): speed of the customer sampler and the
paper's runs.

Parts (``--parts``, default all):

* ``speed``: seconds per sweep of the customer-assignment sampler (``DDCRPGibbs``) against N
  (500 ... 20,000 generated documents, V = 5,000 words, about 75 words each, topics born and
  dying along the sequence), sequential positions 0 .. N-1, with a window decay (a = 50)
  and with the constant decay (the sequential CRP).  A few sweeps are timed after burn-in
  sweeps, from links that follow the true topics; reported with the number of tables and
  the growth exponent in N (least-squares slope of log time against log N).
* ``figure5``: the paper's Figure 5.  A CRP mixture of 500 real documents (alpha = 1, uniform
  Dirichlet base), the customer-assignment sampler (sequential constant decay = the CRP)
  against the table-assignment collapsed Gibbs sampler, both from all singletons, over
  random orderings of the documents; the CRP-mixture log joint of the best partition each
  run visits, a scatter plot and the number of runs the customer sampler wins.
* ``cora``: a network ddCRP on CORA: the decay acts on the hop distance in the undirected
  citation graph (a sparse matrix, pairs at most two hops apart), non-sequential, window
  decays a = 2 (citing or cited) and a = 3 (within two hops); against the DP mixture
  (collapsed Gibbs).  CORA has no labels here, so the comparison is by the partition's
  marginal likelihood, the share of citations inside a cluster, the held-out likelihood of
  10 % of the documents, the number of tables and time.
* ``heldout``: the paper's Figure 4 in spirit: generated time-stamped documents with topics
  born and dying, ``DDCRPMixture`` with sequential time distances, exponential and logistic
  decays of several widths and the constant decay (the CRP), from all singletons (and a few
  from a prior draw, the estimator's default start); held-out log likelihood of the last
  10 % in time with standard errors across kept draws, and the same predictive at the true
  partition of the training documents.

Figures are printed and written to ``benchmarks/results/ddcrp.{json,md}`` (``--quick``:
``ddcrp_quick.*``), plots to ``benchmarks/results/ddcrp_*.png``.  Real data come from
``../shared/data`` (the parts that need them are skipped when it is absent).  Everything is
seeded (``--seed``).

Run: ``.venv/bin/python benchmarks/bench_ddcrp.py [--quick] [--parts speed figure5 cora
heldout]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SHARED_DATA = HERE.parent.parent / "shared" / "data"
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
import scipy.sparse as sp
from _common import run_parts
from scipy.special import logsumexp

from dpclust import DDCRPMixture, DPMixture
from dpclust.datasets import make_documents
from dpclust.ddcrp import (Constant, DDCRPGibbs, DDCRPModel, Exponential, Logistic, Window,
                           link_candidates)
from dpclust.families import DirichletMultinomial
from dpclust.metrics import nmi
from dpclust.samplers import CollapsedGibbs, MixtureModel

PARTS = ("speed", "figure5", "cora", "heldout")

#: the speed part: document counts, vocabulary, mean length, topic schedule (in documents)
SPEED_SIZES = (500, 1_000, 2_000, 5_000, 10_000, 20_000)
SPEED_SIZES_QUICK = (500, 1_000, 2_000)
SPEED_VOCAB, SPEED_LENGTH, SPEED_LIFETIME, SPEED_ALIVE = 5_000, 75, 1_000, 5
#: Dirichlet base concentration for generated documents and CORA (the paper's Figure 5 uses a
#: uniform base, concentration 1)
BASE_CONCENTRATION = 0.1


# --------------------------------------------------------------------------- helpers
def make_drifting_documents(n_docs, *, span, vocab_size, doc_length, n_alive, lifetime,
                            concentration=0.1, random_state=None):
    """Time-stamped bag-of-words documents whose topics are born, rise, fade and die.

    ``n_alive`` lanes each hold one topic at a time: a topic lives ``lifetime * U(0.5, 1.5)``
    time units and is followed by a new one, so ``n_alive`` topics are alive at every time
    and about ``n_alive * (1 + span / lifetime)`` appear in all.  Times are uniform on
    ``[0, span)``, sorted.  A document picks one of the topics alive at its time with weight
    ``sin(pi * age / life)`` (a topic starts small, peaks at mid-life and fades out), and its
    words are ``Multinomial(max(1, Poisson(doc_length)), phi_topic)`` with ``phi_topic ~
    Dirichlet(concentration)`` over the vocabulary.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_docs, vocab_size), rows in time order
    t : ndarray of shape (n_docs,), sorted times
    y : ndarray of shape (n_docs,), topic of each document, numbered by first appearance
    """
    rng = np.random.default_rng(random_state)
    births, deaths = [], []
    for _ in range(n_alive):
        life = lifetime * rng.uniform(0.5, 1.5)
        start = -rng.uniform(0.0, life)  # each lane's first topic is already alive at 0
        while start < span:
            births.append(start)
            deaths.append(start + life)
            start += life
            life = lifetime * rng.uniform(0.5, 1.5)
    births, deaths = np.array(births), np.array(deaths)
    t = np.sort(rng.uniform(0.0, span, n_docs))
    y = np.empty(n_docs, dtype=np.int64)
    for lo in range(0, n_docs, 2_000):  # (block, n_topics) weights at a time
        tb = t[lo:lo + 2_000]
        age = (tb[:, None] - births) / (deaths - births)
        w = np.where((age > 0) & (age < 1), np.sin(np.pi * np.clip(age, 0, 1)), 0.0)
        cum = np.cumsum(w, axis=1)
        u = rng.random(len(tb)) * cum[:, -1]
        y[lo:lo + 2_000] = np.minimum((cum < u[:, None]).sum(axis=1), len(births) - 1)
    _, first = np.unique(y, return_index=True)
    order = np.argsort(np.argsort(first))  # topics by first appearance
    y = order[np.searchsorted(np.unique(y), y)]
    phi = rng.dirichlet(np.full(vocab_size, concentration), size=int(y.max()) + 1)
    lengths = np.maximum(rng.poisson(doc_length, size=n_docs), 1)
    block = max(1, 2_000_000 // vocab_size)
    parts = [sp.csr_matrix(rng.multinomial(lengths[lo:lo + block], phi[y[lo:lo + block]])
                           .astype(np.float64)) for lo in range(0, n_docs, block)]
    X = sp.vstack(parts, format="csr")
    X.sort_indices()
    return X, t, y


def family_for(X, concentration):
    return DirichletMultinomial(concentration=concentration).resolve(X)


def topic_links(y, positions, reach):
    """Each document linked to the previous one of its topic when closer than ``reach``, else
    to itself: a start near the true partition that every decay here allows."""
    links = np.arange(len(y), dtype=np.int64)
    last = {}
    for i, k in enumerate(y):
        j = last.get(k)
        if j is not None and positions[i] - positions[j] < reach:
            links[i] = j
        last[k] = i
    return links


def warm_up():
    """Compile (or load from numba's cache) the kernels used here, on tiny data."""
    X, _ = make_documents(n_docs=80, n_topics=3, vocab_size=50, random_state=0)
    fam = family_for(X, 0.5)
    Xw = fam.validate(X)
    pos = np.arange(80, dtype=float)
    D = sp.csr_matrix(np.eye(80, k=1) + np.eye(80, k=-1))
    for cands in (link_candidates(Window(5), positions=pos, sequential=True),
                  link_candidates(Constant(), n=80, sequential=True),
                  link_candidates(Exponential(1.0), distances=D)):
        model = DDCRPModel(fam, Xw, None, cands)
        for start in ("prior", "singletons"):
            s = DDCRPGibbs(start=start)
            rng = np.random.default_rng(0)
            st = s.init(rng, model, alpha=1.0)
            for _ in range(3):
                st, _ = s.step(rng, st, model)
    model = MixtureModel(fam, Xw)
    for scan in (True, False):
        s = CollapsedGibbs(random_scan=scan)
        rng = np.random.default_rng(0)
        st = s.init(rng, model, labels=np.arange(80), alpha=1.0)
        for _ in range(3):
            st, _ = s.step(rng, st, model)
    model.log_joint(st.labels, 1.0)


def heldout_per_draw(family, X_train, X_test, draws, alphas, W):
    """Held-out log predictive of each test document under each draw, (n_draws, n_test).

    ``p(x | draw) = [alpha f(x) + sum_j W[x, j] f(x | X_table(j))] / (alpha + sum_j W[x, j])``
    over the training customers j (Blei & Frazier 2010, section 3, "Prediction"), where
    ``W[x, j] = f(d_xj)``, dense or sparse (n_test, n_train).  ``W`` all ones is the DP
    mixture's predictive.  The same formula as ``DDCRPMixture.score_samples``, one draw at a
    time, so that the spread across draws can be reported.
    """
    prior = family.log_predictive(X_test, family.empty_stats(1))[:, 0]
    row_w = np.asarray(W.sum(axis=1)).ravel()
    out = []
    for labels, alpha in zip(draws, alphas):
        labels = np.asarray(labels, dtype=np.int64)
        k = int(labels.max()) + 1
        logp = family.log_predictive(X_test, family.stats(X_train, labels, k))
        onehot = sp.csr_matrix((np.ones(len(labels)), (np.arange(len(labels)), labels)),
                               shape=(len(labels), k))
        table_w = W @ onehot
        table_w = table_w.toarray() if sp.issparse(table_w) else np.asarray(table_w)
        with np.errstate(divide="ignore"):
            terms = np.concatenate([math.log(alpha) + prior[:, None],
                                    np.log(table_w) + logp], axis=1)
        out.append(logsumexp(terms, axis=1) - np.log(alpha + row_w))
    return np.array(out)


#: held-out densities average over at most this many kept draws, evenly spaced
N_PREDICTIVE_DRAWS = 50


def kept_draws(est, m=N_PREDICTIVE_DRAWS):
    """``m`` evenly spaced kept draws (``store_labels=True``) and their alphas: the draws
    that ``score_samples`` averages over when ``n_predictive_draws=m`` and every kept draw
    is held (at most 200); ``est`` ran one chain."""
    labels, alphas = est.trace_.labels[0], est.trace_.alpha[0, est.trace_.kept]
    idx = np.unique(np.linspace(0, len(labels) - 1, min(m, len(labels))).round().astype(int))
    return labels[idx], alphas[idx]


def growth_exponent(ns, secs):
    return float(np.polyfit(np.log(ns), np.log(secs), 1)[0])


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (matplotlib missing: no plot; pip install matplotlib)")
        return None
    return plt


# ----------------------------------------------------------------------------- speed
def part_speed(quick, seed):
    sizes = SPEED_SIZES_QUICK if quick else SPEED_SIZES
    n_burn, n_timed = (1, 2) if quick else (2, 3)
    decays = {"window:50": Window(50), "constant": Constant()}
    rows = []
    for N in sizes:
        X, _, y = make_drifting_documents(
            N, span=N, vocab_size=SPEED_VOCAB, doc_length=SPEED_LENGTH, n_alive=SPEED_ALIVE,
            lifetime=SPEED_LIFETIME, concentration=0.1, random_state=seed)
        fam = family_for(X, BASE_CONCENTRATION)
        Xw = fam.validate(X)
        for name, decay in decays.items():
            row = _time_sweeps(fam, Xw, y, decay, n_burn, n_timed, seed)
            row.update(n_docs=N, decay=name)
            rows.append(row)
            print(f"  N={N:>6,} {name:<10}: {row['seconds_per_sweep']:8.3f} s / sweep, "
                  f"K={row['n_tables']:>4} (topics {row['n_topics']}, start "
                  f"{row['n_tables_start']}), NMI {row['nmi_topics']:.3f}; link prior in "
                  f"Python {row['seconds_log_prior'] * 1e3:.1f} ms, candidates "
                  f"{row['seconds_candidates']:.2f} s", flush=True)
        # reference: the table-assignment sampler on the same documents, from the topics
        row = _time_table_sweeps(MixtureModel(fam, Xw), y, n_burn, n_timed, seed)
        row.update(n_docs=N, decay="table Gibbs (reference)")
        rows.append(row)
        print(f"  N={N:>6,} table Gibbs: {row['seconds_per_sweep']:8.3f} s / sweep, "
              f"K={row['n_tables']:>4}", flush=True)
    out = {"vocab_size": SPEED_VOCAB, "doc_length": SPEED_LENGTH,
           "topic_lifetime": SPEED_LIFETIME, "topics_alive": SPEED_ALIVE,
           "burn_in_sweeps": n_burn, "timed_sweeps": n_timed, "alpha": 1.0,
           "concentration": BASE_CONCENTRATION, "rows": rows, "growth_exponent": {}}
    for name in (*decays, "table Gibbs (reference)"):
        r = [x for x in rows if x["decay"] == name]
        g = growth_exponent([x["n_docs"] for x in r], [x["seconds_per_sweep"] for x in r])
        out["growth_exponent"][name] = g
        print(f"  growth exponent in N, {name}: {g:.2f}", flush=True)
    # the same documents in a vocabulary ten times larger whose extra words never occur
    # (base concentration ~0 on them: the same model, the same chain): what grows is the
    # cost of the loops over the whole vocabulary
    N = SPEED_SIZES_QUICK[-1] if quick else 2_000
    X, _, y = make_drifting_documents(
        N, span=N, vocab_size=SPEED_VOCAB, doc_length=SPEED_LENGTH, n_alive=SPEED_ALIVE,
        lifetime=SPEED_LIFETIME, concentration=0.1, random_state=seed)
    out["vocab_padding"] = []
    for factor in (1, 10):
        Xp = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(N, SPEED_VOCAB * factor))
        conc = np.full(SPEED_VOCAB * factor, 1e-12)
        conc[:SPEED_VOCAB] = BASE_CONCENTRATION
        fam = family_for(Xp, conc)
        for name, decay in decays.items():
            row = _time_sweeps(fam, fam.validate(Xp), y, decay, n_burn, n_timed, seed)
            row.update(n_docs=N, decay=name, vocab_size=SPEED_VOCAB * factor)
            out["vocab_padding"].append(row)
            print(f"  N={N:,} {name:<10} V={SPEED_VOCAB * factor:>6,} (words used: "
                  f"{SPEED_VOCAB:,}): {row['seconds_per_sweep']:.3f} s / sweep, "
                  f"K={row['n_tables']}", flush=True)
    out["plot"] = plot_speed(rows, quick)
    return out


def _time_table_sweeps(model, y, n_burn, n_timed, seed):
    """Seconds per sweep of collapsed Gibbs (``CollapsedGibbs``), from the topics."""
    sampler = CollapsedGibbs()
    rng = np.random.default_rng(seed)
    state = sampler.init(rng, model, labels=y, alpha=1.0)
    for _ in range(n_burn):
        state, info = sampler.step(rng, state, model)
    secs = []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        secs.append(time.perf_counter() - t0)
    return {"seconds_per_sweep": float(np.median(secs)), "sweeps_timed": secs,
            "n_tables": int(info.n_clusters), "n_topics": int(y.max()) + 1,
            "nmi_topics": float(nmi(state.labels, y)), "log_joint": float(info.log_joint)}


def _time_sweeps(fam, Xw, y, decay, n_burn, n_timed, seed):
    """Seconds per sweep of ``DDCRPGibbs`` on sequential positions, from topic links."""
    N = len(y)
    pos = np.arange(N, dtype=np.float64)
    t0 = time.perf_counter()
    cands = link_candidates(decay, positions=pos, sequential=True)
    t_cands = time.perf_counter() - t0
    model = DDCRPModel(fam, Xw, None, cands)
    sampler = DDCRPGibbs()
    rng = np.random.default_rng(seed)
    state = sampler.init(rng, model, alpha=1.0, links=topic_links(y, pos, decay.reach))
    k_start = int(state.labels.max()) + 1
    for _ in range(n_burn):
        state, info = sampler.step(rng, state, model)
    secs, ks = [], []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        secs.append(time.perf_counter() - t0)
        ks.append(int(info.n_clusters))
    # the link prior is recomputed in Python at every step: time it on its own
    t0 = time.perf_counter()
    cands.log_prior(state.links, 1.0)
    t_prior = time.perf_counter() - t0
    return {"seconds_per_sweep": float(np.median(secs)), "sweeps_timed": secs,
            "n_tables": ks[-1], "n_tables_start": k_start, "n_topics": int(y.max()) + 1,
            "candidate_pairs": cands.n_pairs, "seconds_candidates": t_cands,
            "seconds_log_prior": t_prior, "nmi_topics": float(nmi(state.labels, y)),
            "log_joint": float(info.log_joint)}


def plot_speed(rows, quick):
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.8))
    for name in dict.fromkeys(r["decay"] for r in rows):
        r = [x for x in rows if x["decay"] == name]
        ax.loglog([x["n_docs"] for x in r], [x["seconds_per_sweep"] for x in r], "o-",
                  label=name)
    ax.set_xlabel("documents N")
    ax.set_ylabel("seconds per sweep")
    ax.set_title(f"ddCRP customer sampler, V = {SPEED_VOCAB:,}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save_figure(fig, "ddcrp_speed", quick)


def _save_figure(fig, name, quick):
    """Write ``results/NAME[_quick].png`` and close the figure; returns the path shown in
    the markdown."""
    import matplotlib.pyplot as plt

    path = RESULTS / (name + ("_quick" if quick else "") + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path.relative_to(HERE.parent))


# --------------------------------------------------------------------------- figure 5
def figure5_corpus(name, n_docs, seed):
    """``n_docs`` documents drawn at random from a real corpus (None if it is absent).  For
    20 Newsgroups the vocabulary is cut to the words these documents use, so that the
    per-table word counts (tables x V, dense) stay small."""
    path = SHARED_DATA / f"{name}_counts.npz" if name == "cora" else \
        SHARED_DATA / "newsgroups_train_counts.npz"
    if not path.exists():
        return None
    X = sp.load_npz(path).tocsr().astype(np.float64)
    rng = np.random.default_rng(seed)
    X = X[np.sort(rng.choice(X.shape[0], n_docs, replace=False))]
    if name == "newsgroups":
        used = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel())
        X = X[:, used]
    X.sort_indices()
    return X


def _figure5_run(sampler, model, crp, rng, n_iter, **init):
    """Run ``n_iter`` steps; the CRP-mixture log joint of every partition visited."""
    state = sampler.init(rng, model, alpha=1.0, **init)
    secs, joints, ks = [], [], []
    for _ in range(n_iter):
        t0 = time.perf_counter()
        state, info = sampler.step(rng, state, model)
        secs.append(time.perf_counter() - t0)
        joints.append(crp.log_joint(state.labels, 1.0))
        ks.append(int(info.n_clusters))
    best = int(np.argmax(joints))
    return {"best_log_joint": float(joints[best]), "best_iteration": best + 1,
            "final_log_joint": float(joints[-1]), "final_k": ks[-1], "seconds": float(sum(secs)),
            "seconds_per_iter": secs, "log_joint": joints, "n_clusters": ks}


def part_figure5(quick, seed, corpus="cora", n_runs=None, n_iter=None):
    n_docs = 500
    n_runs = n_runs or (3 if quick else 25)
    n_iter = n_iter or (40 if quick else 1000)
    X = figure5_corpus(corpus, n_docs, seed)
    if X is None:
        print(f"  {SHARED_DATA} has no {corpus} counts: figure5 skipped")
        return None
    fam = family_for(X, 1.0)  # uniform Dirichlet base, as in the paper
    print(f"  {corpus}: {n_docs} documents, V = {X.shape[1]:,}, {int(X.sum()):,} words; "
          f"{n_runs} orderings x {n_iter} iterations", flush=True)
    runs = []
    t_all = time.perf_counter()
    for r in range(n_runs):
        rng = np.random.default_rng([seed, r])
        perm = rng.permutation(n_docs)
        Xw = fam.validate(X[perm])
        crp = MixtureModel(fam, Xw)
        ddcrp = DDCRPModel(fam, Xw, None, link_candidates(Constant(), n=n_docs,
                                                          sequential=True))
        cust = _figure5_run(DDCRPGibbs(start="singletons"), ddcrp, crp, rng, n_iter)
        # the table sampler scans the documents in their (permuted) order, as the customer
        # sampler does, so that the ordering matters to both
        table = _figure5_run(CollapsedGibbs(random_scan=False), crp, crp, rng, n_iter,
                             labels=np.arange(n_docs))
        runs.append({"ordering": r, "customer": cust, "table": table})
        print(f"  ordering {r:>2}: best log joint customer {cust['best_log_joint']:.1f} "
              f"(K={cust['final_k']}, {cust['seconds']:.1f} s), table "
              f"{table['best_log_joint']:.1f} (K={table['final_k']}, {table['seconds']:.1f} s)",
              flush=True)
    wall = time.perf_counter() - t_all
    diff = np.array([x["customer"]["best_log_joint"] - x["table"]["best_log_joint"]
                     for x in runs])
    wins, ties = int((diff > 1e-6).sum()), int((np.abs(diff) <= 1e-6).sum())
    out = {"corpus": corpus, "n_docs": n_docs, "vocab": X.shape[1], "alpha": 1.0,
           "concentration": 1.0, "n_runs": n_runs, "n_iter": n_iter,
           "customer_wins": wins, "ties": ties, "wall_seconds": wall,
           "mean_difference": float(diff.mean()), "runs": _thin_figure5(runs)}
    out["estimate_full_seconds"] = _estimate_full(runs, n_iter, wall, 25, 1000)
    print(f"  customer sampler better in {wins}/{n_runs} runs ({ties} ties); mean difference "
          f"{diff.mean():+.1f} nats; wall {wall:.0f} s", flush=True)
    print(f"  estimated full run (25 orderings x 1,000 iterations): "
          f"{out['estimate_full_seconds'] / 60:.0f} min", flush=True)
    out["plot"] = plot_figure5(runs, out, quick)
    return out


def _estimate_full(runs, n_iter, wall, full_runs, full_iter):
    """Wall time of the full run: each run's sweeps so far plus the rest at the rate of its
    last sweeps, the log-joint evaluations and overhead scaled with the iterations."""
    total = 0.0
    steps = 0.0
    for x in runs:
        for s in ("customer", "table"):
            per = x[s]["seconds_per_iter"]
            tail = float(np.mean(per[-max(1, len(per) // 4):]))
            total += sum(per) + tail * max(0, full_iter - len(per))
            steps += sum(per)
    other = max(0.0, wall - steps) * full_iter / n_iter  # log joints and set-up
    return (total + other) * full_runs / len(runs)


def _thin_figure5(runs, keep=100):
    """Copies of the runs with every ``len // keep``-th entry of each trace (the last kept)."""
    out = []
    for x in runs:
        x = {k: dict(v) if isinstance(v, dict) else v for k, v in x.items()}
        for s in ("customer", "table"):
            step = max(1, len(x[s]["log_joint"]) // keep)
            for key in ("log_joint", "n_clusters"):
                x[s][key] = x[s][key][::step] + x[s][key][-1:]
            x[s]["seconds_per_iter"] = x[s]["seconds_per_iter"][::step]
        out.append(x)
    return out


def plot_figure5(runs, out, quick):
    plt = _pyplot()
    if plt is None:
        return None
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.5, 4))
    xs = [x["table"]["best_log_joint"] for x in runs]
    ys = [x["customer"]["best_log_joint"] for x in runs]
    ax.scatter(xs, ys, s=18)
    lo, hi = min(xs + ys), max(xs + ys)
    pad = 0.05 * (hi - lo) + 1
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k-", lw=0.8)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel("table-assignment Gibbs: best log joint")
    ax.set_ylabel("customer-assignment Gibbs: best log joint")
    ax.set_title(f"customer sampler better in {out['customer_wins']}/{out['n_runs']} runs",
                 fontsize=10)
    for x in runs:
        for s, c in (("customer", "C0"), ("table", "C1")):
            bx.plot(np.arange(1, len(x[s]["log_joint"]) + 1), x[s]["log_joint"], c, lw=0.6,
                    alpha=0.6)
    bx.plot([], [], "C0", label="customer (ddCRP, constant decay)")
    bx.plot([], [], "C1", label="table (collapsed Gibbs)")
    bx.set_xscale("log")
    j = [v for x in runs for s in ("customer", "table") for v in x[s]["log_joint"]]
    bx.set_ylim(np.percentile(j, 10), max(j) + 0.02 * (max(j) - np.percentile(j, 10)) + 1)
    bx.set_xlabel("iteration")
    bx.set_ylabel("CRP-mixture log joint")
    bx.legend(fontsize=8)
    fig.suptitle(f"{out['corpus']}: {out['n_docs']} documents, alpha = 1, uniform base, "
                 f"{out['n_iter']} iterations per run", fontsize=10)
    fig.tight_layout()
    return _save_figure(fig, "ddcrp_figure5", quick)


# ------------------------------------------------------------------------------ cora
def hop_distances(edges, n, max_hops):
    """Hop distance in the undirected graph ``edges`` for pairs at most ``max_hops`` apart,
    as a sparse CSR matrix (the diagonal is left out): breadth-first by sparse products,
    never a dense n x n array."""
    def off_diagonal(M):
        M = M.tocoo()
        keep = M.row != M.col
        return sp.csr_matrix((M.data[keep], (M.row[keep], M.col[keep])), shape=M.shape)

    A = sp.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    A = off_diagonal(((A + A.T) > 0).astype(np.float64))
    D = A.copy()
    reached = A.copy()
    frontier = A.copy()
    for h in range(2, max_hops + 1):
        frontier = ((frontier @ A) > 0).astype(np.float64)
        new = frontier - frontier.multiply(reached)
        new = off_diagonal(new)
        new.eliminate_zeros()
        D = D + h * new
        reached = ((reached + new) > 0).astype(np.float64)
        frontier = new
    D = D.tocsr()
    D.sort_indices()
    return D, A


def _within_share(labels, A):
    """Share of the graph's edges whose two ends are in the same cluster."""
    C = sp.triu(A, k=1).tocoo()
    return float(np.mean(labels[C.row] == labels[C.col])) if C.nnz else float("nan")


def part_cora(quick, seed):
    if not (SHARED_DATA / "cora_counts.npz").exists():
        print(f"  {SHARED_DATA} has no CORA files: cora skipped")
        return None
    X = sp.load_npz(SHARED_DATA / "cora_counts.npz").tocsr().astype(np.float64)
    edges = np.loadtxt(SHARED_DATA / "cora_links.csv", delimiter=",", skiprows=1,
                       dtype=np.int64)
    n = X.shape[0]
    n_iter = 20 if quick else 400
    rng = np.random.default_rng(seed)
    test = np.sort(rng.choice(n, n // 10, replace=False))
    train = np.setdiff1d(np.arange(n), test)
    # distances come from the whole citation graph (the held-out documents' words are
    # hidden, not their citations)
    D, A = hop_distances(edges, n, max_hops=2)
    D_train, A_train = D[train][:, train], A[train][:, train]
    D_test = D[test][:, train]
    X_train, X_test = X[train], X[test]
    deg = np.asarray(A_train.sum(axis=1)).ravel()
    print(f"  CORA: {len(train):,} training and {len(test):,} held-out documents, "
          f"V = {X.shape[1]:,}; citation graph on the training documents: "
          f"{A_train.nnz // 2:,} edges, {int((deg == 0).sum())} isolated documents; "
          f"pairs within two hops: {D_train.nnz:,}; {n_iter} iterations", flush=True)
    fam = family_for(X_train, BASE_CONCENTRATION)
    lik_model = MixtureModel(fam, fam.validate(X_train))
    configs = {
        "ddCRP window:2 (cited or citing)": Window(2),
        "ddCRP window:3 (within two hops)": Window(3),
        "DP mixture (collapsed Gibbs)": None,
    }
    runs = []
    dp_labels = None
    for name, decay in configs.items():
        common = {"family": DirichletMultinomial(BASE_CONCENTRATION), "alpha": 1.0,
                  "n_iter": n_iter, "store_labels": True, "random_state": seed,
                  "n_predictive_draws": N_PREDICTIVE_DRAWS, "n_chains": 1}
        if decay is None:
            est = DPMixture(sampler="gibbs", **common)
        else:
            est = DDCRPMixture(decay=decay, distances=D_train, sequential=False,
                               start="singletons", **common)
        t0 = time.perf_counter()
        est.fit(X_train)
        secs = time.perf_counter() - t0
        draws, alphas = kept_draws(est)
        if decay is None:
            W = np.ones((len(test), len(train)))
            dp_labels = est.labels_
        else:
            W = D_test.copy()
            W.data = decay(W.data)
            W.eliminate_zeros()
        per = heldout_per_draw(fam, X_train, X_test, draws, alphas, W)
        heldout = float((logsumexp(per, axis=0) - math.log(len(per))).sum())
        totals = per.sum(axis=1)
        run = {"model": name, "seconds": secs, "seconds_per_iter": secs / n_iter,
               "n_tables": int(est.n_clusters_),
               "n_tables_mean_kept": float(est.trace_.n_clusters[0, est.trace_.kept].mean()),
               "log_joint_final": float(est.log_joint_),
               "log_lik_point_estimate": float(lik_model.log_likelihood(est.labels_)),
               "citations_within_cluster": _within_share(est.labels_, A_train),
               "heldout_log_lik": heldout,
               "heldout_per_draw_mean": float(totals.mean()),
               "heldout_per_draw_se": float(totals.std(ddof=1) / math.sqrt(len(totals))),
               "n_kept": len(draws)}
        if decay is None:
            run["heldout_score_samples"] = float(est.score_samples(X_test).sum())
        runs.append(run)
        run["_labels"] = est.labels_
        print(f"  {name:<34} {secs:6.1f} s ({secs / n_iter * 1e3:.0f} ms/it), tables "
              f"{run['n_tables']} (kept mean {run['n_tables_mean_kept']:.1f}), log lik "
              f"{run['log_lik_point_estimate']:.6g}, citations within a cluster "
              f"{run['citations_within_cluster']:.3f}, held-out {heldout:.1f}", flush=True)
    for run in runs:
        run["nmi_to_dp"] = float(nmi(run.pop("_labels"), dp_labels))
    dp = runs[-1]
    if "heldout_score_samples" in dp:
        print(f"  check: DP held-out by this script {dp['heldout_log_lik']:.3f}, by "
              f"DPMixture.score_samples {dp['heldout_score_samples']:.3f}", flush=True)
    return {"n_train": len(train), "n_test": len(test), "vocab": X.shape[1],
            "n_iter": n_iter, "alpha": 1.0, "concentration": BASE_CONCENTRATION,
            "edges_train": int(A_train.nnz // 2), "isolated_train": int((deg == 0).sum()),
            "runs": runs}


# --------------------------------------------------------------------------- held-out
def part_heldout(quick, seed):
    if quick:
        n_docs, span, vocab, n_iter = 500, 30, 1_000, 30
        decays = {"constant": [None], "exponential": [2.0, 8.0], "logistic": [4.0, 14.0]}
        from_prior = [("constant", None)]
    else:
        n_docs, span, vocab, n_iter = 2_000, 30, 3_000, 100
        decays = {"constant": [None], "exponential": [1.0, 2.0, 4.0, 8.0, 16.0],
                  "logistic": [1.0, 2.0, 4.0, 8.0, 14.0]}
        from_prior = [("constant", None), ("exponential", 2.0)]
    held_days = 3
    X, t, y = make_drifting_documents(n_docs, span=span, vocab_size=vocab, doc_length=100,
                                      n_alive=5, lifetime=8.0, concentration=0.1,
                                      random_state=seed)
    days = np.floor(t)  # time stamps by day
    test = days >= span - held_days
    X_train, X_test = X[~test], X[test]
    t_train, t_test = days[~test], days[test]
    fam = family_for(X_train, BASE_CONCENTRATION)
    n_topics_test = len(np.unique(y[test]))
    new_topics = len(np.setdiff1d(np.unique(y[test]), np.unique(y[~test])))
    print(f"  {n_docs:,} documents over {span} days (V = {vocab:,}, {int(y.max()) + 1} topics "
          f"in all, 5 alive at a time, lifetimes 4-12 days); held out: the last "
          f"{held_days} days, {int(test.sum())} documents ({n_topics_test} topics, "
          f"{new_topics} new); {n_iter} iterations, half burn-in", flush=True)
    # every decay from all singletons (the start of the paper's Figure 5); a few also from
    # a prior draw (the estimator's default start), to show what the start does
    configs = [(kind, a, "singletons") for kind, params in decays.items() for a in params]
    configs += [(kind, a, "prior") for kind, a in from_prior]
    runs = []
    for kind, a, start in configs:
        decay = Constant() if kind == "constant" else {"exponential": Exponential,
                                                        "logistic": Logistic}[kind](a)
        est = DDCRPMixture(family=DirichletMultinomial(BASE_CONCENTRATION), alpha=1.0,
                           decay=decay, positions=t_train, sequential=True, n_iter=n_iter,
                           start=start, store_labels=True,
                           n_predictive_draws=N_PREDICTIVE_DRAWS, random_state=seed, n_chains=1)
        t0 = time.perf_counter()
        est.fit(X_train)
        secs = time.perf_counter() - t0
        score = est.score_samples(X_test, positions=t_test)
        draws, alphas = kept_draws(est)
        if decay.is_constant:
            W = np.ones((int(test.sum()), int((~test).sum())))
        else:
            W = decay(np.abs(t_test[:, None] - t_train[None, :]))
        per = heldout_per_draw(fam, X_train, X_test, draws, alphas, W)
        totals = per.sum(axis=1)
        mine = float((logsumexp(per, axis=0) - math.log(len(per))).sum())
        # the same predictive with the training documents at their true topics
        truth = float(heldout_per_draw(fam, X_train, X_test, [y[~test]], [1.0], W).sum())
        run = {"decay": kind, "a": a, "start": start, "seconds": secs,
               "seconds_per_iter": secs / n_iter,
               "heldout_log_lik": float(score.sum()),
               "heldout_per_draw_mean": float(totals.mean()),
               "heldout_se": float(totals.std(ddof=1) / math.sqrt(len(totals))),
               "heldout_check": mine, "heldout_at_truth": truth, "n_kept": len(draws),
               "n_tables": int(est.n_clusters_),
               "n_tables_mean_kept": float(est.trace_.n_clusters[0, est.trace_.kept].mean()),
               "nmi_topics": float(nmi(est.labels_, y[~test])),
               "log_joint_final": float(est.log_joint_),
               "candidate_pairs": est.candidates_.n_pairs}
        runs.append(run)
        label = (kind if a is None else f"{kind}:{a:g}") + f" from {start}"
        print(f"  {label:<28} held-out {run['heldout_log_lik']:10.1f} (per draw "
              f"{run['heldout_per_draw_mean']:.1f} +- {run['heldout_se']:.1f}; check "
              f"{mine:.1f}; at the truth {truth:.1f}), K={run['n_tables']} (kept mean "
              f"{run['n_tables_mean_kept']:.1f}), NMI {run['nmi_topics']:.3f}, log joint "
              f"{run['log_joint_final']:.0f}, {secs:.1f} s", flush=True)
    out = {"n_docs": n_docs, "span_days": span, "held_out_days": held_days,
           "n_test": int(test.sum()), "vocab": vocab, "doc_length": 100, "n_iter": n_iter,
           "alpha": 1.0, "concentration": BASE_CONCENTRATION, "topics": int(y.max()) + 1,
           "topics_in_test": n_topics_test, "new_topics_in_test": new_topics, "runs": runs}
    out["plot"] = plot_heldout(out, quick)
    return out


def plot_heldout(out, quick):
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4.3))
    main = [r for r in out["runs"] if r["start"] == "singletons"]
    crp = next(r for r in main if r["decay"] == "constant")
    ax.axhline(crp["heldout_log_lik"], color="k", lw=1, label="CRP (constant decay)")
    ax.axhspan(crp["heldout_log_lik"] - crp["heldout_se"],
               crp["heldout_log_lik"] + crp["heldout_se"], color="k", alpha=0.1)
    ax.axhline(crp["heldout_at_truth"], color="k", lw=0.8, ls=":")
    for kind, c in (("exponential", "C0"), ("logistic", "C1")):
        r = [x for x in main if x["decay"] == kind]
        ax.errorbar([x["a"] for x in r], [x["heldout_log_lik"] for x in r],
                    yerr=[x["heldout_se"] for x in r], fmt="o-", color=c, capsize=3,
                    label=kind)
        ax.plot([x["a"] for x in r], [x["heldout_at_truth"] for x in r], ":", color=c,
                lw=0.8)
    ax.plot([], [], "k:", lw=0.8, label="same decay, training documents at their topics")
    values = [v for x in main for v in (x["heldout_log_lik"], x["heldout_at_truth"])]
    lo, hi = min(values), max(values)
    lo, hi = lo - 0.08 * (hi - lo) - 1, hi + 0.05 * (hi - lo) + 1
    prior = [r for r in out["runs"] if r["start"] == "prior"]
    for r in prior:  # off the scale: a triangle at the bottom edge, with its value
        c = {"constant": "k", "exponential": "C0", "logistic": "C1"}[r["decay"]]
        x = r["a"] if r["a"] is not None else min(x["a"] for x in main if x["a"] is not None)
        v = r["heldout_log_lik"]
        if v < lo:
            ax.plot([x], [lo + 0.01 * (hi - lo)], "v", color=c, ms=7)
            ax.annotate(f"{v:.0f}", (x, lo + 0.01 * (hi - lo)), textcoords="offset points",
                        xytext=(6, 2), fontsize=7, color=c)
        else:
            ax.plot([x], [v], "x", color=c, ms=8)
    if prior:
        ax.plot([], [], "kx", label="from a prior draw (CRP at the left edge;\n"
                "triangle: below the scale)")
    ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ticks = sorted({x["a"] for x in main if x["a"] is not None})
    ax.set_xticks(ticks, [f"{a:g}" for a in ticks])
    ax.minorticks_off()
    ax.set_xlabel("decay parameter a (days; logistic slope 1)")
    ax.set_ylabel("held-out log likelihood")
    ax.set_title(f"last {out['held_out_days']} of {out['span_days']} days "
                 f"({out['n_test']} documents), from all singletons", fontsize=10)
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 0.07))
    fig.tight_layout()
    return _save_figure(fig, "ddcrp_heldout", quick)


# ---------------------------------------------------------------------------- output
def _fmt_a(a):
    return "" if a is None else f"{a:g}"


def _when(part):
    """A line saying when a part ran, for how long and under what load (if recorded)."""
    if "date" not in part:
        return []
    return [f"Run {part['date']}, {part['part_seconds']:.0f} s, load average "
            f"{part['load_average_start'][0]} → {part['load_average_end'][0]}.", ""]


def write_markdown(payload, path):
    m = payload["machine"]
    md = ["# Distance dependent CRP benchmark", "",
          f"Machine: {m['cpu_model']}, {m['nproc']} cores; {m['date']}"
          + (" (quick run)" if payload.get("quick") else "") + ".", ""]
    sp_ = payload.get("speed")
    if sp_:
        md += [f"## Speed: seconds per sweep, V = {sp_['vocab_size']:,}, about "
               f"{sp_['doc_length']} words a document, sequential positions", "",
               f"{sp_['timed_sweeps']} sweeps timed (median) after {sp_['burn_in_sweeps']} "
               "burn-in sweeps, from links that follow the true topics; alpha = 1.", "",
               *_when(sp_),
               "| N | decay | s / sweep | tables | topics | candidate pairs | "
               "link prior (Python) ms |",
               "|---:|---|---:|---:|---:|---:|---:|"]
        md += [f"| {r['n_docs']:,} | {r['decay']} | {r['seconds_per_sweep']:.3f} | "
               f"{r['n_tables']} | {r['n_topics']} | {r['candidate_pairs']:,} | "
               f"{r['seconds_log_prior'] * 1e3:.1f} |" if "candidate_pairs" in r else
               f"| {r['n_docs']:,} | {r['decay']} | {r['seconds_per_sweep']:.3f} | "
               f"{r['n_tables']} | {r['n_topics']} | | |" for r in sp_["rows"]]
        md += ["", "Growth exponent in N: " + ", ".join(
            f"{k} {v:.2f}" for k, v in sp_["growth_exponent"].items()) + "."]
        if sp_.get("vocab_padding"):
            md += ["", "The same documents in a vocabulary ten times larger whose extra words "
                   "never occur (the same model and chain): seconds per sweep "
                   + ", ".join(f"{r['decay']} V = {r['vocab_size']:,}: "
                               f"{r['seconds_per_sweep']:.3f}" for r in sp_["vocab_padding"])
                   + "."]
        if sp_.get("plot"):
            md += ["", f"![speed]({Path(sp_['plot']).name})"]
        md.append("")
    f5 = payload.get("figure5")
    if f5:
        md += [f"## Figure 5: {f5['corpus']}, {f5['n_docs']} documents, "
               f"{f5['n_runs']} orderings x {f5['n_iter']} iterations", "",
               f"Customer sampler better in **{f5['customer_wins']}/{f5['n_runs']}** runs "
               f"({f5['ties']} ties); mean difference {f5['mean_difference']:+.1f} nats. "
               f"Wall time {f5['wall_seconds']:.0f} s; the full run (25 x 1,000) would take "
               f"about {f5['estimate_full_seconds'] / 60:.0f} min.", "", *_when(f5),
               "| ordering | customer best | at iteration | K | s | table best | at "
               "iteration | K | s |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for x in f5["runs"]:
            c, t = x["customer"], x["table"]
            md.append(f"| {x['ordering']} | {c['best_log_joint']:.1f} | {c['best_iteration']} "
                      f"| {c['final_k']} | {c['seconds']:.1f} | {t['best_log_joint']:.1f} | "
                      f"{t['best_iteration']} | {t['final_k']} | {t['seconds']:.1f} |")
        if f5.get("plot"):
            md += ["", f"![figure 5]({Path(f5['plot']).name})"]
        md.append("")
    co = payload.get("cora")
    if co:
        md += [f"## CORA citation network: {co['n_train']:,} training, {co['n_test']} held-out "
               f"documents, {co['n_iter']} iterations", "",
               f"Training graph: {co['edges_train']:,} citation edges, "
               f"{co['isolated_train']} isolated documents.  CORA has no labels here: "
               "log lik is sum_k log f(X_k) of the point estimate (the same base measure for "
               "all models), NMI is to the DP mixture's point estimate.  The ddCRP starts "
               "from all singletons, the DP mixture from 10 random clusters.", "", *_when(co),
               "| model | s | tables (kept mean) | log lik | citations within a cluster | "
               "held-out (± s.e. per draw) | NMI to DP |", "|---|---:|---:|---:|---:|---:|---:|"]
        md += [f"| {r['model']} | {r['seconds']:.1f} | {r['n_tables']} "
               f"({r['n_tables_mean_kept']:.1f}) | {r['log_lik_point_estimate']:.6g} | "
               f"{r['citations_within_cluster']:.3f} | {r['heldout_log_lik']:.1f} "
               f"(± {r['heldout_per_draw_se']:.1f}) | {r['nmi_to_dp']:.3f} |" for r in co["runs"]]
        md.append("")
    ho = payload.get("heldout")
    if ho:
        md += [f"## Held-out likelihood (Figure 4 in spirit): {ho['n_docs']:,} generated "
               f"documents over {ho['span_days']} days, last {ho['held_out_days']} days held "
               f"out ({ho['n_test']} documents)", "",
               f"{ho['n_iter']} iterations, half burn-in; held-out = sum over documents of "
               "`score_samples` (draws averaged); s.e. across kept draws of the per-draw "
               "totals.", "", *_when(ho),
               "| decay | a | start | held-out | per-draw mean ± s.e. | at the true topics | "
               "tables (kept mean) | NMI | final log joint | s |",
               "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        md += [f"| {r['decay']} | {_fmt_a(r['a'])} | {r['start']} | "
               f"{r['heldout_log_lik']:.1f} | {r['heldout_per_draw_mean']:.1f} ± "
               f"{r['heldout_se']:.1f} | {r['heldout_at_truth']:.1f} | {r['n_tables']} "
               f"({r['n_tables_mean_kept']:.1f}) | {r['nmi_topics']:.3f} | "
               f"{r['log_joint_final']:.0f} | {r['seconds']:.1f} |" for r in ho["runs"]]
        if ho.get("plot"):
            md += ["", f"![held-out]({Path(ho['plot']).name})"]
        md.append("")
    path.write_text("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run on small data")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--figure5-corpus", choices=("cora", "newsgroups"), default="cora")
    p.add_argument("--figure5-runs", type=int, help="orderings (default 25; --quick 3)")
    p.add_argument("--figure5-iters", type=int, help="iterations (default 1000; --quick 40)")
    args = p.parse_args(argv)

    def run_part(part):
        if part == "figure5":
            return part_figure5(args.quick, args.seed, args.figure5_corpus, args.figure5_runs,
                                args.figure5_iters)
        return globals()[f"part_{part}"](args.quick, args.seed)

    run_parts(args.parts, run_part, RESULTS / "ddcrp", args.quick, warm_up, write_markdown)

if __name__ == "__main__":
    main()
