"""Builds the compiled simulator core (`pypto.machine._simcore`, C++17 via pybind11).

Everything else is in pyproject.toml. The extension is optional: without a C++ compiler the
install goes on and the Python model runs (`pypto.machine.compiled` warns once how to build
it). Why C++ with pybind11 and setuptools: docs/architecture.md ("The compiled simulator core").
"""
import hashlib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.extension import Extension

try:
    import pybind11
    INCLUDE = [pybind11.get_include()]
except ImportError:   # a build without its build requirements: the Python model only
    INCLUDE = None


class BuildSimcore(build_ext):
    """Per-compiler flags. NOTE: the core must compute every float exactly as the Python model
    does, so floating-point contraction (fused multiply-add, which arm64 and x86 with FMA would
    use) is off and no fast-math flag is ever set."""

    def build_extensions(self):
        msvc = self.compiler.compiler_type == "msvc"
        for ext in self.extensions:
            ext.extra_compile_args = (["/std:c++17", "/O2", "/fp:precise"] if msvc else
                                      ["-std=c++17", "-O2", "-g0", "-ffp-contract=off",
                                       "-fvisibility=hidden"])
        super().build_extensions()

    def run(self):
        try:
            super().run()
        except Exception as error:   # noqa: BLE001 - any failure: install without the core
            print(f"openpto: the compiled simulator core was not built ({error}); the Python "
                  f"model will run instead")


SOURCE = "src/pypto/machine/_simcore.cpp"
# the source's hash, compiled in: an extension built from an older source is stale (the
# Python model then runs; `pypto.machine.compiled` says to rebuild)
DIGEST = hashlib.sha256(Path(__file__).with_name("src").joinpath(
    "pypto/machine/_simcore.cpp").read_bytes()).hexdigest()[:16]
EXTENSIONS = [] if INCLUDE is None else [
    Extension("pypto.machine._simcore", [SOURCE], include_dirs=INCLUDE, language="c++",
              define_macros=[("SIMCORE_SOURCE", f'"{DIGEST}"')], optional=True)]

setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildSimcore})
