"""The object path, as the reader worked before its columns: a well-formed trace object read one
event at a time into `TaskEvent` / `Flow` objects (each flow end placed by the one-at-a-time
`SliceIndex.source` / `.target`), held by a `SwimlaneData` made of those objects. The tests hold
the columnar reader and every consumer to it (test_columnar_reader.py, test_columnar_outputs.py).
Also the traces both read: our writer's (small hand-made runs, a synthetic simulated run, a glm
benchmark run) and PyPTO's samples, as PyPTO wrote them and rewritten one event per line."""
from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from pathlib import Path

from pypto.profiling.flow_ends import SliceIndex
from pypto.profiling.swimlane import (PROCESS_NAME, Flow, Lane, SwimlaneData, TaskEvent,
                                      classify_lane, restore_args)
from pypto.profiling.swimlane_writer import write_swimlane

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "pypto_samples"
OURS = ["toy", "toy_shuffled", "toy_odd", "synthetic", "glm"]
PYPTO = [f"{how}_{name}" for name in ("ds32_sparse_flash_attention_quant", "ffn_dynamic_gelu",
                                      "glm_moe_fusion", "softmax") for how in ("pypto", "lines")]


def object_path(doc: dict) -> SwimlaneData:
    """`doc` (a trace object without malformed events or unusable times) read event by event."""
    lanes: dict[int, Lane] = {}
    process = PROCESS_NAME
    xs, starts, finishes = [], {}, {}
    counters: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "thread_name":
            lanes[e["tid"]] = classify_lane(e["tid"], str(e["args"].get("name", e["tid"])))
        elif ph == "M" and e.get("name") == "process_name":
            process = str(e["args"].get("name", process))
        elif ph == "X":
            xs.append(e)
        elif ph in ("s", "f"):
            (starts if ph == "s" else finishes)[e["id"]] = (e["tid"], e["ts"])
        elif ph == "C":
            for key, value in e["args"].items():
                name = str(e["name"]) if key == "size" else f"{e['name']}.{key}"
                counters[name].append((float(e["ts"]), float(value)))
    for e in xs:
        lanes.setdefault(e.get("tid", 0), Lane(e.get("tid", 0), str(e.get("tid", 0)), "other",
                                               None))

    def events(group: list[dict]) -> list[TaskEvent]:
        return [TaskEvent(i, e.get("id", i), e.get("tid", 0), str(e.get("name", "")),
                          float(e.get("ts", 0.0)), float(e.get("dur", 0.0)),
                          dict(e.get("args", {}))) for i, e in enumerate(group)]
    tasks = events([e for e in xs if lanes[e.get("tid", 0)].kind != "aicpu"])
    cpu = events([e for e in xs if lanes[e.get("tid", 0)].kind == "aicpu"])
    index = SliceIndex([t.lane for t in tasks], [t.start for t in tasks], [t.end for t in tasks])
    flows = []
    for fid, (s_tid, s_ts) in starts.items():
        if fid in finishes:
            f_tid, f_ts = finishes[fid]
            flows.append(Flow(fid, s_tid, float(s_ts), f_tid, float(f_ts),
                              index.source(s_tid, float(s_ts)),
                              index.target(f_tid, float(f_ts))))
    data = SwimlaneData(lanes, tasks, cpu, flows, dict(counters), process,
                        dict(doc.get("otherData", {})))
    restore_args(data)
    return data


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def our_traces(folder: Path) -> dict[str, Path]:
    """Traces our writer wrote: the profiling tests' hand-made runs (every rare case the writer
    handles), a synthetic simulated run (AICPU blocks, thousands of flows and counter samples)
    and a glm benchmark run (cube tasks, GM reads, merge groups, labels)."""
    from pypto.machine.result import AicpuRun
    from pypto.machine.simulate import simulate
    from pypto.machine.spec import load as load_spec
    runs = _module("profiling_runs", ROOT / "tests" / "profiling" / "conftest.py")
    scaling = _module("simulator_scaling", ROOT / "benchmarks" / "simulator_scaling.py")
    glm = _module("glm_attention", ROOT / "benchmarks" / "glm_attention.py")
    odd = runs.make_result()            # (the profiling tests' odd_result)
    odd.aicpu += [AicpuRun(1, "dispatch", 800, 1000, {"z": 1}),
                  AicpuRun(1, "dispatch", 800, 1000, {"a": [1, 2]}),
                  AicpuRun(2, "resolve", 1100, 1200, {"window": "w0", "cost": 3, "merge": None,
                                                      "x": float("nan")})]
    odd.tasks[3].end = odd.tasks[3].start
    odd.tasks[3].task.merge = {"a": (1, 2), 3: "x", "s": {2, 1}}
    odd.tasks[0].hbm_bytes = float("inf")
    results = {"toy": runs.make_result(), "toy_shuffled": runs.make_result(shuffle=True),
               "toy_odd": odd,
               "synthetic": simulate(scaling.synthetic(3000), load_spec("a2a3"), "synthetic"),
               "glm": glm.run(batch=1).last_run}
    return {name: write_swimlane(result, folder / f"{name}.json")
            for name, result in results.items()}


def trace_files(folder: Path) -> dict[str, Path]:
    """Every trace of `OURS` and `PYPTO`, by name (ours written into `folder`)."""
    return {**our_traces(folder), **pypto_traces(folder)}


def pypto_traces(folder: Path) -> dict[str, Path]:
    """PyPTO's samples as PyPTO wrote them, and rewritten one event per line (our layout)."""
    out = {}
    for path in sorted(SAMPLES.glob("*_merged_swimlane.json")):
        name = path.name.replace("_merged_swimlane.json", "")
        out[f"pypto_{name}"] = path
        doc = json.loads(path.read_text())
        lines = ",\n".join(json.dumps(e, separators=(",", ":")) for e in doc["traceEvents"])
        rest = "".join(f",{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}"
                       for k, v in doc.items() if k != "traceEvents")
        out[f"lines_{name}"] = folder / f"lines_{name}.json"
        out[f"lines_{name}"].write_text('{"traceEvents":[\n' + lines + "\n]" + rest + "}\n")
    return out
