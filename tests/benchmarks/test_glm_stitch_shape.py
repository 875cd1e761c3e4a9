"""Issue 15's stitch criteria on glm attention at 2,048 root instances (batch 8, 8 KV heads,
16k cache; timing only, a few seconds a run): the kernel time does not rise from stitch 1 to
512, and the end-to-end time as the host sees it is U-shaped (the guide, §6.1 #1-#2: kernel
1230 -> 180 -> 150 us, E2E 1590 -> 803 -> 977 us). The same rows are in the fidelity table
(benchmarks/fidelity.py)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _glm():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import models   # benchmarks/models.py: imports examples/models/ modules
    return models._module("glm_attention")


def test_kernel_non_increasing_and_e2e_u_shaped_at_2048_instances():
    g = _glm()
    args = g.inputs(g.FULL)
    kernel, e2e = [], []
    for stitch in (1, 4, 16, 128, 512):
        k = g.build(stitch, g.Tiles(), "blocks_outer")
        k.runtime_options["numerics"] = "timing_only"
        k(*args)
        st = k.last_run.stats
        assert st["instances"] == 2048
        kernel.append(st["kernel_cycles"])
        e2e.append(st["host_e2e_cycles"])
    assert all(a >= b for a, b in zip(kernel, kernel[1:])), kernel
    low = e2e.index(min(e2e))
    assert 0 < low < len(e2e) - 1, e2e
