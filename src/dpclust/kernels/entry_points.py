"""The one template of the families' cached entry points into the samplers' kernels.

The generic kernels (:mod:`.gibbs`, :mod:`.subcluster`, :mod:`.ddcrp`) take a family's
compiled operations as arguments.  numba caches a function on disk only when its callees
are globals, so each family has a module of thin ``@njit(cache=True)`` functions that name
its operations as globals and call the generic kernels: a new process then loads the
compiled sweeps instead of recompiling them (:class:`dpclust.families.base.FamilyKernel`).
Those modules are *generated* from this template by :func:`render` (the families' specs:
:mod:`dpclust.families._entry_specs`, which writes them: ``python -m
dpclust.families._entry_specs``); ``tests/test_entry_points.py`` fails when a generated
module is stale.

A spec names the family's operations (``reset``, ``add``, ``remove``, ``log_predictive``,
``log_marginal``, ``log_join_gain`` and optionally ``log_predictives`` on cluster statistics; ``log_likelihoods``,
``accumulate`` and optionally ``score_block``, ``accumulate_block`` on instantiated
parameters) and, optionally, a variant of the instantiated passes with other operations
(the Gaussian's two-dimensional fast path).
"""

from __future__ import annotations

#: the entry points, by the name :class:`~dpclust.families.base.FamilyKernel` looks them up
#: under, each ``(function name, parallel, body)``; ``{op}`` are the family's operations
_ENTRIES = {
    "collapsed_sweep": ("_collapsed_sweep", False, '''\
def _collapsed_sweep{suffix}(kdata, kstats, khyper, labels, counts, log_join, active, where,
                     free, sizes, order, uniforms, log_new, start, logw):
    return _generic.collapsed_sweep(kdata, kstats, khyper, labels, counts, log_join, active,
                                    where, free, sizes, order, uniforms, log_new, start, logw,
                                    {reset}, {add}, {remove}, {log_predictive})
'''),
    "rebuild_stats": ("_rebuild_stats", False, '''\
def _rebuild_stats{suffix}(kdata, kstats, khyper, labels, counts):
    _generic.rebuild_stats(kdata, kstats, khyper, labels, counts, {reset}, {add})
'''),
    "split_log_marginals": ("_split_log_marginals", False, '''\
def _split_log_marginals{suffix}(kdata, kstats, khyper, left, right, out):
    _generic.split_log_marginals(kdata, kstats, khyper, left, right, out, {reset}, {add},
                                 {log_marginal})
'''),
    "sum_log_marginals": ("_sum_log_marginals", False, '''\
def _sum_log_marginals{suffix}(kstats, khyper, active, n_active):
    return _generic.sum_log_marginals(kstats, khyper, active, n_active, {log_marginal})
'''),
    "data_pass": ("_subcluster_pass", True, '''\
def _subcluster_pass{suffix}(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
                     group_members, labels_in, sub_in, anchors, update, rand_cluster, rand_p,
                     bounds, seeds, labels_out, code_out, acc, cnt, first, rkey, res, ll,
                     block):
    for c in prange(bounds.shape[0] - 1):
        _sk.chunk_pass(kdata, kparams, log_pi, log_pibar, fresh, group_of, group_start,
                       group_members, labels_in, sub_in, anchors, update, rand_cluster,
                       rand_p, bounds[c], bounds[c + 1], seeds[c], labels_out, code_out,
                       acc[c], cnt[c], first[c], rkey[c], res[c], ll[c], {log_likelihoods},
                       {accumulate}, block, {score_block}, {accumulate_block})
'''),
    "ddcrp_sweep": ("_ddcrp_sweep", False, '''\
def _ddcrp_sweep{suffix}(kdata, kstats, khyper, links, table, ch_head, ch_next, ch_prev, sizes,
                 live, live_pos, free, counters, cnt_before, mode, indptr, indices, log_f,
                 prior_pred, log_alpha, start, seed, queue, walk_mark, gain_stamp, gain_val,
                 logw, target):
    return _dk.ddcrp_sweep(kdata, kstats, khyper, links, table, ch_head, ch_next, ch_prev,
                           sizes, live, live_pos, free, counters, cnt_before, mode, indptr,
                           indices, log_f, prior_pred, log_alpha, start, seed, queue,
                           walk_mark, gain_stamp, gain_val, logw, target, {reset}, {add},
                           {remove}, {log_predictive}, {log_join_gain})
'''),
    "launch_pass": ("_launch_pass", True, '''\
def _launch_pass{suffix}(kdata, kparams, log_w, labels, block_of, side_of, pins, stages,
                 stage_key, row0, mode, bounds, seeds, codes, acc, cnt, first, rkey, res,
                 logq, block):
    for c in prange(bounds.shape[0] - 1):
        _sk.launch_chunk(kdata, kparams, log_w, labels, block_of, side_of, pins, stages,
                         stage_key, row0, mode, bounds[c], bounds[c + 1], seeds[c], codes,
                         acc[c], cnt[c], first[c], rkey[c], res[c], logq[c],
                         {log_likelihoods}, {accumulate}, block, {score_block},
                         {accumulate_block})
'''),
    "sequential_moves": ("_sequential_moves", True, '''\
def _sequential_moves{suffix}(kdata, kstats, khyper, rows, start, fixed, pins, seeds, scans,
                      lanes, lane_start, codes, logq, counts, logf):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.sequential_lane(kdata, kstats, khyper, rows, start, fixed, pins, seeds, scans,
                            lanes[lane_start[lane]:lane_start[lane + 1]], codes, logq, counts,
                            logf, {reset}, {add}, {remove}, {log_predictive}, {log_marginal})
'''),
    "sequential_multiway": ("_sequential_multiway", False, '''\
def _sequential_multiway{suffix}(kdata, kstats, khyper, rows, fixed, pins, state, codes, logw,
                         counts, logf):
    return _sk.sequential_multiway(kdata, kstats, khyper, rows, fixed, pins, state, codes,
                                   logw, counts, logf, {reset}, {add}, {log_predictive},
                                   {log_marginal})
'''),
    "sams_proposals": ("_sams_proposals", False, '''\
def _sams_proposals{suffix}(kdata, kstats, khyper, labels, n_clusters, top, n_proposals,
                    n_reallocations, state, log_k, log_w, rest, fixed, codes, drawn, out,
                    by_gain):
    return _sk.sams_proposals(kdata, kstats, khyper, labels, n_clusters, top, n_proposals,
                              n_reallocations, state, log_k, log_w, rest, fixed, codes,
                              drawn, out, by_gain, {reset}, {add}, {log_predictive},
                              {log_marginal}, {log_join_gain})
'''),
    "sequential_sides": ("_sequential_sides", True, '''\
def _sequential_sides{suffix}(kdata, kstats, khyper, rows, start, fixed, slot0, n_sides,
                      states, counts, logq, codes, lanes, lane_start, logw, seed, scans):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.sequential_sides_lane(kdata, kstats, khyper, rows, start, fixed, slot0, n_sides,
                                  states, counts, logq, codes,
                                  lanes[lane_start[lane]:lane_start[lane + 1]], logw[lane],
                                  seed, scans, {reset}, {add}, {remove}, {log_predictive})
'''),
    "collapsed_groups": ("_collapsed_groups", True, '''\
def _collapsed_groups{suffix}(kdata, kstats, khyper, rows, start, members, mstart, labels,
                      counts, seeds, lanes, lane_start, logw, log_join, batched):
    for lane in prange(lane_start.shape[0] - 1):
        _sk.collapsed_lane(kdata, kstats, khyper, rows, start, members, mstart, labels,
                           counts, seeds, lanes[lane_start[lane]:lane_start[lane + 1]],
                           logw[lane], log_join, batched, {add}, {remove}, {log_predictive},
                           {log_predictives})
'''),
}
#: the entry points a variant replaces (those on instantiated parameters)
_VARIANT_ENTRIES = ("data_pass", "launch_pass")
#: the operations a spec may leave out, and what stands for them
_DEFAULT_OPS = {"score_block": "_sk.no_score_block",
                "accumulate_block": "_sk.no_accumulate_block",
                "log_predictives": "_sk.no_log_predictives"}
#: every operation a spec names
OPERATIONS = ("reset", "add", "remove", "log_predictive", "log_marginal", "log_join_gain",
              "log_likelihoods", "accumulate", "score_block", "accumulate_block",
              "log_predictives")

_HEADER = '''\
"""Cached entry points of the samplers' kernels for {title}.

GENERATED by ``python -m dpclust.families._entry_specs`` from the template of
:mod:`dpclust.kernels.entry_points`: do not edit (``tests/test_entry_points.py`` fails when
this module differs from what the template makes).  Each function names the operations of
:mod:`dpclust.families.{kernels}` as globals, so that numba caches the compiled sweeps.

Numba finds a cached function stale only when this file changes, not when a kernel it calls
does; so this module carries the digest of every compiled kernel's source, and is written
again (its caches with it) whenever one of them changes.
"""

from __future__ import annotations

#: sha256 of the package's compiled kernels' sources when this module was written
KERNEL_SOURCES = "{digest}"

from numba import njit, prange

from ..kernels import ddcrp as _dk
from ..kernels import gibbs as _generic
from ..kernels import subcluster as _sk
from . import {kernels} as _k
'''


def kernel_sources() -> list:
    """The sources of every compiled kernel the entry points may call, relative to the
    package: each module of :mod:`dpclust.kernels` and :mod:`dpclust.families` that uses
    ``njit``, but the generated entry-point modules and this template (whose changes show
    in the modules themselves)."""
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent
    out = []
    for folder in ("kernels", "families"):
        for path in sorted((package / folder).rglob("*.py")):
            if path.name.endswith("_entry.py") or path == Path(__file__).resolve():
                continue
            if b"njit" in path.read_bytes():
                out.append(path.relative_to(package).as_posix())
    return out


def kernel_sources_digest() -> str:
    """The sha256 of :func:`kernel_sources`, names and contents."""
    import hashlib
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in kernel_sources():
        digest.update(name.encode() + b"\0" + (package / name).read_bytes())
    return digest.hexdigest()


def entry_point(kern, name: str, generic, generic_args=(), cached_args=()):
    """The compiled function ``name`` for a family's numba face ``kern``, with the trailing
    arguments it takes: its cached entry point (``kern.entry_points[name]``, generated from
    this module's template) with ``cached_args``, else the ``generic`` kernel with the
    family's functions ``generic_args``.  Every sampler looks its kernels up here."""
    points = getattr(kern, "entry_points", None)
    if points and name in points:
        return points[name], tuple(cached_args)
    return generic, tuple(generic_args)


def _ops(ops: dict) -> dict:
    unknown = set(ops) - set(OPERATIONS)
    if unknown:
        raise ValueError(f"unknown operations {sorted(unknown)}: the template knows "
                         f"{OPERATIONS}")
    out = {k: f"_k.{v}" for k, v in ops.items()}
    for k, v in _DEFAULT_OPS.items():
        out.setdefault(k, v)
    missing = set(OPERATIONS) - set(out)
    if missing:
        raise ValueError(f"the spec does not name the operations {sorted(missing)}")
    return out


def _function(key: str, ops: dict, suffix: str = "") -> str:
    _, parallel, body = _ENTRIES[key]
    decorator = "@njit(cache=True, parallel=True)" if parallel else "@njit(cache=True)"
    return decorator + "\n" + body.format(suffix=suffix, **ops)


def render(title: str, kernels: str, ops: dict, variant: dict | None = None) -> str:
    """The source of a family's entry-point module.

    Parameters
    ----------
    title : str
        Whose entry points, in words ("the Gaussian family").
    kernels : str
        The family's kernel module in :mod:`dpclust.families` (``"_gaussian_kernels"``).
    ops : dict
        Operation (:data:`OPERATIONS`) -> the name of its function in ``kernels``.
    variant : dict, optional
        ``{"name": "2D", "suffix": "_2d", "ops": {...}}``: the instantiated passes again
        with some operations replaced, collected as ``ENTRY_POINTS_<name>``.
    """
    parts = [_HEADER.format(title=title, kernels=kernels, digest=kernel_sources_digest())]
    parts += [_function(key, _ops(ops)) for key in _ENTRIES]
    table = ",\n".join(f'    "{key}": {name}' for key, (name, _, _) in _ENTRIES.items())
    tail = f"ENTRY_POINTS = {{\n{table},\n}}\n"
    if variant is not None:
        # the base's operations with the variant's; its block scoring is its own or none
        base = {k: v for k, v in ops.items() if k not in _DEFAULT_OPS}
        vops = _ops({**base, **variant["ops"]})
        parts += [_function(key, vops, variant["suffix"]) for key in _VARIANT_ENTRIES]
        changed = ", ".join(f"{key}={_ENTRIES[key][0]}{variant['suffix']}"
                            for key in _VARIANT_ENTRIES)
        tail += f"ENTRY_POINTS_{variant['name']} = dict(ENTRY_POINTS, {changed})\n"
    return "\n\n".join(parts) + "\n\n" + tail
