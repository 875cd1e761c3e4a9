"""`pypto.experimental`: operation options (tail-axis broadcast hints) and the custom ops PyPTO
marks experimental: `online_softmax`, `online_softmax_update` (blockwise softmax state for
FlashAttention-style kernels) and `transposed_batchmatmul`.

The two online-softmax ops are recorded as their component ops (mul, amax, sub, exp, sum, cast,
maximum, add), so they compute exactly what those ops compute. PyPTO runs them on Ascend 950
only; on the CPU they run everywhere. As in PyPTO they reduce over dim 0 (the key axis of a
`[k_len, q_len]` score block), and dim 0 must fit in one vector tile.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tracer import require_tracer
from pypto.frontend.options import get_operation_options as get_operation_options
from pypto.frontend.options import set_operation_options as set_operation_options
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import CUBE, emit1, register, value_of
from pypto.symbolic import Const, binary


def _pretty(shape: Any) -> str:
    return "[" + ", ".join(repr(d) for d in shape) + "]"

def _fp32_2d(op: str, t: Any, what: str) -> TensorValue:
    v = value_of(t, op, what)
    if v.dtype is not DataType.DT_FP32:
        raise PyptoTypeError(f"{op}: {what} must be DT_FP32, got {v.dtype.name}")
    if v.rank != 2:
        raise PyptoValueError(f"{op}: {what} must be 2-D, got rank {v.rank} (shape "
                              f"{_pretty(v.shape)})")
    return v


def _dim0_in_one_tile(op: str, v: TensorValue, what: str) -> None:
    """PyPTO does not split dim 0 of these ops: it must fit in the vector tile's dim 0."""
    tile = require_tracer(op).tile().vec
    rows = v.shape[0]
    if tile is not None and len(tile) == 2 and isinstance(rows, Const) and rows.value > tile[0]:
        raise PyptoValueError(f"{op}: dim 0 of {what} ({rows.value}) is split by the vector "
                              f"TileShape {list(tile)}; it must fit in one tile (set "
                              f"set_vec_tile_shapes({rows.value}, ...) or larger)")


def online_softmax(scores: Any, scale: float) -> tuple[Tensor, Tensor, Tensor]:
    """Local softmax statistics of one score block, per column (reduction over dim 0).

    `scores` is DT_FP32 `[k_len, q_len]`; `scale` an int or float (e.g. 1/sqrt(head_dim)).
    With s = scores * scale (FP32), returns

    - `exp_scores`: exp(s - column_max), DT_BF16 `[k_len, q_len]` (computed in FP32, rounded
      once to BF16, nearest even);
    - `column_max`: max of s over dim 0, DT_FP32 `[1, q_len]`;
    - `column_sum`: sum over dim 0 of the FP32 values exp(s - column_max) (before the BF16
      rounding), DT_FP32 `[1, q_len]`.

    The exponentials are not normalised; merge blocks with `online_softmax_update` and divide
    by the final sum. Needs a rank-2 vector TileShape whose dim 0 is at least k_len."""
    from pypto.ops.cast import cast
    from pypto.ops.elementwise import mul, sub
    from pypto.ops.reduce import amax, sum
    from pypto.ops.unary import exp
    op = "online_softmax"
    v = _fp32_2d(op, scores, "scores")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise PyptoTypeError(f"{op}: scale must be a float, got {scale!r}")
    _dim0_in_one_tile(op, v, "scores")
    s = mul(scores, float(scale))
    column_max = amax(s, 0, keepdim=True)
    e = exp(sub(s, column_max))
    column_sum = sum(e, 0, keepdim=True)
    return cast(e, DataType.DT_BF16), column_max, column_sum


def online_softmax_update(previous_max: Any, previous_sum: Any, previous_output: Any,
                          current_max: Any, current_sum: Any,
                          current_output: Any) -> tuple[Tensor, Tensor, Tensor]:
    """Merge the online-softmax state of the blocks so far with that of the current block.

    All tensors are DT_FP32 and 2-D: the maxima and sums `[1, q_len]`, the unnormalised outputs
    `[head_dim, q_len]` (one shape for both). With m = maximum(previous_max, current_max),
    a = exp(previous_max - m) and b = exp(current_max - m) (per column), returns

    - `updated_max` = m,
    - `updated_sum` = previous_sum * a + current_sum * b,
    - `updated_output` = previous_output * a + current_output * b (a, b broadcast over rows),

    each step rounded once in FP32. A column whose two maxima are both -inf gives NaN. Needs a
    rank-2 vector TileShape whose dim 0 is at least head_dim."""
    from pypto.ops.elementwise import add, maximum, mul, sub
    from pypto.ops.unary import exp
    op = "online_softmax_update"
    names = ("previous_max", "previous_sum", "previous_output", "current_max", "current_sum",
             "current_output")
    args = (previous_max, previous_sum, previous_output, current_max, current_sum,
            current_output)
    vals = {n: _fp32_2d(op, t, n) for n, t in zip(names, args)}
    out_shape = vals["previous_output"].shape
    if any(a != b for a, b in zip(vals["current_output"].shape, out_shape)):
        raise PyptoValueError(f"{op}: current_output shape "
                              f"{_pretty(vals['current_output'].shape)} != "
                              f"previous_output shape {_pretty(out_shape)}")
    for n in ("previous_max", "previous_sum", "current_max", "current_sum"):
        shape = vals[n].shape
        if shape[0] != Const(1) or shape[1] != out_shape[1]:
            raise PyptoValueError(f"{op}: {n} must have shape [1, {out_shape[1]!r}] (one value "
                                  f"per column of the outputs), got {_pretty(shape)}")
    _dim0_in_one_tile(op, vals["previous_output"], "previous_output")
    m = maximum(previous_max, current_max)
    a = exp(sub(previous_max, m))
    b = exp(sub(current_max, m))
    new_sum = add(mul(previous_sum, a), mul(current_sum, b))
    new_out = add(mul(previous_output, a), mul(current_output, b))
    return m, new_sum, new_out


_TBMM_DTYPES = (DataType.DT_FP16, DataType.DT_BF16)


@register("TRANSPOSED_BMM", core=CUBE)
def _transposed_bmm_compute(xs: list, at: dict) -> np.ndarray:
    a, b = xs
    nb, k = min(a.shape[1], b.shape[0]), min(a.shape[2], b.shape[1])
    lhs = np.transpose(a[:, :nb, :k].astype(np.float32), (1, 0, 2))  # (B, M, K)
    out = np.matmul(lhs, b[:nb, :k, :].astype(np.float32))           # (B, M, N)
    return np.ascontiguousarray(np.transpose(out, (1, 0, 2)))        # (M, B, N)


def transposed_batchmatmul(tensor_a: Any, tensor_b: Any, out_dtype: DataType) -> Tensor:
    """A batch matmul with the batch in the middle of `tensor_a` and of the result.

    `tensor_a` is (M, B, K) and `tensor_b` is (B, K, N), both DT_FP16 or both DT_BF16; the
    result is (M, B, N) of `out_dtype` (DT_FP16 or DT_BF16) with
    out[m, b, :] = tensor_a[m, b, :] @ tensor_b[b] — that is, tensor_a is transposed to
    (B, M, K), multiplied batch by batch with tensor_b, and the (B, M, N) product transposed
    back. Accumulation is FP32, rounded once to `out_dtype`. Needs a cube TileShape
    (`set_cube_tile_shapes`). The result is valid over tensor_a's valid M, the common valid B
    and tensor_b's valid N; the K sum runs over the common valid K."""
    from pypto.ops.core import check_cube_tile
    from pypto.ops.matmul import check_cube_alignment
    op = "transposed_batchmatmul"
    a = value_of(tensor_a, op, "tensor_a")
    b = value_of(tensor_b, op, "tensor_b")
    for what, v in (("tensor_a", a), ("tensor_b", b)):
        if v.dtype not in _TBMM_DTYPES:
            raise PyptoTypeError(f"{op}: {what} must be DT_FP16 or DT_BF16, got {v.dtype.name}")
        if v.rank != 3:
            raise PyptoValueError(f"{op}: {what} must be 3-D, got rank {v.rank}")
    if a.dtype != b.dtype:
        raise PyptoTypeError(f"{op}: tensor_b dtype {b.dtype.name} != tensor_a dtype "
                             f"{a.dtype.name}")
    if out_dtype not in _TBMM_DTYPES:
        raise PyptoTypeError(f"{op}: out_dtype must be DT_FP16 or DT_BF16, got {out_dtype!r}")
    if a.shape[1] != b.shape[0]:
        raise PyptoValueError(f"{op}: B of tensor_a (dim 1, {a.shape[1]!r}) != B of tensor_b "
                              f"(dim 0, {b.shape[0]!r}); tensor_a is (M, B, K), tensor_b "
                              f"(B, K, N)")
    if a.shape[2] != b.shape[1]:
        raise PyptoValueError(f"{op}: K of tensor_a (dim 2, {a.shape[2]!r}) != K of tensor_b "
                              f"(dim 1, {b.shape[1]!r})")
    cube = require_tracer(op).tile().cube
    check_cube_tile(op, cube)
    check_cube_alignment(a.dtype, cube)
    shape = (a.shape[0], a.shape[1], b.shape[2])
    valid = (a.valid_shape[0], binary("min", a.valid_shape[1], b.valid_shape[0]),
             b.valid_shape[2])
    return emit1("TRANSPOSED_BMM", [a, b], shape, out_dtype, valid, op=op)
