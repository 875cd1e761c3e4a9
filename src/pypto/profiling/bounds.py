"""Two lower bounds of a simulated run, to say how far its kernel time is from the best the
machine could do: the roofline and the longest dependency chain.

Takes a `SimResult` (`kernel.last_run`) and the machine it ran on → `Bounds`: both bounds in
microseconds, which one is larger, and ratio = kernel time / the larger one (1.0 would be a
run that reaches its bound; the models benchmark, `benchmarks/models.py`, prints it per model).

The roofline is the largest of three terms, each a time no schedule of these tasks can beat:
- HBM: the compulsory bytes / `memory.hbm_bytes_per_cycle`. Compulsory bytes are the unique
  bytes (union of the accessed boxes, counted once however many tasks read them) of every GM
  storage the run reads and no task writes (the kernel's inputs: every line of them is a miss
  the first time, L2 starts empty), plus the unique bytes written to storages no task reads
  (the outputs) beyond what L2 keeps (`machine.memory.l2_kept`, its effective capacity: the
  simulated L2 is write-back, and writes up to that stay in L2 during the kernel). Not the
  run's own `hbm_read_bytes`: that counts what this schedule re-read after L2 evictions,
  which a better schedule could avoid.
  NOTE: the simulator gives each running task 1/n of HBM for its reads and 1/n for its
  writes (`machine/flow.py`), which overlap, so tasks that read and write HBM at once can
  move more than the peak together; the term is the hardware's bound, which such a moment
  can undercut, never by much (the tests check real kernels and bursts against it).
- cube: the sum of the cube cycles the cost model charges AIC tasks (issue + one cycle per
  16 x k0 x 16 fractal, padded: what the cube pipe really does, not 2MNK/peak) over all AIC
  cores; every AIC task lasts at least its cube cycles and a core runs one task at a time;
- vector: the sum of the vector cycles of AIV tasks over all AIV cores, for the same reason.
Task heads, load latencies and L1 -> L0 moves are left out: they are per-task overheads of the
cost model, not the machine's peak rates (a run bound by them shows a high ratio, and the
swimlane's per-leaf busy time names them).

The chain is the longest path through the tasks' dependencies (`SimTask.preds`) weighted by
each task's simulated duration (end - start), with the windows in sequence: the runtime runs
one stitch window after another, so every task of window w + 1 comes after the whole of
window w and the chain is the sum over windows of each window's longest path. It uses the
durations of this run (contention included), so it bounds this schedule's kernel time, not
every schedule's.

`before_scheduling(tasks, spec)` is the cheap form the tuner prunes with: the same terms from
the stitched tasks before they are simulated (the chain weighted by each task's own compute).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from pypto.errors import PyptoValueError
from pypto.machine.memory import l2_kept
from pypto.machine.result import SimResult, SimTask
from pypto.machine.spec import MachineSpec, load


@dataclass(frozen=True)
class Bounds:
    """Lower bounds of one run, in microseconds (see the module docstring)."""

    kernel_us: float            # the run's kernel time (first to last AIC/AIV task)
    hbm_us: float               # compulsory bytes at peak HBM bandwidth
    cube_us: float              # cube cycles over all AIC cores
    vector_us: float            # vector cycles over all AIV cores
    chain_us: float             # longest dependency chain of simulated task durations
    chain_tasks: int            # tasks on that chain
    compulsory_bytes: float     # the bytes behind hbm_us

    @property
    def roofline_us(self) -> float:
        return max(self.hbm_us, self.cube_us, self.vector_us)

    @property
    def roofline_term(self) -> str:
        """Which term sets the roofline: "hbm", "cube" or "vector"."""
        terms = {"hbm": self.hbm_us, "cube": self.cube_us, "vector": self.vector_us}
        return max(terms, key=terms.__getitem__)

    @property
    def larger(self) -> str:
        """"roofline" or "chain": the bound the ratio is taken to."""
        return "chain" if self.chain_us > self.roofline_us else "roofline"

    @property
    def bound_us(self) -> float:
        return max(self.roofline_us, self.chain_us)

    @property
    def ratio(self) -> float:
        """Kernel time / the larger bound (>= 1 for a consistent run)."""
        return self.kernel_us / self.bound_us if self.bound_us > 0 else float("inf")

    def summary(self) -> str:
        return (f"kernel {self.kernel_us:.1f} us = {self.ratio:.2f}x the larger bound "
                f"({self.larger}); roofline {self.roofline_us:.1f} us (HBM {self.hbm_us:.1f}, "
                f"cube {self.cube_us:.1f}, vector {self.vector_us:.1f}), chain "
                f"{self.chain_us:.1f} us over {self.chain_tasks} tasks")


def lower_bounds(result: SimResult, spec: MachineSpec | None = None) -> Bounds:
    """Both bounds of `result`; `spec` is the machine it ran on (default: the default
    preset), whose core counts must be the run's."""
    spec = spec if spec is not None else load(None)
    if (spec.aic, spec.aiv) != (result.aic, result.aiv):
        raise PyptoValueError(
            f"lower_bounds: machine '{spec.name}' has {spec.aic} AIC + {spec.aiv} AIV cores but "
            f"the run '{result.kernel}' ran on {result.aic} + {result.aiv}: pass the spec it "
            f"ran on")
    us = result.us
    cube = sum(r.task.cube_cycles for r in result.tasks if r.task.core == "AIC")
    vector = sum(r.task.vector_cycles for r in result.tasks if r.task.core != "AIC")
    nbytes = compulsory_bytes(result, l2_kept(spec.memory))
    chain, length = longest_chain(result)
    return Bounds(kernel_us=us(result.stats["kernel_cycles"]),
                  hbm_us=us(nbytes / spec.memory["hbm_bytes_per_cycle"]),
                  cube_us=us(cube / result.aic), vector_us=us(vector / result.aiv),
                  chain_us=us(chain), chain_tasks=length, compulsory_bytes=nbytes)


# The HBM term's share a schedule-free bound takes: the simulator's reads and writes of one
# task each get a share (`machine/flow.py`), which lets tasks that do both undercut the HBM
# time (until 2026-12 the shares were time averages, which let a burst undercut it by up to
# ~10 %); 0.8 keeps the bound below every run the tests pin.
HBM_SHARE = 0.8


def before_scheduling(tasks: list[SimTask], spec: MachineSpec) -> float:
    """A lower bound (microseconds) of the kernel time of `tasks` on `spec`, from the tasks
    alone, before the (costlier) schedule is simulated: the roofline's cube and vector terms,
    `HBM_SHARE` of its HBM term, and the heaviest dependency path with each task weighing
    its own cube or vector cycles (a task lasts at least those). The tuner skips simulating a
    setting whose bound already exceeds the best time found (`tune/search.py`)."""
    cube = sum(t.cube_cycles for t in tasks if t.core == "AIC")
    vector = sum(t.vector_cycles for t in tasks if t.core != "AIC")
    nbytes = tasks_compulsory_bytes(tasks, l2_kept(spec.memory))
    chain, _ = longest_path(tasks, {t.id: max(t.cube_cycles, t.vector_cycles) for t in tasks})
    cycles = max(cube / spec.aic, vector / spec.aiv, chain,
                 HBM_SHARE * nbytes / spec.memory["hbm_bytes_per_cycle"])
    return cycles / spec.clock_mhz


def compulsory_bytes(result: SimResult, l2_capacity: float) -> float:
    """Unique bytes read from storages no task writes, plus unique bytes written to storages
    no task reads beyond `l2_capacity` (see the module docstring)."""
    return tasks_compulsory_bytes([r.task for r in result.tasks], l2_capacity)


def tasks_compulsory_bytes(tasks: Iterable[SimTask], l2_capacity: float) -> float:
    """`compulsory_bytes` of the tasks themselves, before any schedule."""
    reads: dict[int, set] = defaultdict(set)
    writes: dict[int, set] = defaultdict(set)
    for t in tasks:
        for (sid, offs, ext), layout in zip(t.reads, t.read_layouts):
            reads[sid].add((offs, ext, layout))
        for (sid, offs, ext), layout in zip(t.writes, t.write_layouts):
            writes[sid].add((offs, ext, layout))
    inputs = sum(union_bytes(boxes) for sid, boxes in reads.items() if sid not in writes)
    outputs = sum(union_bytes(boxes) for sid, boxes in writes.items() if sid not in reads)
    return inputs + max(0.0, outputs - l2_capacity)


def union_bytes(boxes: Iterable[tuple]) -> float:
    """Bytes of the union of boxes (offsets, extents, (tensor shape, bytes per element)) of
    one storage, each box cut into its contiguous runs of elements.
    NOTE: a box whose rank is not its layout's (none is known to exist) is left out: the
    bound stays a lower bound."""
    starts: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    itemsize = 0.0
    for offs, ext, (shape, size) in boxes:
        if len(shape) != len(ext) or not all(ext):
            continue
        itemsize = size
        rank = len(ext)
        strides = [1] * rank
        for d in range(rank - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        # dims k.. are one contiguous run: the trailing dims the box covers whole, and dim k
        k = max((d for d in range(rank) if ext[d] != shape[d]), default=0)
        run = ext[k] * strides[k]
        s = np.array([sum(o * st for o, st in zip(offs, strides))], dtype=np.int64)
        for d in range(k):
            s = (s[:, None] + np.arange(ext[d], dtype=np.int64) * strides[d]).ravel()
        starts.append(s)
        lengths.append(np.full(len(s), run, dtype=np.int64))
    if not starts:
        return 0.0
    s = np.concatenate(starts)
    e = s + np.concatenate(lengths)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    covered_to = np.maximum.accumulate(e)
    before = np.concatenate(([s[0]], covered_to[:-1]))
    return float(np.maximum(0, e - np.maximum(s, before)).sum()) * itemsize


def longest_chain(result: SimResult) -> tuple[float, int]:
    """(cycles, tasks) of the longest dependency chain of simulated durations, the windows
    in sequence: the sum over windows of each one's longest path."""
    return longest_path([r.task for r in result.tasks],
                        {r.task.id: r.end - r.start for r in result.tasks})


def longest_path(tasks: list[SimTask], weight: dict[int, float]) -> tuple[float, int]:
    """(weight, tasks) of the heaviest dependency path, each task weighing `weight[id]`, the
    windows in sequence (the sum over windows of each one's heaviest path)."""
    position = {t.id: n for n, t in enumerate(tasks)}
    edges = [(position[p], n) for n, t in enumerate(tasks) for p in t.preds if p in position]
    src, dst = (np.array(e, dtype=np.int64).reshape(-1) for e in zip(*edges)) if edges else \
        (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    total, path = heaviest_path(np.array([weight[t.id] for t in tasks], dtype=float), src, dst,
                                np.array([t.window for t in tasks], dtype=np.int64))
    return total, len(path)


def heaviest_path(weight: np.ndarray, src: np.ndarray, dst: np.ndarray, window: np.ndarray,
                  what: str = "lower_bounds") -> tuple[float, list[int]]:
    """The heaviest dependency path through nodes 0..n-1 (node i weighing `weight[i]`, edge k
    `src[k] -> dst[k]`; edges between windows are left out), the windows in sequence: (the sum
    over windows of each one's heaviest path, its nodes window by window in path order). Of
    paths of equal weight, the one with more nodes. The one definition of the chain: bounds
    reads it from the simulated tasks, the toolkit's `analyses.paths` from a trace's flows.
    A cycle is an error naming `what` (the caller).
    NOTE: Kahn's algorithm one frontier at a time over numpy arrays, so a run costs a numpy
    step per dependency level (windows run side by side), not a Python step per task."""
    n = len(weight)
    same = window[src] == window[dst]
    src, dst = src[same], dst[same]
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    ptr = np.searchsorted(src, np.arange(n + 1))
    waiting = np.bincount(dst, minlength=n)
    into = np.zeros(n)                      # the heaviest path into each node so far
    into_count = np.zeros(n, dtype=np.int64)
    via = np.full(n, -1, dtype=np.int64)
    best = weight.astype(float).copy()
    count = np.ones(n, dtype=np.int64)
    frontier = np.flatnonzero(waiting == 0)
    done = 0
    while len(frontier):
        done += len(frontier)
        best[frontier] = into[frontier] + weight[frontier]
        count[frontier] = into_count[frontier] + 1
        lo, hi = ptr[frontier], ptr[frontier + 1]
        sizes = hi - lo
        if not sizes.sum():
            break
        edge = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        a, b = src[edge], dst[edge]
        pick = np.lexsort((-a, count[a], best[a], b))          # per target its best last
        last = np.r_[b[pick][1:] != b[pick][:-1], True]
        a_top, b_top = a[pick][last], b[pick][last]
        better = (best[a_top] > into[b_top]) | ((best[a_top] == into[b_top]) &
                                                (count[a_top] > into_count[b_top]))
        a_top, b_top = a_top[better], b_top[better]
        into[b_top], into_count[b_top], via[b_top] = best[a_top], count[a_top], a_top
        waiting -= np.bincount(b, minlength=n)
        touched = np.unique(b)
        frontier = touched[waiting[touched] == 0]
    if done != n:
        raise PyptoValueError(f"{what}: the dependencies have a cycle ({n - done} tasks on or "
                              f"after it)")
    nodes = np.arange(n)
    pick = np.lexsort((-nodes, count, best, window))          # per window its top last
    tops = pick[np.r_[window[pick][1:] != window[pick][:-1], True]] if n else pick
    path: list[int] = []
    for top in tops.tolist():
        chain = [top]
        while via[chain[-1]] >= 0:
            chain.append(int(via[chain[-1]]))
        path += chain[::-1]
    return float(sum(best[tops].tolist())), path
