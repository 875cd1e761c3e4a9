"""The package's import structure: every module imports on its own, imports point down the
layer order only, and the package graph has no cycle.

The layer order is `LAYERS` (base modules, machine, ir, frontend, ops, passes, runtime,
profiling, toolkit, driver, tune, top): a module may import from its own package and from lower
layers, never upward (lazy in-function imports count too), so a layer can be read, tested and
replaced without the ones above it.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
import textwrap

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "pypto"

LAYERS = {
    **dict.fromkeys(
        ["errors", "_version", "dtypes", "enums", "symbolic", "_config", "gc_pause", "box_grid"], 1
    ),
    "machine": 2,
    "ir": 3,
    "frontend": 4,
    "ops": 5,
    "passes": 6,
    "runtime": 7,
    "profiling": 8,
    "toolkit": 9,
    **dict.fromkeys(["driver", "call_record"], 10),
    "tune": 11,
    **dict.fromkeys(["pypto", "compat", "experimental", "testing", "cli", "moved_modules",
                     "calibration"], 12),
}


def _modules() -> dict[str, pathlib.Path]:
    """Every module under src/pypto by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ("pypto",) + path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _unit(module: str) -> str:
    """The layer unit a module belongs to: its subpackage or base module, or `pypto` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pypto"


def _targets(module: str, path: pathlib.Path, node: ast.AST) -> list[str]:
    """The pypto modules an import statement loads (`from p import m` names module p.m)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "pypto"]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".")
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        full = ".".join(base + ([node.module] if node.module else []))
    else:
        full = node.module or ""
    if full.split(".")[0] != "pypto":
        return []
    named = [f"{full}.{a.name}" for a in node.names if f"{full}.{a.name}" in MODULES]
    return named if len(named) == len(node.names) else [full] + named


def _edges() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every pypto import in src, lazy ones included."""
    edges = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges += [(module, t, node.lineno) for t in _targets(module, path, node)]
    return edges


def _upward(a: str, b: str) -> bool:
    return LAYERS.get(_unit(b), 99) > LAYERS.get(_unit(a), 0)


def _listing(edges) -> str:
    return "\n".join(f"  {a} -> {b}  ({MODULES[a].relative_to(SRC.parent)}:{line})"
                      + ("  UPWARD" if _upward(a, b) else "") for a, b, line in sorted(edges))


def test_every_unit_has_a_layer():
    units = {_unit(m) for m in MODULES}
    assert units <= set(LAYERS), f"not in the layer order: {sorted(units - set(LAYERS))}"


def test_imports_point_down_the_layer_order():
    upward = [(a, b, line) for a, b, line in _edges() if _upward(a, b)]
    assert not upward, "imports against the layer order:\n" + _listing(upward)


def _cycle_edges(edges) -> list[tuple[str, str, int]]:
    """The module edges whose two units lie in one strongly connected component."""
    graph: dict[str, set[str]] = {}
    for a, b, _ in edges:
        if _unit(a) != _unit(b):
            graph.setdefault(_unit(a), set()).add(_unit(b))

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reach = {u: reaches(u) for u in graph}
    return [(a, b, line) for a, b, line in edges
            if _unit(a) != _unit(b) and _unit(a) in reach.get(_unit(b), ())]


def test_package_import_graph_is_acyclic():
    cyclic = _cycle_edges(_edges())
    assert not cyclic, "import edges on a package cycle:\n" + _listing(cyclic)


def _outside_libraries() -> list[str]:
    """The stdlib and third-party modules src imports at module level (torch stays lazy)."""
    names = set()
    for path in MODULES.values():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names - {"pypto", "__future__"}
                  if n in sys.stdlib_module_names or n in {"numpy", "ml_dtypes"})


# Each child is forked from a server that has loaded the libraries src uses but no pypto
# module, so every module is imported first, on its own, at the cost of a fork.
_FORK_SERVER = textwrap.dedent(
    """
    import importlib, os, sys, traceback, types
    preload, src, *names = sys.argv[1:]
    for lib in preload.split(","):
        importlib.import_module(lib)
    failed = 0
    for name in names:
        pid = os.fork()
        if pid == 0:
            stub = types.ModuleType("pypto")
            stub.__path__ = [src]
            sys.modules["pypto"] = stub
            try:
                importlib.import_module(name)
            except BaseException:
                where = traceback.extract_tb(sys.exc_info()[2])[-1]
                why = traceback.format_exc().strip().splitlines()[-1]
                print(f"  {name}: {why}  ({where.filename}:{where.lineno})", flush=True)
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        failed += status != 0
    sys.exit(1 if failed else 0)
    """
)


def test_every_module_imports_on_its_own():
    names = [m for m in MODULES if m != "pypto" and not m.endswith(".__main__")]
    preload = ",".join(_outside_libraries())
    procs = [subprocess.Popen([sys.executable, "-c", _FORK_SERVER, preload, str(SRC), *chunk],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for chunk in (names[::2], names[1::2])]       # two servers: the cores we have
    outputs = [p.communicate()[0] for p in procs]
    failed = "".join(outputs)
    assert all(p.returncode == 0 for p in procs), f"modules that fail to import first:\n{failed}"


def test_the_checks_see_lazy_relative_imports_and_cycles():
    node = ast.parse("def f():\n    from ..toolkit import viewer\n").body[0].body[0]
    assert _targets("pypto.profiling.output", SRC / "profiling" / "output.py", node) == [
        "pypto.toolkit.viewer"
    ]
    ring = [("pypto.ir.a", "pypto.ops.b", 1), ("pypto.ops.b", "pypto.ir.c", 2)]
    assert _cycle_edges(ring + [("pypto.toolkit", "pypto.ir.a", 3)]) == ring


def test_no_two_modules_import_each_other():
    """Not even for type hints or lazily: a helper split from its host by size, taking the host
    as its argument, is one idea in two files (split by idea, or give the helper a narrow
    interface: expand_matmul.TileBuilder, fusion's TensorOps, toolkit/findings.py)."""
    edges = {(a, b) for a, b, _ in _edges()}
    pairs = sorted((a, b) for a, b in edges if a < b and (b, a) in edges)
    assert not pairs, f"modules importing each other: {pairs}"
