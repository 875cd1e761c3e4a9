"""`pypto.jit`: the kernel driver. bind -> cache key -> trace (on a miss) -> compile -> run ->
write, read top to bottom from `JitKernel._run`; each call is a value (`call_record.CallRecord`,
simulated on first need), the latest kept as `kernel.last`, and `kernel.evaluate` makes one for
a variant (knobs changed, timing only) without touching the kernel's record or cache.

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
from dataclasses import replace
from typing import Any, Callable, Mapping

from pypto import _config
from pypto._config import CompileOptions, RunOptions
from pypto.call_record import CallRecord, PendingRun, Variant, copies, copy_value
from pypto.errors import PyptoTypeError, PyptoValueError, user_facing
from pypto.frontend import knobs
from pypto.frontend.knobs import Knobs as _Knobs
from pypto.frontend.knobs import applied as _applied
from pypto.frontend.knobs import parse as _parse_knobs
from pypto.frontend import options as opt
from pypto.frontend.binding import BoundTensor, freeze
from pypto.frontend.entry import check_not_nested, trace_kernel
from pypto.frontend.guards import GlobalGuards
from pypto.frontend.signature import KernelSignature, check_source
from pypto.gc_pause import gc_paused
from pypto.ir.program import Program
from pypto.machine.spec import MachineSpec
from pypto.machine.spec import load as machine_spec
from pypto.machine.spec import resolve as resolve_machine
from pypto.passes import CompiledProgram, compile_program
from pypto.profiling.debug_checks import bounds_log, check_run, run_watched
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
        self.last: CallRecord | None = None   # the latest call (`__call__`), as a value
        self.compile_count = 0
        self.compile_times: list[tuple[float, float]] = []  # (trace s, compile s) per compile

    def __reduce__(self) -> tuple:
        """Pickled as its function and decorator arguments: a copy in another process (the
        tuner's Ray workers) compiles afresh and has no record of calls."""
        return _rebuild, (self.func, self._made_with)

    # ---- the latest call, as users' scripts read it ----
    @property
    def last_run(self) -> Any:
        """The simulated A2/A3 run of the last call (a `machine.result.SimResult`), computed
        on first access so calls that never look at timing do not pay for it."""
        return self.last.run if self.last is not None else None

    @property
    def last_program(self) -> Program | None:
        return self.last.program if self.last is not None else None

    @property
    def last_compiled(self) -> CompiledProgram | None:
        return self.last.compiled if self.last is not None else None

    @property
    def last_executor(self) -> Any:
        return self.last.executor if self.last is not None else None

    @property
    def last_call(self) -> tuple[tuple, dict] | None:
        """(args, kwargs) of the last call."""
        return (self.last.args, self.last.kwargs) if self.last is not None else None

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

    def options(self) -> dict[str, Any]:
        """The options this kernel's calls start from, by flattened key
        ("runtime.stitch_function_max_num"): its decorator's and its runtime_options'."""
        values = dict(self._fixed)
        for k, v in _config.check_dict("runtime", self.runtime_options,
                                       "runtime_options").items():
            values[f"runtime.{k}"] = v
        return values

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Run the kernel on the caller's tensors (results land in the output tensors)."""
        check_not_nested(self.__name__, args)
        self.last = self._run(args, kwargs, Variant.NONE)
        if self.last.ran:
            knobs.record(knobs.Call(self.__name__, self.last, self))

    @user_facing
    def evaluate(self, *args: Any, knobs: Mapping[str, Any] | knobs.Knobs | None = None,
                 timing_only: bool = True, cache: CompileCache | None = None,
                 fresh: bool = False, **kwargs: Any) -> CallRecord:
        """A call on `args` with `knobs` applied (`frontend.knobs` addresses: options by name,
        `vec_tile@FILE:LINE`, ...), as a `CallRecord`, leaving the kernel's `last` record,
        its compile cache and the caller's tensors as they were. Timing only where the
        kernel's control flow reads no computed value; otherwise (or with
        `timing_only=False`) the arithmetic runs on copies of the arguments
        (`record.timing_only` says which). No run folder or dump is written. Compiled
        programs are read from the kernel's cache and from `cache`, which keeps the ones this
        call compiles; `fresh=True` traces and compiles afresh (every knob site is met). A
        knob call site that matched no call is an error (`Knobs.check_used`)."""
        parsed = knobs if isinstance(knobs, _Knobs) else _parse_knobs(knobs or {})
        variant = Variant(timing_only, parsed.options.get("runtime.numerics"), cache, fresh)
        options = {"debug.runtime_debug_mode": 0, "debug.compile_debug_mode": 0,
                   **parsed.options}
        with _applied(_Knobs(options, parsed.sites, parsed.hits)):
            record = self._run(args, kwargs, variant)
        parsed.check_used()
        return record

    @user_facing
    def retimed(self, record: CallRecord, machine: MachineSpec | str) -> CallRecord:
        """`record`'s call timed on `machine` (a `MachineSpec`, preset name or TOML path)
        with its compiled program unchanged: the structure a compiler decided stays and only
        the machine's costs change, which is what calibrating against a board needs
        (`evaluate(knobs={"machine": ...})` recompiles for the new machine instead). Runs as
        `evaluate` does: timing only where the control flow allows (else on copies of the
        arguments as they are now), leaving `kernel.last` and the caches untouched."""
        if record.plan is None:
            raise PyptoValueError(f"kernel '{self.__name__}': the call to re-time did not run "
                                  f"(compile_stage stopped it), so it has nothing to time")
        spec = machine if isinstance(machine, MachineSpec) else machine_spec(machine)
        plan = record.plan.with_spec(spec)
        entry = CacheEntry(record.program, plan.compiled, plan, record.sites)
        bound, _, symbols = self.bind(record.args, record.kwargs)
        run = replace(record.options, runtime_debug_mode=0, compile_debug_mode=0)
        with gc_paused():
            return self._run_entry(entry, record.args, record.kwargs, (bound, symbols),
                                   Variant(True, None, None, False), run)

    @user_facing
    def whatif(self, overrides: Mapping[str, Any] | None = None, /, **more: Any) -> Any:
        """The last call again with knobs changed, timing only; a `tune.whatif.WhatIf`
        (before/after runs and table; `.write(folder)` for both run folders and the diff
        page). Knobs: option names (`stitch_function_max_num=512`) as keywords, call sites
        (`{"vec_tile@kernel.py:42": (16, 512)}`) in the mapping; see `frontend.knobs`."""
        return lent("whatif")(self, {**(overrides or {}), **more})

    @user_facing
    def tune(self, budget: int = 50, seconds: float | None = None, seed: int = 0,
             metric: str = "kernel_us", dimensions: Any = None, progress: bool = True,
             db: str | bool | None = None, strategy: str = "auto", workers: int | None = None,
             ray: str | bool | None = None) -> Any:
        """Search this kernel's knobs on the simulated machine for its last call's arguments
        (timing only); a `tune.search.TuneResult` (`.best.config`, `.table()`,
        `.whatif()`). The space: `tune.space.search_space(kernel)` unless given.
        `db=True` (or a path): reuse and keep results in the tuning database
        (`tune.db`; runtime_options use_tuned applies them to later calls).
        `strategy`: "auto", "exhaustive", "descent" or "optuna"; `workers`: local processes
        (default one per CPU); `ray`: evaluate on a Ray cluster ("local", "auto", an address)."""
        return lent("tune")(self, dimensions, budget, seconds, seed, metric, progress, db,
                            strategy, workers, ray)

    def _run(self, args: tuple, kwargs: dict, variant: Variant) -> CallRecord:
        """One call, as a record: bind, find or make the compiled program, run, write."""
        bound, others, symbols = self.bind(args, kwargs)
        token = opt.push_scope("jit_scope", self.options())
        tuned = None
        try:
            tuned = self._apply_tuned(bound, others) if variant is Variant.NONE else None
            entry = self._entry(bound, others, variant)
            # NOTE: compiling, running and writing allocate many small objects next to a large
            # live graph; pausing the cyclic GC meanwhile saves repeated full collections.
            with gc_paused():
                return self._run_entry(entry, args, kwargs, (bound, symbols), variant)
        finally:
            if tuned is not None:
                knobs.deactivate(tuned)
            opt.pop_scope(token)

    def _entry(self, bound: list[BoundTensor], others: dict, variant: Variant) -> CacheEntry:
        """The compiled program for this call: from a cache, or traced and compiled now."""
        guards = self._guards.key()
        key = CacheKey(self._key(bound, others), guards)
        entry = None
        if self.use_cache and not variant.fresh:
            entry = self.compile_cache.get(key) or (
                variant.cache.get(key) if variant.cache is not None else None)
        if entry is not None:   # the trace is not repeated: count its knob sites as met again
            _SitesMet.again(entry.sites)
            return entry
        started = time.perf_counter()
        met = _SitesMet()
        program = self._trace(bound, others)
        sites, trace_s = met.since(), time.perf_counter() - started
        key = CacheKey(key.call, self._guards.settle(guards))
        with gc_paused():
            started = time.perf_counter()
            options = CompileOptions.from_scope(opt.lookup)
            compiled = compile_program(program, machine_spec(options.machine), options)
            entry = CacheEntry(program, compiled, ExecutionPlan(compiled), sites)
        if variant is Variant.NONE:
            self.compile_cache.add(key, entry)
            self.compile_count += 1
            self.compile_times.append((trace_s, time.perf_counter() - started))
        elif variant.cache is not None:
            variant.cache.add(key, entry)
        return entry

    def _run_entry(self, entry: CacheEntry, args: tuple, kwargs: dict, binding: tuple,
                   variant: Variant, run: RunOptions | None = None) -> CallRecord:
        """Run a compiled program on a call's arguments (copies, for a variant that computes)
        and write its folder; -> the call's record. `run`: the run options (default: the
        option scope's)."""
        run = run or RunOptions.from_scope(opt.lookup)
        if variant is not Variant.NONE:
            run = variant.numerics(run, self._timing_only_refusal(entry.program, run))
            if run.numerics != "timing_only":   # computed on copies: the caller's outputs stay
                args, kwargs = copies(args), {k: copy_value(v) for k, v in kwargs.items()}
                bound, _, symbols = self.bind(args, kwargs)
                binding = (bound, symbols)
        made = dict(kernel=self.__name__, args=args, kwargs=kwargs, program=entry.program,
                    compiled=entry.compiled, options=run, sites=entry.sites,
                    timing_only=run.numerics == "timing_only")
        folder = output_dir() if run.compile_debug_mode else None
        if folder is not None:
            _dump_compiled(entry.compiled, folder)
        if entry.compiled.stage != _config.CompStage.ALL_COMPLETE:
            self._say_not_run(entry.compiled)
            return CallRecord(**made, plan=None, folder=folder)
        self._announce_run_mode(run.run_mode)
        executor, pending = self._execute(entry, *binding, run)
        if pending is not None and run.runtime_debug_mode:
            folder = folder or output_dir()
        record = CallRecord(**made, plan=entry.plan, executor=executor, pending=pending,
                            folder=folder)
        if pending is not None and run.runtime_debug_mode:
            check_run(record, run.runtime_debug_mode)   # modes 3, 4: deps.json, checks
            self._write(record)
        return record

    def _apply_tuned(self, bound: list[BoundTensor], others: dict) -> Any:
        """With runtime_options use_tuned (or PYPTO_TUNED=1): the tuning database's fresh
        setting for this call made active (a token to undo it)."""
        if knobs.active() is not None or not (opt.lookup("runtime.use_tuned")
                                              or os.environ.get("PYPTO_TUNED") == "1"):
            return None
        spec = machine_spec(CompileOptions.from_scope(opt.lookup).machine)
        config = lent("tuned")(self, bound, others, spec)
        return knobs.activate(knobs.parse(config)) if config is not None else None

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

    def _say_not_run(self, compiled: CompiledProgram) -> None:
        """PyPTO's compile_stage stops compilation: the kernel does not run."""
        print(f"[pypto] kernel '{self.__name__}' was compiled up to compile_stage "
              f"{compiled.stage.name} and not run (host_options.compile_stage); its "
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
                 run: RunOptions) -> tuple[Any, PendingRun | None]:
        """-> (the executor that ran, the stitched tasks to simulate: None on the reference
        executor, which has no schedule)."""
        program, compiled, plan = entry.program, entry.compiled, entry.plan
        arrays = {p.value.storage.id: b.array for p, b in zip(program.params, bound)}
        timing_only = run.numerics == "timing_only"
        if timing_only:
            self._check_timing_only(program, run)
        bounds = bounds_log(run.runtime_debug_mode)   # (windows out of range; mode 4: all)
        if run.executor == "reference":
            executor = ReferenceExecutor(plan, symbols, arrays)
            run_watched(executor, bounds, self.__name__, stitched=False)
            return executor, None
        stitcher = Stitcher(run.stitch_function_max_num, run.stitch_function_size,
                            plan.slot_facts,
                            run.max_workspace_kb * 1024 if run.max_workspace_kb else None,
                            compiled.spec.memory.get("hbm_capacity"), as_rows=True)
        if run.enable_pass_verify:
            # verify_options: the compiled (tile-level) run is checked against the reference
            executor = differential.run_checked(plan, symbols, arrays, stitcher,
                                                run.pass_verify_error_tol, bounds)
        elif differential.enabled() and not timing_only and bounds.indices_only:  # (not mode 4)
            executor = differential.run_checked(plan, symbols, arrays, stitcher, bounds=bounds)
        else:
            executor = TileExecutor(plan, symbols, arrays, stitcher, not timing_only)
            run_watched(executor, bounds, self.__name__)
        stitcher.flush()
        # The simulation runs when its result is first asked for (record.run) or written.
        return executor, PendingRun(stitcher, compiled.spec, self.__name__,
                                    run.device_sched_mode, stitcher.window_workspace,
                                    run.launch_sched_aicpu_num)

    def _write(self, record: CallRecord) -> None:
        """The simulated run under output/: one folder per call, holding this call's compile
        dumps too, if any."""
        from pypto.toolkit.run_pages import write_run  # NOTE: lazy, keeps `import pypto` fast
        write_run(record.run, record.program, record.folder, record.compiled)
        record.run.folder = os.path.abspath(record.folder)   # shown by its summary

    def _timing_only_refusal(self, program: Program, run: RunOptions) -> str | None:
        """Why runtime_options numerics="timing_only" would change this run, or None."""
        if run.enable_pass_verify:
            return ("runtime_options numerics='timing_only' runs no arithmetic, so it cannot "
                    "be combined with verify_options enable_pass_verify, which compares "
                    "results")
        if run.executor == "reference":
            return ("runtime_options numerics='timing_only' needs the tile executor "
                    "(executor='reference' only computes results)")
        why = timing_only_possible(program)
        if why is not None:
            return (f"runtime_options numerics='timing_only' would change the run: {why}; use "
                    f"numerics='exact'")
        return None

    def _check_timing_only(self, program: Program, run: RunOptions) -> None:
        """runtime_options numerics="timing_only" is refused where it would change the run."""
        why = self._timing_only_refusal(program, run)
        if why is not None:
            raise PyptoValueError(f"kernel '{self.__name__}': {why}")


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


# ---- what the layer above lends the driver ---------------------------------------------------
# The tune package sits above the driver and registers its entries here (`pypto/__init__.py`
# does, lazily), so the driver imports nothing above it: "tuned" (the tuning database's
# setting for a call, or None), "whatif" and "tune" (the methods of the same names).
_LENT: dict[str, Callable] = {}


def lend(name: str, func: Callable) -> None:
    """Register `func` as the driver's entry `name` (see above)."""
    _LENT[name] = func


def lent(name: str) -> Callable:
    try:
        return _LENT[name]
    except KeyError:
        raise PyptoValueError(f"kernel.{name} needs the pypto.tune package, which "
                              f"`import pypto` registers; it was not registered") from None


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
