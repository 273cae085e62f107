"""Counter-based random streams of the numba kernels: SplitMix64 (Steele, Lea & Flood 2014).

A kernel's randomness comes in as a uint64 state advanced by :func:`next_uniform`, so that a
compiled loop draws without a generator object.  :func:`chunk_seeds` gives each chunk of an
iteration its own stream from the iteration's key and the chunk's index, and :func:`point_key`
a uniform key per (key, row), so that results for a given ``random_state`` do not depend on how
many threads (or workers) run the chunks, nor on where a row is.

References
----------
Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number generators.
    OOPSLA (SplitMix64).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True, _nrt=False)
def mix64(z):
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, _nrt=False)
def next_uniform(state):
    """Advance the SplitMix64 state (a uint64) and return ``(state, u)``, u uniform in [0, 1)."""
    state = state + _GOLDEN
    return state, float(mix64(state) >> _S11) * _INV53


def chunk_seeds(key: int, n_chunks: int) -> np.ndarray:
    """Independent stream seeds for chunks ``0 .. n_chunks - 1`` of one iteration.

    ``key`` is drawn from the sampler's generator once per iteration; chunk c's seed is
    ``mix64(key + mix64(c + 1))``, so any partitioning into the same chunks, on any number of
    threads or machines, draws the same numbers.
    """
    return _chunk_seeds(np.uint64(key), n_chunks)


@njit(cache=True)
def _chunk_seeds(key, n_chunks):
    out = np.empty(n_chunks, dtype=np.uint64)
    for c in range(n_chunks):
        out[c] = mix64(key + mix64(np.uint64(c + 1) * _GOLDEN))
    return out


@njit(cache=True)
def point_keys(key, rows):
    """:func:`point_key` of global ``rows`` (an array)."""
    out = np.empty(rows.shape[0])
    k64 = np.uint64(key)
    for a in range(rows.shape[0]):
        out[a] = point_key(k64, rows[a])
    return out


@njit(cache=True, _nrt=False)
def point_key(key, i):
    """The uniform key of global row ``i`` for the iteration's ``key``: the same wherever
    the row is, so that a move's launch subsample depends on its points alone."""
    return float(mix64(key + mix64(np.uint64(i + 1) * _GOLDEN)) >> _S11) * _INV53
