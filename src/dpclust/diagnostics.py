"""Convergence diagnostics of dpclust's chains, computed by ArviZ.

A fitted estimator's ``trace_`` records, per chain and iteration, the log joint, the number
of clusters, alpha and the entropy of the cluster sizes (a summary of the partition that
does not change when clusters are relabelled).  :func:`convergence` gives, for each of them
over the kept iterations, the rank-normalised split R-hat and the bulk and tail effective
sample sizes of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), as ArviZ computes
them (``arviz_stats``, the ArviZ project's array-level statistics: the same numbers as
``arviz.rhat`` and ``arviz.ess``, without loading xarray, pandas and matplotlib into every
fit), and a verdict.

**The rule.**  A quantity has converged when ``rhat < 1.01`` and both effective sample
sizes are at least ``100`` per chain (``ess_bulk >= 100 C`` and ``ess_tail >= 100 C``), the
thresholds Vehtari et al. recommend; the run has converged when every quantity has.  With
one chain, its two halves are given to ArviZ as two chains, so that its split R-hat
compares the four quarters of the chain: a verdict that sees a trend or a chain stuck in
one part of its run, but not a second mode that the chain never visited (only several
chains from different starting points can see that).  A quantity that takes one value
throughout every chain (a number of clusters that never changes, alpha when it is fixed)
is converged, with R-hat 1 and as many effective draws as draws; one that is constant in
each chain but differs between chains is not.  Under the rule, a few hundred kept draws
of a well-mixing chain pass; a hundred often do not (R-hat of 100 independent draws
exceeds 1.01 about a third of the time), so short runs warn.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
    Rank-normalization, folding, and localization: an improved R-hat for assessing
    convergence of MCMC. Bayesian Analysis 16(2).
Kumar, R., Carroll, C., Hartikainen, A. & Martin, O. (2019). ArviZ a unified library for
    exploratory analysis of Bayesian models in Python. JOSS 4(33).
"""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

#: the rule's thresholds (Vehtari et al. 2021)
RHAT_MAX = 1.01
ESS_PER_CHAIN = 100

#: why a Generalized Mallows fit may not converge soon, for the advice and the report
RANKINGS_MIXING = ("under the exact posterior the number of mid-sized clusters on real "
                   "ballots mixes over thousands of iterations and grows with the number of "
                   "ballots (no mixture of Mallows or Plackett-Luce components fits them "
                   "exactly); the coarsened posterior "
                   "(coarsening='auto', CLI --coarsening auto) keeps K steady as ballots are "
                   "added and mixes far faster (user guide, 'When the model does not fit')")

#: the quantities of the trace that get a verdict, in the order they are reported
QUANTITIES = ("log_likelihood", "n_clusters", "size_entropy", "alpha")

_NAMES = {"log_likelihood": "the log-likelihood", "n_clusters": "the number of clusters",
          "size_entropy": "the entropy of the cluster sizes", "alpha": "alpha",
          "fused_clusters": "the number of fused clusters"}


def judged(conv: dict) -> list:
    """The quantities a verdict judged, in order: :data:`QUANTITIES` (those it has), then
    the learned hyperparameters by name."""
    return [q for q in QUANTITIES if q in conv] + list(conv.get("learned", ()))


def quantity_name(name: str) -> str:
    """A quantity of the verdict in words (``"n_clusters"``: ``"the number of clusters"``)."""
    return _NAMES.get(name, name.replace("_", " "))


def arviz():
    """ArviZ, imported quietly (its start-up notice is not the user's concern)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            yield


def chain_entropy(sizes) -> float:
    """Entropy (nats) of the cluster sizes ``sizes``: ``-sum_k p_k log p_k``, ``p_k = N_k /
    N``; 0 for one cluster, ``log K`` for K equal clusters."""
    n = np.asarray(sizes, dtype=np.float64)
    n = n[n > 0]
    p = n / n.sum()
    return float(-(p * np.log(p)).sum())


def diagnose(draws) -> dict:
    """R-hat, bulk and tail ESS and the verdict of one quantity.

    Parameters
    ----------
    draws : array of shape (n_chains, n_draws)

    Returns
    -------
    dict with ``rhat``, ``ess_bulk``, ``ess_tail`` (floats) and ``converged`` (bool)
    """
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"draws must have shape (n_chains, n_draws), got {x.shape}")
    C, n = x.shape
    if n < (8 if C == 1 else 4) or not np.isfinite(x).all():
        return {"rhat": math.nan, "ess_bulk": math.nan, "ess_tail": math.nan,
                "converged": False}
    if np.ptp(x) == 0.0:  # one value throughout: as many effective draws as draws, which
        # the rule asks of any chain (10 draws of one value once passed it)
        return {"rhat": 1.0, "ess_bulk": float(C * n), "ess_tail": float(C * n),
                "converged": bool(n >= ESS_PER_CHAIN)}
    from arviz_stats.base import array_stats

    # one chain: its halves as two chains, so that split R-hat compares its quarters
    for_rhat = x if C > 1 else x[:, : 2 * (n // 2)].reshape(2, n // 2)
    axes = {"chain_axis": 0, "draw_axis": 1}
    with _quiet():
        rhat = float(array_stats.rhat(for_rhat, **axes))
        ess_bulk = float(array_stats.ess(x, method="bulk", **axes))
        # the smaller of the ESS of the 5 % and 95 % quantiles (arviz.ess(method="tail"))
        ess_tail = float(array_stats.ess(x, method="tail", prob=(0.05, 0.95), **axes))
    if (np.ptp(x, axis=1) == 0.0).all():  # constant in each chain, not the same constant
        rhat = math.inf
    need = ESS_PER_CHAIN * C
    ok = (math.isfinite(rhat) and rhat < RHAT_MAX and ess_bulk >= need and ess_tail >= need)
    return {"rhat": rhat, "ess_bulk": ess_bulk, "ess_tail": ess_tail, "converged": bool(ok)}


#: fewer draws per chain than this give no figures for a quantity of held draws: R-hat
#: and ESS of so few draws would say more about the noise than about the chain
MIN_HELD_DRAWS = 25


def diagnose_draws(draws, *, draws_text: str, thinned: bool,
                   min_draws: int = MIN_HELD_DRAWS) -> dict:
    """:func:`diagnose` for a quantity computed on some of the kept draws only (the draws
    held for the point estimate, say), with whether the rule can judge it.

    On every kept draw (``thinned`` False) the rule judges the quantity as any other.  On
    draws spread evenly over more kept draws, R-hat is an R-hat of the chain, and one at
    or above ``RHAT_MAX`` fails the rule.  Their ESS, though, is a lower bound of the
    chain's (the draws between them are not there to add to it): an ESS that reaches the
    rule's ``ESS_PER_CHAIN`` per chain passes, one that does not leaves the quantity not
    judged (``judged`` False: its figures are returned, and a verdict should not count
    it).  A quantity that takes one value throughout is judged as :func:`diagnose` judges
    it.  Fewer than ``min_draws`` per chain give no figures.

    Parameters
    ----------
    draws : array of shape (n_chains, n_draws)
        Per chain, in order of iteration.
    draws_text : str
        Which draws these are, in words (kept as ``"draws"``).
    thinned : bool
        Whether the draws are a subset of the kept draws.
    min_draws : int, default=MIN_HELD_DRAWS
        Fewer draws per chain than this give no figures (R-hat and ESS NaN).

    Returns
    -------
    dict
        :func:`diagnose`'s keys, ``"judged"`` (bool), ``"n_draws"`` (per chain) and
        ``"draws"``; where not judged, ``"reason"``.
    """
    x = np.asarray(draws, dtype=np.float64)
    n = int(x.shape[1])
    if n < min_draws:
        return {"rhat": math.nan, "ess_bulk": math.nan, "ess_tail": math.nan,
                "converged": False, "n_draws": n, "draws": draws_text, "judged": False,
                "reason": f"only {n} draws per chain: too few to judge (at least "
                          f"{min_draws} are needed for R-hat and ESS worth showing)"}
    out = diagnose(x)
    rhat = out["rhat"]
    out.update(n_draws=n, draws=draws_text, judged=True)
    if math.isnan(rhat):
        out.update(judged=False, reason="R-hat is undefined on these draws")
    elif thinned and not out["converged"] and rhat < RHAT_MAX:
        out.update(judged=False, reason=(
            f"R-hat passes; the bulk and tail ESS of these draws ({int(out['ess_bulk'])} and "
            f"{int(out['ess_tail'])}) are lower bounds of the chains' (the kept draws between "
            f"them are not held), and under the rule's {ESS_PER_CHAIN} per chain"))
    return out


def convergence(trace, *, alpha_resampled: bool = True) -> dict:
    """The verdict on a fitted estimator's trace (the kept iterations of every chain).

    Parameters
    ----------
    trace : Trace
        ``trace_`` of a fitted estimator (one chain or several).
    alpha_resampled : bool, default=True
        Whether alpha is a quantity of the chain (False: it was fixed, and is left out).

    Returns
    -------
    dict
        One entry per quantity (``log_likelihood``, ``n_clusters``, ``size_entropy``, when
        resampled ``alpha``, and every learned hyperparameter of the family by its name,
        ``trace.hyper``): ``{"rhat", "ess_bulk", "ess_tail", "converged"}``; and
        ``"converged"`` (every quantity has), ``"n_chains"``, ``"n_draws"`` (kept draws per
        chain), ``"failing"`` (the quantities that have not) and ``"rule"`` (in words).

        Beside the rule, ``"large_clusters"``: the same figures for the number of clusters
        holding at least 1 % of the points (``trace.n_large_clusters``), with ``"values"``
        its smallest and largest value over the kept draws (:func:`settled_scale`).
    """
    kept = np.asarray(trace.kept, dtype=np.int64)
    out = {}
    failing = []
    n_chains = 1
    for name in QUANTITIES:
        if name == "alpha" and not alpha_resampled:
            continue
        series = np.asarray(getattr(trace, name), dtype=np.float64)
        series = series[None, :] if series.ndim == 1 else series
        n_chains = series.shape[0]
        verdict = diagnose(series[:, kept])
        out[name] = verdict
        if not verdict["converged"]:
            failing.append(name)
    for name, series in (getattr(trace, "hyper", None) or {}).items():  # learned ones
        series = np.asarray(series, dtype=np.float64)
        series = series[None, :] if series.ndim == 1 else series
        verdict = diagnose(series[:, kept])
        out[name] = verdict
        if not verdict["converged"]:
            failing.append(name)
    large = getattr(trace, "n_large_clusters", None)
    if large is not None:  # beside the rule, for the advice (:func:`settled_scale`)
        series = np.asarray(large, dtype=np.float64)
        series = (series[None, :] if series.ndim == 1 else series)[:, kept]
        if series.size:
            verdict = diagnose(series)
            verdict["values"] = [int(series.min()), int(series.max())]
            out["large_clusters"] = verdict
    joint = np.asarray(trace.log_joint, dtype=np.float64)
    joint = (joint[None, :] if joint.ndim == 1 else joint)[:, kept]
    if joint.shape[0] > 1 and joint.shape[1] and np.isfinite(joint).all():
        # each chain's level and spread, for the advice (:func:`separate_modes`)
        half = joint.shape[1] // 2
        drift = np.abs(joint[:, half:].mean(axis=1) - joint[:, :max(half, 1)].mean(axis=1))
        out["chain_levels"] = {"mean": [float(v) for v in joint.mean(axis=1)],
                               "drift": [float(v) for v in drift]}
    out["learned"] = list(getattr(trace, "hyper", None) or {})
    out["converged"] = not failing
    out["n_chains"] = int(n_chains)
    out["n_draws"] = int(len(kept))
    out["failing"] = failing
    out["rule"] = (f"R-hat < {RHAT_MAX} and bulk and tail ESS >= {ESS_PER_CHAIN} per chain "
                   "for every quantity (Vehtari et al. 2021)"
                   + ("; one chain: split R-hat over its quarters" if n_chains == 1 else ""))
    return out


def first_passing_length(trace, *, start: int = 1, step: int = 1,
                         alpha_resampled: bool = False, stays: bool = False):
    """The shortest run whose verdict passes the rule on the same chains: the first length
    ``L`` (from ``start``, every ``step``) at which :func:`convergence` of the trace's first
    ``L`` iterations, with the burn-in half of them, passes; None if none does.

    The chains are the same whatever length a run stops at, so this is where a run judged
    at every iteration would have stopped: what a run that goes on until it converges
    (``n_iter=None``) is measured against.  The verdict of one chain can pass at a length
    and fail a little later (its ESS estimates are noisy); ``stays=True`` gives the first
    length from which it passes at every length judged up to the trace's end (None if it
    fails at the end), which a run judged only now and then is sure to see.
    """
    from types import SimpleNamespace

    n_iter = np.shape(trace.log_joint)[1]

    def passes(length):
        cut = SimpleNamespace(**{name: np.asarray(getattr(trace, name))[:, :length]
                                 for name in ("log_joint", "n_clusters", "alpha",
                                              "size_entropy", "log_likelihood")},
                              hyper={name: np.asarray(v)[:, :length]
                                     for name, v in (getattr(trace, "hyper", None)
                                                     or {}).items()},
                              kept=np.arange(length // 2, length))
        return convergence(cut, alpha_resampled=alpha_resampled)["converged"]

    lengths = range(max(int(start), 2), n_iter + 1, max(int(step), 1))
    if not stays:
        return next((length for length in lengths if passes(length)), None)
    first = None
    for length in reversed(lengths):
        if not passes(length):
            break
        first = length
    return first


def settled_scale(conv: dict, *, coarsened: bool = False) -> str:
    """A sentence for a run that fails the rule only at the scale of small clusters: the
    number of clusters holding at least 1 % of the points passes the rule on its own while
    the number of clusters, or the entropy of their sizes, does not; else ``""``.
    ``coarsened``: the run already fits a coarsened posterior, so the sentence advises a
    smaller ``alpha_c`` instead of coarsening.

    On many points from well-separated groups the exact DP posterior keeps a few small
    clusters of outlying points, whose number mixes slowly under every sampler (10⁵ points:
    50-100 iterations a visit); the clusters the groups make are settled long before.
    """
    large = conv.get("large_clusters")
    if (conv.get("converged") or not isinstance(large, dict) or not large.get("converged")
            or not {"n_clusters", "size_entropy"} & set(conv.get("failing", ()))):
        return ""
    lo, hi = large["values"]
    count = (f"{lo} in every kept draw" if lo == hi
             else f"{lo} to {hi}, R-hat {large['rhat']:.3f}")
    head = ("The clusters holding at least 1 % of the points have settled (" + count + "): "
            "what has not mixed is the number and sizes of the small ones, under 1 % of the "
            "points each, which ")
    if coarsened:
        return (head + "the chains revisit slowly. The large clusters of the point "
                "estimate can be read; to judge the small ones too, run longer (max_time, "
                "CLI --max-time), or coarsen more (a smaller coarsening, e.g. half the "
                "current alpha_c), under which small clusters merge into the large ones.")
    return (head + "on many points the exact posterior keeps and revisits slowly. The "
            "large clusters of the point estimate can be read; to judge the small ones "
            "too, run longer, or fit the coarsened posterior with a fixed tolerance (e.g. "
            "coarsening=1000, CLI --coarsening 1000; user guide, 'When the model does not "
            "fit'), under which a few outlying points no longer make a cluster.")


#: chains whose mean log joint densities lie this many nats apart or more (a factor of
#: 22,000 in density) sit at separate levels, where their log-likelihoods' R-hat fails ...
MODES_MIN_GAP = 10.0
#: ... when no chain's two halves differ by more than this share of that gap (each chain
#: holds its level: chains that drift are still on their way, and time is the advice) ...
MODES_MAX_DRIFT = 0.25
#: ... over this many kept draws a chain or more: shorter runs have not given the chains
#: their chance to cross (openintro's esi, 146 rows: 15 nats apart at 704 draws a chain,
#: none drifting by more than 0.5 nats, and one level at 60 s), and time is the advice
MODES_MIN_DRAWS = 2000


def separate_modes(conv: dict) -> str:
    """A sentence for chains that sit at separate levels of the log joint density: the
    means of the highest and the lowest chain over the kept draws at least
    :data:`MODES_MIN_GAP` nats apart, the log-likelihood's R-hat failing the rule (the
    chains differ by more than their own spread), and each chain holding its level (the
    means of its two halves differ by at most :data:`MODES_MAX_DRIFT` of that gap), over
    :data:`MODES_MIN_DRAWS` kept draws a chain or more; else ``""``.  The chains are then
    each stationary and the rule fails between them, not within them.

    On R's ``ISLR::Wage`` (3,000 rows) three chains held −34,724 and one −34,830 for
    17,000 iterations each, and the sub-cluster sampler's chains sat as far apart: "run
    longer" is then the wrong advice.  ``carData::Chile``'s chains, by contrast, overlap
    at one level (means −33,975 to −33,937, each spread over 200 nats) and mix slowly:
    there it is the right one.  Ecdat's ``Griliches`` (758 rows) shows a gap of 17 nats
    is one: after 12,800 iterations each, its four chains held −24,336, −24,336, −24,341 and
    −24,353, none drifting by more than 1.4 nats, the log-likelihood's R-hat 2.03, and
    5 large clusters in some chains against 7 in others.
    """
    levels = conv.get("chain_levels")
    if conv.get("converged") or not levels or conv.get("n_draws", 0) < MODES_MIN_DRAWS:
        return ""
    mean, drift = np.asarray(levels["mean"]), np.asarray(levels["drift"])
    gap = float(mean.max() - mean.min())
    rhat = (conv.get("log_likelihood") or {}).get("rhat")
    if gap < MODES_MIN_GAP or drift.max() > MODES_MAX_DRIFT * gap \
            or rhat is None or not rhat >= RHAT_MAX:
        return ""
    order = np.argsort(-mean)
    text = ", ".join(f"chain {int(c)}: {mean[c]:,.0f}" for c in order)
    return (f"The chains sit at separate levels: their mean log joint densities over the "
            f"kept draws are {text}, while each holds its own (its two halves differ by at "
            f"most {drift.max():,.1f} nats). None reached another's level in this run, so "
            f"they hold partitions the sampler does not cross between, and a longer run "
            f"may not join them. Read the clusters the chains share with care: the point "
            f"estimate pools every chain's draws. More chains (n_chains, CLI --chains) "
            f"show how many such levels there are.")


def advice(conv: dict, *, rankings: bool = False, coarsened: bool = False,
           moves_clusters: bool = False) -> str:
    """One paragraph saying which quantities fail the rule and what to do (``rankings``: the
    exact posterior of a mixture of rankings, for which no sampler with faster moves
    exists; ``coarsened``: a coarsened posterior, :func:`settled_scale`;
    ``moves_clusters``: the run's sampler already splits and merges clusters, so the advice
    is a longer run, not another sampler)."""
    if conv["converged"]:
        return "the chains have converged by the rule"
    parts = []
    for name in conv["failing"]:
        v = conv[name]
        per = max(int(conv["n_chains"]), 1)  # the rule is per chain: so are the figures
        parts.append(f"{quantity_name(name)} (R-hat {v['rhat']:.3f}, bulk ESS "
                     f"{v['ess_bulk'] / per:.0f} and tail ESS {v['ess_tail'] / per:.0f} "
                     f"per chain)")
    todo = ["run more iterations (n_iter; a longer burn_in if the trace still drifts)"]
    if conv["n_chains"] == 1:
        todo.append("run several chains (n_chains=4) so that R-hat compares them")
    if rankings:
        todo.append(f"and expect it to take long: {RANKINGS_MIXING}")
    elif moves_clusters:
        todo[0] = "run longer (max_time, CLI --max-time; or more iterations, n_iter)"
    else:
        todo.append("or use a sampler with split-merge moves (sampler='gibbs+sams' or "
                    "'subcluster')")
    scale = settled_scale(conv, coarsened=coarsened)
    modes = separate_modes(conv)
    if modes:
        return (f"the run has not converged by the rule ({conv['rule']}; "
                f"{conv['n_draws']} kept draws per chain): " + "; ".join(parts) + ". "
                + modes + (" " + scale if scale else ""))
    why = (" The sampler already splits and merges clusters, so what it needs is time."
           if moves_clusters and not rankings else "")
    return (f"the run has not converged by the rule ({conv['rule']}; "
            f"{conv['n_draws']} kept draws per chain): " + "; ".join(parts)
            + ". " + (scale + " Otherwise: " if scale else "To do: ") + ", ".join(todo)
            + "." + why)


__all__ = ["convergence", "first_passing_length", "diagnose", "diagnose_draws", "advice", "settled_scale",
           "separate_modes", "MODES_MIN_GAP", "MODES_MAX_DRIFT", "MODES_MIN_DRAWS",
           "chain_entropy", "judged", "RANKINGS_MIXING", "RHAT_MAX", "ESS_PER_CHAIN", "QUANTITIES",
           "MIN_HELD_DRAWS"]
