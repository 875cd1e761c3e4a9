"""Old import paths of modules that moved, still importable, with a warning naming the new one.

Users' scripts import tuning from where the README once put it (`from pypto.toolkit.autotune
import autotune`, `pypto.toolkit.tune_db.TuneDB`); when tuning moved above the driver into
`pypto.tune` (and the command line to `pypto.cli`), those imports must keep working. An import
finder on `sys.meta_path` answers each old name with a module holding the new module's names
(the same objects), after a `DeprecationWarning`. Nothing is imported until an old name is.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any, Sequence

MOVED = {
    "pypto.toolkit.whatif": "pypto.tune.whatif",
    "pypto.toolkit.tune_space": "pypto.tune.space",
    "pypto.toolkit.tune_search": "pypto.tune.search",
    "pypto.toolkit.tune_eval": "pypto.tune.backends",
    "pypto.toolkit.tune_db": "pypto.tune.db",
    "pypto.toolkit.tune_optuna": "pypto.tune.optuna_search",
    "pypto.toolkit.autotune": "pypto.tune.autotune",
    "pypto.toolkit.tune_report": "pypto.tune.report",
    "pypto.toolkit.tuning": "pypto.tune.cases",
    "pypto.toolkit.cli": "pypto.cli",
}
_OWN = frozenset({"__name__", "__spec__", "__loader__", "__package__", "__file__", "__path__",
                  "__cached__", "__builtins__"})


class _Alias(importlib.abc.Loader):
    """Loads an old name as a module holding the new module's names."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec: Any) -> None:
        return None   # (a plain module)

    def exec_module(self, module: ModuleType) -> None:
        warnings.warn(f"{module.__name__} moved to {self.new}; import it from there",
                      DeprecationWarning, stacklevel=2)
        real = importlib.import_module(self.new)
        module.__dict__.update({k: v for k, v in vars(real).items() if k not in _OWN})
        module.__doc__ = real.__doc__


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: Any = None) -> Any:
        new = MOVED.get(name)
        return importlib.util.spec_from_loader(name, _Alias(new)) if new else None


def install() -> None:
    """Answer the old names (once per process)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
