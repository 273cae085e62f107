"""The launches of the sub-cluster sampler's exact split-merge moves, and the moves' proposal
on partitioned data (on a Dask cluster, and in-process with its partition layout, where a
move's points are not in one process and the sequential allocation cannot run).

Every move is anchored by two points, i on side 0 and j on side 1, and its launch is a
function of the move's points, i and j only.  An **EM launch** is seeded at ``x_i`` and
``x_j`` and refined by ``launch_iter`` stochastic EM steps on a Bernoulli subsample of the
move's points (Jain & Neal's intermediate restricted Gibbs scans), then ``launch_passes``
steps over all of them; a **pinch** (or **grow**) launch grows side 1 from ``x_j`` alone
against the whole move.  The proposal then allocates every other point independently, in
``stages`` stages (:func:`staged_proposal`), one launch pass each.

References
----------
Jain, S. & Neal, R. M. (2004, 2007). A split-merge Markov chain Monte Carlo procedure for
    the Dirichlet process mixture model; Splitting and merging components of a nonconjugate
    Dirichlet process mixture model. JCGS; Bayesian Analysis (launch states).
"""

from __future__ import annotations

import math

import numpy as np

from ...families.base import concatenate, take
from .._partitioned import LaunchSpec, chunk_bounds, launch_partition, threads
from .reference import _reference_launch
from .slots import _pair_rows, _stats_of, _with_rows
from .state import LaunchResult

#: the launches that grow side 1 from its anchor alone (a merge grows the smaller cluster)
_ONE_SIDED = ("pinch", "grow")

#: rows per chunk of a launch subsample's passes (a few chunks: both cores, little overhead)
SUBSAMPLE_CHUNK = 1024


def launch_components(cfg, rng, model, data, labels, stats, moves, kind, ready, block_of,
                      side_of, pins, size, rows, sub_labels):
    """The launch of every ready move: ``(params, log_w, seeds)``, the two components of
    each move (rows ``2b``, ``2b + 1``) with their log weights, and the statistics of the
    anchors that seed them.  ``kind``: each move's launch; ``rows``, ``sub_labels``: the
    launch subsample (:meth:`select` of the data side)."""
    fam = model.family
    K = len(block_of)
    B = len(moves)
    moving = block_of >= 0
    # the anchors' rows seed every launch
    flat = pins[ready].ravel()
    seeds = fam.empty_stats(2 * B)
    if len(flat):
        one = fam.stats(data.rows_of(flat), np.arange(len(flat)), len(flat))
        seeds = _with_rows(seeds, _pair_rows(np.flatnonzero(ready)), one)
    params = fam.point_params(seeds, rng)
    log_w = np.full((B, 2), math.log(0.5))
    # one-sided launches: the whole move against its point j, weighted 1 / N_S
    sided = np.flatnonzero(ready & np.isin(kind, _ONE_SIDED))
    if len(sided):
        whole = concatenate(*(_stats_of(fam, stats, moves[b].members) for b in sided))
        params = _with_rows(params, 2 * sided, fam.point_params(whole, rng))
        log_w[sided, 0] = np.log1p(-1.0 / size[sided])
        log_w[sided, 1] = -np.log(size[sided])

    # EM and grow launches: stochastic EM on the subsample, then on all the move's points
    em = ready & np.isin(kind, ("em", "grow"))
    em_block = np.where(moving & em[np.maximum(block_of, 0)], block_of, -1)
    if em.any():
        params, log_w = launch_on_subsample(cfg, rng, model, rows, sub_labels, em_block,
                                            params, log_w)
        rows2 = _pair_rows(np.flatnonzero(em))
        for _ in range(int(cfg.launch_passes)):
            run = launch_run(rng, model, data, labels, params, log_w, em_block, side_of,
                             pins, 0)
            new_params, new_w = launch_params(rng, fam, run, size, K)
            params = _with_rows(params, rows2, take(new_params, rows2))
            log_w[em] = new_w[em]
    return params, log_w, seeds


def staged_proposal(cfg, rng, model, data, labels, params, log_w, block_of, side_of, pins,
                    seeds, size, pinch):
    """The proposal pass, in ``stages`` stages for the EM moves (see the parameter):
    stage m allocates the points whose stage key lies in its range, with components
    fitted to the anchors and the sides allocated so far; the result adds up the
    stages (``logq`` is the sum of the stages' log probabilities)."""
    fam = model.family
    K = len(block_of)
    B = log_w.shape[0]
    m = float(cfg.launch_size)
    # stage sizes m/32, m/4, then the rest: a merge's first stage, scored under the EM
    # launch, is small, and the later ones are scored under components fitted to the
    # current sides (measured on fragments of one cluster: log q -815 against -1,775
    # with a first stage of m)
    first = max(2.0, m / 32.0)
    cuts = [np.minimum(1.0, first * 8.0 ** a / size) for a in range(cfg.stages - 1)]
    # a pinch allocates everything in the first stage
    edges = [np.zeros(B)] + [np.where(pinch, 2.0, c) for c in cuts] + [np.full(B, 2.0)]
    stage_key = int(rng.integers(2**63))
    total = None
    codes = None
    n_stages = len(edges) - 1
    for a in range(n_stages):
        last = a == n_stages - 1
        stage = np.stack([edges[a], edges[a + 1]], axis=1)
        if not last and not np.any(stage[:, 0] < np.minimum(stage[:, 1], 1.0)):
            continue  # no move has points in this stage
        run = launch_run(rng, model, data, labels, params, log_w, block_of, side_of, pins,
                         2 if last else 1, stages=stage, stage_key=stage_key, codes=codes)
        labels, codes = run.labels, run.codes
        total = run if total is None else _add_stages(fam, total, run, K)
        if not last:
            grown = fam.combine(seeds, total.stats)
            fitted = fam.point_params(grown, rng)
            em = np.flatnonzero(~pinch)
            rows2 = _pair_rows(em)
            params = _with_rows(params, rows2, take(fitted, rows2))
            counts = fam.count(grown).reshape(-1, 2)
            log_w = log_w.copy()
            log_w[em] = (np.log(counts[em] + 1.0)
                         - np.log(counts[em].sum(axis=1, keepdims=True) + 2.0))
    return total


def launch_on_subsample(cfg, rng, model, rows, sub_labels, block_of, params, log_w):
    """``launch_iter`` stochastic EM steps on each EM move's subsample, from the launch
    ``params`` (seeded by the anchors); returns the new ``(params, log_w)``."""
    fam = model.family
    if cfg.launch_iter == 0 or len(sub_labels) == 0:
        return params, log_w
    B = log_w.shape[0]
    blocks = block_of[sub_labels]
    live = np.unique(blocks[blocks >= 0])
    rows2 = _pair_rows(live)
    size = np.bincount(blocks[blocks >= 0], minlength=B).astype(np.float64)
    local = _SubsampleRows(model, rows, cfg.n_threads)
    no_side = np.full(len(block_of), -1, dtype=np.int64)
    no_pins = np.full((B, 2), -1, dtype=np.int64)
    log_w = log_w.copy()
    for _ in range(int(cfg.launch_iter)):
        run = launch_run(rng, model, local, sub_labels, params, log_w, block_of, no_side,
                         no_pins, 0)
        new_params, new_w = launch_params(rng, fam, run, size, len(block_of))
        params = _with_rows(params, rows2, take(new_params, rows2))
        log_w[live] = new_w[live]
    return params, log_w


def launch_params(rng, fam, run, size, K):
    """Launch parameters and weights from the sides' statistics of an EM step."""
    params = fam.point_params(run.stats, rng)
    counts = run.counts[K:].reshape(-1, 2).astype(np.float64)
    log_w = np.log(counts + 1.0) - np.log(size[:, None] + 2.0)
    return params, log_w


def launch_run(rng, model, data, labels, params, log_w, block_of, side_of, pins, mode,
               stages=None, stage_key=0, codes=None):
    """One launch pass of ``mode`` over ``data`` (all the points, or a subsample)."""
    spec = launch_spec(rng, log_w, block_of, side_of, pins, mode, stages, stage_key)
    if data.pass_kernel is None:
        X = data.X if isinstance(data, _SubsampleRows) else model.X
        return _reference_launch(rng, model.family, X, params, spec, labels, codes)
    spec = spec._replace(kparams=data.pack(params))
    labels, codes, part = data.launch_pass(spec, labels, codes)
    return launch_result(data, labels, codes, part)


def launch_spec(rng, log_w, block_of, side_of, pins, mode, stages=None,
                stage_key=0) -> LaunchSpec:
    """The :class:`LaunchSpec` of one launch pass, its parameters not packed yet (draws
    the pass's stream key)."""
    K = len(block_of)
    B = log_w.shape[0]
    return LaunchSpec(None, log_w, block_of, side_of, pins, int(mode),
                      int(rng.integers(2**63)), K + 2 * B, stages, int(stage_key))


def launch_result(data, labels, codes, part) -> LaunchResult:
    """A launch pass's :class:`LaunchResult` from the data side's statistics."""
    return LaunchResult(labels, codes, data.unpack(part.acc), part.cnt, part.first,
                        part.res, part.ll, part.rkey)


def _add_stages(fam, a: LaunchResult, b: LaunchResult, K: int) -> LaunchResult:
    """Two stages of a proposal added up: the sides' statistics, counts, first points,
    members (the smaller key) and ``logq``; the clusters' slots are the later stage's."""
    counts = b.counts.copy()
    counts[K:] += a.counts[K:]
    first = b.first.copy()
    take_a = (a.first[K:] >= 0) & ((b.first[K:] < 0) | (a.first[K:] < b.first[K:]))
    first[K:] = np.where(take_a, a.first[K:], b.first[K:])
    member, key = b.member.copy(), b.member_key.copy()
    smaller = a.member_key[K:] < b.member_key[K:]
    member[K:] = np.where(smaller, a.member[K:], b.member[K:])
    key[K:] = np.where(smaller, a.member_key[K:], b.member_key[K:])
    return LaunchResult(b.labels, b.codes, fam.combine(a.stats, b.stats), counts, first,
                        member, a.logq + b.logq, key)


class _SubsampleRows:
    """The launch subsample as a data side of its own: one partition of ``X``, rows
    numbered from 0, in chunks of :data:`SUBSAMPLE_CHUNK` rows run on ``n_threads`` threads."""

    def __init__(self, model, X, n_threads=None):
        self.X = X
        self.n_threads = n_threads
        self.pass_kernel = (None if model.pass_kernel is None
                            else model.family.pass_kernel(X, model.data_summary))

    def pack(self, params):
        return self.pass_kernel.pack(params)

    def unpack(self, acc):
        return self.pass_kernel.unpack(acc)

    def launch_pass(self, spec, labels, codes=None):
        bounds = chunk_bounds(len(labels), SUBSAMPLE_CHUNK, 2 * spec.n_moves,
                              self.pass_kernel.n_stats)
        with threads(self.n_threads, len(labels)):
            return launch_partition(self.pass_kernel, spec,
                                    np.asarray(labels, dtype=np.int64), 0, bounds, 0, codes)
