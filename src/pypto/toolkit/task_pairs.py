"""Pairing the tasks of two runs of one kernel: our simulated run and a board's trace (or any
two swimlanes, ours or PyPTO's).

Root indices, leaf ids and hashes are each compiler's own, and the board may have run other
stitch settings. What both files carry is the order of the work: root-function instances in
program order (window, then instance within it, from the task name
`window-instance-call-root-leaf` or our args) and, inside an instance, its call ops in order,
each on a core type. When both runs number their instances alike (most keys and shapes
agree: the same stitching), instances pair by key. Otherwise the instances of both runs are
lined up in program order, an instance with an instance of the same shape (its core types in
call order), and their tasks paired call by call. Where the sequences part, the pairing looks ahead a few instances on
either side for the next common shape (an instance only one run has); two counterparts that
differ (a board trace that lost some tasks) are paired call by call. What stays unpaired is
listed, never dropped silently.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto.profiling.swimlane import SwimlaneData, name_parts
from pypto.toolkit.identity import instances

CORE_KINDS = ("aic", "aiv")
LOOKAHEAD = 8   # instances searched on either side to get back in step


@dataclass(frozen=True)
class Instance:
    """One root-function instance of a run: its core tasks in call order, and their kinds."""

    key: tuple          # (window, instance)
    tasks: tuple[int, ...]
    shape: tuple[str, ...]
    calls: tuple[int, ...]


@dataclass(frozen=True)
class TaskPairs:
    """The paired tasks (`sim[k]` with `board[k]`: task indices) and what stayed alone."""

    sim: np.ndarray
    board: np.ndarray
    sim_only: list[int]
    board_only: list[int]
    instances_paired: int
    instances: tuple[int, int]     # (sim's, board's)

    @property
    def matched_share(self) -> tuple[float, float]:
        """The share of each run's core tasks that found a partner."""
        n_sim = len(self.sim) + len(self.sim_only)
        n_board = len(self.board) + len(self.board_only)
        return (len(self.sim) / n_sim if n_sim else 1.0,
                len(self.board) / n_board if n_board else 1.0)


def run_instances(data: SwimlaneData) -> list[Instance]:
    """The core tasks of `data` grouped by root instance, in program order, each in call
    order. A task with no instance of its own (a name that does not parse) is one alone."""
    tasks = data.task_columns
    kinds = data.kind_of(tasks.lane)
    cores = np.flatnonzero(data.on(tasks.lane, *CORE_KINDS)).tolist()
    owner = instances(tasks)
    calls = _calls(data)
    groups: dict[tuple, list[int]] = {}
    for t in cores:
        key = owner[t] if owner[t] is not None else ("task", t)
        groups.setdefault(key, []).append(t)
    out = []
    for key in sorted(groups, key=_program_order):
        members = tuple(sorted(groups[key], key=lambda t: (calls[t], t)))
        out.append(Instance(key, members, tuple(str(kinds[t]) for t in members),
                            tuple(calls[t] for t in members)))
    return out


def pair_tasks(sim: SwimlaneData, board: SwimlaneData) -> TaskPairs:
    """Pair the core tasks of `sim` and `board` (see the module docstring)."""
    a, b = run_instances(sim), run_instances(board)
    if _same_numbering(a, b):
        return _by_key(a, b)
    i = j = paired = 0
    left: list[int] = []
    right: list[int] = []
    sa: list[int] = []
    sb: list[int] = []
    while i < len(a) and j < len(b):
        if a[i].shape == b[j].shape:
            left += a[i].tasks
            right += b[j].tasks
            i, j, paired = i + 1, j + 1, paired + 1
            continue
        di, dj = _resync(a, b, i, j)
        if (di, dj) == (1, 1):   # counterparts that differ (tasks lost): pair call by call
            got, only_a, only_b = _by_call(a[i], b[j])
            left += [x for x, _ in got]
            right += [y for _, y in got]
            sa += only_a
            sb += only_b
            paired += bool(got)
        else:
            for skipped in a[i:i + di]:
                sa += skipped.tasks
            for skipped in b[j:j + dj]:
                sb += skipped.tasks
        i, j = i + di, j + dj
    for rest in a[i:]:
        sa += rest.tasks
    for rest in b[j:]:
        sb += rest.tasks
    return TaskPairs(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64),
                     sa, sb, paired, (len(a), len(b)))


def _same_numbering(a: list[Instance], b: list[Instance]) -> bool:
    """Whether both runs number their instances alike (the same stitching): most instances
    of the smaller run have a counterpart of the same key and shape in the other (`_alike`)."""
    theirs = {x.key: x for x in b}
    same = sum(x.key in theirs and _alike(x, theirs[x.key]) for x in a)
    return bool(a) and bool(b) and same >= 0.9 * min(len(a), len(b))


def _alike(x: Instance, y: Instance) -> bool:
    """The same instance in both runs: the same core type at every call both have, and the
    calls of one all in the other (a trace that lost tasks lacks some)."""
    if x.shape == y.shape:
        return True
    mine, theirs = dict(zip(x.calls, x.shape)), dict(zip(y.calls, y.shape))
    small, big = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
    return all(big.get(c) == kind for c, kind in small.items())


def _by_key(a: list[Instance], b: list[Instance]) -> TaskPairs:
    """Pairing by instance key (see `_same_numbering`), call by call within each."""
    theirs = {x.key: x for x in b}
    left: list[int] = []
    right: list[int] = []
    sa: list[int] = []
    paired = 0
    for x in a:
        y = theirs.pop(x.key, None)
        if y is None:
            sa += x.tasks
            continue
        got, only_x, only_y = _by_call(x, y) if x.shape != y.shape else \
            (list(zip(x.tasks, y.tasks)), [], [])   # (same shape: in order, whatever the numbers)
        left += [t for t, _ in got]
        right += [t for _, t in got]
        sa += only_x
        theirs[("only", y.key)] = Instance(y.key, tuple(only_y), (), ())
        paired += bool(got)
    sb = sorted(t for y in theirs.values() for t in y.tasks)
    return TaskPairs(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64),
                     sa, sb, paired, (len(a), len(b)))


def _resync(a: list[Instance], b: list[Instance], i: int, j: int) -> tuple[int, int]:
    """How many instances to skip on each side to reach the nearest common shape (the fewest
    skipped in all); (1, 1) when none is within `LOOKAHEAD`."""
    best = None
    for di in range(LOOKAHEAD + 1):
        for dj in range(LOOKAHEAD + 1):
            if (di or dj) and i + di < len(a) and j + dj < len(b) \
                    and a[i + di].shape == b[j + dj].shape:
                if best is None or di + dj < sum(best):
                    best = (di, dj)
    return best or (1, 1)


def _by_call(x: Instance, y: Instance) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """The tasks of two counterpart instances paired by call index and core type; the rest."""
    theirs = {(c, k): t for t, c, k in zip(y.tasks, y.calls, y.shape)}
    got, only_x = [], []
    for t, c, k in zip(x.tasks, x.calls, x.shape):
        other = theirs.pop((c, k), None)
        if other is None:
            only_x.append(t)
        else:
            got.append((t, other))
    return got, only_x, sorted(theirs.values())


def _calls(data: SwimlaneData) -> list[int]:
    """Each task's call index within its instance (our `call` arg, else the name's third
    field, else its position)."""
    tasks = data.task_columns
    fields = name_parts(tasks)[0]
    return [c if isinstance(c, int) else f[2] if f else n
            for n, (c, f) in enumerate(zip(tasks.args.values("call"), fields))]


def _program_order(key: tuple) -> tuple:
    window, instance = key
    if window == "task":
        return (1, instance, 0)
    return (0, window if isinstance(window, int) else -1, instance)


def task_keys(data: SwimlaneData) -> list[tuple | None]:
    """Each task's place in the program, (window, instance, call): the same task of two runs
    of one compiled kernel has the same key whatever its timing (None: a name without one)."""
    owner, calls = instances(data.task_columns), _calls(data)
    return [None if o is None else (*o, c) for o, c in zip(owner, calls)]
