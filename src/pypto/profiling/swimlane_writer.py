"""Write a run's swimlane (`run_columns.RunColumns`) as `merged_swimlane.json`.

Takes the columns of one run → the file text, one event per line (grep- and diff-friendly),
exactly the text `json.dumps(event, separators=(",", ":"))` gives each event: no spaces, as
Chrome's trace format and Perfetto allow (`swimlane_events` parses it back into the event
dicts; `indent=4` writes those with PyPTO's formatting). Keeps: the layout and order of
`swimlane`'s module docstring, and its shared args: what the reader restores (`restore_args`)
is left out of each event or written once into `otherData`. Size: ~1.4 KB per task
(glm_attention, 9,600 tasks: 13.4 MB; PyPTO's 7 args keys alone are ~0.55 KB per task; the
spaced text with every arg on every event and every dependency edge as a flow was 45 MB).

NOTE: the events are formatted from string templates, not by the json encoder: every line of
a block (tasks, flows, counters) is the same constant text around per-event fields, so a block
is one `str.join` over the constants interleaved with the field columns. A 10k-task run has
~250k events; the encoder would build and walk a dict per event.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from pypto.machine.result import SimResult
from pypto.profiling.run_columns import AicpuEvent, RunColumns, run_columns
from pypto.profiling.swimlane import (COUNTER_TID, DERIVED_ARGS, FLOW_NAME, ITEM_TABLE_ARGS,
                                      LINES_TABLE, PROCESS_NAME, SHARED_ARGS, TABLE_ARGS, aicpu_thread,
                                      classify_lane, derived_column, function_keys,
                                      task_fields)
from pypto.profiling.trace_encoding import (COMPACT, json_numbers, json_str, json_strs,
                                            json_value, per_distinct)

_FLOW = json_str(FLOW_NAME)
_SEP = ",\n"                                            # between events
_SLICE = 1 << 20                                        # characters written at a time


def write_swimlane(run: SimResult | RunColumns, path: str | os.PathLike,
                   indent: int | None = None) -> Path:
    """Write `run` as `merged_swimlane.json` at `path` (parents created); returns the path.
    `indent=4` reproduces PyPTO's formatting; both are the same JSON document."""
    pieces = swimlane_text(run)
    if indent is not None:
        pieces = [json.dumps(json.loads("".join(pieces)), indent=indent) + "\n"]
    return write_text(path, pieces)


def write_text(path: str | os.PathLike, pieces: list[str]) -> Path:
    """Write the concatenation of `pieces` at `path` (parents created); returns the path.
    NOTE: piece by piece, and a long piece in 1 MiB slices: the ~20 MB of a 10k-task trace
    is never one string, and each slice's encoded bytes reuse the previous one's memory (one
    20 MB block encoded at once would be 20 MB of fresh pages)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for piece in pieces:
            for at in range(0, len(piece), _SLICE):
                f.write(piece[at:at + _SLICE])
    return path


def swimlane_events(run: SimResult | RunColumns) -> dict[str, Any]:
    """The swimlane of `run` as the JSON object `write_swimlane` writes."""
    return json.loads("".join(swimlane_text(run)))


def swimlane_text(run: SimResult | RunColumns) -> list[str]:
    """The file text of `run`, in pieces (event blocks and the separators between them)."""
    cols = run if isinstance(run, RunColumns) else run_columns(run)
    shared: dict[str, str] = {}
    blocks = [b for b in (_meta_block(cols), _task_block(cols, shared) if cols.runs else "",
                          _aicpu_block(cols), _flow_block(cols), _counter_block(cols)) if b]
    pieces = ['{"traceEvents":[\n']
    for i, block in enumerate(blocks):
        pieces += [_SEP, block] if i else [block]
    other = json.dumps(cols.other, separators=COMPACT)
    if shared and cols.lines:
        shared[LINES_TABLE] = json.dumps(cols.lines, separators=COMPACT)
    if shared:
        tables = ",".join(f"{json_str(k)}:{text}" for k, text in shared.items())
        other = f'{other[:-1]}{"," if cols.other else ""}{json_str(SHARED_ARGS)}:{{{tables}}}}}'
    pieces.append(f'\n],"otherData":{other}}}\n')
    return pieces


def _rows(texts: list[str], fields: list[list[str]]) -> str:
    """One line per row: texts[0] + fields[0][i] + texts[1] + ... + texts[-1], lines joined by
    `_SEP` (len(texts) == len(fields) + 1)."""
    n = len(fields[0]) if fields else 0
    if n == 0:
        return ""
    width = 2 * len(fields) + 1
    pieces: list[str | None] = [None] * (n * width)
    for j, text in enumerate(texts):
        pieces[2 * j::width] = [text + _SEP if j == len(fields) else text] * n
    for j, column in enumerate(fields):
        pieces[2 * j + 1::width] = column
    pieces[-1] = texts[-1]                              # no separator after the last line
    return "".join(pieces)


def _meta_block(cols: RunColumns) -> str:
    meta = [{"args": {"name": PROCESS_NAME}, "cat": "__metadata", "name": "process_name",
             "ph": "M", "pid": 1}]
    meta += [{"args": {"name": name}, "cat": "__metadata", "name": "thread_name", "ph": "M",
              "pid": 1, "tid": tid} for tid, name in cols.lanes]
    return _SEP.join(json.dumps(m, separators=COMPACT) for m in meta)


def _x_tail(first_id: int, names: list[str], tids: list[int], ts_json: list[str],
            dur_json: list[str]) -> tuple[list[str], list[list[str]]]:
    """Templates and fields of the X event keys after `args`."""
    texts = ['},"cat":"event","id":', ',"name":', ',"ph":"X","pid":1,"tid":', ',"ts":',
             ',"dur":', '}']
    fields = [list(map(str, range(first_id, first_id + len(names)))),
              list(map(json_str, names)), list(map(str, tids)), ts_json, dur_json]
    return texts, fields


def _task_block(cols: RunColumns, shared: dict[str, Any]) -> str:
    """The task X events; their args as `_file_args` writes them, the tables into `shared`."""
    texts, fields = _file_args(cols, shared)
    n = len(cols.runs)
    tail_texts, tail_fields = _x_tail(0, cols.name, cols.tid, cols.ts_json[:n], cols.dur_json[:n])
    return _rows(texts[:-1] + [texts[-1] + tail_texts[0]] + tail_texts[1:],
                 fields + tail_fields)


def _file_args(cols: RunColumns, shared: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Templates and fields of the task args as the file holds them: a `DERIVED_ARGS` key only
    on the tasks whose name, seqNo, lane and function tables do not give its value (the
    reader's `derived_column`), a `TABLE_ARGS` key as an index into its table of distinct
    values; the tables go into `shared` (as JSON texts). The first key must be written."""
    fields = list(map(task_fields, cols.name))
    lane_core = {tid: name.split("_")[0] for tid, name in cols.lanes
                 if classify_lane(tid, name).kind in ("aic", "aiv")}
    cores = list(map(lane_core.get, cols.tid))
    tables: dict[str, Any] = {"leaf": {}, "root": {}}
    for f, leaf, root in zip(fields, cols.args["leaf"].page, cols.args["root"].page):
        if f is not None:                   # the first name seen for an index is its entry
            leaf_key, root_key = function_keys(f)
            tables["leaf"].setdefault(leaf_key, leaf)
            tables["root"].setdefault(root_key, root)
    seq_no = cols.args["seqNo"].page
    texts, columns = ["{\"args\":{"], []
    for key, col in cols.args.items():
        head = json_str(key) + ":"
        if key in DERIVED_ARGS:
            given = derived_column(key, fields, seq_no, cores, tables)
            keep = [g != v or type(g) is not type(v) for g, v in zip(given, col.page)]
            columns.append([f",{head}{t}" if k else "" for k, t in zip(keep, col.json)])
            texts.append("")
            continue
        if key in TABLE_ARGS:
            index = {t: str(i) for i, t in enumerate(dict.fromkeys(col.json))}
            shared[key] = "[" + ",".join(index) + "]"
            column = list(map(index.__getitem__, col.json))
        elif key in ITEM_TABLE_ARGS and col.items is not None:
            shared[key] = "[" + ",".join(col.items) + "]"
            column = col.item_refs
        else:
            column = col.json
        texts[-1] += head if not columns else "," + head
        columns.append(column)
        texts.append("")
    shared.update((k, json.dumps(v, separators=COMPACT)) for k, v in tables.items())
    return texts, columns


def _aicpu_block(cols: RunColumns) -> str:
    events = cols.aicpu
    n = len(cols.runs)
    tail_texts, tail_fields = _x_tail(n, [e.name for e in events], [e.tid for e in events],
                                      cols.ts_json[n:], cols.dur_json[n:])
    return _rows(['{"args":{'] + tail_texts, [_aicpu_args(events, dict(cols.lanes))] + tail_fields)


def _aicpu_args(events: list[AicpuEvent], lanes: dict[int, str]) -> list[str]:
    """The text inside each AICPU event's args braces: without the event-hint, color and
    thread that the reader restores from the lane and the name (`restore_args`) where they
    are those. NOTE: AICPU events come in a few shapes (key lists): each shape's values are
    encoded column by column into one template."""
    shapes: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        keys = tuple(e.args)
        if keys[:2] == ("event-hint", "color") and keys[-1:] == ("thread",) and len(keys) >= 3:
            lane = lanes.get(e.tid)
            thread = aicpu_thread(lane) if lane is not None else None
            a = e.args
            if thread is not None and a["color"] == "" and type(a["thread"]) is int \
                    and a["thread"] == thread and a["event-hint"] == f"{lane}: {e.name}":
                keys = keys[2:-1]
        shapes[keys].append(i)
    texts: list[str] = [""] * len(events)
    for keys, members in shapes.items():
        if not keys:
            continue                                    # "args":{}
        template = ",".join(json_str(k).replace("{", "{{").replace("}", "}}") + ":{}"
                             for k in keys)
        values = [[events[i].args[k] for i in members] for k in keys]
        for i, text in zip(members, map(template.format, *map(_json_column, values))):
            texts[i] = text
    return texts


def _json_column(values: list) -> list[str]:
    """`json.dumps` of each value; columns of one type in bulk."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return per_distinct(json_strs, values)
    if kinds <= {int, float}:
        return json_numbers(values)
    return list(map(json_value, values))


def _flow_block(cols: RunColumns) -> str:
    """s/f pairs; ids after the X ids. A task's s ends (f ends) all sit at one (tid, ts), so
    that text is made once per task."""
    tids = list(map(str, cols.tid))
    s_at = [f'{tid},"ts":{ts}' for tid, ts in zip(tids, json_numbers(cols.flow_s_ts))]
    f_at = [f'{tid},"ts":{ts}' for tid, ts in zip(tids, cols.ts_json)]
    first = cols.n_events
    ids = list(map(str, range(first, first + len(cols.flow_src))))
    texts = ['{"id":', f',"name":{_FLOW},"ph":"s","pid":1,"tid":', '},\n{"bp":"e","id":',
             f',"name":{_FLOW},"ph":"f","pid":1,"tid":', "}"]
    return _rows(texts, [ids, list(map(s_at.__getitem__, cols.flow_src)), ids,
                         list(map(f_at.__getitem__, cols.flow_dst))])


def _counter_block(cols: RunColumns) -> str:
    ts, names, sizes = cols.counters
    texts = ['{"name":', f',"pid":1,"tid":{COUNTER_TID},"ph":"C","ts":', ',"args":{"size":',
             "}}"]
    # NOTE: a few counter names; a sample time is often shared by several counters
    return _rows(texts, [per_distinct(json_strs, names), json_numbers(ts, repeated=True),
                         list(map(str, sizes))])
