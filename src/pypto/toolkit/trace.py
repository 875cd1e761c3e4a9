"""Open a swimlane file for the toolkit: any `merged_swimlane.json` (ours or PyPTO's) →
`profiling.swimlane.SwimlaneData`, or a `ToolkitError` that names the file and the problem.

The file is streamed: events are decoded one at a time from a sliding window of the text and
handed to the parser as they come, so a 500 MB trace never sits in memory as text next to its
decoded events. Unknown event fields and event kinds are ignored by the parser; events that are
not objects are skipped; what cannot be a trace (not JSON, truncated, not a trace object, no
task events at all) is an error here rather than a traceback later.
"""
from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator, TextIO

from pypto.profiling.swimlane import SwimlaneData, parse_swimlane
from pypto.toolkit.errors import ToolkitError

_CHUNK = 1 << 20                # characters read per refill
_MAX_VALUE = 256 << 20          # one event (or top-level value) larger than this is not a trace
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Malformed(Exception):
    """Raised inside the stream; `load` turns it into a ToolkitError naming the file."""


class _Stream:
    """JSON values decoded one at a time from a file, keeping only a window of its text."""

    def __init__(self, f: TextIO):
        self.f = f
        self.buf = ""
        self.pos = 0
        self.offset = 0         # characters dropped from the front of buf so far
        self.eof = False

    def _more(self, want: int) -> bool:
        """Keep the unread text and append at least `want` characters; False at end of file."""
        if self.eof:
            return False
        chunk = self.f.read(max(want, _CHUNK))
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        self.eof = not chunk
        return bool(chunk)

    def peek(self) -> str:
        """The next non-blank character ("" at end of file), not consumed."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more(_CHUNK):
                return ""

    def take(self, char: str) -> None:
        got = self.peek()
        if got != char:
            where = f"found {got!r}" if got else "the file ends"
            raise _Malformed(f"{'truncated JSON' if not got else 'not valid JSON'}: expected "
                             f"{char!r} at character {self.offset + self.pos}, {where}")
        self.pos += 1

    def value(self) -> Any:
        """Decode the next value, reading more text while it is incomplete."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                at = self.offset + e.pos
                # an incomplete value fails near the end of the window (or, for a string,
                # where the string starts); anything else is a real syntax error
                incomplete = (e.pos >= len(self.buf.rstrip()) - 8
                              or e.msg.startswith("Unterminated string"))
                if incomplete and len(self.buf) - self.pos <= _MAX_VALUE \
                        and self._more(len(self.buf)):
                    continue
                what = "truncated JSON" if incomplete and self.eof else "not valid JSON"
                raise _Malformed(f"{what} (character {at}: {e.msg})") from None
            # a number at the very end of the window may continue in the next chunk
            if end == len(self.buf) and not self.eof and self._more(_CHUNK):
                continue
            self.pos = end
            return value

    def array(self) -> Iterator[Any]:
        """The elements of the array starting here; a missing final ']' is tolerated, as the
        trace event format allows for traces cut off between events."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            c = self.peek()
            if c == ",":
                self.pos += 1
                if self.peek() in ("]", ""):        # trailing comma (or end after it)
                    self.pos += self.peek() == "]"
                    return
            elif c in ("]", ""):
                self.pos += c == "]"
                return
            else:
                raise _Malformed(f"not valid JSON: expected ',' or ']' at character "
                                 f"{self.offset + self.pos}, found {c!r}")


def _events(stream: _Stream, top: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The trace's events in file order; the other top-level keys are stored into `top`."""
    first = stream.peek()
    if first == "[":
        items = stream.array()
    elif first == "{":
        items = _object_events(stream, top)
    elif not first:
        raise _Malformed("empty file")
    else:
        raise _Malformed("not valid JSON (does not start with '{' or '[')")
    for e in items:
        if isinstance(e, dict):
            yield e


def _object_events(stream: _Stream, top: dict[str, Any]) -> Iterator[Any]:
    stream.take("{")
    found = False
    while stream.peek() != "}":
        key = stream.value()
        stream.take(":")
        if key == "traceEvents" and stream.peek() == "[":
            found = True
            yield from stream.array()
        else:
            top[key] = stream.value()
        if stream.peek() == ",":
            stream.pos += 1
        elif stream.peek() != "}":
            stream.take("}")
    stream.pos += 1
    if not found:
        raise _Malformed("not a Chrome trace (expected a list of events or an object with "
                         "'traceEvents')")


def load(path: str | os.PathLike) -> SwimlaneData:
    """Parse the trace at `path` (a file, or a run folder holding merged_swimlane.json)."""
    p = Path(path)
    if p.is_dir():
        p = p / "merged_swimlane.json"
    if not p.exists():
        raise ToolkitError(f"{p}: no such file")
    top: dict[str, Any] = {}
    # NOTE: parsing makes a few container objects per event and no cycles; cyclic GC passes
    # over the growing task list would cost a large share of the load, so they are paused
    enabled = gc.isenabled()
    gc.disable()
    try:
        with open(p, encoding="utf-8") as f:
            data = parse_swimlane(_events(_Stream(f), top))
    except _Malformed as e:
        raise ToolkitError(f"{p}: {e}") from None
    except (UnicodeDecodeError, OSError) as e:
        raise ToolkitError(f"{p}: cannot read: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ToolkitError(f"{p}: malformed trace event: {e!r}") from None
    finally:
        if enabled:
            gc.enable()
    other = top.get("otherData")
    data.other = dict(other) if isinstance(other, dict) else {}
    if not data.tasks and not data.aicpu:
        raise ToolkitError(f"{p}: no task events (no 'X' events on core lanes)")
    return data
