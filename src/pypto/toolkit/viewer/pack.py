"""Pack a swimlane into the compact, columnar form the viewer page embeds.

Takes a parsed swimlane (`SwimlaneData`, `pack`) or the columns of a run just simulated
(`profiling.run_columns.RunColumns`, `pack_run`) → a JSON-able dict: lanes in display order,
one array per task field (lane, start, dur and string-table indices for name / leaf / root /
label), every `args` key as one column (numbers kept as numbers, anything else interned in the
run's string table, -1 or null where a task lacks the key) and the flows as two index arrays.
Keeps: task `i` of the page is `data.tasks[i]` for `i < n_core`, then the AICPU events in
order, so flow indices need no remapping; `pack_run(cols)` equals `pack` of the parsed file
that `cols` is written as. Columns instead of one object per task keep the page small and let
the browser load them straight into typed arrays; nothing of the raw trace text is kept.
`pack_run` hands the number arrays over as the JSON text the trace writer made of them
(`JsonText`), so they are not formatted twice.
"""
from __future__ import annotations

import json
import re
from math import copysign, isfinite
from collections import defaultdict
from itertools import count, groupby
from operator import itemgetter
from typing import Any

import numpy as np

from pypto.profiling.run_columns import RunColumns, json_value
from pypto.profiling.swimlane import (FLOW_LEAD_US, Lane, SliceIndex, SwimlaneData,
                                      classify_lane, task_label, task_labels)

# display order of lane kinds, and the group each kind is shown under
_KIND_ORDER = {"aic": 0, "aiv": 1, "hub": 2, "fake": 3, "aicpu": 4, "other": 5}
_HASH = {key: re.compile(rf"\b{key}:(\d+)") for key in ("leafHash", "rootHash")}
_ABSENT = object()              # an event without the args key
_NUMERIC_TYPES = frozenset((int, float, type(None), object))    # object: _ABSENT
_STRING_TYPES = frozenset((str, object))                        # object: _ABSENT
_RUN_SLICE = 4096               # events transposed at a time (`_arg_values`)
_HASHABLE_TYPES = frozenset((str, int, float, bool, type(None)))
_FLOAT_TYPES = frozenset((float, type(None)))
_NON_FINITE_JSON = frozenset(("NaN", "Infinity", "-Infinity"))

# one args key over the events: ("num", numbers / None, or their JsonText) or ("str", strings /
# None if absent)
Column = tuple[str, list]


class JsonText:
    """A value given as its JSON text (numbers a writer has already formatted), that the page
    (`page.embed_json`) inserts as it is. The text must be inert in a script element:
    finite numbers, no markup."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Strings:
    """An interning string table: equal strings share one index."""

    def __init__(self) -> None:
        # NOTE: a missing string gets the next index from the default factory, so a column
        # is interned in one pass in C (map); None is there from the start, as -1
        self.index: defaultdict[str | None, int] = defaultdict(count().__next__)
        self.index[None] = -1

    def column(self, values: list[str | None]) -> list[int]:
        """The index of each string (-1 for None); new strings are added in order of first
        appearance, as interning them one by one would."""
        return list(map(self.index.__getitem__, values))

    @property
    def table(self) -> list[str]:
        return list(self.index)[1:]


def _function(args: dict[str, Any], key: str, hash_key: str) -> str:
    """Our `leaf`/`root` arg, else PyPTO's leafHash/rootHash from the event hint, else ""."""
    return _function_of(args.get(key, _ABSENT), args.get("event-hint", _ABSENT), hash_key)


def _functions(values: list, hints: list, hash_key: str) -> list[str]:
    """`_function` of each event, from its `leaf`/`root` values and its event hints (columns,
    `_ABSENT` where missing): the usual case (a string) is taken as it is."""
    return [v if type(v) is str else _function_of(v, h, hash_key)
            for v, h in zip(values, hints)]


def _function_of(value: Any, hint: Any, hash_key: str) -> str:
    """`_function` of an event whose key is not a string (absent, None, anything else)."""
    if value is not _ABSENT and value is not None:
        return str(value)
    if hint is _ABSENT or hint is None:
        return ""
    hint = str(hint)
    m = _HASH[hash_key].search(hint) if hash_key in hint else None    # (the test is cheaper)
    return f"{hash_key}:{m.group(1)}" if m else ""


def _arg_values(args: list[dict[str, Any]]) -> dict[str, list]:
    """Each args key (in first-seen order) → its value on each event (`_ABSENT` where the
    event lacks it). NOTE: events are taken in runs of the same keys (usually a few long
    runs: a trace's tasks share their keys), and each event's values are fetched in one C
    call (itemgetter) and transposed (zip): reading key by key over all events would jump
    between the events' dicts, a cache miss per value."""
    n = len(args)
    cols: dict[str, list] = {}
    at = 0
    for keys, run in groupby(map(tuple, args)):
        m = len(list(run))
        for a in range(at, at + m, _RUN_SLICE) if keys else ():
            b = min(a + _RUN_SLICE, at + m)
            values = (map(itemgetter(keys[0]), args[a:b]),) if len(keys) == 1 else \
                zip(*map(itemgetter(*keys), args[a:b]))
            for key, vals in zip(keys, values):
                col = cols.get(key)
                if col is None:
                    col = cols[key] = [_ABSENT] * n
                col[a:b] = vals
        at += m
    return cols


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_numeric(values: list, types: set[type]) -> bool:
    """Every value a number, None or absent. NOTE: by the set of their `types` first (the
    usual case); only other types (number subclasses, bools) are looked at one by one."""
    if types <= _NUMERIC_TYPES:
        return True
    return all(v is _ABSENT or v is None or _is_number(v) for v in values)


# json.dumps(v, sort_keys=True) without building an encoder per call (the C encoder itself;
# no circular check: the values come from JSON)
_ENCODE = json.encoder.c_make_encoder(
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ": ", ", ",
    True, False, True) if json.encoder.c_make_encoder else None


def _dumps(value: Any) -> str:
    if _ENCODE is None or type(value) is float:   # (a float alone: the encoder's own repr)
        return json.dumps(value, sort_keys=True)
    return "".join(_ENCODE(value, 0))


def _texts(values: list, types: set[type] | None = None) -> list[str | None]:
    """Each value as the string table keys it: strings as they are, anything else as JSON
    with sorted keys; None where absent. `types`: the set of the values' types, if known."""
    types = set(map(type, values)) if types is None else types
    if types <= _STRING_TYPES:                  # (the usual case: no value to encode)
        return [None if v is _ABSENT else v for v in values] if object in types else values
    return [None if v is _ABSENT else v if type(v) is str else _dumps(v) for v in values]


def _arg_columns(values: dict[str, list], n_args: int, first: dict[str, Column] | None = None,
                 n_first: int = 0) -> dict[str, Column]:
    """One column per args key, in first-seen order, over `n_first` events already in columns
    (`first`: every key present on every one of them) followed by `n_args` events whose
    values are `values` (`_arg_values`; emptied as they are converted)."""
    first = first or {}
    keys = {**dict.fromkeys(first), **dict.fromkeys(values)}
    cols = {}
    for key in keys:
        kind, head = first.get(key, ("absent", None))
        if key not in values:               # a key of `first` only: absent from all of `args`
            cols[key] = (kind, head + [None] * n_args)
            continue
        vals = values.pop(key)              # (each raw column is let go once converted)
        types = set(map(type, vals))
        if kind != "str" and _is_numeric(vals, types):
            vals = [None if v is _ABSENT else v for v in vals] if object in types else vals
            cols[key] = ("num", vals if kind == "absent" and not n_first else
                         (head if kind == "num" else [None] * n_first) + vals)
        else:
            vals = _texts(vals, types)
            cols[key] = ("str", vals if kind == "absent" and not n_first else
                         (head if kind == "str" else _texts(head) if kind == "num"
                          else [None] * n_first) + vals)
    return cols


def _page(title: str, lanes: dict[int, Lane], n_core: int, lane: list[int],
          start: list[float] | JsonText, dur: list[float] | JsonText, name: list[str],
          leaf: list[str], root: list[str], label: list[str],
          args: dict[str, Column], flows: list[tuple[int | None, int | None]],
          generator: str, kernel: str) -> dict[str, Any]:
    """The page data of one run from its event columns (see the module docstring)."""
    order = sorted(lanes.values(),
                   key=lambda ln: (_KIND_ORDER[ln.kind], ln.number is None, ln.number or 0, ln.tid))
    lane_pos = {ln.tid: i for i, ln in enumerate(order)}
    strings = _Strings()
    label_ids = strings.column(label)
    matched = [(s, d) for s, d in flows if s is not None and d is not None]
    return {
        "title": title,
        "lanes": [[ln.name, ln.kind] for ln in order],
        "n_core": n_core,
        "lane": list(map(lane_pos.__getitem__, lane)),
        "start": _float_text(start),
        "dur": _float_text(dur),
        "name": strings.column(name),
        "leaf": strings.column(leaf),
        "root": strings.column(root),
        "label": label_ids,
        "args": [{"k": key, "num": values} if kind == "num" else
                 {"k": key, "str": strings.column(values)} for key, (kind, values) in args.items()],
        "flow_src": [s for s, _ in matched],
        "flow_dst": [d for _, d in matched],
        "strings": strings.table,
        "generator": generator,
        "kernel": kernel,
    }


def _float_text(values: list | JsonText) -> list | JsonText:
    """A number column of floats (or None) as its JSON text, each distinct value formatted
    once (a trace's times repeat: tasks start together, durations recur); any other column,
    or one holding a non-finite value or both zeros (one key to a dict), as it is."""
    if type(values) is not list or not set(map(type, values)) <= _FLOAT_TYPES:
        return values
    texts = dict.fromkeys(values)
    if 0.0 in texts and len({copysign(1.0, v) for v in values if v == 0.0}) > 1:
        return values
    for v in texts:
        if v is None:
            texts[v] = "null"
        elif not isfinite(v):
            return values
        else:
            texts[v] = repr(v)
    return JsonText(f"[{','.join(map(texts.__getitem__, values))}]")


def pack(data: SwimlaneData, title: str) -> dict[str, Any]:
    """The page data of a parsed swimlane."""
    events = data.tasks + data.aicpu
    values = _arg_values([e.args for e in events])
    names = [e.name for e in events]
    absent = [_ABSENT] * len(events)
    hints = values.get("event-hint", absent)
    return _page(title, data.lanes, len(data.tasks), [e.lane for e in events],
                 [e.start for e in events], [e.dur for e in events], names,
                 _functions(values.get("leaf", absent), hints, "leafHash"),
                 _functions(values.get("root", absent), hints, "rootHash"),
                 _labels(names, values.get("color", absent)), _arg_columns(values, len(events)),
                 [(f.src, f.dst) for f in data.flows], data.generator,
                 str(data.other.get("kernel", "")))


def _labels(names: list[str], colors: list) -> list:
    """`task_label` of each event from its name and `color` arg (a column); a label that is
    a JSON object or array is keyed by its JSON text, like an args value."""
    labels = task_labels(names, colors, _ABSENT)
    if not set(map(type, labels)) <= _HASHABLE_TYPES:
        labels = [_dumps(v) if type(v) in (dict, list) else v for v in labels]
    return labels


def pack_run(cols: RunColumns, title: str) -> dict[str, Any]:
    """The page data of a run's columns: what `pack` gives for the file they are written as."""
    lanes = {tid: classify_lane(tid, name) for tid, name in cols.lanes}
    for tid in set(cols.tid) - lanes.keys():            # a task on an undeclared lane
        lanes[tid] = Lane(tid, str(tid), "other", None)
    cpu = cols.aicpu
    cpu_args = [e.args for e in cpu]
    n = len(cols.runs)
    core_args = {key: ("num" if c.numeric else "str", c.page) for key, c in cols.args.items()}
    args = _arg_columns(_arg_values(cpu_args), len(cpu_args), core_args if n else None, n)
    for key, (kind, values) in args.items():
        if kind == "num" and n and key in cols.args:        # the tasks' numbers as written
            tail = values[n:]
            texts = (list(map(json_value, tail)) if any(v is not None for v in tail)
                     else ["null"] * len(tail))
            args[key] = (kind, _numbers(values, cols.args[key].json + texts))
    return _page(title, lanes, n, cols.tid + [e.tid for e in cpu],
                 _numbers(cols.ts + [e.ts for e in cpu], cols.ts_json),
                 _numbers(cols.dur + [e.dur for e in cpu], cols.dur_json),
                 cols.name + [e.name for e in cpu],
                 cols.args["leaf"].page + [_function(a, "leaf", "leafHash") for a in cpu_args],
                 cols.args["root"].page + [_function(a, "root", "rootHash") for a in cpu_args],
                 # a task's name ends in "(<label>)" and its color arg is the label
                 cols.args["color"].page + [task_label(e.name, e.args) for e in cpu],
                 args, _run_flows(cols), cols.other["generator"], str(cols.other["kernel"]))


def _numbers(values: list, texts: list[str]) -> list | JsonText:
    """A number column of the page, as the JSON texts the trace writer made of `values`
    (numbers or None) when they are all finite (the page writes the others as strings)."""
    if _NON_FINITE_JSON.isdisjoint(texts):
        return JsonText(f"[{','.join(texts)}]")
    return values


def _run_flows(cols: RunColumns) -> list[tuple[int | None, int | None]]:
    """Each flow's (src, dst) task as a reader places its ends on the slices of the file.
    NOTE: a task well apart from the other slices of its lane (the usual case: a core runs
    one task at a time, with a dispatch gap between) is the only slice near its own flow ends,
    so they are placed on it directly; the others go through the reader's `SliceIndex`."""
    ends = [t + d for t, d in zip(cols.ts, cols.dur)]
    crowded = np.flatnonzero(~_isolated(cols.tid, cols.ts, ends)).tolist()
    if not crowded:
        return list(zip(cols.flow_src, cols.flow_dst))
    src, dst = list(range(len(cols.runs))), list(range(len(cols.runs)))
    index = SliceIndex(cols.tid, cols.ts, ends)
    for i in crowded:
        src[i] = index.source(cols.tid[i], cols.flow_s_ts[i])
        dst[i] = index.target(cols.tid[i], cols.ts[i])
    return list(zip(map(src.__getitem__, cols.flow_src), map(dst.__getitem__, cols.flow_dst)))


def _isolated(tids: list[int], starts: list[float], ends: list[float]) -> np.ndarray:
    """Per task (in file order: by lane, then start): no other slice of its lane ends or
    starts within twice the flow tolerance of it (so only it can hold its flow ends)."""
    margin = 4 * FLOW_LEAD_US                       # 2 x SliceIndex's tolerance for s ends
    tid, start, end = np.asarray(tids), np.asarray(starts), np.asarray(ends)
    prev_max_end = np.full(len(tid), -np.inf)       # latest end of the lane's earlier tasks
    next_start = np.full(len(tid), np.inf)
    bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True]).tolist()
    for a, b in zip(bounds, bounds[1:]):
        prev_max_end[a + 1:b] = np.maximum.accumulate(end[a:b - 1])
        next_start[a:b - 1] = start[a + 1:b]
    return (start - prev_max_end > margin) & (next_start - end > margin)
