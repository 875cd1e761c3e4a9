"""The toolkit's analyses of a model's headline run, as the paragraph `docs/models.md` prints
under its table: statistics, scheduling overhead, blockers and the critical paths, each set
against the run's bounds (`pypto.profiling.bounds`) so the page says whether they agree.

`summary(folder, row)` reads the run folder `benchmarks/models.py` wrote (the same
`pypto-toolkit analyze --stats --overhead --blockers --paths` reads) and the variant's row
(kernel time, roofline terms, chain bound) → markdown. The checks it states:

* the static path (the heaviest dependency chain before scheduling) is the chain bound, read
  from the trace: they must agree to the trace's 1 ns rounding per task;
* the busiest core type's busy time per core is at least its roofline term (cube for AIC,
  vector for AIV: every task lasts at least its compute), and its cost-term split says how
  much of it that compute is;
* the idle core time the blockers attribute adds up to cores x span - busy.
"""
from __future__ import annotations

from pathlib import Path

from pypto.toolkit.analyses import blockers, kernel_stats, paths, sched_overhead
from pypto.toolkit.trace import load

_TERM_OF = {"AIC": "cube", "AIV": "vector"}
_TOP_CAUSES = 4


def summary(folder: str | Path, row: dict) -> str:
    """The analyses paragraph of the run in `folder` (`row`: its variant's table row)."""
    data = load(folder)
    stats = kernel_stats.report(data)
    over = sched_overhead.report(data)
    block = blockers.report(data)
    path = paths.report(data)
    cores = {"AIC": len(data.lanes_of("aic")), "AIV": len(data.lanes_of("aiv"))}
    return " ".join([_stats(stats, row, cores), _overhead(over), _blockers(block),
                     _paths(path, row)])


def _stats(stats: kernel_stats.KernelStats, row: dict, cores: dict[str, int]) -> str:
    busiest = max(stats.cores, key=lambda g: g.total / cores.get(g.core, 1))
    per_core = busiest.total / cores.get(busiest.core, 1)
    term = _TERM_OF.get(busiest.core)
    bound = row.get(f"{term}_us") if term else None
    terms = sorted((busiest.terms or {}).items(), key=lambda kv: -kv[1])
    split = ", ".join(f"{name} {100 * us / busiest.total:.0f} %" for name, us in terms[:3]
                      if busiest.total)
    top = stats.leaves[0] if stats.leaves else None
    text = (f"**Statistics**: {busiest.core} is the busier core type, {busiest.tasks:,} tasks "
            f"of mean {busiest.mean:.2f} µs (p95 {busiest.p95:.2f}), {per_core:,.1f} µs busy "
            f"per core")
    if bound is not None:
        verdict = "at least" if per_core >= bound - 1e-6 else "BELOW (a bound violated)"
        text += f", {verdict} its {term} roofline term {bound:,.1f} µs"
    if split:
        text += f"; its time by cost term: {split}"
    built = [w.build_us for w in stats.windows if w.build_us is not None]
    if built:
        text += (f". {len(stats.windows)} stitch windows, built one after another by the "
                 f"control AICPU in {sum(built):,.1f} µs in all ({max(built):,.1f} µs the "
                 f"longest)")
    if top is not None:
        text += (f". The heaviest leaf is {top.name} ({top.share_pct:.0f} % of task time"
                 + (f", mostly line `{Path(top.line).name}`" if top.line else "") + ").")
    return text


def _overhead(over: sched_overhead.Overhead) -> str:
    if not over.cores:
        return f"**Scheduling overhead**: no figure ({over.reason})."
    parts = [f"{c.core} {c.overhead_pct:.1f} %" for c in over.cores]
    return (f"**Scheduling overhead** (cores idle while ready work of their type waited, of "
            f"core time over the span): {', '.join(parts)}.")


def _blockers(block: blockers.Blockers) -> str:
    causes = sorted(block.by_cause.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{name} {100 * us / block.idle_us:.0f} %"
                      for name, us in causes[:_TOP_CAUSES] if us > 0 and block.idle_us)
    total = sum(block.by_cause.values())
    check = "adds up" if abs(total - block.idle_us) <= 1e-6 * max(1.0, block.idle_us) else \
        f"DOES NOT add up ({total:.3f})"
    return (f"**Blockers**: of {block.idle_us:,.0f} idle core-µs over the span ({check} to "
            f"cores x span - busy) the cores waited for: {shown}.")


def _paths(path: paths.Paths, row: dict) -> str:
    chain = row.get("chain_us")
    tolerance = 0.0005 * max(1, len(path.static))
    agree = chain is not None and abs(path.static_us - chain) <= tolerance
    waits = sorted(((k, v) for k, v in path.waits.items() if v > 0), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v:,.1f}" for k, v in waits[:_TOP_CAUSES])
    text = (f"**Critical path**: static {path.static_us:,.1f} µs ({len(path.static):,} tasks)"
            + (f", {'equal to' if agree else 'NOT equal to'} the chain bound {chain:,.1f} µs"
               if chain is not None else "")
            + f"; observed {path.observed_us:,.1f} µs of the {path.span_us:,.1f} µs span")
    if shown:
        text += f", its waits by cause (µs): {shown}"
    return text + (f"; the rest: core hold {path.core_hold_us:,.1f}, chain difference "
                   f"{path.chain_difference_us:,.1f}, overlap {path.overlap_us:,.1f} µs.")
