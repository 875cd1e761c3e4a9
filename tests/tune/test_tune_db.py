"""The tuning database (`tune.db`): a second tune of the same kernel and shapes costs
no evaluation, `use_tuned` calls run with the stored setting, a stale entry (source, machine or
simulator changed) is reported and never applied, and entries move as JSON."""
import os
import sqlite3

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError
from pypto.tune.db import Key, TuneDB, bucket
from pypto.tune.space import Dimension

from marker_lines import marker_line

HERE = os.path.basename(__file__)


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit
def _exp(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)                               # DB_SITE
    y[:] = pypto.exp(x) + 1.0


def _dims():
    site = f"vec_tile@{HERE}:{_line('DB_SITE')}"
    return [Dimension(site, (8, 64), ((8, 64), (64, 256)), "test")]


def _call():
    _exp(torch.rand(256, 256), torch.zeros(256, 256))


def test_a_second_tune_reuses_the_database_with_no_evaluation(tmp_path):
    db = str(tmp_path / "tune.sqlite3")
    _call()
    first = _exp.tune(dimensions=_dims(), db=db, progress=False)
    second = _exp.tune(dimensions=_dims(), db=db, progress=False)
    assert len(first.evaluations) == 2 and second.evaluations == []
    assert second.stored is not None and "from the tuning database" in second.strategy
    assert second.best.config == first.best.config and first.best.config   # the bigger tile
    assert second.best.value_us == first.best.value_us


def test_use_tuned_runs_the_stored_setting_and_says_so(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "tune.sqlite3")
    monkeypatch.setenv("PYPTO_TUNE_DB", db)
    monkeypatch.setenv("PYPTO_TUNED", "1")
    _call()   # nothing stored yet: said, and run as written
    assert "use_tuned: no fresh tuning database entry matches" in capsys.readouterr().err
    own_tasks = _exp.last_run.stats["tasks"]
    best = _exp.tune(dimensions=_dims(), db=db, progress=False).best
    _call()
    said = capsys.readouterr().err
    assert "use_tuned: applied the tuning database's setting" in said and "[" in said
    _call()   # said once per call signature and outcome
    assert "use_tuned" not in capsys.readouterr().err
    assert _exp.last_run.stats["tasks"] < own_tasks
    assert _exp.last_run.us(_exp.last_run.stats["kernel_cycles"]) == pytest.approx(
        best.value_us)


def test_a_stale_entry_is_reported_and_not_applied(tmp_path, monkeypatch):
    db = str(tmp_path / "tune.sqlite3")
    _call()
    own_tasks = _exp.last_run.stats["tasks"]
    _exp.tune(dimensions=_dims(), db=db, progress=False)
    with sqlite3.connect(db) as con:   # as if the kernel's file had been edited since
        con.execute("UPDATE entries SET source = 'edited'")
    entry = TuneDB(db).lookup(Key.of_last_call(_exp))
    assert entry.stale == "the kernel's source file changed"
    monkeypatch.setenv("PYPTO_TUNE_DB", db)
    monkeypatch.setenv("PYPTO_TUNED", "1")
    with pytest.warns(pypto.PyptoWarning, match="entry for these shapes is stale"):
        _call()
    assert _exp.last_run.stats["tasks"] == own_tasks
    again = _exp.tune(dimensions=_dims(), db=db, progress=False)   # searched anew
    assert len(again.evaluations) == 2 and not TuneDB(db).lookup(Key.of_last_call(_exp)).stale


def test_entries_move_as_json(tmp_path):
    a, b, js = (str(tmp_path / n) for n in ("a.sqlite3", "b.sqlite3", "tune.json"))
    _call()
    _exp.tune(dimensions=_dims(), db=a, progress=False)
    assert TuneDB(a).export(js) == 1 and TuneDB(b).import_(js) == 1
    (ea,), (eb,) = TuneDB(a).entries(), TuneDB(b).entries()
    assert ea == eb
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(PyptoValueError, match="not a tuning export"):
        TuneDB(b).import_(str(tmp_path / "bad.json"))


def test_similar_shapes_share_a_bucket():
    from types import SimpleNamespace
    from pypto.dtypes import DataType

    def arg(*shape):
        return SimpleNamespace(name="x", dtype=DataType.DT_FP32,
                               array=SimpleNamespace(shape=shape))
    assert bucket([arg(100, 1000)], {}) == bucket([arg(128, 1024)], {}) == "x:DT_FP32[128x1024]"
    assert bucket([arg(129, 1024)], {}) != bucket([arg(128, 1024)], {})
