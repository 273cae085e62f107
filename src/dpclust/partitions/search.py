"""The point estimate of a partition: a search for the least posterior expected loss.

The Bayes estimate under a loss ``L`` is ``argmin_c (1/S) sum_s L(c, z_s)`` over *all*
partitions ``c``, not only over the sampled ``z_s``.  This module searches that space in the
manner of SALSO (Dahl, Johnson & Muller 2022):

1. **Sequential allocation.**  The points, in a random order, are put one at a time in the
   existing cluster, or a new one, that gives the partition of the points placed so far the
   least expected loss (the loss of the partial partition against the draws restricted to
   the same points).
2. **Sweetening.**  Sweeps over the points in random order move each point to the cluster,
   or a new one, that lowers the expected loss most, until a sweep moves none.
3. **Zealous updates.**  A whole cluster is destroyed and its points re-allocated one at a
   time, then sweetened; the change is kept only when the expected loss falls.

Several runs from random orders, and runs started from the best sampled partitions, go on
threads under a time budget, and the best answer is returned.  Every step only lowers the
expected loss, so the estimate is never worse than the best draw it started from.
Points that must share a cluster (the copies of a repeated row) can be moved as groups
(:mod:`dpclust.partitions.grouped`).

Each move is scored from the contingency tables of the estimate with every draw, kept up to
date as points move: moving point ``i`` to cluster ``j`` changes one cell of each draw's
table, so scoring every cluster for one point costs ``O(n_draws * K)``, a sweep
``O(n_samples * n_draws * K)``, and nothing of size ``n_samples x n_samples`` is built.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from .draws import (
    _as_draws,
    _canonical_2d,
    _check_n_jobs,
    _evenly_spaced,
    _unique_rows,
    first_minimum,
)
from . import grouped
from .grouped import _options, _sums_loss, as_groups, group_entries, group_labels
from .losses import _BINDER, _VI, Loss, _expected_loss_unique, as_loss, loss_value

__all__ = ["point_estimate", "best_draw"]

#: the largest contingency-table store of one run, in bytes
_MAX_TABLE_BYTES = 2 * 1024**3
#: the cost, in table cells, of scoring candidate draws to start runs from, and the most
#: draws they are scored against
_START_BUDGET = 5e8
_START_DRAWS = 64


# ---------------------------------------------------------------------------------------
# numba kernels: one run's state is the estimate's labels (-1: not yet placed), its cluster
# sizes, the counts ``counts[r, j]`` of points in draw cluster ``r`` (a row per cluster of
# every draw) and estimate cluster ``j``, the draw clusters' sizes among placed points, and
# the three sums of each draw's table (``tot`` = [S_c, number of placed points]).
# ---------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _add(i, j, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Place point ``i`` in cluster ``j``."""
    for s in range(zr.shape[1]):
        r = zr[i, s]
        c = counts[r, j]
        s_cz[s] += f[c + 1] - f[c]
        counts[r, j] = c + 1
        b = bsize[r]
        s_z[s] += f[b + 1] - f[b]
        bsize[r] = b + 1
    m = sizes[j]
    tot[0] += f[m + 1] - f[m]
    tot[1] += 1.0
    sizes[j] = m + 1
    labels[i] = j


@njit(cache=True, nogil=True)
def _remove(i, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Take point ``i`` out of its cluster; returns the cluster."""
    j = labels[i]
    for s in range(zr.shape[1]):
        r = zr[i, s]
        c = counts[r, j]
        s_cz[s] += f[c - 1] - f[c]
        counts[r, j] = c - 1
        b = bsize[r]
        s_z[s] += f[b - 1] - f[b]
        bsize[r] = b - 1
    m = sizes[j]
    tot[0] += f[m - 1] - f[m]
    tot[1] -= 1.0
    sizes[j] = m - 1
    labels[i] = -1
    return j


@njit(cache=True, nogil=True)
def _best_cluster(i, prev, zr, w, f, code, a, sizes, counts, bsize, s_z, s_cz, tot, opts,
                  n_opts, score):
    """The option (an entry of ``opts``) with least expected loss for the unplaced point
    ``i``; ``prev`` (its cluster before, or -1) wins ties, so sweeps never cycle."""
    n_draws = zr.shape[1]
    for t in range(n_opts):
        score[t] = 0.0
    if code == _VI or code == _BINDER:
        # linear in the sums: only S_c and the draws' S_cz differ between the options
        for s in range(n_draws):
            r = zr[i, s]
            ws = w[s]
            for t in range(n_opts):
                c = counts[r, opts[t]]
                score[t] += ws * (f[c + 1] - f[c])
        for t in range(n_opts):
            m = sizes[opts[t]]
            score[t] = (2.0 - a) * (f[m + 1] - f[m]) - 2.0 * score[t]
    else:
        n1 = tot[1] + 1.0
        for s in range(n_draws):
            r = zr[i, s]
            b = bsize[r]
            sz = s_z[s] + f[b + 1] - f[b]
            for t in range(n_opts):
                j = opts[t]
                m = sizes[j]
                c = counts[r, j]
                score[t] += w[s] * loss_value(code, a, n1, tot[0] + f[m + 1] - f[m], sz,
                                              s_cz[s] + f[c + 1] - f[c])
    best = 0
    for t in range(1, n_opts):
        if score[t] < score[best]:
            best = t
    if prev >= 0:
        tol = 1e-11 * (abs(score[best]) + 1.0)
        for t in range(n_opts):
            if opts[t] == prev and score[t] <= score[best] + tol:
                return prev
    return opts[best]


@njit(cache=True, nogil=True)
def _allocate(items, zr, w, f, code, a, labels, sizes, counts, bsize, s_z, s_cz, tot, opts,
              score):
    """Put each point of ``items``, in order, in its best cluster (taking it out of its own
    first, if placed).  Returns the number of points that changed cluster and whether a new
    cluster was wanted but every slot was taken (the caller then grows the store)."""
    moves = 0
    full = False
    for idx in range(items.shape[0]):
        i = items[idx]
        prev = -1
        if labels[i] >= 0:
            prev = _remove(i, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
        n_opts, no_slot = _options(sizes, opts)
        full = full or no_slot
        j = _best_cluster(i, prev, zr, w, f, code, a, sizes, counts, bsize, s_z, s_cz, tot,
                          opts, n_opts, score)
        if j != prev:
            moves += 1
        _add(i, j, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
    return moves, full


@njit(cache=True, nogil=True)
def _place(target, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Place every point in its cluster of ``target`` (an empty state)."""
    for i in range(target.shape[0]):
        _add(i, target[i], zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)


@njit(cache=True, nogil=True)
def _take_out(items, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    for idx in range(items.shape[0]):
        _remove(items[idx], zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)


@njit(cache=True, nogil=True)
def _put_back(items, j, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot):
    """Move the points ``items`` (placed) back into cluster ``j``."""
    for idx in range(items.shape[0]):
        _remove(items[idx], zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)
        _add(items[idx], j, zr, f, labels, sizes, counts, bsize, s_z, s_cz, tot)


# ---------------------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------------------


class _Problem:
    """The draws as a run reads them: ``zr[i, s]``, the row of point ``i``'s cluster in
    draw ``s`` among the rows of all draws' clusters; the draws' weights (summing to 1)."""

    def __init__(self, zd, kd, weights, loss: Loss):
        offsets = np.concatenate([[0], np.cumsum(kd)[:-1]]).astype(np.int64)
        self.n_rows = int(kd.sum())
        self.zr = np.ascontiguousarray((zd + offsets[:, None]).T.astype(np.int32))
        self.w = np.asarray(weights, dtype=np.float64) / float(np.sum(weights))
        self.loss = loss
        self.f = loss.table(zd.shape[1])
        self.max_k = int(kd.max())
        self.n_items = zd.shape[1]  # what a run moves: points

    def run(self, n_slots: int) -> "_Run":
        return _Run(self, n_slots)


class _GroupedProblem(_Problem):
    """The draws as a run over groups reads them (:mod:`.grouped`): each group's entries;
    ``groups`` numbers the points' groups ``0 .. G - 1``."""

    def __init__(self, zd, kd, weights, loss: Loss, groups: np.ndarray):
        super().__init__(zd, kd, weights, loss)
        self.entries = group_entries(self.zr, groups, self.n_rows)
        self.zr = None  # read only through the entries
        self.n_items = int(groups.max()) + 1

    def run(self, n_slots: int) -> "_GroupedRun":
        return _GroupedRun(self, n_slots)


class _Run:
    """The state of one search run (see the kernels' comment)."""

    def __init__(self, problem: _Problem, n_slots: int):
        self.p = problem
        n, n_draws = problem.n_items, problem.w.shape[0]
        self.labels = np.full(n, -1, dtype=np.int64)
        self.counts = np.zeros((problem.n_rows, n_slots), dtype=np.int32)
        self.sizes = np.zeros(n_slots, dtype=np.int64)
        self.bsize = np.zeros(problem.n_rows, dtype=np.int64)
        self.s_z = np.zeros(n_draws)
        self.s_cz = np.zeros(n_draws)
        self.tot = np.zeros(2)

    def _arrays(self):
        return (self.labels, self.sizes, self.counts, self.bsize, self.s_z, self.s_cz,
                self.tot)

    def allocate(self, items):
        p = self.p
        n_slots = self.sizes.size
        return _allocate(items, p.zr, p.w, p.f, p.loss.code, p.loss.a, *self._arrays(),
                         np.empty(n_slots + 1, dtype=np.int64), np.empty(n_slots + 1))

    def loss(self) -> float:
        p = self.p
        return float(_sums_loss(p.loss.code, p.loss.a, p.w, self.s_z, self.s_cz, self.tot))

    def place(self, target):
        """Reset the state to the partition ``target``."""
        k = int(target.max()) + 1
        if k > self.sizes.size:
            self.grow(k)
        for array in self._arrays():
            array[...] = 0
        self.labels[:] = -1
        self._fill(target)

    def _fill(self, target):
        _place(target, self.p.zr, self.p.f, *self._arrays())

    def take_out(self, items):
        _take_out(items, self.p.zr, self.p.f, *self._arrays())

    def put_back(self, items, j: int):
        _put_back(items, j, self.p.zr, self.p.f, *self._arrays())

    def can_grow(self) -> bool:
        n = self.labels.size
        return (self.sizes.size < n
                and self.p.n_rows * 2 * self.sizes.size * 4 <= _MAX_TABLE_BYTES)

    def grow(self, at_least: int = 0):
        """Double the number of cluster slots (or more, to ``at_least``)."""
        n_slots = min(max(2 * self.sizes.size, at_least), self.labels.size)
        counts = np.zeros((self.p.n_rows, n_slots), dtype=np.int32)
        counts[:, :self.sizes.size] = self.counts
        self.counts = counts
        self.sizes = np.concatenate([self.sizes, np.zeros(n_slots - self.sizes.size,
                                                          dtype=np.int64)])

    def sweeten(self, rng, deadline: float, max_sweeps: int, items=None) -> None:
        """Sweeps over ``items`` (default: every point) in random orders until one moves
        no point (or time runs out)."""
        items = np.arange(self.labels.size) if items is None else items
        for _ in range(max_sweeps):
            moves, full = self.allocate(rng.permutation(items))
            if full and self.can_grow():
                self.grow()
                continue
            if moves == 0 or time.monotonic() > deadline:
                return


class _GroupedRun(_Run):
    """The state of one search run over groups: ``labels`` has one entry per group."""

    def allocate(self, items):
        p = self.p
        n_slots = self.sizes.size
        return grouped._allocate(items, p.entries, p.w, p.f, p.loss.code, p.loss.a,
                                 *self._arrays(), np.empty(n_slots + 1, dtype=np.int64),
                                 np.empty(n_slots + 1))

    def _fill(self, target):
        grouped._place(target, self.p.entries, self.p.f, *self._arrays())

    def take_out(self, items):
        grouped._take_out(items, self.p.entries, self.p.f, *self._arrays())

    def put_back(self, items, j: int):
        grouped._put_back(items, j, self.p.entries, self.p.f, *self._arrays())


def _one_run(problem: _Problem, start, seed, deadline: float, max_sweeps: int,
             max_zealous: int):
    """One search run from ``start`` (a partition of the items a run moves) or, if None,
    from sequential allocation in a random order; returns its labels and expected loss."""
    rng = np.random.default_rng(seed)
    n = problem.n_items
    n_slots = min(n, max(16, 2 * problem.max_k + 4,
                         0 if start is None else int(start.max()) + 2))
    run = problem.run(n_slots)
    if start is None:  # a store that fills up leaves points in old clusters: sweeps grow it
        run.allocate(rng.permutation(n))
    else:
        run.place(start)
    run.sweeten(rng, deadline, max_sweeps)
    value = run.loss()
    for _ in range(max_zealous):
        if time.monotonic() > deadline:
            break
        active = np.flatnonzero(run.sizes > 0)
        if active.size < 2:
            break
        # destroy a cluster, re-allocate its points and sweeten them alone: a rejected
        # attempt costs O(its points), an accepted one is followed by full sweeps
        doomed = active[rng.integers(active.size)]
        items = rng.permutation(np.flatnonzero(run.labels == doomed))
        run.take_out(items)
        run.allocate(items)
        run.sweeten(rng, deadline, max_sweeps, items)
        new = run.loss()
        if new < value - 1e-12 * (abs(value) + 1.0):
            run.sweeten(rng, deadline, max_sweeps)
            value = run.loss()
        else:
            run.put_back(items, doomed)
    return run.labels.copy(), value


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


def best_draw(draws, loss="vi", max_candidates: int | None = None,
              max_draws: int | None = None, *, a: float | None = None,
              n_jobs: int | None = None) -> tuple[np.ndarray, float]:
    """The sampled partition with least posterior expected loss (Dahl 2006).

    Only partitions the chain visited are candidates, so this is an upper bound on what
    :func:`point_estimate` finds; it is what ``point_estimate(..., method="draws")``
    returns.  Parameters and returns as in :func:`point_estimate`; ties go to the earliest
    draw.

    Notes
    -----
    Cost ``O(U_c * U_d * n_samples)``, with ``U_c`` and ``U_d`` the numbers of distinct
    candidate and draw partitions.
    """
    loss = as_loss(loss, a)
    n_jobs = _check_n_jobs(n_jobs)
    zc, kc, first_c, zd, kd, counts_d = _prepared(draws, max_candidates, max_draws)
    values = _expected_loss_unique(zc[first_c], kc[first_c], zd, kd, counts_d, loss, n_jobs)
    best = first_minimum(values)  # the earliest draw, as first_c is in order
    return zc[first_c[best]].copy(), float(values[best])


def _prepared(draws, max_candidates, max_draws):
    """Canonical candidates (their distinct rows' indices) and distinct weighted draws."""
    draws = _as_draws(draws)
    n_draws = draws.shape[0]
    cand_index = _evenly_spaced(n_draws, max_candidates, "max_candidates")
    draw_index = _evenly_spaced(n_draws, max_draws, "max_draws")
    z, k = _canonical_2d(draws)
    zc, kc = z[cand_index], k[cand_index]
    first_c, _, _ = _unique_rows(zc)
    zd, kd = z[draw_index], k[draw_index]
    first_d, _, counts_d = _unique_rows(zd)
    return zc, kc, first_c, zd[first_d], kd[first_d], counts_d


def point_estimate(
    draws,
    loss="vi",
    max_candidates: int | None = None,
    max_draws: int | None = None,
    random_state=None,
    *,
    a: float | None = None,
    method: str = "search",
    n_runs: int = 16,
    n_starts: int = 3,
    max_zealous: int = 10,
    max_sweeps: int = 50,
    max_time: float | None = 60.0,
    n_jobs: int | None = -1,
    starts=None,
    groups=None,
) -> tuple[np.ndarray, float]:
    """Point estimate of the partition: the partition with least posterior expected loss.

    Searches all partitions, not only the sampled ones, for the least Monte Carlo estimate
    of the posterior expected loss ``(1/S) sum_s L(c, z_s)`` (Dahl, Johnson & Muller 2022):
    sequential allocation of the points in random orders, sweetening sweeps that move single
    points, and zealous updates that destroy and re-allocate whole clusters, over
    ``n_runs`` random runs and runs started from the ``n_starts`` best sampled partitions,
    on threads, under a time budget.  Every step lowers the expected loss, so the estimate
    is never worse than the best draw (``method="draws"``, Dahl 2006) unless ``groups``
    keeps points together that a draw splits.

    Parameters
    ----------
    draws : array-like of shape (n_draws, n_samples)
        Posterior draws of the partition, one per row.
    loss : {"vi", "binder", "omari", "nvi", "nid"} or Loss, default="vi"
        The loss (:mod:`dpclust.partitions.losses`); ``"vi(a=1.5)"`` carries a weight.
    max_candidates : int or None, default=None
        The sampled partitions considered as starts (``method="search"``) or answers
        (``method="draws"``), at most this many, spread evenly over the chain.  ``None``:
        all for ``"draws"``; for ``"search"`` as many as scoring them against at most 64
        of the draws within about 5·10⁸ table cells allows.
    max_draws : int or None, default=None
        Estimate the expected loss from at most this many draws, spread evenly over the
        chain.  ``None`` uses every draw.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the runs' random orders.  With the same seed and no time budget reached the
        answer is the same whatever ``n_jobs``.
    a : float in [0, 2] or None, default=None
        The weight of ``vi`` and ``binder`` (:class:`~dpclust.partitions.Loss`): ``a > 1``
        favours fewer clusters.
    method : {"search", "draws"}, default="search"
        ``"draws"`` returns the best sampled partition (:func:`best_draw`).
    n_runs : int, default=16
        Runs from sequential allocation in random orders.
    n_starts : int, default=3
        Runs started from the best distinct sampled partitions.
    max_zealous : int, default=10
        Zealous updates tried per run.
    max_sweeps : int, default=50
        Sweetening sweeps per run and update, at most.
    max_time : float or None, default=60.0
        Seconds for the search; runs not started by then are skipped and a run stops where
        it is (the runs from the best draws go first).  ``None``: no limit.
    n_jobs : int or None, default=-1
        Threads for the runs: ``-1`` every available CPU, ``None`` one.
    starts : array-like of shape (n, n_samples) or None, default=None
        More partitions to start runs from (a previous estimate, a k-means partition),
        before the others.
    groups : array-like of shape (n_samples,) of int, or None, default=None
        Points that must share a cluster (the copies of a row that a whole-number weight
        repeats): the search moves each group whole (:mod:`dpclust.partitions.grouped`),
        from each start's cluster holding most of the group.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype int64
        The estimate, in canonical labels (:func:`~dpclust.partitions.canonical_labels`).
    expected_loss_value : float
        Its estimated posterior expected loss (as :func:`~dpclust.partitions.expected_loss`
        gives it).

    Raises
    ------
    ValueError
        If ``draws`` is not a non-empty 2-D array, or an argument is invalid.

    Notes
    -----
    A sweep costs ``O(n_samples * U_d * K)`` for ``U_d`` distinct draws and ``K`` clusters,
    with ``O(n_samples * U_d)`` memory for the draws and ``O(K * sum_s K_s)`` for the
    contingency tables; no ``n_samples x n_samples`` matrix is built.

    References
    ----------
    Dahl, D. B. (2006). Model-based clustering for expression data via a Dirichlet process
    mixture model. In *Bayesian Inference for Gene Expression and Proteomics*, 201-218.
    Dahl, D. B., Johnson, D. J. and Muller, P. (2022). Search algorithms and loss functions
    for Bayesian clustering. *Journal of Computational and Graphical Statistics* 31(4),
    1189-1201.
    Wade, S. and Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and
    credible balls. *Bayesian Analysis* 13(2), 559-626.
    """
    loss = as_loss(loss, a)
    if method == "draws" and groups is None:
        return best_draw(draws, loss, max_candidates, max_draws, n_jobs=n_jobs)
    _check_search(method, n_runs, n_starts, max_zealous, max_sweeps, max_time, starts)
    n_jobs = _check_n_jobs(n_jobs)
    deadline = time.monotonic() + (np.inf if max_time is None else float(max_time))
    zc, kc, first_c, zd, kd, counts_d = _prepared(draws, max_candidates, max_draws)
    n = zd.shape[1]
    groups = None if groups is None else as_groups(groups, n)
    if (zd.shape[0] == 1 or n == 1) and groups is None:  # one partition: the answer
        return zd[0].copy(), 0.0
    starts = _given_starts(starts, n) + _best_starts(
        zc[first_c], kc[first_c], zd, kd, counts_d, loss, n_starts, max_candidates, n_jobs)
    problem, starts = _problem(zd, kd, counts_d, loss, groups, starts)
    best = _runs(problem, starts, n_runs, random_state, deadline, max_sweeps, max_zealous,
                 n_jobs)
    z, k = _canonical_2d((best if groups is None else best[groups])[None, :])
    value = _expected_loss_unique(z, k, zd, kd, counts_d, loss)[0]
    return z[0], float(value)


def _problem(zd, kd, weights, loss, groups, starts):
    """The problem the runs read (over points, or over ``groups`` when given) and the
    ``starts`` as its partitions (of the groups: each start's cluster holding most of a
    group)."""
    if kd.sum() * 16 * 4 > _MAX_TABLE_BYTES:
        raise ValueError(f"the draws have {kd.sum()} clusters in all, too many to search "
                         "(tables over 2 GiB); pass max_draws to use fewer draws")
    if groups is None:
        return _Problem(zd, kd, weights, loss), starts
    problem = _GroupedProblem(zd, kd, weights, loss, groups)
    return problem, [_canonical_2d(group_labels(s, groups, problem.n_items)[None, :])[0][0]
                     for s in starts]


def _runs(problem, starts, n_runs, random_state, deadline, max_sweeps, max_zealous, n_jobs):
    """The best labels of the runs from ``starts`` and of ``n_runs`` random runs, on
    ``n_jobs`` threads (random runs not begun by ``deadline`` are skipped)."""
    seeds = np.random.SeedSequence(_entropy(random_state)).spawn(len(starts) + n_runs)
    plans = [(s, seed) for s, seed in zip(starts + [None] * n_runs, seeds)]

    def run(plan):
        if time.monotonic() > deadline and plan[0] is None:
            return None
        return _one_run(problem, plan[0], plan[1], deadline, max_sweeps, max_zealous)

    with ThreadPoolExecutor(max_workers=max(1, min(n_jobs, len(plans)))) as pool:
        results = [r for r in pool.map(run, plans) if r is not None]
    values = np.array([v for _, v in results])
    return results[first_minimum(values)][0]


def _check_search(method, n_runs, n_starts, max_zealous, max_sweeps, max_time, starts):
    if method != "search":
        raise ValueError(f"method must be 'search' or 'draws' (without groups), got "
                         f"{method!r}")
    for name, value, low in (("n_runs", n_runs, 0), ("n_starts", n_starts, 0),
                             ("max_zealous", max_zealous, 0), ("max_sweeps", max_sweeps, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if n_runs + n_starts == 0 and starts is None:
        raise ValueError("n_runs and n_starts are both 0: there is no run to make")
    if max_time is not None and not (isinstance(max_time, (int, float)) and max_time > 0):
        raise ValueError(f"max_time must be a positive number of seconds or None, "
                         f"got {max_time!r}")


def _best_starts(zc, kc, zd, kd, counts_d, loss, n_starts, max_candidates, n_jobs):
    """The ``n_starts`` distinct candidates with least expected loss; without
    ``max_candidates``, as many candidates as fit in the scoring budget, evenly spaced."""
    if n_starts == 0:
        return []
    if max_candidates is None:  # scored against at most _START_DRAWS draws, in a budget
        use = _evenly_spaced(zd.shape[0], min(_START_DRAWS, zd.shape[0]), "draws")
        zd, kd, counts_d = zd[use], kd[use], counts_d[use]
        affordable = max(n_starts, int(_START_BUDGET / (zd.shape[0] * zd.shape[1])))
        keep = _evenly_spaced(zc.shape[0], min(affordable, zc.shape[0]), "max_candidates")
        zc, kc = zc[keep], kc[keep]
    values = _expected_loss_unique(zc, kc, zd, kd, counts_d, loss, n_jobs)
    order = np.argsort(values, kind="stable")[:n_starts]
    return [zc[i].copy() for i in order]


def _given_starts(starts, n: int) -> list:
    if starts is None:
        return []
    starts = _as_draws(starts, "starts")
    if starts.shape[1] != n:
        raise ValueError(f"starts partition {starts.shape[1]} points, the draws {n}")
    return list(_canonical_2d(starts)[0])


def _entropy(random_state):
    """An integer seed from ``random_state`` (None, an int or a Generator)."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63))
    if random_state is None:
        return None
    return int(random_state)
