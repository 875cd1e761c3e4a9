"""A long differential-fuzzing campaign (issue 13): random kernels through the tile executor,
the reference executor and the checked mode against the torch float64 golden, then the
timeline properties of each passing kernel (issue 31: timing-only and what-if runs give the
exact run's timeline). With --plant, each fault kind of pypto.testing.faults is planted in
every kernel instead, and the cross-check must flag every wrong result.

Records kernels/s and the outcome counts (overall and per family) to
benchmarks/results/<date>_fuzz.{json,md}; minimized failing cases are saved under
benchmarks/results/fuzz_cases/ (only when there are failures).

    python benchmarks/fuzz_campaign.py [--count 10000] [--jobs 2] [--seed 0] [--timeout 10]
        [--families a,b] [--plant]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from pypto.testing.fuzz import FAMILIES, run_batch
from pypto.testing.fuzz.campaign import FAILURES

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def markdown(data: dict, stamp: str) -> str:
    lines = [f"# Fuzz campaign {stamp}", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; load average at start {data['load'][0]:.2f}, "
             f"at end {data['load'][1]:.2f}.", "",
             f"Seed {data['seed']}, {data['count']} kernels, {data['jobs']} job(s), timeout "
             f"{data['timeout']:g} CPU s per kernel: {data['seconds']:.0f} s, "
             f"**{data['kernels_per_s']:.2f} kernels/s** (each kernel: trace, compile, "
             + ("its first call clean, then with each fault kind planted, alone and checked)."
                if data.get("planted") else "three executions of every call, then the timeline "
                "properties of its last call).")
             + (f" Families: {', '.join(data['families'])}." if data.get("families") else ""),
             "",
             "| outcome | kernels |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in data["outcomes"].items()]
    kinds = list(data["outcomes"])
    lines += ["", "| family | " + " | ".join(kinds) + " |",
              "|---|" + "---:|" * len(kinds)]
    for fam, counts in data["by_family"].items():
        lines.append(f"| {fam} | " + " | ".join(str(counts.get(k, 0)) for k in kinds) + " |")
    if data.get("planted"):
        kinds_seen = sorted({o for c in data["planted"].values() for o in c})
        lines += ["", "| planted fault | " + " | ".join(kinds_seen) + " |",
                  "|---|" + "---:|" * len(kinds_seen)]
        for kind, counts in data["planted"].items():
            lines.append(f"| {kind} | " + " | ".join(str(counts.get(o, 0))
                                                     for o in kinds_seen) + " |")
    lines += ["", "Slowest kernels (wall seconds for all executions, on the shared machine): "
              + ", ".join(f"{n} [{f}] {sec:.1f} s" for n, f, sec in data["slowest"])]
    if data["failures"]:
        lines += ["", "## Failures (minimized cases in fuzz_cases/)", ""]
        for f in data["failures"]:
            saved = os.path.basename(f.get("saved", "")) or "-"
            lines.append(f"- `{saved}` [{f['family']}] **{f['outcome']}** ({f['error']}): "
                         f"{f['detail'][:300]}" + (f" — in `{f['culprit']}`"
                                                     if f["culprit"] else ""))
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--families", help=f"comma-separated subset of {', '.join(FAMILIES)}")
    p.add_argument("--minimize-seconds", type=float, default=120.0)
    p.add_argument("--plant", action="store_true", help="plant faults instead (fuzz/plant.py)")
    args = p.parse_args()
    families = args.families.split(",") if args.families else None
    stamp = time.strftime("%Y-%m-%d_%H%M")
    cases_dir = os.path.join(RESULTS, "fuzz_cases")
    load0 = os.getloadavg()[0]

    def progress(case, res):
        if res.outcome in FAILURES:
            print(f"{case.name} [{case.family}] {res.outcome} {res.error}: {res.detail[:200]}",
                  file=sys.stderr, flush=True)

    summary = run_batch(args.seed, args.count, jobs=args.jobs, timeout=args.timeout,
                        families=families, out_dir=cases_dir,
                        minimize_seconds=args.minimize_seconds, on_result=progress,
                        plant=args.plant)
    data = summary.to_json()
    data.update(timeout=args.timeout, load=[load0, os.getloadavg()[0]], date=stamp,
                families=families or [])
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"{stamp}_fuzz" + ("_planted" if args.plant else ""))
    with open(base + ".json", "w") as f:
        json.dump(data, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(markdown(data, stamp))
    print(markdown(data, stamp))
    return 1 if any(summary.outcomes[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
