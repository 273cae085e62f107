"""A table whose real columns share one full-covariance Gaussian per cluster.

The product of two conjugate families over a table's column blocks: the
Normal-Inverse-Wishart family (:class:`~dpclust.families.gaussian.NormalInverseWishart`) over
the real columns together, and the independent columns of :class:`~dpclust.families.table.
TableFamily` over the yes/no, category and count columns.  Within a cluster the blocks are
independent, so every quantity of the contract is the sum (the log marginal, predictive,
likelihood) or the pair (statistics, parameters) of the two blocks'.
``TableFamily(covariance="full")`` resolves to this family.

The real columns must be complete here: with holes in them a full covariance has no
closed-form marginal (the posterior of a Gaussian's parameters given rows observed on
different coordinates is not Normal-Inverse-Wishart).  ``covariance="full"`` then resolves to
:class:`~dpclust.families.gaussian_table_holes.GaussianTableHoles`, exact with the samplers
that instantiate the clusters' parameters (the explicit and FSD samplers), and
``covariance="auto"`` takes the diagonal family, which leaves a missing cell out exactly with
every sampler.  Row weights other than 1
(``sample_weight`` as a power) are not taken either: the Normal-Inverse-Wishart kernels count
whole rows.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from ..tables import TableData
from . import _gaussian_kernels as _gk
from . import _table_math as _m
from ._gaussian_table_entry import ENTRY_POINTS
from ._gaussian_table_kernels import (gt_accumulate, gt_add, gt_log_join_gain,
                                      gt_log_likelihoods, gt_log_marginal, gt_log_predictive,
                                      gt_remove, gt_reset)

from ._table_math import TableParams, TableStats
from .base import ClusterSummary, FamilyKernel, PassKernel, take
from .gaussian import GaussianParams, GaussianStats, _lower_inverses
from .table import TableFamily, _pairwise_log_bc

_LOG_2PI = float(np.log(2.0 * np.pi))
_NG = len(GaussianStats._fields)
_NP = len(GaussianParams._fields)


def _product(name: str, gaussian, table, doc: str):
    """A NamedTuple of the Gaussian block's fields (prefixed ``g_``) then the table's."""
    fields = [(f"g_{f}", np.ndarray) for f in gaussian._fields]
    fields += [(f, np.ndarray) for f in table._fields]
    cls = NamedTuple(name, fields)
    cls.__doc__ = doc
    cls.__module__ = __name__
    return cls


GaussianTableStats = _product(
    "GaussianTableStats", GaussianStats, TableStats,
    "The real block's :class:`~dpclust.families.gaussian.GaussianStats` (``g_n``, "
    "``g_mean``, ``g_scatter``) beside the other columns' "
    ":class:`~dpclust.families._table_math.TableStats`.")
GaussianTableParams = _product(
    "GaussianTableParams", GaussianParams, TableParams,
    "The real block's mean, covariance and its Cholesky factor (``g_mean``, ``g_cov``, "
    "``g_chol``) beside the other columns' :class:`~dpclust.families._table_math."
    "TableParams`.")


def _split(t):
    """The two blocks of product statistics or parameters."""
    if isinstance(t, GaussianTableStats):
        return GaussianStats(*t[:_NG]), TableStats(*t[_NG:])
    return GaussianParams(*t[:_NP]), TableParams(*t[_NP:])


class GaussianTable(TableFamily):
    """The real columns of a table with a full-covariance Gaussian per cluster (Normal-
    Inverse-Wishart prior, the defaults of the Gaussian family), the other columns as in
    :class:`TableFamily`.  Made by ``TableFamily(covariance="full").resolve(X)``; see the
    module's docstring for what it does not take (holes in the real columns, power
    weights)."""

    supports_weights = False

    @staticmethod
    def _rest(X: TableData) -> TableData:
        """The table without its real columns (the other block's data)."""
        return TableData(np.zeros((len(X), 0)), X.code, X.count, X.weight, X.schema)

    def _check(self, X: TableData) -> TableData:
        if np.any(X.weight != 1.0):
            raise ValueError("row weights as a power on the likelihood need "
                             "covariance='diagonal' (the full covariance counts whole rows); "
                             "whole-number weights repeat rows with any family")
        if np.isnan(X.real).any():
            raise ValueError("covariance='full' needs the real columns complete: use "
                             "covariance='diagonal' (or 'auto'), which leaves holes out exactly")
        return X

    def _dims(self):
        s = self.schema_
        return 0, len(s.coded), int(s.offsets[-1]), len(s.counts)

    # ------------------------------------------------------------ statistics
    def stats(self, X, labels=None, n_clusters=None) -> GaussianTableStats:
        X = self._check(X)
        n = len(X)
        if labels is None:
            labels, n_clusters = np.zeros(n, dtype=np.intp), 1
        labels = np.asarray(labels, dtype=np.intp)
        if n_clusters is None:
            n_clusters = int(labels.max()) + 1 if n else 0
        g = self.niw_.stats(X.real, labels, n_clusters)
        t = _m.table_stats(self._rest(X), labels, n_clusters, self.hyper.offsets)
        return GaussianTableStats(*g, *t)

    def empty_stats(self, n_clusters=1) -> GaussianTableStats:
        return GaussianTableStats(*self.niw_.empty_stats(n_clusters),
                                  *_m.empty_stats(n_clusters, *self._dims()))

    def combine(self, a, b):
        (ga, ta), (gb, tb) = _split(a), _split(b)
        return GaussianTableStats(*self.niw_.combine(ga, gb), *_m.combine(ta, tb))

    def subtract(self, a, b):
        (ga, ta), (gb, tb) = _split(a), _split(b)
        return GaussianTableStats(*self.niw_.subtract(ga, gb), *_m.subtract(ta, tb))

    def reweight(self, stats, factor):
        g, t = _split(stats)
        return GaussianTableStats(*self.niw_.reweight(g, factor), *_m.reweight(t, factor))

    # -------------------------------------------------------------- posterior
    def posterior(self, stats):
        g, t = _split(stats)
        return {"gaussian": self.niw_.posterior(g), **TableFamily.posterior(self, t)}

    def log_marginal(self, stats) -> np.ndarray:
        g, t = _split(stats)
        return self.niw_.log_marginal(g) + _m.log_marginal(t, self.hyper)

    def log_predictive(self, X, stats) -> np.ndarray:
        if np.isnan(X.real).any():  # new rows with holes: their observed coordinates' t
            return observed_log_predictive(self, X, stats)
        X = self._check(X)
        g, t = _split(stats)
        return (self.niw_.log_predictive(X.real, g)
                + _m.log_predictive(self._rest(X), t, self.hyper))

    def sample_posterior(self, stats, rng) -> GaussianTableParams:
        g, t = _split(stats)
        return GaussianTableParams(*self.niw_.sample_posterior(g, rng),
                                   *_m.sample_posterior(t, self.hyper, rng))

    def point_params(self, stats, rng=None) -> GaussianTableParams:
        g, t = _split(stats)
        return GaussianTableParams(*self.niw_.point_params(g, rng),
                                   *_m.point_params(t, self.hyper))

    def log_likelihood(self, X, params) -> np.ndarray:
        X = self._check(X)
        g, t = _split(params)
        return (self.niw_.log_likelihood(X.real, g)
                + _m.log_likelihood(self._rest(X), t, self.hyper))

    def log_prior(self, params) -> np.ndarray:
        g, t = _split(params)
        return self.niw_.log_prior(g) + _m.log_posterior_density(
            t, _m.empty_stats(len(t.mean), *self._dims()), self.hyper)

    def weighted_stats(self, X, weights):
        W = np.asarray(weights, dtype=np.float64)
        t = TableFamily.weighted_stats(self, self._rest(X), W)
        return GaussianTableStats(*self.niw_.weighted_stats(X.real, W), *t)

    def log_posterior_density(self, params, stats) -> np.ndarray:
        (gp, tp), (gs, ts) = _split(params), _split(stats)
        return (self.niw_.log_posterior_density(gp, gs)
                + _m.log_posterior_density(tp, ts, self.hyper))

    def sample_data(self, params, components, rng) -> TableData:
        g, t = _split(params)
        rest = TableFamily.sample_data(self, t, components, rng)
        real = self.niw_.sample_data(g, components, rng)
        return TableData(real, rest.code, rest.count, rest.weight, self.schema_)

    def mean_params(self, stats) -> dict:
        g, t = _split(stats)
        out = TableFamily.mean_params(self, t)
        niw = self.niw_.mean_params(g)
        out["means"] = niw["means"]
        out["covariances"] = niw["covariances"]
        out["variances"] = np.diagonal(niw["covariances"], axis1=1, axis2=2).copy()
        return out

    # ---------------------------------------------------------------- kernels
    def kernel(self, X, n_max: int | None = None) -> FamilyKernel:
        X = self._check(X)
        g = self.niw_.kernel(X.real, n_max=n_max)
        t = TableFamily.kernel(self, self._rest(X))

        def alloc(capacity: int):
            return g.alloc(capacity) + t.alloc(capacity)

        return FamilyKernel(data=g.data + t.data, hyper=g.hyper + t.hyper, alloc=alloc,
                            reset=gt_reset, add=gt_add, remove=gt_remove,
                            log_predictive=gt_log_predictive, log_marginal=gt_log_marginal,
                            entry_points=ENTRY_POINTS, log_join_gain=gt_log_join_gain)

    def partition_kernel(self, X, n_total: int) -> FamilyKernel:
        return self.kernel(X, n_max=n_total)

    def pass_kernel(self, X, summary=None) -> PassKernel:
        X = self._check(X)
        real = np.ascontiguousarray(X.real, dtype=np.float64)
        d = real.shape[1]
        shift = real.mean(axis=0) if len(real) else np.zeros(d)
        t = TableFamily.pass_kernel(self, self._rest(X))
        ng = 1 + d + d * (d + 1) // 2

        def pack(params):
            g, tp = _split(params)
            prec = _lower_inverses(g.chol)
            logdet = 2.0 * np.log(np.diagonal(g.chol, axis1=1, axis2=2)).sum(axis=1)
            mean = np.ascontiguousarray(g.mean)
            cs = np.einsum("kab,kb->ka", prec, mean - shift)
            return (mean, prec, -0.5 * (d * _LOG_2PI + logdet), cs, shift) + t.pack(tp)

        def unpack(acc):
            acc = np.ascontiguousarray(acc, dtype=np.float64)
            K = acc.shape[0]
            n, mean, scatter = np.empty(K), np.empty((K, d)), np.empty((K, d, d))
            _gk.unpack_raw_stats(np.ascontiguousarray(acc[:, :ng]), shift, n, mean, scatter)
            return GaussianTableStats(n, mean, scatter, *t.unpack(acc[:, ng:]))

        return PassKernel(data=(real, shift) + t.data, n_stats=ng + t.n_stats, pack=pack,
                          unpack=unpack, log_likelihood=gt_log_likelihoods,
                          accumulate=gt_accumulate, entry_points=ENTRY_POINTS)

    def init_features_like(self, X: TableData, reference: TableData) -> np.ndarray:
        """The real columns standardised (by ``reference``'s) beside the other columns'
        features."""
        rest = self._rest(X)
        parts = [_standardise_complete(X.real, reference.real)]
        if rest.code.shape[1] or rest.count.shape[1]:
            parts.append(TableFamily.init_features_like(self, rest, self._rest(reference)))
        return np.hstack(parts)

    def seed_subclusters(self, stats, rng):
        g, t = _split(stats)
        seeds_g = self.niw_.seed_subclusters(g, rng)
        weak = _m.reweight(t, np.minimum(1.0, 2.0 / np.maximum(t.rows, 1.0)))
        seeds_t = _m.sample_posterior(take(weak, np.repeat(np.arange(len(t.rows)), 2)),
                                      self.hyper, rng)
        return GaussianTableParams(*seeds_g, *seeds_t)

    # ------------------------------------------------------------- distances
    def hellinger(self, params) -> np.ndarray:
        g, t = _split(params)
        bc = np.clip(1.0 - self.niw_.hellinger(g) ** 2, 1e-300, 1.0)
        log_bc = np.log(bc) + _pairwise_log_bc(t, self.hyper.offsets)
        return np.sqrt(np.clip(1.0 - np.exp(log_bc), 0.0, 1.0))

    def divergence(self, params) -> np.ndarray:
        g, t = _split(params)
        return self.niw_.divergence(g) + TableFamily.divergence(self, t)

    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        return TableFamily.describe_clusters(
            self, {k: v for k, v in params.items() if k != "covariances"})


def _standardise_complete(a: np.ndarray, reference: np.ndarray) -> np.ndarray:
    sd = reference.std(axis=0)
    return (a - reference.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def missing_patterns(real: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of ``real`` (n, d) grouped by which coordinates they have: a list of
    ``(observed, rows)``, ``observed`` a boolean mask of shape (d,) and ``rows`` the int
    indices of the rows with that pattern."""
    seen = ~np.isnan(real)
    n, d = seen.shape
    if seen.all():
        return [(np.ones(d, dtype=bool), np.arange(n))] if n else []
    key = seen.astype(np.int64) @ (np.int64(1) << np.arange(d, dtype=np.int64))
    order = np.argsort(key, kind="stable")
    sk = key[order]
    cut = np.flatnonzero(np.diff(sk)) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [n]])
    return [(seen[order[a]], order[a:b]) for a, b in zip(starts, ends)]


def _solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``L^{-1} B`` for lower-triangular ``L`` (batched over leading axes)."""
    return np.linalg.solve(L, B)


def observed_log_predictive(family: GaussianTable, X: TableData, stats) -> np.ndarray:
    """``log f(x_{i,obs} | X_k)`` under ``family`` for statistics of complete rows (empty:
    the prior predictive): the Student-t of the Normal-Inverse-Wishart posterior
    marginalised to each row's observed coordinates, times the other columns' predictive.
    Exact: a Student-t's marginal on some coordinates is the Student-t of their location
    and scale block, with the same degrees of freedom."""
    g, t = _split(stats)
    post = family.niw_.posterior(g)
    real = np.asarray(X.real, dtype=np.float64)
    n, d = real.shape
    K = len(post.kappa)
    df = post.dof - d + 1.0
    scale = post.scale * ((post.kappa + 1.0) / (post.kappa * df))[:, None, None]
    out = np.zeros((n, K))
    for obs, rows in missing_patterns(real):
        o = np.flatnonzero(obs)
        if not len(o):
            continue
        do = len(o)
        L = np.linalg.cholesky(scale[:, o[:, None], o[None, :]])          # (K, do, do)
        diff = real[rows][:, o][None, :, :] - post.mean[:, None, o]       # (K, r, do)
        y = _solve(L, np.swapaxes(diff, 1, 2))                            # (K, do, r)
        maha = np.einsum("kir,kir->kr", y, y)
        logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
        c = (gammaln(0.5 * (df + do)) - gammaln(0.5 * df)
             - 0.5 * do * np.log(df * math.pi) - 0.5 * logdet)
        out[rows] = (c[:, None] - 0.5 * (df + do)[:, None]
                     * np.log1p(maha / df[:, None])).T
    return out + _m.log_predictive(family._rest(X), t, family.hyper)
