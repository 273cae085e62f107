"""The customer-assignment Gibbs sampler of ddCRP mixtures (Blei & Frazier 2010, 3.2).

The chain's state is the link of every customer; tables (the partition) follow from the
links.  One step is one sweep over the customers in index order, each link drawn from

    p(c_i = j | c_-i, X) ∝ alpha                                          if j = i
                         ∝ f(d_ij)                                         if j is at i's table
                         ∝ f(d_ij) f(X_A ∪ X_T) / (f(X_A) f(X_T))          if j is at table T

where A is the part of i's table that stays with i once i's link is removed (Mathematics
§4).  The numba sweep is in :mod:`dpclust.kernels.ddcrp`.

References
----------
Blei, D. M. & Frazier, P. I. (2010). Distance dependent Chinese restaurant processes. ICML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels import gibbs as _sk
from ..samplers.base import MixtureModel, StepInfo, relabel
from ..samplers.crp import GammaPrior
from .distances import EXPLICIT, LinkCandidates
from .prior import draw_links, links_to_labels


@dataclass(frozen=True, eq=False)
class DDCRPModel(MixtureModel):
    """The target: a ddCRP mixture of ``family`` components for the data ``X``.

    Parameters
    ----------
    family : ConjugateFamily
        A resolved family.
    X : data in the family's working form.
    alpha_prior : GammaPrior or None
        Prior on alpha (resampled by Metropolis-Hastings), or None for a fixed alpha.
    candidates : LinkCandidates
        Who may link to whom (:func:`dpclust.ddcrp.link_candidates`).
    """

    candidates: LinkCandidates | None = None
    #: identical rows at different places are not exchangeable under a ddCRP: none is
    #: kept together
    estimate_groups = None

    def __post_init__(self):
        if self.candidates is None:
            raise ValueError("DDCRPModel needs the link candidates")
        if self.candidates.n != self.n_samples:
            raise ValueError(f"the distances describe {self.candidates.n} customers but the "
                             f"data have {self.n_samples} points")

    @cached_property
    def kernel(self):
        kern = self.family.kernel(self.X)
        if kern.log_join_gain is None:
            raise TypeError(f"{type(self.family).__name__} has no log_join_gain kernel: the "
                            "ddCRP sampler joins whole tables and needs it (see FamilyKernel)")
        return kern

    def log_joint_links(self, links, alpha: float) -> float:
        """``log p(c | D, alpha) + sum_tables log f(X_table)``: the ddCRP log joint."""
        return (self.candidates.log_prior(links, alpha)
                + self.log_likelihood(links_to_labels(links)))


class DDCRPState(NamedTuple):
    """The links (the chain's state), the tables they make, alpha, and a cache.

    ``labels`` are the tables numbered by first appearance.  ``cache`` holds the working
    arrays of the sweep (table slots with their statistics, reverse-link lists) and the
    number of sweeps since they were rebuilt from the links; it may be dropped (None).
    """

    labels: np.ndarray
    alpha: float
    links: np.ndarray
    cache: tuple | None = None


_STARTS = ("prior", "singletons")


@njit(cache=True, _nrt=False)
def _children(links, ch_head, ch_next, ch_prev):
    """Reverse-link lists: ``ch_head[j]`` is a customer linking to j, ``ch_next`` the next."""
    for j in range(links.shape[0]):
        ch_head[j] = -1
        ch_next[j] = -1
        ch_prev[j] = -1
    for i in range(links.shape[0] - 1, -1, -1):
        j = links[i]
        if j != i:
            h = ch_head[j]
            ch_next[i] = h
            if h >= 0:
                ch_prev[h] = i
            ch_head[j] = i


def _dispatch_sweep(kern):
    from ..kernels import ddcrp as _dk
    from ..kernels.entry_points import entry_point

    return entry_point(kern, "ddcrp_sweep", _dk.ddcrp_sweep,
                       (kern.reset, kern.add, kern.remove, kern.log_predictive,
                        kern.log_join_gain))


@dataclass(frozen=True)
class DDCRPGibbs:
    """Customer-assignment Gibbs sampler for ddCRP mixtures (Blei & Frazier 2010, 3.2).

    Parameters
    ----------
    start : {"prior", "singletons"}, default="prior"
        Starting links: a draw from the ddCRP prior, or every customer alone at its table
        (the start of the paper's Figure 5).
    rebuild_every : int, default=20
        Rebuild the tables' statistics from the links every this many sweeps, so that the
        rounding of rank-one updates never accumulates.
    alpha_steps : int, default=5
        Metropolis-Hastings steps on log alpha per sweep when alpha has a prior.

    Notes
    -----
    A sweep visits the customers in index order (a systematic-scan Gibbs sampler).  Each
    customer costs O(candidates + candidate tables) plus the customers that move with it;
    see :mod:`dpclust.kernels.ddcrp`.
    """

    start: str = "prior"
    rebuild_every: int = 20
    alpha_steps: int = 5
    name = "ddcrp"

    def __post_init__(self):
        if self.start not in _STARTS:
            raise ValueError(f"start must be one of {_STARTS}, got {self.start!r}")

    def init(self, rng, model: DDCRPModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0, links=None) -> DDCRPState:
        """Starting state: the given ``links``, else as ``start`` says (``labels`` and
        ``n_clusters`` are accepted for the common sampler interface and ignored)."""
        n = model.n_samples
        if links is not None:
            links = np.asarray(links, dtype=np.int64)
            if links.shape != (n,):
                raise ValueError(f"links have shape {links.shape}, expected ({n},)")
            if not np.isfinite(model.candidates.log_prior(links, float(alpha))):
                raise ValueError("the starting links include a link the distances forbid")
        elif self.start == "singletons":
            links = np.arange(n, dtype=np.int64)
        else:
            links = draw_links(model.candidates, float(alpha), rng)
        return DDCRPState(links_to_labels(links), float(alpha), links.copy())

    # ------------------------------------------------------------- the cache
    def _build(self, model: DDCRPModel, links):
        kern = model.kernel
        n = model.n_samples
        comp = links_to_labels(links)
        k = int(comp.max()) + 1 if n else 0
        cap = max(16, 2 * k + 2)
        kstats = kern.alloc(cap)
        counts = np.zeros(cap, dtype=np.int64)
        rebuild, fns = _sk.dispatch(kern, "rebuild_stats")
        rebuild(kern.data, kstats, kern.hyper, comp, counts, *fns)
        ch = np.empty((3, n), dtype=np.int64)
        _children(links, ch[0], ch[1], ch[2])
        live = np.zeros(cap, dtype=np.int64)
        live[:k] = np.arange(k)
        live_pos = np.zeros(cap, dtype=np.int64)
        live_pos[:k] = np.arange(k)
        free = np.zeros(cap, dtype=np.int64)
        free[:cap - k] = np.arange(cap - 1, k - 1, -1)
        counters = np.array([k, cap - k, 0], dtype=np.int64)
        return [kstats, comp.astype(np.int64), ch, counts, live, live_pos, free, counters, 0]

    @staticmethod
    def _grow(kern, cache):
        kstats, table, ch, sizes, live, live_pos, free, counters, age = cache
        cap = len(sizes)
        new_cap = 2 * cap
        new = kern.alloc(new_cap)
        for k in range(cap, new_cap):
            kern.reset(new, k, kern.hyper)
        for a, b in zip(new, kstats):
            a[:cap] = b
        pad = np.zeros(new_cap - cap, dtype=np.int64)
        free = np.concatenate([free, pad])
        n_free = counters[1]
        free[n_free:n_free + (new_cap - cap)] = np.arange(new_cap - 1, cap - 1, -1)
        counters[1] = n_free + (new_cap - cap)
        return [new, table, ch, np.concatenate([sizes, pad]), np.concatenate([live, pad]),
                np.concatenate([live_pos, pad]), free, counters, age]

    # ------------------------------------------------------------------ step
    def step(self, rng, state: DDCRPState, model: DDCRPModel):
        kern = model.kernel
        cands = model.candidates
        n = model.n_samples
        links = np.array(state.links, dtype=np.int64)
        if state.cache is None or state.cache[-1] >= self.rebuild_every:
            cache = self._build(model, links)
        else:
            cache = [a.copy() if isinstance(a, np.ndarray) else
                     (tuple(x.copy() for x in a) if isinstance(a, tuple) else a)
                     for a in state.cache]
        sweep, fns = _dispatch_sweep(kern)
        prior_pred = model.log_prior_predictive
        log_alpha = math.log(state.alpha)
        max_row = int(np.diff(cands.indptr).max()) if cands.mode == EXPLICIT and n else 0
        seed = np.uint64(rng.integers(2**63))
        start = 0
        while True:
            kstats, table, ch, sizes, live, live_pos, free, counters, age = cache
            cap = len(sizes)
            cnt_before = np.zeros(cap, dtype=np.int64)
            if start > 0:  # resumed after growing: recount the customers before `start`
                np.add.at(cnt_before, table[:start], 1)
            width = max(max_row, cap) + 1
            start = sweep(kern.data, kstats, kern.hyper, links, table, ch[0], ch[1], ch[2],
                          sizes, live, live_pos, free, counters, cnt_before, cands.mode,
                          cands.indptr, cands.indices, cands.log_f, prior_pred, log_alpha,
                          start, seed, np.empty(n, dtype=np.int64),
                          np.zeros(n, dtype=np.int64), np.zeros(cap, dtype=np.int64),
                          np.zeros(cap), np.empty(width), np.empty(width, dtype=np.int64),
                          *fns)
            if start >= n:
                break
            cache = self._grow(kern, cache)
            seed = np.uint64(rng.integers(2**63))
        kstats, table, ch, sizes, live, live_pos, free, counters, age = cache
        n_live = int(counters[0])
        sum_log_marginals, fns = _sk.dispatch(kern, "sum_log_marginals")
        log_lik = float(sum_log_marginals(kstats, kern.hyper, live, n_live, *fns))
        alpha = update_alpha(rng, state.alpha, links, cands, model.alpha_prior,
                             self.alpha_steps)
        labels = relabel(table)[0]
        log_joint = cands.log_prior(links, alpha) + log_lik
        cache[-1] = age + 1
        return (DDCRPState(labels, alpha, links, tuple(cache)),
                StepInfo(log_joint, n_live, alpha, log_likelihood=log_lik))


def update_alpha(rng, alpha, links, cands: LinkCandidates, prior: GammaPrior | None,
                 n_steps: int) -> float:
    """Random-walk Metropolis-Hastings on log alpha given the links: the links' prior is
    ``alpha^(self links) / prod_i (alpha + sum_j f(d_ij))``; alpha as it is without a prior."""
    if prior is None:
        return alpha
    n_self = int(np.sum(links == np.arange(len(links))))

    def log_target(a):
        return prior.log_pdf(a) + n_self * math.log(a) - float(
            np.log(a + cands.total).sum()) + math.log(a)  # + log-Jacobian

    cur = log_target(alpha)
    for _ in range(n_steps):
        prop = alpha * math.exp(0.5 * rng.standard_normal())
        new = log_target(prop)
        if math.log(rng.random()) < new - cur:
            alpha, cur = prop, new
    return float(alpha)
