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
from itertools import repeat
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
        self.index: dict[str, int] = {}
        self.table: list[str] = []

    def column(self, values: list[str | None]) -> list[int]:
        """The index of each string (-1 for None); new strings are added in order of first
        appearance, as interning them one by one would."""
        index = self.index
        for s in dict.fromkeys(values):
            if s is not None and s not in index:
                index[s] = len(self.table)
                self.table.append(s)
        return list(map(index.get, values, repeat(-1)))


def _function(args: dict[str, Any], key: str, hash_key: str) -> str:
    """Our `leaf`/`root` arg, else PyPTO's leafHash/rootHash from the event hint, else ""."""
    value = args.get(key)
    if value is not None:
        return str(value)
    hint = str(args.get("event-hint", ""))
    m = _HASH[hash_key].search(hint) if hash_key in hint else None    # (the test is cheaper)
    return f"{hash_key}:{m.group(1)}" if m else ""


def _functions(args: list[dict[str, Any]], key: str, hash_key: str) -> list[str]:
    """`_function` of each event's args. NOTE: the args are looked up in C (map) and only
    events without the key go through `_function`."""
    values = list(map(dict.get, args, repeat(key)))
    return [v if type(v) is str else _function(a, key, hash_key) for v, a in zip(values, args)]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_numeric(values: list) -> bool:
    """Every value a number, None or absent. NOTE: by the set of types first (the usual
    case, in C); only other types (number subclasses, bools) are looked at one by one."""
    if set(map(type, values)) <= _NUMERIC_TYPES:
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


def _texts(values: list) -> list[str | None]:
    """Each value as the string table keys it: strings as they are, anything else as JSON
    with sorted keys; None where absent."""
    return [None if v is _ABSENT else v if type(v) is str else _dumps(v) for v in values]


def _arg_columns(args: list[dict[str, Any]], first: dict[str, Column] | None = None,
                 n_first: int = 0) -> dict[str, Column]:
    """One column per args key, in first-seen order, over `n_first` events already in columns
    (`first`: every key present on every one of them) followed by the events of `args`."""
    first = first or {}
    present: dict[str, Any] = {}
    for a in args:
        present.update(a)                   # only the keys (and their order) are used
    keys = {**dict.fromkeys(first), **dict.fromkeys(present)}
    cols = {}
    for key in keys:
        kind, head = first.get(key, ("absent", None))
        if key not in present:              # a key of `first` only: absent from all of `args`
            cols[key] = (kind, head + [None] * len(args))
            continue
        values = list(map(dict.get, args, repeat(key), repeat(_ABSENT)))
        if kind != "str" and _is_numeric(values):
            cols[key] = ("num", (head if kind == "num" else [None] * n_first)
                         + [None if v is _ABSENT else v for v in values])
        else:
            head = head if kind == "str" else _texts(head) if kind == "num" else [None] * n_first
            cols[key] = ("str", head + _texts(values))
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
        "start": start,
        "dur": dur,
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


def pack(data: SwimlaneData, title: str) -> dict[str, Any]:
    """The page data of a parsed swimlane."""
    events = data.tasks + data.aicpu
    args = [e.args for e in events]
    names = [e.name for e in events]
    return _page(title, data.lanes, len(data.tasks), [e.lane for e in events],
                 [e.start for e in events], [e.dur for e in events], names,
                 _functions(args, "leaf", "leafHash"), _functions(args, "root", "rootHash"),
                 task_labels(names, args), _arg_columns(args),
                 [(f.src, f.dst) for f in data.flows], data.generator,
                 str(data.other.get("kernel", "")))


def pack_run(cols: RunColumns, title: str) -> dict[str, Any]:
    """The page data of a run's columns: what `pack` gives for the file they are written as."""
    lanes = {tid: classify_lane(tid, name) for tid, name in cols.lanes}
    for tid in set(cols.tid) - lanes.keys():            # a task on an undeclared lane
        lanes[tid] = Lane(tid, str(tid), "other", None)
    cpu = cols.aicpu
    cpu_args = [e.args for e in cpu]
    n = len(cols.runs)
    core_args = {key: ("num" if c.numeric else "str", c.page) for key, c in cols.args.items()}
    args = _arg_columns(cpu_args, core_args if n else None, n)
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
