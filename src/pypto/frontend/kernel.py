"""`pypto.frontend.jit`: the kernel entry. bind -> key -> trace on a cache miss -> run.

Decoration checks the signature (tensor parameters first, no return value) and the option
dicts, but compiles nothing. Each call binds the caller's tensors against the annotations,
builds the cache key from the static shapes, dtypes, non-tensor argument values, the option
scope and the simple module globals the kernel reads (`frontend/guards.py` says which), traces
the body on a miss, and runs the program. Dynamic dims never recompile. A kernel cannot call
another kernel while it is being traced (a helper is a plain function or
`@pypto.frontend.function`, inlined into the caller).
`host_options.compile_stage` other than ALL_COMPLETE stops compilation after that stage (see
`pypto.passes.compile_program`): the kernel then does not run, and says so on stderr.
`runtime_options` is held by reference, so a change after decoration takes effect.
"""
from __future__ import annotations

import ast
import builtins
import functools
import gc
import inspect
import os
import sys
import textwrap
import time
import types
from typing import Any, Callable

from pypto import _config
from pypto._config import CompileOptions
from pypto.errors import (PyptoRuntimeError, PyptoTypeError, PyptoValueError,
                          SourceLoc, user_facing)
from pypto.frontend import options as opt
from pypto.frontend.binding import BoundTensor, bind_tensor, freeze
from pypto.frontend.control import check_no_open_loops, trace_default_loop
from pypto.frontend.guards import GlobalGuards
from pypto.frontend.tensor import Tensor, TensorAnnotation
from pypto.frontend.tracer import Tracer, current_tracer, new_program
from pypto.ir.program import Param, Program
from pypto.ir.tensor import StorageKind
from pypto.machine.spec import load as machine_spec
from pypto.passes import CompiledProgram, compile_program
from pypto.runtime import differential
from pypto.machine.simulate import simulate
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.stitch import Stitcher, slot_facts
from pypto.runtime.tile_executor import TileExecutor, timing_only_possible
from pypto.symbolic import SymbolicScalar, sym_max, sym_min

_NPU_NOTICE_SHOWN = False


def _resolve(func: Callable, ann: Any, scope: dict[str, Any] | None) -> Any:
    """A string annotation (`from __future__ import annotations`) evaluated where the kernel
    was defined: the decorating frame's locals, the closure, then the globals. One that does
    not evaluate stays a string (a non-tensor parameter)."""
    if not isinstance(ann, str):
        return ann
    names: dict[str, Any] = dict(scope or {})
    code = getattr(func, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), func.__closure__ or ()):
        try:
            names[name] = cell.cell_contents
        except ValueError:
            pass
    try:
        return eval(ann, getattr(func, "__globals__", {}), names)  # the user's own source
    except Exception:
        return ann


def _annotation_of(p: inspect.Parameter, func: Callable | None = None,
                   scope: dict[str, Any] | None = None) -> TensorAnnotation | None:
    ann = p.annotation
    if func is not None:
        ann = _resolve(func, ann, scope)
    if ann is inspect.Parameter.empty or not hasattr(ann, "to_tensor"):
        return None
    if isinstance(ann, type):
        return None
    return ann.to_tensor()


def _check_source(func: Callable) -> None:
    """Reject a return annotation and `return <value>` in the kernel body, pointing at it."""
    code = func.__code__
    if "return" in getattr(func, "__annotations__", {}):
        raise PyptoValueError(
            f"kernel '{func.__name__}' has a return annotation; kernels have no return value: "
            f"write results into an output parameter (out.move(...) or out[:] = ...)",
            SourceLoc(code.co_filename, code.co_firstlineno, func.__name__))
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return  # no source (e.g. exec'd code): the runtime check on the return value remains
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return  # e.g. a lambda inside a longer expression: nothing to check statically
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return

    class Finder(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.AST) -> None:
            if node is fdef:
                self.generic_visit(node)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node: ast.AST) -> None:
            return

        def visit_Return(self, node: ast.Return) -> None:
            if node.value is not None:
                line = first + node.lineno - 1
                raise PyptoValueError(
                    f"kernel '{func.__name__}' returns a value; kernels have no return value: "
                    f"write results into an output parameter (out.move(...) or out[:] = ...)",
                    SourceLoc(code.co_filename, line, func.__name__))

    Finder().visit(fdef)


def _builtin_or_symbolic(name: str) -> Callable:
    builtin = getattr(builtins, name)
    symbolic = sym_min if name == "min" else sym_max

    def pick(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 2 and not kwargs and any(isinstance(a, SymbolicScalar) for a in args):
            return symbolic(*args)
        return builtin(*args, **kwargs)
    pick.__name__ = name
    return pick


_MIN_MAX = {"min": _builtin_or_symbolic("min"), "max": _builtin_or_symbolic("max")}


def with_symbolic_min_max(func: Callable) -> Callable:
    """`func` with builtin `min(a, b)`/`max(a, b)` on a SymbolicScalar meaning pypto.min/max.

    PyPTO parses kernel bodies and maps these two-argument calls; without the mapping Python
    would compare the symbolic values and the tracer would record a runtime branch per call
    (correct, but with needless extra paths). The function runs over a copy of its globals
    (taken per trace) in which only `min` and `max` differ, unless the module defines its own.
    """
    if any(n in func.__globals__ for n in _MIN_MAX):
        return func
    namespace = dict(func.__globals__)
    namespace.update(_MIN_MAX)
    clone = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__,
                               func.__closure__)
    clone.__kwdefaults__ = func.__kwdefaults__
    return clone


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
        unknown = set(extra) - {"infer_controlflow_shape", "use_cache", "new_ir",
                                "create_new_logical_tensor"}
        if unknown:
            raise PyptoTypeError(f"pypto.frontend.jit got unknown keyword(s) {sorted(unknown)}")
        self.func = func
        self.use_cache = bool(extra.get("use_cache", True))
        functools.update_wrapper(self, func)
        _check_source(func)
        self._fixed = opt.flatten(host_options=host_options, codegen_options=codegen_options,
                                  pass_options=pass_options, verify_options=verify_options,
                                  debug_options=debug_options)
        if runtime_options is not None and not isinstance(runtime_options, dict):
            raise PyptoTypeError("runtime_options must be a dict")
        self.runtime_options = runtime_options if runtime_options is not None else {}
        _config.check_dict("runtime", self.runtime_options, "runtime_options")
        self._signature(func, _scope)
        self._guards = GlobalGuards(func)
        self._cache: dict[Any, Program] = {}
        self._compiled: dict[int, CompiledProgram] = {}
        self.last_compiled: CompiledProgram | None = None
        self._last_run: Any = None
        self._pending_run: Any = None
        self.last_program: Program | None = None
        self.last_executor: Any = None
        self.compile_count = 0
        self._out_dir: str | None = None  # this call's output folder, once one is made
        self.compile_times: list[tuple[float, float]] = []  # (trace s, compile s) per compile

    def _signature(self, func: Callable, scope: dict[str, Any] | None) -> None:
        sig = inspect.signature(func)
        self.tensor_params: list[tuple[str, TensorAnnotation]] = []
        self.other_params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            ann = _annotation_of(p, func, scope)
            if ann is not None:
                if self.other_params:
                    raise PyptoValueError(
                        f"kernel '{func.__name__}': tensor parameter '{p.name}' comes after "
                        f"non-tensor parameter '{self.other_params[0].name}'; every tensor "
                        f"parameter must come first")
                if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    raise PyptoValueError(f"tensor parameter '{p.name}' must be positional")
                self.tensor_params.append((p.name, ann))
            else:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    raise PyptoValueError(f"kernel '{func.__name__}': *args/**kwargs "
                                          f"parameters are not supported")
                self.other_params.append(p)

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
    def _bind_others(self, rest: tuple, kwargs: dict) -> dict[str, Any]:
        names = [p.name for p in self.other_params]
        if len(rest) > len(names):
            raise PyptoRuntimeError(
                f"kernel '{self.__name__}' takes {len(self.tensor_params)} tensor and "
                f"{len(names)} non-tensor arguments, got {len(self.tensor_params) + len(rest)} "
                f"positional")
        values = dict(zip(names, rest))
        for k, v in kwargs.items():
            if k not in names:
                raise PyptoRuntimeError(f"kernel '{self.__name__}' got an unknown keyword "
                                        f"argument '{k}' (non-tensor parameters: {names})")
            if k in values:
                raise PyptoRuntimeError(f"kernel '{self.__name__}' got '{k}' twice")
            values[k] = v
        for p in self.other_params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise PyptoRuntimeError(f"kernel '{self.__name__}' is missing the "
                                            f"non-tensor argument '{p.name}'")
                values[p.name] = p.default
        return values

    def bind(self, args: tuple, kwargs: dict) -> tuple[list[BoundTensor], dict, dict[str, int]]:
        n = len(self.tensor_params)
        if len(args) < n:
            names = ", ".join(name for name, _ in self.tensor_params)
            raise PyptoRuntimeError(f"kernel '{self.__name__}' needs {n} tensor arguments "
                                    f"({names}) first, got {len(args)} positional arguments")
        symbols: dict[str, int] = {}
        bound = [bind_tensor(i, name, ann, args[i], symbols)
                 for i, (name, ann) in enumerate(self.tensor_params)]
        others = self._bind_others(tuple(args[n:]), kwargs)
        return bound, others, symbols

    def _options_scope(self) -> dict[str, Any]:
        values = dict(self._fixed)
        for k, v in _config.check_dict("runtime", self.runtime_options,
                                       "runtime_options").items():
            values[f"runtime.{k}"] = v
        return values

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Run the kernel on the caller's tensors (results land in the output tensors)."""
        return self._call(args, kwargs)

    def _check_not_nested(self, args: tuple) -> None:
        """A kernel launch while another kernel body is being traced is a mistake: a device
        kernel cannot launch a kernel. Say which kernel, where, and what to write instead."""
        tracer = current_tracer()
        if tracer is None or tracer.closed:
            return
        traced = any(isinstance(a, Tensor) for a in args)
        raise PyptoRuntimeError(
            f"kernel '{self.__name__}' is a @pypto.frontend.jit kernel and was called "
            f"{'with traced tensors ' if traced else ''}inside kernel '{tracer.kernel_name}' "
            f"while that kernel was being traced; a kernel cannot call another kernel. Make "
            f"'{self.__name__}' a helper: decorate it with @pypto.frontend.function (inlined "
            f"into the caller; it may return tensors) or call it as a plain Python function "
            f"(e.g. {self.__name__}.func(...) runs its body inline)")

    def _call(self, args: tuple, kwargs: dict) -> None:
        self._check_not_nested(args)
        self._out_dir = None
        bound, others, symbols = self.bind(args, kwargs)
        scope = self._options_scope()
        token = opt.push_scope("jit_scope", scope)
        try:
            guards = self._guards.key()
            key = (tuple(b.static_key for b in bound),
                   tuple((k, freeze(v, f"argument '{k}'")) for k, v in others.items()),
                   tuple(sorted((k, repr(v)) for k, v in opt.snapshot().items()
                                if not k.startswith("runtime."))))
            program = self._cache.get(key + (guards,)) if self.use_cache else None
            if program is None:
                started = time.perf_counter()
                program = self._trace(bound, others)
                traced = time.perf_counter()
                key += (self._guards.settle(guards),)
                # NOTE: compilation allocates many small, long-lived objects (tile ops,
                # regions); pausing the cyclic GC meanwhile saves repeated full collections.
                gc_was_on = gc.isenabled()
                gc.disable()
                try:
                    options = CompileOptions.from_scope(opt.lookup)
                    compiled = compile_program(program, machine_spec(options.machine),
                                               options)
                finally:
                    if gc_was_on:
                        gc.enable()
                self._cache[key] = program
                self._compiled[id(program)] = compiled
                self.compile_count += 1
                self.compile_times.append((traced - started, time.perf_counter() - traced))
            self.last_program = program
            self.last_compiled = self._compiled[id(program)]
            if opt.lookup("debug.compile_debug_mode", 0):
                from pypto.passes.dump import dump_compiled
                self._out_dir = output_dir()
                dump_compiled(self.last_compiled, self._out_dir)
            if self.last_compiled.stage != _config.CompStage.ALL_COMPLETE:
                # PyPTO's compile_stage stops compilation: the kernel does not run.
                stage = self.last_compiled.stage.name
                print(f"[pypto] kernel '{self.__name__}' was compiled up to compile_stage "
                      f"{stage} and not run (host_options.compile_stage); its outputs are "
                      f"unchanged", file=sys.stderr)
                return None
            self._announce_run_mode()
            self._execute(program, bound, symbols)
        finally:
            opt.pop_scope(token)
        return None

    def _trace(self, bound: list[BoundTensor], others: dict[str, Any]) -> Program:
        tracer = Tracer(self.__name__)
        params, stand_ins = [], []
        for i, b in enumerate(bound):
            storage = tracer.new_storage(StorageKind.ARG, b.name, b.dtype, b.dims, i)
            value = tracer.new_value(b.dims, b.dtype, b.dims, storage, b.name, b.format)
            dyn = tuple(d for d, e in enumerate(b.dims) if not e.is_const())
            params.append(Param(i, b.name, value, dyn))
            stand_ins.append(Tensor._wrap(value))
        body = with_symbolic_min_max(self.func)
        with tracer.active():
            root, paths = trace_default_loop(tracer)
            for _ in paths:
                result = body(*stand_ins, **others)
                if result is not None:
                    raise PyptoValueError(
                        f"kernel '{self.__name__}' returned a value; kernels have no return "
                        f"value: write results into an output parameter")
            check_no_open_loops(tracer)
        return new_program(tracer, params, root)

    def _announce_run_mode(self) -> None:
        global _NPU_NOTICE_SHOWN
        mode = opt.lookup("runtime.run_mode")
        if mode is None:
            mode = _config.RunMode.NPU if os.environ.get("ASCEND_HOME_PATH") and not \
                os.environ.get("CAMODEL_LOG_PATH") else _config.RunMode.SIM
        if mode == _config.RunMode.NPU and not _NPU_NOTICE_SHOWN:
            _NPU_NOTICE_SHOWN = True
            print("[pypto] run_mode=NPU: no NPU is present; the kernel runs on the CPU "
                  "(exact numerics) instead", file=sys.stderr)

    def _execute(self, program: Program, bound: list[BoundTensor],
                 symbols: dict[str, int]) -> None:
        arrays = {p.value.storage.id: b.array for p, b in zip(program.params, bound)}
        compiled = self._compiled[id(program)]
        self._last_run = self._pending_run = None  # no timing from an earlier call lingers
        timing_only = opt.lookup("runtime.numerics", "exact") == "timing_only"
        if timing_only:
            self._check_timing_only(program)
        if opt.lookup("runtime.executor", "tile") == "reference":
            executor = ReferenceExecutor(program, symbols, arrays)
            executor.run()
            self.last_executor = executor
            return
        budget_kb = opt.lookup("runtime.max_workspace_kb", 0)
        stitcher = Stitcher(opt.lookup("runtime.stitch_function_max_num", 128),
                            opt.lookup("runtime.stitch_function_size", 20000),
                            slot_facts(compiled.roots.values()),
                            budget_kb * 1024 if budget_kb else None,
                            compiled.spec.memory.get("hbm_capacity"))
        if opt.lookup("verify.enable_pass_verify", False):
            # verify_options: the compiled (tile-level) run is checked against the reference
            executor = differential.run_checked(
                program, compiled, symbols, arrays, stitcher,
                tuple(opt.lookup("verify.pass_verify_error_tol", [1e-3, 1e-3])))
        elif differential.enabled() and not timing_only:   # (no results to compare)
            executor = differential.run_checked(program, compiled, symbols, arrays, stitcher)
        else:
            executor = TileExecutor(compiled, symbols, arrays, stitcher, not timing_only)
            executor.run()
        stitcher.flush()
        self.last_executor = executor
        # The simulation runs when its result is first asked for (kernel.last_run) or written.
        self._pending_run = functools.partial(
            simulate, stitcher.tasks, compiled.spec, self.__name__,
            opt.lookup("runtime.device_sched_mode", 0), stitcher.window_workspace,
            opt.lookup("runtime.launch_sched_aicpu_num"))
        self._last_run = None
        if opt.lookup("debug.runtime_debug_mode", 0):
            from pypto.profiling.output import write_run
            # one folder per call: the compile dumps of this call, if any, are already there
            folder = self._out_dir or output_dir()
            write_run(self.last_run, program, folder)
            self.last_run.folder = os.path.abspath(folder)   # shown by its summary


    def _check_timing_only(self, program: Program) -> None:
        """runtime_options numerics="timing_only" is refused where it would change the run."""
        if opt.lookup("verify.enable_pass_verify", False):
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' runs no "
                f"arithmetic, so it cannot be combined with verify_options enable_pass_verify, "
                f"which compares results")
        if opt.lookup("runtime.executor", "tile") == "reference":
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' needs the "
                f"tile executor (executor='reference' only computes results)")
        why = timing_only_possible(program)
        if why is not None:
            raise PyptoValueError(
                f"kernel '{self.__name__}': runtime_options numerics='timing_only' would "
                f"change the run: {why}; use numerics='exact'")


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
                             "verify_options", "debug_options", "infer_controlflow_shape",
                             "use_cache", "new_ir", "create_new_logical_tensor"}
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


@user_facing
def function(func: Callable | None = None) -> Any:
    """`@pypto.frontend.function`: a helper inlined into the calling kernel. Helpers run as
    plain Python here, so this only checks annotated tensor parameters at call time."""
    def deco(f: Callable) -> Callable:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                raise PyptoTypeError(f"pypto.frontend.function '{f.__name__}' takes positional "
                                     f"arguments only")
            for p, a in zip(sig.parameters.values(), args):
                ann = _annotation_of(p, f)
                if ann is not None:
                    if not isinstance(a, Tensor):
                        raise PyptoTypeError(f"'{f.__name__}' parameter '{p.name}' expects a "
                                             f"tensor, got {type(a).__name__}")
                    if ann.dtype is not None and a.dtype != ann.dtype:
                        raise PyptoValueError(f"'{f.__name__}' parameter '{p.name}' expects "
                                              f"{ann.dtype.name}, got {a.dtype.name}")
            return with_symbolic_min_max(f)(*args)
        return wrapper
    return deco if func is None else deco(func)


@user_facing
def dynamic(name: str) -> Any:
    """`pypto.frontend.dynamic("N")`: a named dynamic dim shared by annotations."""
    from pypto.symbolic import SymbolicScalar
    if not isinstance(name, str) or not name:
        raise PyptoTypeError("pypto.frontend.dynamic takes a non-empty name")
    return SymbolicScalar(name)
