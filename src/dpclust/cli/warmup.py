"""Compile dpclust's numba kernels before the first fit: ``python -m dpclust.cli.warmup``.

numba compiles a kernel the first time it runs and keeps the machine code on disk (each
module's ``__pycache__``), so that later processes load it instead.  A fresh install has no
cache, and its first fit waits for the compiler (about half a minute on the demo).  This
runs a few iterations of each path a default fit takes, on small data made here (the
bundled ballots for rankings), so that the compiled kernels are on disk before a user's
first fit; ``make install`` runs it with ``--all``, which covers every family and sampler.

Compiling runs on one core, so the cases run in ``--jobs`` processes (one per core by
default), each taking whole families: a family's cases share kernels, which one process then
compiles once.  A case that fails is reported and the others go on (the warm-up never stops
an install).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor


def _gaussian(n=120, d=2):
    from ..datasets import make_gaussian_mixture

    return make_gaussian_mixture(n_samples=n, n_clusters=3, n_features=d, random_state=0)[0]


def _documents():
    from ..datasets import make_documents

    return make_documents(n_docs=80, n_topics=3, vocab_size=60, random_state=0)[0]


def _table():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=80), "yes": rng.random(80) < 0.5,
                       "kind": rng.choice(["a", "b", "c"], size=80)})
    return df.mask(rng.random(df.shape) < 0.1)


def _whole_numbers():
    """Gaussian data recorded to whole numbers: what ``family="auto"`` reads as rounded."""
    import numpy as np

    return np.rint(3.0 * _gaussian())


def _numbers_with_ids():
    """A table of numbers with a respondent id: ``family="auto"`` reads a table (ids left out)."""
    import numpy as np
    import pandas as pd

    X = _gaussian(80)
    return pd.DataFrame({"RespondentID": 1000 + 7 * np.arange(80), "a": X[:, 0], "b": X[:, 1]})


def _counted_rows():
    """A frequency table: distinct rows of categories and how many people gave each."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"sex": rng.choice(["f", "m"], 40), "class": rng.choice(list("abc"), 40)})
    return X, {"sample_weight": rng.integers(1, 30, size=40)}


def _read_only():
    """Gaussian points in a read-only array, as ``numpy.load(..., mmap_mode="r")`` gives
    them: numba compiles its kernels again for arrays it may not write."""
    X = _gaussian()
    X.setflags(write=False)
    return X


def _ballots():
    from ..datasets import load_dublin_west

    X = load_dublin_west()
    return X[:150]


def _subcluster(**kwargs):
    from ..samplers import SubclusterSplitMerge

    return SubclusterSplitMerge(**kwargs)


#: (name, family, sampler, data): what a default fit runs (``"auto"`` picks Gibbs with
#: merge-split moves below 5,000 points, and the sub-cluster sampler from there, whose
#: pass is collapsed on small Gaussian data and instantiated on large; rankings get the
#: coarsened Plackett–Luce sampler), and what the demo runs
DEFAULT_CASES = (
    ("gaussian, gibbs", "gaussian", "gibbs", _gaussian),
    ("gaussian, gibbs+sams", "gaussian", "gibbs+sams", _gaussian),
    ("gaussian, subcluster (collapsed pass)", "gaussian",
     lambda: _subcluster(data_pass="collapsed"), _gaussian),
    ("gaussian, subcluster (instantiated pass)", "gaussian",
     lambda: _subcluster(data_pass="instantiated"), _gaussian),
    ("gaussian 10-D, subcluster (blocked pass)", "gaussian",
     lambda: _subcluster(data_pass="instantiated"), lambda: _gaussian(400, 10)),
    ("documents, gibbs+sams", "multinomial", "gibbs+sams", _documents),
    ("documents, subcluster", "multinomial", "subcluster", _documents),
    ("table with holes, gibbs+sams", "auto", "gibbs+sams", _table),
    ("whole numbers (rounded values), gibbs+sams", "auto", "gibbs+sams", _whole_numbers),
    ("rankings, plackett-luce", "plackett-luce", "auto", _ballots),
)
#: the rest of ``--all`` (a case may end with keyword arguments of the estimator)
MORE_CASES = (
    ("gaussian, explicit", "gaussian", "explicit", _gaussian),
    ("gaussian, fsd", "gaussian", "fsd", _gaussian),
    ("documents, gibbs", "multinomial", "gibbs", _documents),
    ("table with holes, subcluster", "auto", "subcluster", _table),
    ("table with holes, gibbs", "auto", "gibbs", _table),
    ("whole numbers (rounded values), subcluster", "auto", "subcluster", _whole_numbers),
    ("rankings, mallows", "mallows", "auto", _ballots),
    ("rankings, mallows beta-gibbs", "mallows", "beta-gibbs", _ballots),
    ("rankings, plackett-luce gibbs+sams (exposure rows)", "plackett-luce", "gibbs+sams",
     _ballots),
    ("table of numbers with ids, gibbs+sams", "auto", "gibbs+sams", _numbers_with_ids),
    ("frequency table (counted rows), gibbs+sams", "auto", "gibbs+sams", _counted_rows),
    ("gaussian, ddcrp", "gaussian", "ddcrp", lambda: _gaussian(40)),
    ("documents, ddcrp", "multinomial", "ddcrp", _documents),
    ("table with holes, ddcrp", "auto", "ddcrp", _table),
    ("table of numbers (full covariance), ddcrp", "auto", "ddcrp", _numbers_with_ids),
    ("gaussian in a read-only array (a memory-mapped file), gibbs+sams", "gaussian",
     "gibbs+sams", _read_only),
    ("gaussian, subcluster under a Pitman-Yor prior", "gaussian",
     lambda: _subcluster(data_pass="collapsed"), _gaussian, {"prior": "pitman-yor:0.25,1"}),
    ("documents, subcluster under a Pitman-Yor prior", "multinomial", "subcluster",
     _documents, {"prior": "pitman-yor:0.25,1"}),
    ("gaussian, subcluster on partitions (the Dask path)", "gaussian", "subcluster",
     _gaussian, {"partitions": (60, 60)}),
    ("documents, subcluster on partitions (the Dask path)", "multinomial", "subcluster",
     _documents, {"partitions": (40, 40)}),
)


def _estimator(family, sampler, options=None):
    from ..estimators import DDCRPMixture, DPMixture

    if sampler == "ddcrp":
        return DDCRPMixture(family=family, n_iter=4, n_chains=1, random_state=0)
    return DPMixture(family=family, sampler=sampler() if callable(sampler) else sampler,
                     n_iter=4, n_chains=1, random_state=0, **(options or {}))


def warm_up(cases=DEFAULT_CASES, out=sys.stdout) -> dict:
    """Run each case (a few iterations) in this process; returns ``{name: seconds or the
    error}``."""
    took = {}
    for name, family, sampler, data, *options in cases:
        t0 = time.perf_counter()
        try:
            made = data()
            X, fit_kw = made if isinstance(made, tuple) else (made, {})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a few iterations never converge
                _estimator(family, sampler, *options).fit(X, **fit_kw)
            took[name] = time.perf_counter() - t0
            print(f"  {name}: {took[name]:.1f} s", file=out, flush=True)
        except Exception as err:  # noqa: BLE001 - a warm-up never stops an install
            took[name] = f"{type(err).__name__}: {err}"
            print(f"  {name}: not warmed ({took[name]})", file=out, flush=True)
    return took


def share_out(cases, n_jobs: int) -> list[list]:
    """The cases in at most ``n_jobs`` lists: each family's cases together, the families
    with most cases first, each to the list with fewest cases so far."""
    families = {}
    for case in cases:
        families.setdefault(case[1], []).append(case)
    jobs = [[] for _ in range(max(1, min(n_jobs, len(families))))]
    for group in sorted(families.values(), key=len, reverse=True):
        min(jobs, key=len).extend(group)
    return jobs


def _warm_named(names) -> dict:
    """The worker's side of :func:`warm_up_in_processes` (a case's data is a function,
    which does not pickle: the worker finds the cases by name)."""
    known = {case[0]: case for case in DEFAULT_CASES + MORE_CASES}
    return warm_up(tuple(known[name] for name in names))


def warm_up_in_processes(cases=DEFAULT_CASES, n_jobs: int | None = None) -> dict:
    """:func:`warm_up` with the cases shared out (:func:`share_out`) among ``n_jobs``
    fresh processes (default: one per core); the cases must be this module's own.  With
    one process to use (one core, or one family), or where the processes cannot start or
    one dies, the cases run here, one after another."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    jobs = share_out(cases, n_jobs or os.cpu_count() or 1)
    if len(jobs) == 1:
        return warm_up(cases)
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(len(jobs), mp_context=context) as pool:
            done = pool.map(_warm_named, [[case[0] for case in job] for job in jobs])
            return {name: took for part in done for name, took in part.items()}
    except (BrokenProcessPool, OSError) as err:
        print(f"  the processes stopped ({type(err).__name__}: {err}); the cases run here",
              flush=True)
        return warm_up(cases)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dpclust.cli.warmup",
                                description=__doc__.split("\n")[0])
    p.add_argument("--all", action="store_true", help="every family and sampler")
    p.add_argument("--jobs", type=int, default=None,
                   help="processes compiling at once (default: one per core)")
    args = p.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        p.error(f"--jobs must be at least 1, got {args.jobs}")
    cases = DEFAULT_CASES + (MORE_CASES if args.all else ())
    print("dpclust: compiling the kernels of a first fit (kept on disk for later runs)",
          flush=True)
    t0 = time.perf_counter()
    warm_up_in_processes(cases, args.jobs)
    print(f"dpclust: compiled in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
