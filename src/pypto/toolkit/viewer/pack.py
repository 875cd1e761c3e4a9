"""Pack a swimlane into the compact, columnar form the viewer page embeds.

Takes a parsed swimlane (`SwimlaneData`, `pack`: read from its columns, never its objects) or
the columns of a run just simulated (`profiling.run_columns.RunColumns`, `pack_run`) → a
JSON-able dict: lanes in display order,
one array per task field (lane, start, dur and string-table indices for name / leaf / root /
label), every `args` key as one column (numbers kept as numbers, anything else interned in the
run's string table, -1 or null where a task lacks the key) and the flows as two index arrays.
Keeps: task `i` of the page is `data.tasks[i]` for `i < n_core`, then the AICPU events in
order, so flow indices need no remapping; `pack_run(cols)` equals `pack` of the parsed file
that `cols` is written as. Columns instead of one object per task keep the page small and let
the browser load them straight into typed arrays; nothing of the raw trace text is kept.
`pack_run` hands the number arrays over as the JSON text the trace writer made of them
(`JsonText`), so they are not formatted twice; `pack` writes its times and the args keys absent
from a whole block of events as JSON text too (`json_text`).
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from itertools import count, repeat
from typing import Any

import numpy as np

from pypto.profiling.flow_ends import SliceIndex
from pypto.profiling.run_columns import RunColumns
from pypto.profiling.swimlane import (Lane, SwimlaneData, classify_lane, lane_values,
                                      task_label, task_labels)
from pypto.profiling.trace_columns import ABSENT, ArgColumns
from pypto.profiling.trace_encoding import json_value
from pypto.toolkit.viewer.json_text import JsonText as JsonText
from pypto.toolkit.viewer.json_text import floats_json, runs_json, sparse_json

# display order of lane kinds, and the group each kind is shown under
_KIND_ORDER = {"aic": 0, "aiv": 1, "hub": 2, "fake": 3, "aicpu": 4, "other": 5}
_HASH = {key: re.compile(rf"\b{key}:(\d+)") for key in ("leafHash", "rootHash")}
_ABSENT = ABSENT                # an event without the args key
_ABSENT_TYPE = type(ABSENT)
_NUMERIC_TYPES = frozenset((int, float, type(None)))
_HASHABLE_TYPES = frozenset((str, int, float, bool, type(None)))
_NON_FINITE_JSON = frozenset(("NaN", "Infinity", "-Infinity"))

# one args key over the events: ("num", numbers / None, or their JsonText) or ("str", strings /
# None if absent); either may instead be (mask of the events that have the key, their values)
Column = tuple[str, Any]


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

    def codes(self, values: list[str | None]) -> list[int] | JsonText:
        """`column` as the page holds it: as text where one string runs over many events."""
        codes = self.column(values)
        return runs_json(np.array(codes, dtype=np.int64)) or codes

    def sparse(self, values: list | tuple[np.ndarray, list]) -> list | JsonText:
        """`codes` of a list, or of (mask, the strings where it is set) with -1 elsewhere."""
        if isinstance(values, list):
            return self.codes(values)
        present, strings = values
        codes = self.column(strings)
        column = np.full(len(present), -1, dtype=np.int64)
        column[present] = codes
        return runs_json(column) or sparse_json(present, codes, -1)

    @property
    def table(self) -> list[str]:
        return list(self.index)[1:]


def _function(args: dict[str, Any], key: str, hash_key: str) -> str:
    """Our `leaf`/`root` arg, else PyPTO's leafHash/rootHash from the event hint, else ""."""
    return _function_of(args.get(key, _ABSENT), args.get("event-hint", _ABSENT), hash_key)


def _functions(values: list, hints: list, hash_key: str) -> list[str]:
    """`_function` of each event, from its `leaf`/`root` values and its event hints (columns,
    `_ABSENT` where missing). NOTE: the usual columns are all strings (our tasks) or all
    absent with string hints (AICPU events, PyPTO's tasks): the latter looked up once per
    distinct hint."""
    types = set(map(type, values))
    if types == {str}:
        return values
    if types == {_ABSENT_TYPE} and set(map(type, hints)) == {str}:
        by_hint = {h: _function_of(_ABSENT, h, hash_key) for h in set(hints)}
        return list(map(by_hint.__getitem__, hints))
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


def _present(parts: list[ArgColumns], key: str) -> tuple[np.ndarray, list]:
    """(which events of `parts`, one after the other, have `key`; their values in order)."""
    has = [np.isin(p.shape, [s for s, keys in enumerate(p.shapes) if key in keys])
           for p in parts]
    values = [v for p, h in zip(parts, has) if key in p.columns
              for v in (p.columns[key][h].tolist(),)]
    return np.concatenate(has), values[0] if len(values) == 1 else sum(values, [])


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_numeric(values: list, types: set[type]) -> bool:
    """Every value a number or None. NOTE: by the set of their `types` first (the usual
    case); only other types (number subclasses, bools) are looked at one by one."""
    if types <= _NUMERIC_TYPES:
        return True
    return all(v is None or _is_number(v) for v in values)


# json.dumps(v, sort_keys=True) without building an encoder per call (the C encoder itself;
# no circular check: the values come from JSON)
_ENCODE = json.encoder.c_make_encoder(
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ": ", ", ",
    True, False, True) if json.encoder.c_make_encoder else None


def _dumps(value: Any) -> str:
    if _ENCODE is None or type(value) is float:   # (a float alone: the encoder's own repr)
        return json.dumps(value, sort_keys=True)
    return "".join(_ENCODE(value, 0))


def _dumps_all(values: list) -> list[str]:
    """`_dumps` of each value. NOTE: a value restored from a shared table (`merge`, `cost`) is
    the same object on every event that refers to it: each object is encoded once (by id:
    they are all alive here); the encoder is called from C (map), not through `_dumps`."""
    by_id = dict(zip(map(id, values), values))
    distinct = list(by_id.values())
    if _ENCODE is not None and float not in set(map(type, distinct)):
        texts = list(map("".join, map(_ENCODE, distinct, repeat(0))))
    else:
        texts = list(map(_dumps, distinct))
    return list(map(dict(zip(by_id, texts)).__getitem__, map(id, values)))


def _texts(values: list, types: set[type] | None = None) -> list[str]:
    """Each value as the string table keys it: a string as it is, anything else as JSON with
    sorted keys. `types`: the set of the values' types, if known."""
    types = set(map(type, values)) if types is None else types
    if types <= {str}:                          # (the usual case: no value to encode)
        return values
    if str not in types:
        return _dumps_all(values)
    texts = iter(_dumps_all([v for v in values if type(v) is not str]))
    return [v if type(v) is str else next(texts) for v in values]


def _arg_columns(parts: list[ArgColumns], first: dict[str, Column] | None = None,
                 n_first: int = 0) -> dict[str, Column]:
    """One column per args key, in first-seen order, over `n_first` events already in columns
    (`first`: every key present on every one of them) followed by the events of `parts`."""
    first = first or {}
    keys = {**dict.fromkeys(first), **dict.fromkeys(k for p in parts for k in p.keys)}
    n = sum(p.n for p in parts)
    cols = {}
    for key in keys:
        kind, head = first.get(key, ("absent", None))
        if not any(key in p.columns for p in parts):     # a key of `first` only
            cols[key] = (kind, head + [None] * n)
            continue
        present, values = _present(parts, key)
        types = set(map(type, values))
        if kind != "str" and _is_numeric(values, types):
            kind = "num"
        else:
            kind, head, values = "str", head if kind != "num" else _texts(head), \
                _texts(values, types)
        if not n_first:
            cols[key] = (kind, (present, values))
            continue
        tail = np.full(n, None, dtype=object)
        tail[present] = np.fromiter(values, dtype=object, count=len(values))
        cols[key] = (kind, (head if head is not None else [None] * n_first) + tail.tolist())
    return cols


def _page(title: str, lanes: dict[int, Lane], n_core: int, lane: np.ndarray | list[int],
          start: np.ndarray | list[float] | JsonText, dur: np.ndarray | list[float] | JsonText,
          name: list[str], leaf: list[str], root: list[str], label: list[str],
          args: dict[str, Column], flows: tuple[list[int], list[int]],
          generator: str, kernel: str) -> dict[str, Any]:
    """The page data of one run from its event columns (see the module docstring)."""
    order = sorted(lanes.values(),
                   key=lambda ln: (_KIND_ORDER[ln.kind], ln.number is None, ln.number or 0, ln.tid))
    lane_pos = {ln.tid: i for i, ln in enumerate(order)}
    strings = _Strings()
    label_ids = strings.codes(label)
    return {
        "title": title,
        "lanes": [[ln.name, ln.kind] for ln in order],
        "n_core": n_core,
        "lane": _lane_positions(lane_values(lanes, np.asarray(lane),
                                            lambda ln: lane_pos[ln.tid], np.int64)),
        "start": floats_json(start),
        "dur": floats_json(dur),
        "name": strings.codes(name),
        "leaf": strings.codes(leaf),
        "root": strings.codes(root),
        "label": label_ids,
        "args": [{"k": key, "num": _numbers_of(values)} if kind == "num" else
                 {"k": key, "str": strings.sparse(values)} for key, (kind, values) in args.items()],
        "flow_src": flows[0],
        "flow_dst": flows[1],
        "strings": strings.table,
        "generator": generator,
        "kernel": kernel,
    }


def _lane_positions(positions: np.ndarray) -> list[int] | JsonText:
    return runs_json(positions) or positions.tolist()


def _numbers_of(values: list | JsonText | tuple[np.ndarray, list]) -> list | JsonText:
    """A "num" column as the page holds it: (mask, numbers) with null where it is not set."""
    if not isinstance(values, tuple):
        return values
    present, numbers = values
    if set(map(type, numbers)) <= {int}:
        column = np.zeros(len(present), dtype=np.int64)
        try:
            column[present] = numbers
        except OverflowError:                   # (an int beyond int64: as the encoder has it)
            return sparse_json(present, numbers, None)
        text = runs_json(column, ~present)
        if text is not None:
            return text
    return sparse_json(present, numbers, None)


def pack(data: SwimlaneData, title: str) -> dict[str, Any]:
    """The page data of a parsed swimlane (read from its columns)."""
    tasks, cpu = data.task_columns, data.aicpu_columns
    parts = (tasks, cpu)
    hints, leaf, root, color = ([e.args.column(k).tolist() for e in parts]
                                for k in ("event-hint", "leaf", "root", "color"))
    return _page(title, data.lanes, len(tasks), np.concatenate([tasks.lane, cpu.lane]),
                 np.concatenate([tasks.start, cpu.start]),
                 np.concatenate([tasks.dur, cpu.dur]), tasks.name + cpu.name,
                 *([*_functions(fs[0], hs[0], key), *_functions(fs[1], hs[1], key)]
                   for fs, hs, key in ((leaf, hints, "leafHash"), (root, hints, "rootHash"))),
                 _labels(task_labels(tasks, color[0]) + task_labels(cpu, color[1])),
                 _arg_columns([tasks.args, cpu.args]),
                 tuple(a.tolist() for a in data.flow_columns.matched()),
                 data.generator, str(data.other.get("kernel", "")))


def _labels(labels: list) -> list:
    """Labels as the string table keys them: one that is a JSON object or array (a `color`
    arg) by its JSON text, like an args value."""
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
    args = _arg_columns([ArgColumns.from_dicts(cpu_args)], core_args if n else None, n)
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


def _run_flows(cols: RunColumns) -> tuple[list[int], list[int]]:
    """(src, dst) of each flow whose ends a reader places on tasks of the file: the `s` ends
    of task i's flows all sit at (its lane, `flow_s_ts[i]`), the `f` ends at its start."""
    tid = np.asarray(cols.tid)
    ts, dur = (np.asarray(c, dtype=np.float64) for c in (cols.ts, cols.dur))
    index = SliceIndex(tid, ts, ts + dur)
    src = index.sources(tid, np.asarray(cols.flow_s_ts, dtype=np.float64))
    dst = index.targets(tid, ts)
    src = src[np.asarray(cols.flow_src, dtype=np.int64)]
    dst = dst[np.asarray(cols.flow_dst, dtype=np.int64)]
    both = (src >= 0) & (dst >= 0)
    return src[both].tolist(), dst[both].tolist()
