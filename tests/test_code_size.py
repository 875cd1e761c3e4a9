"""Size limits that keep the package readable (docs/architecture.md): no module over 500 lines,
no function over 60, reached by splitting ideas apart. A failure names each offender with its
file:line and length.

Exempt, each for its reason: generated or declarative files, whose length is a table's.
"""
import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "pypto"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
DECLARATIVE = {
    # one forwarding method per Tensor op (generated from ops/tensor_api.py METHODS)
    "pypto/frontend/tensor_methods.py",
}


def _modules():
    return sorted(p for p in SRC.rglob("*.py")
                  if p.relative_to(SRC.parent).as_posix() not in DECLARATIVE)


def test_no_module_is_over_500_lines():
    long = [f"{p.relative_to(SRC.parent)}: {n} lines" for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, "modules over 500 lines:\n" + "\n".join(long)


def test_no_function_is_over_60_lines():
    long = []
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.relative_to(SRC.parent)}:{node.lineno} {node.name}: "
                                f"{n} lines")
    assert not long, "functions over 60 lines:\n" + "\n".join(long)


def test_the_exempt_files_exist():
    missing = [f for f in DECLARATIVE if not (SRC.parent / f).exists()]
    assert not missing, missing
