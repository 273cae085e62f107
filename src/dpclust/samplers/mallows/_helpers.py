"""Pieces shared by the samplers of :mod:`dpclust.samplers.mallows`: the family check, ranks
of central rankings, the assignment sweep's working arrays and their growth, and the code
distribution of Sample-σ-N1."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import betaln

from ...families.mallows import GeneralizedMallows
from ..base import MixtureModel


def _check_family(model: MixtureModel, name: str) -> GeneralizedMallows:
    fam = model.family
    if not isinstance(fam, GeneralizedMallows):
        raise TypeError(f"sampler {name!r} fits GeneralizedMallows mixtures of rankings; "
                        f"got the family {type(fam).__name__}")
    return fam


def _ranks(order: np.ndarray) -> np.ndarray:
    rank = np.empty_like(order)
    rows = np.arange(order.shape[0])[:, None]
    rank[rows, order] = np.arange(order.shape[1])[None, :]
    return rank


class _SweepArrays:
    """The assignment sweep's working arrays for ``cap`` cluster slots: log counts, ranks
    cluster-major (``rankT[item, c]``), and scratch."""

    def __init__(self, order, counts, J):
        cap, n = order.shape
        self.J = J
        self.rankT = np.ascontiguousarray(_ranks(order).T)
        with np.errstate(divide="ignore"):
            self.log_counts = np.log(counts.astype(np.float64))
        self.scratch_i = np.zeros((3, max(cap, n)), dtype=np.int64)
        self.scratch_f = np.zeros((1, cap))
        self.rstore = np.zeros((max(J, 1), cap), dtype=np.int64)
        self.logw = np.empty(cap + 2)
        self.cand = np.empty(cap + 2, dtype=np.int64)
        self.code = np.empty(max(J, 1), dtype=np.int64)

    def grown(self, order, counts):
        return _SweepArrays(order, counts, self.J)


def _grow_columns(*arrays):
    """Double the number of cluster slots of cluster-major arrays (last axis)."""
    out = []
    for a in arrays:
        b = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        b[..., :a.shape[-1]] = a
        out.append(b)
    return tuple(out)


def _grow(*arrays):
    """Double the number of cluster slots of every array (new slots empty)."""
    out = []
    for a in arrays:
        b = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
        b[:a.shape[0]] = a
        out.append(b)
    return tuple(out)


def _n1_cdf(fam: GeneralizedMallows) -> np.ndarray:
    """CDF over ``k = 0 .. n-j-1`` of Sample-σ-N1's code ``V_j`` (∝ ``B(nu r_j + k, nu +
    2)``), one row per rank, padded with 1 (computed once per prior, not per step)."""
    return _n1_cdf_of(fam.n_items_, float(fam.nu), tuple(fam.nu_r_))


@lru_cache(maxsize=16)
def _n1_cdf_of(n: int, nu: float, nu_r: tuple) -> np.ndarray:
    k = np.arange(n)
    out = np.ones((len(nu_r), n))
    for j, a in enumerate(nu_r):
        m = n - j - 1
        lw = betaln(a + k[:m + 1], nu + 2.0)
        w = np.exp(lw - lw.max())
        out[j, :m + 1] = np.cumsum(w) / w.sum()
    out.flags.writeable = False
    return out
