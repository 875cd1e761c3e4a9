"""One self-contained HTML page from one or two loaded runs.

Takes `model.load_run` records (with `tasks` from `tasks.task_index` and, for two runs, the
`diff.diff_runs` marks) → an HTML string that inlines the CSS, the vendored dagre layout
library and the page scripts, so it opens offline from disk or inside the swimlane viewer's
iframe. With `source=True` the user files named by the ops' `file:line` are embedded too.
"""
from __future__ import annotations

import json
import os
import re
from importlib import resources
from typing import Any

# Script order matters: each file uses the globals of the ones before it.
_SCRIPTS = ("vendor/dagre.min.js", "algo.js", "render.js", "app.js")
_MAX_SOURCE_BYTES = 1 << 20


def _asset(name: str) -> str:
    return resources.files("pypto.toolkit.graphview").joinpath("assets", name).read_text("utf-8")


def _public(x: Any) -> Any:
    """Drops the diff-only `_` fields before the model is written into the page."""
    if isinstance(x, dict):
        return {k: _public(v) for k, v in x.items() if not str(k).startswith("_")}
    if isinstance(x, list):
        return [_public(v) for v in x]
    return x


def _locs(x: Any):
    if isinstance(x, dict):
        if isinstance(x.get("loc"), str):
            yield x["loc"]
        for v in x.values():
            yield from _locs(v)
    elif isinstance(x, list):
        for v in x:
            yield from _locs(v)


def source_files(runs: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The readable files the ops point at, as lines (missing or huge files are left out)."""
    out = {}
    for path in sorted({loc.rpartition(":")[0] for loc in _locs(runs)}):
        try:
            if os.path.getsize(path) <= _MAX_SOURCE_BYTES:
                with open(path, encoding="utf-8", errors="replace") as f:
                    out[path] = f.read().splitlines()
        except OSError:
            continue
    return out


def _script(text: str) -> str:
    # NOTE: a literal "</script" would end the inline block early.
    return "<script>\n" + text.replace("</script", "<\\/script") + "\n</script>"


def build_html(runs: list[dict[str, Any]], title: str, source: bool = False) -> str:
    data = {"title": title, "runs": _public(runs),
            "source": source_files(runs) if source else None}
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    scripts = []
    for name in _SCRIPTS:
        text = _asset(name)
        if name.startswith("vendor/"):
            text = re.sub(r"//# sourceMappingURL=\S+\s*$", "", text)
        scripts.append(_script(text))
    html = _asset("graph.html")
    for key, value in (("CSS", _asset("graph.css")), ("SCRIPTS", "\n".join(scripts)),
                       ("TITLE", _escape(title)), ("DATA", blob)):
        html = html.replace("{{" + key + "}}", value)
    return html


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
