"""Generate docs/tuning.md: the man-in-the-loop workflow on one softmax kernel, from a real run.

Each step runs the kernel as the previous step left it, checks it against torch, writes its run
folder (swimlane, reports, viewer page), runs the toolkit's analysis and advisor on the
swimlane, takes a screenshot of the viewer, and records what changed. The prose around the
numbers is fixed; every number, every advice line and every picture comes from this run, so
the page stays true when the compiler or the simulator changes (re-run this script).

    python benchmarks/tuning_walkthrough.py [--out output/walkthrough] [--no-screenshots]
                                            [--write-docs]

Without --write-docs the page and its screenshots go to the --out folder (walkthrough.md,
img/), so a run never rewrites the committed docs by accident; with it, docs/tuning.md and
docs/img/ are rewritten.
"""
from __future__ import annotations

import argparse
import datetime
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

import pypto
from pypto.toolkit.run_pages import write_run
from pypto.toolkit import browser
from pypto.toolkit.advisor import format_advice
from pypto.toolkit.analyze import analyze
from pypto.toolkit.trace import load
from pypto.tune.cases import measure

ROOT = Path(__file__).resolve().parents[1]
TOKENS, HIDDEN = 4000, 1024


@dataclass(frozen=True)
class Step:
    title: str
    rows: int                   # rows per loop iteration (view height)
    tile: tuple[int, int]       # vector TileShape
    stitch: int                 # stitch_function_max_num
    change: str                 # what this step changed, and why (prose)
    vec_nbuffer: dict | None = None   # pass_options vec_nbuffer_setting


STEPS = [
    Step("First version", 8, (8, 256), 4,
         "A direct translation: 8 rows per `pypto.loop` iteration, a (8, 256) TileShape (a "
         "32-byte-aligned tail, 8 KiB per tile) and a small stitch window of 4 instances."),
    Step("Bigger loop body", 64, (8, 256), 4,
         "The advisor's first finding: 500 tiny root instances, each built by the control "
         "AICPU and scheduled on its own. A 64-row view with a `valid_shape` tail makes 63 "
         "instances with 8 row blocks each, so every instance fills more cores."),
    Step("Stitch more instances per device task", 64, (8, 256), 128,
         "The swimlane now shows 16 stitch windows of 4 instances, each boundary a barrier "
         "(all tasks of a window finish before the next window's start). Raise "
         "`stitch_function_max_num` from 4 to 128 so the AICPU hands the cores all 63 "
         "iterations at once. Watch both times: the kernel loses its barriers, while the "
         "end-to-end time now waits for the control AICPU to build all 63 instances before "
         "the first task starts."),
    Step("Keep the reduce axis whole", 64, (8, 1024), 128,
         "A 256-wide tile splits each row's max and sum into four partials and a combine "
         "(more vector work, and tiles that must wait for each other). A (8, 1024) tile "
         "(32 KiB, inside the guide's 16-64 KiB) reduces each row in one pass."),
    Step("Merge isomorphic vector tasks", 64, (8, 1024), 128,
         "The advisor's `vec_nbuffer_setting` rule looks for hundreds of identical small "
         "vector tasks, each paying the task head and a dispatch. Merging them (here 10 per "
         "task) makes fewer, longer tasks; whether that pays depends on whether the small "
         "tasks were overhead-bound, which the advisor checks (step 4's output above).",
         {-2: 1, 0: 10}),
]


def make_kernel(step: Step):
    rows = step.rows

    passes = {"vec_nbuffer_setting": step.vec_nbuffer} if step.vec_nbuffer else {}

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": step.stitch},
                        pass_options=passes)
    def softmax(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(*step.tile)
        for i in pypto.loop(0, n, rows, name="LOOP_ROWS", idx_name="i"):
            block = pypto.view(x, [rows, HIDDEN], [i, 0],
                               valid_shape=[(n - i).min(rows), HIDDEN])
            e = pypto.exp(block - pypto.amax(block, -1, keepdim=True))
            y[i:, :] = e / pypto.sum(e, -1, keepdim=True)
    return softmax


def screenshot(html: Path, png: Path) -> bool:
    """A 1400x800 picture of the viewer page (pypto.toolkit.browser); False, saying why, if
    there is no browser."""
    why = browser.screenshot(html, png, wait_ms=800)
    if why is not None:
        print(f"no screenshots: {why}", file=sys.stderr)
    return why is None


def _change(before: float, after: float) -> str:
    """'2.1x faster', '1.3x slower' or 'about the same' (within 3 %)."""
    if abs(after / before - 1) <= 0.03:
        return "about the same"
    ratio = before / after if after < before else after / before
    return f"{ratio:.{2 if ratio < 1.1 else 1}f}x {'faster' if after < before else 'slower'}"


def _shown(folder: Path) -> Path:
    """The run folder as the page names it: as given when relative, else under the default
    output/walkthrough (an absolute scratch path means nothing to a reader)."""
    return folder if not folder.is_absolute() else Path("output/walkthrough") / folder.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="output/walkthrough")
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument("--write-docs", action="store_true",
                        help="rewrite docs/tuning.md and docs/img/ (default: write the page "
                             "into --out)")
    args = parser.parse_args(argv)
    doc_dir = ROOT / "docs" if args.write_docs else Path(args.out)
    doc = doc_dir / ("tuning.md" if args.write_docs else "walkthrough.md")
    img_dir = doc_dir / "img"
    img_dir.mkdir(parents=True, exist_ok=True)
    x = torch.randn(TOKENS, HIDDEN)
    expected = torch.softmax(x, -1)
    rows, sections = [], []
    for n, step in enumerate(STEPS, 1):
        kernel = make_kernel(step)
        y = torch.zeros_like(x)
        kernel(x, y)
        torch.testing.assert_close(y, expected)
        folder = Path(args.out) / f"step{n}"
        write_run(kernel.last_run, kernel.last_program, str(folder))
        m = measure(step.title, [kernel.last_run])
        a = analyze(load(folder), str(folder))
        advice = [adv for adv in a.advice if adv.status == "advise"]
        png = img_dir / f"tuning_step{n}.png"
        shot = not args.no_screenshots and screenshot(folder / "swimlane.html", png)
        rows.append((n, step, m))
        print(f"step {n}: kernel {m.kernel_us:.1f} us, e2e {m.e2e_us:.1f} us, {m.tasks} tasks, "
              f"{len(advice)} advice", flush=True)
        body = [f"## Step {n}: {step.title}", "", step.change, "", "```python",
                f"pypto.set_vec_tile_shapes{step.tile}",
                f"for i in pypto.loop(0, n, {step.rows}, ...):   # "
                f"stitch_function_max_num={step.stitch}"]
        if step.vec_nbuffer:
            body.append(f"# pass_options={{'vec_nbuffer_setting': {step.vec_nbuffer}}}")
        body += ["```", "",
                f"Result: kernel **{m.kernel_us:.1f} µs**, end-to-end **{m.e2e_us:.1f} µs**, "
                f"{m.tasks} tasks in {m.instances} root instances, core utilisation "
                f"{m.util_pct:.1f}%, AICPU {m.aicpu_us:.1f} µs. Output checked against "
                f"`torch.softmax`.", ""]
        if rows[:-1]:
            before = rows[-2][2]
            body += [f"Against step {n - 1}: kernel {before.kernel_us:.1f} → "
                     f"{m.kernel_us:.1f} µs ({_change(before.kernel_us, m.kernel_us)}), "
                     f"end-to-end {before.e2e_us:.1f} → {m.e2e_us:.1f} µs "
                     f"({_change(before.e2e_us, m.e2e_us)}).", ""]
        if shot:
            body += [f"![swimlane after step {n}](img/{png.name})", ""]
        body += [f"`pypto-toolkit analyze {_shown(folder)}` says:", "", "```",
                 format_advice(a.advice).rstrip() or "(no advice)", "```", ""]
        sections.append(body)
    page = ["# Tuning a kernel, man in the loop", "",
            f"Generated by `python benchmarks/tuning_walkthrough.py --write-docs` on "
            f"{datetime.date.today().isoformat()}; every number, advice and picture below comes "
            f"from that run (simulated A2/A3 microseconds).", "",
            "The loop the tuning guide teaches is: write the kernel, run it with "
            "`debug_options={\"runtime_debug_mode\": 1}`, open the swimlane "
            "(`output/output_<ts>/swimlane.html`, or `pypto-toolkit view`), ask "
            "`pypto-toolkit analyze` what it sees, change one knob, and look again. "
            f"Here the kernel is a row softmax over a dynamic number of tokens "
            f"({TOKENS} x {HIDDEN} FP32).", "",
            "| step | change | kernel µs | E2E µs | tasks | instances | util % |",
            "|---|---|---:|---:|---:|---:|---:|"]
    page += [f"| {n} | {step.title} | {m.kernel_us:.1f} | {m.e2e_us:.1f} | {m.tasks} | "
             f"{m.instances} | {m.util_pct:.1f} |" for n, step, m in rows]
    page.append("")
    for body in sections:
        page += body
    page += ["## Comparing two steps", "",
             "`pypto-toolkit diff output/walkthrough/step1 output/walkthrough/step4 -o diff.html` "
             "prints the totals and per-leaf deltas and writes both swimlanes on one time axis.",
             ""]
    doc.write_text("\n".join(page) + "\n", encoding="utf-8")
    print(f"wrote {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
