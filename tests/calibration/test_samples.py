"""PyPTO's own sample traces (tests/data/pypto_samples: PyPTO 0.2.0's simulator, not a board)
against our runs of the same kernels, as far as we have them: the softmax at its shapes pairs
every task and calibrates without inventing anything (one leaf cannot tell the vector ops
apart); the other three compute what no kernel of ours does, and say how little pairs."""
import os
import runpy

import torch

from pypto.calibration.calibrate import calibrate
from pypto.calibration.runs import KernelCall, trace_of
from pypto.machine.spec import table
from pypto.toolkit import trace
from pypto.toolkit.compare import compare_runs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SAMPLES = os.path.join(ROOT, "tests", "data", "pypto_samples")
OPERATORS = os.path.join(ROOT, "examples", "02_intermediate", "operators")


def test_calibrating_on_pyptos_softmax_pairs_all_and_invents_nothing():
    kernel = runpy.run_path(os.path.join(OPERATORS, "softmax", "softmax.py"),
                            run_name="samples_test")["softmax_kernel"]
    x = torch.rand(32, 32, 1, 256)
    kernel(x, torch.zeros_like(x))
    board = trace.load(os.path.join(SAMPLES, "softmax_merged_swimlane.json"))
    cal = calibrate([KernelCall("softmax", kernel, kernel.last)], [board], table("a2a3"))
    assert cal.paired == [(256, 256, 256)]
    vector = [n for n in cal.names if n.startswith("vector.") and
              cal.status[n] != "not observed by these traces"]
    assert len(vector) >= 3   # exp, the row max and sum, the subtract, the division ...
    assert all(cal.status[n].startswith("under-determined") for n in vector), cal.status
    assert cal.changed == {} and cal.new == cal.old
    assert cal.before[0].span_ratio == cal.after[0].span_ratio < 0.2   # 7x: another simulator


def test_the_other_samples_pair_only_as_far_as_our_kernels_compute_the_same():
    ffn = runpy.run_path(os.path.join(OPERATORS, "ffn", "ffn.py"),
                         run_name="samples_test")["ffn_kernel"]
    ffn(torch.rand(32, 128), torch.rand(128, 256), torch.rand(256, 128), torch.zeros(32, 128),
        "gelu", 16)
    ours = trace_of(ffn.last_run)
    for name in ("ffn_dynamic_gelu", "glm_moe_fusion", "ds32_sparse_flash_attention_quant"):
        board = trace.load(os.path.join(SAMPLES, f"{name}_merged_swimlane.json"))
        itself = compare_runs(board, board)["matched"]
        assert itself["sim_share"] == itself["board_share"] == 1.0
        m = compare_runs(ours, board)["matched"]
        cores = itself["tasks"]
        assert m["tasks"] + m["board_only"] == cores, name   # every task paired or listed
        assert m["board_share"] < 0.1, name
