"""The reference executor runs chains of row-local ops chunk by chunk (runtime/fusion.py): the
results are bit-identical to running every op on its own, and chains that would mix rows
across chunks run op by op."""
import numpy as np
import pytest
import torch

import pypto
from pypto.runtime import fusion
from pypto.runtime.liveness import storage_users
from pypto.runtime.reference import ReferenceExecutor

F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
# the inputs hold infinities and NaNs on purpose (numpy warns about them either way)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch):
    """Chunk even small tensors, a few rows at a time (with a ragged last chunk)."""
    monkeypatch.setattr(ReferenceExecutor, "chunk_min_bytes", 0)
    monkeypatch.setattr(ReferenceExecutor, "chunk_bytes", 3 * 96 * 4)


def _run(kernel, args, fuse, monkeypatch):
    monkeypatch.setattr(ReferenceExecutor, "fuse", fuse)
    args = [a.clone() for a in args]
    with pypto.options(runtime_options={"executor": "reference"}):
        kernel(*args)
    return args, kernel.last_executor.chunked_ops


def _bits(t: torch.Tensor) -> np.ndarray:
    a = t.detach().cpu()
    if a.dtype == torch.bfloat16:
        return a.view(torch.int16).numpy()
    return a.numpy().view(np.uint8)


def assert_same_as_op_by_op(kernel, args, monkeypatch, *, chunked: bool = True):
    fused, n_chunked = _run(kernel, args, True, monkeypatch)
    plain, n_plain = _run(kernel, args, False, monkeypatch)
    assert n_plain == 0
    assert (n_chunked > 0) == chunked, f"{n_chunked} ops ran chunked"
    for a, b in zip(fused, plain):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(_bits(a), _bits(b))


def _special(*shape, seed=0, dtype=torch.float32):
    """Random values with infinities, NaNs, zeros, huge and subnormal values mixed in."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g) * 4
    flat = x.view(-1)
    picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 20),), generator=g)
    specials = torch.tensor([float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 1e38, -1e38,
                             1e-40, -1e-42, 88.8, -104.0])
    flat[picks] = specials[torch.arange(len(picks)) % len(specials)]
    return x.to(dtype)


# --------------------------------------------------------------------------------------------
# Chains that run chunked

def test_softmax_with_a_ragged_last_chunk(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
        y[:] = e / pypto.sum(e, dim=-1, keepdim=True)
    assert_same_as_op_by_op(k, [_special(37, 96), torch.zeros(37, 96)], monkeypatch)


def test_layer_norm_with_broadcast_weights_and_scalars(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), w: pypto.Tensor([], F32), b: pypto.Tensor([], F32),
          y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        mu = pypto.mean(x, -1, keepdim=True)
        d = x - mu
        var = pypto.mean(d * d, -1, keepdim=True)
        y[:] = d * pypto.rsqrt(var + 1e-5) * w + b - 0.5
    args = [_special(29, 64, seed=1), torch.randn(1, 64), torch.randn(1, 64), torch.zeros(29, 64)]
    assert_same_as_op_by_op(k, args, monkeypatch)


UNARY = [pypto.exp, pypto.sigmoid, pypto.rsqrt, pypto.sqrt, pypto.log, pypto.tanh, pypto.abs,
         pypto.neg, pypto.reciprocal, pypto.floor, pypto.sin, pypto.relu, pypto.erf]


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("fn", UNARY, ids=[f.__name__ for f in UNARY])
def test_unary_chains_in_every_float_type(fn, dtype, monkeypatch):
    """Low-precision inputs are widened per chunk and every result is rounded per op."""
    tdtype = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16}[dtype]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], dtype), y: pypto.Tensor([], dtype)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = fn(x * 0.75 + 0.25) / 3.0

    args = [_special(21, 64, seed=2, dtype=tdtype), torch.zeros(21, 64, dtype=tdtype)]
    assert_same_as_op_by_op(k, args, monkeypatch)


BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
          pypto.maximum, pypto.minimum, lambda a, b: pypto.pow(a, b), lambda a, b: 2.0 - a / b,
          lambda a, b: pypto.where(a > b, a, b), lambda a, b: 2.0 - a / (b + 1.0)]


@pytest.mark.parametrize("fn", BINARY, ids=[f"b{i}" for i in range(len(BINARY))])
def test_binary_chains_with_row_column_and_full_operands(fn, monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), col: pypto.Tensor([], F32), row: pypto.Tensor([], F32),
          y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = fn(fn(x, col), row) * fn(row, x)
    args = [_special(19, 64, seed=3), _special(19, 1, seed=4), _special(1, 64, seed=5),
            torch.zeros(19, 64)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_casts_between_float_and_int_types(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], BF16), y: pypto.Tensor([], F16), z: pypto.Tensor([], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 64)
        h = pypto.cast(pypto.cast(x, F32) * 3.0, F16, pypto.CastMode.CAST_ROUND)
        y[:] = pypto.exp(h) + h
        z[:] = pypto.cast(pypto.cast(h, F32) * 100.0, pypto.DT_INT32, pypto.CastMode.CAST_FLOOR)
    args = [_special(23, 64, seed=6, dtype=torch.bfloat16), torch.zeros(23, 64, dtype=torch.float16),
            torch.zeros(23, 64, dtype=torch.int32)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_a_weight_cast_inside_the_chain_runs_whole_first(monkeypatch):
    """rms_norm of BF16 casts its [1, D] gamma to FP32 between row ops: that cast runs once,
    and the rows around it still run chunked."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], BF16), g: pypto.Tensor([], BF16), y: pypto.Tensor([], BF16)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.rms_norm(x, g, 1e-6)
    args = [_special(23, 64, seed=10, dtype=torch.bfloat16), torch.randn(1, 64).bfloat16(),
            torch.zeros(23, 64, dtype=torch.bfloat16)]
    assert_same_as_op_by_op(k, args, monkeypatch)
    _, n_chunked = _run(k, args, True, monkeypatch)
    opcodes = [op.opcode for op in next(k.last_program.blocks()).ops]
    assert opcodes[-2:] == ["CAST", "ASSEMBLE"] and "CAST" in opcodes[1:-2]
    assert n_chunked == len(opcodes) - 2   # all but the gamma cast (and the sink)


REDUCTIONS = [pypto.sum, pypto.amax, pypto.amin, pypto.mean, pypto.prod,
              lambda x, d, keepdim: pypto.var(x, d, keepdim=keepdim)]


@pytest.mark.parametrize("dims", [-1, 1, [1, 2]], ids=["last", "middle", "last_two"])
@pytest.mark.parametrize("red", REDUCTIONS, ids=["sum", "amax", "amin", "mean", "prod", "var"])
def test_rank3_reductions_over_trailing_axes(red, dims, monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(2, 8, 64)
        y[:] = x - red(x * 1.5, dims, keepdim=True)
    args = [_special(11, 12, 96, seed=7), torch.zeros(11, 12, 96)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_argmax_and_int_results(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), i: pypto.Tensor([], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 64)
        i[:] = pypto.argmax(x * 2.0, -1, keepdim=True) + pypto.argmin(x, -1, keepdim=True)
    args = [torch.randn(17, 64), torch.zeros(17, 1, dtype=torch.int32)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_leading_unit_axes_chunk_the_first_long_axis(monkeypatch):
    """[1, S, S] scores (one head): the chunks cut axis 1."""
    @pypto.frontend.jit
    def k(q: pypto.Tensor([], F32), kk: pypto.Tensor([], F32), o: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(1, 32, 64)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        s = pypto.matmul(q, kk, F32, b_trans=True) * 0.125
        e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
        o[:] = e / pypto.sum(e, dim=-1, keepdim=True)
    args = [torch.randn(1, 40, 32), torch.randn(1, 40, 32), torch.zeros(1, 40, 40)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_values_used_outside_the_chain_are_materialised(monkeypatch):
    """`e` feeds a matmul and a second output; `m` is read by a later block."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), w: pypto.Tensor([], F32), y: pypto.Tensor([], F32),
          z: pypto.Tensor([], F32), m_out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        m = pypto.amax(x, dim=-1, keepdim=True)
        e = pypto.exp(x - m)
        z[:] = e
        y[:] = pypto.matmul(e * 0.5, w, F32)
        for _ in pypto.loop(1):
            m_out[:] = m + 1.0
    args = [torch.randn(26, 64), torch.randn(64, 32), torch.zeros(26, 32), torch.zeros(26, 64),
            torch.zeros(26, 1)]
    assert_same_as_op_by_op(k, args, monkeypatch)


def test_valid_shapes_smaller_than_shapes_and_dynamic_rows(monkeypatch):
    """Row blocks of a DYNAMIC dim with a partial last block, and a column window narrower than
    the view: outside the valid region everything stays as it was."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 96], F32), w: pypto.Tensor([], F32),
          y: pypto.Tensor([pypto.DYNAMIC, 96], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="rows", idx_name="i"):
            xv = pypto.view(x, [16, 96], [i, 0], valid_shape=[(n - i).min(16), 80])
            e = pypto.exp(xv - pypto.amax(xv, dim=-1, keepdim=True)) * w
            y[i:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)
    for n in (37, 16, 5):
        args = [_special(n, 96, seed=n), torch.randn(1, 96), torch.full((n, 96), 7.0)]
        assert_same_as_op_by_op(k, args, monkeypatch)


def test_a_kernel_writing_its_input_in_place(monkeypatch):
    """y = f(y): the assemble may not stream into y while the chain still reads it."""
    @pypto.frontend.jit
    def k(y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.exp(y - pypto.amax(y, dim=-1, keepdim=True))
    assert_same_as_op_by_op(k, [torch.randn(30, 64)], monkeypatch)


def test_an_output_passed_as_the_same_buffer_as_an_input(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), w: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.sigmoid(x) * w + pypto.sum(x, -1, keepdim=True)

    def run(fuse):
        monkeypatch.setattr(ReferenceExecutor, "fuse", fuse)
        buf, w = _special(30, 64, seed=8), _special(1, 64, seed=9)
        with pypto.options(runtime_options={"executor": "reference"}):
            k(buf, w, buf)
        return buf
    assert np.array_equal(_bits(run(True)), _bits(run(False)))


# --------------------------------------------------------------------------------------------
# Chains that must not run chunked

def test_a_reduction_over_the_leading_axis_is_not_chunked(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.exp(x) / pypto.sum(pypto.exp(x), 0, keepdim=True)
    assert_same_as_op_by_op(k, [torch.randn(32, 64), torch.zeros(32, 64)], monkeypatch,
                            chunked=False)


def test_operands_with_different_valid_rows_are_not_chunked(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), z: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        xv = pypto.view(x, [16, 64], [0, 0], valid_shape=[5, 64])
        y[:] = pypto.exp(xv + z) * z
    args = [torch.randn(16, 64), torch.randn(16, 64), torch.full((16, 64), 7.0)]
    assert_same_as_op_by_op(k, args, monkeypatch, chunked=False)


def test_small_chains_run_op_by_op(monkeypatch):
    monkeypatch.setattr(ReferenceExecutor, "chunk_min_bytes", 1 << 20)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.exp(x) + 1.0
    assert_same_as_op_by_op(k, [torch.randn(32, 64), torch.zeros(32, 64)], monkeypatch,
                            chunked=False)


def test_plan_groups_only_row_local_ops():
    """Reductions without keepdim, matmuls and views end a chain; an assemble of the chain's
    last result becomes its sink."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), w: pypto.Tensor([], F32), y: pypto.Tensor([], F32),
          z: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        s = pypto.sum(x * 2.0, -1)                 # drops a dim: not row-local
        z[:] = pypto.exp(pypto.matmul(x, w, F32)) + 1.0
        y[:] = s
    x, w = torch.randn(8, 64), torch.randn(64, 64)
    with pypto.options(runtime_options={"executor": "reference"}):
        k(x, w, torch.zeros(8), torch.zeros(8, 64))
    block = next(k.last_program.blocks())
    plan = fusion.plan_block(block, storage_users(k.last_program))
    shape = [[op.opcode for op in item.ops] + (["->" + item.sink.opcode] if item.sink else [])
             if isinstance(item, fusion.Chain) else item.opcode for item in plan]
    assert shape == [["MULS"], "REDUCE_SUM", "MATMUL", ["EXP", "ADDS", "->ASSEMBLE"], "ASSEMBLE"]


def test_errors_are_unchanged(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.exp(x) * 2.0
    messages = []
    for fuse in (True, False):
        monkeypatch.setattr(ReferenceExecutor, "fuse", fuse)
        y = np.zeros((32, 64), np.float32)
        y.flags.writeable = False
        with pypto.options(runtime_options={"executor": "reference"}):
            with pytest.raises(pypto.PyptoError) as err:
                k(np.random.rand(32, 64).astype(np.float32), y)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "read-only" in messages[0]
