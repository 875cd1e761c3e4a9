"""GM bandwidth shared as it happens: processor sharing over the tasks running (the fluid model).

HBM and L2 bandwidth are shared by the transfers in flight (hw_model §5, "L1 shared
bandwidth": one server, processor sharing). Each non-empty task running counts as one sharer
from its begin to its end, whatever its traffic: while n run, each gets 1/n of HBM and of L2
(`timing.busy_cycles` adds the per-core DMA caps on top). A task's busiest pipe progresses at
the rate its current share gives; whenever a task begins or ends, every other running task whose
busiest pipe would take a different time at the new share is re-timed: the fraction of its
busiest pipe still to do is kept, and that fraction of the new pipe time is left. Its head and
first-load latency come before the busiest pipe, its last-store latency after it; neither
depends on the share.

Why this form: a task's duration fixed at its dispatch made a burst's timing depend on dispatch
order (the first tasks of a burst saw nobody and kept the whole bandwidth; a task dispatched
among many kept 1/50 of HBM after they had ended). The two-pass time average that replaced it
(until 2026-12) needed two simulations per run. This is the fluid model itself, in one pass.

`Flows` holds one window's running set and each task's progress; the window's event loop asks
it for the new ends (`simulate.ModelWindow`). Keeps: the running set iterates in the order the
tasks began, so re-timed ends are raised in an order the compiled core reproduces.
"""
from __future__ import annotations

from pypto.machine.timing import CoreTiming, TaskTerms, busy_cycles


class Flows:
    """The running non-empty tasks of one window and how far each is through its busiest pipe.

    Per task position i: `pipe[i]`, the arguments of `timing.busy_cycles` but the shares;
    `busy[i]`, its busiest pipe's time at the share it has now; `left[i]`, the fraction of
    that pipe still to do as of `mark[i]` (the time its pipe starts, until it has started);
    `tail[i]`, the last-store latency after the pipe."""

    def __init__(self, n: int, hbm_bw: float, l2_bw: float, most: int):
        """`most`: the most tasks that can run at once (one per core, and one more)."""
        self.hbm_bw, self.l2_bw, self.most = hbm_bw, l2_bw, most
        self.running: dict[int, None] = {}    # in the order they began
        self.fixed = [False] * n              # its pipe takes the same time at any share
        self.pipe: list[tuple | None] = [None] * n
        self.busy = [0.0] * n
        self.left = [1.0] * n
        self.mark = [0.0] * n
        self.tail = [0.0] * n

    def busy_at(self, i: int, sharers: int) -> float:
        """Task i's busiest pipe time while `sharers` tasks (itself included) run."""
        terms, core, hit, hbm, has_out, write_back = self.pipe[i]
        return busy_cycles(terms, core, hit, hbm, has_out, write_back,
                           self.hbm_bw / sharers, self.l2_bw / sharers)

    def join(self, i: int, now: float, lead: float, tail: float,
             pipe: tuple[TaskTerms, CoreTiming, float, float, bool, bool]) -> list[int]:
        """Task i begins at `now`: the tasks re-timed (i last), whose `end` is `end_of`."""
        self.pipe[i], self.tail[i], self.mark[i] = pipe, tail, now + lead
        retimed = self._share(now, len(self.running) + 1)
        self.running[i] = None
        self.busy[i] = self.busy_at(i, len(self.running))
        # NOTE: each term of the pipe time only grows as the share shrinks, so a pipe as long
        # with one sharer as with the most there can be is as long with any count between:
        # it never needs re-timing (a compute-bound task, or one whose moves stay under the
        # per-core caps)
        self.fixed[i] = self.busy_at(i, 1) == self.busy_at(i, self.most) == self.busy[i]
        retimed.append(i)
        return retimed

    def leave(self, i: int, now: float) -> list[int]:
        """Task i ends at `now`: the tasks re-timed."""
        del self.running[i]
        return self._share(now, len(self.running)) if self.running else []

    def end_of(self, i: int) -> float:
        """When task i ends at its current share: its pipe's start (or the last re-time) +
        what is left of the pipe + the last-store latency."""
        return self.mark[i] + self.left[i] * self.busy[i] + self.tail[i]

    def _share(self, now: float, sharers: int) -> list[int]:
        """Re-time the running tasks for `sharers` from `now` on."""
        retimed = []
        busy, left, mark = self.busy, self.left, self.mark
        for j in self.running:
            if self.fixed[j]:
                continue
            new = self.busy_at(j, sharers)
            if new == busy[j]:
                continue
            if now > mark[j]:   # its pipe has run since `mark`, at the old share
                rest = left[j] - (now - mark[j]) / busy[j]
                if rest <= 0.0:   # its pipe is done: only the last store is left
                    continue
                left[j], mark[j] = rest, now
            busy[j] = new
            retimed.append(j)
        return retimed
