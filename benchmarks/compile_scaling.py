"""Compile / stitch scaling: time per tile op of kernels of increasing size, phase by phase.

Issue 31 adds an untiled concat beside many small tiles (its n = 27 case compiled in 50 s).
Issue 13: one `maximum` over [34, 76, 41, 14] with vector tile (7, 2, 1, 24) took 3.4 s written
whole and 70 s written as two assembled slices (the dependency pass and stitching compared
every pair of tile regions); a small-tile transpose cost ~1 ms per tile. Each kernel family
here is run at growing sizes; per size we report the process CPU seconds (robust on a shared
machine) of trace+compile, of the dependency pass alone, of execution (tile executor, with
stitching), of stitching alone and of the simulation, and the total per tile op. `ratio` is
the largest size's per-tile total over the smallest's: near 1 means linear, 8x more tiles
costing 64x more time would show as ~8.

    python benchmarks/compile_scaling.py [--suite smoke|quick|full]
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import io
import time
import warnings
from typing import Any, Callable

FAMILIES = {
    # name -> sizes per suite (the first dim); smoke only checks that the section runs
    "maximum whole": {"smoke": [], "quick": [8, 16, 34], "full": [8, 16, 34, 68]},
    "maximum sliced": {"smoke": [], "quick": [8, 16, 34], "full": [8, 16, 34, 68]},
    "transpose 8x8": {"smoke": [2, 8], "quick": [4, 16, 64], "full": [4, 16, 64, 128]},
    # issue 31: an untiled concat beside ~19k small tiles and assembles of slices (n = 27:
    # 25 s in the breadth merge's cycle checks before they searched only a level window)
    "concat beside tiles": {"smoke": [], "quick": [7, 14, 27], "full": [7, 14, 27, 54]},
}
TARGET_S = 2.0   # the aim for both [34, 76, 41, 14] forms, end to end


def _kernel(family: str, n: int) -> tuple[Any, list]:
    import torch
    import pypto
    f32 = pypto.DT_FP32
    if family.startswith("maximum"):
        shape = [n, 76, 41, 14]
        half = n // 2
        if family == "maximum whole":
            @pypto.frontend.jit
            def k(a: pypto.Tensor(shape, f32), b: pypto.Tensor(shape, f32),
                  out: pypto.Tensor(shape, f32)):
                pypto.set_vec_tile_shapes(7, 2, 1, 24)
                out[:] = pypto.maximum(a, b)
        else:
            @pypto.frontend.jit
            def k(a: pypto.Tensor(shape, f32), b: pypto.Tensor(shape, f32),
                  out: pypto.Tensor(shape, f32)):
                pypto.set_vec_tile_shapes(7, 2, 1, 24)
                out[0:half] = pypto.maximum(a[0:half], b[0:half])
                out[half:n] = pypto.maximum(a[half:n], b[half:n])
        return k, [torch.randn(*shape), torch.randn(*shape), torch.zeros(*shape)]
    if family == "concat beside tiles":
        @pypto.frontend.jit
        def k(x: pypto.Tensor([n, 39, 8, 30], f32), o0: pypto.Tensor([n, 39, 16, 30], f32),
              o1: pypto.Tensor([n, 39, 8, 30], f32)):
            pypto.set_vec_tile_shapes(1, 2, 3, 8)
            v1 = pypto.abs(x)
            o0[:] = pypto.concat([x, v1], dim=2)
            pypto.assemble(v1[0:n // 3, :, :, :], [0, 0, 0, 0], o1)
            pypto.assemble(pypto.neg(v1[n // 3:n, :, :, :]), [n // 3, 0, 0, 0], o1)
        return k, [torch.randn(n, 39, 8, 30), torch.zeros(n, 39, 16, 30),
                   torch.zeros(n, 39, 8, 30)]
    shape = [n, 6, 32, 40]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(shape, f32), y: pypto.Tensor([n, 6, 40, 32], f32)):
        pypto.set_vec_tile_shapes(1, 2, 8, 8)
        y[:] = pypto.transpose(x, 2, 3)
    return k, [torch.randn(*shape), torch.zeros(n, 6, 40, 32)]


@contextlib.contextmanager
def _phase_clocks(parts: dict[str, float]):
    """Adds the CPU seconds spent in each timed function to `parts` while active."""
    import pypto.call_record as C
    import pypto.driver as K
    import pypto.passes as P
    from pypto.runtime.instance_links import InstanceLinker
    from pypto.runtime.stitch import Stitcher

    def timed(key: str, fn: Callable) -> Callable:
        def wrapper(*a, **kw):
            start = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                parts[key] += time.process_time() - start
        return wrapper

    # stitching's links: window by window (`InstanceLinker.link`, the Python core) or in
    # batches of windows at flush (`Stitcher._link_batch`, the compiled core; it falls back to
    # `link` only for tasks it cannot table, none of these kernels)
    saved = [(K, "compile_program"), (K.JitKernel, "_trace"), (K.JitKernel, "_execute"),
             (C, "simulate"), (P, "link"), (InstanceLinker, "link"), (Stitcher, "_link_batch")]
    originals = [getattr(obj, name) for obj, name in saved]
    keys = ["compile", "trace", "execute", "simulate", "deps", "stitch", "stitch"]
    for (obj, name), key, fn in zip(saved, keys, originals):
        setattr(obj, name, timed(key, fn))
    try:
        yield
    finally:
        for (obj, name), fn in zip(saved, originals):
            setattr(obj, name, fn)


def measure(family: str, n: int) -> dict:
    """One fresh kernel of `family` at size `n`: compiled, run, simulated; CPU seconds."""
    kernel, args = _kernel(family, n)
    gc.collect()   # the previous kernel's graphs are garbage: not this kernel's time
    parts = dict.fromkeys(["trace", "compile", "deps", "execute", "stitch", "simulate"], 0.0)
    with _phase_clocks(parts), warnings.catch_warnings(), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")   # the expression-table budget warning: expected here
        wall = time.perf_counter()
        kernel(*args)
        kernel.last_run   # the simulation is lazy
        wall = time.perf_counter() - wall
    tiles = sum(len(root.graph.ops) for root in kernel.last_compiled.roots.values())
    total = parts["trace"] + parts["compile"] + parts["execute"] + parts["simulate"]
    return {"family": family, "size": n, "tile_ops": tiles, **parts, "total": total,
            "wall": wall, "us_per_tile": total / tiles * 1e6}


def run(suite: str = "quick", log: Callable[[str], None] = print) -> list[dict]:
    """Every family at its suite's sizes (smallest first); each family's last row carries the
    per-tile ratio largest / smallest."""
    measure("transpose 8x8", 1)   # warm-up: imports and first-call caches are not per-tile
    rows = []
    for family, sizes in FAMILIES.items():
        first = None
        for n in sizes[suite]:
            r = measure(family, n)
            first = first or r
            r["ratio"] = r["us_per_tile"] / first["us_per_tile"]
            rows.append(r)
            log(f"  {family:15} n={n:<4} {r['tile_ops']:>6} tile ops  compile "
                f"{r['trace'] + r['compile']:6.2f} s (deps {r['deps']:5.2f})  execute "
                f"{r['execute']:6.2f} s (stitch {r['stitch']:5.2f})  simulate "
                f"{r['simulate']:5.2f} s  {r['us_per_tile']:6.0f} us/tile  x{r['ratio']:.2f}")
    return rows


def markdown(rows: list[dict]) -> list[str]:
    """The results table (benchmarks/run.py puts it under the scaling section)."""
    out = ["## 3b. Compile and stitch scaling (issue 13)", "",
           "Process CPU seconds per phase of one kernel call at growing sizes; `x` is the "
           "per-tile total over the family's smallest size (near 1 = linear). Target: the "
           f"two [34, 76, 41, 14] maximum forms each under {TARGET_S:.0f} s end to end.", "",
           "| kernel | size | tile ops | trace+compile | of which deps | execute | "
           "of which stitch | simulate | total | µs/tile | x |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['family']} | {r['size']} | {r['tile_ops']} | "
                   f"{r['trace'] + r['compile']:.2f} | {r['deps']:.2f} | {r['execute']:.2f} | "
                   f"{r['stitch']:.2f} | {r['simulate']:.2f} | {r['total']:.2f} | "
                   f"{r['us_per_tile']:.0f} | {r['ratio']:.2f} |")
    return out + [""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=["smoke", "quick", "full"], default="quick")
    args = parser.parse_args()
    print("\n".join(markdown(run(args.suite))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
