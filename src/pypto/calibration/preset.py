"""A calibration written as a machine preset TOML: the base machine plus the fitted constants.

The file inherits every number from the machine calibrated (`base = "a2a3"`, or the TOML it
started from) and overrides the fitted constants, each with a comment for people (its old
value, the boards, its uncertainty). The same facts are data in `[calibration.constants]`,
where the constants that stayed (not observed, under-determined) say why. Load it with
`runtime_options={"machine": "path.toml"}` or `$OPENPTO_MACHINE=path.toml`.
"""
from __future__ import annotations

import datetime
import json
import math
import os
from typing import Any

from pypto._version import __version__
from pypto.calibration.calibrate import Calibration


def preset_text(cal: Calibration, base: str, name: str) -> str:
    """The TOML text of `cal` on top of `base` (a preset name or a TOML path as the file will
    name it)."""
    boards = ", ".join(os.path.basename(b) for b in cal.boards) or "the given traces"
    lines = [f"# Machine calibrated by `pypto-toolkit calibrate` (openpto {__version__}) on "
             f"{datetime.date.today().isoformat()}",
             f"# from: {boards}. Numbers not below are {base}'s.",
             f"base = {_value(base)}", f"name = {_value(name)}",
             f"description = {_value(f'{base} calibrated on {boards}')}"]
    sections: dict[str, list[str]] = {}
    for constant, value in cal.changed.items():
        *path, key = constant.split(".")
        u = cal.uncertainty[constant]
        sections.setdefault(".".join(path), []).append(
            f"{key} = {_value(value)}   # was {_value(cal.old[constant])}; +-{_percent(u)} "
            f"(1 sigma)")
    for section, entries in sections.items():
        lines += ["", f"[{section}]", *entries]
    lines += ["", "[calibration]", f"boards = {_value([os.path.basename(b) for b in cal.boards])}",
              f"date = {_value(datetime.date.today().isoformat())}"]
    for constant in cal.names:
        fitted = constant in cal.changed
        lines += ["", f"[calibration.constants.{_value(constant)}]",
                  f"value = {_value(cal.new[constant] if fitted else cal.old[constant])}",
                  f"old = {_value(cal.old[constant])}",
                  f"origin = {_value(f'calibrated on: {boards}' if fitted else cal.status[constant])}",
                  f"uncertainty = {_value(cal.uncertainty[constant])}",
                  f"status = {_value(cal.status[constant])}"]
    return "\n".join(lines) + "\n"


def write_preset(cal: Calibration, path: str, machine: str) -> str:
    """Write `cal` to `path` on top of `machine` (a preset name or a TOML path); -> path."""
    base = machine
    if machine.endswith(".toml"):
        base = os.path.relpath(os.path.abspath(machine), os.path.dirname(os.path.abspath(path)))
    name = f"{os.path.splitext(os.path.basename(machine))[0]}-calibrated"
    with open(path, "w", encoding="utf-8") as f:
        f.write(preset_text(cal, base, name))
    return path


def _percent(u: float) -> str:
    return "unknown" if not math.isfinite(u) else f"{100 * u:.2g} %"


def _value(v: Any) -> str:
    """A TOML value: strings and arrays as JSON writes them (valid TOML for these), numbers
    in full, inf as TOML spells it."""
    if isinstance(v, float) and not math.isfinite(v):
        return "inf" if v > 0 else "-inf" if v < 0 else "nan"
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v, ensure_ascii=False)
