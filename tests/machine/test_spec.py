"""Machine presets load with their sourced numbers, inherit from a2a3, and are selectable."""
from pathlib import Path

import pytest
import torch

import pypto
from pypto.machine import spec as spec_module
from pypto.machine.spec import load, presets


def test_presets_and_inheritance():
    assert presets() == ["910b1", "910b3", "910b4", "a2a3"]
    a2, b4 = load("a2a3"), load("910b4")
    assert (a2.aic, a2.aiv, a2.clock_mhz, a2.ub, a2.l1) == (24, 48, 1800, 196608, 524288)
    assert (b4.aic, b4.aiv, b4.clock_mhz) == (20, 40, 1500)
    assert b4.ub == a2.ub and b4.memory["l2_capacity"] == 176160768
    assert load("910b1").clock_mhz == 1850


def test_unknown_preset_names_the_choices():
    with pytest.raises(pypto.PyptoError, match="available: 910b1, 910b3, 910b4, a2a3"):
        load("910c")


def test_a_custom_machine_missing_numbers_names_them(tmp_path):
    """A machine file without `base` must give every number; a missing one is named with the
    file, not a KeyError from inside the simulator. With `base` it inherits them."""
    full = (tmp_path / "full.toml")
    text = (Path(spec_module.__file__).parent / "a2a3.toml").read_text()
    full.write_text(text.replace("completion_cycles = 324", "").replace(
        "edge_cycles = 120", ""))
    with pytest.raises(pypto.PyptoError, match=r"lacks aicpu\.completion_cycles, "
                                               r"aicpu\.edge_cycles;.*base = \"a2a3\""):
        load(str(full))
    based = tmp_path / "based.toml"
    based.write_text('base = "a2a3"\nname = "mine"\n[aicpu]\ncompletion_cycles = 0\n')
    assert load(str(based)).aicpu["completion_cycles"] == 0


def test_kernel_selects_the_machine():
    """runtime_options["machine"] reaches the simulator: fewer cores, lower clock."""
    def run(machine):
        @pypto.frontend.jit(runtime_options={"machine": machine})
        def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 512)
            y[:] = pypto.exp(x) + 1.0
        x = torch.rand(512, 512)
        k(x, torch.zeros_like(x))
        return k.last_run
    a2, b4 = run("a2a3"), run("910b4")
    assert (a2.aiv, b4.aiv, b4.clock_mhz) == (48, 40, 1500)
    assert b4.stats["kernel_cycles"] / b4.clock_mhz > a2.stats["kernel_cycles"] / a2.clock_mhz
