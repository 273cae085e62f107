"""The numba faces of a family: :class:`FamilyKernel` (the collapsed samplers' per-point
operations) and :class:`PassKernel` (the sub-cluster sampler's pass with instantiated
parameters), pickled with their compiled functions by name."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, NamedTuple


class _Compiled(NamedTuple):
    """A module-level compiled function, pickled by name."""

    module: str
    name: str


def _by_name(value):
    """``value`` with each module-level compiled function in it (or in a dict of them)
    replaced by its name.

    Numba pickles a compiled function by value: the process that unpickles it gets a copy
    that is compiled again, uncached (seconds for a pass, on every Dask worker).  By name,
    that process uses the module's own function and the compilation cached on disk."""
    if isinstance(value, dict):
        return {k: _by_name(v) for k, v in value.items()}
    fn = getattr(value, "py_func", None)
    if fn is not None and getattr(sys.modules.get(fn.__module__), fn.__name__, None) is value:
        return _Compiled(fn.__module__, fn.__name__)
    return value


def _from_name(value):
    """The inverse of :func:`_by_name`."""
    if isinstance(value, dict):
        return {k: _from_name(v) for k, v in value.items()}
    if isinstance(value, _Compiled):
        return getattr(importlib.import_module(value.module), value.name)
    return value


def _rebuild_kernel(cls, fields):
    return cls(*(_from_name(v) for v in fields))


def _reduce_kernel(kernel):
    """``__reduce__`` of the kernels' tuples: their compiled functions by name."""
    return _rebuild_kernel, (type(kernel), tuple(_by_name(v) for v in kernel))


class FamilyKernel(NamedTuple):
    """Numba-compiled per-point operations of a family, for the collapsed samplers.

    The cluster statistics are a tuple of arrays ``kstats`` whose first axis is a cluster
    *slot* (every array, scratch space included, so that samplers can copy, permute and
    grow the slots without knowing the family); ``kdata`` is the family's array representation of the data set and ``khyper``
    a tuple of prior hyperparameter arrays.  Every function is ``@njit``.

    Attributes
    ----------
    data : tuple
        ``kdata``, the data in kernel form (built once per fit).
    hyper : tuple
        ``khyper``, the resolved prior hyperparameters in kernel form.
    alloc : callable
        ``alloc(capacity) -> kstats``: statistics for ``capacity`` empty slots (plain Python).
    reset : callable
        ``reset(kstats, k, khyper)``: make slot ``k`` an empty cluster (the prior).
    add : callable
        ``add(kdata, i, kstats, k, khyper)``: add point ``i`` to slot ``k``.
    remove : callable
        ``remove(kdata, i, kstats, k, khyper)``: remove point ``i`` from slot ``k``.
    log_predictive : callable
        ``log_predictive(kdata, i, kstats, k, khyper) -> float``: ``log f(x_i | X_k)``;
        on an empty slot this is the prior predictive ``log f(x_i)``.
    log_marginal : callable
        ``log_marginal(kstats, k, khyper) -> float``: ``log f(X_k)``.
    entry_points : dict or None
        Optional cached specialisations of the samplers' generic kernels to this family,
        by name (see :func:`dpclust.kernels.gibbs.dispatch`).  Numba caches a compiled
        function on disk only when the functions it calls are globals, not arguments, so a
        family that names its kernels in small module-level wrappers starts in milliseconds
        instead of recompiling the sweeps in every process.  Without them the generic
        kernels are used with the family's functions as arguments (same results).
    log_join_gain : callable or None
        ``log_join_gain(kstats, a, b, khyper) -> float``: ``log f(X_a ∪ X_b) - log f(X_a) -
        log f(X_b)`` without changing either slot, in time independent of the number of
        points (the ddCRP's customer sampler joins whole tables).  Optional: the ddCRP
        needs it, the other samplers do not.
    alloc_by_point : callable or None
        ``alloc_by_point(capacity) -> kstats``: the same statistics laid out for a pass in
        which each point reads every slot in turn (the sub-cluster sampler's collapsed
        pass), where ``alloc`` suits whole slots read at once (marginals, resets).  The
        multinomial's word counts are slot-minor here, so that one word's counts in all
        the slots share cache lines.  Optional: ``alloc`` serves both by default.
    log_predictives : callable or None
        ``log_predictives(kdata, i, kstats, slots, lo, m, khyper, out)``: ``out[a] =
        log_predictive(kdata, i, kstats, slots[lo + a], khyper)`` for ``a < m``, the same
        values from one call (a document's words read once for all the slots).  Optional:
        the collapsed pass calls ``log_predictive`` slot by slot without it.
    """

    data: tuple
    hyper: tuple
    alloc: Callable[[int], tuple]
    reset: Any
    add: Any
    remove: Any
    log_predictive: Any
    log_marginal: Any
    entry_points: dict | None = None
    log_join_gain: Any = None
    alloc_by_point: Callable[[int], tuple] | None = None
    log_predictives: Any = None

    __reduce__ = _reduce_kernel


class PassKernel(NamedTuple):
    """Numba face of a family for samplers with instantiated parameters (the sub-cluster
    sampler's data pass, :mod:`dpclust.kernels.subcluster`).

    Parameters are drawn with the NumPy face (``sample_posterior``) and packed once per
    iteration into ``kparams``, a tuple of arrays whose first axis is the component; the pass
    then evaluates ``log f(x_i; theta_k)`` per point and accumulates each point's *raw*
    sufficient statistics (plain sums, one row of ``n_stats`` floats per slot), which
    ``unpack`` turns into the family's batched statistics.

    Attributes
    ----------
    data : tuple
        ``kdata``, the data in the pass's form.
    n_stats : int
        Width of one row of raw statistics.
    pack : callable
        ``pack(params) -> kparams`` (plain Python).
    unpack : callable
        ``unpack(acc) -> stats`` for ``acc`` of shape (S, n_stats) (plain Python).
    log_likelihood : callable
        ``log_likelihood(kdata, i, kparams, comps, start, m, out)``: ``out[a] = log f(x_i;
        theta_{comps[start + a]})`` for ``a < m`` (one call per point, so that the point is
        loaded once), ``@njit``.
    accumulate : callable
        ``accumulate(kdata, i, acc, slot)``: add point i's raw statistics to ``acc[slot]``,
        ``@njit``.
    entry_points : dict or None
        Cached specialisations of the pass to this family (see :class:`FamilyKernel`);
        they take ``block`` as their last argument.
    block : int, default=0
        Points scored at a time with ``score_block`` (0: one at a time with
        ``log_likelihood``).
    score_block : callable or None
        ``score_block(kdata, kparams, rows, s, e, comps, c0, c1, out, col0, base)``: ``out[rows[r]
        - base, col0 + a - c0] = log f(x_{rows[r]}; theta_{comps[a]})`` for ``s <= r < e`` and
        ``c0 <= a < c1`` (see :mod:`dpclust.kernels.subcluster`), ``@njit``.
    accumulate_block : callable or None
        ``accumulate_block(kdata, rows, s, e, acc, slot)``: add the raw statistics of the
        points ``rows[s:e]`` to ``acc[slot]``, ``@njit`` (with ``score_block``).
    """

    data: tuple
    n_stats: int
    pack: Callable
    unpack: Callable
    log_likelihood: Any
    accumulate: Any
    entry_points: dict | None = None
    block: int = 0
    score_block: Any = None
    accumulate_block: Any = None

    __reduce__ = _reduce_kernel
