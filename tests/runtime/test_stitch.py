"""The stitcher batches root instances into windows and links tasks of different instances
that touch overlapping GM boxes (read-after-write, write-after-read, write-after-write), with
PyPTO's slot semantics for intermediates (a fresh copy per creating instance) and its
workspace accounting (a copy per instance; memory-driven windows under max_workspace_kb)."""
import pytest

from pypto.errors import PyptoRuntimeError
from pypto.machine.result import SimTask
from pypto.runtime.slot_facts import SlotFacts
from pypto.runtime.stitch import Stitcher


def _task(instance_calls, reads=(), writes=(), root="root"):
    t = SimTask(-1, -1, instance_calls, root, 0, 0, "leaf", 0, "AIV")
    t.reads = list(reads)
    t.writes = list(writes)
    t.write_layouts = [((64, 64), 4)] * len(t.writes)
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
    s = Stitcher(8, 1000, SlotFacts(private={"root": frozenset({9})}))
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


SLOT = (18, (0, 0), (1, 64))     # an intermediate two roots share (the pair's query slice)


def _stitch(instances, facts, max_instances=64, **kw):
    """instances: [(root, [(reads, writes), ...]), ...] -> the closed Stitcher."""
    s = Stitcher(max_instances, 1000, facts, **kw)
    for root, accesses in instances:
        idx = s.begin_instance(len(accesses))
        for reads, writes in accesses:
            s.add(_task(idx, reads, writes, root))
    s.flush()
    return s


def test_a_creating_instance_gets_a_fresh_copy_of_a_shared_slot():
    """Root 'bg' creates the slot, root 'kv' reads it: the next 'bg' instance writes a fresh
    copy (no write-after-read on the earlier reader), and later readers match only the last
    producer."""
    facts = SlotFacts(creators={18: frozenset({"bg"})}, temps=frozenset({18}))
    s = _stitch([("bg", [((), (SLOT,))]),         # 0: pair 0 makes its slice
                 ("kv", [((SLOT,), ())]),         # 1: reads it
                 ("bg", [((), (SLOT,))]),         # 2: pair 1: fresh copy, no WAR on 1
                 ("kv", [((SLOT,), ())])], facts)  # 3: reads pair 1's copy only
    assert [t.preds for t in s.tasks] == [[], [0], [], [2]]


def test_without_a_creator_a_shared_temp_is_real_memory():
    """Writes into part of a value made elsewhere (an assemble into it) share its memory."""
    facts = SlotFacts(creators={}, temps=frozenset({18}))
    s = _stitch([("bg", [((), (SLOT,))]), ("kv", [((SLOT,), ())]),
                 ("bg", [((), (SLOT,))])], facts)
    assert s.tasks[2].preds == [0, 1]             # write-after-write and write-after-read


def test_a_loop_carried_box_links_each_instance_to_the_last_writer_only():
    """A running state updated in place by every iteration: each instance waits for the one
    before it, not for every earlier one (the last writer stands in for them)."""
    state = (9, (0, 0), (24, 128))
    s = _stitch([("kv", [((state,), (state,))])] * 6, SlotFacts(scratch=frozenset({9})))
    assert [t.preds for t in s.tasks] == [[], [0], [1], [2], [3], [4]]
    assert s.cross_edges == 5


def test_workspace_is_a_copy_per_instance_plus_scratch_once():
    """Each instance's intermediates count once per instance; pypto.tensor scratch once."""
    temp, scratch = (5, (0, 0), (64, 64)), (9, (0, 0), (64, 64))
    facts = SlotFacts(private={"root": frozenset({5})}, temps=frozenset({5}),
                      scratch=frozenset({9}))
    s = _stitch([("root", [((), (temp, scratch))])] * 3, facts, max_instances=2)
    box = 64 * 64 * 4
    assert s.window_workspace == [2 * box + box, box + box]


def test_memory_driven_stitch_closes_a_window_before_the_instance_that_overflows():
    """max_workspace_kb: windows take instances while their copies fit, whatever the
    instance limit; the tasks of the instance that did not fit move to the next window."""
    temp = (5, (0, 0), (64, 64))                  # 16 KiB per instance
    facts = SlotFacts(private={"root": frozenset({5})}, temps=frozenset({5}))
    s = _stitch([("root", [((), (temp,)), ((temp,), ())])] * 5, facts, max_instances=1,
                workspace_budget=40 * 1024)
    assert [t.window for t in s.tasks] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert [t.instance for t in s.tasks] == [0, 0, 1, 1, 0, 0, 1, 1, 0, 0]
    assert s.window_workspace == [32768, 32768, 16384]


def test_an_instance_larger_than_the_budget_is_a_clear_error():
    facts = SlotFacts(private={"big": frozenset({5})}, temps=frozenset({5}))
    with pytest.raises(PyptoRuntimeError, match=r"max_workspace_kb=8: one instance of root "
                                                r"function 'big' needs 16\.0 KiB"):
        _stitch([("big", [((), ((5, (0, 0), (64, 64)),))])], facts, workspace_budget=8 * 1024)


def test_a_window_larger_than_the_device_memory_is_out_of_memory():
    facts = SlotFacts(private={"root": frozenset({5})}, temps=frozenset({5}))
    with pytest.raises(PyptoRuntimeError, match="NPU out of memory: stitch window 0 needs "
                                                "48.0 KiB.*stitch_function_max_num"):
        _stitch([("root", [((), ((5, (0, 0), (64, 64)),))])] * 3, facts,
                device_bytes=32 * 1024)


def _decode_kernel(pairs_max: int):
    """Flash decoding per (batch, KV head) pair: the pair's query slice is made in the outer
    loop's root and read by the KV loop's root (a shared slot); the running state is per pair."""
    import pypto

    rows, dim, block = 8, 64, 128

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 128})
    def decode(q: pypto.Tensor([pypto.DYNAMIC, rows, dim], pypto.DT_FP32),
               k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, dim], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, rows, dim], pypto.DT_FP32)):
        m_state = pypto.tensor([pairs_max, rows, 1], pypto.DT_FP32, "m")
        o_state = pypto.tensor([pairs_max, rows, dim], pypto.DT_FP32, "o")
        pypto.set_vec_tile_shapes(1, 8, 128)
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [64, 64])
        for p in pypto.loop(q.shape[0], name="LOOP_P", idx_name="p"):
            qp = q[p:p + 1, :, :] * 0.125
            for j in pypto.loop(0, k.shape[1], block, name="LOOP_KV", idx_name="j"):
                kj = pypto.view(k, [1, block, dim], [p, j, 0])
                s = pypto.matmul(qp, kj, pypto.DT_FP32, b_trans=True)      # [1, rows, block]
                bmax = pypto.amax(s, dim=-1, keepdim=True)
                if pypto.is_loop_begin(j):
                    m_state[p:, :, :] = bmax
                    o_state[p:, :, :] = pypto.matmul(pypto.exp(s - bmax), kj, pypto.DT_FP32)
                else:
                    new = pypto.maximum(m_state[p:p + 1, :, :], bmax)
                    o_state[p:, :, :] = o_state[p:p + 1, :, :] * pypto.exp(
                        m_state[p:p + 1, :, :] - new) + pypto.matmul(pypto.exp(s - new), kj,
                                                                     pypto.DT_FP32)
                    m_state[p:, :, :] = new
                if pypto.is_loop_end(j):
                    out[p:, :, :] = o_state[p:p + 1, :, :]
    return decode


def test_independent_pairs_of_a_decode_kernel_run_side_by_side():
    """8 independent (batch, head) pairs in one window take well under 8x one pair: the query
    slice each pair makes in the outer loop is a fresh copy of its slot, so pair p+1 does not
    wait for pair p's readers (compiler_runtime.md §5.3), and no edge joins two pairs."""
    import torch

    def run(pairs):
        kernel = _decode_kernel(pairs)
        g = torch.Generator().manual_seed(pairs)
        q, k = torch.randn(pairs, 8, 64, generator=g), torch.randn(pairs, 256, 64, generator=g)
        out = torch.zeros(pairs, 8, 64)
        kernel(q, k, out)
        s = (q * 0.125) @ k.transpose(-1, -2)
        m = s.amax(-1, keepdim=True)
        torch.testing.assert_close(out, torch.exp(s - m) @ k, rtol=1e-4, atol=1e-4)
        return kernel

    one, eight_kernel = run(1).last_run, run(8)
    eight = eight_kernel.last_run
    assert eight.stats["windows"] == 1
    # tasks of ~0.4 us: the scheduler threads bound both runs, so 8 pairs over 3 threads take
    # about 8/3 of one pair; serialised pairs would take 8x
    assert eight.stats["kernel_cycles"] <= 3.2 * one.stats["kernel_cycles"]
    k_storage = eight_kernel.last_program.params[1].value.storage.id
    pair_of = {r.task.instance: offs[0] for r in eight.tasks
               for sid, offs, _ in r.task.reads if sid == k_storage}
    assert sorted(set(pair_of.values())) == list(range(8))
    by_id = {r.task.id: r.task for r in eight.tasks}
    pairs_of_edges = [(pair_of.get(t.instance), pair_of.get(by_id[p].instance))
                      for t in by_id.values() for p in t.preds]
    assert [(a, b) for a, b in pairs_of_edges if None not in (a, b) and a != b] == []
