"""What-if and the tuner on the loop, scope and cache-policy knobs (issue 18): an
`unroll@FILE:LINE` knob changes how many root instances a loop runs, `sg_scope@FILE:LINE` which
ops share a subgraph, `cache_policy@PARAM` what passes through L2; the search space finds each
site with its current value, and a search over them finds the better setting."""
import os
import textwrap

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError
from pypto.frontend import knobs
from pypto import cli
from pypto.tune.whatif import script_calls
from pypto.tune.space import UNROLLED_OPS, search_space

from marker_lines import marker_line

HERE = os.path.basename(__file__)
F32 = pypto.DT_FP32


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit
def _rows(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    for b in pypto.loop(x.shape[0] // 16, name="ROWS"):              # LOOP_SITE
        y[b * 16:(b + 1) * 16, :] = pypto.exp(x[b * 16:(b + 1) * 16, :])


def _rows_called(blocks: int = 64):
    x = torch.rand(16 * blocks, 64)
    _rows(x, torch.zeros_like(x))


def test_an_unroll_knob_changes_the_root_instances_not_the_tasks():
    _rows_called()
    site = f"unroll@{HERE}:{_line('LOOP_SITE')}"
    w = _rows.whatif({site: [16, 4, 1]})
    assert (w.before.stats["instances"], w.after.stats["instances"]) == (64, 4)
    assert w.before.stats["tasks"] == w.after.stats["tasks"] == 64
    assert w.knobs == [f"{site}=(16, 4, 1)"]
    with pytest.raises(PyptoValueError, match=rf"knob '{site}': unroll_list \[16, 4\] must "
                                              r"contain 1"):
        _rows.whatif({site: [16, 4]})


def test_the_space_has_the_loop_with_its_current_list_and_a_search_finds_a_better_one():
    _rows_called()
    dims = {d.knob: d for d in search_space(_rows)}
    unroll = dims[f"unroll@{HERE}:{_line('LOOP_SITE')}"]
    assert unroll.current is None and unroll.candidates[0] is None
    # a dynamic trip count: each single factor comes with the 1 that takes the remainder
    assert (16, 1) in unroll.candidates and (64, 16, 4, 1) in unroll.candidates
    assert not any(k.startswith(("sg_scope", "cache_policy")) for k in dims)
    result = _rows.tune(dimensions=[unroll], metric="e2e_us", progress=False)
    assert result.best.config[unroll.knob] is not None
    assert result.best.value_us < result.baseline.value_us


@pypto.frontend.jit
def _big_body(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    for b in pypto.loop(x.shape[0] // 16, name="ROWS"):              # BIG_LOOP_SITE
        t = x[b * 16:(b + 1) * 16, :]
        for _ in range(60):   # a long chain: 60+ ops an iteration
            t = pypto.exp(t) * 0.5
        y[b * 16:(b + 1) * 16, :] = t


def test_a_big_loop_body_is_not_unrolled_past_the_traced_ops_limit():
    """Unrolling copies the body into the trace: a candidate may hold at most UNROLLED_OPS
    ops, so a 120-op body gets factors 2 and 4 (the small body above gets up to 64)."""
    x = torch.rand(16 * 64, 64)
    _big_body(x, torch.zeros_like(x))
    dims = {d.knob: d for d in search_space(_big_body)}
    unroll = dims[f"unroll@{HERE}:{_line('BIG_LOOP_SITE')}"]
    factors = {max(c) for c in unroll.candidates if c is not None}
    ops = next(lp for lp in _big_body.last_program.loops()
               if lp.name == "ROWS").ops_per_iteration()
    assert ops >= 120 and factors == {f for f in (2, 4, 8) if f * ops <= UNROLLED_OPS}
    assert "within 512 traced ops" in unroll.rule


S, H = 32, 1024


@pypto.frontend.jit
def _chain(x: pypto.Tensor([S, H], F32), y: pypto.Tensor([S, H], F32)):
    pypto.set_vec_tile_shapes(16, 1024)
    pypto.set_pass_options(sg_set_scope=-1)                           # SCOPE_SITE
    t = x
    for _ in range(12):
        t = t * 0.5 + 0.25
    y[:] = t
    pypto.set_pass_options(sg_set_scope=-1)                           # RESET_SITE


def test_a_fresh_scope_at_a_minus_1_site_merges_the_chain_and_the_tuner_finds_it():
    """Tuning case 09 in small: automatic merging cuts each tile's chain in two; a scope id
    no op uses, put at the chain's sg_set_scope=-1 call, keeps it whole."""
    x = torch.rand(S, H)
    _chain(x, torch.zeros_like(x))
    dims = {d.knob: d for d in search_space(_chain)}
    scope, reset = (dims[f"sg_scope@{HERE}:{_line(m)}"] for m in ("SCOPE_SITE", "RESET_SITE"))
    assert (scope.current, scope.candidates) == (-1, (-1, 1))
    assert reset.candidates == (-1, 2)   # each site its own fresh id
    w = _chain.whatif({scope.knob: 1})
    assert w.after.stats["tasks"] < w.before.stats["tasks"] and w.speedup > 1
    result = _chain.tune(dimensions=[scope], progress=False)
    assert result.best.config == {scope.knob: 1}


def _streamed(tmp_path, l2_bytes: int):
    """A kernel that reads x twice and streams w into big between the reads, called on a
    machine whose L2 holds `l2_bytes`."""
    machine = tmp_path / f"l2_{l2_bytes}.toml"
    machine.write_text(f'base = "a2a3"\nname = "l2_{l2_bytes}"\n[memory]\n'
                       f'l2_capacity = {l2_bytes}\n')

    @pypto.frontend.jit(runtime_options={"machine": str(machine)})
    def stream(x: pypto.Tensor([256, 1024], F32), w: pypto.Tensor([1024, 1024], F32),
               y1: pypto.Tensor([256, 1024], F32), big: pypto.Tensor([1024, 1024], F32),
               y2: pypto.Tensor([256, 1024], F32)):
        pypto.set_vec_tile_shapes(16, 1024)
        y1[:] = pypto.exp(x)
        big[:] = w * 2.0
        y2[:] = x + 1.0

    x, w = torch.rand(256, 1024), torch.rand(1024, 1024)
    stream(x, w, torch.zeros(256, 1024), torch.zeros(1024, 1024), torch.zeros(256, 1024))
    return stream


def test_cache_policy_is_a_dimension_only_when_the_tensors_outgrow_l2(tmp_path):
    """Tuning case 14d in small (5 MiB of tensors): with a 2 MiB L2 the streamed w and big
    evict x before its second read unless they bypass L2; with 64 MiB everything fits."""
    stream = _streamed(tmp_path, 2 << 20)
    dims = {d.knob: d for d in search_space(stream)}
    assert [k for k in dims if k.startswith("cache_policy")] == \
        [f"cache_policy@{p}" for p in ("x", "w", "y1", "big", "y2")]
    assert dims["cache_policy@w"].candidates == ("DEFAULT", "NONE_CACHEABLE")
    w = stream.whatif({"cache_policy@w": "NONE_CACHEABLE", "cache_policy@big": "NONE_CACHEABLE"})
    assert w.after.stats["l2_hit_ratio"] > w.before.stats["l2_hit_ratio"]
    assert w.after.stats["hbm_read_bytes"] < w.before.stats["hbm_read_bytes"]
    stream = _streamed(tmp_path, 64 << 20)
    assert not any(d.knob.startswith("cache_policy") for d in search_space(stream))


def test_the_command_line_takes_the_new_knob_forms(tmp_path, capsys):
    """`pypto-toolkit whatif SCRIPT --set unroll@...=4,1 --set cache_policy@x=...`: its
    parsing and its runs of the script (the pages it then writes are test_whatif's)."""
    script = tmp_path / "loop_script.py"
    script.write_text(textwrap.dedent('''
        import torch
        import pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 64)
            for b in pypto.loop(8):
                y[b * 16:(b + 1) * 16, :] = x[b * 16:(b + 1) * 16, :] * 3.0

        x, y = torch.rand(128, 64), torch.zeros(128, 64)
        k(x, y)
        torch.testing.assert_close(y, x * 3.0)
    '''))
    texts = ["unroll@loop_script.py:8=4,1", "cache_policy@x=NONE_CACHEABLE"]
    parsed = knobs.parse(dict(map(knobs.parse_assignment, texts)))   # as `--set` reads them
    assert parsed.describe() == ["unroll@loop_script.py:8=(4, 1)",
                                 "cache_policy@x='NONE_CACHEABLE'"]
    (before,), (after,) = (script_calls(str(script), k) for k in (None, parsed))
    assert (before.run.stats["instances"], after.run.stats["instances"]) == (8, 2)
    assert cli.main(["whatif", str(script), "--set", "unroll@loop_script.py:7=4,1"]) == 2
    assert "matched no pypto.loop or pypto.loop_unroll call" in capsys.readouterr().err
