"""The newest run under `output/`: marking it when a run is written, finding it for the toolkit.

Kernels write each run to `output/output_<YYYYMMDD_HHMMSS_usec_pid>/`, names a user cannot
guess. `mark_latest` points `output/latest` at the run just written (a symlink, replaced
atomically) so `output/latest/swimlane.html` is always the last run; where a symlink cannot be
made (Windows without the privilege, some network drives) it writes `output/LATEST`, a text
file holding the folder's name. `newest_run` answers "which run did the user mean" for
`pypto-toolkit view|analyze|graph output` (or no argument: `./output`): a run folder or a file
is meant as given; a folder of runs means its newest run that holds what the command reads.
"""
from __future__ import annotations

import json
import os
import re
from typing import Callable

from pypto.toolkit.errors import ToolkitError

DEFAULT_ROOT = "output"
RUN_PREFIX = "output_"
LATEST_LINK = "latest"
LATEST_FILE = "LATEST"
SWIMLANE = "merged_swimlane.json"
_MAKE_ONE = "make one with e.g. `python examples/00_hello_world/hello_world.py --swimlane`"


def mark_latest(folder: str) -> str:
    """Point `<parent>/latest` at `folder` (else write `<parent>/LATEST`); the marker's path."""
    parent, name = os.path.split(os.path.abspath(folder))
    link = os.path.join(parent, LATEST_LINK)
    tmp = os.path.join(parent, f".{LATEST_LINK}.{os.getpid()}.tmp")
    try:
        _remove(tmp)
        os.symlink(name, tmp, target_is_directory=True)
        # NOTE: rename over the old link is atomic: a reader never sees no `latest`, and two
        # processes finishing together leave one of their runs, never a broken link
        os.replace(tmp, link)
        return link
    except (OSError, NotImplementedError):
        _remove(tmp)
    text = os.path.join(parent, LATEST_FILE)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(name + "\n")
    os.replace(tmp, text)
    return text


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def has_swimlane(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, SWIMLANE))


def has_compile_dumps(folder: str) -> bool:
    """The per-stage dumps of `compile_debug_mode=1` (what `pypto-toolkit graph` reads)."""
    # NOTE: imported here: the IR is a heavy import and `--help` must stay instant
    from pypto.ir.dump import CODEGEN_PASS, TENSOR_PASS, TILE_PASS
    prefixes = tuple(f"{p}_" for p in (TENSOR_PASS, TILE_PASS, CODEGEN_PASS))
    try:
        return any(n.startswith(prefixes) and n.endswith(".json") for n in os.listdir(folder))
    except OSError:
        return False


def newest_run(path: str | None, holds: Callable[[str], bool] = has_swimlane,
               kernel: str | None = None) -> str:
    """The run folder the user meant by `path` (None: `./output`). A file, a folder that
    `holds` what the command reads, or one without subfolders is returned as given (the command
    names what is missing); a folder of runs gives its newest run that `holds` it (by
    `output_<timestamp>` name; else `latest`/`LATEST`; else by mtime), of `kernel` when given
    (a script that calls several kernels writes a run each). ToolkitError when the folder of
    runs has none."""
    root = DEFAULT_ROOT if path is None else path
    if path is not None and (not os.path.isdir(root) or holds(root)):
        return path                     # a file, a run folder, or a bad path the command names
    if not os.path.isdir(root):
        raise ToolkitError(f"no run given and no ./{DEFAULT_ROOT} folder here; {_MAKE_ONE}")
    runs = _runs_newest_first(root)
    if path is not None and not runs:
        return path                     # a run folder lacking the file: the command names it
    held = [run for run in runs if holds(run)]
    if kernel is not None:
        seen = [kernel_of(run) for run in held]
        if kernel not in seen:
            names = ", ".join(sorted({k for k in seen if k})) or "none named"
            raise ToolkitError(f"{root}: no run of kernel '{kernel}' (kernels there: {names})")
        return held[seen.index(kernel)]
    if held:
        return held[0]
    what = "compile dumps" if holds is has_compile_dumps else SWIMLANE
    raise ToolkitError(f"{root}: no run folder holding {what}; {_MAKE_ONE}")


_KERNEL = re.compile(r'"kernel"\s*:\s*"((?:[^"\\]|\\.)*)"')


def kernel_of(run: str) -> str | None:
    """The kernel a run folder ran, from the head of its program.json (None: not said)."""
    try:
        with open(os.path.join(run, "program.json"), encoding="utf-8") as f:
            head = f.read(4096)
    except OSError:
        return None
    found = _KERNEL.search(head)
    return json.loads(f'"{found.group(1)}"') if found else None


def _runs_newest_first(root: str) -> list[str]:
    subdirs = [os.path.normpath(os.path.join(root, n)) for n in sorted(os.listdir(root))
               if n != LATEST_LINK and os.path.isdir(os.path.join(root, n))]
    named = [d for d in subdirs if os.path.basename(d).startswith(RUN_PREFIX)]
    # the names are timestamps: name order is time order, across processes
    runs = sorted(named, reverse=True)
    marked = _marked(root)
    if marked and marked not in runs:
        runs.append(marked)
    others = [d for d in subdirs if d not in runs]
    runs += sorted(others, key=os.path.getmtime, reverse=True)
    return runs


def _marked(root: str) -> str | None:
    """The run `latest` or `LATEST` names, if it still exists."""
    link = os.path.join(root, LATEST_LINK)
    if os.path.islink(link):
        target = os.path.join(root, os.readlink(link))
    else:
        try:
            with open(os.path.join(root, LATEST_FILE), encoding="utf-8") as f:
                target = os.path.join(root, f.read().strip())
        except OSError:
            return None
    return os.path.normpath(target) if os.path.isdir(target) else None
