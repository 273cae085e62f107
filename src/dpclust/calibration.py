"""Simulation-based calibration of a sampler: does it target the right posterior?

For Dirichlet-process mixtures of any family, mixtures under the other priors on partitions
of :mod:`dpclust.priors` (``prior=``), and the distance dependent CRP mixture
(``candidates=``).

Talts, Betancourt, Simpson, Vehtari & Gelman (2018).  Draw a data set from the model's own
prior (alpha, a partition from the CRP, one parameter per cluster from the family's prior,
the points from the likelihood), run the sampler on it, and record where a statistic of the
truth falls among the same statistic of L posterior draws: its *rank*, 0..L.  If the
sampler draws from the exact posterior, the truth is one more draw from it, so over many
data sets the ranks are uniform on 0..L, whatever the statistic.  A sampler that is biased
(too few clusters, too many, too concentrated) piles the ranks at one end or in the middle.
Ties (the number of clusters takes few values) are broken at random, which keeps the ranks
uniform.  Uniformity is tested with a chi-square test over ``n_bins`` equal bins of ranks.

The draws should be close to independent (``thin`` steps apart), or correct samplers show
a hump of middle ranks; burn-in starts each chain from one cluster.

Statistics (functions of the partition, the parameters and the data):

* ``n_clusters``: the number of clusters;
* ``size_entropy``: the entropy of the cluster sizes;
* ``co_clustering``: the share of a fixed random set of pairs of points that share a
  cluster (the pairs are drawn before the data, so they say nothing about them);
* ``log_likelihood``: ``log p(X | z)`` with the parameters integrated out (families with a
  collapsed form), or ``sum_i log f(x_i; theta_{z_i})`` with the parameters of the state
  (families without, whose samplers instantiate them);
* ``alpha``, when alpha has a Gamma prior;
* each learned hyperparameter of the family (one given a
  :class:`~dpclust.priors.GammaPrior`), by its name: its true value is drawn from its prior
  for each data set, the data from the family at that value, and the chain learns it.

**Missing cells.**  ``observe=`` calibrates a family that leaves missing cells out of the
likelihood (the table families): each data set is drawn complete, then ``observe(X, rng)``
says what the sampler sees of it, e.g. :class:`MissingCompletelyAtRandom` punching holes
with a probability that does not depend on the values.  The posterior of the partition
given the observed cells is then the model's posterior under missing-at-random, so the ranks
stay uniform for a sampler that leaves holes out exactly; statistics of the data
(``log_likelihood``) are of the observed cells.

References
----------
Talts, S., Betancourt, M., Simpson, D., Vehtari, A. & Gelman, A. (2018). Validating Bayesian
    inference algorithms with simulation-based calibration. arXiv:1804.06788.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable
from multiprocessing import get_context

import numpy as np
from scipy import stats as _st

from .utils.checks import check_int, check_random_state
from .diagnostics import chain_entropy
from .samplers.base import MixtureModel
from .priors import DirichletProcess, GammaPrior, get_prior

#: pairs of points whose co-clustering the ``co_clustering`` statistic averages
N_PAIRS = 50


def crp_partition(rng, n_samples: int, alpha: float) -> np.ndarray:
    """A partition of ``n_samples`` points drawn from the Chinese restaurant process
    (:meth:`dpclust.priors.DirichletProcess.sample_partition`)."""
    return DirichletProcess(alpha).sample_partition(rng, n_samples, alpha)


def prior_draw(family, n_samples: int, alpha, rng, candidates=None, prior=None):
    """``(alpha, labels, params, X)`` drawn from the DP mixture prior of ``family`` (whose
    hyperparameters must be fixed: a prior resolved from the data would not be the one that
    generated them); with ``prior`` (a :class:`~dpclust.priors.PartitionPrior`) the
    partition from that prior's restaurant process instead (``alpha`` is then the prior's
    own concentration); or with ``candidates`` (:func:`dpclust.ddcrp.link_candidates`) from
    the distance dependent CRP mixture: links from the ddCRP prior, tables as clusters."""
    if prior is not None and not prior.is_dirichlet_process:
        a = prior.alpha_start
        z = prior.sample_partition(rng, n_samples, a)
        params = family.sample_prior(rng, int(z.max()) + 1)
        return a, z, params, family.sample_data(params, z, rng)
    if isinstance(alpha, GammaPrior):
        a = float(rng.gamma(alpha.shape, 1.0 / alpha.rate))
    else:
        a = float(alpha)
    if candidates is None:
        z = crp_partition(rng, n_samples, a)
    else:
        from .ddcrp.prior import draw_links, links_to_labels

        z = links_to_labels(draw_links(candidates, a, rng))
    params = family.sample_prior(rng, int(z.max()) + 1)
    X = family.sample_data(params, z, rng)
    return a, z, params, X


@dataclass(frozen=True)
class MissingCompletelyAtRandom:
    """Holes punched in a table at random, whatever its values (missing completely at
    random, MCAR): each cell of the chosen blocks is missing with probability ``share``,
    independently; a row left with no observed cell gets one back, drawn at random among
    its cells of those blocks (the rule looks at the holes only, never at the values, so
    the holes stay ignorable).

    Parameters
    ----------
    share : float, default=0.2
        Probability that a cell is missing.
    blocks : tuple of str, default=("real", "code", "count")
        Which arrays of a :class:`~dpclust.tables.TableData` get holes (``("code",
        "count")``: complete real columns, as the full-covariance table family needs).

    Call it as ``observe(X, rng)`` on a :class:`~dpclust.tables.TableData` without holes or
    a float array of shape (n_samples, n_features) (NaN holes); it returns a copy with holes.
    """

    share: float = 0.2
    blocks: tuple = ("real", "code", "count")

    def __post_init__(self):
        if not 0.0 <= float(self.share) < 1.0:
            raise ValueError(f"share must be in [0, 1), got {self.share}")
        unknown = set(self.blocks) - {"real", "code", "count"}
        if unknown:
            raise ValueError(f"blocks are 'real', 'code' and 'count', got {sorted(unknown)}")

    def mask(self, widths, n_samples: int, rng) -> np.ndarray:
        """Whether each cell is missing, shape (n_samples, sum(widths)), no row all
        missing (a row of width 0 has nothing to keep)."""
        d = int(sum(widths))
        hole = rng.random((n_samples, d)) < self.share
        full = np.flatnonzero(hole.all(axis=1)) if d else np.zeros(0, np.intp)
        hole[full, rng.integers(d, size=len(full))] = False
        return hole

    def __call__(self, X, rng):
        if isinstance(X, np.ndarray):
            hole = self.mask([X.shape[1]], len(X), rng)
            return np.where(hole, np.nan, X.astype(np.float64))
        from .tables import TableData

        if not isinstance(X, TableData):
            raise TypeError(f"MissingCompletelyAtRandom takes a TableData or a float array, "
                            f"not {type(X).__name__}")
        arrays = {"real": X.real, "code": X.code, "count": X.count}
        chosen = [b for b in ("real", "code", "count") if b in self.blocks]
        hole = self.mask([arrays[b].shape[1] for b in chosen], len(X), rng)
        out, start = dict(arrays), 0
        for b in chosen:
            a = arrays[b]
            h = hole[:, start:start + a.shape[1]]
            start += a.shape[1]
            out[b] = np.where(h, -1, a) if b == "code" else np.where(h, np.nan, a)
        return TableData(out["real"], out["code"].astype(np.int64), out["count"], X.weight,
                         X.schema)


def _statistics(model, labels, params, alpha, pairs, collapsible: bool) -> dict:
    z = np.asarray(labels, dtype=np.int64)
    out = {"n_clusters": float(len(np.unique(z))),
           "size_entropy": chain_entropy(np.bincount(z)),
           "co_clustering": float(np.mean(z[pairs[:, 0]] == z[pairs[:, 1]]))}
    if collapsible:
        _, z_canon = np.unique(z, return_inverse=True)
        out["log_likelihood"] = float(model.log_likelihood(z_canon))
    else:
        ll = model.family.log_likelihood(model.X, params)  # (n, K)
        out["log_likelihood"] = float(ll[np.arange(len(z)), z].sum())
    out["alpha"] = float(alpha)
    return out


def _replicate(args) -> dict:
    """One data set: the truth's statistics and their ranks among the posterior draws."""
    (family, sampler, n_samples, alpha, n_draws, thin, burn_in, seed, candidates,
     partition_prior, observe) = args
    rng = np.random.default_rng(seed)
    # the learned hyperparameters (the family's, then the partition prior's) drawn from
    # their hyperpriors, and the data from the model at those values
    fam_learned = family.hyperpriors()
    prior_learned = {} if partition_prior is None else partition_prior.hyperpriors()
    learned = {**fam_learned, **prior_learned}
    truth_hyper = {name: hp.sample(rng) for name, hp in learned.items()}
    generator = family.at({k: truth_hyper[k] for k in fam_learned}) if fam_learned else family
    gen_prior = (partition_prior.at({k: truth_hyper[k] for k in prior_learned})
                 if prior_learned else partition_prior)
    a, z, params, X = prior_draw(generator, n_samples, alpha, rng, candidates, gen_prior)
    if observe is not None:
        X = observe(X, rng)
    prior = alpha if isinstance(alpha, GammaPrior) and partition_prior is None else None
    if candidates is None:
        model = MixtureModel(family, family.validate(X), prior, prior=partition_prior)
    else:
        from .ddcrp.sampler import DDCRPModel

        model = DDCRPModel(family, family.validate(X), prior, candidates=candidates)
    collapsible = getattr(family, "collapsible", True)
    pairs = rng.choice(n_samples, size=(N_PAIRS, 2))
    truth = _statistics(model.at(tuple(truth_hyper.values())), z, params, a, pairs,
                        collapsible)
    truth.update(truth_hyper)
    state = sampler.init(rng, model, n_clusters=1, alpha=a)
    hyper = model.hyper_start
    for _ in range(burn_in):
        state, _, hyper = model.step(sampler, rng, state, hyper)
    draws = []
    for _ in range(n_draws):
        for _ in range(thin):
            state, _, hyper = model.step(sampler, rng, state, hyper)
        draws.append({**_statistics(model.at(hyper), state.labels,
                                    getattr(state, "params", None), state.alpha, pairs,
                                    collapsible),
                      **dict(zip(learned, hyper))})
    ranks = {}
    for name, t in truth.items():
        if name == "alpha" and prior is None:
            continue
        s = np.array([d[name] for d in draws])
        below, ties = int((s < t).sum()), int((s == t).sum())
        ranks[name] = below + int(rng.integers(ties + 1))  # ties broken at random
    return ranks


@dataclass
class SBCResult:
    """The ranks of a calibration run and their uniformity test.

    Attributes
    ----------
    ranks : dict of str to ndarray of shape (n_replicates,)
        The truth's rank among ``n_draws`` posterior draws, 0..n_draws, per statistic.
    n_draws : int
    n_bins : int
    p_values : dict of str to float
        Chi-square test of uniform ranks over ``n_bins`` equal bins, per statistic.
    """

    ranks: dict
    n_draws: int
    n_bins: int
    p_values: dict = field(default_factory=dict)

    def histogram(self, name: str) -> np.ndarray:
        """Counts of the ranks of ``name`` in ``n_bins`` equal bins of 0..n_draws."""
        edges = np.linspace(0, self.n_draws + 1, self.n_bins + 1)
        return np.histogram(self.ranks[name], bins=edges)[0]

    def calibrated(self, level: float = 0.001) -> bool:
        """Whether every statistic's p-value is above ``level``."""
        return all(p > level for p in self.p_values.values())

    def plot(self, path, title: str = "") -> None:
        """Rank histograms, one panel per statistic, with the band that holds 99 % of the
        bins of a calibrated sampler (binomial quantiles)."""
        from .utils.plotting import import_matplotlib, new_figure, save_figure, style_axes

        mpl = import_matplotlib()
        names = list(self.ranks)
        fig = new_figure(mpl, (3.0 * len(names), 2.8))
        axes = np.atleast_1d(fig.subplots(1, len(names)))
        n = len(next(iter(self.ranks.values())))
        lo, hi = _st.binom.ppf([0.005, 0.995], n, 1.0 / self.n_bins)
        for ax, name in zip(axes, names):
            style_axes(ax)
            counts = self.histogram(name)
            ax.axhspan(lo, hi, color="#e6e6e6", zorder=0)
            ax.bar(np.arange(self.n_bins), counts, width=0.9, color="#1f4e79")
            ax.set_title(f"{name}\np = {self.p_values[name]:.3g}", fontsize=9)
            ax.set_xticks([])
        axes[0].set_ylabel("replicates")
        if title:
            fig.suptitle(title, fontweight="bold")
        save_figure(fig, path)


def simulation_based_calibration(family, sampler, *, n_samples: int = 100, alpha=1.0,
                                 n_replicates: int = 200, n_draws: int = 99, thin: int = 5,
                                 burn_in: int = 100, n_bins: int = 10, random_state=None,
                                 n_jobs=None, candidates=None, prior=None,
                                 observe: Callable | None = None) -> SBCResult:
    """Simulation-based calibration of ``sampler`` for mixtures of ``family`` (under the
    Dirichlet process, another partition prior, or the distance dependent CRP).

    Parameters
    ----------
    family : ConjugateFamily
        With fixed hyperparameters (``NormalInverseWishart(mean=..., kappa=..., dof=...,
        scale=...)``, ``DirichletMultinomial(concentration=..., n_words=...)``, ...): the
        data are drawn from its prior.
    sampler : a sampler object (``init`` + ``step``), e.g. ``CollapsedGibbs()``.
    n_samples : int, default=100
        Points per data set.
    alpha : float or GammaPrior, default=1.0
        The concentration, or its prior (then alpha is drawn per data set, resampled by the
        chain, and ranked too).
    n_replicates : int, default=200
        Data sets.
    n_draws, thin, burn_in : int
        Posterior draws per data set (ranks 0..n_draws), steps between them, and steps
        before the first (from one cluster).
    n_bins : int, default=10
        Bins of the chi-square test; ``n_draws + 1`` should be a multiple of it.
    random_state : int, Generator or None
        Each data set gets a stream spawned from it: the same seed, the same ranks, whatever
        ``n_jobs`` is.
    n_jobs : int or None
        Processes (None: this one; -1: every core).
    candidates : LinkCandidates, optional
        Calibrate a sampler of the distance dependent CRP mixture instead
        (:func:`dpclust.ddcrp.link_candidates` for ``n_samples`` customers, e.g. a window
        decay over positions ``0 .. n - 1``, with :class:`~dpclust.ddcrp.DDCRPGibbs`): the
        partitions are the tables of links drawn from the ddCRP prior.
    prior : PartitionPrior or str, optional
        Calibrate under another prior on partitions (:mod:`dpclust.priors`, e.g.
        ``PitmanYor(0.25, 1)`` or ``"mfm:1,poisson:1"``): partitions are drawn from its
        restaurant process and the sampler targets it (``alpha`` is then unused).
    observe : callable, optional
        What the sampler sees of each data set: ``observe(X, rng)`` returns ``X`` with
        holes, e.g. :class:`MissingCompletelyAtRandom` ``(0.2)``; the truth's statistics and
        the draws' are on what it returns.  It must pickle when ``n_jobs`` asks for
        processes (a module-level class, not a lambda).

    Returns
    -------
    SBCResult
    """
    n_samples = check_int(n_samples, "n_samples", 2)
    n_replicates = check_int(n_replicates, "n_replicates", 1)
    n_draws = check_int(n_draws, "n_draws", 1)
    thin = check_int(thin, "thin", 1)
    burn_in = check_int(burn_in, "burn_in", 0)
    n_bins = check_int(n_bins, "n_bins", 2)
    if n_bins > n_draws + 1:
        raise ValueError(f"n_bins ({n_bins}) must be at most n_draws + 1 ({n_draws + 1})")
    rng = check_random_state(random_state)
    seeds = [int(s.generate_state(1, dtype=np.uint64)[0])
             for s in rng.bit_generator.seed_seq.spawn(n_replicates)]
    if candidates is not None and candidates.n != n_samples:
        raise ValueError(f"the candidates describe {candidates.n} customers, not "
                         f"n_samples = {n_samples}")
    partition_prior = None if prior is None else get_prior(prior)
    if partition_prior is not None and candidates is not None:
        raise ValueError("candidates= calibrates the ddCRP, whose prior is its own: "
                         "leave prior= unset")
    jobs = [(family, sampler, n_samples, alpha, n_draws, thin, burn_in, s, candidates,
             partition_prior, observe) for s in seeds]
    if n_jobs in (None, 1):
        results = [_replicate(j) for j in jobs]
    else:
        from .chains.processes import available_cores

        workers = available_cores() if n_jobs == -1 else check_int(n_jobs, "n_jobs", 1)
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            chunk = max(1, len(jobs) // (4 * workers))
            results = list(pool.map(_replicate, jobs, chunksize=chunk))
    ranks = {name: np.array([r[name] for r in results]) for name in results[0]}
    out = SBCResult(ranks, n_draws, n_bins)
    expected = np.full(n_bins, n_replicates / n_bins)
    for name in ranks:
        out.p_values[name] = float(_st.chisquare(out.histogram(name), expected).pvalue)
    return out


__all__ = ["simulation_based_calibration", "SBCResult", "prior_draw", "crp_partition",
           "MissingCompletelyAtRandom"]
