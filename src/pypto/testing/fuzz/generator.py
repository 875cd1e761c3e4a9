"""Random kernels, written the way users write them: `@pypto.frontend.jit` with
`pypto.Tensor([...], dtype)` annotations, `set_vec_tile_shapes` / `set_cube_tile_shapes`,
`pypto.loop`, views, assembles and plain operators. `generate(seed, index)` picks a family
(weighted) and is deterministic in (seed, index); the families live in tensor_families.py,
reduce_families.py, view_families.py, loop_families.py and reach_families.py.

A small share of kernels is invalid on purpose (family "invalid", and out-of-range slices or
views elsewhere): they must raise a named pypto error.
"""
from __future__ import annotations

import random

from pypto.testing.fuzz import loop_families as lf
from pypto.testing.fuzz import reach_families as rf
from pypto.testing.fuzz import reduce_families as red
from pypto.testing.fuzz import tensor_families as tf
from pypto.testing.fuzz import view_families as vf
from pypto.testing.fuzz.builder import Builder
from pypto.testing.fuzz.case import Case

INVALID = [
    ("tile rank", "x0: [8, 16]", ["pypto.set_vec_tile_shapes(8)", "out0[:] = x0 + 1.0"]),
    ("shape mismatch", "x0: [8, 16]; x1: [8, 8]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = x0 + x1"]),
    ("matmul inner dims", "x0: [16, 32]; x1: [16, 16]",
     ["pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])",
      "out0[:] = pypto.matmul(x0, x1, pypto.DT_FP32)"]),
    ("no cube tile", "x0: [16, 32]; x1: [32, 16]",
     ["out0[:] = pypto.matmul(x0, x1, pypto.DT_FP32)"]),
    ("reshape size", "x0: [8, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.reshape(x0, [8, 15])"]),
    ("slice past the end", "x0: [16, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = x0[8:24, :] * 2.0"]),
    ("out shape", "x0: [8, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.sum(x0, dim=0, keepdim=True)"]),
    ("concat dims", "x0: [8, 16]; x1: [8, 8]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.concat([x0, x1], dim=0)"]),
    ("zero tile", "x0: [8, 16]", ["pypto.set_vec_tile_shapes(0, 16)", "out0[:] = x0 * 2.0"]),
]


def invalid(b: Builder) -> None:
    """A kernel that breaks one rule on purpose: it must raise a named pypto error."""
    label, params, lines = b.rng.choice(INVALID)
    for spec in params.split("; "):
        name, shape = spec.split(": ")
        b.param(eval(shape), "fp32", name=name)
    out_shape = [8, 16] if "matmul" not in label and "no cube" not in label else [16, 16]
    if label == "slice past the end":
        out_shape = [16, 16]
    b.param(out_shape, "fp32", "out", name="out0")
    for line in lines:
        b.emit(line, "")
    b.expect = "PyptoError"
    b.notes.append(f"invalid on purpose: {label}")


FAMILIES = {  # name: (function, weight)
    "elementwise": (tf.elementwise, 10), "broadcast": (tf.broadcast, 6),
    "reduce": (red.reduce, 7), "cast": (tf.cast, 4), "softmax": (red.softmax, 2),
    "matmul": (tf.matmul, 7), "view": (vf.view, 5), "layout": (vf.layout, 7),
    "tiles": (tf.tiles, 5), "scale": (tf.scale, 2), "stats": (red.stats, 3),
    "compose": (vf.compose, 4), "index": (vf.index, 3),
    "loop": (lf.loop, 7), "cond": (lf.cond, 4), "unroll": (lf.unroll, 3),
    "nested": (lf.nested, 3), "carried": (lf.carried, 3), "attention": (lf.attention, 3),
    "recurrence": (lf.recurrence, 2), "triangle": (lf.triangle, 2),
    "sequence": (lf.sequence, 3), "lookup": (lf.lookup, 3),
    "unroll_tiers": (rf.unroll_tiers, 3), "valid_extent": (rf.valid_extent, 3),
    "scatter": (rf.scatter, 3), "inplace_reshape": (rf.inplace_reshape, 2),
    "cast_mix": (rf.cast_mix, 3), "concat_tiles": (rf.concat_tiles, 2),
    "stitch_state": (rf.stitch_state, 3), "two_kernels": (rf.two_kernels, 3),
    "invalid": (invalid, 2),
}


def generate(seed: int, index: int, families=None) -> Case:
    """Kernel `index` of the batch with `seed`: the same pair always gives the same case."""
    rng = random.Random(seed * 1_000_003 + index)
    names = [n for n in FAMILIES if not families or n in families]
    family = rng.choices(names, [FAMILIES[n][1] for n in names])[0]
    b = Builder(rng, seed, index, family)
    FAMILIES[family][0](b)
    return b.case()
