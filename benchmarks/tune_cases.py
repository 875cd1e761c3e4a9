"""Tune every tuning case whose "before" is a knob setting, from that "before", and write
docs/tune_results.md.

A tuning case (examples/tuning/) teaches one technique as "this kernel, changed like so, gets
faster". Where the change is a knob the tuner can turn without editing the kernel (a tile
shape at its call site, an `sg_set_scope` at its call site, a merge setting, the stitch size,
the scheduler mode, split-K), this script runs the case's variants, calls
`kernel.tune(budget=50, seed=0)` on the first one's call and compares the best time found with
the best of the other variants (the guide's "after"; in a sweep, its best setting): the tuner
holds when it is at least as good. Cases whose change is code (loop form, concat vs assemble,
a Python for, a tensor format) or moves no time (cache hints) are listed with the reason they
are out of the tuner's reach. The page is generated from this run; nothing in it is typed in.

    python benchmarks/tune_cases.py [--budget 50] [--results docs/tune_results.md]
                                    [--only 05_cube_tiles] [--no-models] [--compare optuna]

It then tunes the glm attention and Gated DeltaNet models at their recommended settings (full
size, timing only) and explains each winning knob by running it alone and putting it back.
Every call is also searched with the `--compare` strategies (Optuna by default), for the
strategy table.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import platform
import time
from pathlib import Path

from tuning_cases import load_cases

from pypto.frontend import knobs

ROOT = Path(__file__).resolve().parents[1]

# case -> the knob its before -> after turns (the tuner's dimension that covers it)
KNOB_CASES = {
    "05_cube_tiles": "cube_tile@ (the cube TileShape)",
    "06_vec_tile_size": "vec_tile@ (the vector TileShape)",
    "06b_rmsnorm_reduce_axis": "vec_tile@ (keep the reduce axis whole)",
    "07_stitch_sweep": "stitch_function_max_num",
    "08_tile_shape_alignment": "vec_tile@ (the consumer's tile matches the producer's)",
    "09_sg_set_scope": "sg_scope@ (a fresh scope id at the chain's sg_set_scope=-1 call)",
    "10_cube_l1_reuse": "cube_l1_reuse_setting",
    "10b_cube_nbuffer": "cube_nbuffer_setting",
    "10c_vec_nbuffer": "vec_nbuffer_setting",
    "11_device_sched_mode": "device_sched_mode",
    "15_split_k": "cube_tile@ (split-K)",
}
# case -> why its change is not a knob of the tuner's space
CODE_CASES = {
    "01_static_axis_for": "pypto.loop vs a Python for: a code change",
    "02_dynamic_axis_view": "the view size per iteration: a code change",
    "03_merge_loops": "two loops merged into one: a code change",
    "04_loop_unroll": "unroll@ on the before's pypto.loop makes tiers ([64, 16, 4, 1]) and "
                      "takes most of the gain, but the after's loop_unroll also widens each "
                      "tier's view and TileShape with k (a code change), and the case sums 5 "
                      "sizes where the tuner tunes one call",
    "12_block_diagonal_matmul": "a reshaped operand: a code change",
    "13_redundant_compute": "a cast per batch: a code change",
    "14a_concat_to_assemble": "concat vs assemble: a code change",
    "14b_reshape_inplace": "reshape inplace: a code change",
    "14c_nz_weights": "the weight's tensor format: part of the signature",
    "14d_cache_policy": "cache_policy@w and @big NONE_CACHEABLE (a knob: whatif gives the "
                        "after's L2 hit ratio) do not move the kernel time, and the tuner "
                        "minimises time",
}
TIME_METRICS = {"kernel_us", "e2e_us"}


def outcome(result) -> dict:
    """What one search gave, for the tables."""
    return {"tuned_us": result.best.value_us, "config": result.best.config,
            "evaluations": len(result.evaluations),
            "infeasible": sum(e.error is not None for e in result.evaluations),
            "pruned": sum(e.pruned for e in result.evaluations),
            "seconds": result.seconds, "per_second": result.evaluations_per_second,
            "strategy": result.strategy}


def tune_case(case, budget: int, others: tuple[str, ...] = ()) -> dict:
    """Run the case's variants (recording their kernel calls), tune the first's call, and
    compare with the best of the others (the guide's "after"; a sweep's best setting). Each
    strategy of `others` searches the same call too, for the comparison table."""
    metric = case.metric if case.metric in TIME_METRICS else "kernel_us"
    key = "kernel_cycles" if metric == "kernel_us" else "e2e_cycles"
    calls = []
    for variant in case.variants:
        with contextlib.redirect_stderr(io.StringIO()), knobs.recording() as recorded:
            variant.run()
        calls.append(recorded)
    if any(len(c) != 1 for c in calls):
        return {"case": case.slug, "skipped": "a variant makes several kernel calls (the "
                                              "tuner takes one call)"}
    times = [c[0].run.us(c[0].run.stats[key]) for c in calls]
    best = min(range(1, len(times)), key=times.__getitem__)
    kernel = calls[0][0].kernel
    with contextlib.redirect_stderr(io.StringIO()):
        result = kernel.tune(budget=budget, seed=0, metric=metric, progress=False)
        also = {s: outcome(kernel.tune(budget=budget, seed=0, metric=metric, progress=False,
                                       strategy=s)) for s in others}
    return {"case": case.slug, "metric": metric, "before": case.variants[0].name,
            "after": case.variants[best].name, "before_us": result.baseline.value_us,
            "after_us": times[best], **outcome(result), "also": also,
            "holds": result.best.value_us <= times[best] * 1.0005}


MODEL_RUNS = ("glm_attention", "gated_deltanet")


def tune_model(model: str, budget: int, others: tuple[str, ...] = ()) -> dict:
    """Tune a model's recommended variant at full size (timing only) from its own setting, and
    explain the winning knobs: each one alone on top of the recommended setting, and put back
    from the best setting (`TuneResult.explain`)."""
    import models
    variant = next(v for v in models.MODELS[model]("full") if v.recommended)
    with contextlib.redirect_stderr(io.StringIO()):
        _, kernel = models.measure(variant, variant.inputs())
        result = kernel.tune(budget=budget, seed=0, progress=False)
        alone = {k: kernel.whatif({k: v}).after for k, v in result.best.config.items()}
        without = {x.knob: x.without_us for x in result.explain()}
        also = {s: outcome(kernel.tune(budget=budget, seed=0, progress=False, strategy=s))
                for s in others}
    return {"model": model, "variant": variant.name, "before_us": result.baseline.value_us,
            **outcome(result), "also": also, "without_us": without,
            "alone_us": {k: r.us(r.stats["kernel_cycles"]) for k, r in alone.items()},
            "alone_stats": {k: (r.stats["tasks"], r.stats["windows"], r.stats["utilization"])
                            for k, r in alone.items()}}


def model_markdown(rows: list[dict], budget: int) -> list[str]:
    out = ["", "## The models at their recommended settings", "",
           f"`kernel.tune(budget={budget}, seed=0)` on each model's recommended variant at full "
           f"size (`benchmarks/models.py`), timing only. Each winning knob is then run alone "
           f"on top of the recommended setting: what it buys by itself, and what it changes. "
           f"The objective is the kernel time; `metric=\"e2e_us\"` would also weigh the first "
           f"window's build, which a bigger stitch moves before the first task.", ""]
    for r in rows:
        out.append(f"**{r['model']}** ({r['variant']}): {r['before_us']:,.1f} -> "
                   f"{r['tuned_us']:,.1f} us ({r['before_us'] / r['tuned_us']:.2f}x) in "
                   f"{r['evaluations']} evaluations, {r['seconds']:.0f} s "
                   f"({r['per_second']:.2f}/s), {r['strategy']}.")
        out.append("")
        for knob, value in r["config"].items():
            tasks, windows, util = r["alone_stats"][knob]
            without = r["without_us"].get(knob)
            back = (f"; the best setting without it: {without:,.1f} us"
                    if without is not None else "")
            out.append(f"- `{knob}={value!r}` alone: {r['alone_us'][knob]:,.1f} us "
                       f"({r['before_us'] / r['alone_us'][knob]:.2f}x; {tasks:,} tasks, "
                       f"{windows} windows, {100 * util:.0f}% utilisation){back}")
        if not r["config"]:
            out.append("- no setting beat the recommended one")
        for strategy, o in r["also"].items():
            out.append(f"- with `strategy=\"{strategy}\"`: {o['tuned_us']:,.1f} us in "
                       f"{o['evaluations']} evaluations, {o['seconds']:.0f} s; "
                       f"{len(o['config'])} knobs changed")
        out.append("")
    return out


def strategy_markdown(rows: list[dict], budget: int) -> list[str]:
    """The default search against the others, case by case."""
    others = sorted({s for r in rows for s in r.get("also", {})})
    if not others:
        return []
    out = ["", "## The search strategies", "",
           f"The same calls searched with each strategy (`kernel.tune(budget={budget}, seed=0, "
           f"strategy=...)`): the time found, evaluations, seconds, and how many knobs the "
           f"answer changes. \"auto\" is the default: exhaustive where the space fits the "
           f"budget, else coordinate descent.", "",
           "| case | auto | " + " | ".join(others) + " |",
           "|---|" + "---|" * (1 + len(others))]
    wins = {s: [0, 0, 0] for s in others}   # better, equal, worse than auto
    for r in rows:
        if "tuned_us" not in r:
            continue
        cells = [_strategy_cell(r)]
        for s in others:
            o = r["also"][s]
            cells.append(_strategy_cell(o))
            ratio = o["tuned_us"] / r["tuned_us"]
            wins[s][0 if ratio < 0.9995 else 1 if ratio <= 1.0005 else 2] += 1
        out.append(f"| {r['case']} | " + " | ".join(cells) + " |")
    out.append("")
    for s, (better, equal, worse) in wins.items():
        out.append(f"`{s}` against auto: better on {better} cases, equal on {equal}, worse on "
                   f"{worse}.")
    return out


def _strategy_cell(o: dict) -> str:
    return (f"{o['tuned_us']:,.2f} us ({o['evaluations']} ev., {o['seconds']:.0f} s, "
            f"{len(o['config'])} knobs)")


def markdown(rows: list[dict], budget: int, seconds: float,
             model_rows: list[dict] | None = None) -> str:
    held = [r for r in rows if r.get("holds")]
    tuned = [r for r in rows if "tuned_us" in r]
    out = [
        "# The tuner on the tuning cases",
        "",
        f"Generated by `python benchmarks/tune_cases.py` on {datetime.date.today()} "
        f"({platform.machine()}, Python {platform.python_version()}) in {seconds:.0f} s. For "
        f"each tuning case whose before -> after is a knob setting, `kernel.tune(budget="
        f"{budget}, seed=0)` starts from the case's first variant (its \"before\") and searches "
        f"the space `tune.space.search_space` finds in the kernel, timing only; the guide's "
        f"\"after\" is the fastest of the case's other variants. Times are simulated A2/A3 "
        f"microseconds.",
        "",
        f"**{len(held)} of {len(tuned)}** knob cases: the tuner found a setting at least as good "
        f"as the guide's \"after\" within {budget} evaluations.",
        "",
        "| case | metric | before | guide's after | tuned | evaluations (infeasible, pruned) "
        "| evaluations/s | holds | best setting found |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in tuned:
        config = ", ".join(f"`{k}={v!r}`" for k, v in r["config"].items()) or "(its own)"
        out.append(f"| {r['case']} | {r['metric']} | {r['before_us']:,.2f} ({r['before']}) | "
                   f"{r['after_us']:,.2f} ({r['after']}) | {r['tuned_us']:,.2f} | "
                   f"{r['evaluations']} ({r['infeasible']}, {r['pruned']}) | "
                   f"{r['per_second']:.1f} | {'yes' if r['holds'] else '**no**'} | {config} |")
    workers = {r["strategy"].rsplit(", ", 1)[-1] for r in tuned}
    out += ["", f"Evaluations ran in {', '.join(sorted(workers))}. Infeasible: refused by the "
                f"compiler (a buffer capacity). Pruned: the setting's lower bound before "
                f"simulating (`profiling.bounds.before_scheduling`) already exceeded the best "
                f"time, so its schedule was not simulated."]
    skipped = [r for r in rows if "skipped" in r]
    if skipped:
        out += ["", "Knob cases the tuner could not take:", ""]
        out += [f"- {r['case']}: {r['skipped']}" for r in skipped]
    out += ["", "Cases whose change is out of the tuner's reach:", ""]
    out += [f"- {slug}: {why}" for slug, why in CODE_CASES.items()]
    out += strategy_markdown(tuned, budget)
    if model_rows:
        out += model_markdown(model_rows, budget)
    return "\n".join(out) + "\n"


BY_HAND = "<!-- written by hand below: benchmarks/tune_cases.py keeps it when it rewrites the page -->"


def kept_by_hand(path: Path) -> str:
    """The hand-written analysis after `BY_HAND` in the page being rewritten ("" if none), so
    regenerating the measured tables does not delete it (re-read it against the new numbers)."""
    text = path.read_text() if path.exists() else ""
    at = text.find(BY_HAND)
    return "\n" + text[at:] if at >= 0 else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--results", default=str(ROOT / "docs" / "tune_results.md"))
    parser.add_argument("--only", action="append")
    parser.add_argument("--no-models", action="store_true",
                        help="leave out the models section (minutes)")
    parser.add_argument("--compare", default="optuna",
                        help="other strategies to search each call with, comma-separated "
                             "('' for none; default: optuna)")
    args = parser.parse_args()
    started = time.perf_counter()
    others = tuple(s for s in args.compare.split(",") if s)
    cases = [c for c in load_cases(args.only) if c.slug in KNOB_CASES]
    missing = set(KNOB_CASES) - {c.slug for c in load_cases()}
    if missing and not args.only:
        raise SystemExit(f"tune_cases: KNOB_CASES names missing cases {sorted(missing)}")
    rows = []
    for case in cases:
        row = tune_case(case, args.budget, others)
        rows.append(row)
        print(f"{row['case']}: " + (row.get("skipped") or
                                    f"before {row['before_us']:.2f}, after {row['after_us']:.2f},"
                                    f" tuned {row['tuned_us']:.2f} us in {row['evaluations']} "
                                    f"evaluations ({'holds' if row['holds'] else 'NOT'})"),
              flush=True)
    model_rows = []
    for model in () if args.no_models or args.only else MODEL_RUNS:
        row = tune_model(model, args.budget, others)
        model_rows.append(row)
        print(f"{model}: {row['before_us']:.1f} -> {row['tuned_us']:.1f} us in "
              f"{row['evaluations']} evaluations: {row['config']}", flush=True)
    page = markdown(rows, args.budget, time.perf_counter() - started, model_rows)
    Path(args.results).write_text(page + kept_by_hand(Path(args.results)))
    print(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
