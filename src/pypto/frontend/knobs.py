"""Knob overrides: run a kernel with its knobs changed without editing it (what-if, tuning).

A knob is addressed the way a practitioner names it:
- an option by name, `stitch_function_max_num`, or with its group when the name alone is
  ambiguous, `pass.cube_l1_reuse_setting`: it overrides that option everywhere, the jit
  decorator's value and any `set_*_options` call in the body alike;
- a tile-shape call site by file and line, `vec_tile@softmax.py:42` or `cube_tile@mm.py:17`:
  the `set_vec_tile_shapes` / `set_cube_tile_shapes` call on that line takes the new shape
  (the file matches by its trailing path components: `softmax.py`, `tuning/softmax.py` or an
  absolute path).

Values are Python values, or strings as a command line gives them (`512`, `{-1: 4}`, `16,512`,
`[[128,128],[64,256],[256,256]]`, `[[128,128],[64,256],[256,256],True]` with split-K). Every
override is checked when parsed, like the call it replaces, and `Knobs.check_used` fails a run
in which a call-site override matched no call: an override that changes nothing is a mistake.

`applied(knobs)` makes them active for the calls inside it (a context variable: threads and
tasks each see their own); `frontend.options` consults `option` and `at_site`.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, NamedTuple

from pypto import _config
from pypto.errors import PyptoTypeError, PyptoValueError

SITE_KINDS = ("vec_tile", "cube_tile")
_SITE = re.compile(r"^(vec_tile|cube_tile)@(.+):(\d+)$")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Knobs:
    """Checked overrides: `options` by flattened key ("runtime.stitch_function_max_num"),
    `sites` by (kind, file suffix, line); `hits` counts the calls each site replaced."""

    options: dict[str, Any] = field(default_factory=dict)
    sites: dict[tuple[str, str, int], Any] = field(default_factory=dict)
    hits: dict[tuple[str, str, int], int] = field(default_factory=dict)

    def key(self) -> tuple:
        """What the overrides change, for compile-cache keys (traces differ by them)."""
        return (tuple(sorted((k, repr(v)) for k, v in self.options.items())),
                tuple(sorted((k, repr(v)) for k, v in self.sites.items())))

    def check_used(self) -> None:
        """Fail if a call-site override replaced no call (a wrong file or line)."""
        unused = [s for s in self.sites if not self.hits.get(s)]
        if unused:
            kind, path, line = unused[0]
            call = "set_vec_tile_shapes" if kind == "vec_tile" else "set_cube_tile_shapes"
            raise PyptoValueError(
                f"knob '{kind}@{path}:{line}' matched no {call} call: no such call ran on line "
                f"{line} of a file ending in '{path}'")

    def describe(self) -> list[str]:
        return ([f"{k.split('.', 1)[1]}={v!r}" for k, v in self.options.items()]
                + [f"{kind}@{path}:{line}={v!r}" for (kind, path, line), v in self.sites.items()])


def parse(assignments: Mapping[str, Any]) -> Knobs:
    """Knobs from {address: value}; see the module docstring for both forms."""
    knobs = Knobs()
    for address, value in assignments.items():
        if not isinstance(address, str):
            raise PyptoTypeError(f"a knob is named by a str, got {address!r}")
        value = _literal(address, value)
        site = _SITE.match(address.strip())
        if site:
            kind, path, line = site.group(1), site.group(2), int(site.group(3))
            knobs.sites[(kind, os.path.normpath(path), line)] = _tile(address, kind, value)
        elif "@" in address:
            raise PyptoValueError(f"knob '{address}': a call site is vec_tile@FILE:LINE or "
                                  f"cube_tile@FILE:LINE")
        else:
            group, name = _option(address.strip())
            knobs.options[f"{group}.{name}"] = _config.check_option(group, name, value)
    return knobs


def parse_assignment(text: str) -> tuple[str, str]:
    """'ADDRESS=VALUE' (a command-line --set) -> (address, value text)."""
    address, sep, value = text.partition("=")
    if not sep or not address.strip() or not value.strip():
        raise PyptoValueError(f"--set '{text}': expected KNOB=VALUE, e.g. "
                              f"stitch_function_max_num=512 or vec_tile@kernel.py:42=16,512")
    return address.strip(), value.strip()


def _literal(address: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        if re.fullmatch(r"[A-Za-z_][\w.-]*", value):
            return value   # a bare word: a string option's value
        raise PyptoValueError(f"knob '{address}': cannot read the value {value!r} (a Python "
                              f"literal: 512, 16,512, {{-1: 4}}, [[128,128],[64,256],[256,256]])")


def _option(name: str) -> tuple[str, str]:
    """(group, name) of an option named bare or as group.name."""
    if "." in name:
        group, _, bare = name.partition(".")
        _config.spec_for(group, bare)   # an unknown key names the closest valid one
        return group, bare
    groups = sorted({s.group for s in _config.SPECS.values() if s.name == name})
    if not groups:
        import difflib
        close = difflib.get_close_matches(name, sorted({s.name for s in _config.SPECS.values()}),
                                          n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise PyptoValueError(f"unknown knob '{name}': not an option name, and not a call site "
                              f"(vec_tile@FILE:LINE, cube_tile@FILE:LINE){hint}")
    if len(groups) > 1:
        raise PyptoValueError(f"knob '{name}' is an option of several groups "
                              f"({', '.join(groups)}): write {groups[0]}.{name}")
    return groups[0], name


def _tile(address: str, kind: str, value: Any) -> Any:
    from pypto.frontend.options import canonical_cube_tile, canonical_vec_tile
    try:
        if kind == "vec_tile":
            return canonical_vec_tile(value if isinstance(value, (list, tuple)) else (value,))
        if not isinstance(value, (list, tuple)) or len(value) not in (3, 4):
            raise PyptoValueError("expected [[mL0,mL1],[kL0,kL1],[nL0,nL1]] with an optional "
                                  "4th entry enable_split_k")
        return canonical_cube_tile(*value)
    except (PyptoValueError, PyptoTypeError) as e:
        raise type(e)(f"knob '{address}': {e}") from None


_ACTIVE: contextvars.ContextVar[Knobs | None] = contextvars.ContextVar("pypto_knobs",
                                                                      default=None)


@contextlib.contextmanager
def applied(knobs: Knobs) -> Iterator[Knobs]:
    """Make `knobs` active for the kernel calls (traces, compiles, runs) inside."""
    token = _ACTIVE.set(knobs)
    try:
        yield knobs
    finally:
        _ACTIVE.reset(token)


def activate(knobs: Knobs) -> contextvars.Token:
    """`applied` for code that cannot use a with-block; undo with `deactivate(token)`."""
    return _ACTIVE.set(knobs)


def deactivate(token: contextvars.Token) -> None:
    _ACTIVE.reset(token)


def active() -> Knobs | None:
    return _ACTIVE.get()


def option(key: str) -> tuple[bool, Any]:
    """(True, value) when an active knob overrides the flattened option `key`."""
    knobs = _ACTIVE.get()
    if knobs is not None and key in knobs.options:
        return True, knobs.options[key]
    return False, None


def at_site(kind: str, value: Any) -> Any:
    """The value a `kind` call ("vec_tile"/"cube_tile") takes: an active override of the
    user's line that made the call, else `value`. While `discovering`, the call is noted."""
    knobs, found = _ACTIVE.get(), _FOUND.get()
    if (knobs is None or not knobs.sites) and found is None:
        return value
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return value
    path, line = os.path.normpath(os.path.abspath(frame.f_code.co_filename)), frame.f_lineno
    if found is not None:
        found.setdefault((kind, path, line), value)
    if knobs is None:
        return value
    for (k, suffix, at), new in knobs.sites.items():
        if k == kind and at == line and (path == suffix or path.endswith(os.sep + suffix)):
            knobs.hits[(k, suffix, at)] = knobs.hits.get((k, suffix, at), 0) + 1
            return new
    return value


# ---- finding the call sites a kernel has (the tuner's search space) ----

_FOUND: contextvars.ContextVar[dict | None] = contextvars.ContextVar("pypto_knob_sites",
                                                                    default=None)


@contextlib.contextmanager
def discovering() -> Iterator[dict]:
    """Collect {(kind, absolute path, line): the value it set} of every tile-shape call traced
    inside (the first value of each site)."""
    found: dict = {}
    token = _FOUND.set(found)
    try:
        yield found
    finally:
        _FOUND.reset(token)


# ---- recording the kernel calls of a script (`pypto-toolkit whatif`) ----

_RECORDING: contextvars.ContextVar[list | None] = contextvars.ContextVar("pypto_kernel_calls",
                                                                        default=None)


class Call(NamedTuple):
    """One recorded kernel call."""

    name: str
    run: Any          # its simulated run (`SimResult`)
    program: Any      # its traced program
    kernel: Any       # the `JitKernel` (its `last_call` is this call, until it is called again)


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Collect a `Call` for every kernel call inside."""
    calls: list = []
    token = _RECORDING.set(calls)
    try:
        yield calls
    finally:
        _RECORDING.reset(token)


def record(kernel: Any) -> None:
    """Called after every kernel call that ran: note it while `recording`."""
    calls = _RECORDING.get()
    if calls is not None:
        calls.append(Call(kernel.__name__, kernel.last_run, kernel.last_program, kernel))
