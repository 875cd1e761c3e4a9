"""The jit boundary: options fixed once per call into frozen records, one GC pause per call,
and a frontend that traces without importing the layers above it."""
from __future__ import annotations

import dataclasses
import gc
import pathlib
import subprocess
import sys
import textwrap

import pytest
import torch

import pypto
from pypto import _config, driver
from pypto._config import CompileOptions, CompStage, RunOptions
from pypto.frontend import options as opt
from pypto.gc_pause import gc_paused
from pypto.machine.spec import load as machine_spec
from pypto.passes import compile_program

F32 = pypto.DT_FP32
SRC = pathlib.Path(pypto.__file__).resolve().parent


def _kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x + 1.0
    return k


def test_run_options_are_frozen_with_the_declared_defaults():
    """Every RunOptions field defaults to its `_config` declaration, and cannot be changed."""
    run = RunOptions()
    for f in dataclasses.fields(RunOptions):
        declared = _config.default(f.metadata["group"], f.name)
        assert getattr(run, f.name) == (tuple(declared) if isinstance(declared, list)
                                        else declared), f.name
    assert run.launch_sched_aicpu_num == 7 and run.pass_verify_error_tol == (1e-3, 1e-3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.executor = "reference"
    with pytest.raises(dataclasses.FrozenInstanceError):
        CompileOptions().stop_after = CompStage.TILE_GRAPH
    assert CompileOptions().stop_after == CompStage(_config.default("host", "compile_stage"))


def test_run_options_read_the_scope_once():
    """from_scope reads each key from the current scope (runtime, verify and debug groups)."""
    with pypto.options(runtime_options={"stitch_function_max_num": 4, "executor": "reference"},
                       verify_options={"pass_verify_error_tol": [0.5, 0.25]},
                       debug_options={"runtime_debug_mode": 1}):
        run = RunOptions.from_scope(opt.lookup)
    assert (run.stitch_function_max_num, run.executor) == (4, "reference")
    assert run.pass_verify_error_tol == (0.5, 0.25) and run.runtime_debug_mode == 1
    assert RunOptions.from_scope(opt.lookup) == RunOptions()


def test_the_compiler_does_not_read_the_ambient_scope():
    """compile_program called directly follows its CompileOptions, not an open options scope."""
    k = _kernel()
    k(torch.rand(4, 64), torch.zeros(4, 64))
    program, spec = k.last_program, machine_spec(None)
    with pypto.options(host_options={"compile_stage": int(CompStage.TENSOR_GRAPH)},
                       pass_options={"pg_upper_bound": 1}):
        compiled = compile_program(program, spec, CompileOptions())
    assert compiled.stage == CompStage.ALL_COMPLETE
    assert compiled.subgraph_counts == k.last_compiled.subgraph_counts
    stopped = compile_program(program, spec, CompileOptions(stop_after=CompStage.TENSOR_GRAPH))
    assert stopped.stage == CompStage.TENSOR_GRAPH


def test_gc_pause_nests():
    """An inner pause leaves the GC off for the outer one; the outer end turns it back on."""
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_call_compiles_and_runs_with_the_gc_paused_once(monkeypatch):
    """The driver pauses the cyclic GC around compile and run, and resumes it after."""
    seen = []
    compile_orig, execute_orig = driver.compile_program, driver.JitKernel._execute

    def compile_spy(*args, **kwargs):
        seen.append(("compile", gc.isenabled()))
        return compile_orig(*args, **kwargs)

    def execute_spy(self, *args, **kwargs):
        seen.append(("run", gc.isenabled()))
        return execute_orig(self, *args, **kwargs)

    monkeypatch.setattr(driver, "compile_program", compile_spy)
    monkeypatch.setattr(driver.JitKernel, "_execute", execute_spy)
    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    _kernel()(x, y)
    assert seen == [("compile", False), ("run", False)] and gc.isenabled()
    assert torch.equal(y, x + 1)


def test_jit_lives_in_the_driver_and_is_named_in_the_frontend():
    assert pypto.frontend.jit is pypto.jit is driver.jit
    assert pypto.frontend.JitKernel is driver.JitKernel
    assert isinstance(_kernel(), driver.JitKernel)


def test_the_frontend_imports_without_the_layers_above_it():
    """In a fresh interpreter, with `pypto/__init__` stubbed out, the frontend loads only the
    base modules, the IR and itself."""
    code = textwrap.dedent(f"""
        import sys, types
        package = types.ModuleType("pypto")
        package.__path__ = [{str(SRC)!r}]
        sys.modules["pypto"] = package
        import pypto.frontend
        import pypto.frontend.entry, pypto.frontend.signature, pypto.frontend.options
        print(" ".join(sorted(m for m in sys.modules if m.startswith("pypto."))))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert "pypto.frontend.entry" in out
    above = {"ops", "passes", "runtime", "machine", "profiling", "toolkit", "driver"}
    assert [m for m in out if m.split(".")[1] in above] == []
