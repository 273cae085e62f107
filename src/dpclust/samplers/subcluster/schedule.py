"""What a configuration of the sub-cluster sampler does on a given model: where its data lives,
whether its moves are sequential and its pass collapsed, and how many rounds, groups, pinches
and multi-way moves an iteration makes.  Every choice here depends on the configuration, the
model's size and layout and the random generator only, never on the state (so that the
moves stay a mixture of kernels chosen independently of the state).
"""

from __future__ import annotations

import dataclasses
import math

#: with sequential moves on this many points or more (where one round of moves runs an
#: iteration by default) ...
MANY_POINTS = 100_000
#: ... the number of groups is at most 2 to this power (``n_groups``)
MANY_POINTS_TOP_GROUPS = 3


def data_side(cfg, model):
    """The data side of ``model`` (in-process partitions, or a Dask cluster's)."""
    return model.partitions.configure(cfg.chunk_size, cfg.n_threads)


def _in_one_process(model) -> bool:
    """Whether the model's points are in this process with a collapsed kernel, as the
    sequential moves and the collapsed pass need (not on a Dask cluster, nor in-process with
    its partition layout, whose chain must be the cluster's)."""
    return getattr(model, "partition_rows", ()) is None and model.kernel is not None


def partitioned(model) -> bool:
    """Whether the model's points are in partitions (on a Dask cluster, or in-process with
    its partition layout, whose chain must be the cluster's)."""
    return getattr(model, "partition_rows", ()) is not None


def sequential_here(cfg, model) -> bool:
    """Whether this run's moves may be sequential: in one process, or on partitioned data
    (a move then visits the partitions in turn,
    :mod:`dpclust.samplers._partitioned_moves`)."""
    if cfg.sequential is False or not (partitioned(model) or _in_one_process(model)):
        return False
    if cfg.sequential is None:  # not where the pass is blocked (many dimensions) ...
        pk = model.pass_kernel  # ... unless it is collapsed (small data: its cost model)
        return pk is None or int(pk.block) == 0 or collapsed_here(cfg, model)
    return True


def collapsed_here(cfg, model) -> bool:
    """Whether the data pass is collapsed (``data_pass``): it needs the points in one
    process, like the sequential moves.  By default the family decides from the model's
    size and the rounds of sequential moves that the collapsed pass would bring (``rounds``
    with sequential moves), which it may weigh against the instantiated path's cost
    (:meth:`~dpclust.families.base.ConjugateFamily.collapsed_pass`); never from the state."""
    if cfg.data_pass == "instantiated" or not _in_one_process(model):
        return False
    if cfg.data_pass == "collapsed":
        return True
    pk = model.pass_kernel
    if cfg.sequential is None and pk is not None and int(pk.block) > 0:
        # sequential moves come with the collapsed pass only: count them as they would be
        n_rounds = rounds(dataclasses.replace(cfg, sequential=True), model)
    else:  # the moves do not depend on the pass
        n_rounds = rounds(cfg, model)
    return model.family.collapsed_pass(model.n_samples, n_rounds)


def rounds(cfg, model) -> int:
    """Rounds of split-merge moves per iteration: ``n_rounds``, or by default (with
    sequential moves; else 1) ``min(ceil(10^5 / N), ceil(N / 300))`` between 1 and 16:
    about the same work per iteration from a few thousand points up, and one round on
    small data sets, where one already reaches most clusters."""
    if cfg.n_rounds is not None:
        return int(cfg.n_rounds)
    if not sequential_here(cfg, model):
        return 1
    n = max(int(model.n_samples), 1)
    return int(min(16, max(1, min(math.ceil(1e5 / n), math.ceil(n / 300)))))


def group_count(cfg, rng, model) -> int:
    """The number of groups P of this round: ``n_groups``, or by default ``2^u`` with u
    uniform on ``0 .. ceil(log2(min(N, 512)))`` (a mixture of kernels chosen
    independently of the state: few groups propose merges of any pair, many groups
    propose splits of every cluster), at most ``2^MANY_POINTS_TOP_GROUPS`` with sequential
    moves on ``MANY_POINTS`` points or more (see ``n_groups``)."""
    if cfg.n_groups is not None:
        return int(cfg.n_groups)
    n = int(model.n_samples)
    top = int(math.ceil(math.log2(max(2, min(n, 512)))))
    if n >= MANY_POINTS and sequential_here(cfg, model):
        top = min(top, MANY_POINTS_TOP_GROUPS)
    return 2 ** int(rng.integers(top + 1))


def pinch_probability(cfg, n_samples: int) -> float:
    """The probability of a pinch launch: ``pinch``, or by default ``0.5 min(1,
    sqrt(10^4 / N))``, at least 0.05 (a constant of the run)."""
    if cfg.pinch is not None:
        return float(cfg.pinch)
    return max(0.05, 0.5 * min(1.0, math.sqrt(1e4 / max(int(n_samples), 1))))


def scan_probability(cfg, model) -> float:
    """The share of the sequential moves made as restricted Gibbs scan moves: ``scan_moves``,
    or by default the family's ``scan_moves`` (sparse counts: 1/2; else 0).  On partitioned
    data they scan when the round's points are collected in one place, else allocate
    sequentially (:func:`~dpclust.samplers.subcluster.sequential.partitioned_round`)."""
    if cfg.scan_moves is not None:
        return float(cfg.scan_moves)
    return float(getattr(model.family, "scan_moves", 0.0))


def multiway_here(cfg, model) -> bool:
    """Whether this run makes multi-way moves (``multiway``; with sequential moves, under
    the Dirichlet process, whose algebra their ratios are written in)."""
    return (int(cfg.multiway) >= 3 and sequential_here(cfg, model)
            and model.partition_prior.is_dirichlet_process)
