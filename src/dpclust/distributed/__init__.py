"""The sub-cluster sampler on a Dask cluster, for data that outgrow one machine.

``DPMixture(sampler="subcluster", executor=client)`` fits a dask array, shard
files (``.npy``/``.parquet``, one partition each) or an in-memory array split into
partitions; the data, labels and kept draws stay on the workers and each iteration moves
only cluster parameters out and per-cluster statistics back.  With the same
``random_state`` and partitions the chain is exactly the in-process one
(``DPMixture(partitions=...)``).  Dask is an optional dependency (``pip install
'dpclust[dask]'``), imported only here.
"""

from .backend import DaskModel, DaskPartitions, WorkerLost
from .loading import load_partitions, local_client, partition_rows

__all__ = ["DaskModel", "DaskPartitions", "WorkerLost", "load_partitions", "local_client",
           "partition_rows"]
