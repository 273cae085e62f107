"""The install-time warm-up (``python -m dpclust.cli.warmup``): it runs each default path,
and a case that fails is reported without stopping the others (never an install)."""

import ast
import io
from pathlib import Path

import pytest

from dpclust.cli.warmup import DEFAULT_CASES, warm_up


def test_warm_up_runs_every_case_and_survives_a_broken_one():
    def broken():
        raise OSError("no such data")

    cases = (DEFAULT_CASES[0], ("broken", "gaussian", "gibbs", broken), DEFAULT_CASES[5])
    out = io.StringIO()
    took = warm_up(cases, out=out)
    assert isinstance(took[DEFAULT_CASES[0][0]], float)
    assert isinstance(took[DEFAULT_CASES[5][0]], float)
    assert took["broken"] == "OSError: no such data"
    assert "broken: not warmed (OSError: no such data)" in out.getvalue()


def test_the_default_cases_cover_the_default_paths():
    names = " ".join(c[0] for c in DEFAULT_CASES)
    for path in ("gaussian, gibbs", "gibbs+sams", "collapsed pass", "instantiated pass",
                 "blocked pass", "documents", "table", "rankings"):
        assert path in names


def _signature_takes_a_function(sig):
    from numba.core import types

    return any(isinstance(t, (types.Dispatcher, types.FunctionType)) for t in sig)


@pytest.mark.slow
def test_no_kernel_cached_on_disk_takes_a_function_argument():
    """Numba keys a compilation whose arguments are compiled functions by the functions'
    identity: cached on disk, a new process never finds it again and every run adds an entry
    to the index, until writing the index fails (``ReferenceError: underlying object has
    vanished``).  A family without entry points runs the generic kernels with its functions
    as arguments, through every sampler; after that no cached kernel has such a signature."""
    import sys
    import warnings

    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    from dpclust import DDCRPMixture, DPMixture
    from dpclust.datasets import make_gaussian_mixture
    from dpclust.families import NormalInverseWishart

    class Generic(NormalInverseWishart):
        def kernel(self, X, n_max=None):
            return super().kernel(X, n_max)._replace(entry_points=None)

        def pass_kernel(self, X, summary=None):
            return super().pass_kernel(X, summary)._replace(entry_points=None)

    X, _ = make_gaussian_mixture(300, 3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for kw in (dict(sampler="gibbs+sams"), dict(sampler="subcluster"),
                   dict(sampler="subcluster", partitions=2)):
            DPMixture(family=Generic(), n_chains=1, n_iter=4, random_state=0, **kw).fit(X)
        DDCRPMixture(family=Generic(), n_chains=1, n_iter=2, random_state=0).fit(X[:40])
    offenders = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("dpclust"):
            continue
        for attr, obj in vars(module).items():
            if (isinstance(obj, CPUDispatcher) and not isinstance(obj._cache, NullCache)
                    and any(_signature_takes_a_function(s) for s in obj.signatures)):
                offenders.append(f"{name}.{attr}")
    assert not offenders, offenders


def _function_arguments(kernels):
    """For each kernel's name, the positions of the arguments it calls (or passes on to a
    position another kernel calls), found by iterating to a fixed point."""
    found = {name: set() for _, name in kernels}
    changed = True
    while changed:
        changed = False
        for (_, name), node in kernels.items():
            params = [a.arg for a in node.args.args]
            for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
                f = call.func
                callee = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                hits = {f.id} if isinstance(f, ast.Name) and f.id in params else set()
                hits |= {a.id for j, a in enumerate(call.args)
                         if isinstance(a, ast.Name) and j in found.get(callee, ())}
                new = {params.index(h) for h in hits if h in params} - found[name]
                if new:
                    found[name] |= new
                    changed = True
    return found


def test_no_cached_kernel_calls_an_argument():
    """The quick form of the test above, read from the source: no kernel cached on disk
    calls one of its arguments, or passes one on to a kernel that calls it."""
    src = Path(__file__).resolve().parents[1] / "src" / "dpclust"
    kernels, cached = {}, set()
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            decorators = [ast.unparse(d) for d in getattr(node, "decorator_list", ())]
            if isinstance(node, ast.FunctionDef) and any("jit" in d for d in decorators):
                kernels[(path.stem, node.name)] = node
                if any("cache=True" in d for d in decorators):
                    cached.add((path.stem, node.name))
    found = _function_arguments(kernels)
    assert found["collapsed_sweep"] and found["chunk_pass"]  # the check sees the generic ones
    offenders = sorted(f"{m}.{n}" for m, n in cached if found[n])
    assert not offenders, offenders


def test_kernels_pickle_their_compiled_functions_by_name(tmp_path):
    """A Dask worker (or any other process) that unpickles a family's kernels gets the
    modules' own compiled functions, whose compilations numba has cached, not copies that
    it compiles again (seconds a pass on every worker)."""
    import subprocess
    import sys
    import warnings

    cloudpickle = pytest.importorskip("cloudpickle")
    from dpclust import DPMixture
    from dpclust.datasets import make_gaussian_mixture

    X, _ = make_gaussian_mixture(200, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        family = DPMixture(n_chains=1, n_iter=2, random_state=0).fit(X).family_
    path = tmp_path / "kernels.pkl"
    path.write_bytes(cloudpickle.dumps((family.kernel(X), family.pass_kernel(X))))
    check = (
        "import pickle, sys\n"
        "from numba.core.registry import CPUDispatcher\n"
        "for kern in pickle.loads(open(sys.argv[1], 'rb').read()):\n"
        "    fns = [v for v in kern if isinstance(v, CPUDispatcher)]\n"
        "    fns += list(kern.entry_points.values())\n"
        "    for fn in fns:\n"
        "        m = sys.modules[fn.py_func.__module__]\n"
        "        assert getattr(m, fn.__name__) is fn, fn\n"
        "print('same', len(fns))\n")
    out = subprocess.run([sys.executable, "-c", check, str(path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("same")


def test_share_out_keeps_a_family_together_and_balances_the_jobs():
    from dpclust.cli.warmup import MORE_CASES, share_out

    cases = DEFAULT_CASES + MORE_CASES
    jobs = share_out(cases, 2)
    assert len(jobs) == 2
    assert sorted(c[0] for job in jobs for c in job) == sorted(c[0] for c in cases)
    for family in {c[1] for c in cases}:  # each family's kernels compiled by one process
        assert sum(any(c[1] == family for c in job) for job in jobs) == 1
    assert abs(len(jobs[0]) - len(jobs[1])) <= 3
    assert len(share_out(cases[:2], 8)) == 1  # never more processes than families


def test_the_cases_warm_up_in_two_processes():
    from dpclust.cli.warmup import warm_up_in_processes

    cases = (DEFAULT_CASES[0], DEFAULT_CASES[5])  # a Gaussian case and a documents one
    took = warm_up_in_processes(cases, n_jobs=2)
    assert set(took) == {c[0] for c in cases}
    assert all(isinstance(t, float) for t in took.values()), took


def test_a_worker_that_dies_leaves_the_cases_to_this_process(monkeypatch):
    """The warm-up never stops an install: a broken pool of processes falls back to
    running the cases here."""
    from concurrent.futures.process import BrokenProcessPool

    import dpclust.cli.warmup as warmup

    class Broken:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            raise BrokenProcessPool("a worker died")

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(warmup, "ProcessPoolExecutor", Broken)
    took = warmup.warm_up_in_processes((DEFAULT_CASES[0],), n_jobs=2)
    assert isinstance(took[DEFAULT_CASES[0][0]], float)


def test_a_case_may_end_with_the_estimators_options():
    from dpclust.cli.warmup import MORE_CASES, _estimator

    with_options = [case for case in MORE_CASES if len(case) == 5]
    assert {"prior", "partitions"} <= {k for case in with_options for k in case[4]}
    for _, family, sampler, _, options in with_options:
        params = _estimator(family, sampler, options).get_params()
        assert all(params[k] == v for k, v in options.items())
    assert all(len(case) in (4, 5) for case in MORE_CASES)
