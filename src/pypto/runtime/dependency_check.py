"""The dependency check (`runtime_debug_mode=3`): the stitched task graph against the GM the
tasks really touch. Every two tasks of one window that touch overlapping GM, one of them
writing, must be ordered by a path of the graph; a pair that is not is a race.

Takes the stitched tasks (`SimTask`s: their evaluated GM boxes, `reads` / `writes`, and
`preds`), the program's slot facts (`runtime.slot_facts`) and a way to name a task's ops and
source lines (`CallSources`) → a `DependencyReport`: the unordered pairs (how many, the first
`SHOWN` with both tasks, their ops and lines, the storage and the overlapping region), its
`to_json` for deps.json and its `error` (a `PyptoDependencyError`).

The rules it holds the graph to (the memory the runtime really shares, PyPTO's semantics as
`runtime.instance_links` states them):
- windows run one after another: no task of window w + 1 starts before every task of window
  w ended (the window barrier, `machine.simulate`), so tasks of different windows are ordered
  and only pairs inside one window are checked;
- kernel parameters and `pypto.tensor` scratch are one memory for every task;
- a temp only one root function touches is that root's workspace, a copy per instance: tasks
  of different instances never share it (tasks of one instance do);
- a temp that crosses root functions lives in a slot: an instance of a root that creates the
  value writes a fresh copy (a new generation), which later accesses in the window touch.

It is a check, not a second linker: it tests reachability (a path, not a direct edge), and it
tests pairs inside an instance too (the compiler's call-op order, `passes/deps.py`).
NOTE: the overlapping pairs come from `runtime.gm_conflicts` (numpy over a grid per storage
copy), and reachability is a bit matrix made in topological order (`unordered`): a 10k-task
window with ~400k edges checks in about half a second.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from pypto.errors import PyptoDependencyError
from pypto.ir.dump import source_lines
from pypto.machine.result import SimTask
from pypto.runtime.gm_conflicts import KINDS, Conflicts, find_conflicts
from pypto.runtime.slot_facts import SlotFacts

SHOWN = 8           # races listed in the error (deps.json lists up to MAX_LISTED)
MAX_LISTED = 1000
CHUNK = 1 << 14     # tasks whose reachability bits are kept at once (n x CHUNK / 8 bytes)

Box = tuple[tuple[int, ...], tuple[int, ...]]


def task_name(t: SimTask) -> str:
    """window-instance-call: where the task sits in the stitched run."""
    return f"{t.window}-{t.instance}-{t.call}"


class CallSources:
    """The ops and user source lines of each call op, by (root, call), from a compiled
    program (`passes.CompiledProgram`); (leaf name, []) for a task of no known call."""

    def __init__(self, compiled: Any):
        self.roots = compiled.roots if compiled is not None else {}
        self._found: dict[tuple[str, int], tuple[list[str], list[str]]] = {}

    def of(self, t: SimTask) -> tuple[list[str], list[str]]:
        key = (t.root, t.call)
        found = self._found.get(key)
        if found is None:
            root = self.roots.get(t.root)
            calls = root.calls if root is not None else []
            if 0 <= t.call < len(calls):
                srcs = [op.src for op in calls[t.call].ops]
                found = (list(dict.fromkeys(s.opcode for s in srcs)),
                         source_lines(s.loc for s in srcs))
            else:
                found = ([t.leaf], [])
            self._found[key] = found
        return found


def storage_copies(tasks: Sequence[SimTask], facts: SlotFacts
                   ) -> list[tuple[list[tuple], list[tuple]]]:
    """Per task, the storage copy each read and write touches (see the module docstring):
    (storage id,) for shared memory, (storage id, "instance", i) for a root's workspace,
    (storage id, generation) for a slot. Tasks in submission order, windows apart."""
    out = []
    window = None
    generation: dict[int, int] = {}
    producer: dict[int, tuple[str, int]] = {}
    creators, private = facts.creators, facts.private
    for t in tasks:
        if t.window != window:
            window, generation, producer = t.window, {}, {}
        mine = private.get(t.root, ())
        for sid, _, _ in t.writes:
            if t.root in creators.get(sid, ()) and producer.get(sid) != (t.root, t.instance):
                producer[sid] = (t.root, t.instance)
                generation[sid] = generation.get(sid, 0) + 1

        def copy(sid: int) -> tuple:
            if sid in mine:
                return (sid, "instance", t.instance)
            return (sid, generation.get(sid, 0)) if sid in creators else (sid,)
        out.append(([copy(a[0]) for a in t.reads], [copy(a[0]) for a in t.writes]))
    return out


@dataclass(frozen=True)
class Race:
    """Two tasks of one window on overlapping GM, one writing, with no path between them."""

    first: SimTask      # the earlier in submission order
    second: SimTask
    kind: str           # "RAW", "WAR", "WAW" (first's access, then second's)
    storage: int
    region: Box


def windows(tasks: Sequence[SimTask]) -> list[tuple[int, int]]:
    """(start, end) of each window's tasks (tasks in submission order)."""
    w = np.fromiter((t.window for t in tasks), np.int64, len(tasks))
    cuts = np.flatnonzero(np.diff(w)) + 1
    bounds = [0, *cuts.tolist(), len(tasks)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def _local_preds(tasks: Sequence[SimTask], first: int) -> list[np.ndarray]:
    n = len(tasks)
    out = []
    for t in tasks:
        p = np.asarray(t.preds, np.int64) - first
        out.append(p[(p >= 0) & (p < n)])
    return out


def _order(preds: list[np.ndarray]) -> list[int]:
    """A topological order of one window's tasks (submission order when it is one)."""
    n = len(preds)
    if all(not len(p) or p.max() < k for k, p in enumerate(preds)):
        return list(range(n))
    succs: list[list[int]] = [[] for _ in range(n)]
    count = [0] * n
    for k, p in enumerate(preds):
        for j in p.tolist():
            succs[j].append(k)
            count[k] += 1
    ready = [k for k in range(n) if not count[k]]
    order = []
    while ready:
        k = ready.pop()
        order.append(k)
        for s in succs[k]:
            count[s] -= 1
            if not count[s]:
                ready.append(s)
    return order + [k for k in range(n) if count[k]]   # (a cycle: checked as it stands)


def unordered(preds: list[np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which pairs (a[k], b[k]) of one window have no path between them either way.
    NOTE: reachability as a bit matrix (row k: k and its ancestors), made in topological
    order, CHUNK source columns at a time so a large window stays within memory."""
    n = len(preds)
    order = _order(preds)
    out = np.ones(len(a), bool)
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        bits = np.zeros((n, (hi - lo + 7) // 8), np.uint8)
        for k in order:
            p = preds[k]
            if len(p):
                np.bitwise_or.reduce(bits[p], axis=0, out=bits[k])
            if lo <= k < hi:
                bits[k, (k - lo) >> 3] |= np.uint8(1 << ((k - lo) & 7))
        for src, dst in ((a, b), (b, a)):
            m = (src >= lo) & (src < hi)
            c = src[m] - lo
            out[m] &= ((bits[dst[m], c >> 3] >> (c & 7)) & 1) == 0
    return out


def conflicts_by_window(tasks: Sequence[SimTask], facts: SlotFacts | None = None
                        ) -> list[tuple[int, Conflicts]]:
    """(first task index, its conflicting pairs) of each window of stitched `tasks`."""
    copies = storage_copies(tasks, facts or SlotFacts())
    return [(start, find_conflicts(tasks[start:end], copies[start:end]))
            for start, end in windows(tasks)]


def find_races(tasks: Sequence[SimTask], facts: SlotFacts | None = None,
               found: list[tuple[int, Conflicts]] | None = None) -> tuple[int, list[Race]]:
    """(how many unordered task pairs, the first MAX_LISTED as `Race`s) of stitched `tasks`
    (in submission order, as the stitcher gives them); `found`: their
    `conflicts_by_window`, if made already."""
    count, listed = 0, []
    bounds = dict(windows(tasks))
    for start, pairs in (found if found is not None else conflicts_by_window(tasks, facts)):
        if not len(pairs):
            continue
        window = tasks[start:bounds[start]]
        bad = np.flatnonzero(unordered(_local_preds(window, window[0].id), pairs.first,
                                       pairs.second))
        count += len(bad)
        for k in bad[:MAX_LISTED - len(listed)].tolist():
            listed.append(Race(window[int(pairs.first[k])], window[int(pairs.second[k])],
                               KINDS[int(pairs.kind[k])], int(pairs.storage[k]),
                               pairs.region(k)))
    return count, listed


@dataclass
class DependencyReport:
    """What `check_dependencies` found."""

    tasks: int
    count: int
    races: list[Race]
    describe: Callable[[SimTask], tuple[list[str], list[str]]]
    storage_name: Callable[[int], str]

    def __bool__(self) -> bool:   # (true when it found a race)
        return self.count > 0

    def race_json(self, r: Race) -> dict:
        out = {"kind": r.kind, "storage": r.storage, "tensor": self.storage_name(r.storage),
               "region": {"offsets": list(r.region[0]), "extents": list(r.region[1])}}
        for role, t in (("first", r.first), ("second", r.second)):
            ops, lines = self.describe(t)
            out[role] = {"id": t.id, "name": task_name(t), "leaf": t.leaf, "ops": ops,
                         "lines": lines}
        return out

    def to_json(self) -> dict:
        return {"ok": not self.count, "tasks": self.tasks, "unordered_pairs": self.count,
                "races": [self.race_json(r) for r in self.races]}

    def race_text(self, r: Race) -> str:
        parts = []
        for t in (r.first, r.second):
            ops, lines = self.describe(t)
            parts.append(f"task {task_name(t)} (leaf {t.leaf}; {'/'.join(ops)} at "
                         f"{', '.join(lines) or '?'})")
        box = ", ".join(f"{o}:{o + e}" for o, e in zip(*r.region))
        return (f"{r.kind} on {self.storage_name(r.storage)}[{box}]: {parts[0]} and "
                f"{parts[1]} have no order between them")

    def error(self, kernel: str) -> PyptoDependencyError:
        lines = [f"kernel '{kernel}': {self.count} pair(s) of tasks touch overlapping GM, one "
                 f"writing, with no order between them in the stitched task graph "
                 f"(runtime_debug_mode=3; window-instance-call names):"]
        lines += [f"  {self.race_text(r)}" for r in self.races[:SHOWN]]
        if self.count > SHOWN:
            lines.append(f"  ... and {self.count - SHOWN} more (deps.json lists up to "
                         f"{MAX_LISTED})")
        return PyptoDependencyError("\n".join(lines), locate=False)


def storage_names(program: Any) -> Callable[[int], str]:
    """storage id -> the name the user knows it by (parameter, local, else the value's)."""
    names: dict[int, str] = {}
    for p in getattr(program, "params", ()):
        names[p.value.storage.id] = p.name
    for block in program.blocks() if program is not None else ():
        for op in block.ops:
            for v in (*op.inputs, *op.outputs):
                names.setdefault(v.storage.id, v.storage.name or v.name or f"%{v.id}")
    return lambda sid: names.get(sid, f"storage {sid}")


def check_dependencies(tasks: Sequence[SimTask], facts: SlotFacts | None = None,
                       sources: CallSources | None = None,
                       storage_name: Callable[[int], str] | None = None,
                       found: list[tuple[int, Conflicts]] | None = None) -> DependencyReport:
    """The races of stitched `tasks` (see the module docstring), named by `sources`;
    `found`: their `conflicts_by_window`, if made already."""
    count, races = find_races(tasks, facts, found)
    sources = sources or CallSources(None)
    return DependencyReport(len(tasks), count, races, sources.of,
                            storage_name or (lambda sid: f"storage {sid}"))
