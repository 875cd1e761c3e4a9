"""The differential fuzzer (pypto.testing.fuzz): its generator, golden, runner and minimizer,
and a fixed-seed batch of random kernels that must all match the golden."""
from __future__ import annotations

import json
import subprocess
import sys

import os
import tempfile

import pytest
import torch

from pypto.testing.fuzz import FAMILIES, generate, minimize, run_batch, script
from pypto.testing.fuzz.campaign import save
from pypto.testing.fuzz.case import Case, Line, Param
from pypto.testing.fuzz.cli import main, parse
from pypto.testing.fuzz.golden import COMPARE, FDIV, SL, UNROLL, VIEW, GoldenUndefined, R
from pypto.testing.fuzz.runner import Pool

# ---- the fixed-seed batch (CI) ------------------------------------------------------------
# 300 kernels take ~25 s with two workers on the 2-core dev machine.
CI_SEED, CI_COUNT = 13, 300


def test_fixed_seed_batch_matches_the_golden(tmp_path):
    """Every kernel of the CI batch matches the golden in the tile executor, the reference
    executor and the checked mode, or (if invalid on purpose) raises a named pypto error; no
    internal error, no crash. Failures are minimized and saved for the report."""
    summary = run_batch(CI_SEED, CI_COUNT, jobs=2, timeout=10.0, out_dir=str(tmp_path),
                        minimize_seconds=30.0)
    bad = [f"{f['name']} [{f['family']}] {f['outcome']}: {f['detail']} {f['culprit']} "
           f"-> {f.get('saved')}" for f in summary.failures if f["outcome"] != "slow"]
    assert not bad, "\n".join(bad)
    assert summary.outcomes["ok"] > 0.8 * CI_COUNT
    assert summary.outcomes["expected_error"] > 0


# ---- generator ------------------------------------------------------------------------------

def test_generator_is_deterministic_per_seed():
    """The same (seed, index) renders the same script; another seed gives other kernels."""
    a = [script(generate(4, i)) for i in range(30)]
    assert a == [script(generate(4, i)) for i in range(30)]
    assert a != [script(generate(5, i)) for i in range(30)]


def test_generator_covers_every_family_and_restricts():
    """A few hundred kernels of one seed use every family; --families restricts the choice."""
    seen = {generate(0, i).family for i in range(400)}
    assert seen == set(FAMILIES)
    assert {generate(0, i, ["loop", "matmul"]).family for i in range(40)} == {"loop", "matmul"}


def test_generated_kernels_use_the_public_api():
    """Kernels are plain user code: jit, Tensor annotations, tile shapes, loops, views."""
    text = "\n".join(script(generate(0, i)) for i in range(800))
    for needle in ("@pypto.frontend.jit", "pypto.Tensor([pypto.DYNAMIC", "pypto.DT_BF16",
                   "pypto.set_vec_tile_shapes(", "pypto.set_cube_tile_shapes(",
                   "enable_split_k=True", "a_trans=True", "pypto.loop(", "pypto.loop_unroll(",
                   "valid_shape=", "if pypto.is_loop_begin(i)", "inplace=True",
                   "pypto.concat(", "pypto.transpose(", "pypto.assemble(", "pypto.cast(",
                   "keepdim=True", "pypto.floor_div(", "pypto.scatter_(", "pypto.index_add(",
                   "pypto.scatter_update(", "def kernel2(", "'stitch_function_max_num':",
                   "out0[i - 1:i, :]"):
        assert needle in text, needle


# ---- golden ---------------------------------------------------------------------------------

def test_golden_rounds_per_op_to_the_dtype():
    """R rounds to nearest even in the op's dtype and widens back to float64."""
    x = torch.tensor([1 + 2 ** -9, 1 + 3 * 2 ** -11, 1 + 2 ** -11], dtype=torch.float64)
    assert R(x, "bf16").tolist() == [1.0, 1.0, 1.0]
    assert R(x, "fp16").tolist() == [1 + 2 ** -9, 1 + 2 ** -9, 1.0]
    assert R(x, "fp32").tolist() == x.tolist()
    assert R(x, "fp16").dtype == torch.float64
    # a BF16 chain rounded per op differs from one rounded once at the end
    a = torch.tensor([1.0], dtype=torch.float64)
    u = 2 ** -7  # the BF16 spacing at 1
    per_op = R(R(a + 0.4 * u, "bf16") + 0.4 * u, "bf16")
    assert per_op.item() == 1.0 and R(a + 0.8 * u, "bf16").item() == 1 + u
    with pytest.raises(GoldenUndefined):
        R(torch.tensor([2 ** 31]), "int32")


def test_golden_undefined_cases_and_unroll_order():
    """Division by zero, slices past the end and negative valid extents have no golden;
    UNROLL lists loop_unroll's (index, factor) pairs."""
    with pytest.raises(GoldenUndefined, match="floor_div by zero"):
        FDIV(torch.tensor([4]), torch.tensor([0]))
    assert FDIV(torch.tensor([-7]), 2).tolist() == [-4]
    x = torch.zeros(16, 4, dtype=torch.float64)
    with pytest.raises(GoldenUndefined, match="slice"):
        SL(x, [8, 0], [24, 4])
    with pytest.raises(GoldenUndefined, match="valid extent -1"):
        VIEW(x, [4, 4], [16, 0], [-1, 4])
    assert VIEW(x, [4, 4], [14, 0], [2, 4]).shape == (2, 4)
    assert list(UNROLL(0, 11, [4, 2])) == [(0, 4), (4, 4), (8, 2), (10, 1)]


def test_golden_compares_within_twice_the_kernels_bound():
    """Floats within twice the forward error bound; ints exactly (unless bounded); NaN
    matches NaN; an infinite bound accepts anything."""
    import numpy as np
    want = torch.tensor([1.0, 100.0, float("nan")], dtype=torch.float64)
    half_ulp = np.array([2.0 ** -9, 2.0 ** -2, 0.0])      # BF16 at 1 and at 100
    assert COMPARE("o", want.to(torch.bfloat16), want, "bf16", half_ulp) is None
    bad = COMPARE("o", (want * 1.05).to(torch.bfloat16), want, "bf16", half_ulp)
    assert "2 of 3 elements differ" in bad and "allowed" in bad
    assert COMPARE("o", want * 1.05, want, "fp32", np.array([np.inf] * 3)) is None
    ints = torch.tensor([3, 4])
    assert COMPARE("o", ints.to(torch.int32), ints, "int32", np.zeros(2)) is None
    assert "1 of 2" in COMPARE("o", torch.tensor([3, 5], dtype=torch.int32), ints, "int32",
                               np.zeros(2))


# ---- runner ---------------------------------------------------------------------------------

def _case(lines, golden="", expect=None, name_index=0):
    """A one-output FP32 [8, 16] kernel of the given lines (golden text on the last line)."""
    body = [Line("", "", tile=[8, 16])] + [Line(k, g) for k, g in lines]
    params = [Param("x0", "fp32", "in", [8, 16]), Param("out0", "fp32", "out", [8, 16])]
    return Case(99, name_index, "synthetic", params, body, [{"x0": [8, 16], "out0": [8, 16]}],
                expect)


def test_runner_classifies_every_outcome():
    """ok, mismatch (a wrong golden), internal_error (a non-pypto exception), expected_error
    (an invalid kernel raising a pypto error), slow (killed once it used the timeout in CPU
    seconds), crash (the worker dies)."""
    ok = _case([("out0[:] = x0 * 2.0", "ASM(out0, R(x0 * 2.0, 'fp32'), [0, 0])")])
    wrong = _case([("out0[:] = x0 * 2.0", "ASM(out0, R(x0 * 3.0, 'fp32'), [0, 0])")], 0, None, 1)
    boom = _case([("out0[:] = x0 * undefined_name", "")], 0, None, 2)
    invalid = _case([("out0[:] = pypto.reshape(x0, [8, 15])", "")], 0, "PyptoError", 3)
    slow = _case([("sum(iter(int, 1))", "")], 0, None, 4)  # spins forever
    crash = _case([("__import__('os')._exit(3)", "")], 0, None, 5)
    with Pool(jobs=2, timeout=4.0) as pool:
        got = {c.index: r for c, r in pool.run([ok, wrong, boom, invalid, slow, crash])}
    assert got[0].outcome == "ok" and got[0].modes == dict.fromkeys(
        ("tile", "reference", "checked", "timeline"), "ok")
    assert got[1].signature == ("mismatch", "tile+reference+checked")
    assert "out0: 128 of 128 elements differ" in got[1].detail
    assert got[2].signature == ("internal_error", "NameError")
    assert got[3].outcome == "expected_error" and got[3].error.startswith("Pypto")
    assert got[4].signature == ("slow", "timeout")
    assert got[5].outcome == "crash"


def test_saved_case_is_a_self_contained_script(tmp_path):
    """A saved case runs on its own (python case_x.py): it checks every execution against the
    golden with torch and exits 0 when they match, non-zero when they do not."""
    good = _case([("out0[:] = pypto.exp(x0)", "ASM(out0, R(torch.exp(x0), 'fp32'), [0, 0])")])
    from pypto.testing.fuzz.runner import Result
    path = save(good, Result("ok"), str(tmp_path))
    assert path.endswith("case_99_0.py")
    run = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("matches the golden") == 3
    bad = _case([("out0[:] = pypto.exp(x0)", "ASM(out0, R(torch.exp(x0) + 1, 'fp32'), [0, 0])")],
                0, None, 1)
    path = save(bad, Result("mismatch", "tile", "synthetic"), str(tmp_path))
    run = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "elements differ" in run.stderr


# ---- minimizer ------------------------------------------------------------------------------

def test_minimizer_keeps_only_what_the_failure_needs():
    """On a synthetic predicate (the failure needs an exp and a store to out0, and a tile of
    at least 3 rows), ddmin drops every other op, renaming through dropped ones, and shrinks
    the tile."""
    lines = [("v1 = x0 + 1.0", "v1", "x0"), ("v2 = pypto.abs(v1)", "v2", "v1"),
             ("v3 = pypto.exp(v2)", "v3", "v2"), ("v4 = v3 * 2.0", "v4", "v3"),
             ("v5 = pypto.sin(v4)", "v5", "v4"), ("out0[:] = v5", None, None)]
    body = [Line("", "", tile=[16, 64])] + [Line(k, k, d, p) for k, d, p in lines]
    case = Case(1, 0, "synthetic", [Param("x0", "fp32", "in", [16, 64])], body,
                [{"x0": [16, 64]}])
    seen = []

    def holds(c):
        text = script(c).split("def golden")[0]
        seen.append(text)
        tile = c.body[0].tile if c.body and c.body[0].tile else [0, 0]
        return "pypto.exp(" in text and "out0[:] = v" in text and tile[0] >= 3

    small = minimize(case, holds)
    kernel = [s.kernel_text() for s in small.body]
    assert kernel == ["pypto.set_vec_tile_shapes(4, 16)", "v3 = pypto.exp(x0)", "out0[:] = v3"]
    assert holds(small)


# ---- command line ---------------------------------------------------------------------------

def test_cli_options_and_json_summary(capsys):
    """--families is checked against the family names; --json - prints the summary."""
    with pytest.raises(SystemExit):
        parse(["--families", "elementwise,nosuch"])
    assert parse(["--families", "loop, cond", "--jobs", "2"]).families == ["loop", "cond"]
    code = main(["--seed", "1", "--count", "3", "--families", "elementwise", "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["count"] == 3 and sum(data["outcomes"].values()) == 3
    assert set(data["by_family"]) == {"elementwise"}


def test_minimizer_keeps_one_call_and_halves_dynamic_sizes():
    """Of several calls the minimizer keeps one that fails, then halves its dynamic sizes
    (in every parameter that shares them) while the failure holds."""
    params = [Param("x0", "fp32", "in", ["DYN", 16]), Param("out0", "fp32", "out", ["DYN", 16])]
    calls = [{"x0": [r, 16], "out0": [r, 16]} for r in (3, 40, 7)]
    case = Case(1, 0, "synthetic", params, [Line("out0[:] = x0", "")], calls)

    def holds(c):
        return all(call["x0"][0] >= 5 and call["x0"] == call["out0"] for call in c.calls)

    small = minimize(case, holds)
    assert small.calls == [{"x0": [5, 16], "out0": [5, 16]}]


def test_a_timeline_that_depends_on_the_way_it_was_run_is_a_mismatch(monkeypatch):
    """The timeline property: a timing-only run or a what-if whose timeline differs from the
    exact run's (here every digest differs) is reported as a mismatch naming it."""
    from itertools import count

    from pypto.machine.result import SimResult
    from pypto.testing.fuzz.runner import execute
    ticks = count()
    monkeypatch.setattr(SimResult, "digest", lambda self: str(next(ticks)))
    case = generate(0, next(i for i in range(50) if generate(0, i).family == "elementwise"))
    res = execute(script(case), os.path.join(tempfile.mkdtemp(), "case.py"))
    assert res.outcome == "mismatch" and res.error == "timeline"
    assert "what-if" in res.detail and "timing-only" in res.detail
