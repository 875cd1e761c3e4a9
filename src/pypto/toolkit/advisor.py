"""The advisor: swimlane patterns → the tuning guide's knobs, each with its evidence.

Takes a parsed swimlane and its `findings.Analysis` (without advice) → one `Advice` per rule,
whose status is "advise" (the pattern is there: what to change, the tasks and time range it
rests on, a rough gain), "ok" (checked, not there) or "no-info" (the trace lacks what the rule
needs - said instead of guessed). Keeps: a rule reads only what both PyPTO's traces and ours
carry (task names, event hints, flows, lanes), except where it says it needs one of our
extensions (`gm_reads`, AICPU lanes), and then degrades to "no-info" on PyPTO's files.

Thresholds come from the tuning guide (shared/reference/compiler_runtime.md §4-§5): tasks
under ~10 us are overhead-bound, auto VecNBuffer targets one full wave (`mg_vec_parallel_lb`
= the vector core count), L1Reuse factors are 2/4/8. Gains are rough upper bounds, stated so.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Callable

import numpy as np

from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.trace_columns import ABSENT, grouped
from pypto.toolkit.analyses.sched_overhead import report as overhead_report
from pypto.toolkit.findings import Advice, Analysis
from pypto.toolkit.identity import instance_codes, leaves, windows
from pypto.toolkit.rule_context import BusyCurve, RuleContext, lane_gaps, pct, union

SMALL_TASK_US = 10.0            # guide §4.3: vector tasks under ~10 us are overhead-bound
SPLIT_MIN_US = 5.0              # splitting tasks shorter than this mostly adds per-task overhead
SIGNIFICANT = 0.10              # a pattern must cover this share of the span (or bytes)
MIN_GAP_US = 1.0
MIN_INSTANCES = 8
# cores of a type idle this share of their time while ready work waited: ours (the next-gen
# runtime's qwen3-14b example reports AIC 15.0 % / AIV 10.3 %, runtime_facts.md section 5)
SCHED_OVERHEAD_PCT = 10.0
L1_FACTORS = (8, 4, 2)          # guide §4.4: typical cube_l1_reuse_setting values
_HASHORDER = re.compile(r"func(\d+)_(\d+)$")
_BUILD = re.compile(r"build window (\d+)$")


# ----------------------------------------------------------------------------------------------
# rules
# ----------------------------------------------------------------------------------------------

def stitch(c: RuleContext) -> Advice:
    """Wide gaps between stitch windows: each window boundary is a barrier the control AICPU
    pays for; more root instances per window means fewer boundaries."""
    knob = "stitch_function_max_num"
    window, instance = windows(c.tasks), instance_codes(c.tasks)
    start, end = c.tasks.start, c.tasks.end
    # window -> [first task, last task, root instances]
    wins = {}
    for w, at in grouped([window[i] for i in c.cores.tolist()]):
        ts = c.cores[at]
        wins[w] = [int(ts[start[ts] == start[ts].min()][0]), int(ts[end[ts] == end[ts].max()][0]),
                   set(instance[ts].tolist())]
    if len(wins) < 2:
        return Advice("stitch", knob, "ok", f"{len(wins)} stitch window: no window boundaries")
    s, e = c.start, c.end
    order = sorted(wins.values(), key=lambda w: s[w[0]])
    gaps = [(a[1], b[0]) for a, b in zip(order, order[1:]) if s[b[0]] > e[a[1]]]
    total = sum(s[b] - e[a] for a, b in gaps)
    if total < max(MIN_GAP_US, SIGNIFICANT * c.span):
        return Advice("stitch", knob, "ok",
                      f"{len(wins)} stitch windows, {total:.2f} us of gaps between them "
                      f"({pct(total, c.span):.0f}% of the span)")
    per_window = max(len(w[2]) for w in order)
    instances_all = sum(len(w[2]) for w in order)
    widest = sorted(gaps, key=lambda g: -(s[g[1]] - e[g[0]]))[:3]
    name = c.tasks.name
    evidence = [f"{len(wins)} windows of up to {per_window} root instance(s), "
                f"{instances_all} in all"]
    evidence += [f"gap {e[a]:.3f} -> {s[b]:.3f} us ({s[b] - e[a]:.3f} us) between "
                 f"window {window[a]} ({name[a]}) and window {window[b]} ({name[b]})"
                 for a, b in widest]
    names = tuple(name[t] for g in widest for t in g)
    time_range = (e[gaps[0][0]], s[gaps[-1][1]])
    building = _build_overlap(c, gaps)
    if building >= 0.5 * total:
        # the control AICPU was still building the next window: bigger windows take longer
        # to build by the same amount, so only less build work (fewer instances) helps
        evidence.insert(1, f"the control AICPU was building the next window during "
                           f"{building:.2f} us of the {total:.2f} us of gaps")
        return Advice("stitch", "unroll_list", "advise",
                      f"{len(wins)} stitch windows leave {total:.2f} us "
                      f"({pct(total, c.span):.0f}% of the span) idle between them, but the "
                      f"gaps are window build time: raising {knob} would not close them; give "
                      f"the AICPU fewer, bigger root instances (bigger view per iteration, "
                      f"Python for over static axes, unroll_list)",
                      tuple(evidence), names, len(names), time_range, None)
    suggest = min(1024, instances_all)
    windows_after = math.ceil(instances_all / suggest)
    gain = (total - building) * (1 - (windows_after - 1) / (len(wins) - 1))
    return Advice("stitch", knob, "advise",
                  f"{len(wins)} stitch windows leave {total:.2f} us "
                  f"({pct(total, c.span):.0f}% of the span) idle between them: raise "
                  f"{knob} from {per_window} to {suggest} (at most 1024)",
                  tuple(evidence), names, len(names), time_range, gain)


def _build_overlap(c: RuleContext, gaps: list[tuple[int, int]]) -> float:
    """How much of the gaps between windows the control AICPU was still building the window
    that follows the gap (our traces' `AICPU_CTRL` lane: "build window <n>"; 0 without it)."""
    cpu = c.data.aicpu_columns
    builds = {}
    for i in c.builds:
        m = _BUILD.match(cpu.name[i])
        if m:
            builds[int(m.group(1))] = (float(cpu.start[i]), float(cpu.end[i]))
    window = c.tasks.args.values("window")
    total = 0.0
    for a, b in gaps:
        w = window[b]
        start, end = builds.get(w if isinstance(w, int) else None, (0.0, 0.0))
        total += max(0.0, min(end, c.start[b]) - max(start, c.end[a]))
    return total


def _untiled_op(task_name: str) -> str:
    """The op an untiled task runs, from its label "(whole <op>)" (passes/untiled.py)."""
    m = re.search(r"\(whole (\w+)\)$", task_name)
    return m.group(1) if m else ""


def tile_shape(c: RuleContext) -> Advice:
    """A phase where fewer than half the vector cores work because one op has too few, long
    tasks: a smaller TileShape on that op gives more tasks to spread."""
    knob = "set_vec_tile_shapes"
    vec = c.of_kind("aiv")
    if not len(vec):
        return Advice("tile_shape", knob, "ok", "no vector tasks")
    curve, half = None, c.n_aiv / 2
    found = []
    for key, tasks in c.leaves_of("aiv"):
        mean = c.mean_dur(tasks)
        if len(tasks) >= half or mean < SPLIT_MIN_US:
            continue        # enough pieces already, or too short to split usefully
        phase = union(c, tasks)
        length = sum(b - a for a, b in phase)
        if length < max(SPLIT_MIN_US, SIGNIFICANT * c.span):
            continue
        curve = curve or BusyCurve(c.tasks.start[vec], c.tasks.end[vec])
        busy = sum(curve.integral(b) - curve.integral(a) for a, b in phase) / length
        if busy < half:
            found.append((length * (1 - busy / half), key, tasks, phase, busy, mean))
    if not found:
        return Advice("tile_shape", knob, "ok",
                      "no phase with fewer than half the vector cores busy on a few long tasks")
    gain, key, tasks, phase, busy, mean = max(found, key=lambda f: (f[0], f[1]))
    names, n = c.names(tasks)
    whole = _untiled_op(c.tasks.name[tasks[0]])
    if whole:
        return Advice("tile_shape", "pypto.loop", "advise",
                      f"only {busy:.1f} of {c.n_aiv} vector cores busy while leaf "
                      f"{c.leaf_name.get(key, key)} runs {whole} untiled ({len(tasks)} whole-"
                      f"tensor task(s), {mean:.2f} us on average): no TileShape splits it; "
                      f"compute it in a pypto.loop over views, or with ops that have tile rules",
                      (f"task label '(whole {whole})': the op has no tile rule",), names, n,
                      (phase[0][0], phase[-1][1]), gain)
    evidence = [f"leaf {c.leaf_name.get(key, key)}: {len(tasks)} task(s) of {mean:.2f} us on "
                f"average; {busy:.1f} of {c.n_aiv} vector cores busy over its "
                f"{sum(b - a for a, b in phase):.2f} us"]
    evidence += [f"also leaf {c.leaf_name.get(k, k)} ({len(ts)} task(s), {b:.1f} cores busy)"
                 for _, k, ts, _, b, _ in sorted(found, key=lambda f: -f[0])[1:4]]
    return Advice("tile_shape", knob, "advise",
                  f"only {busy:.1f} of {c.n_aiv} vector cores busy while leaf "
                  f"{c.leaf_name.get(key, key)} runs {len(tasks)} task(s): a smaller TileShape on "
                  f"its op splits it into more, shorter tasks", tuple(evidence), names, n,
                  (phase[0][0], phase[-1][1]), gain)


def _hashorder(c: RuleContext, tasks: np.ndarray, kind: str) -> int | None:
    """The merge group's hashorder our traces record (`merge` arg, "func<magic>_<order>")."""
    merge = c.tasks.args.column("merge")[tasks[0]]
    m = _HASHORDER.search(str(({} if merge is ABSENT else merge).get(kind, "")))
    return int(m.group(2)) if m else None


def vec_nbuffer(c: RuleContext) -> Advice:
    """Many isomorphic vector tasks under ~10 us, several per core: merging N of them into one
    task pays the per-task dispatch and head overhead once instead of N times."""
    knob = "vec_nbuffer_setting"
    gaps = None
    found = []
    for key, tasks in c.leaves_of("aiv"):
        mean = c.mean_dur(tasks)
        if len(tasks) < 2 * c.n_aiv or mean >= SMALL_TASK_US:
            continue
        # auto factor (guide §4.3): the largest n <= ceil(S/C) still leaving >= C tasks
        n = math.ceil(len(tasks) / c.n_aiv)
        while n > 1 and math.ceil(len(tasks) / n) < c.n_aiv:
            n -= 1
        gaps = gaps if gaps is not None else lane_gaps(c)
        gap = gaps[0][tasks[gaps[1][tasks]]].tolist()
        mean_gap = sum(gap) / len(gap) if gap else 0.0
        per_lane = len(tasks) / len(set(c.tasks.lane[tasks].tolist()))
        found.append((per_lane * (1 - 1 / n) * mean_gap, key, tasks, n, mean, mean_gap))
    if not found:
        return Advice("vec_nbuffer", knob, "ok",
                      f"no leaf with >= {2 * c.n_aiv} vector tasks under {SMALL_TASK_US:g} us")
    gain, key, tasks, n, mean, mean_gap = max(found, key=lambda f: (len(f[2]), f[1]))
    if gain < MIN_GAP_US:
        return Advice("vec_nbuffer", knob, "ok",
                      f"{len(tasks)} small vector tasks (leaf {c.leaf_name.get(key, key)}) are "
                      f"not overhead-bound: their cores idle {mean_gap:.3f} us on average "
                      f"while they are ready, so merging would save little")
    order = _hashorder(c, tasks, "vec_nbuffer")
    setting = f"{{-2: 1, {order if order is not None else -1}: {n}}}"
    names, count = c.names(tasks)
    lanes = len(set(c.tasks.lane[tasks].tolist()))
    evidence = [f"leaf {c.leaf_name.get(key, key)}: {len(tasks)} tasks of {mean:.2f} us on "
                f"average over {lanes} vector cores, "
                f"{mean_gap:.3f} us idle on the core before each",
                f"merging {n} per task leaves {math.ceil(len(tasks) / n)} tasks, still one full "
                f"wave on {c.n_aiv} cores; {{-2: 0}} lets the compiler pick n the same way"]
    if order is None:
        evidence.append("the trace does not say the group's hashorder: -1 applies n to every "
                        "vector group")
    evidence += [f"also leaf {c.leaf_name.get(k, k)} ({len(ts)} tasks of {m:.2f} us)"
                 for _, k, ts, _, m, _ in found if k != key][:3]
    return Advice("vec_nbuffer", knob, "advise",
                  f"{len(tasks)} isomorphic vector tasks of {mean:.2f} us (leaf "
                  f"{c.leaf_name.get(key, key)}) are overhead-bound: set {knob}={setting}",
                  tuple(evidence), names, count, c.time_range(tasks), gain)


def l1_reuse(c: RuleContext) -> Advice:
    """Cube tasks of one leaf loading the same GM block into L1: merging N of them loads it
    once (needs our `gm_reads`; PyPTO's operand hints carry no offsets)."""
    knob = "cube_l1_reuse_setting"
    cube = c.leaves_of("aic")
    if not cube:
        return Advice("l1_reuse", knob, "ok", "no cube tasks")
    reads = c.tasks.args.column("gm_reads")
    if all(r is ABSENT for _, ts in cube for r in reads[ts].tolist()):
        return Advice("l1_reuse", knob, "no-info",
                      "not enough information: the trace has no GM read regions (PyPTO's "
                      "operand hints name tensors, not the blocks each task loads)")
    found = []
    for key, tasks in cube:
        blocks: Counter = Counter()
        size: dict[tuple, float] = {}
        for r_list in reads[tasks].tolist():
            for sid, off, ext, nbytes in {(r[0], tuple(r[1]), tuple(r[2]), r[3])
                                          for r in (() if r_list is ABSENT else r_list)}:
                blocks[(sid, off, ext)] += 1
                size[(sid, off, ext)] = nbytes
        total = sum(n * size[b] for b, n in blocks.items())
        repeats = max(blocks.values(), default=0)
        factor = next((f for f in L1_FACTORS
                       if f <= repeats and len(tasks) / f >= c.n_aic / 2), None)
        if factor is None or not total:
            continue
        saved = sum((n - math.ceil(n / factor)) * size[b] for b, n in blocks.items())
        if saved < SIGNIFICANT * total:
            continue
        per_lane = c.total_dur(tasks) / len(set(c.tasks.lane[tasks].tolist()))
        found.append((saved, key, tasks, factor, total, repeats, per_lane * saved / total))
    if not found:
        return Advice("l1_reuse", knob, "ok",
                      "no GM block loaded again by cube tasks that could merge without idling "
                      "half the cube cores")
    saved, key, tasks, factor, total, repeats, gain = max(found, key=lambda f: (f[0], f[1]))
    order = _hashorder(c, tasks, "cube_l1_reuse")
    names, count = c.names(tasks)
    evidence = [f"leaf {c.leaf_name.get(key, key)}: {len(tasks)} cube tasks load "
                f"{total / 2**20:.2f} MiB from GM; blocks are loaded by up to {repeats} tasks",
                f"merging {factor} per task saves about {saved / 2**20:.2f} MiB "
                f"({pct(saved, total):.0f}%) and leaves {math.ceil(len(tasks) / factor)} tasks "
                f"for {c.n_aic} cube cores",
                "gain assumes the tasks are bound by their GM->L1 loads (an upper bound)"]
    return Advice("l1_reuse", knob, "advise",
                  f"cube tasks of leaf {c.leaf_name.get(key, key)} load the same GM blocks "
                  f"into L1 up to {repeats} times: set {knob}="
                  f"{{{order if order is not None else -1}: {factor}}}",
                  tuple(evidence), names, count, c.time_range(tasks), gain)


def _combines(c: RuleContext, src: np.ndarray, dst: np.ndarray) -> list[tuple[int, list[int]]]:
    """(combine task, its partials) for each vector task with two or more vector predecessors
    of one leaf whose only successor it is. NOTE: a task with fewer than two predecessors
    feeding only it cannot be one; the rest are grouped as the one-by-one rule groups them."""
    n = len(c.tasks)
    vec = np.zeros(n, dtype=bool)
    vec[c.of_kind("aiv")] = True
    edges = np.unique(src * n + dst)
    successors = np.bincount(edges // n, minlength=n)
    e_src, e_dst = edges // n, edges % n
    only = vec[e_src] & vec[e_dst] & (successors[e_src] == 1)
    candidates = np.flatnonzero(np.bincount(e_dst[only], minlength=n) >= 2)
    if not len(candidates):
        return []
    mine = np.isin(dst, candidates)
    preds: dict[int, set[int]] = defaultdict(set)
    for s, d in zip(src[mine].tolist(), dst[mine].tolist()):
        preds[d].add(s)
    keys = leaves(c.tasks)[0]
    combines = []
    for d in sorted(preds):
        by_leaf: dict[str, list[int]] = defaultdict(list)
        for p in preds[d]:
            if vec[p] and successors[p] == 1:
                by_leaf[keys[p]].append(p)
        parts = max(by_leaf.values(), key=len, default=[])
        if len(parts) >= 2:
            combines.append((d, parts))
    return combines


def reduce_split(c: RuleContext) -> Advice:
    """Vector tasks that each combine k isomorphic partial tasks feeding only them: the
    partials of a split reduce axis travelling through GM to a combine task."""
    knob = "set_vec_tile_shapes"
    src, dst = c.data.flow_columns.matched()
    if not len(src) and c.data.generator.startswith("openpto"):
        return Advice("reduce_split", knob, "ok", "no dependencies between tasks")
    if not len(src):    # PyPTO's files always carry flows; without them fan-in is invisible
        return Advice("reduce_split", knob, "no-info", "not enough information: the trace has "
                      "no dependency flows, so fan-in between tasks is not visible")
    combines = _combines(c, src, dst)
    if not combines:
        return Advice("reduce_split", knob, "ok",
                      "no vector task combines partials produced only for it")
    s, e = c.start, c.end
    latency = [s[d] - max(e[p] for p in ps) for d, ps in combines]
    on_path = {step.task for step in c.a.critical_path.steps}
    gain = sum(c.dur[d] + lat for (d, _), lat in zip(combines, latency) if d in on_path)
    d0, p0 = combines[0]
    consumer = np.array([d for d, _ in combines], dtype=np.int64)
    names, count = c.names(consumer)
    _, leaf_names = leaves(c.tasks)
    evidence = [f"{len(combines)} combine task(s) (leaf {leaf_names[d0]}) each wait for "
                f"{len(p0)} partial task(s) (leaf {leaf_names[p0[0]]}) made only for it",
                f"partial -> combine latency {sum(latency) / len(latency):.3f} us on average; "
                f"combine tasks take {sum(c.dur[d] for d, _ in combines):.3f} us in all",
                "if these partials come from splitting a reduce axis across tiles, make the "
                "tile cover the whole reduce axis so the reduction stays in one subgraph"]
    return Advice("reduce_split", knob, "advise",
                  f"{len(combines)} vector task(s) combine partials from {len(p0)} isomorphic "
                  f"tasks through GM: don't split the reduce axis (keep it whole in the "
                  f"TileShape)", tuple(evidence), names, count, c.time_range(consumer), gain)


def root_instances(c: RuleContext) -> Advice:
    """Many root instances (loop iterations) with little work each: every instance costs the
    control AICPU a build and the scheduler its tasks' dispatch."""
    knob = "unroll_list"
    codes = instance_codes(c.tasks)[c.cores]
    known = c.cores[codes >= 0]
    used, codes = np.unique(codes[codes >= 0], return_inverse=True)
    if len(used) < MIN_INSTANCES:
        return Advice("root_instances", knob, "ok", f"{len(used)} root instance(s)")
    # each instance's work: its tasks' durations added up (numpy, one pass: 1M tasks)
    busy = np.sort(np.bincount(codes, weights=c.tasks.dur[known], minlength=len(used)))
    tiny = int((busy < SMALL_TASK_US).sum())
    median = float(busy[len(busy) // 2])
    inst = used
    if tiny < 0.75 * len(inst):
        return Advice("root_instances", knob, "ok",
                      f"{len(inst)} root instances of {median:.2f} us of work (median)")
    builds = c.builds
    build = sum(c.data.aicpu_columns.dur[builds].tolist())
    evidence = [f"{len(inst)} root instances, {tiny} with under {SMALL_TASK_US:g} us of task "
                f"work (median {median:.2f} us, "
                f"{len(known) / len(inst):.1f} tasks each)"]
    gain = None
    if builds:
        each = build / len(inst)
        gain = each * len(inst) * 3 / 4
        evidence.append(f"the control AICPU spent {build:.2f} us building them ({each:.3f} us "
                        f"each); 4 bodies per instance would save about {gain:.2f} us of it")
    else:
        evidence.append("per-instance AICPU cost is not in the trace (no AICPU lanes)")
    tasks = known
    names, count = c.names(tasks)
    return Advice("root_instances", knob, "advise",
                  f"{len(inst)} tiny root instances: loop over a static axis with a Python "
                  f"for (one instance), take a bigger view per iteration, merge loops, or "
                  f"pypto.loop(..., unroll_list=[4])", tuple(evidence), names, count,
                  c.time_range(tasks), gain)


def sched_overhead(c: RuleContext) -> Advice:
    """Cores idle while ready work of their type waited (the next-gen runtime's
    sched_overhead_analysis): the AICPU's hop - a finished task seen, its successors resolved,
    the next dispatched - does not keep up with the tasks, so fewer, bigger tasks of that type
    (isomorphic ones merged) mean fewer hops. The tasks named are the type's most numerous
    leaf's."""
    found = overhead_report(c.data)
    if found is None or not found.cores:
        return Advice("sched_overhead", "vec_nbuffer_setting", "no-info",
                      "no ready counters: " + (found.reason if found else "no core tasks"))
    worst = max(found.cores, key=lambda o: (o.overhead_pct, o.core))
    kind = worst.core.lower()
    knob = "vec_nbuffer_setting" if kind == "aiv" else "cube_nbuffer_setting"
    if worst.overhead_pct < SCHED_OVERHEAD_PCT:
        return Advice("sched_overhead", knob, "ok",
                      "scheduling overhead " + ", ".join(f"{o.core} {o.overhead_pct:.1f}%"
                                                         for o in found.cores) +
                      f" of core time (under {SCHED_OVERHEAD_PCT:g}%)")
    key, tasks = max(c.leaves_of(kind), key=lambda kt: (len(kt[1]), kt[0]))
    names, count = c.names(tasks)
    evidence = [f"{worst.core}: {worst.overhead_pct:.1f}% of core time "
                f"({worst.idle_ready_core_us:.2f} of {worst.denominator_core_us:.2f} core-us) "
                f"idle while ready {worst.core} tasks waited, {worst.idle_ready_share_pct:.1f}% "
                f"of its idle time; {found.ready_meaning}",
                f"its most numerous leaf {c.leaf_name.get(key, key)}: {len(tasks)} tasks of "
                f"{c.mean_dur(tasks):.2f} us on average, each a dispatch and a resolve on an "
                f"AICPU thread"]
    return Advice("sched_overhead", knob, "advise",
                  f"{worst.core} cores sat idle {worst.overhead_pct:.1f}% of the time while "
                  f"ready {worst.core} tasks waited for the AICPU: merge isomorphic "
                  f"{worst.core} tasks ({knob}) so there are fewer, bigger ones",
                  tuple(evidence), names, count, c.time_range(tasks),
                  worst.idle_ready_core_us / worst.cores)


RULES: tuple[Callable[[RuleContext], Advice], ...] = (
    stitch, tile_shape, vec_nbuffer, l1_reuse, reduce_split, root_instances, sched_overhead)


def advise(data: SwimlaneData, analysis: Analysis) -> list[Advice]:
    """Every rule's finding on `data`, in `RULES` order."""
    ctx = RuleContext(data, analysis)
    return [rule(ctx) for rule in RULES]


def format_advice(advice: tuple[Advice, ...] | list[Advice]) -> str:
    """Advice for people: what to change first, then what could not be checked."""
    out = ["Advice"]
    todo = sorted((a for a in advice if a.status == "advise"),
                  key=lambda a: -(a.gain_us or 0.0))
    if not todo:
        out.append("  nothing to change found")
    for a in todo:
        out.append(f"  * [{a.knob}] {a.summary}")
        out += [f"      - {e}" for e in a.evidence]
        if a.time_range:
            out.append(f"      time range: {a.time_range[0]:.3f} -> {a.time_range[1]:.3f} us; "
                       f"{a.task_count} task(s), e.g. {', '.join(a.tasks[:3])}")
        if a.gain_us is not None:
            out.append(f"      expected gain: up to ~{a.gain_us:.2f} us")
    for status, title in (("no-info", "Not enough information"), ("ok", "Checked, fine")):
        rows = [a for a in advice if a.status == status]
        if rows:
            out.append(title)
            out += [f"  - [{a.knob}] {a.rule}: {a.summary}" for a in rows]
    return "\n".join(out)
