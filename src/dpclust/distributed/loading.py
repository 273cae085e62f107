"""Putting the data on a Dask cluster: one future a partition, validated on the workers
(:func:`load_partitions`), and a local cluster for the CLI's ``--workers``
(:func:`local_client`).  The chain that then runs on them is :mod:`.backend`'s."""

from __future__ import annotations

import itertools

import numpy as np

from ..utils.checks import DataError
from . import worker as _w
from .actors import ActorPartitions
from .backend import DaskPartitions, _dask, task_key
from .sources import DaskBlock, InMemory, file_source, shard_files


def _blocks_of(client, X, rows):
    """Futures of the row blocks of a dask array (rechunked to ``rows`` if given)."""
    if X.ndim != 2:
        raise DataError(f"X must be 2-D, got a dask array of shape {X.shape}")
    chunks = (tuple(rows) if rows is not None else X.chunks[0], (X.shape[1],))
    if X.chunks != chunks:
        X = X.rechunk(chunks)
    blocks = list(X.to_delayed().ravel())
    return client.compute(blocks), [int(r) for r in X.chunks[0]]


def partition_rows(n: int, partitions) -> list[int]:
    """Rows per partition: ``partitions`` as an int (that many partitions of equal size),
    or a sequence of row counts."""
    if partitions is None:
        return [n]
    if isinstance(partitions, (int, np.integer)):
        k = int(partitions)
        if not 1 <= k <= n:
            raise ValueError(f"partitions={k} must be between 1 and the {n:,} points")
        edges = np.linspace(0, n, k + 1).round().astype(np.int64)
        return [int(b - a) for a, b in itertools.pairwise(edges)]
    rows = [int(r) for r in partitions]
    if sum(rows) != n or min(rows) < 1:
        raise ValueError(f"partitions {rows} must be positive row counts adding up to "
                         f"the {n:,} points")
    return rows


#: seconds a fit or a resume waits for a Dask cluster with no worker before it says so
WORKER_WAIT = 120


def wait_for_workers(client, timeout: float = WORKER_WAIT) -> int:
    """The number of the cluster's workers, once there is at least one: a cluster whose
    workers are all gone (killed, or still starting) is waited for ``timeout`` seconds,
    then named in a clear error, where Dask alone would wait for ever."""
    workers = len(client.scheduler_info()["workers"])
    if workers:
        return workers
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise RuntimeError(f"the Dask cluster has no worker (waited {timeout:g} s for one): "
                           "start workers, then fit or resume again") from None
    return len(client.scheduler_info()["workers"])


def load_partitions(client, X, family, partitions=None, columns=None, actors: bool = True):
    """Put the data on the cluster, one future a partition, validated on the workers.

    Parameters
    ----------
    X : dask array, NumPy array or sparse matrix, or shard files (a directory, a glob
        pattern, a ``.npy``/``.parquet`` path or a list of them; one partition each)
    family : the unresolved family (validates each partition)
    partitions : int, sequence of row counts, or None
        How to split a dask or NumPy array (None: the dask array's own row chunks, or one
        partition per worker for a NumPy array).  Shards are one partition each.

    Returns
    -------
    (DaskPartitions with the resolved family, the resolved family, fingerprint)
    """
    _dask()
    n_workers = wait_for_workers(client)
    submit = client.submit
    block_futures = None
    if hasattr(X, "dask") and hasattr(X, "chunks") and hasattr(X, "to_delayed"):
        block_futures, rows = _blocks_of(
            client, X, None if partitions is None else partition_rows(X.shape[0], partitions))
        sources = [DaskBlock(i) for i in range(len(rows))]
    elif isinstance(X, (str, list, tuple)) and not _is_nested_rows(X):
        if partitions is not None:
            raise ValueError("shard files are one partition each: leave partitions unset")
        sources = [file_source(p.resolve(), columns) for p in shard_files(X)]
        rows = None
    else:
        Xw = family.validate(X)
        n = family.n_points(Xw)
        if partitions is None:
            partitions = max(1, min(n_workers, n))
        rows = partition_rows(n, partitions)
        edges = np.concatenate([[0], np.cumsum(rows)])
        sources = [InMemory(family.subset(Xw, np.arange(a, b)), f"rows {a}-{b - 1}")
                   for a, b in itertools.pairwise(edges)]
    # load and validate; row offsets are fixed once every partition's size is known
    if block_futures is not None:
        raw = [submit(_w.prepare, s, family, 0, b, key=task_key(_w.prepare))
               for s, b in zip(sources, block_futures)]
    else:
        raw = [submit(_w.prepare, s, family, 0, key=task_key(_w.prepare)) for s in sources]
    meta = client.gather([submit(_w.describe, r, key=task_key(_w.describe)) for r in raw])
    rows = [m[0] for m in meta]
    row0 = np.concatenate([[0], np.cumsum(rows)])
    summary = None
    for m in meta:
        if m[1] is None:
            raise ValueError(f"{type(family).__name__} cannot be fitted on a Dask cluster: it "
                             "has no data summaries")
        summary = m[1] if summary is None else family.merge_summaries(summary, m[1])
    resolved = family.resolve_summary(summary)
    parts = [submit(_rebase, r, int(a), resolved, summary, int(row0[-1]),
                    key=task_key(_rebase))
             for r, a in zip(raw, row0[:-1])]
    fingerprint = _combine_fingerprints([m[2] for m in meta], rows)
    data = (ActorPartitions if actors else DaskPartitions)(client, parts, rows, summary,
                                                           resolved, meta[0][3])
    data.row_bytes = sum(m[4] for m in meta) / max(sum(rows), 1)
    data.tune_latency()
    if data.pass_kernel is None:
        raise ValueError(f"{type(resolved).__name__} has no pass kernel: the sub-cluster "
                         "sampler cannot run it on a Dask cluster")
    return data, resolved, fingerprint


def _rebase(part, row0, family, summary, n_total):
    part = _w.with_kernel(part, family, summary, n_total)
    part.row0 = int(row0)
    return part


def _is_nested_rows(X) -> bool:
    """Whether a list is rows of numbers (data) rather than file names."""
    return isinstance(X, (list, tuple)) and len(X) > 0 and not isinstance(X[0], (str, bytes)) \
        and not hasattr(X[0], "__fspath__")


def _combine_fingerprints(hashes, rows) -> str:
    import hashlib

    h = hashlib.sha1()
    for r, x in zip(rows, hashes):
        h.update(f"{r}:{x};".encode())
    return "dask:" + h.hexdigest()[:16]


def local_client(n_workers: int, threads_per_worker: int | None = None):
    """A :class:`distributed.Client` on a new local cluster of ``n_workers`` processes
    (the CLI's ``--workers``); closing the client closes the cluster."""
    distributed = _dask()
    import os

    cores = os.cpu_count() or 1
    threads = threads_per_worker or max(1, cores // max(n_workers, 1))
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    client._dpclust_cluster = cluster
    return client


__all__ = ["load_partitions", "local_client", "partition_rows"]
