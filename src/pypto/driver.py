"""`pypto.jit`: the kernel driver. bind -> cache key -> trace (on a miss) -> compile -> run ->
simulate -> write, read top to bottom in `JitKernel._call`.

Decoration checks the signature (tensor parameters first, no return value) and the option
dicts, but compiles nothing. Each call binds the caller's tensors against the annotations,
builds the cache key from the static shapes, dtypes, non-tensor argument values, the option
scope and the simple module globals the kernel reads (`frontend/guards.py` says which), traces
the body on a miss (`frontend/entry.py`), compiles it with `CompileOptions` and runs it with
`RunOptions`, both fixed once per call from the option scope: nothing below the driver reads
the scope. Dynamic dims never recompile. A kernel cannot call another kernel while it is being
traced (a helper is a plain function or `@pypto.frontend.function`, inlined into the caller).
`host_options.compile_stage` other than ALL_COMPLETE stops compilation after that stage (see
`pypto.passes.compile_program`): the kernel then does not run, and says so on stderr.
`runtime_options` is held by reference, so a change after decoration takes effect.
`pypto/__init__.py` attaches `jit` and `JitKernel` to `pypto.frontend`, where users name them.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pypto import _config
from pypto._config import CompileOptions, RunOptions
from pypto.errors import PyptoTypeError, PyptoValueError, PyptoWarning, user_facing
from pypto.frontend import knobs
from pypto.frontend import options as opt
from pypto.frontend.binding import BoundTensor, freeze
from pypto.frontend.entry import check_not_nested, trace_kernel
from pypto.frontend.guards import GlobalGuards
from pypto.frontend.signature import KernelSignature, check_source
from pypto.gc_pause import gc_paused
from pypto.ir.program import Program
from pypto.machine.simulate import simulate
from pypto.machine.spec import load as machine_spec
from pypto.machine.spec import resolve as resolve_machine
from pypto.passes import CompiledProgram, compile_program
from pypto.runtime import differential
from pypto.runtime.compile_cache import CacheEntry, CacheKey, CompileCache
from pypto.runtime.plan import ExecutionPlan
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.stitch import Stitcher
from pypto.runtime.tile_executor import TileExecutor, timing_only_possible

_NPU_NOTICE_SHOWN = False
_JIT_EXTRA_KEYS = {"infer_controlflow_shape", "use_cache", "new_ir", "create_new_logical_tensor"}


class JitKernel:
    """The callable a `@pypto.frontend.jit` kernel becomes."""

    def __init__(self, func: Callable, *, host_options: dict | None = None,
                 codegen_options: dict | None = None, pass_options: dict | None = None,
                 runtime_options: dict | None = None, verify_options: dict | None = None,
                 debug_options: dict | None = None, _scope: dict[str, Any] | None = None,
                 **extra: Any):
        if not inspect.isfunction(func):
            raise PyptoTypeError(f"pypto.frontend.jit decorates a function, got "
                                 f"{type(func).__name__}")
        unknown = set(extra) - _JIT_EXTRA_KEYS
        if unknown:
            raise PyptoTypeError(f"pypto.frontend.jit got unknown keyword(s) {sorted(unknown)}")
        self.func = func
        # what a copy in another process is rebuilt from (`__reduce__`: a Ray worker's kernel)
        self._made_with = dict(host_options=host_options, codegen_options=codegen_options,
                               pass_options=pass_options, runtime_options=runtime_options,
                               verify_options=verify_options, debug_options=debug_options,
                               _scope=_scope, **extra)
        self.use_cache = bool(extra.get("use_cache", True))
        functools.update_wrapper(self, func)
        check_source(func)
        self._fixed = opt.flatten(host_options=host_options, codegen_options=codegen_options,
                                  pass_options=pass_options, verify_options=verify_options,
                                  debug_options=debug_options)
        if runtime_options is not None and not isinstance(runtime_options, dict):
            raise PyptoTypeError("runtime_options must be a dict")
        self.runtime_options = runtime_options if runtime_options is not None else {}
        _config.check_dict("runtime", self.runtime_options, "runtime_options")
        self.signature = KernelSignature(func, _scope)
        self.tensor_params = self.signature.tensor_params
        self.other_params = self.signature.other_params
        self._guards = GlobalGuards(func)
        # the compiled programs, each with its execution plan and the knob sites its trace met
        self.compile_cache = CompileCache()
        self.last_compiled: CompiledProgram | None = None
        self._last_run: Any = None
        self._pending_run: Any = None
        self.last_program: Program | None = None
        self.last_call: tuple[tuple, dict] | None = None   # (args, kwargs), for `whatif`
        self.last_executor: Any = None
        self.compile_count = 0
        self._out_dir: str | None = None  # this call's output folder, once one is made
        self.compile_times: list[tuple[float, float]] = []  # (trace s, compile s) per compile

    def __reduce__(self) -> tuple:
        """Pickled as its function and decorator arguments: a copy in another process (the
        tuner's Ray workers) compiles afresh and has no record of calls."""
        return _rebuild, (self.func, self._made_with)

    @property
    def last_run(self) -> Any:
        """The simulated A2/A3 run of the last call (a `machine.result.SimResult`), computed
        on first access so calls that never look at timing do not pay for it."""
        if self._last_run is None and self._pending_run is not None:
            self._last_run, self._pending_run = self._pending_run(), None
        return self._last_run

    # ---- properties mirroring PyPTO's wrapper ----
    @property
    def function(self) -> Program | None:
        return self.last_program

    @property
    def handler(self) -> Program | None:
        return self.last_program

    # ---- calling ----
    def bind(self, args: tuple, kwargs: dict) -> tuple[list[BoundTensor], dict, dict[str, int]]:
        return self.signature.bind(args, kwargs)

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Run the kernel on the caller's tensors (results land in the output tensors)."""
        return self._call(args, kwargs)

    @user_facing
    def whatif(self, overrides: Mapping[str, Any] | None = None, /, **more: Any) -> Any:
        """The last call again with knobs changed, timing only; a `toolkit.whatif.WhatIf`
        (before/after runs and table; `.write(folder)` for both run folders and the diff
        page). Knobs: option names (`stitch_function_max_num=512`) as keywords, call sites
        (`{"vec_tile@kernel.py:42": (16, 512)}`) in the mapping; see `frontend.knobs`."""
        from pypto.toolkit.whatif import rerun   # NOTE: lazy, keeps `import pypto` fast
        return rerun(self, {**(overrides or {}), **more})

    @user_facing
    def tune(self, budget: int = 50, seconds: float | None = None, seed: int = 0,
             metric: str = "kernel_us", dimensions: Any = None, progress: bool = True,
             db: str | bool | None = None, strategy: str = "auto", workers: int | None = None,
             ray: str | bool | None = None) -> Any:
        """Search this kernel's knobs on the simulated machine for its last call's arguments
        (timing only); a `toolkit.tune_search.TuneResult` (`.best.config`, `.table()`,
        `.whatif()`). The space: `toolkit.tune_space.search_space(kernel)` unless given.
        `db=True` (or a path): reuse and keep results in the tuning database
        (`toolkit.tune_db`; runtime_options use_tuned applies them to later calls).
        `strategy`: "auto", "exhaustive", "descent" or "optuna"; `workers`: local processes
        (default one per CPU); `ray`: evaluate on a Ray cluster ("local", "auto", an address)."""
        from pypto.toolkit.tune_search import tune   # NOTE: lazy, keeps `import pypto` fast
        return tune(self, dimensions, budget, seconds, seed, metric, progress, db, strategy,
                    workers, ray)

    def _call(self, args: tuple, kwargs: dict, remember: bool = True) -> None:
        check_not_nested(self.__name__, args)
        if remember:
            self.last_call = (args, kwargs)
        self._out_dir = None
        bound, others, symbols = self.bind(args, kwargs)
        token = opt.push_scope("jit_scope", self._options_scope())
        tuned = None
        try:
            tuned = self._apply_tuned(bound, others)
            guards = self._guards.key()
            key = self._key(bound, others)
            entry = self.compile_cache.get(CacheKey(key, guards)) if self.use_cache else None
            fresh = entry is None
            if fresh:
                started = time.perf_counter()
                met = _SitesMet()
                program = self._trace(bound, others)
                sites = met.since()
                trace_s = time.perf_counter() - started
                cache_key = CacheKey(key, self._guards.settle(guards))
            else:   # the trace is not repeated: count the knob sites it met as met again
                program = entry.program
                _SitesMet.again(entry.sites)
            # NOTE: compiling, running and writing allocate many small objects next to a large
            # live graph; pausing the cyclic GC meanwhile saves repeated full collections.
            with gc_paused():
                if fresh:
                    entry = self._compile(program, CompileOptions.from_scope(opt.lookup),
                                          cache_key, sites, trace_s)
                run = RunOptions.from_scope(opt.lookup)
                self.last_program = program
                self.last_compiled = entry.compiled
                if run.compile_debug_mode:
                    self._out_dir = output_dir()
                    _dump_compiled(self.last_compiled, self._out_dir)
                if self.last_compiled.stage != _config.CompStage.ALL_COMPLETE:
                    self._say_not_run()
                    return None
                self._announce_run_mode(run.run_mode)
                self._execute(entry, bound, symbols, run)
            if remember:
                knobs.record(self)
        finally:
            if tuned is not None:
                knobs.deactivate(tuned)
            opt.pop_scope(token)
        return None

    def _apply_tuned(self, bound: list[BoundTensor], others: dict) -> Any:
        """With runtime_options use_tuned (or PYPTO_TUNED=1): the tuning database's fresh
        setting for this call made active (a token to undo it), a stale one reported."""
        if knobs.active() is not None or not (opt.lookup("runtime.use_tuned")
                                              or os.environ.get("PYPTO_TUNED") == "1"):
            return None
        from pypto.toolkit.tune_db import Key, TuneDB   # NOTE: lazy, only when asked
        spec = machine_spec(CompileOptions.from_scope(opt.lookup).machine)
        entry = TuneDB().lookup(Key.of_call(self, bound, others, spec))
        if entry is None:
            return None
        if entry.stale:
            warnings.warn(PyptoWarning(
                f"kernel '{self.__name__}': the tuning database's entry for these shapes is "
                f"stale ({entry.stale}), so it is not applied; run kernel.tune(db=True) "
                f"again"), stacklevel=3)
            return None
        return knobs.activate(knobs.parse(entry.config))

    def _options_scope(self) -> dict[str, Any]:
        values = dict(self._fixed)
        for k, v in _config.check_dict("runtime", self.runtime_options,
                                       "runtime_options").items():
            values[f"runtime.{k}"] = v
        return values

    def _key(self, bound: list[BoundTensor], others: dict[str, Any]) -> tuple:
        """The compile-cache key less the guards: shapes/dtypes, non-tensor values, options."""
        active = knobs.active()
        return (tuple(b.static_key for b in bound),
                tuple((k, freeze(v, f"argument '{k}'")) for k, v in others.items()),
                tuple(sorted((k, repr(v)) for k, v in opt.snapshot().items()
                             if not k.startswith("runtime."))),
                # the one runtime option the compile reads: a new machine recompiles
                resolve_machine(opt.lookup("runtime.machine")),
                active.key()[1] if active is not None else ())

    def _trace(self, bound: list[BoundTensor], others: dict[str, Any]) -> Program:
        return trace_kernel(self.__name__, self.func, bound, others)

    def _compile(self, program: Program, options: CompileOptions, key: CacheKey, sites: dict,
                 trace_s: float) -> CacheEntry:
        started = time.perf_counter()
        compiled = compile_program(program, machine_spec(options.machine), options)
        entry = CacheEntry(program, compiled, ExecutionPlan(compiled), sites)
        self.compile_cache.add(key, entry)
        self.compile_count += 1
        self.compile_times.append((trace_s, time.perf_counter() - started))
        return entry

    def _say_not_run(self) -> None:
        """PyPTO's compile_stage stops compilation: the kernel does not run."""
        print(f"[pypto] kernel '{self.__name__}' was compiled up to compile_stage "
              f"{self.last_compiled.stage.name} and not run (host_options.compile_stage); its "
              f"outputs are unchanged", file=sys.stderr)

    def _announce_run_mode(self, mode: _config.RunMode | None) -> None:
        global _NPU_NOTICE_SHOWN
        if mode is None:
            mode = _config.RunMode.NPU if os.environ.get("ASCEND_HOME_PATH") and not \
                os.environ.get("CAMODEL_LOG_PATH") else _config.RunMode.SIM
        if mode == _config.RunMode.NPU and not _NPU_NOTICE_SHOWN:
            _NPU_NOTICE_SHOWN = True
            print("[pypto] run_mode=NPU: no NPU is present; the kernel runs on the CPU "
                  "(exact numerics) instead", file=sys.stderr)

    def _execute(self, entry: CacheEntry, bound: list[BoundTensor], symbols: dict[str, int],
                 run: RunOptions) -> None:
        program, compiled, plan = entry.program, entry.compiled, entry.plan
        arrays = {p.value.storage.id: b.array for p, b in zip(program.params, bound)}
        self._last_run = self._pending_run = None  # no timing from an earlier call lingers
        timing_only = run.numerics == "timing_only"
        if timing_only:
            self._check_timing_only(program, run)
        if run.executor == "reference":
            executor = ReferenceExecutor(plan, symbols, arrays)
            executor.run()
            self.last_executor = executor
            return
        stitcher = Stitcher(run.stitch_function_max_num, run.stitch_function_size,
                            plan.slot_facts,
                            run.max_workspace_kb * 1024 if run.max_workspace_kb else None,
                            compiled.spec.memory.get("hbm_capacity"), as_rows=True)
        if run.enable_pass_verify:
            # verify_options: the compiled (tile-level) run is checked against the reference
            executor = differential.run_checked(plan, symbols, arrays, stitcher,
                                                run.pass_verify_error_tol)
        elif differential.enabled() and not timing_only:   # (no results to compare)
            executor = differential.run_checked(plan, symbols, arrays, stitcher)
        else:
            executor = TileExecutor(plan, symbols, arrays, stitcher, not timing_only)
            executor.run()
        stitcher.flush()
        self.last_executor = executor
        # The simulation runs when its result is first asked for (kernel.last_run) or written.
        self._pending_run = PendingRun(stitcher, compiled.spec, self.__name__,
                                       run.device_sched_mode, stitcher.window_workspace,
                                       run.launch_sched_aicpu_num)
        self._last_run = None
        if run.runtime_debug_mode:
            self._write(program)

    def _write(self, program: Program) -> None:
        """The simulated run under output/: one folder per call, holding this call's compile
        dumps too, if any."""
        from pypto.toolkit.run_pages import write_run  # NOTE: lazy, keeps `import pypto` fast
        folder = self._out_dir or output_dir()
        write_run(self.last_run, program, folder)
        self.last_run.folder = os.path.abspath(folder)   # shown by its summary

    def _check_timing_only(self, program: Program, run: RunOptions) -> None:
        """runtime_options numerics="timing_only" is refused where it would change the run."""
        if run.enable_pass_verify:
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' runs no "
                f"arithmetic, so it cannot be combined with verify_options enable_pass_verify, "
                f"which compares results")
        if run.executor == "reference":
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' needs the "
                f"tile executor (executor='reference' only computes results)")
        why = timing_only_possible(program)
        if why is not None:
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' would "
                f"change the run: {why}; use numerics='exact'")


class _SitesMet:
    """The knob call sites a trace met (`knobs.Knobs.hits`), kept with its program so that a
    compile-cache hit, which does not trace again, counts them too: a what-if whose site knob
    met its call in an earlier, cached trace has not missed it."""

    def __init__(self) -> None:
        self.knobs = knobs.active()
        self.before = dict(self.knobs.hits) if self.knobs is not None else {}

    def since(self) -> dict:
        if self.knobs is None:
            return {}
        return {s: n - self.before.get(s, 0) for s, n in self.knobs.hits.items()
                if n != self.before.get(s, 0)}

    @staticmethod
    def again(sites: dict) -> None:
        active = knobs.active()
        if active is None:
            return
        for site, n in sites.items():
            active.hits[site] = active.hits.get(site, 0) + n


@dataclass(frozen=True)
class PendingRun:
    """A call's simulation, computed on first need (`JitKernel.last_run`); its stitched tasks
    and machine can be looked at before (the tuner bounds them to skip hopeless settings)."""

    stitched: Any       # the `Stitcher`: its tasks as objects, or as a table of rows
    spec: Any
    kernel: str
    sched_mode: int
    workspace: list
    sched_threads: int | None

    @property
    def table(self) -> Any:
        """The tasks as columns, when the stitcher made them (`Stitcher.table`)."""
        return self.stitched.table

    @property
    def tasks(self) -> Any:
        """The tasks as `SimTask`s (made from the table's rows when they are rows)."""
        return self.stitched.tasks

    def __call__(self) -> Any:
        table = self.table
        return simulate(table if table is not None else self.tasks, self.spec,
                        self.kernel, self.sched_mode, self.workspace, self.sched_threads)


def _rebuild(func: Callable, made_with: dict) -> JitKernel:
    return JitKernel(func, **made_with)


def _dump_compiled(compiled: CompiledProgram, folder: str) -> None:
    from pypto.passes.dump import dump_compiled  # NOTE: lazy, keeps `import pypto` fast
    dump_compiled(compiled, folder)


def output_dir() -> str:
    """`output/output_<YYYYMMDD_HHMMSS_usec_pid>/` under the current directory, created."""
    import datetime
    now = datetime.datetime.now()
    path = os.path.join("output", f"output_{now:%Y%m%d_%H%M%S}_{now:%f}_{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    return path


def _check_jit_kwargs(kwargs: dict) -> None:
    """Check the option dicts of `@jit(...)` before any function is given."""
    unknown = set(kwargs) - {"host_options", "codegen_options", "pass_options", "runtime_options",
                             "verify_options", "debug_options"} - _JIT_EXTRA_KEYS
    if unknown:
        raise PyptoTypeError(f"pypto.frontend.jit got unknown keyword(s) {sorted(unknown)}")
    opt.flatten(**{k: v for k, v in kwargs.items() if k.endswith("_options")})


@user_facing
def jit(func: Callable | None = None, **kwargs: Any) -> Any:
    """`@pypto.frontend.jit` or `@pypto.frontend.jit(runtime_options=..., ...)`.

    The body is traced as Python on the first call and again whenever the compile-cache key
    changes. The key holds: the static dims and dtypes of the tensor arguments (dynamic dims
    never recompile), the values of the non-tensor arguments, the option scope, and the
    *simple* module globals the kernel reads (int, float, bool, str, None, numpy scalars, enum
    members such as pypto dtypes, and tuples/lists/dicts of those up to 64 entries), read as
    `NAME` or `module.NAME` in the kernel's code, its nested code and the same-module helper
    functions it calls by name, plus its simple closure variables. Changing such a global (a
    scale, a tile size) recompiles; leaving it alone does not. Not guarded: bigger containers,
    arrays and other objects, attributes of objects or classes (`self.tile`, `Cfg.TILE`), and
    globals read by other modules' functions; a kernel keeps the value it traced with until
    something else recompiles it, so pass such values as non-tensor arguments
    (`frontend/guards.py` has the details). A kernel cannot call another kernel while it is
    traced: share code with `@pypto.frontend.function` helpers or plain Python functions.
    """
    # Like PyPTO, remember the decorating frame's locals: string annotations may name them.
    scope = dict(sys._getframe(2).f_locals)   # 2: skip the user_facing wrapper
    if func is None:
        _check_jit_kwargs(kwargs)
        return user_facing(lambda f: JitKernel(f, _scope=scope, **kwargs))
    return JitKernel(func, _scope=scope, **kwargs)
