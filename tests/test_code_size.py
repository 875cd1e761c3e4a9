"""Size limits that keep the package readable (docs/architecture.md): no module over 600 lines,
no function over 80. A failure names each offender with its file:line and length."""
import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "pypto"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _modules():
    return sorted(SRC.rglob("*.py"))


def test_no_module_is_over_600_lines():
    long = [f"{p.relative_to(SRC.parent)}: {n} lines" for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, "modules over 600 lines:\n" + "\n".join(long)


def test_no_function_is_over_80_lines():
    long = []
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.relative_to(SRC.parent)}:{node.lineno} {node.name}: "
                                f"{n} lines")
    assert not long, "functions over 80 lines:\n" + "\n".join(long)
