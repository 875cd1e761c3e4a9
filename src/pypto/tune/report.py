"""`pypto-toolkit tune SCRIPT[::FUNC]`: tune the kernels a script calls, and report each as HTML.

The script runs once as written (its kernel calls recorded, as `whatif` does); then each
kernel's last call is tuned (`kernel.tune`: timing only, on the simulated machine), optionally
through the tuning database. Per kernel, under `-o DIR/<n>_<kernel>/`:
- `before/`, `after/` and `diff.html`: the kernel's own setting against the best found (the
  what-if of the best setting: both swimlanes and the diff tables);
- `report.html`: the summary (before, best, speedup, evaluations and evaluations per second,
  strategy and where the evaluations ran: local processes by default, Ray with `--ray`), why
  the best setting wins (each of its knobs alone, and put back: `TuneResult.explain`), the
  top settings, per-knob sensitivity (for each candidate of a knob, in the knob's candidate
  order, the best time among all the evaluations that used it, as bars: which knobs matter;
  the same whatever order the search visited them in), and the advisor's advice on the best
  run, each piece marked when it weighs another metric than the tuned one (`ADVICE_METRIC`).
The console and the page's heading name the call tuned: the kernel and each argument's
shape and dtype, or its value (`call_text`). Speed ratios are worded "faster than" / "the
speed of .. (slower)" (`search.speed_words`).
"""
from __future__ import annotations

import argparse
import dataclasses
import html
import os
from typing import Any

from pypto.errors import PyptoValueError
from pypto.toolkit.errors import ToolkitError
from pypto.tune.search import speed_words

# The metric an advisor rule's advice weighs, where it is not the kernel time (the AIC/AIV
# span): root_instances counts the control AICPU's build time, part of end-to-end time only.
ADVICE_METRIC = {"root_instances": "e2e_us"}
OWN = "the kernel's own setting"
METRIC_WORDS = {"kernel_us": "the kernel time (first to last AIC/AIV task)",
                "e2e_us": "the end-to-end time (launch to the last event, AICPU included)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="a Python file that calls kernels, or FILE::FUNC to "
                                       "call one function of it (no arguments)")
    parser.add_argument("--budget", type=int, default=50, help="evaluations per kernel (50)")
    parser.add_argument("--seconds", type=float, help="also stop a kernel's search after this")
    parser.add_argument("--seed", type=int, default=0, help="the search order's seed (0)")
    parser.add_argument("--metric", default="kernel_us", choices=("kernel_us", "e2e_us"),
                        help="what the search minimises: kernel_us, the first task's start to "
                             "the last task's end (default), or e2e_us, which also counts the "
                             "window build before the first task (not the host launch, which "
                             "no setting changes)")
    parser.add_argument("--strategy", default="auto",
                        choices=("auto", "exhaustive", "descent", "optuna"),
                        help="auto: exhaustive when the space fits the budget, else descent")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="local processes evaluating settings (default: one per CPU)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="evaluate on a Ray cluster instead: 'local' starts one on this "
                             "machine ('local:N' with N CPUs), 'auto' joins the one `ray start` "
                             "made, or an address")
    parser.add_argument("--db", nargs="?", const=True, default=None, metavar="PATH",
                        help="reuse and keep results in the tuning database (default file, "
                             "or PATH)")
    parser.add_argument("-o", "--output", metavar="DIR", default=os.path.join("output", "tune"),
                        help="where the reports go (default: output/tune)")


def run(args: argparse.Namespace) -> int:
    from pypto.tune.whatif import script_calls
    kernels: dict[int, Any] = {}
    for call in script_calls(args.script, None):
        kernels.setdefault(id(call.kernel), call.kernel)   # each kernel's last call is tuned
    for n, kernel in enumerate(kernels.values()):
        print(f"tuning {call_text(kernel)}", flush=True)
        try:
            result = kernel.tune(budget=args.budget, seconds=args.seconds, seed=args.seed,
                                 metric=args.metric, db=args.db, strategy=args.strategy,
                                 workers=args.workers, ray=args.ray)
        except PyptoValueError as e:
            raise ToolkitError(f"tune {kernel.__name__}: {e}") from None
        print(result.table())
        folder = os.path.join(args.output, f"{n}_{kernel.__name__}")
        print(f"wrote {write_report(result, folder)}")
    return 0


def call_text(kernel: Any) -> str:
    """The kernel's last call: its name and each argument by parameter name, a tensor as
    dtype[shape], anything else as its value: "k(x: float32[64, 512], n=4)"."""
    args, kwargs = kernel.last_call or ((), {})
    signature = getattr(kernel, "signature", None)
    names = [n for n, _ in getattr(signature, "tensor_params", [])] + \
        [p.name for p in getattr(signature, "other_params", [])]
    named = [(names[i] if i < len(names) else None, v) for i, v in enumerate(args)]
    parts = [_arg_text(name, v) for name, v in [*named, *kwargs.items()]]
    return f"{kernel.__name__}({', '.join(parts)})"


def _arg_text(name: str | None, value: Any) -> str:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        dims = ", ".join(str(int(d)) for d in shape)
        text, sep = f"{str(dtype).removeprefix('torch.')}[{dims}]", ": "
    else:
        text, sep = repr(value), "="
    return text if name is None else f"{name}{sep}{text}"


def write_report(result: Any, folder: str, call: str | None = None) -> str:
    """The best-vs-own what-if (run folders, diff page) and `report.html` in `folder`;
    `call`: the call tuned, for the heading (default: the kernel's last call)."""
    from pypto.toolkit import trace
    from pypto.toolkit.analyze import analyze
    from pypto.toolkit.advisor import format_advice
    whatif = result.whatif()
    diff = whatif.write(folder)
    best = analyze(trace.load(whatif.folders["after"]), whatif.folders["after"])
    path = os.path.join(folder, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(_page(result, os.path.basename(diff),
                      format_advice(marked_advice(best.advice, result.metric)),
                      _effects(result), call or call_text(result.jit_kernel)))
    return path


def _effects(result: Any) -> str:
    """The best setting's knobs, each alone and each put back (`TuneResult.explain`)."""
    e = html.escape
    base, best = result.baseline.value_us, result.best.value_us

    def cell(v: float | None, ref: float, what: str) -> str:
        return "<td>refused</td>" if v is None else \
            f"<td>{v:,.2f} ({html.escape(speed_words(ref / v, what), False)})</td>"
    rows = "".join(f"<tr><td><code>{e(x.knob)}={e(repr(x.value))}</code></td>"
                   f"{cell(x.alone_us, base, OWN)}"
                   f"{cell(x.without_us, best, 'the best setting')}</tr>"
                   for x in result.explain())
    if not rows:
        return "<p>The kernel's own setting was the best found.</p>"
    return (f"<table><tr><th>knob</th><th>{e(result.metric)} with it alone</th>"
            f"<th>{e(result.metric)} of the best with it put back</th></tr>{rows}</table>")


def sensitivity(result: Any) -> list[tuple[str, list[tuple[str, float | None]]]]:
    """Per dimension: (value, the best objective among all the evaluations that used it, or
    None when none of them ran it feasibly), the values in the knob's candidate order (then
    any other value evaluated, by its text): independent of the order of the evaluations."""
    out = []
    for d in result.dimensions:
        best: dict[str, float | None] = {repr(c): None for c in d.candidates}
        for x in result.evaluations:
            key = repr(x.config.get(d.knob, d.current))
            if x.value_us is not None and (best.get(key) is None or x.value_us < best[key]):
                best[key] = x.value_us
            best.setdefault(key, None)
        extra = sorted(k for k in best if k not in {repr(c) for c in d.candidates})
        order = [*dict.fromkeys(repr(c) for c in d.candidates), *extra]
        out.append((d.knob, [(k, best[k]) for k in order]))
    return out


def marked_advice(advice: Any, metric: str) -> list:
    """The advisor's advice, each piece that weighs another metric than `metric` (the
    tuner's) saying so at the start of its summary."""
    out = []
    for a in advice:
        weighs = ADVICE_METRIC.get(a.rule, "kernel_us")
        if a.status == "advise" and weighs != metric:
            a = dataclasses.replace(a, summary=f"[weighs {weighs}, not the tuned {metric}] "
                                               f"{a.summary}")
        out.append(a)
    return out


def _page(result: Any, diff: str, advice: str, effects: str, call: str) -> str:
    e = html.escape
    rows = sorted((x for x in result.evaluations if x.value_us is not None),
                  key=lambda x: x.value_us)[:10] or [result.best]
    top = "".join(f"<tr><td>{n}</td><td>{x.value_us:,.2f}</td><td><code>"
                  f"{e(_setting(x.config))}</code></td></tr>" for n, x in enumerate(rows, 1))
    bars = "".join(_bars(knob, values, result.best.value_us)
                   for knob, values in sensitivity(result))
    infeasible = [x for x in result.evaluations if x.error is not None]
    pruned = sum(x.pruned for x in result.evaluations)
    refused = "".join(f"<li><code>{e(_setting(x.config))}</code>: {e(x.error or '')}</li>"
                      for x in infeasible[:10])
    return f"""<!doctype html><html><head><meta charset="utf-8">
<title>tune {e(call)}</title><style>
body{{font:14px sans-serif;margin:2em;max-width:70em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}} code{{font-size:12px}}
.bar{{fill:#4a7bd0}} .none{{fill:#ccc}} h1{{overflow-wrap:anywhere}}
pre{{background:#f6f6f6;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere;
max-width:100%;box-sizing:border-box;overflow-x:auto}}
</style></head><body>
<h1>tune {e(call)}</h1>
<p>{e(result.metric)}: {result.baseline.value_us:,.2f} us with its own setting,
<b>{result.best.value_us:,.2f} us</b> with the best found
({html.escape(speed_words(result.speedup, OWN), False)});
{len(result.evaluations)} evaluations ({len(infeasible)} infeasible; {pruned} pruned: their
lower bound before simulating already exceeded the best time) in {result.seconds:.1f} s
({result.evaluations_per_second:.1f}/s), {e(result.strategy)}.
Best setting: <code>{e(_setting(result.best.config))}</code>.
<a href="{e(diff)}">Both swimlanes and the diff</a>.</p>
<h2>Why the best setting wins</h2><p>Each of its knobs alone on the kernel's own setting
(faster than the own setting: the knob helps by itself), and the best setting with that knob
put back to its own value (slower than the best setting: the knob pays there, with the others,
even when it does not alone).</p>{effects}
<h2>Top settings</h2><table><tr><th>#</th><th>{e(result.metric)}</th><th>setting</th></tr>
{top}</table>
<h2>Sensitivity</h2><p>Per knob, the best {e(result.metric)} among the evaluations that used
each candidate (grey: not evaluated, refused by the compiler, or pruned by its bound).</p>{bars}
<h2>Refused settings</h2><ul>{refused or "<li>none</li>"}</ul>
<h2>The advisor on the best run</h2><p>The tuner minimised {e(result.metric)},
{e(METRIC_WORDS[result.metric])}; the advisor may weigh the other metric instead, so its advice
can contradict the tuner's choice: advice marked [weighs ...] is about another metric than
{e(result.metric)}.</p><pre>{e(advice)}</pre>
</body></html>
"""


def _setting(config: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items()) or "(the kernel's own)"


def _bars(knob: str, values: list[tuple[str, float | None]], best: float) -> str:
    """One knob's candidates as horizontal bars (longer = slower), SVG."""
    e = html.escape
    top = max((v for _, v in values if v is not None), default=best) or 1.0
    height, rows = 18, []
    for i, (label, v) in enumerate(values):
        width = 300 * (v / top) if v is not None else 300
        cls, text = ("bar", f"{v:,.2f} us") if v is not None else ("none", "-")
        y = i * height
        rows.append(f'<text x="0" y="{y + 13}">{e(label[:40])}</text>'
                    f'<rect class="{cls}" x="320" y="{y + 2}" width="{width:.1f}" '
                    f'height="{height - 4}"/><text x="{330 + width:.1f}" y="{y + 13}">'
                    f'{text}</text>')
    return (f"<h3><code>{e(knob)}</code></h3><svg width=\"760\" height=\"{height * len(values)}"
            f"\" font-size=\"12\">{''.join(rows)}</svg>")
