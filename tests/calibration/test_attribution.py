"""`compare --kernel`: a gap attributed by re-simulating the kernel one constant at a time. A
board with the ND2NZ granule doubled is named "nd2nz x2" on a kernel that also has wide-row
loads and short vector bursts (so neither a bandwidth nor the burst overhead can stand in),
which the traces alone could not do (tests/toolkit/test_compare.py)."""
import json
import os

import pytest
import torch

import pypto
from pypto import cli
from pypto.calibration.attribution import attribute
from pypto.calibration.runs import KernelCall
from pypto.calibration.synthetic import board_trace, write_board
from pypto.machine.spec import table
from pypto.profiling.swimlane_reader import parse_swimlane

F16, F32 = pypto.DT_FP16, pypto.DT_FP32
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "calibration")


def _rows_of_three_widths() -> KernelCall:
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def rows(a1: pypto.Tensor([1536, 4096], F16), b1: pypto.Tensor([4096, 64], F16),
             c1: pypto.Tensor([1536, 64], F32), a2: pypto.Tensor([384, 4096], F16),
             b2: pypto.Tensor([4096, 512], F16), c2: pypto.Tensor([384, 512], F32),
             x: pypto.Tensor([32768, 512], F32), y: pypto.Tensor([32768, 32], F32)):
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [64, 64])
        c1[:] = pypto.matmul(a1, b1, F32)          # B: 128-byte rows into L1
        pypto.set_cube_tile_shapes([16, 16], [64, 256], [512, 512])
        c2[:] = pypto.matmul(a2, b2, F32)          # B: 1024-byte rows into L1
        pypto.set_vec_tile_shapes(256, 32)
        y[:] = pypto.view(x, [32768, 32], [0, 0]) + 1.0   # 128-byte vector bursts

    rows(torch.rand(1536, 4096).half(), torch.rand(4096, 64).half(), torch.zeros(1536, 64),
         torch.rand(384, 4096).half(), torch.rand(4096, 512).half(), torch.zeros(384, 512),
         torch.rand(32768, 512), torch.zeros(32768, 32))
    return KernelCall("rows", rows, rows.last)


def test_a_doubled_nd2nz_granule_is_named_by_re_simulation():
    call = _rows_of_three_widths()
    a2a3 = table("a2a3")
    board = parse_swimlane(board_trace(call, a2a3, {"dma.shape.nd2nz_row_bytes": 64},
                                       noise=0.02, drop=0.05))
    found = attribute(call, board, a2a3)
    assert [p["constant"] for p in found["points_at"]] == ["dma.shape.nd2nz_row_bytes"], found
    assert found["points_at"][0]["mechanism"] == "nd2nz"
    assert found["points_at"][0]["scale"] == pytest.approx(2.0, rel=0.05)
    stand_ins = {r["constant"]: r["explains"] for r in found["rows"]}
    assert stand_ins["dma.shape.burst_overhead_bytes"] < 0.5
    assert stand_ins.get("memory.hbm_bytes_per_cycle", 0.0) < 0.5


def test_compare_with_the_kernel_names_a_slower_exp(tmp_path, capsys):
    script = os.path.join(EXAMPLE, "kernels.py") + "::vector_mix"
    from pypto.calibration.command import calls_of
    call = calls_of([script], 1)[0]
    a2a3 = table("a2a3")
    sim = write_board(str(tmp_path / "sim.json"), board_trace(call, a2a3, {}))
    board = write_board(str(tmp_path / "board.json"),
                        board_trace(call, a2a3, {"vector.cycles_per_repeat.exp_fp32": 4}))
    assert cli.main(["compare", sim, board, "--kernel", script, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    named = report["resimulated"]["points_at"]
    assert [p["constant"] for p in named] == ["vector.cycles_per_repeat.exp_fp32"]
    assert named[0]["scale"] == pytest.approx(2.0, rel=0.02)
    assert cli.main(["compare", sim, board, "--kernel", script]) == 0
    assert "points at: vector: vector.cycles_per_repeat.exp_fp32 x2.00" in capsys.readouterr().out
