"""`@autotune(configs, key)`: the first call with a new key simulates every declared config on
its own arguments (timing only), keeps the fastest for that key and runs once with it; a
config the compiler refuses is skipped; bad declarations are named when decorating."""
import os

import pytest
import torch

import pypto
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.tune.autotune import autotune

from marker_lines import marker_line

HERE = os.path.basename(__file__)


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


SITE = f"vec_tile@{HERE}:{_line('AUTOTUNE_SITE')}"


@autotune(configs=[{SITE: (2, 64)}, {SITE: (64, 256)}, {SITE: (1024, 1024)}], key=["x"])
@pypto.frontend.jit
def _scaled(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)                                # AUTOTUNE_SITE
    y[:] = y + pypto.exp(x)   # accumulates: a second real run would show


def test_the_fastest_config_is_kept_per_key_and_the_call_runs_once():
    x, y = torch.rand(256, 256), torch.ones(256, 256)
    _scaled(x, y)
    torch.testing.assert_close(y, 1.0 + torch.exp(x))       # one real run, with the choice
    ((key, (chosen, times)),) = _scaled.choices.items()
    assert key == (("x", ((256, 256), "DT_FP32")),)
    assert times[2] is None                                  # 4 MiB tile: refused (UB)
    assert chosen == 1 and times[1] < times[0]               # the bigger tile is faster
    assert _scaled.last_run.stats["tasks"] == 4              # [64, 256] tiles of 256 x 256
    x2, y2 = torch.rand(256, 256), torch.zeros(256, 256)
    _scaled(x2, y2)                                          # same key: no new simulation
    assert len(_scaled.choices) == 1
    _scaled(torch.rand(64, 256), torch.zeros(64, 256))       # a new key
    assert len(_scaled.choices) == 2


def test_bad_declarations_are_named():
    with pytest.raises(PyptoValueError, match="unknown knob 'stitch_max'"):
        autotune(configs=[{"stitch_max": 8}])
    with pytest.raises(PyptoValueError, match="at least one"):
        autotune(configs=[])
    with pytest.raises(PyptoTypeError, match="above @pypto.frontend.jit"):
        autotune(configs=[{"stitch_function_max_num": 8}])(lambda x: x)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        y[:] = x
    with pytest.raises(PyptoValueError, match=r"key names \['z'\]"):
        autotune(configs=[{"stitch_function_max_num": 8}], key=["z"])(k)
