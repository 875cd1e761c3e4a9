"""Simulator throughput: synthetic stitched task graphs of 1k to 1M tasks.

Builds chains of dependent AIV tasks (one instance = 8 tasks in a chain of 4 + 4 independent
ones) without running numerics, then times `machine.simulate` and reports simulated tasks per
second and the process's peak resident memory. Target (issue 4): 100k tasks in < 1 s.

    python benchmarks/simulator_scaling.py [--max 100000]
"""
from __future__ import annotations

import argparse
import resource
import time

from pypto.machine.result import SimTask
from pypto.machine.simulate import simulate
from pypto.machine.spec import load


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100_000)
    args = parser.parse_args()
    spec = load("a2a3")
    print(f"{'tasks':>9} {'seconds':>8} {'tasks/s':>10} {'peak MB':>8} {'sim us':>10}")
    n = 1000
    while n <= args.max:
        tasks = synthetic(n)
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
