"""A fuzz case as data: parameters, a statement tree rendered twice (the PyPTO kernel and its
torch golden), the call sizes and the expected outcome. `script(case)` turns it into one
self-contained Python file, which is what the runner executes and what a failure is saved as.

Statements stay data so that the minimizer can drop them (`Line.defines`/`primary`: a dropped
op's result is replaced by its first input) and shrink tile shapes (`Line.tile`).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from pypto.testing.fuzz.golden import PYPTO_DTYPE, prelude


@dataclass
class Param:
    """A kernel tensor parameter. `shape` entries are ints, "DYN" (pypto.DYNAMIC) or "N" (the
    named dynamic dim `N = pypto.frontend.dynamic("N")`, shared by the parameters); the
    concrete sizes of each call are in `Case.calls`. Inputs are drawn uniformly in
    [low, high] (integers for int32); outputs start as random data, so a missed write shows."""
    name: str
    dtype: str
    role: str  # "in" | "out"
    shape: list
    low: float = -2.0
    high: float = 2.0


@dataclass
class Line:
    """One statement: its kernel text and golden text (golden may be "" or several lines
    joined by newlines). `tile` set: a `set_vec_tile_shapes` line rendered from it."""
    pypto: str
    golden: str = ""
    defines: str | None = None
    primary: str | None = None
    tile: list | None = None

    def kernel_text(self) -> str:
        if self.tile is not None:
            return f"pypto.set_vec_tile_shapes({', '.join(map(str, self.tile))})"
        return self.pypto


@dataclass
class Block:
    """A compound statement (`for`/`if`), rendered with `pypto` / `golden` as headers."""
    pypto: str
    golden: str
    body: list
    orelse: list | None = None


@dataclass
class Case:
    seed: int
    index: int
    family: str
    params: list
    body: list
    calls: list                      # one {param name: concrete shape} per kernel call
    expect: str | None = None        # the kernel is invalid: it must raise this pypto error
    note: str = ""
    runtime: dict = field(default_factory=dict)   # the kernels' runtime_options
    # a second kernel, run after the first on some of its tensors: (its parameter names, in
    # order, and its statements); the golden runs both bodies one after the other
    second: tuple | None = None

    @property
    def name(self) -> str:
        return f"case_{self.seed}_{self.index}"

    def replace(self, **kw) -> "Case":
        return dataclasses.replace(self, **kw)


def rename(stmts: list, old: str, new: str) -> list:
    """A copy of `stmts` with the identifier `old` replaced by `new` in every text."""
    pat = re.compile(rf"\b{re.escape(old)}\b")

    def sub(s):
        return pat.sub(new, s) if s else s

    out = []
    for s in stmts:
        if isinstance(s, Line):
            out.append(dataclasses.replace(s, pypto=sub(s.pypto), golden=sub(s.golden),
                                           primary=sub(s.primary)))
        else:
            out.append(Block(sub(s.pypto), sub(s.golden), rename(s.body, old, new),
                             rename(s.orelse, old, new) if s.orelse is not None else None))
    return out


def _render(stmts: list, side: str, depth: int) -> list[str]:
    pad = "    " * depth
    lines: list[str] = []
    for s in stmts:
        if isinstance(s, Line):
            text = s.kernel_text() if side == "pypto" else s.golden
            lines += [pad + t for t in text.split("\n") if t]
        else:
            lines.append(pad + (s.pypto if side == "pypto" else s.golden) + ":")
            lines += _render(s.body, side, depth + 1) or [pad + "    pass"]
            if s.orelse is not None:
                lines.append(pad + "else:")
                lines += _render(s.orelse, side, depth + 1) or [pad + "    pass"]
    return lines


def _annotation(p: Param) -> str:
    dims = ", ".join("pypto.DYNAMIC" if d == "DYN" else str(d) for d in p.shape)
    return f"pypto.Tensor([{dims}], pypto.{PYPTO_DTYPE[p.dtype]})"


_RUNNER = '''
CHECK_ENV = "OPENPTO_CHECK_EXECUTORS"
UNDEFINED = None  # why the golden of the current call is undefined, if it is


def make_args(call):
    """The tensors of call `call`: inputs uniform in [low, high], outputs random."""
    g = torch.Generator().manual_seed(SEED * 7919 + call)
    args = []
    for name, dt, role, low, high in PARAMS:
        shape = CALLS[call][name]
        if role == "out":
            low, high = -9.0, 9.0
        if dt == "int32":
            t = torch.randint(int(low), int(high) + 1, shape, generator=g, dtype=torch.int32)
        else:
            t = (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low)
            t = t.to(getattr(torch, TORCH_DTYPE[dt]))
        args.append(t)
    return args


BOUNDS = {}  # call -> {parameter: forward error bound}: the same in every mode


def bounds_of(call):
    """The kernels' forward error bounds for call `call` (pypto.testing.forward_bounds, on a
    run of its own without the check); a second kernel starts from the bounds the first
    leaves on the tensors they share."""
    if call not in BOUNDS:
        check = os.environ.get(CHECK_ENV)
        os.environ[CHECK_ENV] = "0"
        try:
            args = make_args(call)
            with pypto.testing.forward_bounds(kernel, *args) as bounds:
                kernel(*args)
            if SECOND:
                names = [PARAMS[i][0] for i in SECOND]
                second = [args[i] for i in SECOND]
                with pypto.testing.forward_bounds(
                        kernel2, *second, known={n: bounds[n] for n in names}) as more:
                    kernel2(*second)
                bounds.update(more)
        finally:
            os.environ[CHECK_ENV] = check if check is not None else "0"
        BOUNDS[call] = bounds
    return BOUNDS[call]


def run_kernels(args):
    """The case's kernels on one call's tensors (a second kernel sees what the first wrote)."""
    kernel(*args)
    if SECOND:
        kernel2(*[args[i] for i in SECOND])


def run(mode):
    """Run every call under `mode` ("tile", "reference" or "checked"); mismatch lines."""
    global UNDEFINED
    RUNTIME.pop("executor", None)
    if mode == "reference":
        RUNTIME["executor"] = "reference"
    os.environ[CHECK_ENV] = "1" if mode == "checked" else "0"
    problems = []
    for call in range(len(CALLS)):
        args = make_args(call)
        wide = [t.to(torch.int64) if t.dtype == torch.int32 else t.to(torch.float64)
                for t in args]
        try:
            want, UNDEFINED = golden(*wide), None
        except GoldenUndefined as exc:
            want, UNDEFINED = None, str(exc)
        run_kernels(args)
        if EXPECT or UNDEFINED:
            problems.append(f"call {call}: the kernel ran, but it should raise a pypto error "
                            f"({EXPECT or UNDEFINED})")
            continue
        bounds = bounds_of(call)
        for (name, dt, role, _, _), got in zip(PARAMS, args):
            if role == "out":
                bad = COMPARE(name, got, want[name], dt, bounds[name])
                if bad:
                    problems.append(f"call {call} ({mode}): {bad}")
    if len(CALLS) > 1 and kernel.compile_count != 1:
        problems.append(f"{len(CALLS)} calls with new dynamic sizes compiled "
                        f"{kernel.compile_count} times")
    return problems


if __name__ == "__main__":
    for mode in ("tile", "reference", "checked"):
        if EXPECT:
            try:
                run(mode)
            except pypto.PyptoError as exc:
                print(f"{mode}: raised as expected: {type(exc).__name__}: {exc}")
                continue
        problems = run(mode)
        assert not problems, f"{mode}: " + "; ".join(problems)
        print(f"{mode}: matches the golden")
'''


def script(case: Case) -> str:
    """The self-contained reproduction script of `case`."""
    ins = ", ".join(p.name for p in case.params)
    sig = ",\n           ".join(f"{p.name}: {_annotation(p)}" for p in case.params)
    kernel = _render(case.body, "pypto", 1) or ["    pass"]
    gold = _render(case.body, "golden", 1)
    second, indices = "", []
    if case.second is not None:
        names, body = case.second
        by_name = {p.name: p for p in case.params}
        sig2 = ",\n            ".join(f"{n}: {_annotation(by_name[n])}" for n in names)
        second = (f"@pypto.frontend.jit(runtime_options=RUNTIME)\ndef kernel2({sig2}):\n"
                  + "\n".join(_render(body, "pypto", 1) or ["    pass"]))
        gold += _render(body, "golden", 1)
        indices = [next(i for i, p in enumerate(case.params) if p.name == n) for n in names]
    outs = ", ".join(f'"{p.name}": {p.name}' for p in case.params if p.role == "out")
    params = [(p.name, p.dtype, p.role, p.low, p.high) for p in case.params]
    note = f": {case.note}" if case.note else ""
    head = (f'"""Fuzz case {case.name} (family {case.family}){note}.\n\n'
            f'Generated by pypto.testing.fuzz; run it: `python {case.name}.py`.\n"""')
    parts = [
        head,
        "import os\n\nimport torch\n\nimport pypto\nimport pypto.testing",
        prelude(),
        ('N = pypto.frontend.dynamic("N")\n'
         if any("N" in p.shape for p in case.params) else "") +
        f"SEED = {case.seed * 100003 + case.index}\n"
        f"RUNTIME = {case.runtime!r}\n"
        f"EXPECT = {case.expect!r}\n"
        f"PARAMS = {params!r}\n"
        f"CALLS = {case.calls!r}\n"
        f"SECOND = {indices!r}",
        f"@pypto.frontend.jit(runtime_options=RUNTIME)\ndef kernel({sig}):\n" + "\n".join(kernel)
        + (f"\n\n\n{second}" if second else ""),
        f"def golden({ins}):\n" + "\n".join(gold + [f"    return {{{outs}}}"]),
        _RUNNER.strip(),
    ]
    return "\n\n\n".join(parts) + "\n"
