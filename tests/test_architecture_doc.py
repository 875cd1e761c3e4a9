"""docs/architecture.md's call-flow diagram stays true: every module path it names exists under
src/pypto, and it names every package (a new package is drawn, a removed one is erased)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pypto"
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"(?<![\w/.])((?:[a-z_0-9]+/)*[a-z_0-9]+\.(?:py|cpp|toml))\b")


def _diagram() -> str:
    text = DOC.read_text(encoding="utf-8")
    flow = text[text.index("## How a call flows"):]
    start = flow.index("```\n") + 4
    return flow[start:flow.index("```", start)]


def test_every_module_the_diagram_names_exists():
    named = set(PATH.findall(_diagram()))
    assert len(named) > 60
    missing = sorted(p for p in named if not (SRC / p).exists()
                     and not p.startswith(("examples/", "tests/")))
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_the_diagram_names_every_package():
    diagram = _diagram()
    packages = sorted(p.name for p in SRC.iterdir()
                      if p.is_dir() and (p / "__init__.py").exists())
    unnamed = [p for p in packages if f"{p}/" not in diagram]
    assert not unnamed, f"docs/architecture.md's diagram does not show: {unnamed}"
