"""The pieces the columnar reader and viewer are built of, each against its one-at-a-time
definition on random input: args columns give back each event's dict (keys in order), flow ends
are placed on the slices the one-end-at-a-time search picks, the ReadyCount_Total series is the
sample-by-sample sum, and the page's number texts are what the JSON encoder writes."""
import json
import random

import numpy as np
import pytest

from pypto.profiling.flow_ends import SliceIndex
from pypto.profiling.swimlane import _summed_series, restore_counters
from pypto.profiling.trace_columns import ABSENT, ArgColumns, grouped
from pypto.toolkit.viewer.json_text import JsonText, floats_json, sparse_json


def _random_args(rng: random.Random, n: int) -> list[dict]:
    keys = ["a", "b", "c", "d"]
    out = []
    for _ in range(n):
        chosen = rng.sample(keys, rng.randint(0, 4))
        out.append({k: rng.choice([1, 2.5, "x", None, [1, {"y": 2}], {"z": []}, True])
                    for k in chosen})
    return out


@pytest.mark.parametrize("seed", range(20))
def test_args_columns_give_back_each_events_dict(seed):
    rng = random.Random(seed)
    dicts = _random_args(rng, rng.randint(0, 40))
    args = ArgColumns.from_dicts(dicts)
    assert [list(d.items()) for d in args.dicts()] == [list(d.items()) for d in dicts]
    assert args.keys == list(dict.fromkeys(k for d in dicts for k in d))
    assert args.values("b", "none") == [d.get("b", "none") for d in dicts]
    assert args.column("b").tolist() == [d.get("b", ABSENT) for d in dicts]
    index = np.array([rng.randrange(len(dicts)) for _ in range(15)] if dicts else [], dtype=int)
    assert args.take(index).dicts() == [dicts[i] for i in index]
    more = _random_args(rng, 7)
    both = ArgColumns.concat([args, ArgColumns.from_dicts(more)])
    assert [list(d.items()) for d in both.dicts()] == [list(d.items()) for d in dicts + more]


def test_grouped_keeps_first_use_and_order():
    keys = ["b", "a", "b", None, "a", "b"]
    assert [(k, ix.tolist()) for k, ix in grouped(keys)] == \
        [("b", [0, 2, 5]), ("a", [1, 4]), (None, [3])]


@pytest.mark.parametrize("seed", range(30))
def test_flow_ends_many_at_once_equal_one_at_a_time(seed):
    """Touching and overlapping slices, zero durations, ends exactly on the tolerance: the
    vectorised search answers what the scalar one does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    lanes = rng.integers(0, 4, n) + 1000
    starts = np.round(rng.random(n) * 20, int(rng.integers(0, 4)))
    ends = starts + np.round(rng.random(n) * rng.choice([0.0, 1e-4, 0.5, 3.0]), 4)
    index = SliceIndex(lanes, starts, ends)
    at = rng.integers(0, n, 200)
    q_lanes = np.where(rng.random(200) < 0.1, 999, lanes[at])
    q_ts = np.concatenate([ends[at[:100]] - 1e-4 * rng.integers(0, 3, 100),
                           starts[at[100:]] + 1e-10 * rng.integers(-1, 2, 100)])
    sources, targets = index.sources(q_lanes, q_ts), index.targets(q_lanes, q_ts)
    for i in range(200):
        lane, ts = int(q_lanes[i]), float(q_ts[i])
        assert sources[i] == (index.source(lane, ts) if index.source(lane, ts) is not None
                              else -1)
        assert targets[i] == (index.target(lane, ts) if index.target(lane, ts) is not None
                              else -1)


@pytest.mark.parametrize("seed", range(10))
def test_ready_count_total_is_the_sum_sample_by_sample(seed):
    rng = random.Random(seed)
    counters = {k: [(float(rng.randint(0, 30)) / 4, float(rng.randint(0, 9)))
                    for _ in range(rng.randint(0, 40))]
                for k in ("ReadyCount_AIV", "ReadyCount_AIC")[:rng.randint(1, 2)]}
    for samples in counters.values():
        samples.sort(key=lambda s: s[0])
    expected = _summed_series(list(counters.values()))
    restore_counters(counters)
    assert counters["ReadyCount_Total"] == expected


@pytest.mark.parametrize("seed", range(10))
def test_time_columns_are_written_as_the_encoder_writes_them(seed):
    """Whole thousandths (our times) are cut into digits with numpy; anything else takes the
    encoder's repr of each distinct value."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** int(rng.integers(0, 13))
    thousandths = np.round(rng.random(500) * scale, 3)
    other = rng.random(50) * scale
    for values in (thousandths, other, np.r_[thousandths, other], np.array([0.0, 1.0, 5e12])):
        got = floats_json(values)
        assert isinstance(got, JsonText)
        assert got.text == json.dumps(values.tolist(), separators=(",", ":"))
    assert floats_json(np.array([0.0, -0.0])) == [0.0, -0.0]    # (the page writes them itself)
    assert floats_json([1.5, None]).text == "[1.5,null]"


@pytest.mark.parametrize("seed", range(10))
def test_columns_with_absent_runs_are_the_encoders_text(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    present = rng.random(n) < 0.5 if seed % 2 else np.arange(n) < n // 3
    values = rng.integers(-1, 50, int(present.sum())).tolist()
    for absent in (None, -1):
        it = iter(values)
        full = [next(it) if p else absent for p in present]
        got = sparse_json(present, values, absent)
        assert (got.text if isinstance(got, JsonText) else json.dumps(got)) == \
            json.dumps(full, separators=(",", ":") if isinstance(got, JsonText) else None)
