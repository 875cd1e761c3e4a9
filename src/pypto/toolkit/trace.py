"""Open a swimlane file for the toolkit: any `merged_swimlane.json` (ours or PyPTO's) →
`profiling.swimlane.SwimlaneData`, or a `ToolkitError` that names the file and the problem.

The file is streamed: events are decoded from a sliding window of the text and handed to the
parser as they come, so a 500 MB trace never sits in memory as text next to its decoded events.
The window's whole events are decoded in one call - lines in our writer's layout by their
templates (`profiling.swimlane_lines`: fields as columns, no dict per event), any other text
by the JSON decoder - and one at a time only where that fails, which finds the culprit.
Unknown event fields and event kinds are ignored by the parser, and so are events that are
not objects; what cannot be a trace (not JSON, truncated, nested deeper than the JSON reader
goes (Python's recursion limit, ~1,000 levels), not UTF-8, not a trace object, a field of the
wrong type, no task events at all) is a `ToolkitError` naming the file rather than a
traceback later. Lone UTF-16 surrogates (`"\\ud800"`, which no UTF-8 output can
carry) are read as U+FFFD. Events with an unusable time (not finite, negative, beyond
`MAX_TIME_US` = 1e12 us) are left out with one warning on stderr that counts them by reason.
"""
from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from pypto.gc_pause import gc_paused
from pypto.profiling.swimlane import MAX_TIME_US, SwimlaneData, TraceFormatError, restore_args
from pypto.profiling.swimlane_lines import LineRun, decode_lines
from pypto.profiling.swimlane_reader import parse_runs
from pypto.toolkit.errors import ToolkitError

_CHUNK = 1 << 20                # characters read per refill
_MAX_VALUE = 256 << 20          # one event (or top-level value) larger than this is not a trace
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
# where a batch of whole events may end: an object's "}" followed by "," and the next "{"
_NEXT_OBJECT = re.compile(r"[ \t\n\r]*,[ \t\n\r]*\{")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) replaced by U+FFFD; containers
    are fixed in place, without recursion (the value may be nested ~1,000 deep)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for k, v in items:
                if isinstance(v, str):
                    v = _SURROGATE.sub("\ufffd", v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
                node[_SURROGATE.sub("\ufffd", k)] = v
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str):
                    node[i] = _SURROGATE.sub("\ufffd", v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return value


def _decode_many(text: str) -> list[Any]:
    """The values of `text` (JSON values separated by commas); raises as `json.loads` does.
    NOTE: one call for many events is several times faster than one per event, and shares
    the key strings between them (the decoder's memo lives for one call)."""
    items = json.loads(f"[{text}]")
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):     # (the test is cheaper)
        items = _without_surrogates(items)
    return items


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
        self.serial_until = 0   # decode one value at a time up to this (absolute) position

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
            except RecursionError:
                raise _Malformed(f"JSON nested too deeply (the value at character "
                                 f"{self.offset + self.pos} has more levels than the reader's "
                                 f"limit of about {sys.getrecursionlimit()})") from None
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
            if _SURROGATE_ESCAPE.search(self.buf, self.pos, end):
                value = _without_surrogates(value)
            self.pos = end
            return value

    def batch(self) -> list[Any] | LineRun | None:
        """The objects from here to the last whole one in the window, decoded in one call (or
        read by their line templates); None when there is none to batch, or the batch does not
        decode (a syntax error, or a cut inside a string): then the caller decodes one value at
        a time past that point."""
        if len(self.buf) - self.pos < _CHUNK:
            self._more(_CHUNK)
        buf, pos = self.buf, self.pos
        if self.offset + pos < self.serial_until or buf[pos:pos + 1] != "{":
            return None
        # NOTE: writers put each event on its own line ("},\n{", PyPTO's "},\n    {"), where
        # no "}" inside an event is; other layouts fall back to any "}" before ", {"
        cut = -1
        for mark, tries in (("},\n", 4), ("}", 64)):
            end = len(buf)
            for _ in range(tries):
                j = buf.rfind(mark, pos, end)
                if j < 0:
                    break
                if _NEXT_OBJECT.match(buf, j + 1):
                    cut = j + 1
                    break
                end = j
            if cut > 0:
                break
        if cut < 0:
            return None
        try:
            text = buf[pos:cut]
            items = decode_lines(text) or _decode_many(text)
        except (ValueError, RecursionError):
            self.serial_until = self.offset + cut
            return None
        self.pos = cut
        return items

    def array(self) -> Iterator[list[Any] | LineRun]:
        """The elements of the array starting here, in runs (lists) of one or more; a missing
        final ']' is tolerated, as the trace event format allows for traces cut off between
        events."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            items = self.batch()
            yield [self.value()] if items is None else items
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


def _runs(stream: _Stream, top: dict[str, Any]) -> Iterator[list[Any] | LineRun]:
    """The trace's events in file order, in runs (lists, or `LineRun`s); the other top-level
    keys are stored into `top`. NOTE: the parser takes a run at a time, in C loops over it."""
    first = stream.peek()
    if first == "[":
        items = stream.array()
    elif first == "{":
        items = _object_events(stream, top)
    elif not first:
        raise _Malformed("empty file")
    else:
        raise _Malformed("not valid JSON (does not start with '{' or '[')")
    return items


def _object_events(stream: _Stream, top: dict[str, Any]) -> Iterator[list[Any] | LineRun]:
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
    return _parse(lambda: open(p, encoding="utf-8"), p)


def parse_text(pieces: list[str], name: str | os.PathLike) -> SwimlaneData:
    """Parse a trace's text, given in pieces (`swimlane_writer.swimlane_text`); `name` is what
    an error calls it."""
    return _parse(lambda: io.StringIO("".join(pieces)), Path(name))


def _parse(opened: Callable[[], TextIO], p: Path) -> SwimlaneData:
    top: dict[str, Any] = {}
    # NOTE: parsing makes a few container objects per event and no cycles; cyclic GC passes
    # over the growing task list would cost a large share of the load, so they are paused
    with gc_paused():
        try:
            with opened() as f:
                data = parse_runs(_runs(_Stream(f), top))
        except _Malformed as e:
            raise ToolkitError(f"{p}: {e}") from None
        except TraceFormatError as e:
            raise ToolkitError(f"{p}: malformed trace: {e}") from None
        except UnicodeDecodeError:
            raise ToolkitError(f"{p}: not a trace: the file is not UTF-8 text") from None
        except OSError as e:
            raise ToolkitError(f"{p}: cannot read: {e.strerror or e}") from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
            raise ToolkitError(f"{p}: malformed trace event: {e!r}") from None
    other = top.get("otherData")
    data.other = dict(other) if isinstance(other, dict) else {}
    restore_args(data)      # NOTE: otherData may follow the events: restored once all are read
    if not len(data.task_columns) and not len(data.aicpu_columns):
        raise ToolkitError(f"{p}: no task events (no 'X' events on core lanes)")
    if data.dropped:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(data.dropped.items()))
        print(f"warning: {p}: left out {sum(data.dropped.values())} event(s) with an unusable "
              f"time (ts or dur; at most {MAX_TIME_US:.0e} us): {reasons}", file=sys.stderr)
    return data
