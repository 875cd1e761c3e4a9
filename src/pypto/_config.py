"""Every option key, declared once: its group, type/range check, default and what it does.

Option dicts from `jit(...)`, `pypto.options(...)` and the `set_*_options` functions are all
checked here. An unknown key is an error that names the closest valid key; a value of the wrong
type or out of range is an error that names the key and the legal range. The `effect` string
says what the key changes in OpenPTO, or why it is accepted but has no effect here.
"""
from __future__ import annotations

import difflib
import enum
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from pypto.errors import PyptoTypeError, PyptoValueError


class RunMode(enum.IntEnum):
    """Where the kernel runs. Both run on the CPU here (there is no NPU); SIM is the default."""

    NPU = 0
    SIM = 1


class CompStage(enum.IntEnum):
    """`host_options.compile_stage`: stop compilation after this stage."""

    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


Check = Callable[[str, Any], Any]  # (qualified key, value) -> canonical value; raises if bad

# Pass options each traced op keeps (as current when it was recorded): the breadth merges read
# them per block (passes/merge_settings.py), so a set_pass_options inside a loop body affects
# that loop's roots only (frontend/tracer.py records them).
MERGE_OPTION_KEYS = ("vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting",
                     "mg_copyin_upper_bound", "mg_vec_parallel_lb")


@dataclass(frozen=True)
class CompileOptions:
    """What the compiler reads from the options, fixed once at the jit boundary: the compiler
    never reads the ambient option scope (`frontend/options.py`).

    `merge` holds the merge pass options set in the scope at compile time (ops that recorded
    their own keep those); `pg_upper_bound` None means the machine spec's."""

    machine: str | None = None
    pg_upper_bound: int | None = None
    stop_after: CompStage = CompStage.ALL_COMPLETE
    merge: Mapping[str, Any] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop_after", CompStage(self.stop_after))
        object.__setattr__(self, "merge", dict(self.merge or {}))

    @classmethod
    def from_scope(cls, lookup: Callable[..., Any]) -> "CompileOptions":
        """The options of the current scope; `lookup(key, default=None)` reads it."""
        return cls(lookup("runtime.machine") or None, lookup("pass.pg_upper_bound"),
                   lookup("host.compile_stage", 0),
                   {k: v for k in MERGE_OPTION_KEYS if (v := lookup("pass." + k)) is not None})


def _fail(key: str, value: Any, expected: str) -> None:
    raise PyptoValueError(f"option '{key}' = {value!r} is invalid: expected {expected}")


def int_range(lo: int, hi: int) -> Check:
    def check(key: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            if hasattr(v, "__index__") and not isinstance(v, float):
                v = v.__index__()   # numpy integers
            else:
                raise PyptoTypeError(f"option '{key}' must be an int in [{lo}, {hi}], "
                                     f"got {type(v).__name__} {v!r}")
        if not lo <= v <= hi:
            _fail(key, v, f"an int in [{lo}, {hi}]")
        return int(v)
    return check


def flag(key: str, v: Any) -> bool:
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    raise PyptoTypeError(f"option '{key}' must be a bool (or 0/1), got {v!r}")


def text(key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise PyptoTypeError(f"option '{key}' must be a str, got {type(v).__name__}")
    return v


def one_of(*choices: str) -> Check:
    def check(key: str, v: Any) -> str:
        if v not in choices:
            _fail(key, v, "one of " + ", ".join(repr(c) for c in choices))
        return v
    return check


def str_list(key: str, v: Any) -> list[str]:
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise PyptoTypeError(f"option '{key}' must be a list of str, got {v!r}")
    return list(v)


def run_mode(key: str, v: Any) -> RunMode:
    if isinstance(v, bool) or v not in (0, 1):
        raise PyptoValueError(f"Invalid run mode {v!r} for option '{key}': use "
                              f"pypto.RunMode.NPU (0) or pypto.RunMode.SIM (1)")
    return RunMode(int(v))


def scope_id(key: str, v: Any) -> int | tuple[int, bool, bool]:
    """sg_set_scope: an int id (-1 resets) or (id, allow_parallel_merge, allow_cross_scope)."""
    if isinstance(v, tuple):
        if len(v) != 3:
            _fail(key, v, "an int or a (scope_id, allow_parallel_merge, "
                          "allow_cross_scope_merge) tuple")
        return (int_range(-1, 2**31 - 1)(key, v[0]), flag(key, v[1]), flag(key, v[2]))
    return int_range(-1, 2**31 - 1)(key, v)


def merge_setting(allow_side: bool) -> Check:
    """vec_nbuffer / cube_l1_reuse / cube_nbuffer dicts: {group key: merge count}."""
    def check(key: str, v: Any) -> dict:
        if not isinstance(v, dict):
            raise PyptoTypeError(f"option '{key}' must be a dict {{group: count}}, got {v!r}")
        kinds = {type(k) for k in v}
        if len(kinds) > 1:
            raise PyptoValueError(f"option '{key}': int keys and str keys (\"DEFAULT\", "
                                  f"\"func<m>_<o>\", labels) cannot be mixed: {v!r}")
        out = {}
        for k, n in v.items():
            if isinstance(k, bool) or not isinstance(k, (int, str)):
                _fail(key, v, "int keys (hash order, -1 = all, -2 = mode) or str keys")
            if isinstance(k, int) and k < -2:
                _fail(key, v, "int keys >= -2")
            side = None
            if allow_side and isinstance(n, tuple):
                if len(n) != 2 or n[1] not in ("left", "right", "auto"):
                    _fail(key, v, "values count or (count, 'left'|'right'|'auto')")
                n, side = n
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                _fail(key, v, f"non-negative int merge counts (got {n!r} for key {k!r})")
            out[k] = (n, side) if side else n
        return out
    return check


def tolerance_pair(key: str, v: Any) -> list[float]:
    if (not isinstance(v, (list, tuple)) or len(v) != 2
            or not all(isinstance(x, (int, float)) and x >= 0 for x in v)):
        _fail(key, v, "[rtol, atol], two non-negative numbers")
    return [float(x) for x in v]


def any_value(key: str, v: Any) -> Any:
    return v


@dataclass(frozen=True, slots=True)
class OptionSpec:
    group: str
    name: str
    check: Check
    default: Any
    effect: str

    @property
    def key(self) -> str:
        return f"{self.group}.{self.name}"


_NO_EFFECT_HOST = "accepted; OpenPTO compiles in-process in well under a second, no watchdog"
_SPECS: list[OptionSpec] = [
    # runtime_options (jit keeps this dict by reference)
    OptionSpec("runtime", "run_mode", run_mode, None,
               "NPU and SIM both run on the CPU; NPU says once that no NPU is present"),
    OptionSpec("runtime", "device_sched_mode", int_range(0, 3), 0, "scheduler policy (simulator)"),
    OptionSpec("runtime", "stitch_function_max_num", int_range(1, 1024), 128,
               "root instances per stitched device task (simulator)"),
    OptionSpec("runtime", "max_workspace_kb", int_range(0, 2**31 - 1), 0,
               "memory-driven stitch: a window takes root instances while their workspace fits "
               "in this many KiB (stitch_function_max_num no longer limits it); 0 = off"),
    OptionSpec("runtime", "valid_shape_optimize", int_range(0, 1), 0,
               "accepted; no effect: tails are handled by valid extents at run time in every block"),
    OptionSpec("runtime", "ready_on_host_tensors", str_list, [],
               "accepted; no effect yet: the simulated control flow does not wait on host reads"),
    OptionSpec("runtime", "device_sched_parallelism", int_range(1, 8), 1,
               "accepted; no effect yet: loop(parallel=True) iterations are stitched like any other"),
    OptionSpec("runtime", "launch_sched_aicpu_num", int_range(1, 7), 7,
               "scheduler AICPU threads, capped by the machine's (3 on A2/A3)"),
    OptionSpec("runtime", "launch_early_mode", int_range(0, 2), 0, "accepted; no effect: the simulated launch is always the same"),
    OptionSpec("runtime", "stitch_function_size", int_range(1, 65535), 20000,
               "max call ops per device task (simulator)"),
    OptionSpec("runtime", "stitch_cfgcache_size", int_range(0, 2**31 - 1), 0,
               "internal upstream cache size; no effect here"),
    OptionSpec("runtime", "stitch_function_inner_memory", int_range(0, 2**31 - 1), 10,
               "internal upstream memory split; no effect here"),
    OptionSpec("runtime", "stitch_function_outcast_memory", int_range(0, 2**31 - 1), 50,
               "internal upstream memory split; no effect here"),
    OptionSpec("runtime", "stitch_function_num_initial", int_range(1, 1024), 128,
               "accepted; no effect: windows are stitch_function_max_num instances from the start"),
    OptionSpec("runtime", "stitch_function_num_step", int_range(0, 1024), 0,
               "accepted; no effect (see stitch_function_num_initial)"),
    OptionSpec("runtime", "triple_stream_sched", int_range(0, 1), 0,
               "internal upstream stream mode; no effect here"),
    OptionSpec("runtime", "machine", text, "",
               "OpenPTO: machine preset (a2a3, 910b1, 910b3, 910b4; default $OPENPTO_MACHINE or "
               "a2a3) shared by the compiler's capacity checks and the simulator"),
    OptionSpec("runtime", "use_tuned", flag, False,
               "OpenPTO: apply the best setting the tuning database holds for this kernel, "
               "argument shapes, machine and simulator (kernel.tune(db=True)); a stale entry "
               "is reported and not applied; also PYPTO_TUNED=1"),
    OptionSpec("runtime", "numerics", one_of("exact", "timing_only"), "exact",
               "OpenPTO: 'timing_only' builds the same tasks, windows and simulated timeline "
               "but runs no tile op's arithmetic (outputs are left unchanged), so full-size "
               "models simulate in seconds; refused when control flow or offsets read values "
               "the kernel computes"),
    OptionSpec("runtime", "executor", one_of("tile", "reference"), "tile",
               "OpenPTO: 'tile' runs the compiled tile ops task by task; 'reference' runs the "
               "tensor graph (the golden)"),
    # pass_options
    OptionSpec("pass", "sg_set_scope", scope_id, -1,
               "ops recorded with the same id are forced into one subgraph"),
    OptionSpec("pass", "vec_nbuffer_setting", merge_setting(False), {},
               "breadth merge of isomorphic vector subgraphs"),
    OptionSpec("pass", "cube_l1_reuse_setting", merge_setting(True), {},
               "breadth merge of cube subgraphs sharing GM->L1 loads"),
    OptionSpec("pass", "cube_nbuffer_setting", merge_setting(False), {-1: 1},
               "breadth merge of isomorphic cube subgraphs"),
    OptionSpec("pass", "sg_set_ooo_scope", scope_id, -1,
               "out-of-order scope inside MIX subgraphs (950 only; no effect on A2/A3)"),
    OptionSpec("pass", "ooo_sched_mode", one_of("", "GAPMIN", "HLF"), "",
               "in-leaf instruction scheduler choice; no effect on task-level timing"),
    OptionSpec("pass", "auto_mix_partition", int_range(0, 1), 0,
               "MIX subgraphs (950 only; no effect on A2/A3)"),
    OptionSpec("pass", "sg_set_tunevf_mode", int_range(0, 2), 0,
               "vector-function fusion (950 only; no effect on A2/A3)"),
    OptionSpec("pass", "enable_slice", flag, False, "upstream slice processing; no effect here"),
    OptionSpec("pass", "pg_skip_partition", flag, False, "deprecated upstream knob"),
    OptionSpec("pass", "pg_upper_bound", int_range(0, 2**31 - 1), 10000,
               "partition latency upper bound in cycles"),
    OptionSpec("pass", "pg_lower_bound", int_range(0, 2**31 - 1), 512,
               "accepted; no effect: group-level merging by lower bound is not modelled"),
    OptionSpec("pass", "pg_parallel_lower_bound", int_range(0, 2**31 - 1), 20,
               "accepted; no effect (see pg_lower_bound)"),
    OptionSpec("pass", "cycle_upper_bound", int_range(0, 2**31 - 1), 0,
               "accepted; no effect: pg_upper_bound bounds subgraph latency"),
    OptionSpec("pass", "copyout_resolve_coalescing", int_range(0, 2**31 - 1), 0,
               "internal upstream knob; no effect here"),
    OptionSpec("pass", "mg_copyin_upper_bound", int_range(0, 2**63 - 1), 104857600,
               "merge copy-in byte bound"),
    OptionSpec("pass", "mg_vec_parallel_lb", int_range(0, 2**31 - 1), 48,
               "auto vec NBuffer target parallelism"),
    # host_options
    OptionSpec("host", "compile_stage", int_range(0, 5), 0,
               "stop compilation after a stage; the kernel then does not run"),
    OptionSpec("host", "compile_monitor_enable", int_range(0, 2), 0, _NO_EFFECT_HOST),
    OptionSpec("host", "compile_timeout", int_range(1, 2**31 - 1), 600, _NO_EFFECT_HOST),
    OptionSpec("host", "compile_timeout_stage", int_range(-1, 2**31 - 1), -1, _NO_EFFECT_HOST),
    OptionSpec("host", "compile_monitor_print_interval", int_range(1, 2**31 - 1), 60,
               _NO_EFFECT_HOST),
    # codegen_options
    OptionSpec("codegen", "support_dynamic_aligned", flag, False,
               "accepted; no effect (deprecated upstream): unaligned tails are always supported here"),
    OptionSpec("codegen", "enable_pmu_trace", flag, False, "no PMU on the CPU; no effect here"),
    OptionSpec("codegen", "soc_version", text, "", "read by sigmoid upstream; no effect here"),
    # verify_options
    OptionSpec("verify", "enable_pass_verify", flag, False,
               "run the reference executor too and fail when the compiled (tile-level) result "
               "differs beyond pass_verify_error_tol"),
    OptionSpec("verify", "pass_verify_save_tensor", flag, False,
               "accepted; no effect: a mismatch error names the tensor and element instead"),
    OptionSpec("verify", "pass_verify_save_tensor_dir", text, "",
               "accepted; no effect (see pass_verify_save_tensor)"),
    OptionSpec("verify", "pass_verify_pass_filter", str_list, [],
               "accepted; no effect: the one compiled level (tile) is always the one checked"),
    OptionSpec("verify", "pass_verify_error_tol", tolerance_pair, [1e-3, 1e-3], "[rtol, atol]"),
    # debug_options
    OptionSpec("debug", "compile_debug_mode", int_range(0, 2), 0,
               "1/2: write program.json, a DOT and the stage graphs per root function"),
    OptionSpec("debug", "runtime_debug_mode", int_range(0, 4), 0,
               "1-4: write the simulated run (merged_swimlane.json, program.json, stats and "
               "bubble reports) under output/; 2 (AICORE model) has no other meaning on the "
               "CPU; 3 also checks the stitched task graph against the GM the tasks touch "
               "(two tasks of one window on overlapping GM, one writing, with no path between "
               "them: PyptoDependencyError) and 4 every view/assemble window against its "
               "tensor (all out-of-range accesses: PyptoBoundsError; every mode checks the "
               "views at an index read from a tensor); both write deps.json, the task graph "
               "with each edge's reason, even when the check fails"),
    OptionSpec("debug", "dump_pass_graph", any_value, None,
               "accepted; no effect: compile_debug_mode=1 already dumps every stage"),
    # operation options (pypto.experimental.set_operation_options)
    OptionSpec("operation", "combine_axis", flag, False,
               "accepted; no effect: broadcasts are read as size-1 regions already"),
    OptionSpec("operation", "force_combine_axis", flag, False,
               "accepted; no effect (see combine_axis)"),
]

SPECS: dict[str, OptionSpec] = {s.key: s for s in _SPECS}


def spec_for(group: str, name: str) -> OptionSpec:
    """The declaration of `group.name`; an unknown key names the closest valid one."""
    spec = SPECS.get(f"{group}.{name}")
    if spec is None:
        names = [s.name for s in _SPECS if s.group == group]
        close = difflib.get_close_matches(str(name), names, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f"; valid keys: {', '.join(names)}"
        raise PyptoTypeError(f"unknown {group}_options key '{name}'{hint}")
    return spec


def check_option(group: str, name: str, value: Any) -> Any:
    """The canonical value of one option, or a clear error."""
    return spec_for(group, name).check(f"{group}_options.{name}", value)


def check_dict(group: str, values: dict | None, what: str) -> dict[str, Any]:
    """Check every key of an options dict; None values are dropped (as PyPTO does)."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise PyptoTypeError(f"{what} must be a dict, got {type(values).__name__}")
    return {k: check_option(group, k, v) for k, v in values.items() if v is not None}


def default(group: str, name: str) -> Any:
    d = SPECS[f"{group}.{name}"].default
    return dict(d) if isinstance(d, dict) else list(d) if isinstance(d, list) else d


def _declared(group: str, name: str) -> Any:
    """A RunOptions field defaulting to the declaration of `group.name`."""
    d = default(group, name)
    return field(default=tuple(d) if isinstance(d, list) else d, metadata={"group": group})


@dataclass(frozen=True)
class RunOptions:
    """What the run, the simulation and the written output read from the options, fixed once
    per call at the jit boundary: the runtime never reads the ambient option scope."""

    run_mode: RunMode | None = _declared("runtime", "run_mode")
    executor: str = _declared("runtime", "executor")
    numerics: str = _declared("runtime", "numerics")
    stitch_function_max_num: int = _declared("runtime", "stitch_function_max_num")
    stitch_function_size: int = _declared("runtime", "stitch_function_size")
    max_workspace_kb: int = _declared("runtime", "max_workspace_kb")
    device_sched_mode: int = _declared("runtime", "device_sched_mode")
    launch_sched_aicpu_num: int = _declared("runtime", "launch_sched_aicpu_num")
    enable_pass_verify: bool = _declared("verify", "enable_pass_verify")
    pass_verify_error_tol: tuple[float, float] = _declared("verify", "pass_verify_error_tol")
    compile_debug_mode: int = _declared("debug", "compile_debug_mode")
    runtime_debug_mode: int = _declared("debug", "runtime_debug_mode")

    def __post_init__(self) -> None:
        object.__setattr__(self, "pass_verify_error_tol", tuple(self.pass_verify_error_tol))

    @classmethod
    def from_scope(cls, lookup: Callable[..., Any]) -> "RunOptions":
        """The options of the current scope; `lookup(key, default=None)` reads it."""
        return cls(**{name: lookup(key, d) for name, key, d in _RUN_KEYS})


# (field, option key, declared default) of every RunOptions field, listed once for from_scope
_RUN_KEYS = tuple((f.name, f"{f.metadata['group']}.{f.name}", f.default)
                  for f in fields(RunOptions))
