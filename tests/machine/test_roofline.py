"""No simulated run beats the chip's roofline: over random elementwise and matmul kernels
(seeded), cube FLOP per cycle stays under the cube peak and GM bytes per cycle under HBM + L2
bandwidth."""
import random
import warnings

import pytest
import torch

import pypto


def _elementwise(rows, cols, tile, depth):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        t = a
        for _ in range(depth):
            t = pypto.exp(t * 0.5) + 1.0
        y[:] = t
    a = torch.rand(rows, cols)
    return k, (a, torch.zeros_like(a)), 0


def _matmul(m, k_, n, cube):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes(*cube)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    args = (torch.rand(m, k_).half(), torch.rand(k_, n).half(), torch.zeros(m, n))
    return k, args, 2 * m * n * k_


def _cases(seed, count):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        if rng.random() < 0.5:
            rows, cols = rng.choice([64, 128, 256]), rng.choice([256, 512, 1024])
            tile = (rng.choice([4, 8, 16, 32]), rng.choice([64, 128, 256]))
            cases.append(("elementwise", (rows, cols, tile, rng.randint(1, 4))))
        else:
            m, k_, n = (rng.choice([128, 256, 512]), rng.choice([64, 256, 512]),
                        rng.choice([128, 256]))
            cube = rng.choice([([64, 64], [64, 64], [64, 64]),
                               ([128, 128], [64, 256], [128, 128]),
                               ([64, 128], [32, 64], [64, 128])])
            cases.append(("matmul", (m, k_, n, cube)))
    return cases


@pytest.mark.parametrize("kind,params", _cases(seed=7, count=12))
def test_random_kernel_stays_under_the_roofline(kind, params):
    kernel, args, flops = (_elementwise if kind == "elementwise" else _matmul)(*params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.PyptoWarning)
        kernel(*args)
    run = kernel.last_run
    spec = kernel.last_compiled.spec
    cycles = run.stats["kernel_cycles"]
    assert cycles > 0
    cube_peak = spec.aic * spec.cube["mac_per_cycle_fp16"] * 2
    assert flops / cycles <= cube_peak
    moved = run.stats["gm_read_bytes"] + run.stats["gm_write_bytes"]
    assert moved / cycles <= spec.memory["hbm_bytes_per_cycle"] + spec.memory[
        "l2_bytes_per_cycle"]
    lanes = {}
    for r in sorted(run.tasks, key=lambda r: (r.task.core, r.core_index, r.start)):
        prev = lanes.get((r.task.core, r.core_index))
        assert prev is None or prev <= r.start  # a core runs one task at a time
        lanes[(r.task.core, r.core_index)] = r.end
