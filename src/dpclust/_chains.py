"""The old home of :mod:`dpclust.chains.processes` (chains in parallel processes); its
names stay importable from here."""

from .chains.processes import ChainWorkers, available_cores

__all__ = ["ChainWorkers", "available_cores"]
