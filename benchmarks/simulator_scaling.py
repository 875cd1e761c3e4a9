"""Simulator throughput: synthetic stitched task graphs of 1k to 1M tasks.

Builds chains of dependent AIV tasks (one instance = 8 tasks in a chain of 4 + 4 independent
ones) without running numerics, then times `machine.simulate` and reports simulated tasks per
second and the process's peak resident memory. Target (issue 27): the compiled core >= 1M
tasks/s, 1M tasks in <= 1.5 s and <= 1 GB; `--core python` times the Python model.

    python benchmarks/simulator_scaling.py [--max 100000] [--core compiled|python]
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from pypto.machine.result import SimTask
from pypto.machine.simulate import simulate
from pypto.machine.spec import load
from pypto.machine.task_table import TaskTable


def synthetic(n_tasks: int, stitch: int = 128) -> list[SimTask]:
    tasks = []
    per_instance = 8
    for i in range(n_tasks):
        instance, call = divmod(i, per_instance)
        window, inst_in_window = divmod(instance, stitch)
        t = SimTask(i, window, inst_in_window, "root", 0, call, "leaf0", 0, "AIV",
                    mte2_bytes=32768, vector_cycles=600, mte3_bytes=32768)
        if call % 4:
            t.preds.append(i - 1)
        t.reads.append((1, (instance, call), (1, 8192)))
        t.read_layouts.append(((n_tasks, 8), 4))
        tasks.append(t)
    return tasks


def synthetic_table(n_tasks: int, stitch: int = 128) -> TaskTable:
    """`synthetic(n_tasks, stitch)` made as columns in bulk (numpy), as a stitcher that
    instantiates by offsets hands them to the compiled core: no per-task object."""
    i = np.arange(n_tasks, dtype=np.int64)
    instance, call = np.divmod(i, 8)
    window, in_window = np.divmod(instance, stitch)
    chained = call % 4 != 0
    pred_ptr = np.zeros(n_tasks + 1, np.int64)
    np.cumsum(chained, out=pred_ptr[1:])
    one = np.ones(n_tasks, np.int64)
    zero = np.zeros(n_tasks, np.int64)
    columns = {
        "n": n_tasks, "id": i, "window": window, "instance": in_window,
        "kind": np.ones(n_tasks, np.int8), "empty": np.zeros(n_tasks, np.uint8),
        "mte2_bytes": np.full(n_tasks, 32768.0), "mte3_bytes": np.full(n_tasks, 32768.0),
        "vector_cycles": np.full(n_tasks, 600.0),
        **{k: np.zeros(n_tasks) for k in ("mte2_moved", "mte3_moved", "mte1_cycles",
                                          "cube_cycles", "fix_cycles")},
        "pred_ptr": pred_ptr, "preds": i[chained] - 1,
        # one read per task: (storage 1, (instance, call), (1, 8192)) of an [n, 8] FP32 tensor
        "read_ptr": np.arange(n_tasks + 1, dtype=np.int64), "read_storage": one,
        "read_itemsize": np.full(n_tasks, 4.0), "read_uncached": np.zeros(n_tasks, np.uint8),
        "read_dim_ptr": np.arange(0, 2 * n_tasks + 1, 2, dtype=np.int64),
        "read_offs": np.stack((instance, call), 1).ravel(),
        "read_ext": np.stack((one, one * 8192), 1).ravel(),
        "read_shape": np.stack((one * n_tasks, one * 8), 1).ravel(),
        "write_ptr": np.zeros(n_tasks + 1, np.int64), "write_storage": zero[:0],
        "write_itemsize": np.zeros(0), "write_uncached": np.zeros(0, np.uint8),
        "write_dim_ptr": np.zeros(1, np.int64), "write_offs": zero[:0], "write_ext": zero[:0],
        "write_shape": zero[:0],
        "root_code": zero, "leaf_code": zero, "label_code": zero,
    }
    return TaskTable(columns, {"root": ["root"], "leaf": ["leaf0"], "label": [""]})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100_000)
    parser.add_argument("--core", choices=["compiled", "python"], default="compiled",
                        help="compiled: the compiled core on columns made in bulk; python: "
                             "the Python model on SimTasks")
    args = parser.parse_args()
    os.environ["OPENPTO_SIM"] = args.core
    spec = load("a2a3")
    print(f"{'tasks':>9} {'seconds':>8} {'tasks/s':>10} {'peak MB':>8} {'sim us':>10}")
    n = 1000
    while n <= args.max:
        tasks = synthetic_table(n) if args.core == "compiled" else synthetic(n)
        start = time.perf_counter()
        result = simulate(tasks, spec, "synthetic")
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{n:9d} {seconds:8.2f} {n / seconds:10.0f} {peak:8.1f} "
              f"{result.stats['kernel_cycles'] / spec.clock_mhz:10.1f}")
        n *= 10
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
