"""Runs fuzz cases in worker processes and classifies each one.

A case is its script (`case.script`), written to a temporary file (so the kernel's source lines
are real) and imported in a worker, which runs it under the three executions: "tile" (the
default tile executor), "reference" (`runtime_options={"executor": "reference"}`) and
"checked" (OPENPTO_CHECK_EXECUTORS=1, both executors must agree); then, for a case that passed,
"timeline": the last call's timing-only run, a what-if with the kernel's own settings and the
other simulator core (Python model / compiled core, when both exist) must give the exact run's
timeline (`SimResult.digest`). Outcomes, worst first:

    crash           the worker process died
    slow            the case used more than the timeout in CPU seconds, or more than
                    HANG_FACTOR times it in wall seconds (the worker is killed and replaced;
                    CPU time keeps the verdict stable on a machine shared with other work)
    internal_error  a non-pypto exception, or a pypto error on a valid kernel
    mismatch        a result differs from the golden (or an invalid kernel ran silently, or
                    dynamic sizes recompiled, or the checked mode saw the executors disagree)
    expected_error  an invalid kernel raised a named pypto error, as it should
    ok
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import multiprocessing as mp
import os
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait

from pypto.testing.fuzz.case import Case, script

MODES = ("tile", "reference", "checked")
SEVERITY = ["ok", "expected_error", "mismatch", "internal_error", "slow", "crash"]
RECYCLE_AFTER = 150  # cases per worker before it is replaced (compiled kernels pile up)
HANG_FACTOR = 4      # wall-clock limit, in timeouts, for a case that sleeps or blocks
POLL = 0.25          # seconds between CPU-time checks of busy workers


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` (Linux /proc), None where unavailable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Result:
    """The outcome of one case; `error` is the exception type (or the mismatching modes) that
    the minimizer keeps fixed while it shrinks the case."""
    outcome: str
    error: str = ""
    detail: str = ""
    culprit: str = ""
    seconds: float = 0.0
    modes: dict = field(default_factory=dict)

    @property
    def signature(self) -> tuple[str, str]:
        return self.outcome, self.error

    def to_json(self) -> dict:
        return asdict(self)


def _culprit(exc: BaseException) -> str:
    """The innermost frame inside the pypto package (not the fuzzer): where to look. An
    exception raised in the case's golden function is the fuzzer's own bug."""
    where, in_golden = "", False
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename.replace(os.sep, "/")
        if "/pypto/" in path and "/pypto/testing/" not in path:
            where = f"{path.split('/pypto/', 1)[1]}:{frame.lineno} in {frame.name}"
        in_golden = in_golden or frame.name == "golden"
    return where or ("the case's golden (a fuzzer bug)" if in_golden else "")


def _run_mode(mod, mode: str) -> Result:
    import pypto
    try:
        problems = mod.run(mode)
    except pypto.PyptoError as exc:
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:400]
        if mod.EXPECT or mod.UNDEFINED:
            return Result("expected_error", type(exc).__name__, text)
        if mode == "checked" and "disagree" in str(exc):
            return Result("mismatch", "executors disagree", text, _culprit(exc))
        return Result("internal_error", type(exc).__name__, "pypto error on a valid kernel: "
                      + text, _culprit(exc))
    except Exception as exc:  # any other exception is a defect
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:400] if str(exc) else \
            type(exc).__name__
        return Result("internal_error", type(exc).__name__, text, _culprit(exc))
    if problems:
        return Result("mismatch", mode, "; ".join(problems)[:600])
    return Result("ok")


def _timelines(mod) -> Result:
    """Three properties of the last call's simulated run: a timing-only run gives the exact
    run's timeline, a what-if with the kernel's own settings reproduces `last_run`, and the
    other simulator core gives the same timeline."""
    import pypto
    from pypto.machine import compiled
    mod.RUNTIME.pop("executor", None)
    os.environ["OPENPTO_CHECK_EXECUTORS"] = "0"
    last = len(mod.CALLS) - 1
    try:
        mod.kernel(*mod.make_args(last))
        exact = mod.kernel.last_run.digest()
        problems = []
        if mod.kernel.whatif().after.digest() != exact:
            problems.append("a what-if with the kernel's own settings gave another timeline")
        if mod.kernel.last_run.digest() != exact:
            problems.append("a what-if changed the kernel's last_run")
        if compiled.available():
            other = "python" if compiled.core() == "compiled" else "compiled"
            with _environ(compiled.ENV, other):
                mod.kernel(*mod.make_args(last))
                if mod.kernel.last_run.digest() != exact:
                    problems.append(f"the {other} simulator core gave another timeline")
        mod.RUNTIME["numerics"] = "timing_only"
        try:
            mod.kernel(*mod.make_args(last))
        except pypto.PyptoError as exc:
            if "timing_only" not in str(exc):
                raise
        else:
            if mod.kernel.last_run.digest() != exact:
                problems.append("the timing-only run's timeline differs from the exact run's")
    except Exception as exc:   # any error here is a defect: the same call ran fine before
        return Result("internal_error", type(exc).__name__,
                      f"timeline check: {exc}".splitlines()[0][:400], _culprit(exc))
    finally:
        mod.RUNTIME.pop("numerics", None)
    if problems:
        return Result("mismatch", "timeline", "; ".join(problems))
    return Result("ok")


@contextlib.contextmanager
def _environ(name: str, value: str):
    """`os.environ[name] = value` for the block."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def _planted(mod) -> Result:
    from pypto.testing.fuzz.plant import plant
    started = time.perf_counter()
    try:
        found = plant(mod)
    except Exception as exc:  # a fault the executors could not even run through
        return Result("internal_error", type(exc).__name__, f"planting: {exc}"[:400],
                      _culprit(exc), seconds=time.perf_counter() - started)
    missed = [f"{kind}: {what}" for kind, (outcome, what) in found.items()
              if outcome == "missed"]
    return Result("mismatch" if missed else "ok", "planted fault missed" if missed else "",
                  "; ".join(missed)[:600], seconds=time.perf_counter() - started,
                  modes={kind: outcome for kind, (outcome, _) in found.items()})


def combine(results: dict[str, Result]) -> Result:
    """One result for a case from its per-mode results: the worst outcome; a mismatch's error
    names the modes that mismatched."""
    worst = max(results.values(), key=lambda r: SEVERITY.index(r.outcome))
    out = Result(worst.outcome, worst.error, worst.detail, worst.culprit,
                 modes={m: r.outcome for m, r in results.items()})
    if worst.outcome == "mismatch":
        out.error = "+".join(m for m, r in results.items() if r.outcome == "mismatch")
    return out


def execute(source: str, path: str, plant: bool = False) -> Result:
    """Run one case script (in the calling process); with `plant`, plant each fault kind in
    it instead (fuzz/plant.py): "mismatch" when the cross-check missed a wrong result, the
    outcome of each kind in `modes`."""
    started = time.perf_counter()
    with open(path, "w") as f:
        f.write(source)
    name = f"_pypto_fuzz_case_{os.getpid()}_{int(started * 1e6)}"
    check = os.environ.get("OPENPTO_CHECK_EXECUTORS")   # the modes set it; put back after
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spec.loader.exec_module(mod)
            except Exception as exc:
                res = Result("internal_error", type(exc).__name__,
                             f"the case script failed to load: {exc}", _culprit(exc))
                return res
            if plant:
                return _planted(mod)
            results = {mode: _run_mode(mod, mode) for mode in MODES}
            if combine(results).outcome == "ok":
                results["timeline"] = _timelines(mod)
    finally:
        os.environ.pop("OPENPTO_CHECK_EXECUTORS", None)
        if check is not None:
            os.environ["OPENPTO_CHECK_EXECUTORS"] = check
        sys.modules.pop(name, None)
    res = combine(results)
    res.seconds = time.perf_counter() - started
    return res


def _serve(conn, workdir: str) -> None:
    """Worker loop: receive (key, source, file name), send back (key, result as dict)."""
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        key, source, fname, plant = msg
        res = execute(source, os.path.join(workdir, fname), plant)
        conn.send((key, res.to_json()))


class _Worker:
    def __init__(self, ctx, workdir: str):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, workdir), daemon=True)
        self.proc.start()
        child.close()
        self.task = None
        self.started = 0.0
        self.cpu0: float | None = None
        self.done = 0

    def submit(self, key, source: str, fname: str, plant: bool = False) -> None:
        self.task = key
        self.started = time.perf_counter()
        self.cpu0 = _cpu_seconds(self.proc.pid)
        self.conn.send((key, source, fname, plant))

    def overrun(self, now: float, timeout: float) -> str | None:
        """Why the running case is over its limit, or None."""
        wall = now - self.started
        cpu = _cpu_seconds(self.proc.pid)
        if self.cpu0 is None or cpu is None:
            return f"over the {timeout:g} s timeout" if wall >= timeout else None
        if cpu - self.cpu0 >= timeout:
            return f"over the {timeout:g} s timeout ({cpu - self.cpu0:.1f} CPU s)"
        if wall >= HANG_FACTOR * timeout:
            return (f"no result after {wall:.0f} s wall ({cpu - self.cpu0:.1f} CPU s): "
                    f"blocked")
        return None

    def stop(self, kill=False) -> None:
        if kill:
            self.proc.kill()
        else:
            with contextlib.suppress(OSError, BrokenPipeError):
                self.conn.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


class Pool:
    """`jobs` worker processes that run case scripts with a per-case timeout; a case that
    overruns is killed (outcome "slow"), a worker that dies gives "crash"."""

    def __init__(self, jobs: int = 1, timeout: float = 10.0, plant: bool = False):
        self.jobs, self.timeout, self.plant = max(1, jobs), timeout, plant
        self.ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.tmp = tempfile.TemporaryDirectory(prefix="pypto_fuzz_")
        self.workers: list[_Worker] = []

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for w in self.workers:
            w.stop(kill=w.task is not None)
        self.workers = []
        self.tmp.cleanup()

    def _spawn(self) -> _Worker:
        return _Worker(self.ctx, self.tmp.name)

    def run(self, cases):
        """Yield (case, Result) for every case, in completion order."""
        pending = list(cases)[::-1]
        while len(self.workers) < min(self.jobs, max(1, len(pending))):
            self.workers.append(self._spawn())
        running: dict = {}
        while pending or running:
            for i, w in enumerate(self.workers):
                if w.task is None and pending:
                    if w.done >= RECYCLE_AFTER:
                        w.stop()
                        w = self.workers[i] = self._spawn()
                    case = pending.pop()
                    w.submit(id(case), script(case), f"{case.name}.py", self.plant)
                    running[id(case)] = case
            busy = [w for w in self.workers if w.task is not None]
            ready = wait([w.conn for w in busy], timeout=POLL)
            now = time.perf_counter()
            for i, w in enumerate(self.workers):
                if w.task is None:
                    continue
                if w.conn in ready:
                    try:
                        key, res = w.conn.recv()
                    except (EOFError, OSError):
                        code = w.proc.exitcode
                        w.stop(kill=True)
                        self.workers[i] = self._spawn()
                        yield running.pop(w.task), Result(
                            "crash", f"exit {code}", f"the worker died (exit code {code})",
                            seconds=now - w.started)
                        continue
                    w.task = None
                    w.done += 1
                    yield running.pop(key), Result(**res)
                elif (why := w.overrun(now, self.timeout)) is not None:
                    key = w.task
                    w.stop(kill=True)
                    self.workers[i] = self._spawn()
                    yield running.pop(key), Result("slow", "timeout", why,
                                                   seconds=now - w.started)

    def run_one(self, case: Case) -> Result:
        return next(iter(self.run([case])))[1]
