"""Evaluating symbolic expressions: interpreted (`evaluate`, whose errors name the symbol or
the expression) and generated (`CodeGen`: one Python function for many expressions, the code
every executor evaluates windows, extents and bounds with).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from pypto.errors import PyptoRuntimeError
from pypto.symbolic.expr_nodes import (_PY_BIN, _PY_UN, Bin, Const, ElementRead, Expr, Select,
                                       Sym, Un)


class EvalEnv:
    """Values of symbols at run time, plus a reader for tensor-element reads."""

    __slots__ = ("values", "read_element")

    def __init__(self, values: dict[str, int] | None = None,
                 read_element: Callable[[ElementRead, tuple[int, ...]], int] | None = None):
        self.values = dict(values or {})
        self.read_element = read_element


_PY_CODE = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})",
            "floordiv": "({} // {})", "mod": "({} % {})", "min": "_min({}, {})",
            "max": "_max({}, {})", "eq": "int({} == {})", "ne": "int({} != {})",
            "lt": "int({} < {})", "le": "int({} <= {})", "gt": "int({} > {})",
            "ge": "int({} >= {})", "and": "int(bool({}) and bool({}))",
            "or": "int(bool({}) or bool({}))"}
_PY_UN_CODE = {"neg": "(-{})", "not": "int(not {})", "invert": "(~{})"}


class CodeGen:
    """Writes one Python function `f(V, R)` evaluating many expressions at once: the one code
    generator of the runtime (expression functions, tile windows, extent checks).

    `expr(e)` returns the code of `e`; each distinct compound subexpression is computed once,
    into a local variable, in the order Python would first evaluate it. The arms of a select and
    the right side of `and`/`or` are written inline, so a branch not taken never runs (its
    division by zero or unbound symbol does not count). `function(result)` compiles the lines
    and `return <result>` into `f`: V maps symbol names to ints, R(read, indices) reads a
    tensor element. Where `evaluate` raises PyptoRuntimeError, `f` raises KeyError (unbound
    symbol), ZeroDivisionError or TypeError (R is None): callers catch those and call
    `raise_evaluation_error` for the message.

    NOTE: the executors evaluate the same offsets and extents once per root instance; a tree
    walk per expression cost more than the numerics, one generated function per root does not.
    """

    # the code of each operation, and the names the generated code calls (`ArrayCodeGen`
    # writes the same expressions over numpy arrays)
    BIN_CODE = _PY_CODE
    UN_CODE = _PY_UN_CODE
    SELECT_CODE = "({a} if {cond} else {b})"
    SCOPE: dict[str, Any] = {"_min": min, "_max": max}

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict = {}         # Expr (or a caller's key) -> local variable
        self._reads: list[ElementRead] = []
        self._objects: list = []       # values the code refers to as K[i]

    @property
    def reads_elements(self) -> bool:
        return bool(self._reads)

    def local(self, key: Any, code: str, prefix: str = "t") -> str:
        """The local variable holding `code`, computed once per distinct `key`."""
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"{prefix}{len(self._names)}"
            self.lines.append(f"    {name} = {code}")
        return name

    def has(self, key: Any) -> bool:
        return key in self._names

    def obj(self, value: Any) -> str:
        """Code naming `value` as is (NOTE: a large constant is not written out as source,
        whose compilation took seconds for roots of thousands of constant windows)."""
        self._objects.append(value)
        return f"K[{len(self._objects) - 1}]"

    def expr(self, e: Expr, inline: bool = False) -> str:
        """Code of `e`; `inline`: no new local variables (code that may not run)."""
        if type(e) is Const:
            return repr(e.value)
        name = self._names.get(e)
        if name is not None:
            return name
        if isinstance(e, Sym):
            code = f"V[{e.name!r}]"
        elif isinstance(e, Bin):
            lazy = inline or e.op in ("and", "or")
            code = self.BIN_CODE[e.op].format(self.expr(e.a, inline), self.expr(e.b, lazy))
        elif isinstance(e, Un):
            code = self.UN_CODE[e.op].format(self.expr(e.a, inline))
        elif isinstance(e, Select):
            cond = self.expr(e.cond, inline)
            code = self.SELECT_CODE.format(a=self.expr(e.a, True), cond=cond,
                                           b=self.expr(e.b, True))
        elif isinstance(e, ElementRead):
            index = tuple_code([self.expr(i, inline) for i in e.indices])
            self._reads.append(e)
            code = f"R(E[{len(self._reads) - 1}], {index})"
        else:
            raise TypeError(f"not an expression: {e!r}")
        return code if inline else self.local(e, code)

    def function(self, result: str, name: str = "generated") -> Callable[..., Any]:
        """`def name(V, R=None): <lines>; return <result>`, compiled."""
        source = "\n".join([f"def {name}(V, R=None):", *self.lines, f"    return {result}"])
        scope = {**self.SCOPE, "E": tuple(self._reads), "K": self._objects}
        exec(compile(source, f"<{name}>", "exec"), scope)
        return scope[name]


def tuple_code(items: list[str]) -> str:
    """Code of a tuple of these items' code."""
    return f"({', '.join(items)},)" if items else "()"


def expr_function(e: Expr) -> Callable[..., int]:
    """`e` as a generated function of (symbol values, element reader)."""
    gen = CodeGen()
    return gen.function(gen.expr(e), "expr")


def raise_evaluation_error(exprs: Iterable[Expr], env: EvalEnv, error: Exception):
    """Raise what `evaluate` raises for the first of `exprs` it cannot evaluate: called when
    their generated function raised `error` (KeyError, ZeroDivisionError, TypeError), for
    `evaluate`'s message naming the symbol or expression; `error` itself if none fails."""
    for e in exprs:
        evaluate(e, env)
    raise error


def evaluate(e: Expr, env: EvalEnv) -> int:
    """The integer value of `e` under `env`; raises if a symbol is unbound."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Sym):
        try:
            return env.values[e.name]
        except KeyError:
            raise PyptoRuntimeError(f"symbol {e!r} has no value at run time") from None
    if isinstance(e, Bin):
        x, y = evaluate(e.a, env), evaluate(e.b, env)
        if e.op in ("floordiv", "mod") and y == 0:
            raise PyptoRuntimeError(f"division by zero evaluating {e!r}")
        return _PY_BIN[e.op](x, y)
    if isinstance(e, Un):
        return _PY_UN[e.op](evaluate(e.a, env))
    if isinstance(e, Select):
        return evaluate(e.a, env) if evaluate(e.cond, env) else evaluate(e.b, env)
    if isinstance(e, ElementRead):
        if env.read_element is None:
            raise PyptoRuntimeError(f"tensor element {e!r} cannot be read here")
        return env.read_element(e, tuple(evaluate(i, env) for i in e.indices))
    raise TypeError(f"not an expression: {e!r}")


def _int(x: Any) -> Any:
    return np.asarray(x).astype(np.int64)


def _truth(x: Any) -> Any:
    return np.asarray(x) != 0


class ArrayCodeGen(CodeGen):
    """`CodeGen` whose functions take numpy arrays for some symbols (a loop's indices) and
    compute every expression for all of them at once, elementwise: the same integer
    arithmetic (numpy's // and % floor as Python's do), min/max by np.minimum/np.maximum,
    comparisons and logic as 0/1 int64, a select by np.where. NOTE: both arms of a select
    and both sides of and/or are computed (for all elements); a division by zero in any of
    them raises FloatingPointError under `np.errstate(divide="raise")`, which callers set, and
    they then evaluate element by element. Tensor-element reads are not supported (TypeError
    from `R`)."""

    BIN_CODE = {**_PY_CODE, "min": "_min({}, {})", "max": "_max({}, {})",
                **{op: f"_int({{}} {sym} {{}})" for op, sym in
                   (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                    ("ge", ">="))},
                "and": "_int(_truth({}) & _truth({}))", "or": "_int(_truth({}) | _truth({}))"}
    UN_CODE = {**_PY_UN_CODE, "not": "_int(~_truth({}))"}
    SELECT_CODE = "_where(_truth({cond}), {a}, {b})"
    SCOPE = {"_min": np.minimum, "_max": np.maximum, "_int": _int, "_truth": _truth,
             "_where": np.where}
