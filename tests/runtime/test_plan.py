"""The execution plan (runtime/plan.py) belongs to one compiled program: kernels never share
one, a warm call reuses its program's, deleting the kernel frees both, and a run leaves the
compiler's objects as the compiler made them."""
import gc
import weakref

import torch

import pypto


def _scale_kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.exp(x) * 2.0
    return k


def _call(kernel):
    x, y = torch.randn(64, 64), torch.zeros(64, 64)
    kernel(x, y)
    torch.testing.assert_close(y, torch.exp(x) * 2.0)


def test_each_compiled_program_has_its_own_plan_and_warm_calls_reuse_it():
    a, b = _scale_kernel(), _scale_kernel()
    _call(a)
    _call(b)
    plan_a, plan_b = a.last_executor.plan, b.last_executor.plan
    assert plan_a is not plan_b
    assert plan_a.compiled is a.last_compiled and plan_b.compiled is b.last_compiled
    _call(a)
    assert a.last_executor.plan is plan_a


def test_deleting_a_kernel_frees_its_compiled_program_and_plan():
    k = _scale_kernel()
    _call(k)
    compiled, plan = weakref.ref(k.last_compiled), weakref.ref(k.last_executor.plan)
    del k
    gc.collect()
    assert compiled() is None and plan() is None


def test_a_run_leaves_the_compiled_program_unchanged():
    """The runtime keeps what it derives in the plan, not on the compiler's objects."""
    k = _scale_kernel()
    _call(k)
    _call(k)
    compiled = k.last_compiled
    assert not getattr(compiled, "spare_buffers", None)
    for root in compiled.roots.values():
        for call in root.calls:
            assert getattr(call, "operand_hints", None) is None
            for op in call.ops:
                assert getattr(op, "plan", None) is None
                assert getattr(op, "static_attrs", None) is None
