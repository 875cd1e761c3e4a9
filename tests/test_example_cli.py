"""The shared example command line: selection by id, --list, exit codes, run-mode peek."""
import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


def test_exit_codes_list_and_selection(capsys):
    ran = []
    examples = {"demo::test_ok": lambda: ran.append("ok"),
                "demo::test_bad": lambda: 1 / 0}
    assert run_examples(examples, "Demo.", ["test_ok"]) == 0 and ran == ["ok"]
    assert run_examples(examples, "Demo.", []) == 1
    assert run_examples(examples, "Demo.", ["nope"]) == 2
    assert run_examples(examples, "Demo.", ["--list"]) == 0
    out = capsys.readouterr().out
    assert "✓ demo::test_ok passed" in out and "✗ demo::test_bad failed" in out
    assert "demo::test_ok\ndemo::test_bad" in out


def test_setup_result_reaches_every_example():
    seen = []
    run_examples({"d::t": seen.append}, None, ["--run_mode", "npu"], setup=lambda m: m)
    assert seen == ["npu"]


def test_peek_run_mode():
    assert peek_run_mode(["x.py", "--run_mode", "npu"]) == pypto.RunMode.NPU
    assert peek_run_mode(["x.py", "--run_mode=sim"]) == pypto.RunMode.SIM
    assert peek_run_mode(["x.py"]) == pypto.RunMode.SIM
