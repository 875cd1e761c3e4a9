"""The cube part of the task cost (task_cost._cube): what one matmul tile op asks of MTE1,
the cube and the fixpipe, by the fractal rules of hw_costs §3 and the per-tile drain of §1.4."""
from __future__ import annotations

from types import SimpleNamespace

from pypto import DT_FP16, DT_INT8
from pypto.machine.result import SimTask
from pypto.machine.spec import load as load_spec
from pypto.passes.cube import CubePlan
from pypto.runtime import task_cost


def _charge(m, k, n, tiles, dtype=DT_FP16):
    """One block m x n over K = k with cube tiles (mL0, nL0, kL0); returns the task."""
    m_l0, n_l0, k_l0 = tiles
    spec = load_spec("a2a3")
    size = 1 if dtype is DT_INT8 else 2
    plan = CubePlan(m, n, k, min(m_l0, m), min(n_l0, n), k_l0, k, k, size, size, 4)
    val = SimpleNamespace(dtype=dtype)
    op = SimpleNamespace(inputs=[SimpleNamespace(dims=None)] * 2, attrs={"cube_plan": plan},
                         src=SimpleNamespace(attrs={}, inputs=[val, val]))
    task = SimTask(0, 0, 0, "", 0, 0, "", 0, "AIC")
    windows = (((0, 0), (m, k)), ((0, 0), (k, n)), ((0, 0), (m, n)))
    task_cost._cube(task, op, windows, spec)
    return task, spec


def test_l0_loads_move_whole_16_row_fractals_not_whole_tiles():
    """An m = 8 operand under [128, 128] tiles: L1 -> L0A moves 16 rows per K (the fractal),
    neither 8 (the valid rows) nor 128 (the tile); B's 128 columns move as they are."""
    task, spec = _charge(8, 7168, 128, (128, 128, 128))
    a_l0, b_l0 = 7168 * 16 * 2, 7168 * 128 * 2
    assert task.mte1_bytes == a_l0 + b_l0
    dma = spec.dma
    assert task.mte1_cycles == a_l0 / dma["l1_to_l0a"]["bw"] + b_l0 / dma["l1_to_l0b"]["bw"]
    # the MADs: one head per L0 step (56 K steps), ceil16(m) x ceil(k/16) x ceil16(n) cycles
    assert task.cube_cycles == spec.cube["mad_head_cycles"] * 56 + 1 * 448 * 8


def test_a_column_tail_rounds_to_the_fractal_not_to_the_block():
    """n = 100 in nL0 = 64 blocks: a whole block of 64 and a tail of 36 rounded up to 48, so
    112 columns move, not 128."""
    task, _ = _charge(16, 256, 100, (16, 64, 64))
    assert task.mte1_bytes == 256 * 16 * 2 + 256 * (64 + 48) * 2


def test_int8_k_rounds_to_its_k0():
    """int8 fractals are 16 x 32: K = 40 moves 64 columns of A and 64 rows of B."""
    task, _ = _charge(16, 40, 32, (16, 32, 64), DT_INT8)
    assert task.mte1_bytes == 64 * 16 + 64 * 32


def test_the_fixpipe_drains_each_l0c_tile():
    """Two nL0 = 64 column tiles of a 16 x 128 block: two fixed costs, each row drained per
    tile; one 128-wide tile pays one fixed cost."""
    fix = load_spec("a2a3").dma["fixpipe"]
    two, _ = _charge(16, 256, 128, (16, 64, 64))
    row64 = max(fix["row"], 4 * 64 / fix["bw"])
    assert two.fix_cycles == 2 * fix["fixed"] + 16 * 2 * row64
    one, _ = _charge(16, 256, 128, (16, 128, 64))
    assert one.fix_cycles == fix["fixed"] + 16 * max(fix["row"], 4 * 128 / fix["bw"])


def test_an_l0_tile_over_half_the_buffer_holds_mte1_for_the_mads():
    """kL0 = 512, nL0 = 64 FP16: a 64 KiB B tile fills L0B, so there is no second buffer and
    each K step's load waits for the previous MADs (MTE1 = loads + MADs); with kL0 = 256 the
    32 KiB tile is double buffered and the loads overlap the MADs."""
    single, spec = _charge(8, 7168, 64, (16, 64, 512))
    dma = spec.dma
    loads = 7168 * 16 * 2 / dma["l1_to_l0a"]["bw"] + 7168 * 64 * 2 / dma["l1_to_l0b"]["bw"]
    assert single.mte1_cycles == loads + single.cube_cycles
    double, _ = _charge(8, 7168, 64, (16, 64, 256))
    assert double.mte1_cycles == loads
