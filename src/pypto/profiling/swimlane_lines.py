"""Our writer's event lines read by templates instead of one JSON value per event.

Takes the text of a run of whole events, one per line (`swimlane_writer` writes every X event,
flow end and counter sample as the same constant text around a few fields) → a `LineRun` of
their fields as columns, or None: the caller then decodes the text as JSON, as for any other
file. Keeps: a run is taken only when every line of it matches its template exactly (a match
runs from a line's start to its separator: as many matches as lines), every number is a JSON
number, every name a JSON string without escapes and every time usable, and each X event's
args is one JSON object - so what it gives is exactly what the JSON decoder and
`swimlane_reader` would make of the same text; anything else (an error to report, a time to
leave out, an escaped lone surrogate) goes the JSON way.

NOTE: the JSON decoder makes a dict per event (and a key string per field), which the reader
then takes apart again. Here an X line is split where its constant tail begins (the args
object before it is the only part of variable shape), each distinct args object is decoded
once (AICPU events share a handful), and every other field is a column of strings, converted
a column at a time. Task lines (~0.5 KB of args each) are left to the JSON decoder: there the
pattern costs more than the dicts it saves.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import repeat
from json.scanner import make_scanner
from operator import itemgetter, methodcaller
from typing import Any, Callable

import numpy as np

from pypto.profiling.swimlane import MAX_TIME_US
from pypto.profiling.trace_columns import ArgColumns

_INT = r"(-?(?:0|[1-9][0-9]*))"
_NUM = r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
_STR = r'("[^"\\\x00-\x1f]*")'          # a JSON string without escapes: its text is its value
_END = r"(?:,\n|\Z)"
_X_HEAD = '{"args":'
_TASK_HEAD = '{"args":{"event-hint":'
# the templates: constant text and fields (groups), alternating
_X_TAIL = (',"cat":"event","id":', _INT, ',"name":', _STR, ',"ph":"X","pid":1,"tid":', _INT,
           ',"ts":', _NUM, ',"dur":', _NUM, '}')
_FLOW = ('{', r'(?:"bp":"e",)?', '"id":', _INT, ',"name":"machine-view-last-dep","ph":"',
         r'([sf])', '","pid":1,"tid":', _INT, ',"ts":', _NUM, '}')
_COUNTER = ('{"name":', _STR, ',"pid":1,"tid":1,"ph":"C","ts":', _NUM, ',"args":{"size":',
            _NUM, '}}')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SCAN = make_scanner(json.JSONDecoder())          # one JSON value at a position (C)


def _pattern(parts: tuple[str, ...], line_start: bool) -> re.Pattern:
    """The template's pattern up to the line's separator, fields as groups; `line_start`: from
    the line's start."""
    body = "".join(re.escape(p) if i % 2 == 0 else p for i, p in enumerate(parts))
    return re.compile(("^" if line_start else "") + body + _END, re.M)


_X_TAIL_PATTERN = _pattern(_X_TAIL, False)
_LINES = {"flow": _pattern(_FLOW, True), "C": _pattern(_COUNTER, True)}
_STARTS_X = methodcaller("startswith", _X_HEAD)


@dataclass
class LineRun:
    """The fields of a run of events of one kind ("X", "flow" or "C"), as columns."""

    kind: str
    count: int
    fields: dict[str, Any]


def decode_lines(text: str) -> LineRun | None:
    """The events of `text` (whole events separated by ",\\n") by the template of its first
    line's kind, or None."""
    read: Callable[[str], LineRun | None] | None = (
        # (a task's line is mostly args, which the JSON decoder reads faster than a pattern)
        None if text.startswith(_TASK_HEAD) else _x_lines if text.startswith(_X_HEAD)
        else _flow_lines if text.startswith(('{"id":', '{"bp":'))
        else _counter_lines if text.startswith('{"name":') else None)
    if read is None:
        return None
    try:
        return read(text)
    except ValueError:                      # (JSONDecodeError: an args text is not JSON)
        return None


def _fields(kind: str, text: str) -> list[tuple[str, ...]] | None:
    """The field columns of lines all of template `kind`, or None."""
    found = _LINES[kind].findall(text)
    # a match is a whole line: as many as there are lines when every line matches
    if not found or len(found) != text.count("\n") + 1:
        return None
    return list(zip(*found))


def _numbers(texts: list[str]) -> list:
    """JSON numbers (as the decoder reads them: ints stay ints)."""
    return json.loads(f"[{','.join(texts)}]")


def _unquoted(texts: list[str]) -> list[str]:
    """The values of JSON strings without escapes: each distinct one made once (AICPU events
    and counters repeat a few names)."""
    value = {t: t[1:-1] for t in set(texts)}
    return list(map(value.__getitem__, texts))


def _times(texts: list[str]) -> list[float] | None:
    """The times as floats, or None if one is not a usable time."""
    try:
        times = np.array(_numbers(texts), dtype=np.float64)
    except OverflowError:                   # (an int beyond any float: not a usable time)
        return None
    return times.tolist() if ((times >= 0.0) & (times <= MAX_TIME_US)).all() else None


def _x_lines(text: str) -> LineRun | None:
    """X events: each line is `{"args":` + an object + the constant tail with its fields; the
    tail is what splits the text, so every piece between two tails is one line's head."""
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return None
    pieces = _X_TAIL_PATTERN.split(text)
    heads = pieces[0:-1:6]
    n = len(heads)
    # every line split once: the text ends with a tail, each head is '{"args":' + its object
    if pieces[-1] or not n or sum(map(_STARTS_X, heads)) != n:
        return None
    ts, dur = _times(pieces[4::6]), _times(pieces[5::6])
    if ts is None or dur is None:
        return None
    args = [h[len(_X_HEAD):] for h in heads]
    distinct = list(dict.fromkeys(args))    # (AICPU events share a few: each decoded once)
    decoded = _objects(distinct)
    if decoded is None:
        return None
    if len(distinct) < n and any(type(v) in (dict, list) for d in decoded for v in d.values()):
        decoded, distinct = _objects(args), args    # (no list or dict shared by two events)
    code = dict(zip(distinct, range(len(distinct))))
    at = np.fromiter(map(code.__getitem__, args), dtype=np.int64, count=n) \
        if len(distinct) < n else np.arange(n)
    return LineRun("X", n, {"tid": _numbers(pieces[3::6]), "ts": ts, "dur": dur,
                            "id": _numbers(pieces[1::6]), "name": _unquoted(pieces[2::6]),
                            "args": ArgColumns.from_dicts(decoded).take(at)})


def _objects(texts: list[str]) -> list[dict[str, Any]] | None:
    """Each text decoded as one JSON object (all of it), or None."""
    try:
        found = list(map(_SCAN, texts, repeat(0)))
    except (ValueError, StopIteration, RecursionError):
        return None
    if list(map(itemgetter(1), found)) != list(map(len, texts)):
        return None                         # (more than one value in a text)
    objects = list(map(itemgetter(0), found))
    return objects if set(map(type, objects)) <= {dict} else None


def _flow_lines(text: str) -> LineRun | None:
    columns = _fields("flow", text)
    if columns is None:
        return None
    ids, phases, tids, ts = columns
    ts = _times(ts)
    if ts is None:
        return None
    return LineRun("flow", len(ids), {"id": _numbers(ids), "ph": phases, "tid": _numbers(tids),
                                      "ts": ts})


def _counter_lines(text: str) -> LineRun | None:
    columns = _fields("C", text)
    if columns is None:
        return None
    names, ts, sizes = columns
    times = _times(ts)
    if times is None:
        return None
    try:
        values = np.array(_numbers(sizes), dtype=np.float64).tolist()
    except OverflowError:                   # (the reader names the event that holds it)
        return None
    return LineRun("C", len(names), {"name": _unquoted(names), "ts": times,
                                     "value": values})
