"""How fast `pypto-toolkit calibrate` re-times a kernel: one evaluation's paths side by side.

    python benchmarks/calibration_speed.py [--size full|reduced] [--out benchmarks/results]

Per kernel, best of three, within this one run:
- `retime`: `kernel.retimed` alone (the call on a machine table, its compiled program kept);
- `via trace`: retime, then our trace written and parsed back (`KernelCall.trace_on`) and read
  as `RunTimes` (how calibration read a run before `RunTimes.of_result`);
- `direct`: retime read straight from the simulated run (`KernelCall.times_on`, what each
  evaluation does now);
and `via trace / direct`, the ratio the change bought. Kernels: the five of
`examples/calibration/kernels.py`, and gated DeltaNet (full size: 14k tasks; reduced: its
test size).
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "calibration"))
sys.path.insert(0, str(ROOT / "tests" / "examples"))

from pypto.calibration.run_times import RunTimes  # noqa: E402
from pypto.calibration.runs import KernelCall  # noqa: E402
from pypto.machine.spec import table  # noqa: E402


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def calls(size: str) -> list[KernelCall]:
    import kernels
    from _models import load_model
    out = [KernelCall(k.__name__, k, k.last) for k in kernels.run_all()]
    gdn = load_model("gated_deltanet")
    cfg = gdn.FULL if size == "full" else gdn.REDUCED
    k = gdn.run(cfg, check=False)
    out.append(KernelCall(f"gated_deltanet ({size})", k, k.last))
    return out


def measure(call: KernelCall, machine: dict) -> dict:
    call.times_on(machine)   # warm: the task keys are found once per call
    return {"kernel": call.name, "tasks": len(call.record.run.tasks),
            "retime_s": _best(lambda: call.run_on(machine)),
            "via_trace_s": _best(lambda: RunTimes.of_trace(call.trace_on(machine))),
            "direct_s": _best(lambda: call.times_on(machine))}


def markdown(rows: list[dict], size: str) -> str:
    lines = [f"# Calibration: one evaluation per kernel ({size}, "
             f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores)", "",
             "| kernel | tasks | retime ms | via trace ms | direct ms | via trace / direct |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['tasks']} | {1e3 * r['retime_s']:.1f} | "
                     f"{1e3 * r['via_trace_s']:.1f} | {1e3 * r['direct_s']:.1f} | "
                     f"{r['via_trace_s'] / r['direct_s']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("full", "reduced"), default="full")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    machine = table("a2a3")
    rows = [measure(c, machine) for c in calls(args.size)]
    text = markdown(rows, args.size)
    os.makedirs(args.out, exist_ok=True)
    path = Path(args.out) / f"{datetime.datetime.now():%Y-%m-%d_%H%M}_calibration_{args.size}.md"
    path.write_text(text)
    print(text + f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
