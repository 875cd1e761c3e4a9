"""Write the viewer page: packed run data + the bundled JS/CSS → one self-contained HTML file.

The page needs no network: the template, stylesheet and scripts are package data read from
`assets/` and inlined; the data is embedded as a `<script type="application/json">` block that
the scripts parse once. Keeps: nothing from a trace reaches the page as markup - titles are
HTML-escaped, and the embedded JSON has `<`, `>`, `&` and U+2028/U+2029 escaped, so no string in
a trace can close the script element or inject HTML.
"""
from __future__ import annotations

import functools
import html
import json
import math
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from pypto.dtypes import DataType
from pypto.profiling.run_columns import RunColumns
from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit.analyses import ANALYSIS_SCRIPTS, page_data
from pypto.toolkit.viewer.pack import JsonText, pack, pack_run

# concatenated in this order into one script: model (data, indexes, statistics), draw (canvas),
# panels (DOM side panels), the analyses' tabs and panels (each registers in EXTENSIONS), main
# (state, input; starts the extensions), hooks (window.openpto, for tests)
_SCRIPTS = ("model.js", "draw.js", "panels.js", *(f"{name}.js" for name in ANALYSIS_SCRIPTS),
            "main.js", "hooks.js")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}
_MARKER = re.compile(r"@@(TITLE|CSS|JS|DATA)@@")
_WRITE_SLICE = 1 << 22          # characters encoded and written at a time


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _finite(obj: Any) -> Any:
    """`obj` with NaN/Infinity (which JSON cannot carry) as the strings "nan"/"inf"/"-inf"."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


# NOTE: a JsonText is encoded as this placeholder, then the text replaces it; a data string
# equal to the placeholder is found by counting, and then the texts are parsed instead
_PLACEHOLDER = "\x00openpto-json-text\x00"
_PLACEHOLDER_JSON = json.dumps(_PLACEHOLDER, ensure_ascii=False)


def _parsed(obj: Any) -> Any:
    """`obj` with each JsonText as the value it encodes."""
    if isinstance(obj, JsonText):
        return json.loads(obj.text)
    if isinstance(obj, dict):
        return {k: _parsed(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_parsed(v) for v in obj]
    return obj


def embed_json(obj: Any) -> str:
    """`obj` as JSON that is inert inside a `<script>` element (objects JSON cannot encode
    become their `str`; `JsonText` values are inserted as they are)."""
    return "".join(_json_pieces(obj))


def _json_pieces(obj: Any) -> Iterator[str]:
    """The text of `embed_json(obj)` in pieces, to be written one after the other: the
    encoder's text around each `JsonText`, in slices, and the JsonTexts themselves. NOTE: a
    1M-event page is ~100 MB of text; joining the pieces would hold it twice more."""
    texts: list[str] = []

    def default(o: Any) -> Any:
        if isinstance(o, JsonText):
            texts.append(o.text)
            return _PLACEHOLDER
        return str(o)
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                          default=default)
    except ValueError:      # a non-finite float somewhere: rare, so only then walk the data
        texts.clear()
        text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"),
                          default=default)
    if texts and text.count(_PLACEHOLDER_JSON) != len(texts):
        yield embed_json(_parsed(obj))
        return
    at = 0
    for inserted in texts:
        end = text.index(_PLACEHOLDER_JSON, at)
        yield from _escaped_slices(text, at, end)
        yield _escaped(inserted)
        at = end + len(_PLACEHOLDER_JSON)
    yield from _escaped_slices(text, at, len(text))


def _escaped_slices(text: str, start: int, end: int) -> Iterator[str]:
    for i in range(start, end, _WRITE_SLICE):
        yield _escaped(text[i:min(i + _WRITE_SLICE, end)])


def _escaped(text: str) -> str:
    """`text` (JSON) with `<`, `>`, `&`, U+2028 and U+2029 as \\uXXXX escapes."""
    # NOTE: these characters can only occur inside JSON strings, where \uXXXX means the same;
    # most pages have none, and a plain search for each is much faster than the regex scan
    if any(c in text for c in _JSON_ESCAPES):
        text = re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)
    return text


def _graph_src(graph: str | os.PathLike | None, out: Path) -> str | None:
    """URL of the graph page relative to the viewer page (absolute file URL across drives)."""
    if graph is None:
        return None
    graph = Path(graph).resolve()
    try:
        return Path(os.path.relpath(graph, out.resolve().parent)).as_posix()
    except ValueError:
        return graph.as_uri()


def _dtype_names() -> dict[str, str]:
    """PyPTO's dtype codes (as in a trace's operand hints) -> the names a reader knows: 7 ->
    "FP32", 8 -> "BF16"; the details panel decodes operands with it."""
    return {str(int(d)): d.name.removeprefix("DT_") for d in DataType}


def write_page(data: dict[str, Any], out_path: str | os.PathLike, title: str) -> Path:
    """Write the page for `data` (the "runs"/"report"/"graph" object the scripts read)."""
    data = {**data, "dtypes": _dtype_names()}
    parts = {"TITLE": [html.escape(title)], "CSS": [_asset("viewer.css")],
             "JS": ["\n".join(_asset(name) for name in _SCRIPTS)], "DATA": _json_pieces(data)}
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    # one pass, so marker-like text inside the substituted parts is never expanded; the parts
    # are written one after the other (in slices), never joined: a 1M-event page is ~100 MB
    template = _asset("page.html")
    with open(out, "w", encoding="utf-8", errors="backslashreplace") as f:
        at = 0
        for m in _MARKER.finditer(template):
            f.write(template[at:m.start()])
            for part in parts[m.group(1)]:      # (DATA, the one generator, is there once)
                for i in range(0, len(part), _WRITE_SLICE):
                    f.write(part[i:i + _WRITE_SLICE])
            at = m.end()
        f.write(template[at:])
    return out


def render_view_html(trace: SwimlaneData | RunColumns, out_path: str | os.PathLike,
                     title: str = "swimlane", graph: str | os.PathLike | None = None,
                     analyses: dict[str, Any] | None = None) -> Path:
    """The viewer page of one run (parsed, or the columns of a run just simulated); `graph`
    (a graph.html path) adds a Graph tab; `analyses`: the run's `analyses.page_data` (made
    from a parsed trace here when not given)."""
    if isinstance(trace, RunColumns):
        run = pack_run(trace, title)
    else:
        run = pack(trace, title)
        analyses = analyses if analyses is not None else page_data(trace)
    if analyses is not None:
        run["analyses"] = analyses
    return write_view_page(run, out_path, title, graph)


def write_view_page(run: dict[str, Any], out_path: str | os.PathLike, title: str,
                    graph: str | os.PathLike | None = None) -> Path:
    """The viewer page of one packed run (`pack`): lets a caller drop the parsed trace, which
    is many times the size of its columns, before the page is written."""
    data = {"mode": "view", "runs": [run], "graph": _graph_src(graph, Path(out_path))}
    return write_page(data, out_path, title)


def render_diff_html(trace_a: SwimlaneData, trace_b: SwimlaneData, report: dict,
                     out_path: str | os.PathLike, titles: tuple[str, str] = ("A", "B")) -> Path:
    """Two runs stacked on one time axis, under a panel rendering `report` (`diff.compare`'s
    dict: the two runs' kernel / end-to-end / tasks / utilisation compared first, then the
    "critical_path" pair and the "leaves" rows as tables, the "totals" dict of name -> {a, b,
    delta, ratio} and any other key (as JSON) folded under "more"; "schema" is not shown)."""
    data = {"mode": "diff", "runs": [pack(trace_a, titles[0]), pack(trace_b, titles[1])],
            "report": report, "graph": None}
    return write_page(data, out_path, f"{titles[0]} vs {titles[1]}")
