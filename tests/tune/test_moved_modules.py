"""Scripts that import tuning from its old home (`pypto.toolkit.autotune`, ...) keep working,
warned where it moved (`moved_modules`)."""
import importlib
import sys

import pytest

import pypto  # noqa: F401  (installs the finder)
from pypto.moved_modules import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_import_path_gives_the_new_modules_names(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        module = importlib.import_module(old)
    new = importlib.import_module(MOVED[old])
    public = [n for n in vars(new) if not n.startswith("__")]
    assert public and all(getattr(module, n) is getattr(new, n) for n in public)


def test_the_readmes_old_autotune_import_still_works():
    sys.modules.pop("pypto.toolkit.autotune", None)
    with pytest.warns(DeprecationWarning):
        from pypto.toolkit.autotune import autotune
    from pypto.tune.autotune import autotune as moved
    assert autotune is moved


def test_a_name_that_never_existed_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pypto.toolkit.no_such_module")
