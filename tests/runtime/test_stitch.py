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


def test_workspace_of_one_root_is_private_to_each_instance():
    """Instances of one root each have their own copy of the root's intermediates: no edges
    through them; a storage shared with another root (or not private) still links."""
    ws = (9, (0, 0), (64, 64))     # the root's intermediate, same box in every instance
    s = Stitcher(8, 1000, private={"root": frozenset({9})})
    for _ in range(3):
        idx = s.begin_instance(2)
        s.add(_task(idx, writes=[ws]))
        s.add(_task(idx, reads=[ws]))
    other = SimTask(-1, -1, s.begin_instance(1), "after", 1, 0, "leaf", 0, "AIV")
    other.reads = [ws]
    s.add(other)
    s.flush()
    assert [t.preds for t in s.tasks[:6]] == [[]] * 6   # in-instance edges come from call ops
    assert s.tasks[6].preds == [0, 2, 4]                 # another root reads it: RAW kept


def test_attention_loop_instances_overlap_through_private_workspace():
    """A loop whose matmul result goes through GM to a vector op: with stitching, iterations
    do not wait for each other (no cross-instance edges through the loop body's workspace)."""
    import torch

    import pypto

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 64})
    def k(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP16),
          b: pypto.Tensor([64, 64], pypto.DT_FP16),
          y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        pypto.set_vec_tile_shapes(64, 64)
        for i in pypto.loop(a.shape[0] // 64):
            y[i * 64:, :] = pypto.exp(pypto.matmul(pypto.view(a, [64, 64], [i * 64, 0]), b,
                                                   pypto.DT_FP32))
    a, b = torch.randn(512, 64).half() / 8, torch.randn(64, 64).half() / 8
    y = torch.zeros(512, 64)
    k(a, b, y)
    assert k.last_run.stats["cross_edges"] == 0
    torch.testing.assert_close(y, torch.exp(a.float() @ b.float()), rtol=1e-3, atol=1e-3)
