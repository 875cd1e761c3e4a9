"""Kernels whose tasks each bind one mechanism of the machine model, so that board traces of
them tell the machine's constants apart: vector exps, vector multiplies, cube MADs, ND2NZ
loads of 128-byte rows, short vector bursts, window builds of 2 and 3 instances, dependency
hops and the first launch.

Record each on your board (`runtime_debug_mode=1`), then fit the simulated machine to the
traces, in the order this script calls the kernels (docs/calibration.md, "Calibrate to your
board"):

    python kernels.py --list
    pypto-toolkit calibrate board/*.json --kernel examples/calibration/kernels.py

Run:  python kernels.py            (each kernel once, timing only)
"""
import sys

import torch

import pypto

F32, F16 = pypto.DT_FP32, pypto.DT_FP16
TIMING = {"numerics": "timing_only"}


def vector_mix(rows: int = 256):
    """Two vector-bound leaves: one of exps, one of multiplies."""
    @pypto.frontend.jit(runtime_options=TIMING)
    def vector_mix(a: pypto.Tensor([rows, 512], F32), x: pypto.Tensor([rows, 512], F32),
                   b: pypto.Tensor([rows, 512], F32), y: pypto.Tensor([rows, 512], F32)):
        pypto.set_vec_tile_shapes(32, 512)
        x[:] = pypto.exp(pypto.exp(pypto.exp(pypto.exp(a))))
        y[:] = b * 1.01 * 1.02 * 1.03 * 1.04 * 1.05 * 1.06 * 1.07 * 1.08 * 1.09 * 1.1

    vector_mix(*(torch.rand(rows, 512) for _ in range(4)))
    return vector_mix


def matmul(m: int, k: int, n: int, tiles: tuple):
    """A matmul: cube-bound with big tiles and long K, load-bound (ND2NZ rows) with short K."""
    @pypto.frontend.jit(runtime_options=TIMING)
    def matmul(a: pypto.Tensor([m, k], F16), b: pypto.Tensor([k, n], F16),
               c: pypto.Tensor([m, n], F32)):
        pypto.set_cube_tile_shapes(*tiles)
        c[:] = pypto.matmul(a, b, F32)

    matmul(torch.rand(m, k).half(), torch.rand(k, n).half(), torch.zeros(m, n))
    return matmul


def _exps(x, times: int):
    for _ in range(times):
        x = pypto.exp(x)
    return x


def windows(stitch: int, iterations: int = 8):
    """A loop stitched `stitch` instances per window, each instance a row block of exps and
    the row sums that depend on them."""
    r = 256

    @pypto.frontend.jit(runtime_options={**TIMING, "stitch_function_max_num": stitch})
    def windows(a: pypto.Tensor([iterations * r, 512], F32),
                t: pypto.Tensor([iterations * r, 512], F32),
                y: pypto.Tensor([iterations * r, 1], F32)):
        pypto.set_vec_tile_shapes(32, 512)
        for i in pypto.loop(iterations, name="rows"):
            t[i * r:(i + 1) * r, :] = _exps(a[i * r:(i + 1) * r, :], 24)
            y[i * r:(i + 1) * r, :] = pypto.sum(t[i * r:(i + 1) * r, :], -1, keepdim=True)

    windows(torch.rand(iterations * r, 512), torch.zeros(iterations * r, 512),
            torch.zeros(iterations * r, 1))
    return windows


def narrow_rows(rows: int):
    """A vector copy of 128-byte rows out of a wide tensor: one short burst per row."""
    @pypto.frontend.jit(runtime_options=TIMING)
    def narrow_rows(a: pypto.Tensor([rows, 512], F32), y: pypto.Tensor([rows, 32], F32)):
        pypto.set_vec_tile_shapes(256, 32)
        y[:] = pypto.view(a, [rows, 32], [0, 0]) + 1.0

    narrow_rows(torch.rand(rows, 512), torch.zeros(rows, 32))
    return narrow_rows


# the calls, in the order the board traces are given to `calibrate`
CALLS = [
    ("vector_mix 256 rows", vector_mix, (256,)),
    ("cube-bound matmul 512x2048x512", matmul,
     (512, 2048, 512, ([128, 128], [64, 256], [256, 256]))),
    ("ND2NZ-bound matmul 1536x4096x64", matmul,
     (1536, 4096, 64, ([16, 16], [256, 1024], [64, 64]))),
    ("windows of 3 instances", windows, (3,)),
    ("128-byte rows 32768", narrow_rows, (32768,)),
]


def run_all() -> list:
    """Call every kernel of `CALLS` once; -> the kernels, in order."""
    return [make(*args) for _, make, args in CALLS]


if __name__ == "__main__":
    if "--list" in sys.argv:
        for n, (what, _, _) in enumerate(CALLS):
            print(f"{n}: {what}")
    else:
        for (what, _, _), kernel in zip(CALLS, run_all()):
            # timing only: these kernels exist to be timed (their numerics are the ops')
            run = kernel.last_run
            print(f"~ {what}: {run.us(run.stats['kernel_cycles']):.1f} us simulated")
