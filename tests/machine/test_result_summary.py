"""`kernel.last_run` prints as a short summary of the real run whose numbers are the ones the
result holds (and the stderr line prints); the full data stays on the result."""
import dataclasses
import os
import re

import torch

import pypto
from pypto.profiling.reports import one_line_summary


def _kernel(debug: int):
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": debug})
    def mm_exp(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = pypto.exp(pypto.matmul(a, b, pypto.DT_FP32))
    return mm_exp


def _run(debug: int):
    k = _kernel(debug)
    a, b = torch.rand(128, 64), torch.rand(64, 128)
    k(a, b, torch.zeros(128, 128))
    return k.last_run


def _number(text: str, pattern: str) -> float:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in {text!r}"
    return float(m.group(1))


def test_summary_numbers_are_the_results():
    run = _run(0)
    text = repr(run)
    assert text == str(run) == run.summary()
    st = run.stats
    assert _number(text, r"kernel ([\d.]+) us") == round(run.us(st["kernel_cycles"]), 2)
    assert _number(text, r"e2e ([\d.]+) us") == round(run.us(st["e2e_cycles"]), 2)
    assert f"{st['tasks']} tasks" in text
    assert f"{st['tasks_aic']} AIC / {st['tasks_aiv']} AIV" in text
    assert st["tasks_aic"] > 0 and st["tasks_aiv"] > 0
    assert f"{st['windows']} stitch window(s)" in text
    assert _number(text, r"AICore util ([\d.]+)%") == round(100 * st["utilization"], 2)
    assert _number(text, r"L2 hit ([\d.]+)%") == round(100 * st["l2_hit_ratio"], 1)
    # the stderr line says the same about kernel and e2e time
    line = one_line_summary(run)
    assert _number(line, r"kernel ([\d.]+) us") == _number(text, r"kernel ([\d.]+) us")
    assert _number(line, r"e2e ([\d.]+) us") == _number(text, r"e2e ([\d.]+) us")
    # the busiest leaf, by the tasks' own times
    busy: dict[str, float] = {}
    for r in run.tasks:
        busy[r.task.leaf] = busy.get(r.task.leaf, 0.0) + r.end - r.start
    top = max(busy, key=busy.get)
    first_leaf = text.split("busy time")[1].splitlines()[1].strip()
    assert first_leaf.startswith(top + " (")
    assert _number(first_leaf, r"([\d.]+) us busy") == round(run.us(busy[top]), 2)
    assert "files: none written" in text


def test_summary_is_short_and_the_data_stays():
    run = _run(0)
    text = repr(run)
    assert len(text.splitlines()) <= 14 and len(text) < 1500
    full = dataclasses.asdict(run)
    assert len(full["tasks"]) == len(run.tasks) == run.stats["tasks"]
    assert full["flows"] == run.flows and full["stats"] == run.stats


def test_summary_names_the_run_folder():
    run = _run(1)
    assert run.folder and os.path.isfile(os.path.join(run.folder, "merged_swimlane.json"))
    assert f"files: {run.folder}" in repr(run)
