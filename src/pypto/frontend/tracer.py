"""The tracer: records ops into the current root-function block while the kernel body runs.

Tracing runs the kernel body as ordinary Python over `Tensor` stand-ins. The tracer keeps a
stack of loop frames; each frame is one trace of one control path of one loop body. A runtime
branch (`bool()` of a `SymbolicScalar`) asks the innermost frame's `PathExplorer`, which replays
the decisions of the path being traced and, past them, takes the True side first; after the
trace it flips the last True decision, so every path is traced exactly once (depth first).
"""
from __future__ import annotations

import contextvars
import itertools
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from pypto._config import MERGE_OPTION_KEYS
from pypto.dtypes import DataType
from pypto.errors import PyptoRuntimeError, SourceLoc, user_location
from pypto.frontend import options as opt
from pypto.ir.operation import Operation, TileConfig
from pypto.ir.program import Block, If, Loop, LoopVariant, Param, Path, Program, Seq
from pypto.ir.tensor import Storage, StorageKind, TensorValue, TileOpFormat
from pypto.symbolic import BRANCH_DECIDER, Const, Expr

MAX_BRANCHES_PER_PATH = 64
MAX_PATHS_PER_LOOP = 4096


@dataclass(eq=False)
class _Decision:
    cond: Expr
    loc: SourceLoc | None
    children: dict[bool, Any] = field(default_factory=dict)  # _Decision or Seq


class PathExplorer:
    """Depth-first enumeration of the control paths of one loop body."""

    def __init__(self, loop_name: str):
        self.loop_name = loop_name
        self.prefix: list[bool] = []
        self.taken: list[tuple[Expr, bool, SourceLoc | None]] = []
        self.root: _Decision | Any = None
        self.paths: list[Path] = []

    def start_trace(self) -> None:
        self.taken = []

    def decide(self, cond: Expr) -> bool:
        pos = len(self.taken)
        loc = user_location()
        if pos >= MAX_BRANCHES_PER_PATH:
            raise PyptoRuntimeError(
                f"more than {MAX_BRANCHES_PER_PATH} runtime branches in one trace of loop "
                f"'{self.loop_name}' (a Python while/recursion on a SymbolicScalar?)", loc)
        expected = self._expected_cond(pos)
        if expected is not None and expected != cond:
            raise PyptoRuntimeError(
                f"the body of loop '{self.loop_name}' is not deterministic: its branch #{pos} "
                f"was `{expected!r}` in an earlier trace and is `{cond!r}` now", loc)
        value = self.prefix[pos] if pos < len(self.prefix) else True
        self.taken.append((cond, value, loc))
        return value

    def _expected_cond(self, pos: int) -> Expr | None:
        node = self.root
        for _, value, _ in self.taken[:pos]:
            if not isinstance(node, _Decision):
                return None
            node = node.children.get(value)
        return node.cond if isinstance(node, _Decision) else None

    def finish_trace(self, body: Seq) -> None:
        """Attach the traced body as the leaf of the decisions taken."""
        conds = tuple((c, v) for c, v, _ in self.taken)
        self.paths.append(Path(len(self.paths), conds, body))
        if len(self.paths) > MAX_PATHS_PER_LOOP:
            raise PyptoRuntimeError(f"loop '{self.loop_name}' has more than "
                                    f"{MAX_PATHS_PER_LOOP} control paths")
        if not self.taken:
            self.root = body
            return
        if self.root is None:
            self.root = _Decision(self.taken[0][0], self.taken[0][2])
        node = self.root
        for i, (cond, value, loc) in enumerate(self.taken):
            if i + 1 < len(self.taken):
                nxt = node.children.get(value)
                if nxt is None:
                    nxt = node.children[value] = _Decision(self.taken[i + 1][0],
                                                           self.taken[i + 1][2])
                node = nxt
            else:
                node.children[value] = body

    def advance(self) -> bool:
        """Set up the next path; False when every path has been traced."""
        decisions = [v for _, v, _ in self.taken]
        while decisions and not decisions[-1]:
            decisions.pop()
        if not decisions:
            return False
        decisions[-1] = False
        self.prefix = decisions
        return True

    def tree(self) -> If | Seq:
        def convert(node: Any) -> If | Seq:
            if isinstance(node, _Decision):
                return If(node.cond, convert(node.children[True]),
                          convert(node.children[False]), node.loc)
            return node
        return convert(self.root)


@dataclass(eq=False)
class LoopFrame:
    """One trace of one path of one loop variant."""

    loop: Loop
    variant: LoopVariant
    explorer: PathExplorer
    seq: Seq
    scope_token: contextvars.Token
    path_index: int
    block_count: int = 0


CURRENT: contextvars.ContextVar["Tracer | None"] = contextvars.ContextVar(
    "pypto_tracer", default=None)
LAST_PROGRAM: contextvars.ContextVar["Program | None"] = contextvars.ContextVar(
    "pypto_last_program", default=None)


def current_tracer() -> "Tracer | None":
    return CURRENT.get()


def get_current_function() -> Program | None:
    """The `Program` of the jit kernel being traced, or None outside a kernel body.

    While tracing it is filled in as the body runs: its parameters are known, its loops and
    blocks gain their traced bodies as each loop finishes. After the trace it is the very object
    `get_last_function()` returns (and the kernel's `last_program` on that call)."""
    tracer = CURRENT.get()
    if tracer is None or tracer.closed:
        return None
    return tracer.program()


def get_last_function() -> Program | None:
    """The `Program` most recently traced by any jit kernel in this context (thread), or None.
    A call that reuses a cached program does not trace, so it does not change this."""
    return LAST_PROGRAM.get()


def require_tracer(what: str) -> "Tracer":
    tracer = CURRENT.get()
    if tracer is None:
        raise PyptoRuntimeError(f"{what} can only be used inside a kernel body being traced "
                                f"(a function decorated with @pypto.frontend.jit)")
    return tracer


class Tracer:
    """Builds one `Program` while a kernel body runs."""

    def __init__(self, kernel_name: str):
        self.kernel_name = kernel_name
        self._ids = itertools.count()
        self._loop_numbers = itertools.count(1)
        self.frames: list[LoopFrame] = []
        self.storages: list[Storage] = []
        self.loop_indices: dict[str, tuple[Loop, LoopVariant]] = {}
        self.loop_edges: dict[Expr, Any] = {}   # condition -> its loop_edges.Edge
        self.abandoned: Loop | None = None
        self.cache_policies: dict[int, dict[int, bool]] = {}
        self.block_names: set[str] = set()
        self.root: Loop | None = None             # the kernel's implicit outermost loop
        self.params: dict[int, TensorValue] = {}  # parameter index -> its traced value
        self._program: Program | None = None
        # Set when the trace is over (finished or failed). A loop generator that Python closes
        # later (garbage collection of a failed trace's frames) must then not touch the option
        # scopes: resetting its stale scope token would resurrect the dead trace's scopes.
        self.closed = False

    # ---- activation ----
    @contextmanager
    def active(self) -> Iterator["Tracer"]:
        t1 = CURRENT.set(self)
        t2 = BRANCH_DECIDER.set(self.decide)
        try:
            yield self
        finally:
            self.closed = True
            BRANCH_DECIDER.reset(t2)
            CURRENT.reset(t1)

    def next_id(self) -> int:
        return next(self._ids)

    def next_loop_number(self) -> int:
        return next(self._loop_numbers)

    def check_consistent(self) -> None:
        if self.abandoned is not None:
            loop, self.abandoned = self.abandoned, None
            raise PyptoRuntimeError(
                f"pypto.loop '{loop.name}' was left before all of its iterations were traced "
                f"(break/return inside a pypto.loop is not supported)", loop.loc)

    # ---- control structure ----
    def decide(self, cond: Expr) -> bool:
        self.check_consistent()
        if not self.frames:
            raise PyptoRuntimeError(f"runtime branch on {cond!r} outside any loop body")
        return self.frames[-1].explorer.decide(cond)

    def begin_loop(self, loop: Loop) -> None:
        self.check_consistent()
        if self.frames:
            self.frames[-1].seq.items.append(loop)
        elif self.root is None:
            self.root = loop

    def enter_path(self, loop: Loop, variant: LoopVariant, explorer: PathExplorer) -> LoopFrame:
        self.check_consistent()
        explorer.start_trace()
        token = opt.push_scope(f"{loop.name}_Unroll{variant.factor}")
        frame = LoopFrame(loop, variant, explorer, Seq(), token, len(explorer.paths))
        self.frames.append(frame)
        return frame

    def exit_path(self, frame: LoopFrame) -> None:
        self.check_consistent()
        if not self.frames or self.frames[-1] is not frame:
            inner = self.frames[-1].loop if self.frames else frame.loop
            raise PyptoRuntimeError(
                f"pypto.loop '{inner.name}' was left before all of its iterations were traced "
                f"(break inside a pypto.loop is not supported)", inner.loc)
        self.frames.pop()
        opt.pop_scope(frame.scope_token)
        frame.explorer.finish_trace(frame.seq)

    def abandon(self, loop: Loop) -> None:
        """A loop generator was closed early (break) or the body raised."""
        if self.closed:
            return
        while self.frames and self.frames[-1].loop is loop:
            frame = self.frames.pop()
            try:
                opt.pop_scope(frame.scope_token)
            except ValueError:
                pass
        self.abandoned = loop

    def current_block(self) -> Block:
        self.check_consistent()
        if not self.frames:
            raise PyptoRuntimeError("no loop body is being traced")
        frame = self.frames[-1]
        items = frame.seq.items
        if items and isinstance(items[-1], Block):
            return items[-1]
        name = (f"TENSOR_{frame.loop.name}_Unroll{frame.variant.factor}_PATH{frame.path_index}"
                f"_hiddenfunc{frame.block_count}")
        frame.block_count += 1
        # A nested loop is traced again under every path of its parent, and users may give two
        # loops one name: suffix repeats so that every root function has its own name.
        if name in self.block_names:
            n = 1
            while f"{name}_{n}" in self.block_names:
                n += 1
            name = f"{name}_{n}"
        self.block_names.add(name)
        block = Block(name)
        items.append(block)
        return block

    # ---- values ----
    def new_storage(self, kind: StorageKind, name: str, dtype: DataType,
                    shape: tuple[Expr, ...], param_index: int = -1) -> Storage:
        s = Storage(self.next_id(), kind, name, dtype, shape, param_index)
        self.storages.append(s)
        return s

    def new_value(self, shape: tuple[Expr, ...], dtype: DataType, valid: tuple[Expr, ...],
                  storage: Storage | None = None, name: str = "",
                  fmt: TileOpFormat = TileOpFormat.TILEOP_ND, producer: int = -1) -> TensorValue:
        vid = self.next_id()
        if storage is None:
            storage = self.new_storage(StorageKind.TEMP, name or f"t{vid}", dtype, shape)
        value = TensorValue(vid, shape, dtype, valid, storage, name, fmt, producer)
        if storage.kind is StorageKind.ARG and storage.param_index >= 0:
            self.params.setdefault(storage.param_index, value)
        return value

    def program(self) -> Program:
        """The Program being built (one object per trace; see `get_current_function`)."""
        if self._program is None:
            root = self.root if self.root is not None else Loop(
                "default_loop_1", "default_idx", Const(0), Const(1), Const(1))
            self._program = Program(self.kernel_name, [], root)
        p = self._program
        p.params = [Param(i, v.storage.name, v,
                          tuple(d for d, e in enumerate(v.shape) if not isinstance(e, Const)))
                    for i, v in sorted(self.params.items())]
        p.locals = [s for s in self.storages if s.kind is StorageKind.LOCAL]
        p.cache_policies = self.cache_policies
        return p

    def tile(self) -> TileConfig:
        """The TileShapes in force at this point of the trace (`set_vec_tile_shapes`,
        `set_cube_tile_shapes`, `set_matrix_size`, knob overrides applied): the one place they
        are read from the option scope. Ops check their tiling against it and `record` keeps
        it with the op, as data."""
        return TileConfig(opt.lookup("vec_tile_shapes"), opt.lookup("cube_tile_shapes"),
                          opt.lookup("matrix_size"))

    def record(self, opcode: str, inputs: tuple[TensorValue, ...],
               outputs: tuple[TensorValue, ...], attrs: dict[str, Any],
               loc: SourceLoc | None, tile: TileConfig | None = None) -> Operation:
        """Append an op to the current block, with `tile` (default: `self.tile()`): the
        TileShapes the op was checked against."""
        block = self.current_block()
        tile = tile if tile is not None else self.tile()
        scope = opt.lookup("pass.sg_set_scope", -1)
        merge = {k: v for k in MERGE_OPTION_KEYS if (v := opt.lookup("pass." + k)) is not None}
        op = Operation(self.next_id(), opcode, inputs, outputs, attrs, tile,
                       scope, opt.lookup("semantic_label", ""), loc, merge)
        block.ops.append(op)
        return op


def new_program(tracer: Tracer, params: list, root: Loop) -> Program:
    """The finished Program of a trace (the object `get_current_function` handed out during
    the trace, completed), remembered as the context's last traced program."""
    program = tracer.program()
    program.params = list(params)
    program.root = root
    LAST_PROGRAM.set(program)
    return program

