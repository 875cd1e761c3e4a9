"""Timelines depend on shapes and options only, never on the CPU; numerics may differ between
CPUs by their error bounds and nothing more. Checked by running one kernel on numpy's default
paths and again with its AVX-512 paths switched off (pypto.testing.cpu_path)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from pypto.testing.cpu_path import avx512_paths

SCRIPT = r'''
import json
import numpy as np, torch
import pypto
from pypto.runtime import error_bounds
from pypto.testing.cpu_path import active_paths


@pypto.frontend.jit
def k(q: pypto.Tensor([64, 64], pypto.DT_FP32), kv: pypto.Tensor([256, 64], pypto.DT_FP32),
      out: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [32, 32], [64, 64])
    s = pypto.matmul(q, kv, pypto.DT_FP32, b_trans=True)
    pypto.set_vec_tile_shapes(16, 64)
    e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
    p = pypto.cast(e / pypto.sum(e, dim=-1, keepdim=True), pypto.DT_BF16)
    pypto.set_cube_tile_shapes([32, 64], [64, 64], [64, 64])
    out[:] = pypto.matmul(p, pypto.cast(kv, pypto.DT_BF16), pypto.DT_FP32)


g = torch.Generator().manual_seed(11)
q, kv = torch.randn(64, 64, generator=g), torch.randn(256, 64, generator=g)
out = torch.zeros(64, 64)
k(q, kv, out)
exact = k.last_run.digest()
with pypto.options(runtime_options={"numerics": "timing_only"}):
    k(q, kv, torch.zeros(64, 64))
timing = k.last_run.digest()
plan = k.last_executor.plan
arrays = {p.value.storage.id: a.numpy().copy() for p, a in
          zip(plan.program.params, (q, kv, torch.zeros(64, 64)))}
bound = error_bounds.bound_run(plan, {}, arrays).of(plan.program.params[2].value.storage.id)
print(json.dumps({"paths": active_paths(), "exact": exact, "timing": timing,
                  "out": out.numpy().tolist(), "bound": bound.tolist()}))
'''


def _run(extra_env: dict) -> dict:
    env = dict(os.environ, **extra_env)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_timeline_and_numerics_on_numpys_avx2_path_match_its_default_path():
    paths, why = avx512_paths()
    if not paths:
        pytest.skip(why)
    default = _run({})
    avx2 = _run({"NPY_DISABLE_CPU_FEATURES": " ".join(paths)})
    assert set(paths) <= set(default["paths"])
    assert not set(paths) & set(avx2["paths"])        # the second run really switched paths
    assert default["exact"] == avx2["exact"]          # timelines: bit for bit
    assert default["timing"] == default["exact"] == avx2["timing"]
    # numerics: each is a faithful execution, within the other's bound of its reference
    a, b = np.array(default["out"]), np.array(avx2["out"])
    bound = np.array(default["bound"]) + np.array(avx2["bound"])
    assert (np.abs(a - b) <= bound).all()
