"""The exact-posterior tests' chains, run as two independent halves on two cores.

An exact test compares the frequencies of a long chain's partitions with the enumerated
posterior. Two independent chains of half the length, each after its own burn-in, estimate
the same frequencies (no worse: their draws are less correlated than one chain's), and the
second half runs in a worker process while this process runs the first. On five points
every sampler runs on one thread, so the halves take the two cores a test machine has
(under ``make test`` each of its workers, one a core, has a half of its own: the suite's
other tests fill the cores between the exact ones).

The worker is started once (``spawn``: it imports dpclust afresh) and kept for the session;
a test pays its start only once. Each half has its own stream, spawned from the test's
generator, so a test's draws depend on its seed alone.

A test that patches the code under test (the exactness tests' power checks break a term
with ``monkeypatch``) runs its chains in this process only: the worker would run the code
unpatched.  ``conftest.py`` sets :data:`ONE_PROCESS` for every test that uses
``monkeypatch``.
"""

from __future__ import annotations

import copy
import functools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from dpclust.exact import run_chain as _one_chain


def _without_caches(model):
    """A copy of ``model`` without what its cached properties found (compiled kernels
    among them, which do not pickle): the worker finds them again."""
    model = copy.copy(model)
    for klass in type(model).__mro__:
        for name, value in vars(klass).items():
            if isinstance(value, functools.cached_property):
                model.__dict__.pop(name, None)
    return model


#: run the chain here, in one piece (set while a test patches the code under test)
ONE_PROCESS = False


@functools.lru_cache(maxsize=1)
def _worker() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


def run_chain(sampler, model, rng, n_steps: int, *, burn_in: int = 100, thin: int = 1,
              init_kwargs: dict | None = None):
    """:func:`dpclust.exact.run_chain`'s draws (``n_steps - burn_in`` kept, before
    thinning) from two chains of half the length, the second in the worker process."""
    if ONE_PROCESS:
        return _one_chain(sampler, model, rng, n_steps, burn_in=burn_in, thin=thin,
                          init_kwargs=init_kwargs)
    kept = n_steps - burn_in
    first, second = rng.spawn(2)
    lengths = (burn_in + (kept + 1) // 2, burn_in + kept // 2)
    kwargs = {"burn_in": burn_in, "thin": thin, "init_kwargs": init_kwargs}
    future = _worker().submit(_one_chain, sampler, _without_caches(model), second, lengths[1], **kwargs)
    here = _one_chain(sampler, model, first, lengths[0], **kwargs)
    there = future.result()
    if isinstance(here, tuple):  # learned hyperparameters: (draws, hyper)
        return tuple(np.concatenate(pair) for pair in zip(here, there))
    return np.concatenate([here, there])
