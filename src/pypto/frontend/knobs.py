"""Knob overrides: run a kernel with its knobs changed without editing it (what-if, tuning).

A knob is addressed the way a practitioner names it:
- an option by name, `stitch_function_max_num`, or with its group when the name alone is
  ambiguous, `pass.cube_l1_reuse_setting`: it overrides that option everywhere, the jit
  decorator's value and any `set_*_options` call in the body alike;
- a call site by kind, file and line (the file matches by its trailing path components:
  `softmax.py`, `tuning/softmax.py` or an absolute path); the call on that line takes the
  new value instead of its own:
  `vec_tile@softmax.py:42` / `cube_tile@mm.py:17`: the `set_vec_tile_shapes` /
  `set_cube_tile_shapes` call's shape;
  `unroll@attn.py:30`: the `unroll_list` of the `pypto.loop` / `pypto.loop_unroll` call, a
  list of ints (`64,16,4`) or `none` (no unroll; loop_unroll then runs only its 1-tier);
  `sg_scope@chain.py:24`: the `sg_set_scope` of the `set_pass_options(sg_set_scope=...)` call
  (an id, -1 for automatic merging, or the `(id, allow_parallel_merge, allow_cross_scope)`
  tuple); only calls that pass `sg_set_scope` are sites;
- a tensor parameter by name, `cache_policy@w`: the parameter's cache policy for the whole
  kernel, `NONE_CACHEABLE`, `PREFETCH` or `DEFAULT` (no hint; the simulator models only
  NONE_CACHEABLE, an L2 bypass), as if the body began with
  `w.set_cache_policy(pypto.CachePolicy.X, True)` and the body's own calls on `w` were gone.

Values are Python values, or strings as a command line gives them (`512`, `{-1: 4}`, `16,512`,
`[[128,128],[64,256],[256,256]]`, `[[128,128],[64,256],[256,256],True]` with split-K,
`64,16,4`, `none`, `NONE_CACHEABLE`). Every override is checked when parsed, and again where
it replaces a call, like the call itself would check it (an unroll list of a `pypto.loop`
with several factors must contain 1), the error naming the knob. A call-site override that
matched no call fails the run (`Knobs.check_used`), and a `cache_policy` knob naming no tensor
parameter of a kernel it is traced with fails that trace: an override that changes nothing is
a mistake.

`applied(knobs)` makes them active for the calls inside it (a context variable: threads and
tasks each see their own); `frontend.options` consults `option` and `at_site`,
`frontend.control` `at_site`, `frontend.entry` `param_policies`.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from pypto import _config
from pypto.enums import CachePolicy
from pypto.errors import PyptoError, PyptoTypeError, PyptoValueError
from pypto.frontend.tile_shapes import canonical_cube_tile, canonical_vec_tile

# the call each call-site kind overrides (for messages)
SITE_CALLS = {"vec_tile": "set_vec_tile_shapes", "cube_tile": "set_cube_tile_shapes",
              "unroll": "pypto.loop or pypto.loop_unroll",
              "sg_scope": "set_pass_options(sg_set_scope=...)"}
SITE_KINDS = tuple(SITE_CALLS)
PARAM_KINDS = ("cache_policy",)
POLICIES = ("DEFAULT", "NONE_CACHEABLE", "PREFETCH")
_SITE = re.compile(rf"^({'|'.join(SITE_KINDS)})@(.+):(\d+)$")
_PARAM = re.compile(rf"^({'|'.join(PARAM_KINDS)})@([A-Za-z_]\w*)$")
_FORMS = ("vec_tile@FILE:LINE, cube_tile@FILE:LINE, unroll@FILE:LINE, sg_scope@FILE:LINE, "
          "cache_policy@PARAM")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def address(site: tuple[str, str, int]) -> str:
    """How a knob names a site: `kind@FILE:LINE`, or `kind@PARAM` for a parameter (whose
    key in `Knobs.sites` is (kind, parameter name, 0))."""
    kind, where, line = site
    return f"{kind}@{where}" if kind in PARAM_KINDS else f"{kind}@{where}:{line}"


@dataclass
class Knobs:
    """Checked overrides: `options` by flattened key ("runtime.stitch_function_max_num"),
    `sites` by (kind, file suffix, line) or (kind, parameter, 0); `hits` counts the calls
    each call site replaced."""

    options: dict[str, Any] = field(default_factory=dict)
    sites: dict[tuple[str, str, int], Any] = field(default_factory=dict)
    hits: dict[tuple[str, str, int], int] = field(default_factory=dict)

    def key(self) -> tuple:
        """What the overrides change, for compile-cache keys (traces differ by them: the
        second part holds every site, parameters included)."""
        return (tuple(sorted((k, repr(v)) for k, v in self.options.items())),
                tuple(sorted((k, repr(v)) for k, v in self.sites.items())))

    def check_used(self) -> None:
        """Fail if a call-site override replaced no call (a wrong file or line)."""
        unused = [s for s in self.sites if s[0] in SITE_KINDS and not self.hits.get(s)]
        if unused:
            kind, path, line = unused[0]
            raise PyptoValueError(
                f"knob '{address(unused[0])}' matched no {SITE_CALLS[kind]} call: no such "
                f"call ran on line {line} of a file ending in '{path}'")

    def describe(self) -> list[str]:
        return ([f"{k.split('.', 1)[1]}={v!r}" for k, v in self.options.items()]
                + [f"{address(site)}={v!r}" for site, v in self.sites.items()])


def parse(assignments: Mapping[str, Any]) -> Knobs:
    """Knobs from {address: value}; see the module docstring for the forms."""
    knobs = Knobs()
    for name, value in assignments.items():
        if not isinstance(name, str):
            raise PyptoTypeError(f"a knob is named by a str, got {name!r}")
        value = _literal(name, value)
        site, param = _SITE.match(name.strip()), _PARAM.match(name.strip())
        if site:
            kind, path, line = site.group(1), site.group(2), int(site.group(3))
            knobs.sites[(kind, os.path.normpath(path), line)] = _site_value(name, kind, value)
        elif param:
            knobs.sites[(param.group(1), param.group(2), 0)] = _policy(name, value)
        elif "@" in name:
            raise PyptoValueError(f"knob '{name}': a site is one of {_FORMS}")
        else:
            group, bare = _option(name.strip())
            knobs.options[f"{group}.{bare}"] = _config.check_option(group, bare, value)
    return knobs


def parse_assignment(text: str) -> tuple[str, str]:
    """'ADDRESS=VALUE' (a command-line --set) -> (address, value text)."""
    address, sep, value = text.partition("=")
    if not sep or not address.strip() or not value.strip():
        raise PyptoValueError(f"--set '{text}': expected KNOB=VALUE, e.g. "
                              f"stitch_function_max_num=512, vec_tile@kernel.py:42=16,512 or "
                              f"unroll@kernel.py:30=64,16,4")
    return address.strip(), value.strip()


def _literal(address: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        if re.fullmatch(r"[A-Za-z_][\w.-]*", value):
            return value   # a bare word: a string option's value, none, a cache policy
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
        raise PyptoValueError(f"unknown knob '{name}': not an option name, and not a site "
                              f"({_FORMS}){hint}")
    if len(groups) > 1:
        raise PyptoValueError(f"knob '{name}' is an option of several groups "
                              f"({', '.join(groups)}): write {groups[0]}.{name}")
    return groups[0], name


def _site_value(address: str, kind: str, value: Any) -> Any:
    """The canonical value of a call-site knob, checked as its call checks it."""
    try:
        if kind == "unroll":
            return canonical_unroll(value)
        if kind == "sg_scope":
            if isinstance(value, list):
                value = tuple(value)   # (a tuple that went through JSON)
            return _config.check_option("pass", "sg_set_scope", value)
        return _tile(kind, value)
    except (PyptoValueError, PyptoTypeError) as e:
        raise _named(e, address) from None


def _named(e: PyptoError, address: str) -> PyptoError:
    """`e` again, its message led by the knob that caused it."""
    return type(e)(f"knob '{address}': {e.raw_message}", e.loc, locate=e.loc is not None)


def _tile(kind: str, value: Any) -> Any:
    if kind == "vec_tile":
        return canonical_vec_tile(value if isinstance(value, (list, tuple)) else (value,))
    if not isinstance(value, (list, tuple)) or len(value) not in (3, 4):
        raise PyptoValueError("expected [[mL0,mL1],[kL0,kL1],[nL0,nL1]] with an optional "
                              "4th entry enable_split_k")
    return canonical_cube_tile(*value)


def canonical_unroll(value: Any) -> tuple[int, ...] | None:
    """An unroll list as a tuple, largest factor first, each once; None (or "none") for no
    unroll. A bare int k is [k]."""
    if value is None or (isinstance(value, str) and value.lower() == "none"):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (list, tuple)) or not value:
        raise PyptoTypeError(f"unroll_list must be a non-empty list of ints or none, got "
                             f"{value!r}")
    for f in value:
        if isinstance(f, bool) or not isinstance(f, int) or f <= 0:
            raise PyptoValueError(f"unroll_list entries must be positive ints, got {f!r}")
    return tuple(sorted(set(value), reverse=True))


def _policy(address: str, value: Any) -> str:
    """A cache-policy knob's value as a `POLICIES` name."""
    if value is None:
        return "DEFAULT"
    name = value.name if isinstance(value, CachePolicy) else value
    if isinstance(name, str) and name.upper() in POLICIES:
        return name.upper()
    raise PyptoValueError(f"knob '{address}': a cache policy is one of {', '.join(POLICIES)} "
                          f"(DEFAULT: no hint, L2-cacheable), got {value!r}")


def policy_flags(name: str) -> dict[int, bool]:
    """The `Program.cache_policies` entry of a `POLICIES` name."""
    return {} if name == "DEFAULT" else {int(CachePolicy[name]): True}


def policy_name(flags: dict[int, bool]) -> str:
    """The `POLICIES` name of a `Program.cache_policies` entry (NONE_CACHEABLE wins)."""
    for name in ("NONE_CACHEABLE", "PREFETCH"):
        if flags.get(int(CachePolicy[name])):
            return name
    return "DEFAULT"


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


def at_site(kind: str, value: Any, check: Callable[[Any], Any] | None = None,
            note: Any = None) -> Any:
    """The value a `kind` call takes (`SITE_KINDS`): an active override of the user's line
    that made the call, checked by `check` (its error then names the knob), else `value`.
    While `discovering`, the call is noted with `value` (and `note`, what the search space
    needs to know about the call)."""
    knobs, found = _ACTIVE.get(), _FOUND.get()
    if (knobs is None or not knobs.sites) and found is None:
        return value
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return value
    path, line = os.path.normpath(os.path.abspath(frame.f_code.co_filename)), frame.f_lineno
    if found is not None and (kind, path, line) not in found:
        found[(kind, path, line)] = value
        found.notes[(kind, path, line)] = note
    if knobs is None:
        return value
    for site, new in knobs.sites.items():
        k, suffix, at = site
        if k == kind and at == line and (path == suffix or path.endswith(os.sep + suffix)):
            if check is not None:
                try:
                    check(new)
                except PyptoError as e:
                    raise _named(e, address(site)) from None
            knobs.hits[site] = knobs.hits.get(site, 0) + 1
            return new
    return value


def param_policies(kernel: str, params: Sequence[str]) -> dict[str, str]:
    """{tensor parameter: `POLICIES` name} the active `cache_policy` knobs set for a trace of
    `kernel`, whose tensor parameters are `params`; a knob naming none of them is an error
    that lists them."""
    knobs = _ACTIVE.get()
    if knobs is None:
        return {}
    out = {}
    for site, value in knobs.sites.items():
        if site[0] == "cache_policy":
            if site[1] not in params:
                raise PyptoValueError(
                    f"knob '{address(site)}': kernel '{kernel}' has no tensor parameter "
                    f"'{site[1]}'; its tensor parameters are {', '.join(params) or '(none)'}")
            out[site[1]] = value
    return out


def note_param(kind: str, name: str, value: Any) -> None:
    """While `discovering`: a parameter site (`PARAM_KINDS`) and its current value."""
    found = _FOUND.get()
    if found is not None:
        found.setdefault((kind, name, 0), value)
        found.notes.setdefault((kind, name, 0), None)


# ---- finding the sites a kernel has (the tuner's search space) ----

class Found(dict):
    """{site: the first value it had} in trace order; `.notes` {site: the call's note}."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: dict[tuple, Any] = {}


_FOUND: contextvars.ContextVar[Found | None] = contextvars.ContextVar("pypto_knob_sites",
                                                                     default=None)


@contextlib.contextmanager
def discovering() -> Iterator[Found]:
    """Collect the sites traced inside: {(kind, absolute path, line): the value its call
    set} for the call sites, {(kind, parameter, 0): its current value} for the parameter
    sites (the first value of each), with each call's note (`at_site`)."""
    found = Found()
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
    record: Any       # its `CallRecord` (the driver's)
    kernel: Any       # the `JitKernel`

    @property
    def run(self) -> Any:
        """Its simulated run (`SimResult`)."""
        return self.record.run

    @property
    def program(self) -> Any:
        """Its traced program."""
        return self.record.program


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Collect a `Call` for every kernel call inside."""
    calls: list = []
    token = _RECORDING.set(calls)
    try:
        yield calls
    finally:
        _RECORDING.reset(token)


def record(call: Call) -> None:
    """Called after every kernel call that ran: note it while `recording`."""
    calls = _RECORDING.get()
    if calls is not None:
        calls.append(call)
