"""Numba kernels of the sub-cluster sampler (:mod:`dpclust.samplers.subcluster`).

* :mod:`~dpclust.kernels.subcluster.passes` — the data pass (restricted Gibbs with
  instantiated weights and parameters, parallel over chunks of points), the relabelling pass
  and the random starting labels;
* :mod:`~dpclust.kernels.subcluster.collapsed` — the collapsed data pass, parallel over random
  groups of clusters;
* :mod:`~dpclust.kernels.subcluster.launch` — the launch subsample and the launch pass of the
  split-merge moves (EM and pinch launches, and every move on partitioned data);
* :mod:`~dpclust.kernels.subcluster.sequential` — the sequential allocations of the pairwise
  and multi-way moves (Dahl 2003);
* :mod:`~dpclust.kernels.subcluster.blocks` — what the data and launch passes share: counting
  members, blocked scoring.

The random streams (SplitMix64, per-chunk seeds, per-point keys) are
:mod:`dpclust.kernels.streams`; their names are importable from here too, as every kernel
above is.
"""

from ..streams import chunk_seeds, mix64, next_uniform, point_key, point_keys
from .blocks import _count_member, no_accumulate_block, no_score_block
from .collapsed import collapsed_groups, collapsed_lane, no_log_predictives
from .launch import launch_chunk, launch_pass, select_points
from .passes import chunk_pass, data_pass, random_labels, relabel_pass
from .sequential import (SLOT_STRIDE, continue_allocation, first_members, move_lanes,
                         multiway_allocation, rows_by_move, sams_proposals, sams_round,
                         scan_move, sequential_allocation, sequential_lane, sequential_move,
                         sequential_moves, sequential_multiway, sequential_sides,
                         sequential_sides_lane, shuffle_moves)

__all__ = ["SLOT_STRIDE", "chunk_pass", "continue_allocation", "chunk_seeds", "collapsed_groups",
           "collapsed_lane", "data_pass", "first_members", "launch_chunk", "launch_pass", "mix64",
           "move_lanes", "multiway_allocation", "next_uniform", "no_accumulate_block",
           "no_log_predictives", "no_score_block", "point_key", "point_keys", "random_labels", "relabel_pass",
           "rows_by_move", "sams_proposals", "sams_round", "scan_move", "select_points",
           "sequential_allocation", "sequential_lane", "sequential_move", "sequential_moves",
           "sequential_multiway", "sequential_sides", "sequential_sides_lane", "shuffle_moves"]
