"""The package's imports point down the layers, and no module imports itself in a circle.

Every module of ``src/dpclust`` sits in one layer of :data:`LAYERS` (the longest matching
prefix decides, and every prefix names a module); an import, at module level or inside a
function, may name a module of the same layer or a lower one, and imports, at module level
or inside functions, form no circle.  No function is over :data:`FUNCTION_LINES` lines
unless its docstring says why ("long on purpose").  This is the architecture of the
README's "Layout" section, checked on the source (``ast``), not on a running interpreter.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "dpclust"

#: bottom first; a module may import modules of its own layer or of layers before it
LAYERS = [
    # 0: array-only numba kernels and small utilities
    ("dpclust.kernels", "dpclust.utils", "dpclust.partitions", "dpclust.metrics",
     "dpclust.diagnostics", "dpclust.data", "dpclust._version"),
    # 1: what a model is made of: component families, partition priors, ranking data
    ("dpclust.families", "dpclust.priors", "dpclust.rankings", "dpclust.tables", "dpclust.ddcrp.decay",
     "dpclust.ddcrp.distances", "dpclust.ddcrp.prior"),
    # 2: exact posteriors on tiny data, and posterior summaries that need the family (fused
    # clusters compare its components)
    ("dpclust.exact", "dpclust.fusion"),
    # 3: samplers
    ("dpclust.samplers", "dpclust.ddcrp"),
    # 4: the chain runner: trace, driver, processes, checkpoints, calibration
    ("dpclust.chains", "dpclust._chains", "dpclust.calibration", "dpclust.validation"),
    # 5: the same chains on a Dask cluster
    ("dpclust.distributed",),
    # 6: estimators
    ("dpclust.estimators", "dpclust.estimator", "dpclust.ddcrp.estimator",
     "dpclust.ddcrp.evidence"),
    # 7: reading files and bundled or generated data
    ("dpclust.io", "dpclust.datasets"),
    # 8: the HTML report and its figures
    ("dpclust.report",),
    # 9: the command line, and the package's front door
    ("dpclust.cli", "dpclust.__main__", "dpclust"),
]

#: imports that point up on purpose: each a lazy alias kept so that an old import path
#: still works (the module named on the left re-exports a name that moved up)
ALIASES: set[tuple[str, str]] = {
    ("dpclust.rankings", "dpclust.io"),  # dpclust.rankings.read_rankings_csv, read_preflib
    ("dpclust.ddcrp", "dpclust.estimators.ddcrp"),  # dpclust.ddcrp.DDCRPMixture, ...
    ("dpclust.ddcrp", "dpclust.estimators.evidence"),  # dpclust.ddcrp.log_evidence, ...
}

#: what the redesign (issue 31) has not reached yet; an entry that no longer applies fails
#: the test, so the list only shrinks
PENDING_UPWARD: set[tuple[str, str]] = set()
PENDING_CIRCLES: set[str] = set()
PENDING_LONG: set[str] = set()
#: functions over this many lines say why in their docstring
FUNCTION_LINES = 120
PENDING_LONG_FUNCTIONS: set[str] = set()


def _check(found: set, pending: set, what: str):
    new, gone = sorted(found - pending), sorted(pending - found)
    assert not new, f"{what}:\n" + "\n".join(map(str, new))
    assert not gone, (f"fixed, so remove from the pending list of {__file__}:\n"
                      + "\n".join(map(str, gone)))


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def _imports(module: str, path: Path):
    """``(target, top_level)`` for every dpclust module that ``module`` imports."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    top = {id(n) for n in tree.body}
    for block in tree.body:  # imports under `if TYPE_CHECKING:` at module level count too
        if isinstance(block, ast.If):
            top.update(id(n) for n in block.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod
                     for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "dpclust" and name != module:
                yield name, id(node) in top


def _graph():
    return {m: sorted(set(_imports(m, p))) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_imports_point_down():
    upward = set()
    for module, targets in _graph().items():
        for target, _ in targets:
            if layer_of(target) > layer_of(module) and (module, target) not in ALIASES:
                upward.add((module, target))
    _check(upward, PENDING_UPWARD, "imports that point up (module, target)")


def test_every_layer_name_is_a_module():
    stale = {p for prefixes in LAYERS for p in prefixes
             if not any(m == p or m.startswith(p + ".") for m in MODULES)}
    assert not stale, f"layer names that are no module: {sorted(stale)}"


def test_no_import_circles():
    """No circle, counting imports inside functions too (a lazy import is an import)."""
    graph = {m: {t for t, _ in ts if t in MODULES} for m, ts in _graph().items()}
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                circles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    _check(set(circles), PENDING_CIRCLES, "import circles")


@pytest.mark.parametrize("limit", [800])
def test_modules_are_small(limit):
    """No module over ~800 lines unless its first lines say why (compiled kernels whose
    splitting would cost speed)."""
    long = set()
    for module, path in MODULES.items():
        text = path.read_text()
        n = len(text.splitlines())
        if n > limit and "long on purpose" not in "\n".join(text.splitlines()[:40]):
            long.add(module)
    _check(long, PENDING_LONG, f"modules over {limit} lines")


def test_functions_are_short():
    """No function over :data:`FUNCTION_LINES` lines unless its docstring says it is long
    on purpose (a compiled loop whose splitting would cost speed)."""
    long = set()
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.end_lineno - node.lineno + 1 <= FUNCTION_LINES:
                continue
            if "long on purpose" not in (ast.get_docstring(node) or "").lower():
                long.add(f"{module}.{node.name}")
    _check(long, PENDING_LONG_FUNCTIONS, f"functions over {FUNCTION_LINES} lines")

