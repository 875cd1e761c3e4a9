"""Models of examples/models (helper B's three): each at a reduced size against its torch
golden, and each knob changing what it should (tile counts, task graph shape, windows).

The model scripts are imported as modules; examples/README-style runs of the scripts as
programs are in test_examples.py (reduced sizes only: the full sizes run when named).
"""
import importlib.util
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

pytestmark = pytest.mark.examples

MODELS_DIR = Path(__file__).resolve().parents[2] / "examples" / "models"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"models_{name}", MODELS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def matmul():
    return _module("matmul_6144")


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
    assert set(matmul_runs) == {"plain", "plain_no_reuse", "loops"}


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
