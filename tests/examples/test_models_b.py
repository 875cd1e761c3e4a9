"""examples/models (Gated DeltaNet, indexer prolog, 6144 matmul): each at a reduced size against its torch
golden, and each knob changing what it should (tile counts, task graph shape, windows).

The model scripts are imported as modules; examples/README-style runs of the scripts as
programs are in test_examples.py (reduced sizes only: the full sizes run when named).
"""
from collections import Counter
from dataclasses import replace

import pytest

from _models import load_model

pytestmark = pytest.mark.examples


@pytest.fixture(scope="module")
def matmul():
    return load_model("matmul_6144")


@pytest.fixture(scope="module")
def matmul_runs(matmul):
    """Each variant run once at the reduced size (run() asserts against the golden)."""
    return {name: matmul.run(replace(matmul.REDUCED, **variant)).last_run
            for name, variant in matmul.VARIANTS.items()}


def _instances(run) -> Counter:
    return Counter((r.task.window, r.task.instance) for r in run.tasks)


# ---- matmul 6144 -----------------------------------------------------------------------------

def test_matmul_reduced_matches_torch_in_every_variant(matmul_runs):
    """Each variant (auto L1 reuse, reuse off, L2-aware loops) computes a @ b in FP16."""
    assert set(matmul_runs) == {"plain", "plain_no_reuse", "loops", "loops_l1_reuse"}


def test_matmul_cube_tiles_make_one_task_per_output_block(matmul, matmul_runs):
    """[128,128],[64,256],[256,256]: one (128 x 256) block per task with L1 reuse off; the
    automatic reuse merges floor(S / 48) blocks that share a B panel."""
    cfg = matmul.REDUCED                                   # 1536 x 2048: 12 x 8 blocks
    blocks = (cfg.m // 128) * (cfg.n // 256)
    off, auto = matmul_runs["plain_no_reuse"], matmul_runs["plain"]
    assert off.stats["tasks"] == blocks == 96
    assert auto.stats["tasks"] == blocks // (blocks // 48)
    bigger = matmul.run(replace(cfg, tiles=([256, 256], [64, 256], [128, 128]),
                                l1_reuse=1)).last_run
    assert bigger.stats["tasks"] == (cfg.m // 256) * (cfg.n // 128)


def test_matmul_l2_loops_make_one_instance_per_view_pair(matmul, matmul_runs):
    """m view 768 x n view 1024: one root instance per view pair, 24 blocks each, every
    instance writing only inside its own [768, 1024] window of c."""
    cfg = replace(matmul.REDUCED, **matmul.VARIANTS["loops"])
    run = matmul_runs["loops"]
    per_instance = _instances(run)
    assert len(per_instance) == (cfg.m // 768) * (cfg.n // 1024) == 4
    assert set(per_instance.values()) == {(768 // 128) * (1024 // 256)}
    assert set(_instances(matmul_runs["loops_l1_reuse"]).values()) == {24 // 4}
    boxes: dict = {}
    for r in run.tasks:
        for _, off, ext in r.task.writes:
            boxes.setdefault((r.task.window, r.task.instance), []).append((off, ext))
    for writes in boxes.values():
        rows = {off[0] // 768 for off, _ in writes}
        cols = {off[1] // 1024 for off, _ in writes}
        assert len(rows) == len(cols) == 1
        assert all(ext[0] <= 768 and ext[1] <= 1024 for _, ext in writes)


def test_matmul_views_must_divide_the_output(matmul):
    with pytest.raises(ValueError, match="must divide"):
        matmul.make_kernel(replace(matmul.REDUCED, m_view=1000, n_view=1024))


# ---- Gated DeltaNet --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gdn():
    return load_model("gated_deltanet")


@pytest.fixture(scope="module")
def gdn_runs(gdn):
    """The variants at the reduced size (1 x 2 heads x 256 tokens), each checked against the
    float64 token-by-token recurrence by run()."""
    names = ("prefill", "chunk64", "inverse_16x16", "inverse_16x64")
    return {name: gdn.run(gdn.VARIANTS[name](gdn.REDUCED)) for name in names}


def _by_root(run, fragment: str) -> Counter:
    """Tasks per (window, instance) of the roots whose name holds `fragment`."""
    return Counter((r.task.window, r.task.instance) for r in run.tasks
                   if fragment in r.task.root)


def test_gdn_reduced_matches_the_recurrent_golden(gdn_runs):
    """Chunk 128 and chunk 64 (and both inverse tilings) give the recurrence's o and final
    state to FP32 accuracy (run() asserts rtol 1e-4, atol 1e-5 against float64)."""
    assert set(gdn_runs) == {"prefill", "chunk64", "inverse_16x16", "inverse_16x64"}


def test_gdn_chunk_128_halves_the_chunk_instances(gdn, gdn_runs):
    """Chunk 128 with TileShape [128, 128]: half the chunk-loop instances of chunk 64 and
    fewer tasks (each [chunk, 128] op is one tile either way)."""
    c128, c64 = gdn_runs["prefill"].last_run, gdn_runs["chunk64"].last_run
    chunks = gdn.REDUCED.pairs * gdn.REDUCED.seq
    assert len(_by_root(c128, "LOOP_CHUNK")) == chunks // 128 == 4
    assert len(_by_root(c64, "LOOP_CHUNK")) == chunks // 64 == 8
    assert c128.stats["tasks"] < c64.stats["tasks"]


def test_gdn_only_the_state_recurrence_crosses_chunks(gdn_runs):
    """A chunk's tasks wait for another instance only where they read the state: the
    intra-chunk work (decay, KK^T, inverse, WY factors) of the next chunks runs ahead."""
    for name in ("prefill", "chunk64"):
        run = gdn_runs[name].last_run
        tasks = {r.task.id: r.task for r in run.tasks}
        crossing = {t.label for t in tasks.values() if "LOOP_CHUNK" in t.root
                    for p in t.preds
                    if (tasks[p].window, tasks[p].instance) != (t.window, t.instance)}
        assert crossing == {"state_update"}, name


def test_gdn_inverse_alone_in_the_guides_three_forms(gdn):
    """The inverse-only kernel (one [128, 128] chunk, B = T/128 = H = 1) matches the float64
    inverses of the diagonal blocks in each form; its row-update tasks are 8 x [16, 16],
    2 x [16, 64] or one [16, 128], and their summed time falls as the blocks are concatenated
    (the guide's #12 / #13 direction)."""
    times = {}
    for form, tasks in (("16x16", 8), ("16x64", 2), ("16x128", 1)):
        kernel = gdn.run_inverse(form)                    # asserts against inverse_golden
        n, us = gdn.inverse_time_us(kernel)
        assert n == tasks, form
        times[form] = us
    assert times["16x16"] > times["16x64"] > times["16x128"] > 0


def test_gdn_inverse_tiles_set_the_row_update_subgraphs(gdn_runs):
    """The row recurrence on the diagonal blocks side by side ([16, 128]) is 8 isomorphic
    [16, 16] subgraphs per chunk, 2 of [16, 64], or one of [16, 128]."""
    for name, per_chunk in (("inverse_16x16", 8), ("inverse_16x64", 2), ("prefill", 1)):
        kernel = gdn_runs[name]
        rows = [r.task for r in kernel.last_run.tasks if r.task.label == "block_inverse"
                and r.task.core == "AIV"]
        assert len(rows) == 4 * per_chunk, name
        assert len({t.leaf for t in rows}) == 1, name        # one leaf: isomorphic
        calls = [call for root in kernel.last_compiled.roots.values() for call in root.calls
                 if call.leaf.name == rows[0].leaf]
        shapes = {tuple(op.output.shape) for call in calls for op in call.ops}
        assert shapes == {(16, 128 // per_chunk), (1, 128 // per_chunk)}, name


def _chunks_per_window(run) -> dict:
    """{window: {(pair, first token)}} of the chunk outputs written to o (the [P, T, D]
    parameter written at a token offset past 0)."""
    writes = [(r.task.window, sid, off) for r in run.tasks for sid, off, _ in r.task.writes
              if len(off) == 3]
    o_id = next(sid for _, sid, off in writes if off[1] > 0)
    out: dict = {}
    for window, sid, off in writes:
        if sid == o_id:
            out.setdefault(window, set()).add((off[0], off[1]))
    return out


def test_gdn_chunks_outer_puts_every_pair_in_each_window(gdn):
    """Loop order: with chunks outside, a window of 2 instances holds chunk c of both pairs
    (they run side by side); with pairs outside, each window holds one pair's chunks."""
    chunks_outer = gdn.run(replace(gdn.REDUCED, order="chunks_outer", stitch=2)).last_run
    for chunks in _chunks_per_window(chunks_outer).values():
        assert {pair for pair, _ in chunks} == {0, 1} and len({t for _, t in chunks}) == 1
    pairs_outer = gdn.run(replace(gdn.REDUCED, stitch=2), check=False).last_run
    assert pairs_outer.stats["instances"] == 6 and pairs_outer.stats["windows"] == 3  # stitch
    assert all(len({pair for pair, _ in chunks}) == 1
               for chunks in _chunks_per_window(pairs_outer).values())


def test_gdn_unroll_16_makes_one_instance_per_16_chunks(gdn):
    """unroll_list=[16] on the chunk loop: one root instance runs 16 chunks (16x the calls),
    the same tasks in all; numerics unchanged."""
    base = replace(gdn.REDUCED, heads=1, chunk=32, inv_blocks=2)
    plain = gdn.run(replace(base, seq=16 * 32)).last_run
    unrolled = gdn.run(gdn.VARIANTS["unroll16"](base)).last_run
    assert len(_by_root(plain, "LOOP_CHUNK")) == 16
    assert len(_by_root(unrolled, "LOOP_CHUNK_Unroll16")) == 1
    assert unrolled.stats["tasks"] == plain.stats["tasks"]


def test_gdn_config_errors_name_the_knob(gdn):
    with pytest.raises(ValueError, match="unroll 16 must divide"):
        gdn.make_kernel(replace(gdn.REDUCED, unroll=16))
    with pytest.raises(ValueError, match="order must be"):
        gdn.make_kernel(replace(gdn.REDUCED, order="heads_first"))
    with pytest.raises(ValueError, match="inv_blocks 3"):
        gdn.make_kernel(replace(gdn.REDUCED, inv_blocks=3))


# ---- DeepSeek-V3.2 indexer prolog ------------------------------------------------------------

@pytest.fixture(scope="module")
def indexer():
    return load_model("indexer_prolog")


@pytest.fixture(scope="module")
def indexer_runs(indexer):
    """The case study's four steps at the reduced size (8 heads, q_lora 512, hidden 1024),
    each checked against the torch golden by run()."""
    return {name: indexer.run(replace(indexer.REDUCED, **variant))
            for name, variant in indexer.VARIANTS.items()}


def _label_tasks(kernel, label: str) -> list:
    return [r.task for r in kernel.last_run.tasks if r.task.label == label]


def test_indexer_reduced_matches_torch_in_every_step(indexer_runs):
    """int8 q / k equal the golden's (at most one unit off where FP32 sums in another order
    cross a rounding boundary), scales and weights to FP32 / FP16 rounding."""
    assert list(indexer_runs) == ["out_of_box", "aligned", "small_m", "l1_reuse"]


def test_indexer_aligned_tiles_make_one_isomorphic_subgraph_per_head(indexer, indexer_runs):
    """Aligned (1, T, 128) tiles: dequant, RoPE and requant of one head are one subgraph, the
    heads isomorphic copies of one leaf; a dequant tile over 4 heads makes 4x bigger ones."""
    heads = indexer.REDUCED.heads
    for name, per_subgraph in (("aligned", 1), ("out_of_box", 4)):
        kernel = indexer_runs[name]
        tasks = _label_tasks(kernel, "q_dequant_rope")
        assert len(tasks) == heads // per_subgraph, name
        assert len({t.leaf for t in tasks}) == 1, name
        calls = [c for root in kernel.last_compiled.roots.values() for c in root.calls
                 if c.leaf.name == tasks[0].leaf]
        opcodes = {op.opcode for c in calls for op in c.ops}
        assert {"CAST", "MUL", "SUB", "ADD", "REDUCE_MAX"} <= opcodes, opcodes  # fused


def test_indexer_small_m_cube_tiles(indexer, indexer_runs):
    """[128,128] x 3 -> PyPTO's b4 configuration: n = 128 on the Q projection (one block per
    head, as before), n = 64 on the key projection (two blocks of 128 columns)."""
    heads = indexer.REDUCED.heads
    square, small = indexer_runs["aligned"], indexer_runs["small_m"]
    assert len(_label_tasks(square, "q_proj")) == heads
    assert len(_label_tasks(small, "q_proj")) == heads
    assert len(_label_tasks(square, "k_proj")) == 1
    assert len(_label_tasks(small, "k_proj")) == 128 // 64


def test_indexer_weights_are_nz(indexer, indexer_runs):
    """The three weights are stored NZ, as in PyPTO's kernel: their GM -> L1 copies move
    contiguous fractal blocks, so they occupy little more than they carry even where a tile
    takes 32 or 64 columns."""
    small = indexer_runs["small_m"]
    for label in ("q_proj", "k_proj"):
        for t in _label_tasks(small, label):
            assert t.mte2_moved < 1.2 * t.mte2_bytes, (label, t.mte2_moved, t.mte2_bytes)


def test_indexer_l1_reuse_merges_q_projection_tasks(indexer, indexer_runs):
    """cube_l1_reuse_setting {-1: 4}: 4 Q blocks per task, each loading the shared qr rows
    once: a quarter of the tasks and fewer GM->L1 bytes."""
    small, reuse = indexer_runs["small_m"], indexer_runs["l1_reuse"]
    assert len(_label_tasks(reuse, "q_proj")) == len(_label_tasks(small, "q_proj")) // 4

    def l1_bytes(kernel):
        return sum(t.mte2_bytes for t in _label_tasks(kernel, "q_proj"))
    assert l1_bytes(reuse) < l1_bytes(small)


def test_indexer_config_errors_name_the_knob(indexer):
    with pytest.raises(ValueError, match="vec_tile must be one of"):
        indexer.make_kernel(replace(indexer.REDUCED, vec_tile="wide"))
