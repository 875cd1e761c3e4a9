"""The tuner's search: knob settings of one kernel call, each simulated timing only, the best
kept (`kernel.tune(...)`).

Every evaluation is the kernel's last call with one setting of the `space` dimensions,
timing only (`backends.evaluate`); the objective is the simulated kernel time (or end-to-end
time). A setting the compiler refuses (a tile over the UB / L1 / L0 capacity, an invalid
option) is recorded as infeasible with the compiler's message and costs no simulation; one
whose schedule-free lower bound already exceeds the best time found is recorded as pruned
and is not simulated either (it cannot win). Settings are handed out in batches (one knob's
candidates, `BATCH` settings of a product, an Optuna round), evaluated in a local process
pool by default or on Ray (`backends`), each batch against the best time before it: the
search and its results are the same whichever backend and however many workers run it.

Strategy (`strategy`), deterministic for a given `seed`:
- "auto": exhaustive when the space has at most `budget` settings, else coordinate descent;
- "exhaustive": the product of the candidates, in order, until the budget is spent;
- "optuna": Optuna's TPE sampler (the `tune` extra), seeded, from the kernel's own setting,
  `optuna_search.BATCH` settings a round (`optuna_search`);
- "descent": coordinate descent from the kernel's own setting: one dimension at a time,
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

from pypto.errors import PyptoValueError
from pypto.tune import backends
from pypto.tune.space import Dimension, search_space
from pypto.tune.whatif import WhatIf, rerun

METRICS = {"kernel_us": "kernel_cycles", "e2e_us": "e2e_cycles"}
STRATEGIES = ("auto", "exhaustive", "descent", "optuna")
BATCH = 8   # settings handed out at once where the search does not fix it (fixed: determinism)


@dataclass
class Evaluation:
    """One setting: the knobs that differ from the kernel's own, and what it gave."""

    config: dict[str, Any]
    value_us: float | None = None    # the objective; None when infeasible or pruned
    error: str | None = None         # why the compiler refused it
    bound_us: float | None = None    # its schedule-free lower bound (`before_scheduling`)
    pruned: bool = False             # that bound exceeded the best time found: not simulated


@dataclass(frozen=True)
class KnobEffect:
    """One knob of the best setting: the objective with it alone, and with all the best
    setting's other knobs but not it (None: that setting is refused)."""

    knob: str
    value: Any
    alone_us: float | None
    without_us: float | None


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
    def jit_kernel(self) -> Any:
        """The `JitKernel` tuned (its last call is the call tuned); `kernel` is its name."""
        return self._kernel

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
        return min(feasible, key=_fastest_then_fewest)

    @property
    def speedup(self) -> float:
        return self.baseline.value_us / self.best.value_us

    @property
    def evaluations_per_second(self) -> float:
        return len(self.evaluations) / self.seconds if self.seconds else float("inf")

    def whatif(self) -> WhatIf:
        """The best setting against the kernel's own, as a what-if (table, diff page)."""
        return rerun(self._kernel, self.best.config)

    def explain(self) -> list[KnobEffect]:
        """Why the best setting wins, knob by knob: each of its knobs alone on the kernel's
        own setting, and the best setting with that knob put back (what it adds there).
        Two evaluations per knob, in this process, on the kernel's last call."""
        evaluate = backends.Evaluator(self._kernel, self._kernel.last_call, METRICS[self.metric])
        out = []
        for knob, value in self.best.config.items():
            rest = {k: v for k, v in self.best.config.items() if k != knob}
            alone, without = evaluate({knob: value}, None), evaluate(rest, None)
            out.append(KnobEffect(knob, value, alone.value_us, without.value_us))
        return out

    def table(self, top: int = 10) -> str:
        infeasible = sum(e.error is not None for e in self.evaluations)
        pruned = sum(e.pruned for e in self.evaluations)
        lines = [f"tune {self.kernel}: {len(self.evaluations)} evaluations ({self.strategy}, "
                 f"{infeasible} infeasible, {pruned} pruned by bound) in {self.seconds:.1f} s "
                 f"({self.evaluations_per_second:.1f}/s); {self.metric} "
                 f"{self.baseline.value_us:,.2f} -> {self.best.value_us:,.2f} us "
                 f"({speed_words(self.speedup, 'its own setting')})",
                 f"  {'rank':>4} {self.metric:>12}  setting"]
        ranked = sorted((e for e in self.evaluations if e.value_us is not None),
                        key=lambda e: e.value_us) or [self.best]
        for n, e in enumerate(ranked[:top], 1):
            lines.append(f"  {n:>4} {e.value_us:>12,.2f}  {_describe(e.config)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def speed_words(ratio: float, what: str) -> str:
    """A speed ratio (the reference time / this time) in words that cannot be read backwards:
    "1.20x faster than X", "0.90x the speed of X (slower)", "as fast as X (1.00x)"."""
    if round(ratio, 2) > 1:
        return f"{ratio:.2f}x faster than {what}"
    if round(ratio, 2) < 1:
        return f"{ratio:.2f}x the speed of {what} (slower)"
    return f"as fast as {what} (1.00x)"


def _fastest_then_fewest(e: Evaluation) -> tuple[float, int]:
    """Of equally fast settings the one changing fewest knobs wins (the put-back check's)."""
    return e.value_us, len(e.config)


def _describe(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items()) or "(the kernel's own)"


def tune(kernel: Any, dimensions: Sequence[Dimension] | None = None, budget: int = 50,
         seconds: float | None = None, seed: int = 0, metric: str = "kernel_us",
         progress: bool = True, db: str | bool | None = None, strategy: str = "auto",
         workers: int | None = None, ray: str | bool | None = None) -> TuneResult:
    """Search `dimensions` (default: `search_space(kernel)`) for the setting that minimises
    `metric` ("kernel_us" or "e2e_us") of the kernel's last call; see the module docstring.
    `db` (True: the default file, or a path): answer from a fresh tuning-database entry with
    no evaluation, and store what a search finds (`db`). `workers`: local processes (None:
    one per CPU); `ray`: evaluate on a Ray cluster instead ("local", "auto" or an address)."""
    if metric not in METRICS:
        raise PyptoValueError(f"tune: metric must be one of {sorted(METRICS)}, got {metric!r}")
    if not isinstance(budget, int) or budget < 1:
        raise PyptoValueError(f"tune: budget must be an int >= 1 evaluations, got {budget!r}")
    if strategy not in STRATEGIES:
        raise PyptoValueError(f"tune: strategy must be one of {list(STRATEGIES)}, got "
                              f"{strategy!r}")
    if kernel.last_call is None:
        raise PyptoValueError(f"kernel '{kernel.__name__}': tune searches for the kernel's "
                              f"last call; call it once first")
    started = time.perf_counter()
    store = key = None
    if db:
        from pypto.tune.db import Key, TuneDB
        store, key = TuneDB(db if isinstance(db, str) else None), Key.of_last_call(kernel)
        entry = store.lookup(key, metric)
        if entry is not None and not entry.stale:
            return TuneResult(kernel.__name__, metric, [], [], time.perf_counter() - started,
                              f"from the tuning database {store.path}", kernel, entry)
    result = _search(kernel, dimensions, _Plan(budget, seconds, seed, metric, strategy,
                                               workers, ray), progress, started)
    if store is not None:
        store.store(key, metric, result.best.config, result.best.value_us,
                    result.baseline.value_us, len(result.evaluations))
    return result


@dataclass(frozen=True)
class _Plan:
    """How to search: the budget, the order's seed, the objective, the strategy, where."""

    budget: int
    seconds: float | None
    seed: int
    metric: str
    strategy: str
    workers: int | None
    ray: str | bool | None


def _search(kernel: Any, dimensions: Sequence[Dimension] | None, plan: _Plan, progress: bool,
            started: float) -> TuneResult:
    dims = list(dimensions) if dimensions is not None else search_space(kernel)
    search = _Search(kernel, dims, plan, started, progress)
    try:
        baseline = search.evaluate({d.knob: d.current for d in dims})
        if baseline.value_us is None:
            raise PyptoValueError(f"tune: kernel '{kernel.__name__}' does not compile with "
                                  f"its own setting: {baseline.error}")
        size = math.prod(len(d.candidates) for d in dims)
        how = plan.strategy if plan.strategy != "auto" else \
            ("exhaustive" if size <= plan.budget else "descent")
        search.open_backend()
        if how == "exhaustive":
            strategy = f"exhaustive over {size:,}"
            search.exhaustive()
        elif how == "optuna":
            from pypto.tune.optuna_search import optuna_search
            strategy = f"Optuna TPE over {size:,} (seed {plan.seed})"
            optuna_search(search, plan.seed)
        else:
            strategy = f"coordinate descent over {size:,} (seed {plan.seed})"
            search.descent(random.Random(plan.seed))
    finally:
        search.done()
    where = f", {search.backend.workers} {search.backend.where}" if search.backend else ""
    return TuneResult(kernel.__name__, plan.metric, dims, search.evaluations,
                      time.perf_counter() - started, strategy + where, kernel)


class _Search:
    def __init__(self, kernel: Any, dims: list[Dimension], plan: _Plan, started: float,
                 progress: bool):
        self.kernel, self.dims, self.plan = kernel, dims, plan
        self.budget, self.seconds = plan.budget, plan.seconds
        self.key, self.started = METRICS[plan.metric], started
        self.limit = plan.budget   # evaluations the current phase may reach
        self.progress = progress and sys.stderr.isatty()
        self.evaluations: list[Evaluation] = []
        self.seen: dict[tuple, Evaluation] = {}
        self.evaluator = backends.Evaluator(kernel, kernel.last_call, self.key)
        self.backend: Any = None

    def open_backend(self) -> None:
        """Where the settings after the baseline run (the baseline ran here: its trace and
        compile are what forked workers inherit)."""
        self.backend = backends.backend(self.evaluator, self.plan.workers, self.plan.ray)

    def spent(self) -> bool:
        return len(self.evaluations) >= self.limit or (
            self.seconds is not None and time.perf_counter() - self.started >= self.seconds)

    def room(self) -> int:
        """Evaluations the current phase still has."""
        return 0 if self.spent() else self.limit - len(self.evaluations)

    @property
    def best(self) -> Evaluation:
        """The fastest feasible evaluation so far."""
        return min((e for e in self.evaluations if e.value_us is not None),
                   key=_fastest_then_fewest)

    @property
    def best_value(self) -> float | None:
        return min((e.value_us for e in self.evaluations if e.value_us is not None),
                   default=None)

    def config_of(self, choice: dict[str, Any]) -> dict[str, Any]:
        """The knobs of `choice` (every dimension) that differ from the kernel's own."""
        return {d.knob: choice[d.knob] for d in self.dims if choice[d.knob] != d.current}

    def evaluate(self, choice: dict[str, Any]) -> Evaluation:
        """The setting `choice` (knob -> value, every dimension), once."""
        return self.evaluate_batch([choice])[0]

    def evaluate_batch(self, choices: list[dict[str, Any]]) -> list[Evaluation]:
        """Each setting of `choices` once (repeats answered from before), the new ones on the
        backend against the best time so far."""
        configs = [self.config_of(c) for c in choices]
        keys = [tuple((k, repr(v)) for k, v in c.items()) for c in configs]
        new = [n for n, k in enumerate(keys) if k not in self.seen and k not in keys[:n]]
        runner = self.backend or backends.Here(self.evaluator)
        for n, outcome in zip(new, runner.map([configs[n] for n in new], self.best_value)):
            e = Evaluation(configs[n], outcome.value_us, outcome.error, outcome.bound_us,
                           outcome.pruned)
            self.seen[keys[n]] = e
            self.evaluations.append(e)
        self.show()
        return [self.seen[k] for k in keys]

    def show(self) -> None:
        """The progress bar on a terminal: evaluations against the budget (or the seconds,
        whichever is further along), and the best time so far."""
        if not self.progress:
            return
        done = len(self.evaluations) / self.budget
        if self.seconds:
            done = max(done, (time.perf_counter() - self.started) / self.seconds)
        filled = round(20 * min(done, 1.0))
        best = self.best_value
        print(f"\rtune {self.kernel.__name__} [{'#' * filled}{'.' * (20 - filled)}] "
              f"{len(self.evaluations)}/{self.budget}, best "
              f"{best if best is not None else float('nan'):,.2f} us", end="",
              file=sys.stderr, flush=True)

    def exhaustive(self) -> None:
        settings = itertools.product(*(d.candidates for d in self.dims))
        while self.room():
            batch = list(itertools.islice(settings, min(BATCH, self.room())))
            if not batch:
                return
            self.evaluate_batch([dict(zip((d.knob for d in self.dims), v)) for v in batch])

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
        """Coordinate sweeps from `best` until one improves nothing or the budget is spent;
        one knob's candidates are one batch."""
        improved, first = True, True
        while improved:
            improved = False
            order = list(self.dims)
            rng.shuffle(order)
            if first:   # the first sweep: knobs with few candidates first, so it reaches all
                order.sort(key=lambda d: len(d.candidates))
                first = False
            for d in order:
                candidates = [c for c in d.candidates if c != best[d.knob]
                              and self.key_of({**best, d.knob: c}) not in self.seen]
                candidates = candidates[:self.room()]
                if not candidates:
                    if self.spent():
                        return best, best_value
                    continue
                results = self.evaluate_batch([{**best, d.knob: c} for c in candidates])
                for c, e in zip(candidates, results):
                    if e.value_us is not None and e.value_us < best_value:
                        best, best_value, improved = {**best, d.knob: c}, e.value_us, True
        return best, best_value

    def key_of(self, choice: dict[str, Any]) -> tuple:
        return tuple((k, repr(v)) for k, v in self.config_of(choice).items())

    def prune(self, best: dict[str, Any], best_value: float) -> None:
        """Put back each changed knob whose change no longer helps (one taken early in a
        descent can be undone by a later one), in passes until one puts nothing back or the
        budget is spent: the best setting keeps only knobs that pay."""
        changed = True
        while changed and not self.spent():
            changed = False
            for d in self.dims:
                if best[d.knob] == d.current or self.spent():
                    continue
                e = self.evaluate({**best, d.knob: d.current})
                if e.value_us is not None and e.value_us <= best_value:
                    best, best_value, changed = {**best, d.knob: d.current}, e.value_us, True

    def done(self) -> None:
        if self.backend is not None:
            self.backend.close()
        if self.progress:
            print(file=sys.stderr)
