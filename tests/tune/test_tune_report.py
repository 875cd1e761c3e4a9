"""`pypto-toolkit tune`'s report (issue 30, item 8): the call tuned is named, speed ratios read
the right way round, sensitivity bars do not depend on the search's order, advice about
another metric than the tuned one is marked, and the advice stays inside its box."""
import concurrent.futures
import os
import random
import types

import pytest
import torch

import pypto
from pypto.toolkit.findings import Advice
from pypto.tune import report
from pypto.tune.search import Evaluation, TuneResult, speed_words
from pypto.tune.space import Dimension


@pypto.frontend.jit
def _scaled(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32), n: int = 2):
    pypto.set_vec_tile_shapes(16, 128)
    y[:] = pypto.exp(x) * float(n)


def test_the_call_tuned_is_named_with_shapes_dtypes_and_values():
    _scaled(torch.rand(64, 512), torch.zeros(64, 512), 4)
    assert report.call_text(_scaled) == \
        "_scaled(x: float32[64, 512], y: float32[64, 512], n=4)"
    _scaled(torch.rand(32, 128), torch.zeros(32, 128), n=3)
    assert report.call_text(_scaled) == \
        "_scaled(x: float32[32, 128], y: float32[32, 128], n=3)"


def test_speed_ratios_say_faster_or_slower():
    assert speed_words(1.2, "X") == "1.20x faster than X"
    assert speed_words(0.9, "X") == "0.90x the speed of X (slower)"
    assert speed_words(1.0001, "X") == "as fast as X (1.00x)"


VEC, STITCH = "vec_tile@k.py:3", "stitch_function_max_num"
DIMS = [Dimension(VEC, (4, 128), ((4, 128), (8, 128), (2, 64)), "test"),
        Dimension(STITCH, 128, (128, 16, 1024), "test")]
EVALS = [Evaluation({}, 10.0), Evaluation({VEC: (8, 128)}, 8.0),
         Evaluation({VEC: (8, 128), STITCH: 1024}, 7.5), Evaluation({STITCH: 16}, 12.0),
         Evaluation({VEC: (2, 64)}, None, error="UB"), Evaluation({STITCH: 1024}, 9.0),
         Evaluation({VEC: [8, 128]}, 11.0), Evaluation({VEC: (16, 128)}, 13.0)]


def _result(evaluations, metric="kernel_us"):
    return TuneResult("k", metric, DIMS, list(evaluations), 1.0, "test")


def test_sensitivity_bars_do_not_depend_on_the_search_order():
    shuffled = list(EVALS[1:])
    random.Random(1).shuffle(shuffled)
    orders = [EVALS, [EVALS[0], *reversed(EVALS[1:])], [EVALS[0], *shuffled]]
    views = [report.sensitivity(_result(o)) for o in orders]
    assert views[0] == views[1] == views[2]
    bars = {"".join(report._bars(k, v, 7.5) for k, v in view) for view in views}
    assert len(bars) == 1
    by_knob = dict(views[0])
    # candidate order first, then other values seen; each the best time over all evaluations
    assert by_knob[VEC] == [("(4, 128)", 9.0), ("(8, 128)", 7.5), ("(2, 64)", None),
                            ("(16, 128)", 13.0), ("[8, 128]", 11.0)]
    assert by_knob[STITCH] == [("128", 8.0), ("16", 12.0), ("1024", 7.5)]


def _advice(rule, summary):
    return Advice(rule, "unroll_list", "advise", summary)


def test_advice_about_another_metric_is_marked():
    advice = [_advice("root_instances", "tiny instances"), _advice("tile_shape", "split"),
              Advice("stitch", "stitch_function_max_num", "ok", "fine")]
    kernel = [a.summary for a in report.marked_advice(advice, "kernel_us")]
    assert kernel == ["[weighs e2e_us, not the tuned kernel_us] tiny instances", "split", "fine"]
    e2e = [a.summary for a in report.marked_advice(advice, "e2e_us")]
    assert e2e == ["tiny instances", "[weighs kernel_us, not the tuned e2e_us] split", "fine"]


def _page(advice="Advice\n  nothing to change found", metric="kernel_us"):
    result = _result(EVALS, metric)
    return report._page(result, "diff.html", advice, "<p>effects</p>",
                        "k(x: float32[64, 512], n=4)")


def test_the_page_names_the_call_words_the_ratio_and_states_the_metric():
    page = " ".join(_page().split())
    assert "<h1>tune k(x: float32[64, 512], n=4)</h1>" in page
    assert "7.50 us</b> with the best found (1.33x faster than the kernel's own setting)" in page
    assert "The tuner minimised kernel_us" in page and "may weigh the other metric" in page
    assert "The tuner minimised e2e_us" in _page(metric="e2e_us")
    assert "x the own setting" not in page and "x the best)" not in page


def test_the_knob_effects_are_worded_faster_or_slower():
    effects = [types.SimpleNamespace(knob=VEC, value=(8, 128), alone_us=8.0, without_us=9.0),
               types.SimpleNamespace(knob=STITCH, value=1024, alone_us=12.5, without_us=None)]
    fake = types.SimpleNamespace(baseline=Evaluation({}, 10.0), best=Evaluation({}, 7.5),
                                 metric="kernel_us", explain=lambda: effects)
    html = report._effects(fake)
    assert "8.00 (1.25x faster than the kernel's own setting)" in html
    assert "9.00 (0.83x the speed of the best setting (slower))" in html
    assert "12.50 (0.80x the speed of the kernel's own setting (slower))" in html
    assert "refused" in html


def _measure_advice(path):
    """(the advice box's [scrollWidth, clientWidth, right], the body's right) in a headless
    browser, or (None, why not)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None, "the playwright Python package is missing"
    from pypto.toolkit.browser import launch_headless
    with sync_playwright() as p:
        browser, reasons = launch_headless(p)
        if browser is None:
            return None, f"no browser: {reasons}"
        try:
            tab = browser.new_page(viewport={"width": 900, "height": 700})
            tab.goto(path.resolve().as_uri())
            return tab.evaluate("""() => { const pre = document.querySelector('pre');
                return [pre.scrollWidth, pre.clientWidth, pre.getBoundingClientRect().right,
                        document.body.getBoundingClientRect().right]; }"""), ""
        finally:
            browser.close()


def test_the_advice_wraps_inside_its_box(tmp_path):
    long = "Advice\n  * [unroll_list] " + "x" * 600 + " " + "word " * 200
    page = _page(advice=long)
    assert "white-space:pre-wrap" in page and "overflow-wrap:anywhere" in page
    path = tmp_path / "report.html"
    path.write_text(page)
    # NOTE: in a thread of its own: the page tests' session browser keeps an asyncio loop
    # running in this one, where playwright's sync API refuses to start
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        box, why = pool.submit(_measure_advice, path).result()
    if box is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no browser under CI=true: {why}")
        pytest.skip(why)
    scroll, client, right, body_right = box
    assert scroll <= client and right <= body_right + 1
