"""Fidelity rows #12 and #13 (compiler_runtime.md §6.1): the GDN triangular inverse ALONE.

The guide (PyPTO's Gated DeltaNet case study, §3.4) times the inverse of one [128, 128]
chunk tile (B = 1, T = 128, H = 1) by its row-update tasks: 8 x [16, 16] blocks at 22 us each
vs 2 x [16, 64] tail-concatenated blocks at 62 us each (#12: 8*22 / (2*62) = 1.42), and
8 x 28 us vs one [16, 128] block with the state resident in UB at 49 us (#13: 4.57). So the
quantity compared is the SUMMED duration of the inverse's own row-update tasks (their AIV
time), not the kernel's wall time: `examples/models/gated_deltanet.py` `run_inverse(form)` runs
the inverse-only kernel, `inverse_time_us` sums its "row_inverse" tasks.

Use from benchmarks/fidelity.py (hardware_rows):

    from fidelity_gdn import gdn_inverse_rows
    kernels += gdn_inverse_rows(ratio)

where `ratio(case, setup, ours, published, mechanism, note)` is hardware_rows' helper.
"""
from __future__ import annotations

from typing import Callable

MECHANISM = "per-instruction vector cost (issue + repeats + sync per instruction; " \
            "broadcast operands expanded, column sums folded pairwise) + task head"


def gdn_inverse_times() -> dict[str, tuple[int, float, object]]:
    """form -> (row-update tasks, their summed duration in us, the kernel) for the three forms
    of the guide: "16x16" (8 blocks), "16x64" (2), "16x128" (1)."""
    import models   # benchmarks/models.py: imports examples/models/ modules
    gdn = models._module("gated_deltanet")
    out = {}
    for form in gdn.INVERSE_FORMS:
        kernel = gdn.run_inverse(form, check=False)
        tasks, us = gdn.inverse_time_us(kernel)
        out[form] = (tasks, us, kernel)
    return out


def gdn_inverse_rows(ratio: Callable) -> list:
    """Add rows #12 and #13 through `ratio`; returns the three kernels."""
    t = gdn_inverse_times()
    note = "the inverse alone (B=1, T=128, H=1: one [128,128] chunk), summed durations of its " \
           "row-update tasks: " + ", ".join(f"{n} x [{f.replace('x', ',')}] {us / n:.1f} us"
                                           for f, (n, us, _) in t.items())
    ratio("#12", "GDN inverse 8 x [16,16] / 2 x [16,64] blocks (summed task time)",
          t["16x16"][1] / t["16x64"][1], 8 * 22 / (2 * 62), MECHANISM,
          note + "; the guide's [16,64] blocks also paid UB in/out copies ('below "
          "expectation'), which our kernel does not have")
    ratio("#13", "GDN inverse 8 x [16,16] / one [16,128] block (summed task time)",
          t["16x16"][1] / t["16x128"][1], 8 * 28 / 49, MECHANISM, note)
    return [k for *_, k in t.values()]


if __name__ == "__main__":
    rows = []

    def _ratio(case, setup, ours, published, mechanism, note=""):
        rows.append((case, setup, ours, published))
        print(f"{case} {setup}: ours {ours:.2f} vs {published:.2f} "
              f"({ours / published:.2f}x, {'within' if abs(ours / published - 1) <= .3 else 'OUT'})")

    gdn_inverse_rows(_ratio)
