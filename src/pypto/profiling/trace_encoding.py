"""How the swimlane trace writes its values: times as whole ns (`time_units`), numbers and
strings as the JSON text `json.dumps` would give, each distinct value formatted once.

Its own module because three parts share one encoding and must agree to the character: the
run's columns (`run_columns`, `task_arg_columns`, `ready_counters`), the JSON writer
(`swimlane_writer`) and the viewer page (`toolkit.viewer.pack`). These are pure functions of
plain values; they know nothing of tasks or runs.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import numpy as np

json_str = json.encoder.encode_basestring_ascii       # json.dumps of a str (C)
COMPACT = (",", ":")                                  # the trace's JSON separators: no spaces
# times (us) are written in whole ns: what Perfetto resolves (it rounds us x 1000 to ns), so
# its slice ends (ts + dur) are the written ends; a cycle is 0.56 ns at 1.8 GHz
US_DIGITS = 3
UNITS_PER_US = 10 ** US_DIGITS                        # time units per us
_NON_FINITE = frozenset(("nan", "inf", "-inf"))


def json_numbers(values: list, repeated: bool = False) -> list[str]:
    """`json.dumps` of each int or float of `values` (repr, except NaN / Infinity).
    `repeated`: floats with many repeats (durations, sample times), each formatted once."""
    if repeated:
        return per_distinct(json_numbers, values)
    texts = list(map(repr, values))
    if not _NON_FINITE.isdisjoint(texts):
        texts = [json.dumps(v) if t in _NON_FINITE else t for t, v in zip(texts, values)]
    return texts


def time_units(cycles: Any, clock_mhz: float) -> np.ndarray:
    """Cycles as whole ns (int64; ts = units / 1000). NOTE: a slice's start and end are
    rounded, never its duration: ts + dur is the rounded end, for us and for Perfetto, so
    back-to-back tasks of a lane (the next dispatched at the cycle the last ends) stay apart."""
    return np.rint(np.asarray(cycles, dtype=np.float64) * (UNITS_PER_US / clock_mhz)
                   ).astype(np.int64)


def per_distinct(convert: Callable[[list], list], values: list) -> list:
    """`convert(values)` for a `convert` that maps element by element, applied to each
    distinct value once. NOTE: equal values must convert alike (1 and 1.0 do not: use it on
    values of one type)."""
    distinct = list(dict.fromkeys(values))
    table = dict(zip(distinct, convert(distinct)))
    return list(map(table.__getitem__, values))


def json_strs(values: list[str]) -> list[str]:
    """`json.dumps` of each string."""
    return list(map(json_str, values))


def json_value(v: Any) -> str:
    """`json.dumps(v, separators=COMPACT)`; strings, finite numbers and lists of ints without
    the encoder's per-call setup."""
    t = type(v)
    if t is str:
        return json_str(v)
    if t is int or (t is float and v - v == 0.0):      # x - x == 0.0: finite
        return repr(v)
    if t is list and all(type(x) is int for x in v):
        return f"[{','.join(map(repr, v))}]"
    return json.dumps(v, separators=COMPACT)
