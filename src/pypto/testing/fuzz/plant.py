"""Planted faults on fuzz cases: proof that the executors' cross-check catches real bugs.

For one valid case (its script loaded as a module) and each fault kind of
`pypto.testing.faults`: run the kernel's first call on the tile executor clean and with the
fault planted; where an output changed, run the checked mode (OPENPTO_CHECK_EXECUTORS=1) with
the same fault planted. A fault that made an output wrong (the case's own torch golden rejects
it) must be flagged. Outcomes per kind:

    caught        an output changed and the cross-check reported the disagreement
    missed        the output was wrong and the cross-check passed it: its bounds are too loose
    harmless      an output changed within its bounds and is still right by the golden (a
                  wrong max in a softmax: m cancels in exp(x - m) / sum(exp(x - m)))
    invisible     planted, but no output changed (a tile whose values were masked later)
    not_planted   no tile of the kernel qualified for this kind
"""
from __future__ import annotations

import os

import numpy as np

from pypto.testing.faults import KINDS, Fault, planted

OUTCOMES = ("caught", "missed", "harmless", "invisible", "not_planted")
_CHECK = "OPENPTO_CHECK_EXECUTORS"


def _outputs(mod, fault: Fault | None) -> list:
    """The arguments of the case's first call after it ran on the tile executor alone."""
    args = mod.make_args(0)
    os.environ[_CHECK] = "0"
    if fault is None:
        mod.run_kernels(args)
    else:
        with planted(fault):
            mod.run_kernels(args)
    return args


def _wrong(mod, args: list) -> bool:
    """Whether the case's golden rejects an output of the call (in the script's own terms)."""
    import torch
    wide = [t.to(torch.int64) if t.dtype == torch.int32 else t.to(torch.float64)
            for t in mod.make_args(0)]
    want = mod.golden(*wide)
    bounds = mod.bounds_of(0)
    return any(mod.COMPARE(name, got, want[name], dt, bounds[name])
               for (name, dt, role, _, _), got in zip(mod.PARAMS, args) if role == "out")


def _as_float(t) -> np.ndarray:
    import torch
    return t.to(torch.float64).numpy()


def _changed(clean: list, faulty: list) -> bool:
    return any(not np.array_equal(_as_float(a), _as_float(b), equal_nan=True)
               for a, b in zip(clean, faulty))


def plant(mod, kinds=KINDS) -> dict[str, tuple[str, str]]:
    """{kind: (outcome, what was planted or why it was missed)} for a loaded case module
    (OPENPTO_CHECK_EXECUTORS as it was before, afterwards)."""
    saved = os.environ.get(_CHECK)
    try:
        return _plant(mod, kinds)
    finally:
        os.environ.pop(_CHECK, None)
        if saved is not None:
            os.environ[_CHECK] = saved


def _plant(mod, kinds) -> dict[str, tuple[str, str]]:
    import pypto
    mod.RUNTIME.pop("executor", None)
    try:
        clean = _outputs(mod, None)
    except pypto.PyptoError:   # a kernel that must raise (an invalid one): nothing to spoil
        return {kind: ("not_planted", "the kernel raises") for kind in kinds}
    out = {}
    for kind in kinds:
        fault = Fault(kind)
        faulty = _outputs(mod, fault)
        if not fault.applied:
            out[kind] = ("not_planted", "")
            continue
        if not _changed(clean, faulty):
            out[kind] = ("invisible", fault.applied)
            continue
        os.environ[_CHECK] = "1"
        try:
            with planted(Fault(kind)):
                mod.run_kernels(mod.make_args(0))
        except pypto.PyptoError as exc:
            if "disagree" in str(exc):
                out[kind] = ("caught", fault.applied)
                continue
            raise
        finally:
            os.environ[_CHECK] = "0"
        out[kind] = ("missed" if _wrong(mod, faulty) else "harmless", fault.applied)
    return out
