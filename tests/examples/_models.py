"""Import a model script of examples/models as a module (the scripts are not a package)."""
import importlib.util
import sys
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parents[2] / "examples" / "models"


def load_model(name: str):
    spec = importlib.util.spec_from_file_location(f"models_{name}", MODELS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module
