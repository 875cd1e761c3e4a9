"""The models of examples/models/ at full size, timing only: kernel time against two lower bounds.

Every model's recommended setting and the knobs issue 14 lists run with
`runtime_options={"numerics": "timing_only"}` (the same tasks, windows and timeline, no
arithmetic), and each run is measured against its roofline and its longest dependency chain
(`pypto.profiling.bounds`). Per variant: kernel and end-to-end µs, tasks, root instances,
stitch windows, workspace, AICore utilisation, both bounds, the ratio of the kernel time to the
larger one, and the wall seconds of compile + run + simulate (the clock stops after
`kernel.last_run`, which runs the simulation; inputs made once per shape, not counted).

    python benchmarks/models.py [--size full|reduced] [--only glm,moe] [--out DIR]
                                [--write-docs] [--no-screenshots]

Writes DIR/<date>_models.json and .md (default benchmarks/results/); a model that fails is a
row with its error, word for word. With --write-docs it also rewrites docs/models.md: per model
the source of its shapes (the module docstring), its table, for a recommended variant (and the
issue's glm benchmark kernel) more than 2x its larger bound the cause as the run measures it
(`pypto-toolkit analyze` of its swimlane: core busy, critical path, busiest leaf; the busiest
core type's task time split by the cost model's terms; GM bytes against the compulsory ones),
and a screenshot of each model's headline variant (docs/img/models_<model>.png; skipped, saying
why, without a browser). With --only or --size reduced the page goes to --out instead.
`--size reduced` runs one variant per model at the modules' test sizes (seconds: the test of
this script and the suite's smoke run); `benchmarks/run.py` runs the full size as its `models`
section.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import model_analyses
from pypto.profiling.bounds import lower_bounds
from pypto.toolkit.run_pages import write_run
from pypto.toolkit.browser import screenshot

ROOT = Path(__file__).resolve().parents[1]
MODELS_DIR = ROOT / "examples" / "models"
CAUSE_RATIO = 2.0     # a recommended variant above this ratio gets its cause written down

COLUMNS = ("model", "variant", "recommended", "kernel_us", "e2e_us", "tasks", "instances",
           "windows", "workspace_bytes", "util_pct", "roofline_us", "roofline_term",
           "chain_us", "larger", "bound_us", "ratio", "wall_s")


def _module(name: str):
    if str(MODELS_DIR) not in sys.path:
        sys.path.insert(0, str(MODELS_DIR))
    return importlib.import_module(name)


@dataclass(frozen=True)
class Variant:
    """One run: `make()` returns (kernel, args); `key` names its inputs, made once and shared
    by the variants with that key."""

    model: str
    name: str
    make: Callable[[], Any]          # -> the jit kernel
    inputs: Callable[[], tuple]      # -> its arguments
    key: str
    recommended: bool = False
    headline: bool = False
    explain: bool = False            # write its cause when far from its bound, as if recommended


# ---- the variants, per model -------------------------------------------------------------

def glm_variants(size: str) -> list[Variant]:
    g = _module("glm_attention")
    shape = g.FULL if size == "full" else g.REDUCED
    tag = f"b{shape.batch} x {shape.kv_len} keys x {shape.kv_heads} KV heads"

    def v(name, stitch=128, tiles=g.Tiles(), order="blocks_outer", rec=False):
        return Variant("glm_attention", f"{name} ({tag})",
                       lambda: g.build(stitch, tiles, order), lambda: g.inputs(shape),
                       f"glm{shape}", rec, rec)
    rows = [v("blocks outer, stitch 128", rec=True)]
    if size == "reduced":
        return rows
    rows += [v(f"blocks outer, stitch {n}", stitch=n) for n in g.STITCH_SWEEP if n != 128]
    rows += [v(f"pairs outer, stitch {n}", stitch=n, order="pairs_outer")
             for n in g.STITCH_SWEEP]
    rows += [v("blocks outer, q.k^T as 2 tasks per block", tiles=g.HALF_N_QK),
             v("blocks outer, 1024-key blocks", tiles=g.BLOCK_1024)]
    # the issue's "glm-size benchmark kernel", benchmarks/glm_attention.py (2 query tokens,
    # batch 16, 4k cache, pairs outer), measured against the same bounds
    spec = importlib.util.spec_from_file_location("glm_attention_benchmark",
                                                  Path(__file__).parent / "glm_attention.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows.append(Variant("glm_attention", f"benchmarks/glm_attention.py kernel (b{bench.BATCH} "
                        f"x {bench.KV_LEN} keys x {bench.KV_HEADS} KV heads, {bench.TOKENS} "
                        f"tokens, pairs outer), stitch 128", lambda: bench.make_kernel(128),
                        bench.inputs, "glm_bench", explain=True))
    return rows


def moe_variants(size: str) -> list[Variant]:
    m = _module("moe_routing")
    tokens = 1026 if size == "full" else 40

    def v(cast, rec=False, t=tokens):
        return Variant("moe_routing", f"T={t}, cast {cast}", lambda: m.build(cast),
                       lambda: m.inputs(t), f"moe{t}", rec, rec)
    if size == "reduced":
        return [v("none", rec=True)]
    return [v("none", rec=True), v("shared"), v("per_block"),
            Variant("moe_routing", "T=64, cast none", lambda: m.build("none"),
                    lambda: m.inputs(64), "moe64", True)]


def gdn_variants(size: str) -> list[Variant]:
    d = _module("gated_deltanet")
    base = d.FULL if size == "full" else d.REDUCED
    recommended = "chunks_outer"

    def v(name):
        cfg = d.VARIANTS[name](base)

        def inputs():
            import torch
            q, k, v_, g, beta = d.make_inputs(cfg)
            return (q, k, v_, g, beta, *d.constants(cfg).values(), torch.zeros_like(v_),
                    torch.zeros(cfg.pairs, cfg.dim, cfg.dim))
        label = (f"{name} (chunk {cfg.chunk}, stitch {cfg.stitch}, unroll {cfg.unroll}, "
                 f"inverse [16,{16 * cfg.inv_blocks}], {cfg.order})")
        return Variant("gated_deltanet", label, lambda: d.make_kernel(cfg), inputs,
                       f"gdn{cfg}", name == recommended, name == recommended)
    if size == "reduced":
        return [v(recommended)]
    return [v(name) for name in d.VARIANTS]


def indexer_variants(size: str) -> list[Variant]:
    x = _module("indexer_prolog")
    base = x.FULL if size == "full" else x.REDUCED
    recommended = "l1_reuse"

    def v(name):
        cfg = replace(base, **x.VARIANTS[name])
        label = f"{name} (vec {cfg.vec_tile}, cube {cfg.cube_tiles}, l1_reuse {cfg.l1_reuse})"
        return Variant("indexer_prolog", label, lambda: x.make_kernel(cfg),
                       lambda: (*x.make_inputs(cfg), *x.outputs(cfg)), f"idx{base}",
                       name == recommended, name == recommended)
    if size == "reduced":
        return [v(recommended)]
    return [v(name) for name in x.VARIANTS]


def matmul_variants(size: str) -> list[Variant]:
    mm = _module("matmul_6144")
    base = mm.FULL if size == "full" else mm.REDUCED
    recommended = "plain"

    def v(name):
        cfg = mm.MatmulConfig(**{**base.__dict__, **mm.VARIANTS[name]})
        views = "one matmul" if cfg.m_view is None else f"views {cfg.m_view} x {cfg.n_view}"
        reuse = "auto" if cfg.l1_reuse is None else cfg.l1_reuse
        label = f"{name} ({cfg.m} x {cfg.n} x {cfg.k}, {views}, L1 reuse {reuse})"
        return Variant("matmul_6144", label, lambda: mm.make_kernel(cfg),
                       lambda: mm.make_inputs(cfg), f"mm{base}", name == recommended,
                       name == recommended)
    if size == "reduced":
        return [v(recommended)]
    return [v(name) for name in mm.VARIANTS]


def swiglu_variants(size: str) -> list[Variant]:
    s = _module("swiglu_ffn")

    def v(name, shape, tiles, rec=False, headline=False):
        return Variant("swiglu_ffn", f"{name} (T={shape.tokens}, {shape.hidden}->{shape.inter})",
                       lambda: s.build(shape.hidden, shape.inter, tiles),
                       lambda: s.inputs(shape), f"swiglu{shape}", rec, headline)
    if size == "reduced":
        return [v("decode, split-K", s.REDUCED, s.DECODE_SPLIT_K, True, True)]
    decode, prefill = s.Shape(16), s.Shape(4096)
    return [v("decode", decode, s.DECODE),
            v("decode, split-K", decode, s.DECODE_SPLIT_K, True, True),
            v("prefill, 512-token blocks", prefill, s.PREFILL, True),
            v("prefill, 128-token blocks", prefill, s.PREFILL_BLOCK_128)]


MODELS = {"glm_attention": glm_variants, "moe_routing": moe_variants,
          "gated_deltanet": gdn_variants, "indexer_prolog": indexer_variants,
          "matmul_6144": matmul_variants, "swiglu_ffn": swiglu_variants}


# ---- running -----------------------------------------------------------------------------

def measure(variant: Variant, args: tuple) -> tuple[dict, Any]:
    """Run one variant timing-only; its table row and the kernel (`last_run`)."""
    start = time.perf_counter()
    kernel = variant.make()
    kernel.runtime_options["numerics"] = "timing_only"
    kernel(*args)
    r = kernel.last_run   # the simulation runs here (lazily): inside the wall time
    wall = time.perf_counter() - start
    # the evaluation a what-if or the tuner pays, the compile cached: the call (control walk,
    # tasks, stitching and its links) and the simulation, best of three
    evals = []
    for _ in range(3):
        begin = time.perf_counter()
        kernel(*args)
        called = time.perf_counter()
        r = kernel.last_run
        evals.append((called - begin, time.perf_counter() - called))
    call_s, sim_s = min(evals, key=sum)
    st = r.stats
    b = lower_bounds(r)
    row = {"model": variant.model, "variant": variant.name, "recommended": variant.recommended,
           "headline": variant.headline,
           "kernel_us": r.us(st["kernel_cycles"]), "e2e_us": r.us(st["e2e_cycles"]),
           "tasks": st["tasks"], "instances": st["instances"], "windows": st["windows"],
           "workspace_bytes": st["workspace_bytes"], "util_pct": 100.0 * st["utilization"],
           "util_aic_pct": 100.0 * st["utilization_aic"],
           "util_aiv_pct": 100.0 * st["utilization_aiv"],
           "hbm_us": b.hbm_us, "cube_us": b.cube_us, "vector_us": b.vector_us,
           "compulsory_bytes": b.compulsory_bytes,
           "roofline_us": b.roofline_us, "roofline_term": b.roofline_term,
           "chain_us": b.chain_us, "chain_tasks": b.chain_tasks, "larger": b.larger,
           "bound_us": b.bound_us, "ratio": b.ratio, "wall_s": wall, "call_s": call_s,
           "sim_s": sim_s}
    return row, kernel


def run(size: str = "full", only: list[str] | None = None, log: Callable = print,
        folders: str | None = None) -> dict:
    """Every variant of the chosen models; a failure is recorded with its error, exactly.
    `folders`: write each headline variant's run folder (swimlane, reports) there and
    analyze it (`cause`)."""
    rows = []
    started = time.perf_counter()
    for model, variants_of in MODELS.items():
        if only and not any(o in model for o in only):
            continue
        try:
            variants = variants_of(size)
        except Exception as e:   # the module itself does not import: say so, go on
            rows.append({"model": model, "variant": "(module)", "error": _error(e)})
            log(f"  {model}: FAILED to load: {_error(e)}")
            continue
        inputs: dict[str, tuple] = {}
        for v in variants:
            try:
                if v.key not in inputs:
                    inputs.clear()     # one shape's inputs alive at a time (GBs at full size)
                    inputs[v.key] = v.inputs()
                row, kernel = measure(v, inputs[v.key])
            except Exception as e:
                rows.append({"model": v.model, "variant": v.name, "recommended": v.recommended,
                             "error": _error(e)})
                log(f"  {v.model} / {v.name}: FAILED: {_error(e)}")
                continue
            rows.append(row)
            log(f"  {v.model} / {v.name}: kernel {row['kernel_us']:.1f} us, bound "
                f"{row['bound_us']:.1f} us ({row['larger']}), ratio {row['ratio']:.2f}, "
                f"{row['tasks']} tasks, wall {row['wall_s']:.1f} s")
            explain = (v.recommended or v.explain) and row["ratio"] > CAUSE_RATIO
            if folders and (v.headline or explain):
                folder = Path(folders) / f"{v.model}_{len(rows)}"
                row["folder"] = str(folder)
                begin = time.perf_counter()
                write_run(kernel.last_run, kernel.last_program, str(folder),
                          kernel.last_compiled)
                row["write_s"] = time.perf_counter() - begin
                row["cause"] = cause(kernel, folder, row) if explain else ""
                if v.headline:
                    row["analyses"] = model_analyses.summary(folder, row)
            del kernel
    return {"size": size, "rows": rows, "seconds": time.perf_counter() - started}


def _error(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) < 600 else text[:600] + " ..."


# ---- why a run is far from its bound ------------------------------------------------------

def cause(kernel, folder: Path, row: dict) -> str:
    """Where the time went, measured: the run's swimlane (written to `folder`) as
    `pypto-toolkit analyze` reads it (critical path, per-leaf busy time), and the busiest core
    type's task time split by the cost model's terms (`task_time_split`). The first sentence
    names the largest term outside the roofline, or the waiting if the cores are mostly idle;
    then the GM traffic against the roofline's compulsory bytes (`row`: the variant's row)."""
    from pypto.toolkit.analyze import analyze
    from pypto.toolkit.trace import load
    a = analyze(load(folder), str(folder))
    r = kernel.last_run
    span = a.span
    cores = {"AIC": r.aic, "AIV": r.aiv}
    split = {k: task_time_split(r, k) for k in cores}
    kind = max(cores, key=lambda k: sum(split[k].values()) / cores[k])
    parts = {name: r.us(c) / cores[kind] for name, c in split[kind].items()}
    per_core = sum(parts.values())
    cp = a.critical_path
    lanes = [ln for ln in a.lanes if ln.kind == kind.lower()]
    top = max(a.leaves, key=lambda leaf: leaf.total)
    terms = ", ".join(f"{name} {us:,.0f}" for name, us in parts.items())
    busy = (f"{kind} task time is {per_core:,.0f} us per core ({100 * per_core / span:.0f}% of "
            f"the kernel): {terms} us")
    if per_core >= 0.75 * span:
        name, us = max(((n, u) for n, u in parts.items() if n not in ("cube", "vector")),
                       key=lambda x: x[1])
        lead = (f"The {kind} cores are busy: {busy}. The largest term the roofline leaves out "
                f"is {name}, {us:,.0f} us per core.")
    else:
        wait_s = sum(ln.wait_schedule for ln in lanes) / cores[kind]
        wait_p = sum(ln.wait_predecessor for ln in lanes) / cores[kind]
        lead = (f"The cores mostly wait: {busy}; per {kind} core {wait_p:,.0f} us waiting "
                f"for predecessors and {wait_s:,.0f} us for the schedule (dispatch, window "
                f"build).")
    lead += _build_bound(r, span)
    st = r.stats
    gm = (f"GM: the run read {st['gm_read_bytes'] / 1e6:,.1f} MB, "
          f"{100 * st['l2_hit_ratio']:.0f}% of it from L2; its {st['hbm_read_bytes'] / 1e6:,.1f} "
          f"MB from HBM are {st['hbm_read_bytes'] / max(row['compulsory_bytes'], 1):.1f}x the "
          f"{row['compulsory_bytes'] / 1e6:,.1f} MB of the roofline.")
    return (f"{lead} {gm} Critical path: {len(cp.steps)} tasks over "
            f"{cp.end - cp.start:,.1f} us, "
            f"busy {cp.busy_share_pct:.0f}% of the kernel, {cp.wait:,.1f} us waiting along "
            f"it. Busiest leaf: {top.name} ({top.core}), {top.tasks:,} tasks of {top.mean:.2f} "
            f"us mean, {top.share_pct:.0f}% of all task time.")


def _build_bound(result, span: float) -> str:
    """A sentence when the control AICPU's window builds bound the kernel: it builds the
    windows one after another and each starts after its own build, so the builds after the
    first are a floor of the kernel time that neither roofline nor chain counts."""
    builds = [a for a in result.aicpu if a.thread == 0 and a.name.startswith("build window")]
    if len(builds) < 2:
        return ""
    floor = result.us(builds[-1].end - builds[0].end)
    if floor < 0.5 * span:
        return ""
    each = result.us(sum(b.end - b.start for b in builds)) / len(builds)
    instances = sum(b.args.get("instances", 0) for b in builds) / len(builds)
    edges = sum(b.args.get("cross_edges", 0) for b in builds) / len(builds)
    return (f" The control AICPU builds the {len(builds)} windows one after another, "
            f"{each:,.0f} us each ({instances:,.0f} instances, {edges:,.0f} cross-instance "
            f"edges on average), and a window starts only after its build: the builds after "
            f"the first take {floor:,.0f} us of the {span:,.0f} us kernel (fewer, bigger root "
            f"instances shorten them; a bigger stitch only moves them before the first task, "
            f"into the end-to-end time).")


def task_time_split(result, core: str) -> dict[str, float]:
    """The busy cycles of `core` ("AIC"/"AIV") tasks split by the cost model's duration
    (`machine/timing.py task_cycles`: head + load latency + the busiest pipe + store latency):
    task heads, DMA latencies, cube or vector cycles (the roofline's work), L1->L0 moves
    beyond the cube (AIC), and GM transfers beyond the compute (the busiest pipe was a load
    or store, at the core's or its contended HBM/L2 share, or the fixpipe's drain). Sums to
    the measured busy time. The per-task split is `toolkit.analyses.cost_terms` (the
    toolkit's kernel statistics read the same split from the trace)."""
    import numpy as np

    from pypto.machine.spec import load as load_spec
    from pypto.toolkit.analyses.cost_terms import inputs_of_tasks, term_cycles
    runs = [run for run in result.tasks if run.task.core == core]
    dur = np.array([run.end - run.start for run in runs], dtype=np.float64)
    t = {k: float(v.sum()) for k, v in term_cycles(
        np.full(len(runs), core == "AIC"), dur, inputs_of_tasks([run.task for run in runs]),
        load_spec(None)).items()}
    work = "cube" if core == "AIC" else "vector"
    out = {"heads": t["head"], "latency": t["latency"], work: t[work]}
    if core == "AIC":
        out["L1->L0 beyond cube"] = t["mte1"]
    out["GM moves beyond compute"] = t["mte2"] + t["mte3"] + t["fixpipe"]
    return out


# ---- output ------------------------------------------------------------------------------

def _timings(row: dict) -> str:
    """The cached evaluation's call and simulate ms, and the write s where a folder was
    written (older results have none of them)."""
    ms = (f"{1e3 * row[k]:.0f}" if k in row else "" for k in ("call_s", "sim_s"))
    write = f"{row['write_s']:.2f}" if "write_s" in row else ""
    return " | ".join((*ms, write))


def markdown_table(rows: list[dict]) -> list[str]:
    out = ["| model | variant | kernel µs | E2E µs | tasks | instances | windows | workspace "
           "MiB | util % | roofline µs | chain µs | larger | ratio | wall s | call ms | "
           "simulate ms | write s |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        name = f"**{r['variant']}**" if r.get("recommended") else r["variant"]
        if "error" in r:
            out.append(f"| {r['model']} | {name} | failed: {r['error']} |" + " |" * 14)
            continue
        out.append(
            f"| {r['model']} | {name} | {r['kernel_us']:,.1f} | {r['e2e_us']:,.1f} | "
            f"{r['tasks']:,} | {r['instances']:,} | {r['windows']:,} | "
            f"{r['workspace_bytes'] / 2**20:,.2f} | {r['util_pct']:.1f} | "
            f"{r['roofline_us']:,.1f} ({r['roofline_term']}) | {r['chain_us']:,.1f} | "
            f"{r['larger']} | {r['ratio']:.2f} | {r['wall_s']:.1f} | {_timings(r)} |")
    return out


def results_markdown(res: dict) -> str:
    out = [f"# Models benchmark {res['date']} (size `{res['size']}`, timing only)", "",
           f"Machine: {res['machine']}; load average at start {res['load_start']}, at end "
           f"{res['load_end']}; {res['seconds']:.0f} s in all (inputs, runs, bounds and "
           f"swimlanes of the explained variants). Recommended variants in bold; "
           f"ratio = kernel time / the larger of the roofline and the dependency-chain bound "
           f"(`pypto.profiling.bounds`).", ""]
    out += markdown_table(res["rows"])
    causes = [r for r in res["rows"] if r.get("cause")]
    if causes:
        out += ["", "## Causes: variants more than 2x their larger bound", ""]
        out += [f"- **{r['model']} / {r['variant']}** ({r['ratio']:.2f}x): {r['cause']}"
                for r in causes]
    return "\n".join(out) + "\n"


def _source(model: str) -> str:
    """The module docstring (where the math and shapes are from, and its knobs), less its
    command line."""
    doc = (_module(model).__doc__ or "").strip()
    return "\n".join(line for line in doc.splitlines() if not line.startswith("Run:")).strip()


def docs_page(res: dict, shots: dict[str, str]) -> str:
    by_model: dict[str, list[dict]] = {}
    for r in res["rows"]:
        by_model.setdefault(r["model"], []).append(r)
    out = ["# Models at full size: simulated time against two lower bounds", "",
           f"Generated by `python benchmarks/models.py --write-docs` on {res['date'][:10]} "
           f"({res['machine']}) in {res['seconds']:.0f} s for every run, inputs included "
           f"(and {res.get('screenshot_s', 0):.0f} s for the screenshots); do not edit by hand. "
           f"Every run is "
           f"`runtime_options={{\"numerics\": \"timing_only\"}}` (the same tasks, windows and "
           f"timeline as the exact run, without the arithmetic) of a model in "
           f"`examples/models/`, whose tests check the numerics at reduced sizes. Times are "
           f"simulated A2/A3 microseconds (`machine/a2a3.toml`); `wall s` is compile + run + "
           f"simulate on this host (the clock stops after `kernel.last_run`, which runs the "
           f"simulation); `call ms` and `simulate ms` are the same call again with the compile "
           f"cached (what a what-if or a tuner evaluation pays, best of three: the control walk, "
           f"the tasks, stitching and its links, then the simulation), and `write s` writes the "
           f"run folder (swimlane, reports), where one was written.", "",
           "The two lower bounds (`pypto.profiling.bounds`): the **roofline**, the largest of "
           "the compulsory HBM bytes (the unique bytes of the kernel's inputs, and of its "
           "outputs beyond what L2 holds) at 1.6 TB/s, the cube cycles the cost model charges "
           "over all 24 AIC cores and the vector cycles over all 48 AIV cores; and the "
           "**chain**, the longest dependency chain of the simulated task durations with the "
           "stitch windows one after another. `ratio` is the kernel time over the larger; the "
           "recommended setting of each model is in bold. For a recommended variant more than "
           f"{CAUSE_RATIO:g}x its larger bound, the cause is what its swimlane measures "
           "(`pypto-toolkit analyze`, and the busiest core type's task time split by the cost "
           "model's terms: task heads, DMA latency, cube or vector work, L1->L0 moves beyond "
           "the cube, GM moves beyond the compute).", ""]
    out += ["## Summary", "", "| model | recommended variant | kernel µs | larger bound µs | "
            "ratio |", "|---|---|---:|---:|---:|"]
    for model, rows in by_model.items():
        for r in rows:
            if r.get("recommended") and "error" not in r:
                out.append(f"| {model} | {r['variant']} | {r['kernel_us']:,.1f} | "
                           f"{r['bound_us']:,.1f} ({r['larger']}) | {r['ratio']:.2f} |")
    out.append("")
    for model, rows in by_model.items():
        out += [f"## {model}", "", f"`examples/models/{model}.py`. Its source, from the "
                f"module docstring:", ""]
        out += ["> " + line if line else ">" for line in _source(model).splitlines()]
        out += [""] + markdown_table(rows) + [""]
        for r in rows:
            if r.get("cause"):
                out += [f"**Why {r['variant']} is {r['ratio']:.2f}x its bound**: {r['cause']}",
                        ""]
            elif r.get("recommended") and "error" not in r and r["ratio"] <= CAUSE_RATIO:
                out += [f"{r['variant']}: within {CAUSE_RATIO:g}x of its {r['larger']} bound "
                        f"({r['ratio']:.2f}x).", ""]
        for r in rows:
            if r.get("analyses"):
                out += [f"What the toolkit's analyses measure on {r['variant']} (`pypto-toolkit "
                        f"analyze --stats --overhead --blockers --paths`): {r['analyses']}", ""]
        if model in shots:
            out += [f"![{model} swimlane]({shots[model]})", "",
                    f"<sub>The swimlane of {next(r['variant'] for r in rows if r.get('headline'))}"
                    f" (`pypto-toolkit view`).</sub>", ""]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["full", "reduced"], default="full")
    parser.add_argument("--only", default="", help="comma-separated model names (substrings)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--write-docs", action="store_true",
                        help="rewrite docs/models.md and docs/img/models_*.png")
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument("--runs", default=None, metavar="DIR",
                        help="where the headline variants' run folders are kept (the paths "
                             "printed; default: output/models_<date> here)")
    args = parser.parse_args(argv)
    os.environ["OPENPTO_CHECK_EXECUTORS"] = "0"
    only = [o for o in args.only.split(",") if o]
    res = {"date": datetime.datetime.now().strftime("%Y-%m-%d_%H%M"),
           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                      f"Python {platform.python_version()}",
           "load_start": round(os.getloadavg()[0], 2)}
    runs = Path(args.runs or Path("output") / f"models_{res['date']}")
    runs.mkdir(parents=True, exist_ok=True)
    # (the run folders stay: the summary lines print their paths)
    res.update(run(args.size, only, lambda m: print(m, flush=True),
                   folders=str(runs)))
    res["load_end"] = round(os.getloadavg()[0], 2)
    shots: dict[str, str] = {}
    if args.write_docs:
        # NOTE: only a full run of every model is the page; a reduced or partial run
        # writes its page into --out
        docs = ROOT / "docs" if args.size == "full" and not only else Path(args.out)
        img = docs / "img"
        img.mkdir(parents=True, exist_ok=True)
        shots_started = time.perf_counter()
        for r in res["rows"]:
            if not r.get("headline") or "folder" not in r or args.no_screenshots:
                continue
            png = img / f"models_{r['model']}.png"
            why = screenshot(Path(r["folder"]) / "swimlane.html", png)   # None: taken
            if why:
                print(f"no screenshots: {why}", file=sys.stderr)
                break
            shots[r["model"]] = f"img/{png.name}"
        res["screenshot_s"] = time.perf_counter() - shots_started
        (docs / "models.md").write_text(docs_page(res, shots), encoding="utf-8")
        print(f"wrote {docs / 'models.md'} ({len(shots)} screenshots)")
    for r in res["rows"]:
        r.pop("folder", None)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{res['date']}_models" + ("" if args.size == "full"
                                                             else f"_{args.size}"))
    with open(stem + ".json", "w") as f:
        json.dump(res, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(results_markdown(res))
    print(f"models ({args.size}): {res['seconds']:.0f} s -> {stem}.json, {stem}.md")
    return 1 if any("error" in r for r in res["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
