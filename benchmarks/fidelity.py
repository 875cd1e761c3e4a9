"""The fidelity section of the benchmark suite: our simulated ratios next to published ones, in
two parts that must not be mixed (issue 15).

- **Hardware** (compiler_runtime.md §6.1): what the guide and its case studies measured on
  Atlas A2/A3 boards, on our models of those kernels (examples/models/) or on stand-ins where
  the shapes are not published (marked). Target: every direction right, >= 80 % of the ratios
  within +-30 %, absolute kernel times within +-50 % where the guide gives the shape.
- **0.2.0 cost model** (§6.3): PyPTO's own simulator in SIM mode, "relative only": subgraph,
  leaf and devTask counts must match exactly; ratios need only the right direction.

Each row names the mechanism of our model that carries it (docs/calibration.md says where
each mechanism's constants come from and which were fitted on which rows).
"""
from __future__ import annotations

from typing import Callable

# Why a ratio family is beyond 30 % of the cost model's (docs/calibration.md tracks them).
_NOTES = {
    "S6": "the cost model pays each merged member's 1400-cycle copy-in serially; our members "
          "overlap their loads within the task",
    "S7": "tiny tasks are cheaper here than in the cost model (task head + per-op sync)",
    "S8": "a split reduce axis adds partial/combine vector ops; the cost model charges them "
          "its large fixed per-op latencies",
    "S12": "a devTask boundary costs ~1 us here vs ~4.7 us in the cost model (build + launch)",
    "S14": "per-task cost grows more slowly with M here (L2 hits on the shared B panel)",
    "S15": "merging more L1-reuse blocks overlaps their loads here",
    "S17": "the GM round trip between mismatched tiles is cheaper here",
}

# The mechanism of our model each family turns on.
_MECHANISM = {
    "S6": "task head + per-op sync vs more parallel tasks (vec NBuffer merge)",
    "S7": "task head + dispatch per tiny task",
    "S8": "vector per-op cost (issue + repeats + sync) of partial/combine ops",
    "S12": "window build + launch per devTask",
    "S14": "L2 reuse of the B panel, bandwidth shares",
    "S15": "L1 reuse: shared A loads paid once vs fewer parallel tasks",
    "S16": "split-K: more parallel cube tasks + vector adds",
    "S17": "GM round trip between mismatched tiles",
}


def _same_direction(ours: float, published: float, flat: float = 0.05) -> bool:
    """Both ratios say "faster", both "slower", or the published one is flat (within 5 %) and
    ours within 30 % of it."""
    if abs(published - 1) <= flat:
        return abs(ours - 1) <= 0.3
    return (ours > 1) == (published > 1)


def _us(k, key="kernel_cycles"):
    """A stat of `k`'s run in us; by default its AIC/AIV span, which is what PyPTO's tools
    print as "AICore End-to-End Time" and the 0.2.0 cost model's E2E (swimlane_format §0.1)."""
    r = k.last_run
    return r.us(r.stats[key])


def cost_model_rows(suite: str, log: Callable = print) -> tuple[list[dict], list]:
    """§6.3: the 0.2.0 wheel's SIM-mode counts (exact) and ratios (direction and shape)."""
    import cases
    rows, runs = [], []

    def count(case, setup, ours, published, note=""):
        ok = ours == published
        rows.append({"part": "cost model", "kind": "count", "case": case, "setup": setup,
                     "ours": ours, "published": published, "ok": ok, "note": note,
                     "mechanism": "compiler structure (passes/)"})
        log(f"  {case} {setup}: {ours} vs {published} {'ok' if ok else 'DIFF'}")

    def ratio(case, setup, ours, published, note=""):
        ok = _same_direction(ours, published)
        within = abs(ours / published - 1) <= 0.3
        note = note or ("" if within else _NOTES.get(case, ""))
        rows.append({"part": "cost model", "kind": "ratio", "case": case, "setup": setup,
                     "ours": ours, "published": published, "ok": ok, "within": within,
                     "note": note, "mechanism": _MECHANISM.get(case, "")})
        log(f"  {case} {setup}: {ours:.2f} vs {published:.2f} "
            f"{'direction ok' if ok else 'WRONG DIRECTION'}{'' if within else ' (beyond 30 %)'}")

    def calls(k):
        return cases._root_calls(k)

    ks = {t: cases.elementwise(t) for t in [(32, 512), (16, 1024)]}
    for t, k in ks.items():
        count("S2", f"tile {t} subgraphs", calls(k), 16)
        runs.append(k.last_run)
    if suite == "smoke":
        return rows, runs
    s6 = {n: cases.elementwise((8, 512), {-2: 1, -1: n}) for n in (2, 4, 8, 64)}
    for n, pub in zip((2, 4, 8, 64), (32, 16, 8, 1)):
        count("S6", f"vec_nbuffer {{-1:{n}}} subgraphs", calls(s6[n]), pub)
    base = _us(s6[2])
    for n, pub in zip((4, 8, 64), (9.97, 16.76, 112.86)):
        ratio("S6", f"E2E {{-1:{n}}} / {{-1:2}}", _us(s6[n]) / base, pub / 8.06)
    s7 = {"{}": cases.elementwise((4, 256)), "{-2:0}": cases.elementwise((4, 256), {-2: 0})}
    count("S7", "tile (4,256) {} subgraphs", calls(s7["{}"]), 256)
    count("S7", "tile (4,256) {-2:0} subgraphs", calls(s7["{-2:0}"]), 52)
    ratio("S7", "E2E {} / {-2:0}", _us(s7["{}"]) / _us(s7["{-2:0}"]), 54.48 / 21.34)
    s8 = {t: cases.rmsnorm_like(t) for t in [(8, 1024), (16, 1024), (8, 256), (8, 128),
                                             (32, 256)]}
    for (t, k), pub, e2e in zip(s8.items(), (8, 4, 8, 8, 2), (3.94, 4.17, 7.33, 10.93, 8.91)):
        count("S8", f"tile {t} subgraphs", calls(k), pub)
        ratio("S8", f"E2E tile {t} / (8,1024)", _us(k) / _us(s8[(8, 1024)]), e2e / 3.94)
    s12 = {n: cases.stitch_loop(n) for n in (2, 4, 8, 16, 64, 128)}
    pub12 = {2: 153.89, 4: 77.07, 8: 38.66, 16: 19.45, 64: 14.65, 128: 14.65}
    for n, k in s12.items():
        count("S12", f"stitch {n} devTasks", k.last_run.stats["windows"], -(-64 // n))
        if n != 2:
            ratio("S12", f"E2E stitch 2 / stitch {n}", _us(s12[2]) / _us(k),
                  pub12[2] / pub12[n])
    s14 = {m: cases.matmul_l1(m) for m in (2048, 8192, 16384)}
    for (m, k), pub in zip(s14.items(), (16, 64, 64)):
        count("S14", f"M={m} subgraphs (auto L1 reuse)", calls(k), pub)
    ratio("S14", "E2E M=8192 / M=2048", _us(s14[8192]) / _us(s14[2048]), 22.01 / 6.58)
    s15 = {n: cases.matmul_l1(8192, {-1: n}) for n in (1, 2, 4, 8)}
    for (n, k), pub, e2e in zip(s15.items(), (64, 32, 16, 8), (22.01, 16.97, 11.64, 18.94)):
        count("S15", f"l1_reuse {{-1:{n}}} subgraphs", calls(k), pub)
        if n != 1:
            ratio("S15", f"E2E {{-1:1}} / {{-1:{n}}}", _us(s15[1]) / _us(k), 22.01 / e2e)
    s16 = {e: cases.split_k(e) for e in (False, True)}
    count("S16", "split-K off subgraphs", calls(s16[False]), 1)
    count("S16", "split-K on subgraphs", calls(s16[True]), 36)
    ratio("S16", "E2E off / on", _us(s16[False]) / _us(s16[True]), 88.50 / 53.82)
    s17 = {v: cases.tile_match(v) for v in ("matched", "mismatched", "scope")}
    for (v, k), pub in zip(s17.items(), (8, 16, 4)):
        count("S17", f"{v} subgraphs", calls(k), pub)
    ratio("S17", "E2E mismatched / matched", _us(s17["mismatched"]) / _us(s17["matched"]),
          11.84 / 4.39)
    for group in (s6, s7, s8, s12, s14, s15, s16, s17):
        runs.extend(k.last_run for k in group.values())
    return rows, runs


def _variant(model: str, prefix: str):
    """Run the examples/models variant whose name starts with `prefix` at full size, timing
    only (benchmarks/models.py); its kernel."""
    import models
    variant = next(v for v in models.MODELS[model]("full") if v.name.startswith(prefix))
    _, kernel = models.measure(variant, variant.inputs())
    return kernel


def _glm_tp8(stitch: int):
    """Our glm attention at PyPTO's own decode case size (TP8 shard, one KV head: batch 8 x 32
    KV blocks = 256 root instances), blocks outer, timing only; its kernel."""
    import models
    g = models._module("glm_attention")
    shape = g.Shape(batch=8, kv_len=16384, kv_heads=1)
    variant = models.Variant("glm_attention", f"TP8 shard, stitch {stitch}",
                             lambda: g.build(stitch, g.Tiles(), "blocks_outer"),
                             lambda: g.inputs(shape), f"glm{shape}")
    _, kernel = models.measure(variant, variant.inputs())
    return kernel


def _glm_guide(stitch: int):
    """Our glm attention in the guide's own form (runtime_facts §3: b 8 x s1 1 x n2 1 x g 1 x
    s2 32 with unroll_list [8, 4, 2, 1] on s2: 32 root instances of 8 s2 tiles), timing only;
    its kernel."""
    import models
    g = models._module("glm_attention")
    variant = models.Variant("glm_attention", f"guide's form, stitch {stitch}",
                             lambda: g.build_guide(stitch), lambda: g.inputs(g.GUIDE),
                             f"glm{g.GUIDE}")
    _, kernel = models.measure(variant, variant.inputs())
    return kernel


# The guide's stitch table (runtime_facts §3): kernel and E2E in us at stitch 1 / 128 / 512.
GUIDE_GLM = {"kernel": (1230, 180, 150), "E2E": (1590, 803, 977)}


def glm_guide_rows(rows: list[dict], log: Callable = print) -> list:
    """#1-#2 on the guide's own loop nest: kernel and E2E at stitch 1 / 128 / 512 against the
    guide's, each point within +-50 % (as the absolute rows). Our runtime counts root
    instances (compiler_runtime §5.3: an unrolled root is one instance), so 128 and 512 both
    hold the 32 roots in one window; counting unrolled bodies ("unrollTimes", hicann/pypto
    until 5e9a4e545) would close 128 after 16 roots, which stitch 16 shows here."""
    kernels = {n: _glm_guide(n) for n in (1, 16, 128, 512)}
    split = kernels[16].last_run.stats   # what counting unrolled bodies would run at 128
    for what, key in (("kernel", "kernel_cycles"), ("E2E", "host_e2e_cycles")):
        ours = [_us(kernels[n], key) for n in (1, 128, 512)]
        rel = [o / p for o, p in zip(ours, GUIDE_GLM[what])]
        ok = all(1 / 1.5 <= r <= 1.5 for r in rel)
        windows = " / ".join(str(kernels[n].last_run.stats["windows"]) for n in (1, 128, 512))
        note = (f"{kernels[128].last_run.stats['instances']} root instances of 8 s2 tiles; "
                f"windows {windows}: counting roots (ours, §5.3) 128 and 512 are the same "
                f"run; counting the 256 unrolled bodies, 128 would close after 16 roots "
                f"({split['windows']} windows: {_us(kernels[16], key):.0f} µs here) and 512 "
                f"stay one window")
        rows.append({"part": "hardware", "kind": "sweep", "case": "#1-#2",
                     "setup": f"glm attention in the guide's form (b 8, 16k, 1 KV head, "
                              f"unroll_list [8,4,2,1] on s2): {what}, stitch 1 / 128 / 512",
                     "ours": ours, "published": list(GUIDE_GLM[what]), "rel": rel, "ok": ok,
                     "within": ok, "note": note,
                     "mechanism": "window build + launch per devTask, one window at a time; "
                                  "the host launch before the first build (E2E)"})
        log(f"  #1-#2 guide's form {what}: {' / '.join(f'{o:.0f}' for o in ours)} us vs "
            f"{' / '.join(map(str, GUIDE_GLM[what]))} {'ok' if ok else 'OUT'}")
    return list(kernels.values())


def shape(rows: list[dict], case: str, setup: str, kernel: dict, e2e: dict,
          log: Callable = print) -> None:
    """The issue's shape criteria on a stitch sweep: kernel time non-increasing, E2E U-shaped
    (its minimum strictly inside the sweep)."""
    ks, es = list(kernel.values()), list(e2e.values())
    non_increasing = all(a >= b for a, b in zip(ks, ks[1:]))
    u_shaped = 0 < es.index(min(es)) < len(es) - 1
    for what, times, ok, note, mechanism in (
            ("kernel non-increasing", ks, non_increasing, "",
             "window build + launch vs scheduler threads"),
            ("E2E U-shaped", es, u_shaped, "E2E with the host's launch (stats host_e2e_cycles)",
             "the first window's build grows with the stitch size")):
        rows.append({"part": "hardware", "kind": "shape", "case": case,
                     "setup": f"{setup}: {what}",
                     "ours": " / ".join(f"{v:.0f}" for v in times) + " µs",
                     "published": what.split()[-1], "ok": ok, "within": ok, "note": note,
                     "mechanism": mechanism})
    log(f"  {case} {setup}: kernel {ks} {'ok' if non_increasing else 'NOT non-increasing'}, "
        f"E2E {es} {'ok' if u_shaped else 'NOT U-shaped'}")


def hardware_rows(suite: str, log: Callable = print) -> tuple[list[dict], list]:
    """§6.1: the boards' published effects on our models of the guide's kernels."""
    import cases
    rows, kernels = [], []

    def ratio(case, setup, ours, published, mechanism, note=""):
        within = abs(ours / published - 1) <= 0.3
        rows.append({"part": "hardware", "kind": "ratio", "case": case, "setup": setup,
                     "ours": ours, "published": published, "ok": _same_direction(ours, published),
                     "within": within, "note": note, "mechanism": mechanism})
        log(f"  {case} {setup}: {ours:.2f} vs {published:.2f} {'ok' if within else 'OUT'}")

    def absolute(case, setup, ours_us, low_us, high_us, mechanism, note=""):
        within = low_us / 1.5 <= ours_us <= high_us * 1.5
        rows.append({"part": "hardware", "kind": "us", "case": case, "setup": setup,
                     "ours": ours_us, "published": (low_us, high_us), "ok": within,
                     "within": within, "note": note, "mechanism": mechanism})
        log(f"  {case} {setup}: {ours_us:.1f} us vs {low_us}-{high_us} us "
            f"{'ok' if within else 'OUT'}")

    def kernel_us(k):
        return _us(k, "kernel_cycles")

    mm = {"narrow": cases.narrow_matmul(False), "block": cases.narrow_matmul(True)}
    kernels += mm.values()
    ratio("#3", "matmul (884736,16)x(16,16), L1 reuse {-1:4} / block-diagonal (kernel)",
          kernel_us(mm["narrow"]) / kernel_us(mm["block"]), 500 / 40,
          "transfer shape: 32-byte ND2NZ rows, 64-byte NZ2ND rows, fixpipe row floor")
    absolute("#3", "block-diagonal (221184,64)x(64,64) kernel", kernel_us(mm["block"]), 40, 40,
             "HBM reads + L2 write-back, 128-byte rows")
    if suite == "smoke":
        return rows, kernels
    glm = {n: _glm_tp8(n) for n in (1, 128, 512)}
    kernels += glm.values()
    glm_note = "our GLM-4.5 decode at PyPTO's own case size (TP8 shard: 12 query heads, 1 KV " \
               "head; batch 8, 16k cache: 256 root instances); the guide does not name its case"
    ratio("#1", "glm attention kernel, stitch 1 / 128", kernel_us(glm[1]) / kernel_us(glm[128]),
          1230 / 180, "window boundaries: build + launch per devTask, completion latency per "
          "task, windows in sequence", glm_note)
    ratio("#1", "glm attention E2E, stitch 1 / 128", _us(glm[1], "host_e2e_cycles")
          / _us(glm[128], "host_e2e_cycles"), 1590 / 803,
          "host launch + the first window's build before any task", glm_note)
    ratio("#2", "glm attention kernel, stitch 128 / 512",
          kernel_us(glm[128]) / kernel_us(glm[512]), 180 / 150,
          "the second window's build (1 us per instance) outlasts the first window's run",
          glm_note)
    ratio("#2", "glm attention E2E, stitch 128 / 512", _us(glm[128], "host_e2e_cycles")
          / _us(glm[512], "host_e2e_cycles"), 803 / 977,
          "the first window's build grows with instances and cross-instance edges", glm_note)
    kernels += glm_guide_rows(rows, log)
    sweep = {n: _variant("glm_attention", f"blocks outer, stitch {n} ")
             for n in (1, 4, 16, 128, 512)}
    kernels += sweep.values()
    shape(rows, "#1-#2", "glm attention at 2,048 root instances (batch 8, 8 KV heads, 16k), "
          "stitch 1 / 4 / 16 / 128 / 512", {n: kernel_us(k) for n, k in sweep.items()},
          {n: _us(k, "host_e2e_cycles") for n, k in sweep.items()}, log)
    idx = {n: _variant("indexer_prolog", n) for n in ("aligned", "small_m", "l1_reuse")}
    kernels += idx.values()
    idx_note = "our DeepSeek-V3.2 indexer prolog (batch 4); the case study's op differs in detail"
    ratio("#5", "indexer prolog, cube [128,128]x3 / m=16 tiles",
          kernel_us(idx["aligned"]) / kernel_us(idx["small_m"]), 76 / 56,
          "cube at small m: MAD heads, whole-fractal L0 loads, full L0B tiles not double "
          "buffered; GM bandwidth shared with the tasks of each task's life", idx_note)
    ratio("#6", "indexer prolog, L1 reuse off / on", kernel_us(idx["small_m"])
          / kernel_us(idx["l1_reuse"]), 56 / 49, "L1 reuse: a shared load paid once; GM bandwidth shared with the tasks of each "
          "task's life", idx_note)
    mat = {n: _variant("matmul_6144", f"{n} (") for n in ("plain", "loops")}
    kernels += mat.values()
    ratio("#7", "matmul 6144^3 FP16, recommended tiles / L2-aware outer loops",
          kernel_us(mat["plain"]) / kernel_us(mat["loops"]), 2.1 / 1.6,
          "L2 reuse across cores (LRU L2, HBM/L2 bandwidth shares)",
          "equal here: first waves at the guide's per-wave hit ratios (0.32 / 0.81), then "
          "both keep B: the plain form re-reads all of B (72 MiB) every wave with 3 MiB of new "
          "A and C lines between, a 75 MiB working set under the 100 MiB L2 keeps (the loops' "
          "~70 MiB too); below 75 MiB the plain form streams B (2.85 ms), the board's 2.1 ms "
          "is in between")
    absolute("#7", "matmul 6144^3, recommended tiles", kernel_us(mat["plain"]), 2100, 2100,
             "cube roofline + L2/HBM traffic")
    absolute("#7", "matmul 6144^3, L2-aware outer loops", kernel_us(mat["loops"]), 1600, 1600,
             "cube roofline + L2/HBM traffic")
    from fidelity_gdn import gdn_inverse_rows
    kernels += gdn_inverse_rows(ratio)
    return rows, kernels


def markdown(rows: list[dict]) -> list[str]:
    """The two tables: hardware rows first, then the cost model's."""
    out = ["## 2. Fidelity to published figures", ""]
    hw = [r for r in rows if r.get("part") == "hardware"]
    cm = [r for r in rows if r.get("part", "cost model") == "cost model"]
    if hw:
        ratios = [r for r in hw if r["kind"] == "ratio"]
        within = sum(r["within"] for r in ratios)
        right = sum(r["ok"] for r in ratios)
        absolute = [r for r in hw if r["kind"] == "us"]
        shapes = [r for r in hw if r["kind"] == "shape"]
        sweeps = [r for r in hw if r["kind"] == "sweep"]
        out += ["### 2a. Hardware (compiler_runtime.md §6.1: Atlas A2/A3 measurements)", "",
                f"Directions right: {right} of {len(ratios)}; within ±30 %: {within} of "
                f"{len(ratios)} (target 80 %); absolute kernel times within ±50 % of the "
                f"guide's: {sum(r['ok'] for r in absolute)} of {len(absolute)}; guide's-form "
                f"sweeps within ±50 % at every point: {sum(r['ok'] for r in sweeps)} of "
                f"{len(sweeps)}; shape criteria met: {sum(r['ok'] for r in shapes)} of "
                f"{len(shapes)}.", "",
                "| case | quantity | ours | published | ours / published | ±30 % | mechanism "
                "| note |", "|---|---|---:|---:|---:|---|---|---|"]
        for r in hw:
            if r["kind"] == "shape":
                out.append(f"| {r['case']} | {r['setup']} | {r['ours']} | {r['published']} | "
                           f" | {'ok' if r['ok'] else '**no**'} | {r['mechanism']} | "
                           f"{r['note']} |")
            elif r["kind"] == "sweep":
                out.append(f"| {r['case']} | {r['setup']} | "
                           f"{' / '.join(f'{v:.0f}' for v in r['ours'])} µs | "
                           f"{' / '.join(map(str, r['published']))} µs | "
                           f"{' / '.join(f'{v:.2f}' for v in r['rel'])} | "
                           f"{'ok' if r['ok'] else '**off** (±50 %)'} | {r['mechanism']} | "
                           f"{r['note']} |")
            elif r["kind"] == "us":
                lo, hi = r["published"]
                pub = f"{lo} µs" if lo == hi else f"{lo}-{hi} µs"
                rel = r["ours"] / ((lo + hi) / 2)
                out.append(f"| {r['case']} | {r['setup']} | {r['ours']:.1f} µs | {pub} | "
                           f"{rel:.2f} | {'ok' if r['ok'] else '**off** (±50 %)'} | "
                           f"{r['mechanism']} | {r['note']} |")
            else:
                verdict = "ok" if r["within"] else ("**off**" if r["ok"]
                                                    else "**off, wrong direction**")
                out.append(f"| {r['case']} | {r['setup']} | {r['ours']:.2f} | "
                           f"{r['published']:.2f} | {r['ours'] / r['published']:.2f} | "
                           f"{verdict} | {r['mechanism']} | {r['note']} |")
        out.append("")
    if cm:
        out += ["### 2b. The 0.2.0 cost model (compiler_runtime.md §6.3: SIM mode, relative "
                "only)", "",
                "Counts must match exactly; a ratio needs the right direction (a flat published "
                "ratio: ours within 30 %).", "",
                "| case | quantity | ours | published | | mechanism | note |",
                "|---|---|---:|---:|---|---|---|"]
        for r in cm:
            fmt = (lambda v: f"{v}") if r["kind"] == "count" else (lambda v: f"{v:.2f}")
            verdict = "ok" if r["ok"] else ("**differs**" if r["kind"] == "count"
                                            else "**wrong direction**")
            if r["kind"] == "ratio" and r["ok"] and not r.get("within", True):
                verdict = "direction ok (beyond 30 %)"
            out.append(f"| {r['case']} | {r['setup']} | {fmt(r['ours'])} | "
                       f"{fmt(r['published'])} | {verdict} | {r.get('mechanism', '')} | "
                       f"{r['note']} |")
        out.append("")
    return out
