"""Option scopes, getters, run modes, and the kernel signature: every annotation form of
api_surface.md §1.2, numpy arguments, and non-tensor arguments as trace-time constants."""
import dataclasses

import numpy as np
import pypto
import pytest
import torch

F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC


def vec_tiles(kernel) -> list:
    """The vector TileShape each recorded op captured, in program order."""
    return [op.tile.vec for b in kernel.last_program.blocks() for op in b.ops]


# --------------------------------------------------------------------------------------------
# Scopes

def test_options_as_context_manager_nests_and_inherits():
    """pypto.options(...) opens a scope that inherits what it does not set and is forgotten on
    exit; set_* inside it write into it."""
    assert pypto.get_current_scope() == "global"
    with pypto.options(pass_options={"sg_set_scope": 3}, vec_tile_shapes=[8, 8]):
        assert pypto.get_pass_options()["sg_set_scope"] == 3
        assert pypto.get_vec_tile_shapes() == [8, 8]
        with pypto.options("inner", pass_options={"enable_slice": True}):
            assert pypto.get_current_scope() == "inner"
            assert pypto.get_pass_options()["sg_set_scope"] == 3          # inherited
            assert pypto.get_pass_options()["enable_slice"] is True
            pypto.set_vec_tile_shapes(4, 8)
            assert pypto.get_vec_tile_shapes() == [4, 8]
        assert pypto.get_vec_tile_shapes() == [8, 8]
        assert pypto.get_pass_options()["enable_slice"] is False
    assert pypto.get_pass_options()["sg_set_scope"] == -1
    assert pypto.get_vec_tile_shapes() == []


def test_options_as_decorator_wraps_each_call():
    """As a decorator the scope is active during each call only; its name defaults to the
    function's name."""
    @pypto.options(pass_options={"sg_set_scope": 7}, debug_options={"compile_debug_mode": 0})
    def probe():
        return pypto.get_pass_options()["sg_set_scope"], pypto.get_current_scope()

    assert probe() == (7, "probe")
    assert probe() == (7, "probe")
    assert pypto.get_pass_options()["sg_set_scope"] == -1


def test_kernels_see_the_enclosing_scope_and_recompile_when_it_changes():
    """A kernel compiled inside a scope records that scope's TileShape; a different scope value
    is a different compilation, the same one hits the cache."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        y[:] = x + 1.0

    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    with pypto.options(vec_tile_shapes=[4, 64]):
        k(x, y)
    assert vec_tiles(k) == [(4, 64), (4, 64)] and torch.equal(y, x + 1)
    with pypto.options(vec_tile_shapes=[2, 64]):
        k(x, y)
    assert vec_tiles(k) == [(2, 64), (2, 64)] and k.compile_count == 2
    with pypto.options(vec_tile_shapes=[4, 64]):
        k(x, y)
    assert k.compile_count == 2
    with pytest.raises(pypto.PyptoError, match="no vector TileShape"):
        k(x, y)


def test_a_new_machine_recompiles_however_it_is_chosen(monkeypatch):
    """The machine is a runtime option the compile reads (core counts, buffer sizes): a
    change after decoration, or of $OPENPTO_MACHINE, must not reuse the old compile."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 256)
        y[:] = pypto.exp(x)

    x = torch.rand(256, 256)
    monkeypatch.delenv("OPENPTO_MACHINE", raising=False)
    k(x, torch.zeros_like(x))
    assert (k.last_compiled.spec.name, k.last_run.aiv) == ("a2a3", 48)
    monkeypatch.setenv("OPENPTO_MACHINE", "910b4")
    k(x, torch.zeros_like(x))
    assert (k.last_compiled.spec.name, k.last_run.aiv) == ("910b4", 40)
    k.runtime_options["machine"] = "a2a3"
    k(x, torch.zeros_like(x))
    assert (k.last_compiled.spec.name, k.compile_count) == ("a2a3", 2)   # the first compile


def test_getters_report_defaults_and_pad_cube_k():
    """get_pass_options lists every pass key with PyPTO's defaults; get_cube_tile_shapes pads
    k to three entries (k[2] = k[1])."""
    defaults = pypto.get_pass_options()
    assert {k: defaults[k] for k in ("sg_set_scope", "vec_nbuffer_setting",
                                     "cube_l1_reuse_setting", "cube_nbuffer_setting")} == {
        "sg_set_scope": -1, "vec_nbuffer_setting": {}, "cube_l1_reuse_setting": {},
        "cube_nbuffer_setting": {-1: 1}}
    defaults["vec_nbuffer_setting"][0] = 4           # a copy: the default is not changed
    assert pypto.get_pass_options()["vec_nbuffer_setting"] == {}
    assert pypto.get_runtime_options()["stitch_function_max_num"] == 128
    with pypto.options():
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        assert pypto.get_cube_tile_shapes() == ([16, 16], [256, 512, 512], [128, 128], False)
        pypto.set_cube_tile_shapes([16, 32], [64, 128, 256], [32, 32], enable_split_k=True)
        assert pypto.get_cube_tile_shapes() == ([16, 32], [64, 128, 256], [32, 32], True)
    assert pypto.get_cube_tile_shapes() == ([], [], [], False)


def test_cube_tile_shape_rules():
    """m and n take 2 entries and k 2 or 3; L0 <= L1 and L0 divides L1."""
    with pypto.options():
        with pytest.raises(pypto.PyptoError, match="cube tile 'k'"):
            pypto.set_cube_tile_shapes([16, 16], [256], [128, 128])
        with pytest.raises(pypto.PyptoError, match="L0 must be <= L1"):
            pypto.set_cube_tile_shapes([32, 16], [64, 64], [64, 64])


def test_vec_tile_set_inside_a_loop_is_restored_after_it():
    """set_vec_tile_shapes in a loop body applies to that body and to nested loops, and the
    outer TileShape is back after the loop (ops recorded there use it)."""
    seen = {}

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(0, x.shape[0], 16, name="L"):
            pypto.set_vec_tile_shapes(8, 64)
            for j in pypto.loop(2, name="M"):
                seen["nested"] = pypto.get_vec_tile_shapes()
                y[i + j * 8:, :] = x[i + j * 8:i + j * 8 + 8, :] * 2.0
        seen["after"] = pypto.get_vec_tile_shapes()
        y[0:16, :] = y[0:16, :] + 1.0

    x, y = torch.rand(32, 64), torch.zeros(32, 64)
    k(x, y)
    ref = x * 2
    ref[:16] += 1
    assert torch.equal(y, ref)
    assert seen == {"nested": [8, 64], "after": [16, 64]}
    assert vec_tiles(k) == [(8, 64)] * 3 + [(16, 64)] * 3
    assert pypto.get_vec_tile_shapes() == []


def test_sg_set_scope_is_recorded_per_op():
    """set_pass_options(sg_set_scope=...) tags the ops recorded after it; -1 resets."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        pypto.set_pass_options(sg_set_scope=5)
        t = pypto.exp(x)
        pypto.set_pass_options(sg_set_scope=-1)
        y[:] = t + 1.0

    k(torch.rand(4, 64), torch.zeros(4, 64))
    assert [op.scope for b in k.last_program.blocks() for op in b.ops] == [5, -1, -1]


# --------------------------------------------------------------------------------------------
# Run modes

def test_run_mode_values():
    """RunMode is an IntEnum NPU=0, SIM=1; run_mode accepts the enum or 0/1 only."""
    assert [(m.name, int(m)) for m in pypto.RunMode] == [("NPU", 0), ("SIM", 1)]
    assert pypto.options(runtime_options={"run_mode": 1}).values["runtime.run_mode"] \
        is pypto.RunMode.SIM
    with pytest.raises(pypto.PyptoError, match="Invalid run mode"):
        pypto.options(runtime_options={"run_mode": 2})


def test_npu_run_mode_prints_the_no_npu_notice_once(capsys, monkeypatch):
    """NPU runs on the CPU with exact numerics, saying so once per process."""
    from pypto import driver as kernel_mod
    monkeypatch.setattr(kernel_mod, "_NPU_NOTICE_SHOWN", False)

    def make():
        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
        def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
            pypto.set_vec_tile_shapes(4, 64)
            y[:] = x * 3.0
        return k

    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    k1, k2 = make(), make()
    k1(x, y)
    k1(x, y)
    k2(x, y)
    assert torch.equal(y, x * 3)
    assert capsys.readouterr().err.count("no NPU is present") == 1


# --------------------------------------------------------------------------------------------
# Annotation forms

def _add_one(ann_x, ann_y=None):
    """A kernel `y[:] = x + 1` with the given annotations; records what the body saw."""
    seen = {}

    def body(x, y):
        seen["shape"], seen["dtype"] = x.shape, x.dtype
        pypto.set_vec_tile_shapes(*([4] * (x.dim - 1) + [64]))
        y[:] = x + 1.0

    body.__annotations__ = {"x": ann_x, "y": ann_y if ann_y is not None else ann_x}
    return pypto.frontend.jit(body), seen


SYM = pypto.SymbolicScalar
FORMS = [
    ("static", pypto.Tensor((4, 64), F32), [4, 64]),
    ("Tensor()", pypto.Tensor(), [4, 64]),
    ("tensor()", pypto.tensor(), [4, 64]),
    ("Tensor([], dt)", pypto.Tensor([], F32), [4, 64]),
    ("[DYNAMIC, ...]", pypto.Tensor([DYN, ...], F32), [SYM, 64]),
    ("[DYNAMIC, DYNAMIC]", pypto.Tensor([DYN, DYN], F32), [SYM, SYM]),
    ("[DYN, 64]", pypto.Tensor([pypto.DYN, 64], F32), [SYM, 64]),
    ("[-1, 64]", pypto.Tensor([-1, 64], F32), [SYM, 64]),
    ("[STATIC, 64]", pypto.Tensor([pypto.STATIC, 64], F32), [4, 64]),
    ("Tensor[[DYN, 64], dt]", pypto.Tensor[[DYN, 64], F32], [SYM, 64]),
    ("Tensor[...]", pypto.Tensor[...], [4, 64]),
    ("Tensor[dict]", pypto.Tensor[{"shape": [DYN, 64], "dtype": F32}], [SYM, 64]),
]


@pytest.mark.parametrize("label,ann,kinds", FORMS, ids=[f[0] for f in FORMS])
def test_annotation_forms(label, ann, kinds):
    """Each annotation form binds a [4, 64] FP32 tensor: dynamic dims become SymbolicScalars
    printed as PyPTO does, the rest plain ints."""
    k, seen = _add_one(ann)
    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    k(x, y)
    assert torch.equal(y, x + 1)
    assert seen["dtype"] is F32
    for dim, kind in zip(seen["shape"], kinds):
        if kind is SYM:
            assert isinstance(dim, SYM) and "RUNTIME_GetInputShapeDim(ARG_x," in repr(dim)
        else:
            assert dim == kind and type(dim) is int
    assert len(seen["shape"]) == len(kinds)


def test_subscription_form_without_dtype_asserts_fp32():
    """`Tensor[...]` defaults its dtype to FP32 (a PyPTO quirk); `Tensor()` infers it."""
    x, y = torch.rand(4, 64).half(), torch.zeros(4, 64).half()
    k, _ = _add_one(pypto.Tensor[...])
    with pytest.raises(ValueError, match="DT_FP16.*DT_FP32"):
        k(x, y)
    k, seen = _add_one(pypto.Tensor())
    k(x, y)
    assert seen["dtype"] is pypto.DT_FP16 and torch.equal(y, x + 1)


def test_ellipsis_only_as_last_entry_and_rank_rules():
    """`...` may only end a shape; with `[DYNAMIC, ...]` the rank is at least 1 and each new
    static rank recompiles."""
    with pytest.raises(pypto.PyptoError, match="last entry"):
        pypto.Tensor([..., 64], F32)
    k, seen = _add_one(pypto.Tensor([DYN, ...], F32))
    for shape in ((4, 64), (2, 3, 64), (5, 64)):
        x, y = torch.rand(*shape), torch.zeros(*shape)
        k(x, y)
        assert torch.equal(y, x + 1)
    assert k.compile_count == 2


def test_named_dynamic_dims_are_shared_across_parameters():
    """pypto.frontend.dynamic("N") names one runtime size: parameters sharing it must agree,
    and the kernel sees the same symbol in both."""
    n = pypto.frontend.dynamic("N")
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([n, 64], F32), y: pypto.Tensor([n, 64], F32)):
        seen.append((repr(x.shape[0]), repr(y.shape[0] - x.shape[0])))
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0], name="L"):
            y[i:, :] = x[i:i + 1, :] + 1.0

    for rows in (3, 9):
        x, y = torch.rand(rows, 64), torch.zeros(rows, 64)
        k(x, y)
        assert torch.equal(y, x + 1)
    assert seen == [("N", "0")] and k.compile_count == 1
    with pytest.raises(ValueError, match="dynamic dim 'N' is 3 .* but 4 for input tensor #1 'y'"):
        k(torch.rand(3, 64), torch.zeros(4, 64))


def test_string_annotations_resolve_where_the_kernel_was_defined():
    """With `from __future__ import annotations` the annotations are strings: they are
    evaluated in the defining scope (locals of the enclosing function included)."""
    rows = pypto.frontend.dynamic("ROWS")
    ns: dict = {}
    exec("def k(x: 'pypto.Tensor([rows, 64], F32)', y: 'pypto.Tensor([rows, 64], F32)',\n"
         "      bias: 'float' = 1.0):\n"
         "    pypto.set_vec_tile_shapes(1, 64)\n"
         "    for i in pypto.loop(x.shape[0]):\n"
         "        y[i:, :] = x[i:i + 1, :] + bias\n", {"pypto": pypto, "F32": F32}, ns)
    kernel = pypto.frontend.jit(ns["k"])
    assert [name for name, _ in kernel.tensor_params] == ["x", "y"]
    x, y = torch.rand(5, 64), torch.zeros(5, 64)
    kernel(x, y, 2.0)
    assert torch.equal(y, x + 2)


def test_annotation_format_reaches_the_kernel():
    """`Tensor(shape, dtype, format=TILEOP_NZ)` tags the parameter's tensor with that format."""
    formats = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32, format=pypto.TileOpFormat.TILEOP_NZ),
          y: pypto.Tensor([4, 64], F32)):
        formats.extend([x.format, y.format])

    k(torch.rand(4, 64), torch.zeros(4, 64))
    assert formats == [pypto.TileOpFormat.TILEOP_NZ, pypto.TileOpFormat.TILEOP_ND]


def test_jit_rejects_a_non_function():
    """jit decorates functions only."""
    with pytest.raises(TypeError, match="decorates a function"):
        pypto.frontend.jit(3)


# --------------------------------------------------------------------------------------------
# Arguments

def test_numpy_arrays_are_accepted_and_written_in_place():
    """numpy arrays bind like torch tensors and receive the results in place."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop(0, x.shape[0], 8, name="L"):
            y[i:, :] = x[i:i + 8, :] * 2.0

    x = np.random.rand(24, 64).astype(np.float32)
    y = np.zeros((24, 64), np.float32)
    k(x, y)
    assert np.array_equal(y, x * np.float32(2))
    yt = torch.zeros(24, 64)
    k(x, yt)            # mixing numpy and torch arguments is fine on the CPU
    assert np.array_equal(yt.numpy(), y)


def test_non_tensor_arguments_are_trace_time_constants():
    """ints, lists and dataclass configs are plain Python values while tracing (usable in
    static shapes and Python loops); keyword arguments and defaults apply."""
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        tile: int
        scales: tuple

    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), y: pypto.Tensor([8, 64], F32), cfg: Cfg, reps: int = 1):
        seen.append((type(cfg.tile), type(reps)))
        pypto.set_vec_tile_shapes(cfg.tile, 64)
        t = x
        for _ in range(reps):
            for s in cfg.scales:
                t = t * s
        y[:] = t

    x, y = torch.rand(8, 64), torch.zeros(8, 64)
    k(x, y, Cfg(4, (2.0, 3.0)))
    assert torch.equal(y, x * 2 * 3)
    k(x, y, Cfg(4, (2.0, 3.0)), reps=2)
    assert torch.equal(y, x * 2 * 3 * 2 * 3)
    k(x, y, cfg=Cfg(4, (2.0, 3.0)), reps=2)
    assert k.compile_count == 2 and seen == [(int, int), (int, int)]
    assert len(list(k.last_program.blocks())[0].ops) == 4 + 1
