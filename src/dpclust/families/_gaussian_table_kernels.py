"""Numba face of the Gaussian-and-columns product (:mod:`dpclust.families.gaussian_table`):
each per-row operation is the Normal-Inverse-Wishart kernel's on the real block plus the
table kernel's on the other columns, (see :class:`dpclust.families.base.FamilyKernel`).

Layout: ``kdata = (X_real,) + table kdata`` (1 + 5 arrays), ``kstats`` = the Gaussian
kernel's 10 arrays then the table kernel's 13, ``khyper`` = the Gaussian kernel's 4 arrays
then the table kernel's 5;
for the pass, ``kdata = (X_real, shift) + table kdata`` and ``kparams`` = the Gaussian pass's
5 arrays then the table pass's 6, and a raw-statistics row is the Gaussian's then the
table's.
"""

from __future__ import annotations

from numba import njit

from . import _gaussian_kernels as _g
from . import _table_kernels as _t


@njit(cache=True)
def gt_reset(kstats, k, khyper):
    _g._niw_reset(kstats[:10], k, khyper[:4])
    _t._tab_reset(kstats[10:], k, khyper[4:])


@njit(cache=True)
def gt_add(kdata, i, kstats, k, khyper):
    _g._niw_add(kdata[:1], i, kstats[:10], k, khyper[:4])
    _t._tab_add(kdata[1:], i, kstats[10:], k, khyper[4:])


@njit(cache=True)
def gt_remove(kdata, i, kstats, k, khyper):
    _g._niw_remove(kdata[:1], i, kstats[:10], k, khyper[:4])
    _t._tab_remove(kdata[1:], i, kstats[10:], k, khyper[4:])


@njit(cache=True)
def gt_log_predictive(kdata, i, kstats, k, khyper):
    return (_g._niw_log_predictive(kdata[:1], i, kstats[:10], k, khyper[:4])
            + _t._tab_log_predictive(kdata[1:], i, kstats[10:], k, khyper[4:]))


@njit(cache=True)
def gt_log_marginal(kstats, k, khyper):
    return (_g._niw_log_marginal(kstats[:10], k, khyper[:4])
            + _t._tab_log_marginal(kstats[10:], k, khyper[4:]))


@njit(cache=True)
def gt_log_join_gain(kstats, a, b, khyper):
    return (_g._niw_log_join_gain(kstats[:10], a, b, khyper[:4])
            + _t._tab_log_join_gain(kstats[10:], a, b, khyper[4:]))


@njit(cache=True)
def gt_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    _g._gauss_log_likelihoods(kdata[:2], i, kparams[:5], comps, start, m, out)
    tdata = kdata[2:]
    tparams = kparams[5:]
    for a in range(m):
        out[a] += _t._tab_log_likelihood(tdata, i, tparams, comps[start + a])


@njit(cache=True)
def gt_accumulate(kdata, i, acc, slot):
    X = kdata[0]
    d = X.shape[1]
    ng = 1 + d + d * (d + 1) // 2
    _g._gauss_accumulate(kdata[:2], i, acc, slot)
    _t._tab_accumulate(kdata[2:], i, acc[:, ng:], slot)
