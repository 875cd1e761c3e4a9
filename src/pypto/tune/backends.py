"""Where the tuner's evaluations run: in this process, in a local process pool (the default),
or on a Ray cluster; the same answers from each.

One evaluation (`evaluate`) is the kernel's last call with one knob setting, timing only: the
objective in microseconds, or the compiler's refusal. Between the run and the simulation of
its schedule (the costlier half on the models) it bounds the stitched tasks
(`profiling.bounds.before_scheduling`); when that bound already exceeds `cutoff`, the best
time found when the batch was handed out, the setting cannot win and is not simulated: it is
recorded as pruned, with its bound.

An evaluation depends only on the kernel, its call, the setting and the cutoff (the simulator
is deterministic and shares nothing between runs), so the backends agree to the last bit and
the search is the same whichever runs it, with however many workers:
- `Here`: in this process, one setting after another;
- `LocalPool`: forked worker processes, one per CPU. Each inherits the kernel as it stands,
  its traced and compiled call included, so nothing is pickled but settings and outcomes.
  Fork is POSIX-only; elsewhere the tuner evaluates `Here`;
- `RayPool`: one actor per CPU of a Ray cluster (the `ray` extra), each holding a copy of the
  kernel (its function and decorator arguments, `JitKernel.__reduce__`) and its last call's
  arguments, sent once, and keeping its own compile cache between settings. Many kernels,
  shapes and settings then tune on a cluster's CPUs; results land in the caller's database.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Sequence

from pypto.errors import PyptoError, PyptoValueError


@dataclass(frozen=True)
class Outcome:
    """What one setting gave: its objective, or why it has none (refused, pruned)."""

    value_us: float | None
    error: str | None = None       # the compiler's refusal
    bound_us: float | None = None  # the schedule-free lower bound, when it was computed
    pruned: bool = False           # the bound reached the cutoff: not simulated


def evaluate(kernel: Any, config: dict[str, Any], key: str, cutoff: float | None,
             call: tuple[tuple, dict] | None = None, cache: Any = None) -> Outcome:
    """`kernel` called on `call` (args, kwargs; default its last call) with `config`, timing
    only (see the module docstring); `key` is the SimResult stat of the objective
    ("kernel_cycles" or "e2e_cycles"); `cache` keeps the programs it compiles
    (`JitKernel.evaluate`)."""
    from pypto.frontend import knobs
    from pypto.profiling import table_bounds
    from pypto.profiling.bounds import before_scheduling
    args, kwargs = call or kernel.last_call
    try:
        record = kernel.evaluate(*args, knobs=knobs.parse(config), cache=cache, **kwargs)
    except PyptoError as err:   # refused by the compiler: a capacity, an invalid value
        return Outcome(None, str(err).splitlines()[0])
    pending = record.pending
    if pending is None:
        return Outcome(None, "the kernel did not run (compile_stage stops before it)")
    bound = table_bounds.before_scheduling(pending.table, pending.spec) \
        if pending.table is not None else before_scheduling(pending.tasks, pending.spec)
    if cutoff is not None and bound > cutoff:
        return Outcome(None, None, bound, pruned=True)
    run = record.run
    return Outcome(run.us(run.stats[key]), None, bound)


class Evaluator:
    """`evaluate` on one kernel and call, with a compile cache of its own kept small: settings
    that differ only in runtime options (stitch size, scheduler) share a trace, so the last
    `KEEP` programs the search compiled stay cached; older ones are dropped (a model's program
    and its plan are large, and a search compiles one per tile or merge setting). The kernel's
    own cache is read, never written."""

    KEEP = 4

    def __init__(self, kernel: Any, call: tuple[tuple, dict], key: str):
        from pypto.runtime.compile_cache import CompileCache
        self.kernel, self.call, self.key = kernel, call, key
        self.cache = CompileCache(limit=self.KEEP)

    def __call__(self, config: dict[str, Any], cutoff: float | None) -> Outcome:
        return evaluate(self.kernel, config, self.key, cutoff, self.call, self.cache)


class Here:
    """Evaluations in this process, in order."""

    workers, where = 1, "process"

    def __init__(self, evaluator: Evaluator):
        self.evaluate = evaluator

    def map(self, configs: Sequence[dict], cutoff: float | None) -> list[Outcome]:
        return [self.evaluate(c, cutoff) for c in configs]

    def close(self) -> None:
        pass


_FORKED: Evaluator | None = None   # what forked workers evaluate (set before the fork)


def _evaluate_forked(task: tuple[dict, float | None]) -> Outcome:
    return _FORKED(*task)


def _one_thread() -> None:
    """A worker's torch (if loaded) on one thread: the workers already fill the CPUs."""
    import sys
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


class LocalPool:
    """Evaluations in `workers` forked processes (see the module docstring). A worker that
    dies (killed for memory, say) fails the search with a named error rather than hanging it,
    hence `concurrent.futures` rather than `multiprocessing.Pool`, which waits forever for a
    lost task."""

    def __init__(self, evaluator: Evaluator, workers: int):
        global _FORKED
        _FORKED = evaluator
        self.workers, self.kernel = workers, evaluator.kernel.__name__
        self.where = "local processes"
        self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                        initializer=_one_thread)

    def map(self, configs: Sequence[dict], cutoff: float | None) -> list[Outcome]:
        try:
            return list(self.pool.map(_evaluate_forked, [(c, cutoff) for c in configs]))
        except BrokenProcessPool:
            raise PyptoValueError(
                f"tune '{self.kernel}': a worker process died while evaluating a setting (out "
                f"of memory?); tune with fewer workers (workers=1 evaluates in this "
                f"process)") from None

    def close(self) -> None:
        global _FORKED
        self.pool.shutdown(wait=True, cancel_futures=True)
        _FORKED = None


class _RayEvaluator:
    """A Ray actor: one copy of the kernel with its last call, evaluating settings."""

    def __init__(self, kernel: Any, call: tuple, key: str):
        self.evaluator = Evaluator(kernel, call, key)

    def evaluate(self, config: dict, cutoff: float | None) -> Outcome:
        return self.evaluator(config, cutoff)


class RayPool:
    """Evaluations on the actors of a Ray cluster (see the module docstring). `address`:
    "local" (or True) starts a Ray on this machine for the search ("local:N": with N CPUs),
    "auto" joins the cluster `ray start` made, anything else is passed to
    `ray.init(address=...)`; a Ray the caller already initialised is used as it is."""

    def __init__(self, evaluator: Evaluator, address: str | bool):
        kernel, key = evaluator.kernel, evaluator.key
        ray = _import_ray()
        self.started = not ray.is_initialized()
        if self.started:
            local, cpus = _local(address)
            try:
                ray.init(address=None if local else address, num_cpus=cpus,
                         include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise PyptoValueError(f"tune(ray={address!r}): Ray could not start or join "
                                      f"that cluster: {e}") from None
        from ray.util import ActorPool
        self.ray, self.by_value = ray, _user_module(kernel)
        if self.by_value is not None:   # a worker may not import the user's file: send it
            ray.cloudpickle.register_pickle_by_value(self.by_value)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.where = "Ray workers"
        actor = ray.remote(num_cpus=1)(_RayEvaluator)
        job = [ray.put(kernel), ray.put(evaluator.call)]
        self.actors = [actor.remote(job[0], job[1], key) for _ in range(self.workers)]
        self.pool = ActorPool(self.actors)

    def map(self, configs: Sequence[dict], cutoff: float | None) -> list[Outcome]:
        return list(self.pool.map(lambda a, c: a.evaluate.remote(c, cutoff), configs))

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        if self.by_value is not None:
            self.ray.cloudpickle.unregister_pickle_by_value(self.by_value)
        if self.started:
            self.ray.shutdown()


def _user_module(kernel: Any) -> Any:
    """The module of the kernel's function when a worker might not import it by name (a
    script, a test file: not `pypto`, not installed), so that it is pickled by value."""
    module = sys.modules.get(kernel.func.__module__)
    if module is None or module.__name__ == "__main__" or module.__name__.split(".")[0] in (
            "pypto",) or "site-packages" in (getattr(module, "__file__", "") or ""):
        return None   # (__main__ and unnamed modules are pickled by value already)
    return module


def _local(address: str | bool) -> tuple[bool, int | None]:
    """(whether `address` asks for a Ray on this machine, its CPUs: "local:N" -> N, else
    all)."""
    if address is True or address == "local":
        return True, None
    if isinstance(address, str) and address.startswith("local:"):
        cpus = address[len("local:"):]
        if not cpus.isdigit() or int(cpus) < 1:
            raise PyptoValueError(f"tune(ray={address!r}): a local Ray is 'local' or "
                                  f"'local:N' with N >= 1 CPUs")
        return True, int(cpus)
    return False, None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise PyptoValueError("tune(ray=...): Ray is not installed; pip install "
                              "'openpto[ray]' (or pip install ray)") from None
    return ray


def backend(evaluator: Evaluator, workers: int | None, ray: str | bool | None) -> Any:
    """The backend for a search: Ray when `ray` is given, else a local pool of `workers`
    processes (None: one per CPU this process may use), `Here` for one worker or no fork."""
    if ray:
        return RayPool(evaluator, ray)
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    if not isinstance(workers, int) or workers < 1:
        raise PyptoValueError(f"tune: workers must be an int >= 1, got {workers!r}")
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return Here(evaluator)
    return LocalPool(evaluator, workers)
