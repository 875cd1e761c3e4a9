"""Pausing Python's cyclic garbage collector around allocation-heavy runtime phases.

The executor and the stitcher allocate some 10^5 small acyclic records (tasks, windows,
accesses) next to a large live task list; every cyclic-collector pass walks all of it and
cost more than the work itself (a fifth of the glm kernel's run). Reference counting still
frees everything; the collector resumes, if it was on, when the phase ends.
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
