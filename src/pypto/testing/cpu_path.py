"""Which SIMD paths numpy takes on this CPU, and how to make it take another.

numpy picks its vectorised loops at import time from the CPU's features (AVX-512, AVX2, ...),
and float32 results of library functions and reductions may differ in the last bits from one
path to another. Switching the AVX-512 paths off (`NPY_DISABLE_CPU_FEATURES`) makes an AVX-512
machine run the AVX2 paths an older CPU would, so a test suite can check on one machine that
numerics and timelines hold on both.

`python -m pypto.testing.cpu_path` prints the value of NPY_DISABLE_CPU_FEATURES that does it
(the AVX-512 targets numpy dispatches to and this CPU has), or nothing, with the reason on
stderr, where there is nothing to switch off.
"""
from __future__ import annotations

import os
import sys


def _numpy_features() -> tuple[dict, list, list]:
    try:
        from numpy._core import _multiarray_umath as umath    # numpy >= 2
    except ImportError:                                        # pragma: no cover - numpy 1.x
        from numpy.core import _multiarray_umath as umath
    return (umath.__cpu_features__, list(umath.__cpu_dispatch__),
            list(umath.__cpu_baseline__))


def _is_avx512(name: str) -> bool:
    # numpy 2.3+ groups them as X86_V4 (and AVX512_ICL, _SPR); older releases name AVX512F,
    # AVX512_SKX, AVX512_CLX, ... one by one
    return name.startswith("AVX512") or name == "X86_V4"


def avx512_paths() -> tuple[list[str], str]:
    """(the AVX-512 dispatch targets this CPU supports, why the list is empty if it is)."""
    features, dispatch, baseline = _numpy_features()
    if any(_is_avx512(b) for b in baseline):
        return [], "this numpy is built with AVX-512 as its baseline: it cannot be switched off"
    paths = [d for d in dispatch if _is_avx512(d) and features.get(d)]
    if not paths and any(_is_avx512(f) for f in
                         os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()):
        return [], "NPY_DISABLE_CPU_FEATURES has switched numpy's AVX-512 paths off already"
    if not paths:
        return [], ("this CPU has no AVX-512 path for numpy to switch off: numpy already runs "
                    "its AVX2 (or non-x86) paths here")
    return paths, ""


def active_paths() -> list[str]:
    """The dispatch targets numpy uses in this process (after NPY_DISABLE_CPU_FEATURES)."""
    features, dispatch, _ = _numpy_features()
    return [d for d in dispatch if features.get(d)]


def main() -> int:
    paths, why = avx512_paths()
    if paths:
        print(" ".join(paths))
    else:
        print(why, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
