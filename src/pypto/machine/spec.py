"""`MachineSpec`: the numbers of one simulated device, loaded from a TOML preset.

One spec object is shared by the compiler (buffer capacities, partition latency estimates) and
the simulator, so a capacity error and a simulated timeline always describe the same machine.
Presets live beside this file (`a2a3.toml`, ...); every number there names its source.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from pypto.errors import PyptoValueError

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class MachineSpec:
    name: str
    clock_mhz: int
    aic: int
    aiv: int
    ub: int
    l1: int
    l0a: int
    l0b: int
    l0c: int
    vector: dict[str, Any]
    cube: dict[str, Any]
    partition: dict[str, int]
    dma: dict[str, dict[str, float]]
    memory: dict[str, float]
    task: dict[str, float]
    aicpu: dict[str, Any]

    def buffer(self, level: str) -> int:
        """Capacity in bytes of a buffer level ('UB', 'L1', 'L0A', 'L0B', 'L0C')."""
        return getattr(self, level.lower())

    def vector_cycles(self, op_class: str, nbytes: float) -> float:
        """Cycles of one vector instruction over `nbytes` per operand (hw_model 3.4)."""
        v = self.vector
        repeats = -(-int(nbytes) // v["bytes_per_repeat"]) if nbytes > 0 else 0
        cpr = v["cycles_per_repeat"].get(op_class, v["cycles_per_repeat"]["binary"])
        return v["issue_overhead"] + repeats * cpr + v["op_sync_overhead"]


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) \
            else v
    return out


def _read(path: str) -> dict:
    """A preset's table; `base = "name"` (a preset, or a TOML path relative to this file)
    inherits every number not overridden."""
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    parent = raw.pop("base", None)
    if parent is None:
        return raw
    where = os.path.join(os.path.dirname(os.path.abspath(path)), parent) \
        if parent.endswith(".toml") else os.path.join(_HERE, f"{parent}.toml")
    if not os.path.exists(where):
        raise PyptoValueError(f"machine '{path}': its base '{parent}' does not exist")
    return _merge(_read(where), raw)


# tables whose entries are looked up with a default: a machine may list only some of them
_OPTIONAL_ENTRIES = {"vector.cycles_per_repeat", "cube.k0"}


def _missing(reference: dict, raw: dict, prefix: str = "") -> list[str]:
    """The dotted keys the reference preset has and `raw` lacks (the simulator reads them all)."""
    out = []
    for key, value in reference.items():
        name = f"{prefix}{key}"
        if key not in raw:
            if key != "description":
                out.append(name)
        elif isinstance(value, dict) and isinstance(raw[key], dict) \
                and name not in _OPTIONAL_ENTRIES:
            out += _missing(value, raw[key], name + ".")
    return out


@functools.lru_cache(maxsize=1)
def _reference() -> dict:
    """a2a3.toml's table: the numbers every machine gives (read only, never handed out)."""
    return _read(os.path.join(_HERE, "a2a3.toml"))


def presets() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(_HERE) if f.endswith(".toml"))


def resolve(name: str | None) -> str:
    """The machine `load(name)` loads: `name`, else $OPENPTO_MACHINE, else "a2a3"."""
    return name or os.environ.get("OPENPTO_MACHINE") or "a2a3"


def load(name: str | None = None) -> MachineSpec:
    """The preset `name` (see `presets()`; default: $OPENPTO_MACHINE or "a2a3"); an unknown
    name lists the available ones."""
    return _load(resolve(name))


@functools.lru_cache(maxsize=None)
def _load(name: str) -> MachineSpec:
    path = _path(name)
    return from_table(_read(path), path)


def _path(name: str) -> str:
    """The file of machine `name`: a path to a TOML file is a custom machine (it may inherit
    a preset with `base = ...`), any other name a preset; the error names what is missing."""
    path = name if name.endswith(".toml") else os.path.join(_HERE, f"{name}.toml")
    if name.endswith(".toml") and not os.path.exists(path):
        raise PyptoValueError(f"machine file '{name}' does not exist")
    if not os.path.exists(path):
        raise PyptoValueError(f"unknown machine preset '{name}'; available: "
                              f"{', '.join(presets())}")
    return path


def table(name: str | None = None) -> dict:
    """The numbers of preset `name` (or a TOML path) as nested tables, a preset it inherits
    (`base = ...`) merged in: what `from_table` takes (a calibration edits a copy)."""
    return _read(_path(resolve(name)))


def from_table(raw: dict, where: str = "<table>") -> MachineSpec:
    """A spec from nested tables holding every number of a2a3.toml (`where` names them in
    the error when some are missing)."""
    missing = _missing(_reference(), raw)
    if missing:
        raise PyptoValueError(
            f"machine '{where}' lacks {', '.join(missing)}; give every number of a2a3.toml, or "
            f"inherit the others with base = \"a2a3\" at the top of the file")
    b = raw["buffers"]
    return MachineSpec(raw["name"], raw["clock_mhz"], raw["cores"]["aic"], raw["cores"]["aiv"],
                       b["ub"], b["l1"], b["l0a"], b["l0b"], b["l0c"], raw["vector"],
                       raw["cube"], raw["partition"], raw["dma"], raw["memory"], raw["task"],
                       raw["aicpu"])
