"""GM workspace of the stitched windows (compiler_runtime.md §5.6), and its budget.

Every stitched instance has its own copy of the intermediates (temps) it writes, so a window
needs the sum of its instances' copies, plus the `pypto.tensor` scratch it writes (one copy:
it is real memory shared by the instances). Kernel parameters are the caller's memory, not
workspace. With a budget (`max_workspace_kb`, PyPTO's memory-driven stitch) a window takes
instances while they fit; an instance that alone needs more than the budget, or a window that
needs more than the device's HBM, is an error naming the knob to change.
"""
from __future__ import annotations

from pypto.errors import PyptoRuntimeError
from pypto.machine.result import SimTask

Box = tuple[int, tuple[int, ...], tuple[int, ...]]


def box_bytes(acc: Box, itemsize: float) -> int:
    n = 1
    for e in acc[2]:
        n *= e
    return int(n * itemsize)


class WorkspaceMeter:
    """Bytes of workspace per window, measured instance by instance as tasks are stitched."""

    def __init__(self, temps: frozenset[int], scratch: frozenset[int],
                 budget: int | None = None, device_bytes: int | None = None):
        self.temps, self.scratch = temps, scratch
        self.metered = temps | scratch      # the storages whose written boxes count
        self.budget = budget or None
        self.device_bytes = device_bytes
        self.windows: list[int] = []        # bytes of every closed window
        self._window = 0                    # bytes of the instances accepted into this window
        self._scratch: set[Box] = set()     # scratch boxes this window already counts
        self._own: dict[Box, int] = {}      # the open instance: its copies of temps
        self._new_scratch: dict[Box, int] = {}

    def add(self, task: SimTask) -> None:
        """Count the boxes `task` (of the open instance) writes."""
        for acc, layout in zip(task.writes, task.write_layouts):
            self.add_box(acc, layout[1])

    def add_box(self, acc: Box, itemsize: float) -> None:
        """Count one box the open instance writes (only `metered` storages count)."""
        if acc[0] in self.temps:
            self._own[acc] = box_bytes(acc, itemsize)
        elif acc[0] in self.scratch and acc not in self._scratch:
            self._new_scratch[acc] = box_bytes(acc, itemsize)

    def end_instance(self, root: str) -> bool:
        """Close the open instance: True if it fits in the window (it is counted), False if
        the budget sends it to a new window (it is dropped; add its tasks again there)."""
        need = sum(self._own.values()) + sum(self._new_scratch.values())
        fits = self.budget is None or self._window + need <= self.budget
        if fits:
            self._window += need
            self._scratch.update(self._new_scratch)
        elif self._window == 0:
            raise PyptoRuntimeError(
                f"runtime_options max_workspace_kb={self.budget // 1024}: one instance of root "
                f"function '{root}' needs {_kib(need)} of workspace (its own copy of the "
                f"intermediates it writes), more than the budget; raise max_workspace_kb, or "
                f"use smaller tiles or fewer unrolled iterations in that loop")
        self._own, self._new_scratch = {}, {}
        return fits

    @property
    def counted_scratch(self) -> set[Box]:
        """The scratch boxes the open window counts so far (a set of its own: closing the
        window starts a new one)."""
        return self._scratch

    def close_window(self, check: bool = True) -> None:
        """Close the open window; `check`: against the device's HBM now (not when instances
        of it are counted later: `add_settled` checks it then)."""
        if check:
            self._check(len(self.windows), self._window)
        self.windows.append(self._window)
        self._window = 0
        self._scratch = set()

    def add_settled(self, first: int, window_bytes: dict[int, int],
                    scratch: dict[int, dict[Box, int]], seen: set[Box]) -> None:
        """Count instances whose boxes are known only after their windows were opened, maybe
        closed (`Stitcher.begin_deferred`), the first in window `first`: their own copies'
        bytes and the scratch boxes they write, per window; `seen`: the scratch boxes window
        `first` counted before them. The windows closed since `first` are checked now."""
        for w in sorted(set(window_bytes) | set(scratch)):
            new = {box: b for box, b in scratch.get(w, {}).items()
                   if not (w == first and box in seen)}
            total = window_bytes.get(w, 0) + sum(new.values())
            if w < len(self.windows):
                self.windows[w] += total
            else:
                self._window += total
                self._scratch.update(new)
        for w in range(first, len(self.windows)):
            self._check(w, self.windows[w])

    def _check(self, window: int, nbytes: int) -> None:
        if self.device_bytes is not None and nbytes > self.device_bytes:
            raise PyptoRuntimeError(
                f"NPU out of memory: stitch window {window} needs {_kib(nbytes)} "
                f"of workspace (a copy of each instance's intermediates), more than the "
                f"device's {_kib(self.device_bytes)} of HBM; lower runtime_options "
                f"stitch_function_max_num or set max_workspace_kb")


def _kib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 1024:.1f} KiB"
