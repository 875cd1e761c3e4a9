"""Scoped single-threaded BLAS for the tile executor.

Takes nothing → a context manager. Keeps: the caller's BLAS thread count is restored on exit;
where the BLAS cannot be found (not numpy's bundled OpenBLAS) it does nothing.

Why: the tile executor runs thousands of tile-sized matmuls (e.g. 24x512 @ 512x128). OpenBLAS
splits each over all cores; on a busy 2-core machine its threads wait for each other and one
such product took 4.2 ms instead of 51 us single-threaded (benchmarks/run.py, glm-attention
case). Whole-tensor matmuls (the reference executor) keep the caller's setting.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os
from typing import Iterator

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")
_api: tuple | None | bool = False   # False: not looked up yet; None: not available


def _lookup() -> tuple | None:
    import numpy
    root = os.path.dirname(os.path.dirname(numpy.__file__))
    for path in sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)   # already loaded by numpy: the same library instance
        except OSError:
            continue
        for set_name, get_name in zip(_SETTERS, _GETTERS):
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                return getattr(lib, set_name), getattr(lib, get_name)
    return None


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    global _api
    if _api is False:
        _api = _lookup()
    if _api is None or os.environ.get("OPENPTO_BLAS_THREADS") == "keep":
        yield
        return
    set_threads, get_threads = _api
    before = get_threads()
    set_threads(1)
    try:
        yield
    finally:
        set_threads(before)
