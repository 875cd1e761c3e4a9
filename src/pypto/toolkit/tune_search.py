"""The tuner's search: knob settings of one kernel call, each simulated timing only, the best
kept (`kernel.tune(...)`).

Every evaluation is a what-if of the kernel's last call (`whatif.rerun`) with one setting of
the `tune_space` dimensions; the objective is the simulated kernel time (or end-to-end time).
A setting the compiler refuses (a tile over the UB / L1 / L0 capacity, an invalid option) is
recorded as infeasible with the compiler's message and costs no simulation.

Strategy, deterministic for a given `seed`:
- a space of at most `budget` settings is searched exhaustively;
- a larger one by coordinate descent from the kernel's own setting: one dimension at a time,
  each of its candidates tried with the others at their best so far, the best kept. The first
  sweep goes from the knob with the fewest candidates up, so that a small budget still reaches
  every knob; later sweeps go in an order shuffled by `seed`. Sweeps repeat until one improves
  nothing or the budget (evaluations, and optionally seconds) is spent, less one evaluation
  per knob kept for the end: each changed knob is put back once more to see whether it still
  pays (a knob taken early can be undone by a later one). It suits knobs whose effects mostly
  add up (tile shapes, merge counts, stitch size), the way a practitioner tunes them one at a
  time.
The kernel keeps its own last run, program and compile cache as they were.
"""
from __future__ import annotations

import itertools
import math
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from pypto.errors import PyptoError, PyptoValueError
from pypto.toolkit.tune_space import Dimension, search_space
from pypto.toolkit.whatif import WhatIf, rerun

METRICS = {"kernel_us": "kernel_cycles", "e2e_us": "e2e_cycles"}


@dataclass
class Evaluation:
    """One setting: the knobs that differ from the kernel's own, and what it gave."""

    config: dict[str, Any]
    value_us: float | None = None    # the objective; None when infeasible
    error: str | None = None         # why the compiler refused it


@dataclass
class TuneResult:
    kernel: str
    metric: str
    dimensions: list[Dimension]
    evaluations: list[Evaluation]
    seconds: float
    strategy: str
    _kernel: Any = field(default=None, repr=False)
    stored: Any = None   # the tuning-database entry this answer came from (no evaluations)

    @property
    def baseline(self) -> Evaluation:
        if self.stored is not None:
            return Evaluation({}, self.stored.baseline_us)
        return self.evaluations[0]

    @property
    def best(self) -> Evaluation:
        if self.stored is not None:
            return Evaluation(self.stored.config, self.stored.value_us)
        feasible = [e for e in self.evaluations if e.value_us is not None]
        return min(feasible, key=lambda e: e.value_us)

    @property
    def speedup(self) -> float:
        return self.baseline.value_us / self.best.value_us

    @property
    def evaluations_per_second(self) -> float:
        return len(self.evaluations) / self.seconds if self.seconds else float("inf")

    def whatif(self) -> WhatIf:
        """The best setting against the kernel's own, as a what-if (table, diff page)."""
        return rerun(self._kernel, self.best.config)

    def table(self, top: int = 10) -> str:
        infeasible = sum(e.value_us is None for e in self.evaluations)
        lines = [f"tune {self.kernel}: {len(self.evaluations)} evaluations ({self.strategy}, "
                 f"{infeasible} infeasible) in {self.seconds:.1f} s "
                 f"({self.evaluations_per_second:.1f}/s); {self.metric} "
                 f"{self.baseline.value_us:,.2f} -> {self.best.value_us:,.2f} us "
                 f"({self.speedup:.2f}x)",
                 f"  {'rank':>4} {self.metric:>12}  setting"]
        ranked = sorted((e for e in self.evaluations if e.value_us is not None),
                        key=lambda e: e.value_us) or [self.best]
        for n, e in enumerate(ranked[:top], 1):
            lines.append(f"  {n:>4} {e.value_us:>12,.2f}  {_describe(e.config)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _describe(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items()) or "(the kernel's own)"


def tune(kernel: Any, dimensions: Sequence[Dimension] | None = None, budget: int = 50,
         seconds: float | None = None, seed: int = 0, metric: str = "kernel_us",
         progress: bool = True, db: str | bool | None = None) -> TuneResult:
    """Search `dimensions` (default: `search_space(kernel)`) for the setting that minimises
    `metric` ("kernel_us" or "e2e_us") of the kernel's last call; see the module docstring.
    `db` (True: the default file, or a path): answer from a fresh tuning-database entry with
    no evaluation, and store what a search finds (`tune_db`)."""
    if metric not in METRICS:
        raise PyptoValueError(f"tune: metric must be one of {sorted(METRICS)}, got {metric!r}")
    if not isinstance(budget, int) or budget < 1:
        raise PyptoValueError(f"tune: budget must be an int >= 1 evaluations, got {budget!r}")
    if kernel.last_call is None:
        raise PyptoValueError(f"kernel '{kernel.__name__}': tune searches for the kernel's "
                              f"last call; call it once first")
    started = time.perf_counter()
    store = key = None
    if db:
        from pypto.toolkit.tune_db import Key, TuneDB
        store, key = TuneDB(db if isinstance(db, str) else None), Key.of_last_call(kernel)
        entry = store.lookup(key, metric)
        if entry is not None and not entry.stale:
            return TuneResult(kernel.__name__, metric, [], [], time.perf_counter() - started,
                              f"from the tuning database {store.path}", kernel, entry)
    result = _search(kernel, dimensions, budget, seconds, seed, metric, progress, started)
    if store is not None:
        store.store(key, metric, result.best.config, result.best.value_us,
                    result.baseline.value_us, len(result.evaluations))
    return result


def _search(kernel: Any, dimensions: Sequence[Dimension] | None, budget: int,
            seconds: float | None, seed: int, metric: str, progress: bool,
            started: float) -> TuneResult:
    dims = list(dimensions) if dimensions is not None else search_space(kernel)
    caches = (dict(kernel._cache), dict(kernel._compiled), dict(kernel._plans))
    search = _Search(kernel, dims, budget, seconds, metric, started, progress)
    try:
        baseline = search.evaluate({d.knob: d.current for d in dims})
        if baseline.value_us is None:
            raise PyptoValueError(f"tune: kernel '{kernel.__name__}' does not compile with "
                                  f"its own setting: {baseline.error}")
        size = math.prod(len(d.candidates) for d in dims)
        if size <= budget:
            strategy = f"exhaustive over {size}"
            search.exhaustive()
        else:
            strategy = f"coordinate descent over {size:,} (seed {seed})"
            search.descent(random.Random(seed))
    finally:
        kernel._cache, kernel._compiled, kernel._plans = caches
        search.done()
    return TuneResult(kernel.__name__, metric, dims, search.evaluations,
                      time.perf_counter() - started, strategy, kernel)


class _Search:
    def __init__(self, kernel: Any, dims: list[Dimension], budget: int, seconds: float | None,
                 metric: str, started: float, progress: bool):
        self.kernel, self.dims, self.budget, self.seconds = kernel, dims, budget, seconds
        self.key, self.started = METRICS[metric], started
        self.limit = budget   # evaluations the current phase may reach
        self.progress = progress and sys.stderr.isatty()
        self.evaluations: list[Evaluation] = []
        self.seen: dict[tuple, Evaluation] = {}

    def spent(self) -> bool:
        return len(self.evaluations) >= self.limit or (
            self.seconds is not None and time.perf_counter() - self.started >= self.seconds)

    def evaluate(self, choice: dict[str, Any]) -> Evaluation:
        """The setting `choice` (knob -> value, every dimension), once."""
        config = {d.knob: choice[d.knob] for d in self.dims if choice[d.knob] != d.current}
        key = tuple((k, repr(v)) for k, v in config.items())
        if key in self.seen:
            return self.seen[key]
        try:
            run = rerun(self.kernel, config).after
            e = Evaluation(config, run.us(run.stats[self.key]))
        except PyptoError as err:   # refused by the compiler: a capacity, an invalid value
            e = Evaluation(config, None, str(err).splitlines()[0])
        self.seen[key] = e
        self.evaluations.append(e)
        if self.progress:
            best = min((x.value_us for x in self.evaluations if x.value_us is not None),
                       default=float("nan"))
            print(f"\rtune {self.kernel.__name__}: {len(self.evaluations)}/{self.budget}, "
                  f"best {best:,.2f} us", end="", file=sys.stderr, flush=True)
        return e

    def exhaustive(self) -> None:
        for values in itertools.product(*(d.candidates for d in self.dims)):
            if self.spent():
                return
            self.evaluate(dict(zip((d.knob for d in self.dims), values)))

    def descent(self, rng: random.Random) -> None:
        best = {d.knob: d.current for d in self.dims}
        best_value = self.evaluate(best).value_us   # (the baseline, already evaluated)
        if self.budget > 2 * len(self.dims):   # keep one evaluation per knob for `prune`
            self.limit = self.budget - len(self.dims)
        best, best_value = self.sweeps(rng, best, best_value)
        self.limit = self.budget
        self.prune(best, best_value)

    def sweeps(self, rng: random.Random, best: dict[str, Any],
               best_value: float) -> tuple[dict[str, Any], float]:
        """Coordinate sweeps from `best` until one improves nothing or the budget is spent."""
        improved, first = True, True
        while improved:
            improved = False
            order = list(self.dims)
            rng.shuffle(order)
            if first:   # the first sweep: knobs with few candidates first, so it reaches all
                order.sort(key=lambda d: len(d.candidates))
                first = False
            for d in order:
                for candidate in d.candidates:
                    if self.spent():
                        return best, best_value
                    if candidate == best[d.knob]:
                        continue
                    e = self.evaluate({**best, d.knob: candidate})
                    if e.value_us is not None and e.value_us < best_value:
                        best, best_value, improved = {**best, d.knob: candidate}, e.value_us, True
        return best, best_value

    def prune(self, best: dict[str, Any], best_value: float) -> None:
        """Put back each changed knob whose change no longer helps (one taken early in a
        descent can be undone by a later one): the best setting keeps only knobs that pay."""
        for d in self.dims:
            if best[d.knob] == d.current or self.spent():
                continue
            e = self.evaluate({**best, d.knob: d.current})
            if e.value_us is not None and e.value_us <= best_value:
                best, best_value = {**best, d.knob: d.current}, e.value_us

    def done(self) -> None:
        if self.progress:
            print(file=sys.stderr)
