"""The args of the task X events, one `ArgColumn` per key: PyPTO's keys (event, operand and
execution hints, color, taskId, seqNo) then ours (leaf, root, window, ..., cost, GM reads).

Its own module because each key is its own small encoding, and most of them exist to make a
~10k-task run cheap: values shared by the instances of one call op (operand lists, merge ids,
cost rows, GM read boxes) are formatted once. `run_columns` assembles the run from these
columns; the writer and the viewer page read `json` and `page` as they are.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from pypto.machine.result import TaskRun
from pypto.profiling.swimlane import MAGIC_BASE, exact, jsonable, operand_hint, stable_hash
from pypto.profiling.trace_encoding import (COMPACT, json_numbers, json_strs, json_value,
                                            per_distinct)


@dataclass
class ArgColumn:
    """One args key over the task events: `json` is each value as written in the trace;
    `page` is what the viewer keys it by (the value if `numeric` or a string, else its JSON
    text with sorted keys, as `pack` derives from a parsed trace)."""

    json: list[str]
    page: list[Any]
    numeric: bool
    # a column of lists whose items repeat: the distinct items' JSON, and each row as the
    # JSON list of its items' positions there (the file shares them: `swimlane_writer`)
    items: list[str] | None = None
    item_refs: list[str] | None = None


def _numeric(values: list) -> ArgColumn:
    return ArgColumn(json_numbers(values), values, True)


def _exact_numbers(values: list) -> ArgColumn:
    """A numeric column of `exact` values (whole floats as ints)."""
    kinds = set(map(type, values))
    if kinds <= {int}:
        return _numeric(values)
    if kinds == {float}:
        a = np.array(values)
        if (np.abs(a) < 2.0 ** 63).all():           # finite, and whole ones fit int64
            whole = a == np.trunc(a)
            if whole.all():
                return _numeric(a.astype(np.int64).tolist())
            return _numeric([int(x) if w else x for x, w in zip(values, whole.tolist())])
    return _numeric(list(map(exact, values)))


def _strings(values: list[str], repeated: bool = False) -> ArgColumn:
    """A column of strings; `repeated`: few distinct ones, each encoded once."""
    return ArgColumn(per_distinct(json_strs, values) if repeated else json_strs(values),
                     values, False)


def task_arg_columns(runs: list[TaskRun], tasks: list, dur: list[float],
                     digits: int) -> dict[str, ArgColumn]:
    """The args columns of the task X events, in PyPTO's key order then ours."""
    def field(name: str) -> list:
        return list(map(attrgetter(name), tasks))
    window, instance, call = field("window"), field("instance"), field("call")
    leaf, root, label = field("leaf"), field("root"), field("label")
    tid = [(i << 20) + c for i, c in zip(instance, call)]
    event_hint = list(map("Task:[{}-{}-{}], rootHash:{}, callOpMagic:{}, leafHash:{}, TaskId:{}"
                          .format, window, instance, call, map(stable_hash, root),
                          [MAGIC_BASE + c for c in call], map(stable_hash, leaf), tid))
    return {
        "event-hint": _strings(event_hint),
        "ioperand-hint": _strings(_operand_hints(field("inputs")), repeated=True),
        "ooperand-hint": _strings(_operand_hints(field("outputs")), repeated=True),
        "execution-hint": _strings(_execution_hints(tasks, dur, digits), repeated=True),
        "color": _strings(label, repeated=True),
        "taskId": _numeric(tid),
        "seqNo": _numeric(window),
        # OpenPTO extensions
        "leaf": _strings(leaf, repeated=True),
        "root": _strings(root, repeated=True),
        "window": _numeric(window),
        "instance": _numeric(instance),
        "call": _numeric(call),
        "core_type": _strings(field("core"), repeated=True),
        "merge": _merge_column(field("merge")),
        "cost": _cost_column(tasks),
        "l2_hit_bytes": _exact_numbers(list(map(attrgetter("l2_hit_bytes"), runs))),
        "hbm_bytes": _exact_numbers(list(map(attrgetter("hbm_bytes"), runs))),
        "gm_reads": _gm_reads_column(tasks),
        "sim_task_id": _numeric(field("id")),
    }


def _operand_hints(lists: list[list[dict[str, Any]]]) -> list[str]:
    """`operand_hint` of each list. NOTE: the executor hands every instance of a call op the
    same operand lists, so each hint is built once per list (keyed by identity: the result
    keeps the lists alive)."""
    cache: dict[int, str] = {}
    out = []
    for ops in lists:
        text = cache.get(id(ops))
        if text is None:
            text = cache[id(ops)] = operand_hint(ops)
        out.append(text)
    return out


# the cost-model inputs of a task (machine/timing.py reads them): what `compare` splits a
# simulated duration into, by mechanism
_COST_FIELDS = ("mte2_bytes", "mte1_bytes", "vector_cycles", "cube_cycles", "mte3_bytes",
                "mte2_moved", "mte3_moved", "mte1_cycles", "fix_cycles")


def _cost_column(tasks: list) -> ArgColumn:
    """Each task's cost-model inputs as an object of its non-zero fields (in `_COST_FIELDS`
    order), plus `"empty": true` for an empty task: a vector task has no cube cycles, a cube
    task no vector ones. For the viewer with sorted keys. NOTE: tasks of one leaf mostly share
    their values: each distinct row is formatted once."""
    rows = list(zip(*(map(attrgetter(k), tasks) for k in (*_COST_FIELDS, "empty"))))
    texts = {}
    for row in dict.fromkeys(rows):
        value = {k: exact(v) for k, v in zip(_COST_FIELDS, row) if v}
        if row[-1]:
            value["empty"] = jsonable(row[-1])
        texts[row] = (json.dumps(value, separators=COMPACT), json.dumps(value, sort_keys=True))
    return ArgColumn([texts[row][0] for row in rows], [texts[row][1] for row in rows], False)


def _merge_column(merges: list[dict[str, Any]]) -> ArgColumn:
    """The merge group ids, as JSON in insertion order and with sorted keys; equal dicts of
    strings (the instances of one call op) are encoded once."""
    cache: dict[tuple, tuple[str, str]] = {}
    file_json, page_json = [], []
    for merge in merges:
        # only all-string dicts are cached: equal keys then mean equal JSON (1 == 1.0 == True)
        key = tuple(merge.items())
        if not all(type(x) is str for x in chain.from_iterable(key)):
            key = None
        texts = cache.get(key) if key is not None else None
        if texts is None:
            value = jsonable(merge)
            texts = (json.dumps(value, separators=COMPACT), json.dumps(value, sort_keys=True))
            if key is not None:
                cache[key] = texts
        file_json.append(texts[0])
        page_json.append(texts[1])
    return ArgColumn(file_json, page_json, False)


def _gm_reads_column(tasks: list) -> ArgColumn:
    """`[storage, offsets, extents, bytes]` per GM read box (bytes = extent product x element
    size; 0 when the access has no layout). NOTE: the tasks of a run read few distinct boxes
    (the same blocks, again and again): each box's text is made once. Boxes hold ints (the
    SimTask contract), so equal boxes have equal text."""
    # (box, layout) -> its (file text, page text, position among the distinct file texts)
    boxes: dict[tuple, tuple[str, str, str]] = {}
    items: dict[str, str] = {}                  # file text -> its position (as text)
    file_texts, page_texts, refs = [], [], []
    for t in tasks:
        layouts = t.read_layouts
        row = []
        for i, box in enumerate(t.reads):
            key = (box, layouts[i] if i < len(layouts) else None)
            texts = boxes.get(key)
            if texts is None:
                value = _gm_read(*key)
                text = json_value(value)
                texts = boxes[key] = (text, json.dumps(value),
                                      items.setdefault(text, str(len(items))))
            row.append(texts)
        # NOTE: the file's text is compact; the page keys a list by json.dumps' default text
        file_texts.append(f"[{','.join(f for f, _, _ in row)}]")
        page_texts.append(f"[{', '.join(p for _, p, _ in row)}]")
        refs.append(f"[{','.join(r for _, _, r in row)}]")
    return ArgColumn(file_texts, page_texts, False, list(items), refs)


def _gm_read(box: tuple[int, tuple, tuple], layout: tuple | None) -> list:
    sid, off, ext = box
    nbytes = math.prod(int(e) for e in ext) * layout[1] if layout is not None else 0
    return [sid, list(off), list(ext), exact(nbytes)]


def _execution_hints(tasks: list, dur: list[float], digits: int) -> list[str]:
    """PyPTO's execution hint of each task: average, max and min duration (us, the average
    rounded to `digits` decimals) of the tasks of its (root function, leaf), max / min the
    first of ties in task order."""
    task_order = list(zip(*(map(attrgetter(k), tasks) for k in ("window", "instance", "call",
                                                                 "id"))))
    group = list(zip(map(attrgetter("root_index"), tasks), map(attrgetter("leaf"), tasks)))
    groups: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in sorted(range(len(tasks)), key=task_order.__getitem__):
        groups[group[i]].append(i)
    hints = {}
    for key, members in groups.items():
        durs = [dur[i] for i in members]
        hi = members[max(range(len(members)), key=durs.__getitem__)]
        lo = members[min(range(len(members)), key=durs.__getitem__)]

        def ref(i: int) -> str:
            return "[{}-{}-{}]".format(*task_order[i][:3])
        hints[key] = (f"Average Execution Time: {round(sum(durs) / len(durs), digits)}\n"
                      f"Max Execution Time: {dur[hi]}, Task: {ref(hi)}\n"
                      f"Min Execution Time: {dur[lo]}, Task: {ref(lo)}\n")
    return list(map(hints.__getitem__, group))
