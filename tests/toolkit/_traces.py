"""Synthetic swimlanes for the toolkit tests: a few lines describe tasks, the helper writes a
trace in PyPTO's layout (ours with our `args` extensions, or PyPTO's with hints only)."""
from __future__ import annotations

import json
from pathlib import Path

def lane_tid(name: str) -> int:
    kind, num = name.rsplit("_", 1)
    return 1000 + 2 * int(num) if kind in ("AIC", "AIV", "HUB") else 3000 + int(num)


def task(lane: str, start: float, dur: float, leaf: str = "L0", window: int = 0,
         instance: int = 0, call: int = 0, **args) -> dict:
    return {"lane": lane, "start": start, "dur": dur, "leaf": leaf, "window": window,
            "instance": instance, "call": call, "args": args}


def build(tasks: list[dict], flows: list[tuple[int, int]] = (), aic: int = 24, aiv: int = 48,
          ours: bool = True, aicpu: list[dict] = ()) -> dict:
    """A trace object; `flows` are (src, dst) positions in `tasks`."""
    lanes = [f"AIC_{i}" for i in range(1, aic + 1)] + \
        [f"AIV_{i}" for i in range(aic + 1, aic + aiv + 1)]
    if not ours:
        lanes.append("HUB_80")
    events = [{"args": {"name": "Machine View"}, "cat": "__metadata", "name": "process_name",
               "ph": "M", "pid": 1}]
    events += [{"args": {"name": n}, "cat": "__metadata", "name": "thread_name", "ph": "M",
                "pid": 1, "tid": lane_tid(n)} for n in lanes]
    if aicpu:
        events.append({"args": {"name": "AICPU_CTRL"}, "cat": "__metadata",
                       "name": "thread_name", "ph": "M", "pid": 1, "tid": 5000})
    for i, t in enumerate(tasks):
        psg = int(t["leaf"].lstrip("L")) if t["leaf"].lstrip("L").isdigit() else 0
        leaf_hash = 0 if t["lane"].startswith("HUB") else 1000 + psg
        args = {"event-hint": f"Task:[{t['window']}-{t['instance']}-{t['call']}], rootHash:7, "
                              f"callOpMagic:{10000 + t['call']}, leafHash:{leaf_hash}, "
                              f"TaskId:{(t['instance'] << 20) + t['call']}",
                "color": "", "taskId": (t["instance"] << 20) + t["call"], "seqNo": t["window"]}
        if ours:
            args.update({"leaf": t["leaf"], "window": t["window"], "instance": t["instance"],
                         "call": t["call"]})
        args.update(t["args"])
        events.append({"args": args, "cat": "event", "id": i,
                       "name": f"{t['window']}-{t['instance']}-{t['call']}-0-{psg}()",
                       "ph": "X", "pid": 1, "tid": lane_tid(t["lane"]), "ts": t["start"],
                       "dur": t["dur"]})
    for k, a in enumerate(aicpu):
        events.append({"args": {}, "cat": "event", "id": len(tasks) + k, "name": a["name"],
                       "ph": "X", "pid": 1, "tid": 5000, "ts": a["start"], "dur": a["dur"]})
    for k, (s, d) in enumerate(flows):
        src, dst = tasks[s], tasks[d]
        fid = 100000 + k
        events.append({"cat": "machine-view-last-dep", "id": fid, "name": "machine-view-last-dep",
                       "ph": "s", "pid": 1, "tid": lane_tid(src["lane"]),
                       "ts": src["start"] + src["dur"] - 0.0001})
        events.append({"bp": "e", "cat": "machine-view-last-dep", "id": fid,
                       "name": "machine-view-last-dep", "ph": "f", "pid": 1,
                       "tid": lane_tid(dst["lane"]), "ts": dst["start"]})
    other = {"generator": "openpto test", "clock_mhz": 1800} if ours else None
    return {"traceEvents": events, **({"otherData": other} if other else {})}


def write(path: Path, obj: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path
