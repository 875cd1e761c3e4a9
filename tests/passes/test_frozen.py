"""The compiler's hand-off is frozen and repeatable: compiled objects refuse assignment,
`compile_program` leaves the traced program as it was and gives the same structure every
time, and the kinds (now enums) print, format, hash and JSON-encode as the old strings."""
import dataclasses
import gc
import inspect
import json
import weakref

import pytest
import torch

import pypto
from pypto._config import CompileOptions
from pypto.ir.dump import block_json
from pypto.passes import compile_program
from pypto.passes.kinds import AIC, AIV, COMPUTE, COPY_OUT, FUSE, GM, ORDER, WHOLE, Core, \
    EdgeKind, TileKind
from pypto.passes.tile_graph import TileOp, TileOpDraft


@pytest.fixture(scope="module")
def traced():
    """A program with a loop (two blocks), a split reduction, a matmul and an assemble."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          w: pypto.Tensor([64, 64], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
        for i in pypto.loop(x.shape[0] // 16, name="L", idx_name="i"):
            rows = x[i * 16:(i + 1) * 16, :]
            e = pypto.exp(rows - pypto.amax(rows, dim=-1, keepdim=True))
            y[i * 16:, :] = pypto.matmul(e / pypto.sum(e, dim=-1, keepdim=True), w,
                                         pypto.DT_FP32)

    x, w = torch.rand(32, 64), torch.rand(64, 64)
    y = torch.zeros(32, 64)
    k(x, w, y)
    return k


def _program_text(program) -> str:
    return json.dumps([block_json(b) for b in program.blocks()], sort_keys=True, default=repr)


def _structure(compiled) -> list:
    """Everything a compiled program says about its roots, as plain values."""
    out = []
    for name, root in sorted(compiled.roots.items()):
        g = root.graph
        out.append((name, sorted(g.escaping), sorted(g.gm_storages),
                    sorted((p, c, str(k)) for (p, c), k in g.edges.items()),
                    [(lf.name, lf.core, lf.signature, lf.op_count) for lf in root.leaves],
                    [(c.index, c.leaf.index, c.preds, repr(c.merge_info),
                      [(op.id, op.kind, op.opcode, op.core, op.local_inputs, op.latency,
                        [(r.value.id, r.offsets, r.shape, r.valid, r.dims) for r in op.inputs],
                        (op.output.value.id, op.output.offsets, op.output.shape)
                        if op.output else None) for op in c.ops]) for c in root.calls]))
    return out


def test_compile_leaves_its_program_unchanged_and_repeats_itself(traced):
    program, spec = traced.last_program, traced.last_compiled.spec
    before = _program_text(program)
    first = compile_program(program, spec, CompileOptions())
    second = compile_program(program, spec, CompileOptions())
    assert _program_text(program) == before
    assert _structure(first) == _structure(second)
    assert _structure(first) == _structure(traced.last_compiled)
    assert first.roots and all(r.calls for r in first.roots.values())


def test_compiled_objects_are_frozen(traced):
    compiled = traced.last_compiled
    root = next(iter(compiled.roots.values()))
    call = root.calls[0]
    op = call.ops[0]
    for obj, name in [(compiled, "roots"), (root, "graph"), (root.graph, "escaping"),
                      (call, "preds"), (call.leaf, "name"), (op, "local_inputs"),
                      (op, "kind")]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, getattr(obj, name))
    assert all(type(op) is TileOp for r in compiled.roots.values() for op in r.graph.ops)
    # no executor caches on the compiler's objects
    runtime = {"plan", "static_attrs", "sig_part", "operand_hints", "spare_buffers"}
    for cls in (type(compiled), type(root), type(call), TileOp):
        assert not runtime & {f.name for f in dataclasses.fields(cls)}, cls


def test_tile_op_drafts_take_the_fields_of_a_tile_op():
    """The draft's plain `__init__` sets every field of the frozen class, in its order."""
    params = list(inspect.signature(TileOpDraft.__init__).parameters)[1:]
    assert params == [f.name for f in dataclasses.fields(TileOp)]
    draft = TileOpDraft(1, COMPUTE, "ADD", AIV, [], None, None, {})
    draft.local_inputs = (True,)
    from pypto.passes.tile_graph import freeze
    freeze([draft])
    assert type(draft) is TileOp and draft.local_inputs == (True,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        draft.latency = 2.0


def test_a_compiled_program_is_not_kept_alive_by_the_compiler(traced):
    """Whatever the compiler caches belongs to one compilation."""
    compiled = compile_program(traced.last_program, traced.last_compiled.spec, CompileOptions())
    ref = weakref.ref(compiled)
    del compiled
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("member, text", [
    (COMPUTE, "compute"), (COPY_OUT, "copy_out"), (WHOLE, "whole"), (TileKind.PARTIAL,
                                                                      "partial"),
    (TileKind.COMBINE, "combine"), (FUSE, "fuse"), (GM, "gm"), (ORDER, "order"),
    (AIV, "AIV"), (AIC, "AIC")])
def test_kinds_are_their_old_strings(member, text):
    assert member == text and text == member and hash(member) == hash(text)
    assert str(member) == f"{member}" == "%s" % member == format(member) == text
    assert f"{member:>10}" == f"{text:>10}"
    assert json.dumps({member: [member]}) == json.dumps({text: [text]})
    assert {text: 1}[member] == 1 and type(member)(text) is member
    assert isinstance(member, (TileKind, EdgeKind, Core))


def test_compiled_kinds_are_enum_members(traced):
    root = next(iter(traced.last_compiled.roots.values()))
    assert {type(k) for k in root.graph.edges.values()} == {EdgeKind}
    assert all(type(op.kind) is TileKind and type(op.core) is Core for op in root.graph.ops)
    assert {lf.core for lf in root.leaves} <= {"AIV", "AIC"}
