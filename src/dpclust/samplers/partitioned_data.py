"""What the sub-cluster sampler asks of data held in partitions, wherever they are.

The sampler's step runs the same on partitions in this process
(:class:`~dpclust.samplers._partitioned.LocalPartitions`) and on a Dask cluster
(:class:`~dpclust.distributed.backend.DaskPartitions`): it calls only the methods of
:class:`PartitionedData`, so the two give the same chain.  A new place to hold the data
implements this protocol; ``tests/test_partitioned_moves.py`` checks that both do.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class PartitionedData(Protocol):
    """The data side of the sub-cluster sampler (each method's semantics: its docstring on
    :class:`~dpclust.samplers._partitioned.LocalPartitions`)."""

    def configure(self, chunk_size: int, n_jobs) -> None:
        """Set the passes' chunk size and threads."""

    def start(self, key: int, n_clusters: int, labels=None, n_slots: int = 4):
        """Starting labels and sub-labels (whole data set)."""

    def init_sample(self, key: int, rate: float):
        """The rows of the k-means start's sample."""

    def nearest(self, centres, reference):
        """Every row's nearest centre, partition by partition."""

    def run_pass(self, spec, labels, sub):
        """``(labels, codes, PartStats)`` of the data pass over the whole data set."""

    def launch_pass(self, spec, labels, codes=None):
        """``(labels, codes, PartStats)`` of a launch pass over the whole data set."""

    def pack(self, params):
        """The clusters' parameters in the passes' packed form."""

    def unpack(self, acc):
        """The passes' accumulated statistics in the family's form."""

    def relabel(self, labels, codes, label_map, sub_map):
        """Labels and sub-labels renamed after the clusters are compacted."""

    def relabel_split(self, labels, codes, c, side_map, label_map):
        """Labels after cluster ``c`` is split along its sides."""

    def rows_of(self, index):
        """The data rows ``index`` (global), in the family's working form."""

    def stats_at(self, index, labels, n_clusters):
        """Statistics of the data rows ``index`` in clusters ``labels``."""

    def sample_members(self, labels, c, anchor, count, key):
        """``count`` uniform members of cluster ``c`` other than ``anchor``."""

    def select(self, key: int, key2: int, thresholds, anchors, labels):
        """The rows a launch selects, with their labels and working form."""

    def seed(self, spec):
        """Every sequential move's sides started from its anchors."""

    def sequential(self, spec, labels, codes, carry):
        """The sequential moves of ``spec`` from ``carry``."""

    def propose(self, launch, spec, labels, codes, carry, moving=None):
        """One round's proposal: a launch pass and the sequential moves."""

    def collects(self, moving=None) -> bool:
        """Whether a round's sequential moves collect their points in one place."""
