"""Each advisor rule fires on a trace with its pattern and stays quiet on one without it;
rules needing our extensions say "no-info" on PyPTO-style traces. Real kernels run through the
simulator for the stitch, L1-reuse and root-instance rules."""
import glob
import json

import pytest
import torch

import pypto
from pypto.toolkit.analyze import analyze
from pypto.cli import main
from pypto.toolkit.trace import load

from _traces import build, task, write


def _advice(tmp_path, tasks, flows=(), **kw):
    a = analyze(load(write(tmp_path / "t.json", build(tasks, flows, **kw))))
    return {adv.rule: adv for adv in a.advice}


def _status(tmp_path, tasks, flows=(), **kw):
    return {k: v.status for k, v in _advice(tmp_path, tasks, flows, **kw).items()}


# --- stitch ------------------------------------------------------------------------------------

def _windows(gap):
    return [task(f"AIV_{25 + k}", w * (2 + gap), 2, window=w, instance=0, call=k)
            for w in range(8) for k in range(4)]


def test_stitch_fires_on_wide_gaps_between_windows(tmp_path):
    adv = _advice(tmp_path, _windows(gap=3))["stitch"]
    assert adv.status == "advise" and "stitch_function_max_num" in adv.summary
    assert adv.gain_us == 7 * 3 and adv.time_range == (2, 7 * 5)
    assert _status(tmp_path, _windows(gap=0.01))["stitch"] == "ok"


def _loop_kernel(stitch):
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch},
                        debug_options={"runtime_debug_mode": 1})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for i in pypto.loop(x.shape[0]):
            y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0
    return k


def _run_json(capsys, kernel, *args):
    before = set(glob.glob("output/output_*"))
    kernel(*args)
    kernel.last_run        # simulate and write the run folder
    (folder,) = set(glob.glob("output/output_*")) - before
    assert main(["analyze", folder, "--json"]) == 0
    return {a["rule"]: a for a in json.loads(capsys.readouterr().out)["advice"]}


def test_stitch_rule_on_a_real_loop_kernel(capsys):
    """stitch=1: 16 windows with AICPU barriers between them; stitch=128: one window."""
    x = torch.rand(16, 64, 512)
    one = _run_json(capsys, _loop_kernel(1), x, torch.zeros_like(x))
    many = _run_json(capsys, _loop_kernel(128), x, torch.zeros_like(x))
    assert one["stitch"]["status"] == "advise" and "from 1 to 16" in one["stitch"]["summary"]
    assert many["stitch"]["status"] == "ok"
    # both loops are 16 tiny instances; the AICPU build cost is quantified on our traces
    assert one["root_instances"]["status"] == "advise"
    assert one["root_instances"]["gain_us"] > 0


# --- tile shape ----------------------------------------------------------------------------------

def test_tile_shape_fires_when_few_long_vector_tasks_leave_cores_idle(tmp_path):
    few = [task(f"AIV_{25 + k}", 0, 20, leaf="L1") for k in range(4)]
    adv = _advice(tmp_path, few)["tile_shape"]
    assert adv.status == "advise" and adv.task_count == 4
    assert adv.time_range == (0, 20) and adv.gain_us > 10
    wide = [task(f"AIV_{25 + k}", 0, 20, leaf="L1") for k in range(30)]
    assert _status(tmp_path, wide)["tile_shape"] == "ok"
    short = [task(f"AIV_{25 + k}", 0, 2, leaf="L1") for k in range(4)]
    assert _status(tmp_path, short)["tile_shape"] == "ok"


# --- vec nbuffer ---------------------------------------------------------------------------------

def _small(n, dur):
    return [task(f"AIV_{25 + i % 48}", (i // 48) * (dur + 1), dur, leaf="L2", call=i)
            for i in range(n)]


def test_vec_nbuffer_fires_on_many_small_isomorphic_tasks(tmp_path):
    adv = _advice(tmp_path, _small(256, 2))["vec_nbuffer"]
    # guide §4.3: 256 members, C = 48 -> n = 5 (52 tasks)
    assert adv.status == "advise" and "{-2: 1, -1: 5}" in adv.summary
    assert adv.task_count == 256 and adv.gain_us > 0
    assert _status(tmp_path, _small(64, 2))["vec_nbuffer"] == "ok"       # under two waves
    assert _status(tmp_path, _small(256, 12))["vec_nbuffer"] == "ok"      # not small


def test_vec_nbuffer_gain_counts_only_ready_idle_time(tmp_path):
    """The idle time before a task that waited for a predecessor (here a cube task ending
    just as it starts) is not per-task overhead: merging saves none of it."""
    small = _small(256, 2)                            # waves of 48 every 3 us, 1 us apart
    waves = range(1, 1 + max(i // 48 for i in range(256)))
    cube = [task(f"AIC_{1 + j}", 3 * w - 1, 1, leaf="C", window=0, call=1000 + 24 * w + j)
            for w in waves for j in range(24)]
    flows = [(256 + 24 * (w - 1) + (i % 48) % 24, i)       # each cube task feeds two
             for i in range(256) for w in [i // 48] if w >= 1]
    waited = _advice(tmp_path, small + cube, flows)["vec_nbuffer"]
    unexplained = _advice(tmp_path, small + cube)["vec_nbuffer"]
    assert unexplained.status == "advise" and unexplained.gain_us > 0
    assert waited.status == "ok" and "not overhead-bound" in waited.summary


# --- L1 reuse ------------------------------------------------------------------------------------

def _cube(n, shared):
    """n cube tasks; task i loads B block (i % shared) - shared=1 means every task differs."""
    return [task(f"AIC_{1 + i % 24}", (i // 24) * 8, 7, leaf="L3", call=i,
                 gm_reads=[[0, [i * 128, 0], [128, 256], 65536],
                           [1, [0, (i // shared) * 256], [256, 256], 131072]])
            for i in range(n)]


def test_l1_reuse_fires_on_repeated_block_loads(tmp_path):
    adv = _advice(tmp_path, _cube(64, 16))["l1_reuse"]
    assert adv.status == "advise" and "cube_l1_reuse_setting={-1: 4}" in adv.summary
    assert _status(tmp_path, _cube(64, 1))["l1_reuse"] == "ok"
    hints_only = [task("AIC_1", 0, 7, leaf="L3")]
    assert _status(tmp_path, hints_only, ours=False)["l1_reuse"] == "no-info"


def test_l1_reuse_rule_on_real_matmuls(capsys):
    """2048x256x1024 with cube_l1_reuse_setting {-1: 1}: every B panel loaded by 16 tasks ->
    advise 4 (the guide's best point); with {-1: 4} merging further would idle cube cores."""
    def kernel(n):
        @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: n}},
                            debug_options={"runtime_debug_mode": 1})
        def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
              c: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)
        return k
    a, b = torch.rand(2048, 256).half(), torch.rand(256, 1024).half()
    off = _run_json(capsys, kernel(1), a, b, torch.zeros(2048, 1024))["l1_reuse"]
    on = _run_json(capsys, kernel(4), a, b, torch.zeros(2048, 1024))["l1_reuse"]
    assert off["status"] == "advise" and ": 4}" in off["summary"]
    assert on["status"] == "ok"


# --- reduce split --------------------------------------------------------------------------------

def test_reduce_split_fires_on_exclusive_fan_in(tmp_path):
    parts = [task(f"AIV_{25 + k}", 0, 3, leaf="L4", call=k) for k in range(8)]
    combine = [task("AIV_25", 5, 1, leaf="L5", call=8), task("AIV_26", 5, 1, leaf="L5", call=9)]
    fan_in = [(k, 8 + k // 4) for k in range(8)]
    adv = _advice(tmp_path, parts + combine, fan_in)["reduce_split"]
    assert adv.status == "advise" and adv.task_count == 2
    one_to_one = [(k, 8 + k) for k in range(2)]
    assert _status(tmp_path, parts + combine, one_to_one)["reduce_split"] == "ok"
    assert _status(tmp_path, parts + combine, ours=False)["reduce_split"] == "no-info"


# --- root instances ------------------------------------------------------------------------------

def test_root_instances_fires_on_many_tiny_instances(tmp_path):
    tiny = [task("AIV_25", i * 2, 1, instance=i) for i in range(16)]
    adv = _advice(tmp_path, tiny, aicpu=[{"name": "build window 0", "start": 0, "dur": 8}])
    assert adv["root_instances"].status == "advise"
    assert adv["root_instances"].gain_us == 6          # 8 us build, 3/4 saved
    big = [task("AIV_25", i * 20, 19, instance=i) for i in range(16)]
    assert _status(tmp_path, big)["root_instances"] == "ok"


def test_root_instances_rule_on_real_kernels(capsys):
    """pypto.loop(16) of tiny bodies vs the same axis as a Python for (one instance)."""
    def kernel(use_loop):
        @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1})
        def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 32, 512)
            for i in (pypto.loop(16) if use_loop else range(16)):
                y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0
        return k
    x = torch.rand(16, 64, 512)
    assert _run_json(capsys, kernel(True), x, torch.zeros_like(x))[
        "root_instances"]["status"] == "advise"
    assert _run_json(capsys, kernel(False), x, torch.zeros_like(x))[
        "root_instances"]["status"] == "ok"


def test_stitch_gaps_spent_building_the_next_window_ask_for_fewer_instances(capsys):
    """256 tiny instances, 64 per window: the gaps between windows are the control AICPU
    building the next 64 instances, which a bigger window would only lengthen."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 64},
                        debug_options={"runtime_debug_mode": 1})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 512)
        for i in pypto.loop(x.shape[0] // 8):
            y[i * 8:, :] = pypto.exp(pypto.view(x, [8, 512], [i * 8, 0]))
    x = torch.rand(2048, 512)
    adv = _run_json(capsys, k, x, torch.zeros_like(x))["stitch"]
    assert adv["status"] == "advise" and adv["knob"] == "unroll_list"
    assert "building the next window" in adv["evidence"][1]


# --- sched_overhead ----------------------------------------------------------------------------

def test_sched_overhead_fires_on_cores_idle_while_ready_work_waits(tmp_path):
    """test_kernel_stats' two-core trace: one AIV core idles 1 -> 3 us while 3 tasks are
    ready, 25 % of 2 cores x 4 us; the gain is those 2 core-us over the 2 cores."""
    from test_kernel_stats import two_core_trace
    a = analyze(load(write(tmp_path / "t.json", two_core_trace())))
    adv = {x.rule: x for x in a.advice}["sched_overhead"]
    assert adv.status == "advise" and adv.knob == "vec_nbuffer_setting"
    assert "AIV cores sat idle 25.0% of the time" in adv.summary
    assert adv.evidence[0].startswith("AIV: 25.0% of core time (2.00 of 8.00 core-us)")
    assert "most numerous leaf A: 2 tasks" in adv.evidence[1]
    assert adv.gain_us == pytest.approx(1.0) and adv.task_count == 2


def test_sched_overhead_is_quiet_under_its_threshold_and_says_when_it_cannot_tell(tmp_path):
    from test_kernel_stats import two_core_trace
    obj = two_core_trace()
    for e in obj["traceEvents"]:        # one task ready at a time: never more than idle cores
        if e.get("name") == "ReadyCount_AIV" and e["args"]["size"] == 3:
            e["args"]["size"] = 0
    a = analyze(load(write(tmp_path / "quiet.json", obj)))
    assert {x.rule: x for x in a.advice}["sched_overhead"].status == "ok"
    a = analyze(load(write(tmp_path / "none.json", two_core_trace(counters=False))))
    adv = {x.rule: x for x in a.advice}["sched_overhead"]
    assert adv.status == "no-info" and "ReadyCount_AIV" in adv.summary
