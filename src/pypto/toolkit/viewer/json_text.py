"""The page's number columns as JSON text.

Takes a column of numbers (floats, or the values of one args key with a mask of the events that
have it) → `JsonText`, the text `json.dumps(column, separators=(",", ":"))` would give, which
the page inserts as it is; a column these cannot write is handed back as a list for the page's
encoder. Keeps: the text is exactly the encoder's, and inert in a script element (numbers,
commas, "null"; no NaN or Infinity).

NOTE: a 1M-event page holds ~30 columns of a million numbers each, formatted one at a time by
the encoder (~50 ns each); most of those are a key's "absent" mark on the events of the block
(task or AICPU) that never has the key: such a run is one repeated text, not a million values.
"""
from __future__ import annotations

import json
from math import copysign, isfinite

import numpy as np

_FLOAT_TYPES = frozenset((float, type(None)))
_MAX_RUNS = 64                  # runs of present / absent values written as text
_RUN_LENGTH = 8                 # runs of one value written as text: at least this long on average
_POW10 = 10 ** np.arange(19, dtype=np.int64)


class JsonText:
    """A value given as its JSON text (numbers a writer has already formatted), that the page
    (`page.embed_json`) inserts as it is. The text must be inert in a script element:
    finite numbers, no markup."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def runs_json(values: np.ndarray, null: np.ndarray | None = None) -> JsonText | None:
    """The JSON array of ints `values` ("null" where `null` is set) when they come in long runs
    of one value (a key most tasks share, a string most events share), else None. NOTE: a run
    is one repeated text, not a value formatted per event."""
    n = len(values)
    change = values[1:] != values[:-1]
    if null is not None:
        change |= null[1:] != null[:-1]
    heads = np.flatnonzero(np.r_[True, change]) if n else np.zeros(0, dtype=np.int64)
    if len(heads) * _RUN_LENGTH > n:
        return None
    lengths = np.diff(np.r_[heads, n]).tolist()
    texts = ["null" if null is not None and null[i] else str(v)
             for i, v in zip(heads.tolist(), values[heads].tolist())]
    return JsonText(f"[{''.join((t + ',') * k for t, k in zip(texts, lengths))[:-1]}]")


def sparse_json(present: np.ndarray, values: list, absent: int | None) -> JsonText | list:
    """The column holding `values` where `present` is set and `absent` (None or -1) elsewhere.
    As JSON text when the absent ones come in a few runs (a trace's task and AICPU events each
    have their own args keys: a key is absent from a whole block), else as a list."""
    edges = (np.flatnonzero(present[1:] != present[:-1]) + 1).tolist()
    if len(present) and len(edges) < _MAX_RUNS:
        pieces, at, fill = [], 0, json.dumps(absent)
        for a, b in zip([0, *edges], [*edges, len(present)]):
            if not present[a]:
                pieces.append(",".join([fill] * (b - a)))
                continue
            try:
                pieces.append(json.dumps(values[at:at + b - a], separators=(",", ":"),
                                         allow_nan=False)[1:-1])
            except ValueError:          # a non-finite float: the page writes it as a string
                break
            at += b - a
        else:
            return JsonText(f"[{','.join(pieces)}]")
    column = np.full(len(present), absent, dtype=object)
    column[present] = np.fromiter(values, dtype=object, count=len(values))
    return column.tolist()


def floats_json(values: np.ndarray | list) -> list | JsonText:
    """A number column of floats (or None; or a float64 array) as its JSON text, each distinct
    value formatted once (a trace's times repeat: tasks start together, durations recur); any
    other column, or one holding a non-finite value or both zeros (one key to a dict), as it
    is (a list)."""
    array = isinstance(values, np.ndarray)
    if array or type(values) is list and set(map(type, values)) == {float}:
        column = values if array else np.array(values, dtype=np.float64)
        zeros = np.signbit(column[column == 0.0])
        if np.isfinite(column).all() and not (zeros.any() and not zeros.all()):
            text = _thousandths(column)     # (the usual case, with numpy)
            if text is not None:
                return JsonText(text)
        values = column.tolist()
    if type(values) is not list or not set(map(type, values)) <= _FLOAT_TYPES:
        return values
    texts = dict.fromkeys(values)
    if 0.0 in texts and len({copysign(1.0, v) for v in values if v == 0.0}) > 1:
        return values
    for v in texts:
        if v is None:
            texts[v] = "null"
        elif not isfinite(v):
            return values
        else:
            texts[v] = repr(v)
    return JsonText(f"[{','.join(map(texts.__getitem__, values))}]")


def _thousandths(column: np.ndarray) -> str | None:
    """The JSON text of floats that are each the double nearest a whole number of thousandths
    (times in whole ns, as our writer writes them) below 2**43, or None. NOTE: such a float's
    repr is that decimal, trailing zeros cut ("133.056", "0.5", "130.0"): below 2**43 a double's
    spacing is under 0.001, so no shorter decimal rounds to it. The digits of every value are
    cut at once: a byte matrix with a row per value (sign, whole digits, ".", three decimals,
    ","), of which the used bytes are kept."""
    k = np.rint(column * 1000.0)
    if not len(column) or not (np.abs(column) < 2.0 ** 43).all() \
            or not (k / 1000.0 == column).all() or np.signbit(column[column == 0.0]).any():
        return None
    negative = k < 0
    whole, frac = np.divmod(np.abs(k).astype(np.int64), 1000)
    digits = np.searchsorted(_POW10, whole, side="right")
    digits[digits == 0] = 1
    width = int(digits.max())
    rows = np.empty((len(k), width + 6), dtype=np.uint8)     # -, whole, ., 3 decimals, ","
    rows[:, 0] = ord("-")
    for j in range(width):
        rows[:, 1 + j] = whole // _POW10[width - 1 - j] % 10 + ord("0")
    rows[:, width + 1] = ord(".")
    for j in range(3):
        rows[:, width + 2 + j] = frac // _POW10[2 - j] % 10 + ord("0")
    rows[:, -1] = ord(",")
    decimals = np.where(frac % 100 == 0, 1, np.where(frac % 10 == 0, 2, 3))
    used = np.ones(rows.shape, dtype=bool)
    used[:, 0] = negative
    used[:, 1:width + 1] = np.arange(width) >= (width - digits)[:, None]
    used[:, width + 2:width + 5] = np.arange(3) < decimals[:, None]
    return f"[{rows[used].tobytes()[:-1].decode('ascii')}]"
