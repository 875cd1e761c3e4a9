"""The vector part of the task cost: a tile op's instructions (task_cost._vector)."""
from __future__ import annotations

from types import SimpleNamespace

from pypto import DT_FP32
from pypto.machine.spec import load as load_spec
from pypto.runtime import task_cost


def _op(opcode, n_inputs, attrs=None):
    value = SimpleNamespace(dtype=DT_FP32)
    region = SimpleNamespace(value=value)
    out = SimpleNamespace(value=SimpleNamespace(dtype=DT_FP32))
    return SimpleNamespace(opcode=opcode, inputs=[region] * n_inputs, output=out,
                           attrs=attrs or {}, src=SimpleNamespace(attrs={}))


def _cycles(op, valids, out_valid, spec):
    windows = tuple(((0,) * len(v), v) for v in valids) + (((0,) * len(out_valid), out_valid),)
    n = 1
    for e in out_valid:
        n *= e
    return task_cost._vector(op, windows, out_valid, 4 * n, spec)


def test_same_shape_binary_is_one_instruction():
    spec = load_spec("a2a3")
    assert _cycles(_op("ADD", 2), [(16, 16), (16, 16)], (16, 16), spec) == \
        spec.vector_cycles("binary", 16 * 16 * 4)


def test_a_broadcast_operand_is_expanded_first():
    spec = load_spec("a2a3")
    one = spec.vector_cycles("binary", 1024)
    expand = spec.vector_cycles("unary", 1024)
    assert _cycles(_op("MUL", 2), [(16, 16), (16, 1)], (16, 16), spec) == one + expand
    assert _cycles(_op("MUL", 2), [(16, 1), (1, 16)], (16, 16), spec) == one + 2 * expand


def test_a_column_sum_folds_rows_pairwise_a_row_sum_is_one_instruction():
    spec = load_spec("a2a3")
    col = _cycles(_op("REDUCE_SUM", 1, {"dims": [0]}), [(16, 16)], (1, 16), spec)
    assert col == sum(spec.vector_cycles("binary", h * 16 * 4) for h in (8, 4, 2, 1))
    row = _cycles(_op("REDUCE_SUM", 1, {"dims": [-1]}), [(16, 16)], (16, 1), spec)
    assert row == spec.vector_cycles("reduce_full_fp32_add", 16 * 16 * 4)
