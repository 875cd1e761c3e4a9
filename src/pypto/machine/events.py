"""The event core of the simulator: a `(time, seq, event)` heap (SimPy's loop, minus processes).

Keeps: events run in (time, order scheduled) order, so two events at one time never run in an
order left to chance, and a run is deterministic by construction.
"""
from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable


class EventQueue:
    """Future events; `now` is the time of the event being handled."""

    def __init__(self, now: float = 0.0):
        self.now = now
        self._heap: list[tuple[float, int, Any]] = []
        self._seq = itertools.count()

    def schedule(self, time: float, event: Any) -> None:
        heapq.heappush(self._heap, (time, next(self._seq), event))

    def step(self) -> Any:
        """Advance `now` to the next event and return it."""
        self.now, _, event = heapq.heappop(self._heap)
        return event

    def run(self, handle: Callable[[Any], None]) -> None:
        """Handle events until none is left (a handler may schedule more)."""
        while self._heap:
            handle(self.step())
