"""The tuning database: the best knob setting found for a kernel, kept across processes.

SQLite (stdlib), one table. An entry is keyed by what its result depends on:
- the kernel: its name and the hash of its source FILE (call-site knobs name lines of that
  file, so any edit of it makes the entry stale);
- the arguments' shape bucket: per tensor argument its dtype and each dim rounded up to a power
  of two (calls of similar size share a setting, as Triton's `key` does), plus the non-tensor
  arguments' values;
- the machine preset (`MachineSpec.name`) and a fingerprint of its numbers;
- the simulator: the package version and a hash of the sources the timing depends on
  (machine/, passes/, runtime/task_cost.py, runtime/transfer_shape.py).

`lookup` finds the entry of the same kernel name, bucket and machine preset and says whether it
is fresh; a stale one (source, numbers or simulator changed) is returned with the reason, never
as fresh. `kernel.tune(db=...)` answers from a fresh entry with zero evaluations and stores
what it finds; a call with runtime_options `use_tuned` (or PYPTO_TUNED=1) applies a fresh
entry's setting and warns about a stale one. `export` / `import_` move entries as JSON.
The file is `PYPTO_TUNE_DB`, else `$XDG_CACHE_HOME/openpto/tune.sqlite3` (~/.cache/...).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from pypto._version import __version__
from pypto.errors import PyptoValueError

SCHEMA = "openpto.tune/1"
_PACKAGE = Path(__file__).resolve().parents[1]
_TIMING_SOURCES = ("machine", "passes", "runtime/task_cost.py", "runtime/transfer_shape.py")
_KEY_COLUMNS = ("kernel", "bucket", "machine", "source", "spec", "simulator")
_COLUMNS = _KEY_COLUMNS + ("metric", "config", "value_us", "baseline_us", "evaluations",
                           "created")


def default_path() -> str:
    explicit = os.environ.get("PYPTO_TUNE_DB")
    if explicit:
        return explicit
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "openpto", "tune.sqlite3")


@functools.lru_cache(maxsize=1)
def simulator_version() -> str:
    """The package version and a hash of the sources the simulated timing depends on."""
    h = hashlib.sha256()
    for name in _TIMING_SOURCES:
        root = _PACKAGE / name
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            h.update(path.relative_to(_PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:16]}"


def source_hash(func: Any) -> str:
    """The hash of the file that defines `func` (its call-site lines included)."""
    try:
        path = inspect.getsourcefile(func)
        data = Path(path).read_bytes() if path else inspect.getsource(func).encode()
    except (OSError, TypeError):
        raise PyptoValueError(f"kernel '{func.__name__}': its source is not available, so a "
                              f"tuning entry could not be checked against it") from None
    return hashlib.sha256(data).hexdigest()[:16]


def spec_fingerprint(spec: Any) -> str:
    return hashlib.sha256(repr(spec).encode()).hexdigest()[:16]


def bucket(bound: Iterable[Any], others: dict[str, Any]) -> str:
    """The arguments' shape bucket: dtype and power-of-two-rounded dims per tensor."""
    parts = []
    for b in bound:
        dims = "x".join(str(1 << max(0, int(d) - 1).bit_length()) for d in b.array.shape)
        parts.append(f"{b.name}:{b.dtype.name}[{dims}]")
    parts += [f"{k}={v!r}" for k, v in sorted(others.items())]
    return ";".join(parts)


@dataclass(frozen=True)
class Key:
    """What an entry for one kernel call is looked up and checked by."""

    kernel: str
    bucket: str
    machine: str
    source: str
    spec: str
    simulator: str

    @classmethod
    def of_call(cls, kernel: Any, bound: list, others: dict, spec: Any) -> "Key":
        return cls(kernel.__name__, bucket(bound, others), spec.name,
                   source_hash(kernel.func), spec_fingerprint(spec), simulator_version())

    @classmethod
    def of_last_call(cls, kernel: Any) -> "Key":
        args, kwargs = kernel.last_call
        bound, others, _ = kernel.bind(args, kwargs)
        return cls.of_call(kernel, bound, others, kernel.last_compiled.spec)


@dataclass
class Entry:
    """One stored result under its `key`; `stale` says why it no longer applies ("" when
    fresh)."""

    key: Key
    metric: str
    config: dict[str, Any]
    value_us: float
    baseline_us: float
    evaluations: int
    created: float
    stale: str = ""

    def row(self) -> dict[str, Any]:
        """The entry as the table's columns."""
        return {**{c: getattr(self.key, c) for c in _KEY_COLUMNS},
                **{c: getattr(self, c) for c in _COLUMNS[len(_KEY_COLUMNS):]}}


class TuneDB:
    """The database file at `path` (created on first write)."""

    def __init__(self, path: str | None = None):
        self.path = path or default_path()

    def _connect(self) -> sqlite3.Connection:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        con = sqlite3.connect(self.path)
        con.execute(f"CREATE TABLE IF NOT EXISTS entries ({', '.join(_COLUMNS)}, "
                    f"PRIMARY KEY (kernel, bucket, machine, metric))")
        return con

    def store(self, key: Key, metric: str, config: dict[str, Any], value_us: float,
              baseline_us: float, evaluations: int) -> None:
        row = (key.kernel, key.bucket, key.machine, key.source, key.spec, key.simulator,
               metric, repr(config), value_us, baseline_us, evaluations, time.time())
        with self._connect() as con:
            con.execute(f"INSERT OR REPLACE INTO entries VALUES ({', '.join('?' * len(row))})",
                        row)

    def lookup(self, key: Key, metric: str = "kernel_us") -> Entry | None:
        """The entry for `key` (fresh, or stale with the reason), or None."""
        if not os.path.exists(self.path):
            return None
        with self._connect() as con:
            row = con.execute("SELECT * FROM entries WHERE kernel=? AND bucket=? AND machine=? "
                              "AND metric=?", (key.kernel, key.bucket, key.machine, metric)
                              ).fetchone()
        if row is None:
            return None
        entry = _entry(row)
        stored = entry.key
        changed = [what for what, ours, theirs in (
            ("the kernel's source file changed", key.source, stored.source),
            ("the machine's numbers changed", key.spec, stored.spec),
            (f"the simulator changed ({stored.simulator} -> {key.simulator})", key.simulator,
             stored.simulator)) if ours != theirs]
        entry.stale = "; ".join(changed)
        return entry

    def entries(self) -> list[Entry]:
        if not os.path.exists(self.path):
            return []
        with self._connect() as con:
            return [_entry(r) for r in con.execute("SELECT * FROM entries ORDER BY kernel")]

    def export(self, path: str) -> int:
        """Every entry to a JSON file; how many."""
        rows = [e.row() for e in self.entries()]
        for r in rows:
            r["config"] = repr(r["config"])
        Path(path).write_text(json.dumps({"schema": SCHEMA, "entries": rows}, indent=1))
        return len(rows)

    def import_(self, path: str) -> int:
        """Entries from a JSON file written by `export` (replacing same keys); how many."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise PyptoValueError(f"{path}: not a tuning export ({e})") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise PyptoValueError(f"{path}: not a tuning export (schema {SCHEMA} expected)")
        rows = data.get("entries", [])
        with self._connect() as con:
            for r in rows:
                missing = [c for c in _COLUMNS if c not in r]
                if missing:
                    raise PyptoValueError(f"{path}: an entry lacks {', '.join(missing)}")
                con.execute(f"INSERT OR REPLACE INTO entries VALUES "
                            f"({', '.join('?' * len(_COLUMNS))})", [r[c] for c in _COLUMNS])
        return len(rows)


def _entry(row: tuple) -> Entry:
    values = dict(zip(_COLUMNS, row))
    key = Key(**{c: values.pop(c) for c in _KEY_COLUMNS})
    values["config"] = ast.literal_eval(values["config"])
    return Entry(key, **values)


def tuned_setting(kernel: Any, bound: list, others: dict, spec: Any) -> dict | None:
    """The driver's "tuned" entry (runtime_options use_tuned, PYPTO_TUNED=1): the knob setting
    of the database's fresh entry for this call, or None; a stale entry is reported and not
    applied."""
    import warnings

    from pypto.errors import PyptoWarning
    entry = TuneDB().lookup(Key.of_call(kernel, bound, others, spec))
    if entry is not None and entry.stale:
        warnings.warn(PyptoWarning(
            f"kernel '{kernel.__name__}': the tuning database's entry for these shapes is "
            f"stale ({entry.stale}), so it is not applied; run kernel.tune(db=True) again"),
            stacklevel=4)
    config = entry.config if entry is not None and not entry.stale else None
    _say(kernel, bound, others, config)
    return config


_SAID: set[tuple] = set()   # use_tuned outcomes already printed


def _say(kernel: Any, bound: list, others: dict, config: dict | None) -> None:
    """use_tuned is never silent: once per kernel, call signature and database, whether the
    database's setting was applied (and which) or no entry matched."""
    shapes = ", ".join(f"{b.name} {list(b.array.shape)} {b.dtype.name}" for b in bound)
    said = (id(kernel), shapes, repr(others), repr(config), os.environ.get("PYPTO_TUNE_DB"))
    if said in _SAID:
        return
    _SAID.add(said)
    what = (f"applied the tuning database's setting {config}" if config is not None else
            "no fresh tuning database entry matches, so it runs as written")
    print(f"[pypto] kernel '{kernel.__name__}' ({shapes}): use_tuned: {what}", file=sys.stderr)
