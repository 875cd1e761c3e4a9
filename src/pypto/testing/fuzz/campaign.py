"""A batch of fuzz cases: generate, run in the worker pool, minimize and save the failures,
count the outcomes. Shared by the CLI, the CI test and benchmarks/fuzz_campaign.py."""
from __future__ import annotations

import collections
import os
import time
from dataclasses import dataclass, field

from pypto.testing.fuzz.case import Case, script
from pypto.testing.fuzz.generator import generate
from pypto.testing.fuzz.minimizer import minimize
from pypto.testing.fuzz.runner import SEVERITY, Pool, Result

FAILURES = ("mismatch", "internal_error", "slow", "crash")
MINIMIZE_PER_CLASS = 2  # failures of one class beyond this are saved as generated


def failure_class(case: Case, res: Result) -> tuple:
    """Failures that are most likely one defect: same family, outcome, error type and
    culprit file (line numbers dropped)."""
    return case.family, res.outcome, res.error, res.culprit.split(":")[0]


@dataclass
class Summary:
    seed: int
    count: int
    jobs: int
    seconds: float = 0.0
    outcomes: dict = field(default_factory=lambda: {k: 0 for k in SEVERITY})
    by_family: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    slowest: list = field(default_factory=list)  # [name, family, seconds] of the 10 slowest
    planted: dict = field(default_factory=dict)  # fault kind -> outcome -> cases (--plant)

    @property
    def kernels_per_s(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict:
        return {"seed": self.seed, "count": self.count, "jobs": self.jobs,
                "seconds": round(self.seconds, 2),
                "kernels_per_s": round(self.kernels_per_s, 2), "outcomes": self.outcomes,
                "by_family": self.by_family, "failures": self.failures,
                "slowest": self.slowest, **({"planted": self.planted} if self.planted else {})}


def save(case: Case, result: Result, out_dir: str) -> str:
    """Write `case` as `case_<seed>_<n>.py` whose docstring states the failure."""
    os.makedirs(out_dir, exist_ok=True)
    summary = f"{result.outcome} ({result.error}): {result.detail}"
    if result.culprit:
        summary += f"; raised in {result.culprit}"
    note = (case.note + "; " if case.note else "") + summary.replace('"""', "'''")
    path = os.path.join(out_dir, f"{case.name}.py")
    with open(path, "w") as f:
        f.write(script(case.replace(note=note)))
    return path


def run_batch(seed: int, count: int, *, jobs: int = 1, timeout: float = 10.0,
              families=None, out_dir: str | None = None, minimize_failures: bool = True,
              minimize_seconds: float = 120.0, on_result=None, plant: bool = False) -> Summary:
    """Run `count` generated kernels; failing ones are saved under `out_dir` (when given),
    the first MINIMIZE_PER_CLASS of each `failure_class` minimized first. `on_result(case,
    result)` is called as each case finishes. With `plant`, each kernel gets each planted
    fault instead (fuzz/plant.py), counted in `Summary.planted`."""
    summary = Summary(seed, count, jobs)
    cases = [generate(seed, i, families) for i in range(count)]
    started = time.perf_counter()
    failed: list[tuple[Case, Result]] = []
    with Pool(jobs, timeout, plant) as pool:
        for case, res in pool.run(cases):
            summary.outcomes[res.outcome] += 1
            for kind, outcome in (res.modes.items() if plant else ()):
                counts = summary.planted.setdefault(kind, {})
                counts[outcome] = counts.get(outcome, 0) + 1
            fam = summary.by_family.setdefault(case.family, collections.Counter())
            fam[res.outcome] += 1
            if res.outcome in FAILURES:
                failed.append((case, res))
            summary.slowest = sorted(summary.slowest + [[case.name, case.family,
                                                         round(res.seconds, 2)]],
                                     key=lambda e: -e[2])[:10]
            if on_result:
                on_result(case, res)
        summary.seconds = time.perf_counter() - started
        minimized: collections.Counter = collections.Counter()
        for case, res in sorted(failed, key=lambda cr: cr[0].index):
            entry = {"name": case.name, "family": case.family, "outcome": res.outcome,
                     "error": res.error, "detail": res.detail, "culprit": res.culprit}
            if out_dir:
                small = case
                cls = failure_class(case, res)
                if minimize_failures and minimized[cls] < MINIMIZE_PER_CLASS:
                    minimized[cls] += 1
                    small = minimize(case, lambda c: pool.run_one(c).signature == res.signature,
                                     seconds=minimize_seconds)
                    entry["minimized"] = True
                entry["saved"] = save(small, res, out_dir)
            summary.failures.append(entry)
    summary.by_family = {k: dict(v) for k, v in sorted(summary.by_family.items())}
    return summary
