"""`python -m pypto.testing.fuzz`: run a batch of random kernels against the golden and print
(or write as JSON) the outcome counts; failing cases are minimized and saved with --out."""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time

from pypto.testing.fuzz.campaign import FAILURES, run_batch
from pypto.testing.fuzz.generator import FAMILIES


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pypto.testing.fuzz", description=__doc__)
    p.add_argument("--seed", type=int, default=0, help="batch seed (default 0)")
    p.add_argument("--count", type=int, default=100, help="kernels to run (default 100)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="CPU seconds per kernel, all executions included (default 10); a "
                        "kernel over it (or over 4x it in wall time) is killed and counted "
                        "'slow'")
    p.add_argument("--out", metavar="DIR", help="save minimized failing cases here")
    p.add_argument("--json", metavar="FILE", help="write the summary as JSON ('-': stdout)")
    p.add_argument("--families", help=f"comma-separated subset of: {', '.join(FAMILIES)}")
    p.add_argument("--plant", action="store_true",
                   help="plant each fault kind of pypto.testing.faults in every kernel instead "
                        "(a wrong tile result the cross-check must flag); a missed one fails")
    p.add_argument("--no-minimize", action="store_true",
                   help="save failing cases as generated")
    p.add_argument("--minimize-seconds", type=float, default=120.0,
                   help="time budget per failing case for the minimizer (default 120)")
    args = p.parse_args(argv)
    if args.families:
        fams = [f.strip() for f in args.families.split(",") if f.strip()]
        unknown = [f for f in fams if f not in FAMILIES]
        if unknown:
            p.error(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {unknown}; "
                    f"choose from {sorted(FAMILIES)}")
        args.families = fams
    if args.count < 0 or args.jobs < 1 or args.timeout <= 0:
        p.error("--count must be >= 0, --jobs >= 1 and --timeout > 0")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    started, done, counts = time.perf_counter(), [0], collections.Counter()

    def report(case, res):
        done[0] += 1
        counts[res.outcome] += 1
        if done[0] % 250 == 0 and done[0] < args.count:
            rate = done[0] / (time.perf_counter() - started)
            print(f"... {done[0]}/{args.count} kernels ({rate:.2f}/s): {dict(counts)}",
                  file=sys.stderr, flush=True)
        if res.outcome in FAILURES:
            print(f"{case.name} [{case.family}] {res.outcome} {res.error}: {res.detail[:300]}"
                  + (f" ({res.culprit})" if res.culprit else ""), file=sys.stderr, flush=True)

    summary = run_batch(args.seed, args.count, jobs=args.jobs, timeout=args.timeout,
                        families=args.families, out_dir=args.out,
                        minimize_failures=not args.no_minimize,
                        minimize_seconds=args.minimize_seconds, on_result=report,
                        plant=args.plant)
    data = summary.to_json()
    if args.json == "-":
        print(json.dumps(data, indent=2))
    else:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(data, f, indent=2)
        print(f"{summary.count} kernels in {summary.seconds:.1f} s "
              f"({summary.kernels_per_s:.2f} kernels/s, {summary.jobs} job(s)), seed "
              f"{summary.seed}")
        for k, v in summary.outcomes.items():
            print(f"  {k:15s} {v}")
        for kind, counts in summary.planted.items():
            print(f"  planted {kind:13s} " + ", ".join(f"{o} {n}" for o, n in
                                                        sorted(counts.items())))
        for f in summary.failures:
            print(f"  {f['name']} {f['outcome']}: {f.get('saved', '')}")
    return 1 if any(summary.outcomes[k] for k in FAILURES) else 0
