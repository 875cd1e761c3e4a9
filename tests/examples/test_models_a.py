"""examples/models (attention decode, MoE routing, SwiGLU FFN): each model at a reduced size
against its torch golden, and each knob changes what it should (windows, task graph,
parallelism)."""
from __future__ import annotations

import pytest
import torch

import pypto.testing

from _models import load_model


@pytest.fixture(scope="module")
def attn():
    return load_model("glm_attention")


# ---- GLM-4.5 attention decode ------------------------------------------------------------

@pytest.mark.parametrize("order", ["pairs_outer", "blocks_outer"])
def test_attention_matches_golden_and_one_compile_serves_every_size(attn, order):
    """Both loop orders compute softmax(q·kᵀ/√d)·v; a short last block and a single block
    (begin and end in one iteration) included; pairs and kv_len are dynamic: one compile."""
    kernel = attn.build(stitch=4, order=order)
    for shape in (attn.Shape(1, 1200, kv_heads=2), attn.Shape(2, 300, kv_heads=1)):
        q, k, v, out = attn.inputs(shape)
        with pypto.testing.forward_bounds(kernel, q, k, v, out) as bounds:
            kernel(q, k, v, out)
        pypto.testing.assert_close(out, attn.golden(q, k, v), bounds["out"], "out")
    assert kernel.compile_count == 1


def test_attention_stitch_sets_the_number_of_windows(attn):
    """6 root instances (2 pairs x 3 blocks) in ceil(6 / stitch) windows."""
    shape = attn.Shape(1, 1200, kv_heads=2)
    windows = {s: attn.run(shape, stitch=s).last_run.stats["windows"] for s in (1, 4, 128)}
    assert windows == {1: 6, 4: 2, 128: 1}


def test_attention_qk_tile_sets_the_tasks_per_block(attn):
    """q·kᵀ with n = 512 is one cube task per block, n = 256 two: one more task per instance."""
    shape = attn.Shape(1, 1024, kv_heads=1)              # 2 instances
    tasks = [attn.run(shape, tiles=t).last_run.stats["tasks"]
             for t in (attn.Tiles(), attn.HALF_N_QK)]
    assert tasks[1] - tasks[0] == 2


def test_attention_kv_block_sets_the_instances(attn):
    """One root instance per (pair, KV block): 2048 keys are 4 blocks of 512 or 2 of 1024
    (each run checked against the golden, a short last block included)."""
    instances = [attn.run(attn.Shape(1, kv, kv_heads=1), tiles=t).last_run.stats["instances"]
                 for kv, t in ((2048, attn.Tiles()), (2048, attn.BLOCK_1024),
                               (1100, attn.BLOCK_1024))]
    assert instances == [4, 2, 2]


def test_attention_pairs_do_not_wait_for_each_other(attn):
    """Per-pair state: with one pair's blocks after the other's (pairs_outer, one window), the
    second pair's first block starts before the first pair's first block has finished."""
    shape = attn.Shape(1, 1536, kv_heads=2)              # 2 pairs x 3 blocks
    run = attn.run(shape, order="pairs_outer").last_run
    by_instance: dict[int, list] = {}
    for r in run.tasks:
        by_instance.setdefault(r.task.instance, []).append(r)
    first_pair0, first_pair1 = by_instance[0], by_instance[3]
    assert min(r.start for r in first_pair1) < max(r.end for r in first_pair0)


def test_attention_in_the_guides_form_counts_root_instances(attn):
    """`build_guide` (the guide's loop nest, unroll_list [8, 4, 2, 1] on s2) matches the golden
    with every tier used (11 blocks = 8 + 2 + 1, the last short), and a stitch window counts
    root instances, not unrolled bodies (compiler_runtime §5.3): 2 batches x 3 roots in
    ceil(6 / 2) windows; at the guide's case 32 roots of 8 blocks, one window at 128 and 512."""
    kernel = attn.build_guide(stitch=2)
    q, k, v, out = attn.inputs(attn.Shape(2, 11 * 512 - 100, kv_heads=1))
    with pypto.testing.forward_bounds(kernel, q, k, v, out) as bounds:
        kernel(q, k, v, out)
    pypto.testing.assert_close(out, attn.golden(q, k, v), bounds["out"], "out")
    st = kernel.last_run.stats
    assert (st["instances"], st["windows"]) == (6, 3)
    args = attn.inputs(attn.GUIDE)
    counts = {}
    for stitch in (1, 16, 128, 512):
        kernel = attn.build_guide(stitch)
        kernel.runtime_options["numerics"] = "timing_only"
        kernel(*args)
        counts[stitch] = (kernel.last_run.stats["instances"], kernel.last_run.stats["windows"])
    assert counts == {1: (32, 32), 16: (32, 2), 128: (32, 1), 512: (32, 1)}


def test_attention_stitch_and_independent_pairs_give_the_issues_speedups(attn):
    """Issue 14's targets: stitch 1 -> 128 is >= 4x on 40 instances; 8 independent pairs take
    at most 2.5x the time of 1 pair at stitch 128 (simulated kernel time)."""
    def kernel_cycles(shape, stitch=128):
        return attn.run(shape, stitch).last_run.stats["kernel_cycles"]

    assert attn.FORTY.pairs * -(-attn.FORTY.kv_len // 512) == 40
    assert kernel_cycles(attn.FORTY, 1) >= 4 * kernel_cycles(attn.FORTY, 128)
    one, eight = attn.Shape(1, 2048, kv_heads=1), attn.Shape(1, 2048, kv_heads=8)
    assert kernel_cycles(eight) <= 2.5 * kernel_cycles(one)


def test_attention_rejects_an_unknown_loop_order(attn):
    import pypto
    with pytest.raises(pypto.PyptoError, match="order must be one of"):
        attn.build(order="heads_outer")


# ---- GLM-4.5 MoE routing -----------------------------------------------------------------

@pytest.fixture(scope="module")
def moe():
    return load_model("moe_routing")


def _cross_instance_preds(run) -> int:
    """How many dependencies join tasks of different root instances."""
    where = {r.task.id: (r.task.window, r.task.instance) for r in run.tasks}
    return sum(where[p] != where[r.task.id] for r in run.tasks for p in r.task.preds)


@pytest.mark.parametrize("cast", ["shared", "per_block", "none"])
def test_routing_matches_golden_with_a_short_last_block(moe, cast):
    """Top-8 experts by biased sigmoid score, weighted by the unbiased scores, normalised and
    scaled by 2.5; 40 tokens = blocks of 16, 16 and 8; one compile for two token counts."""
    kernel = moe.build(cast)
    for tokens in (40, 5):
        args = moe.inputs(tokens, seed=tokens)
        kernel(*args)
        moe.check(*args)
    assert kernel.compile_count == 1


def test_routing_bias_chooses_but_does_not_weigh(moe):
    """The inputs' bias changes some choices, and the weights are the unbiased scores."""
    x, w, bias, *_ = moe.inputs(40)
    weights, ids = moe.golden(x, w, bias)
    unbiased_ids = torch.topk(torch.sigmoid(x.float() @ w.float().t()), 8, -1).indices
    assert not torch.equal(ids, unbiased_ids)
    assert torch.allclose(weights.sum(-1), torch.full((40,), 2.5))


def test_routing_cast_knob_cuts_the_shared_dependency(moe):
    """One shared cast is a root of its own whose tasks every token block waits for; a cast
    per block adds cast tasks to every block and leaves the blocks independent."""
    shared = moe.run(40, "shared").last_run
    per_block = moe.run(40, "per_block").last_run
    assert shared.stats["instances"] == 4 and per_block.stats["instances"] == 3
    assert _cross_instance_preds(shared) > 0 and _cross_instance_preds(per_block) == 0
    more = moe.run(56, "per_block").last_run.stats["tasks"] - per_block.stats["tasks"]
    assert more > moe.run(56, "shared").last_run.stats["tasks"] - shared.stats["tasks"]


def test_routing_without_a_cast_has_one_task_per_step(moe):
    """BF16 operands straight into the cube: no cast tasks, so far fewer tasks per block than
    with a cast of the [160, 5120] weight, and the blocks stay independent."""
    none = moe.run(40, "none").last_run
    assert none.stats["tasks"] < moe.run(40, "per_block").last_run.stats["tasks"] / 4
    assert _cross_instance_preds(none) == 0


def test_routing_rejects_an_unknown_cast(moe):
    import pypto
    with pytest.raises(pypto.PyptoError, match="cast must be one of"):
        moe.build("twice")


# ---- SwiGLU FFN --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ffn():
    return load_model("swiglu_ffn")


@pytest.mark.parametrize("tiles", ["DECODE", "DECODE_SPLIT_K", "PREFILL"])
def test_ffn_matches_golden_with_a_short_last_block(ffn, tiles):
    """(silu(x·Wg) * (x·Wu))·Wd with BF16 in/out and FP32 sums, for 40 and 5 tokens (the
    decode tiles: blocks of 16, the last short) and 130 (prefill: one 512-token block, its
    second 128-row m-tile 2 rows deep); one compile for every token count."""
    kernel = ffn.build(256, 768, getattr(ffn, tiles))
    for tokens in (40, 5, 130):
        x, wg, wu, wd, out = ffn.inputs(ffn.Shape(tokens, 256, 768), seed=tokens)
        with pypto.testing.forward_bounds(kernel, x, wg, wu, wd, out) as bounds:
            kernel(x, wg, wu, wd, out)
        pypto.testing.assert_close(out, ffn.golden(x, wg, wu, wd), bounds["out"], "out")
    assert kernel.compile_count == 1


def test_ffn_split_k_splits_the_down_matmul(ffn):
    """K = 768 in kL1 chunks of 512: split-K makes two cube tasks for the one [16, 256] down
    output tile; the add that combines them fuses into the vector task of the output cast."""
    shape = ffn.Shape(16, 256, 768)                      # one block
    plain = ffn.run(shape, ffn.DECODE).last_run.stats
    split = ffn.run(shape, ffn.DECODE_SPLIT_K).last_run.stats
    assert split["tasks_aic"] == plain["tasks_aic"] + 1
    assert split["tasks_aiv"] == plain["tasks_aiv"]


def test_ffn_token_block_sets_the_instances(ffn):
    """One root instance per token block: 40 tokens are 3 blocks of 16 or 2 of 32."""
    shape = ffn.Shape(40, 256, 768)
    wide = ffn.Tiles(block=32, vec=(32, 256), cube_up=((32, 32), (128, 256), (256, 256)),
                     cube_down=((32, 32), (128, 256), (256, 256)))
    assert ffn.run(shape).last_run.stats["instances"] == 3
    assert ffn.run(shape, wide).last_run.stats["instances"] == 2
