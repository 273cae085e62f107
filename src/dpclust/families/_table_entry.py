"""Cached entry points of the samplers' kernels for the table families.

The samplers' generic kernels specialised to :mod:`dpclust.families._table_kernels`: numba
caches a function on disk only when its callees are globals, so naming the family's
kernels here makes a new process load the compiled sweeps instead of recompiling them (see
:class:`dpclust.families.base.FamilyKernel`).
"""

from __future__ import annotations

from numba import njit, prange

from ..kernels import ddcrp as _dk
from ..kernels import gibbs as _generic
from ..kernels import subcluster as _sk
from . import _table_kernels as _k


@njit(cache=True)
def _collapsed_sweep(kdata, kstats, khyper, labels, counts, log_join, active, where, free,
                     sizes, order, uniforms, log_new, start, logw):
    return _generic.collapsed_sweep(kdata, kstats, khyper, labels, counts, log_join, active,
                                    where, free, sizes, order, uniforms, log_new, start, logw,
                                    _k._tab_reset, _k._tab_add, _k._tab_remove, _k._tab_log_predictive)


@njit(cache=True)
def _rebuild_stats(kdata, kstats, khyper, labels, counts):
    _generic.rebuild_stats(kdata, kstats, khyper, labels, counts, _k._tab_reset, _k._tab_add)


@njit(cache=True)
def _sum_log_marginals(kstats, khyper, active, n_active):
    return _generic.sum_log_marginals(kstats, khyper, active, n_active, _k._tab_log_marginal)


@njit(cache=True, parallel=True)
def _subcluster_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
                     group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
                     bounds, seeds, labels_out, code_out, acc, cnt, first, rkey, res, ll,
                     block):
    for c in prange(bounds.shape[0] - 1):
        _sk.chunk_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of,
                       group_start, group_members, labels_in, sub_in, anchors, update,
                       rand_cluster, rand_p, bounds[c], bounds[c + 1], seeds[c], labels_out,
                       code_out, acc[c], cnt[c], first[c], rkey[c], res[c], ll[c],
                       _k._tab_log_likelihoods, _k._tab_accumulate, block,
                       _sk.no_score_block, _sk.no_accumulate_block)


@njit(cache=True)
def _ddcrp_sweep(kdata, kstats, khyper, links, table, ch_head, ch_next, ch_prev, sizes, live,
                 live_pos, free, counters, cnt_before, mode, indptr, indices, log_f,
                 prior_pred, log_alpha, start, seed, queue, walk_mark, gain_stamp, gain_val,
                 logw, target):
    return _dk.ddcrp_sweep(kdata, kstats, khyper, links, table, ch_head, ch_next, ch_prev,
                           sizes, live, live_pos, free, counters, cnt_before, mode, indptr,
                           indices, log_f, prior_pred, log_alpha, start, seed, queue,
                           walk_mark, gain_stamp, gain_val, logw, target,
                           _k._tab_reset, _k._tab_add, _k._tab_remove,
                             _k._tab_log_predictive, _k._tab_log_join_gain)


@njit(cache=True, parallel=True)
def _launch_pass(kdata, kparams, log_w, labels, block_of, side_of, pins, stages,
                 stage_key, row0, mode, bounds, seeds, codes, acc, cnt, first, rkey, res,
                 logq, block):
    for c in prange(bounds.shape[0] - 1):
        _sk.launch_chunk(kdata, kparams, log_w, labels, block_of, side_of, pins, stages,
                         stage_key, row0, mode, bounds[c], bounds[c + 1], seeds[c], codes,
                         acc[c], cnt[c], first[c], rkey[c], res[c], logq[c],
                         _k._tab_log_likelihoods, _k._tab_accumulate, block,
                       _sk.no_score_block, _sk.no_accumulate_block)


@njit(cache=True, parallel=True)
def _sequential_moves(kdata, kstats, khyper, rows, start, fixed, pins, seeds, scans,
                      lanes, lane_start, codes, logq, counts, logf):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.sequential_lane(kdata, kstats, khyper, rows, start, fixed, pins, seeds, scans,
                            lanes[lane_start[lane]:lane_start[lane + 1]], codes, logq, counts,
                            logf, _k._tab_reset, _k._tab_add, _k._tab_remove,
                            _k._tab_log_predictive, _k._tab_log_marginal)


@njit(cache=True, parallel=True)
def _collapsed_groups(kdata, kstats, khyper, rows, start, members, mstart, labels, counts,
                      seeds, lanes, lane_start, logw):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels,
                           counts, seeds, lanes[lane_start[lane]:lane_start[lane + 1]],
                           logw[lane], _k._tab_add, _k._tab_remove, _k._tab_log_predictive)


@njit(cache=True)
def _sequential_multiway(kdata, kstats, khyper, rows, fixed, pins, state, codes, logw, counts,
                         logf):
    return _sk.sequential_multiway(kdata, kstats, khyper, rows, fixed, pins, state, codes,
                                   logw, counts, logf, _k._tab_reset, _k._tab_add,
                                   _k._tab_log_predictive, _k._tab_log_marginal)


@njit(cache=True, parallel=True)
def _sequential_sides(kdata, kstats, khyper, rows, start, fixed, slot0, n_sides, states,
                      counts, logq, codes, lanes, lane_start, logw, seed, scans):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.sequential_sides_lane(kdata, kstats, khyper, rows, start, fixed, slot0, n_sides,
                                  states, counts, logq, codes,
                                  lanes[lane_start[lane]:lane_start[lane + 1]], logw[lane],
                                  seed, scans, _k._tab_reset, _k._tab_add,
                                  _k._tab_remove, _k._tab_log_predictive)


@njit(cache=True)
def _split_log_marginals(kdata, kstats, khyper, left, right, out):
    _generic.split_log_marginals(kdata, kstats, khyper, left, right, out,
                                 _k._tab_reset, _k._tab_add, _k._tab_log_marginal)


ENTRY_POINTS = {"collapsed_sweep": _collapsed_sweep, "rebuild_stats": _rebuild_stats,
                "split_log_marginals": _split_log_marginals,
                "sum_log_marginals": _sum_log_marginals, "data_pass": _subcluster_pass,
                "ddcrp_sweep": _ddcrp_sweep, "launch_pass": _launch_pass,
                "sequential_moves": _sequential_moves,
                "sequential_multiway": _sequential_multiway,
                "sequential_sides": _sequential_sides, "collapsed_groups": _collapsed_groups}
