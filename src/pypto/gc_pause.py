"""Pausing Python's cyclic garbage collector around allocation-heavy phases.

Executing, stitching and writing a run allocate some 10^5 small acyclic records (tasks,
windows, accesses, events, strings) next to a large live task graph; every allocation burst
triggers collections that re-walk the live objects, which cost more than the work itself (a
fifth of the glm kernel's run, a quarter of its write). Reference counting still frees
everything; the collector resumes, if it was on, when the phase ends and then collects any
cycle made meanwhile.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
