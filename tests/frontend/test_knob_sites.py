"""Knob sites beyond tile shapes (`frontend.knobs`): a loop's `unroll_list`
(`unroll@FILE:LINE`), a `set_pass_options(sg_set_scope=...)` call (`sg_scope@FILE:LINE`) and a
tensor parameter's cache policy (`cache_policy@PARAM`). Each replaces what the kernel wrote in
the trace, is checked like the call it replaces with the knob named in the error, and is
noted with its current value while discovering."""
import os

import pytest
import torch

import pypto
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend import knobs

from marker_lines import marker_line

HERE = os.path.basename(__file__)
F32 = pypto.DT_FP32


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit
def _kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), w: pypto.Tensor([16, 64], F32),
            y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    n = x.shape[0] // 16
    pypto.set_pass_options(sg_set_scope=-1)                          # SCOPE_SITE
    for b in pypto.loop(n, name="ROWS"):                             # LOOP_SITE
        y[b * 16:(b + 1) * 16, :] = pypto.exp(x[b * 16:(b + 1) * 16, :]) * w
    for b, k in pypto.loop_unroll(0, 4, 1, unroll_list=[4, 2]):      # UNROLL_SITE
        y[b * 16:(b + k) * 16, :] = y[b * 16:(b + k) * 16, :] + 1.0


def _run(assignments=None):
    x, w = torch.rand(16 * 5, 64), torch.rand(16, 64)
    with knobs.applied(knobs.parse(assignments or {})) as active:
        _kernel(x, w, torch.zeros(16 * 5, 64))
    return _kernel.last_program, active


def _loops(program) -> dict:
    return {lp.name: lp.unroll_list for lp in program.loops()}


def _site(kind: str, marker: str) -> str:
    return f"{kind}@{HERE}:{_line(marker)}"


def test_an_unroll_knob_replaces_the_loops_list():
    program, active = _run({_site("unroll", "LOOP_SITE"): "8,1"})
    assert _loops(program)["ROWS"] == (8, 1)
    active.check_used()
    assert _loops(_run({_site("unroll", "LOOP_SITE"): [4]})[0])["ROWS"] == (4,)
    assert _loops(_run()[0])["ROWS"] == (1,)


def test_an_unroll_knob_on_loop_unroll_sets_its_tiers_and_none_leaves_only_the_1_tier():
    tiers = [n for n in _loops(_run({_site("unroll", "UNROLL_SITE"): [3]})[0]) if "Unroll" in n]
    assert [t.rsplit("LoopUnroll", 1)[1] for t in tiers] == ["3", "1"]
    tiers = [n for n in _loops(_run({_site("unroll", "UNROLL_SITE"): "none"})[0])
             if "Unroll" in n]
    assert [t.rsplit("LoopUnroll", 1)[1] for t in tiers] == ["1"]


def test_an_unroll_override_is_checked_like_the_call_and_names_the_knob():
    site = _site("unroll", "LOOP_SITE")
    with pytest.raises(PyptoValueError, match=rf"knob '{site}': unroll_list \[8, 4\] must "
                                              r"contain 1"):
        _run({site: [8, 4]})
    with pytest.raises(PyptoValueError, match=rf"knob '{site}': unroll_list entries must be "
                                              r"positive ints, got 0"):
        knobs.parse({site: [4, 0]})
    with pytest.raises(PyptoTypeError, match=rf"knob '{site}': unroll_list must be a "
                                             r"non-empty list"):
        knobs.parse({site: []})
    assert knobs.parse({site: "[64,16,4]"}).sites[("unroll", HERE, _line("LOOP_SITE"))] == \
        (64, 16, 4)


def test_an_sg_scope_knob_replaces_the_calls_scope_id():
    program, active = _run({_site("sg_scope", "SCOPE_SITE"): 7})
    scopes = {op.scope for b in program.blocks() for op in b.ops}
    assert 7 in scopes
    active.check_used()
    assert 7 not in {op.scope for b in _run()[0].blocks() for op in b.ops}
    with pytest.raises(PyptoValueError, match=r"knob 'sg_scope@x.py:3'.*sg_set_scope"):
        knobs.parse({"sg_scope@x.py:3": -2})


def test_a_site_knob_on_a_line_without_its_call_is_unused():
    """A scope knob on the loop's line matches no set_pass_options call, and an unroll knob
    on the scope's line no loop."""
    for kind, marker, call in (("sg_scope", "LOOP_SITE", r"set_pass_options\(sg_set_scope"),
                               ("unroll", "SCOPE_SITE", "pypto.loop or pypto.loop_unroll")):
        _, active = _run({_site(kind, marker): 3})
        with pytest.raises(PyptoValueError, match=rf"'{_site(kind, marker)}' matched no {call}"):
            active.check_used()


def test_a_cache_policy_knob_sets_the_parameters_buffer_and_wins_over_the_body():
    def policies(program):
        return {p.name: knobs.policy_name(program.cache_policies.get(p.value.storage.id, {}))
                for p in program.params}
    assert policies(_run()[0]) == {"x": "DEFAULT", "w": "NONE_CACHEABLE", "y": "DEFAULT"}
    program, _ = _run({"cache_policy@x": "none_cacheable", "cache_policy@w": "DEFAULT"})
    assert policies(program) == {"x": "NONE_CACHEABLE", "w": "DEFAULT", "y": "DEFAULT"}
    assert knobs.parse({"cache_policy@x": pypto.CachePolicy.PREFETCH}).describe() == \
        ["cache_policy@x='PREFETCH'"]


def test_a_cache_policy_knob_names_the_kernels_parameters_or_its_policies():
    with pytest.raises(PyptoValueError, match=r"knob 'cache_policy@q': kernel '_kernel' has no "
                                              r"tensor parameter 'q'; its tensor parameters "
                                              r"are x, w, y"):
        _run({"cache_policy@q": "NONE_CACHEABLE"})
    with pytest.raises(PyptoValueError, match=r"knob 'cache_policy@x': a cache policy is one "
                                              r"of DEFAULT, NONE_CACHEABLE, PREFETCH"):
        knobs.parse({"cache_policy@x": "MAX_NUM"})
    with pytest.raises(PyptoValueError, match=r"a site is one of .*unroll@FILE:LINE"):
        knobs.parse({"unroll@x.py": [4, 1]})


def test_discovery_notes_each_site_with_its_current_value(monkeypatch):
    monkeypatch.setattr(_kernel, "use_cache", False)   # a trace passes the sites
    with knobs.discovering() as found:
        _run()
    path = os.path.abspath(__file__)
    assert found[("unroll", path, _line("LOOP_SITE"))] is None
    assert found.notes[("unroll", path, _line("LOOP_SITE"))] == ("pypto.loop", None)
    assert found[("unroll", path, _line("UNROLL_SITE"))] == (4, 2)
    assert found.notes[("unroll", path, _line("UNROLL_SITE"))] == ("pypto.loop_unroll", 4)
    assert found[("sg_scope", path, _line("SCOPE_SITE"))] == -1
    assert {s[1]: v for s, v in found.items() if s[0] == "cache_policy"} == \
        {"x": "DEFAULT", "w": "NONE_CACHEABLE", "y": "DEFAULT"}


def test_site_overrides_key_the_compile_cache():
    """The same overrides twice: the second call takes the first's trace from the cache;
    other overrides, a parameter's included, trace anew."""
    site = _site("unroll", "LOOP_SITE")
    first, _ = _run({site: [2, 1]})
    assert _run({site: [2, 1]})[0] is first
    assert _run({site: [4, 1]})[0] is not first
    assert _run({"cache_policy@x": "NONE_CACHEABLE"})[0] is not _run()[0]
