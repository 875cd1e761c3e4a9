"""What a calibration compares: the features of a run that a board trace also shows.

Per kernel, from one swimlane (ours or a board's), the numbers the machine constants move:
- per leaf function and core type, the mean duration of its paired tasks (the cost terms:
  vector and cube rates, transfer shapes, bandwidth);
- per kind of window build (its root instances and cross edges), the mean build time (the
  control thread's constants), where the trace has our AICPU lanes;
- per core type, the median dependency hop: a task's start after the end of its last
  predecessor (completion, resolve, dispatch), where the trace has flows;
- the lead from the first window's build to its tasks without predecessors (median: the
  launch, and the dispatches queued before each; later launches overlap the window before),
  where the trace has our AICPU lanes;
- the end-to-end time a host timer measured, where the user gives it (no trace carries it:
  the host launch shows nowhere else);
- the kernel span (reported: a calibration fits the others, `calibrate.Problem`).

`Target.of` fixes, once, which tasks and windows of our run stand for which of the board's
(`toolkit.task_pairs`); `Target.residuals` then reads a re-timed run of the same compiled
kernel by task key (a re-timing changes when tasks run, never which tasks there are) and
returns log(ours / board's) per feature, the vector a calibration drives to zero, each with
the board's own relative standard error of that feature (the scatter of the tasks it
averages), by which the fit weighs it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pypto.calibration.run_times import RunTimes
from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit.identity import leaves, windows
from pypto.toolkit.task_pairs import CORE_KINDS, pair_tasks, task_keys

MIN_US = 1e-3   # a feature below this (a zero-length gap) is not compared: its log is noise
FLOOR = 0.002   # the smallest relative standard error a feature is given


def _median(values: np.ndarray) -> tuple[float, float]:
    """(median, its relative standard error: 1.25 sigma / sqrt(n) / |median|)."""
    m = float(np.median(values))
    return m, float(1.25 * np.std(values) / np.sqrt(len(values)) / abs(m)) if m else 1.0


@dataclass
class Target:
    """The board's features of one kernel and where to read ours (see the module
    docstring); `labels[i]` names residual i. Hops and the lead are read over our run's
    dependency structure (its flows, which a re-timing keeps) mapped to the board's tasks
    through the pairs, so a board's lost tasks or missing flows bias nothing."""

    kernel: str
    groups: list[list[tuple]] = field(default_factory=list)     # per leaf: sim task keys
    builds: list[tuple] = field(default_factory=list)            # build shapes
    hops: list[list[tuple]] = field(default_factory=list)        # per core kind: (succ, preds)
    lead: list[tuple] = field(default_factory=list)              # window 0's entry tasks
    host_e2e: bool = False                                       # a host timer's E2E given
    board: list[float] = field(default_factory=list)   # per feature, in `labels` order
    error: list[float] = field(default_factory=list)   # its relative standard error
    labels: list[str] = field(default_factory=list)
    paired: tuple[int, int, int] = (0, 0, 0)          # (pairs, sim tasks, board tasks)

    @classmethod
    def of(cls, kernel: str, sim: SwimlaneData, board: SwimlaneData,
           host_e2e_us: float | None = None) -> Target:
        """The features of `board`, with our run `sim` of the same kernel paired to it;
        `host_e2e_us`: the board's end-to-end time by a host timer, if measured."""
        pairs = pair_tasks(sim, board)
        out = cls(kernel, paired=(len(pairs.sim), len(pairs.sim) + len(pairs.sim_only),
                                  len(pairs.board) + len(pairs.board_only)))
        keys, kinds = task_keys(sim), sim.kind_of(sim.task_columns.lane)
        partner = {keys[s]: b for s, b in zip(pairs.sim.tolist(), pairs.board.tolist())
                   if keys[s] is not None}
        ours, theirs = RunTimes.of_trace(sim), RunTimes.of_trace(board, partner)
        leaf = leaves(sim.task_columns)[1]
        groups: dict[str, list[tuple]] = {}
        for t, k in enumerate(keys):
            if k in partner:
                groups.setdefault(f"{leaf[t]} ({kinds[t]})", []).append(k)
        for label, members in groups.items():
            out._add(f"task {label}", theirs.mean_dur(members), theirs.dur_error(members))
            out.groups.append(members)
        for shape, (mean, error) in theirs.build_means(ours.builds).items():
            out._add(f"build {shape[0]} instances, {shape[1]} cross edges", mean, error)
            out.builds.append(shape)
        for kind, edges in _edges(sim, keys, kinds, set(partner)).items():
            out._add(f"dependency hop to {kind}", *_median(theirs.hops(edges)))
            out.hops.append(edges)
        entry = _entry_tasks(sim, keys, set(partner))
        leads = theirs.leads(entry)
        if leads is not None and ours.leads(entry) is not None:
            out._add("first launch", *_median(leads))
            out.lead = entry
        if host_e2e_us is not None:
            out._add("host end-to-end", float(host_e2e_us), FLOOR)
            out.host_e2e = True
        out._add("kernel span", theirs.span[1] - theirs.span[0], FLOOR)
        return out

    def _add(self, label: str, value: float, error: float) -> None:
        self.labels.append(label)
        self.board.append(value)
        self.error.append(max(FLOOR, error))

    def features(self, run: RunTimes) -> np.ndarray:
        """Our run's features, in the order of `board` (NaN where a feature is missing)."""
        out = [run.mean_dur(members) for members in self.groups]
        means = run.build_means()
        out += [means.get(shape, (float("nan"), 0.0))[0] for shape in self.builds]
        out += [_median(run.hops(edges))[0] for edges in self.hops]
        if self.lead:
            leads = run.leads(self.lead)
            out.append(float("nan") if leads is None else _median(leads)[0])
        if self.host_e2e:
            out.append(float("nan") if run.host_e2e is None else run.host_e2e)
        out.append(run.span[1] - run.span[0])
        return np.asarray(out, dtype=np.float64)

    def residuals(self, run: RunTimes | SwimlaneData) -> np.ndarray:
        """log(ours / the board's) per feature; 0 where either is below `MIN_US`."""
        if isinstance(run, SwimlaneData):
            run = RunTimes.of_trace(run)
        ours, theirs = self.features(run), np.asarray(self.board)
        ok = (ours > MIN_US) & (theirs > MIN_US)
        return np.where(ok, np.log(np.where(ok, ours, 1.0) / np.where(ok, theirs, 1.0)), 0.0)


def _edges(sim: SwimlaneData, keys: list, kinds: np.ndarray,
           paired: set) -> dict[str, list[tuple]]:
    """Per core type of the successor, (successor key, predecessor keys) of our run's flows
    where the successor and all its predecessors are paired."""
    src, dst = sim.flow_columns.matched()
    preds: dict[int, list[int]] = {}
    for s, d in zip(src.tolist(), dst.tolist()):
        preds.setdefault(d, []).append(s)
    out: dict[str, list[tuple]] = {}
    for d, ps in preds.items():
        if keys[d] in paired and all(keys[p] in paired for p in ps) and \
                str(kinds[d]) in CORE_KINDS:
            out.setdefault(str(kinds[d]), []).append((keys[d], tuple(keys[p] for p in ps)))
    return {k: out[k] for k in CORE_KINDS if k in out}


def _entry_tasks(sim: SwimlaneData, keys: list, paired: set) -> list[tuple]:
    """The paired tasks of our run's first window that no flow enters."""
    entered = set(sim.flow_columns.matched()[1].tolist())
    on = sim.on(sim.task_columns.lane, *CORE_KINDS).tolist()
    return [k for t, (k, w, c) in enumerate(zip(keys, windows(sim.task_columns), on))
            if c and w == 0 and k in paired and t not in entered]
