"""The stitcher batches root instances into windows and links tasks of different instances
that touch overlapping GM boxes (read-after-write, write-after-read, write-after-write)."""
from pypto.machine.result import SimTask
from pypto.runtime.stitch import Stitcher


def _task(instance_calls, reads=(), writes=()):
    t = SimTask(-1, -1, instance_calls, "root", 0, 0, "leaf", 0, "AIV")
    t.reads = list(reads)
    t.writes = list(writes)
    return t


def _run(max_instances, instances):
    s = Stitcher(max_instances, 1000)
    for accesses in instances:
        idx = s.begin_instance(len(accesses))
        for reads, writes in accesses:
            s.add(_task(idx, reads, writes))
    s.flush()
    return s


def test_windows_and_cross_instance_edges():
    row = lambda r: (7, (r, 0), (1, 64))  # noqa: E731  one row of storage 7
    s = _run(2, [[((), (row(0),))],            # instance 0 writes row 0
                 [((row(0),), ())],            # instance 1 reads row 0: RAW on instance 0
                 [((row(1),), (row(0),))]])    # window 2: no edge across windows
    assert [t.window for t in s.tasks] == [0, 0, 1]
    assert s.tasks[1].preds == [0] and s.tasks[2].preds == []
    assert s.cross_edges == 1


def test_disjoint_rows_do_not_depend_and_war_waw_do():
    row = lambda r: (7, (r, 0), (1, 64))  # noqa: E731
    s = _run(8, [[((row(0),), (row(1),))],     # reads row 0, writes row 1
                 [((), (row(2),))],            # disjoint
                 [((), (row(0),))],            # WAR on instance 0
                 [((), (row(1),))]])           # WAW on instance 0
    assert [t.preds for t in s.tasks] == [[], [], [0], [0]]


def test_reshaped_aliases_are_compared_conservatively():
    """A 1-D alias of a 2-D storage cannot be bucketed by rows: it is assumed to overlap."""
    s = _run(8, [[((), ((7, (0, 0), (1, 64)),))],
                 [(((7, (100,), (64,)),), ())]])
    assert s.tasks[1].preds == [0]
