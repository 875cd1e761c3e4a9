"""Every tuning case under examples/tuning/ computes the right numbers in all its variants,
and its "after" beats its "before" on the guide's metric, or the case says why our model
disagrees (`Case.disagreement`).

The scripts are imported as modules (not run as programs: tests/examples/test_examples.py does
that) and run through `run_case` without writing run folders.
"""
import importlib.util
from pathlib import Path

import pytest

from pypto.tune.cases import METRICS, Case, main, run_case

pytestmark = pytest.mark.examples

TUNING_DIR = Path(__file__).resolve().parents[2] / "examples" / "tuning"
SCRIPTS = sorted(p.name for p in TUNING_DIR.glob("[0-9]*.py"))


def _case(script: str) -> Case:
    spec = importlib.util.spec_from_file_location(f"tuning_{Path(script).stem}",
                                                  TUNING_DIR / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASE


def test_cases_found() -> None:
    """The cases of the tuning guide are all there."""
    assert len(SCRIPTS) >= 15, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_tuning_case(script: str, tmp_path: Path) -> None:
    """Numerics match the golden in every variant; the verdict holds or is explained."""
    case = _case(script)
    assert case.slug == Path(script).stem
    assert case.metric in METRICS and len(case.variants) >= 2
    result = run_case(case, str(tmp_path), write=False)
    assert not result.failures, result.failures
    assert result.holds or case.disagreement, result.verdict
    assert len(result.measured) == len(case.variants)


def test_swimlane_flag_is_accepted_and_no_write_excludes_it(capsys) -> None:
    """The examples' --swimlane / --open are accepted; with --no-write they are an error."""
    case = _case(SCRIPTS[0])
    with pytest.raises(SystemExit) as e:
        main(case, ["--no-write", "--swimlane"])
    assert e.value.code == 2 and "--no-write" in capsys.readouterr().err


def test_written_run_folders_have_the_graph_tab(tmp_path: Path) -> None:
    """Each variant's run folder holds the compile dumps, so its swimlane page has a Graph tab
    (graph.html beside swimlane.html), and the case's diff page is written."""
    result = run_case(_case("06_vec_tile_size.py"), str(tmp_path))
    for m in result.measured:
        folder = Path(m.folder)
        assert (folder / "graph.html").is_file() and (folder / "swimlane.html").is_file()
        assert list(folder.glob("After_*_ROOT.json")), sorted(p.name for p in folder.iterdir())
    assert result.diff_html and Path(result.diff_html).is_file()
