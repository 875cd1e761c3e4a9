"""runtime_debug_mode 3 (dependency check) and 4 (GM bounds check), and deps.json.

Mode 3 holds the stitched task graph to the GM the tasks touch: two tasks of a window on
overlapping GM, one writing, need a path between them. Each fault is planted: an edge taken out
of a real kernel's stitched tasks (the error names exactly that pair, its ops and line), and
the checker alone on tasks whose answer is known by construction. Mode 4 reports every window
outside its tensor; every mode checks the views at an index read from a tensor (a row index
past the end was a silently unwritten result row before)."""
import json
import os
import random
import time

import pytest
import torch

import pypto
from pypto.call_record import PendingRun
from pypto.machine.result import SimTask
from pypto.runtime.dependency_check import check_dependencies, storage_copies, task_name
from pypto.runtime.gm_conflicts import KINDS, find_conflicts
from pypto.runtime.slot_facts import SlotFacts
from pypto.runtime.stitch import Stitcher
from tests.marker_lines import marker_line

E = pypto.errors
F32 = pypto.DT_FP32
HERE = os.path.abspath(__file__)


def _task(instance, reads=(), writes=(), root="root", call=0, preds=()):
    t = SimTask(-1, -1, instance, root, 0, call, f"leaf{call}", call, "AIV")
    t.reads, t.writes, t.preds = list(reads), list(writes), list(preds)
    t.read_layouts = [((64, 64), 4)] * len(t.reads)
    t.write_layouts = [((64, 64), 4)] * len(t.writes)
    return t


def _stitched(instances, facts=None, max_instances=8):
    """Tasks stitched (and linked) from per instance [(reads, writes, root)], the calls of an
    instance in a chain (the compiler's order inside a root)."""
    s = Stitcher(max_instances, 100_000, facts)
    for accesses in instances:
        idx = s.begin_instance(len(accesses))
        for c, (reads, writes, root) in enumerate(accesses):
            s.add(_task(idx, reads, writes, root, preds=[s.count - 1] if c else []))
    s.flush()
    return list(s.tasks)


ROW = lambda r: (7, (r, 0), (1, 64))  # noqa: E731  one row of storage 7


# ---- the checker alone ------------------------------------------------------------------------
def test_linked_tasks_pass_and_a_removed_edge_is_the_named_race():
    tasks = _stitched([[((), (ROW(0),), "root")],          # 0 writes row 0
                       [((ROW(0),), (ROW(1),), "root")],   # 1 reads row 0 (RAW on 0)
                       [((ROW(5),), (), "root")]])         # 2 touches neither
    assert tasks[1].preds == [0]
    assert check_dependencies(tasks).count == 0
    tasks[1].preds.clear()
    report = check_dependencies(tasks)
    assert report.count == 1
    race = report.races[0]
    assert (race.first.id, race.second.id, race.kind, race.storage) == (0, 1, "RAW", 7)
    assert race.region == ((0, 0), (1, 64))
    assert (task_name(race.first), task_name(race.second)) == ("0-0-0", "0-1-0")


def test_a_path_orders_a_pair_and_windows_are_ordered_by_their_barrier():
    # 0 writes row 0, 1 writes row 3 after 0, 2 reads row 0 after 1 only: ordered by 0 -> 1 -> 2
    tasks = [_task(0, writes=[ROW(0)]), _task(1, writes=[ROW(3)], preds=[0]),
             _task(2, reads=[ROW(0)], preds=[1]),
             _task(0, reads=[ROW(0)])]          # window 1: after the barrier
    for k, t in enumerate(tasks):
        t.id, t.window = k, 0 if k < 3 else 1
    assert check_dependencies(tasks).count == 0
    tasks[2].preds = []
    assert [(r.first.id, r.second.id) for r in check_dependencies(tasks).races] == [(0, 2)]


def test_a_roots_workspace_is_a_copy_per_instance_and_shared_memory_is_not():
    """The same box of a root's private temp in two instances is two memories: no race; the
    same box of a kernel parameter is one: a race when nothing orders the two writes."""
    ws = (9, (0, 0), (64, 64))
    facts = SlotFacts(private={"root": frozenset({9})})
    tasks = [_task(0, writes=[ws]), _task(1, writes=[ws]), _task(2, writes=[ROW(0)]),
             _task(3, writes=[ROW(0)])]
    for k, t in enumerate(tasks):
        t.id, t.window = k, 0
    report = check_dependencies(tasks, facts)
    assert [(r.first.id, r.second.id, r.kind, r.storage) for r in report.races] == \
        [(2, 3, "WAW", 7)]


def _brute(tasks, copies):
    """{(a, b): kind} by testing every pair of accesses (RAW, then WAR, then WAW per pair)."""
    out = {}
    for a, ta in enumerate(tasks):
        for b in range(a + 1, len(tasks)):
            tb = tasks[b]
            for wa, accs_a, ca in ((False, ta.reads, copies[a][0]), (True, ta.writes, copies[a][1])):
                for wb, accs_b, cb in ((False, tb.reads, copies[b][0]),
                                       (True, tb.writes, copies[b][1])):
                    for (_, o1, e1), c1 in zip(accs_a, ca):
                        for (_, o2, e2), c2 in zip(accs_b, cb):
                            hit = len(o1) != len(o2) or all(
                                max(x, y) < min(x + xe, y + ye)
                                for x, xe, y, ye in zip(o1, e1, o2, e2))
                            if (wa or wb) and c1 == c2 and hit:
                                kind = "WAW" if wa and wb else "RAW" if wa else "WAR"
                                old = out.get((a, b), kind)
                                out[(a, b)] = min(old, kind, key=KINDS.index)
    return out


def test_conflicts_equal_an_all_pairs_scan():
    """Random boxes (zero extents, wide boxes, a reshaped 1-D alias) on two storages: the
    grid finds exactly the pairs an all-pairs scan finds, RAW preferred per pair."""
    rng = random.Random(3)
    tasks = []
    for k in range(160):
        def box():
            if rng.random() < 0.03:
                return (7, (rng.randrange(64 * 64),), (rng.randrange(1, 64),))
            if rng.random() < 0.05:
                return (7, (0, 0), (64, 64))
            return (rng.choice((7, 8)), (rng.randrange(64), rng.randrange(64)),
                    (rng.randrange(0, 6), rng.randrange(0, 20)))
        t = _task(0, [box() for _ in range(rng.randrange(3))],
                  [box() for _ in range(rng.randrange(2))])
        t.id, t.window = k, 0
        tasks.append(t)
    copies = storage_copies(tasks, SlotFacts())
    found = find_conflicts(tasks, copies)
    got = {(int(a), int(b)): KINDS[int(k)] for a, b, k in
           zip(found.first, found.second, found.kind)}
    want = _brute(tasks, copies)
    assert got == want and len(got) > 100


def test_ten_thousand_tasks_check_quickly():
    """1000 instances of 10 chained calls on random rows of one storage, linked by the
    stitcher: no race; with one task's edges removed, exactly its conflicts are races."""
    rng = random.Random(0)
    instances = [[((ROW(rng.randrange(2048)), ROW(rng.randrange(2048))),
                   (ROW(rng.randrange(2048)),), "root") for _ in range(10)]
                 for _ in range(1000)]
    tasks = _stitched(instances, max_instances=1024)
    assert len(tasks) == 10_000
    started = time.perf_counter()
    assert check_dependencies(tasks).count == 0
    assert time.perf_counter() - started < 3.0
    victim = tasks[5000]
    victim.preds = []
    for t in tasks:
        if 5000 in t.preds:
            t.preds.remove(5000)
    report = check_dependencies(tasks)
    assert report.count > 0
    assert all(5000 in (r.first.id, r.second.id) for r in report.races)


# ---- mode 3 on a kernel ----------------------------------------------------------------------
def _running_sum():
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 3})
    def running_sum(x: pypto.Tensor([4, 64], F32), acc: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(4, name="rows", idx_name="i"):
            acc[0:, :] = acc[0:1, :] + x[i:i + 1, :]   # RUNNING_SUM
    return running_sum


def _drop_edge(monkeypatch, src, dst):
    """The stitched tasks with the edge src -> dst taken out (a stitcher that forgot it)."""
    made = PendingRun.tasks.fget

    def tasks(self):
        out = made(self)
        for t in out:
            if t.id == dst and src in t.preds:
                t.preds.remove(src)
        return out
    monkeypatch.setattr(PendingRun, "tasks", property(tasks))


def _deps(folder):
    with open(os.path.join(folder, "deps.json")) as f:
        return json.load(f)


def test_mode3_passes_a_linked_kernel_and_writes_the_graph_with_reasons():
    k = _running_sum()
    x, acc = torch.randn(4, 64), torch.zeros(1, 64)
    k(x, acc)
    torch.testing.assert_close(acc, x.sum(0, keepdim=True))
    deps = _deps(k.last.folder)
    tasks = k.last.pending.tasks
    assert deps["schema"] == "openpto.deps/1" and deps["kernel"] == "running_sum"
    assert [t["name"] for t in deps["tasks"]] == [task_name(t) for t in tasks]
    line = f"{HERE}:{marker_line(HERE, '# RUNNING_SUM')}"
    assert all(t["lines"] == [line] for t in deps["tasks"])
    assert sorted((e["src"], e["dst"]) for e in deps["edges"]) == \
        sorted((p, t.id) for t in tasks for p in t.preds)
    # each instance reads and writes acc: the links are RAW (write, then read) on acc's row
    assert {e["reason"] for e in deps["edges"]} == {"RAW"}
    assert all(e["region"] == {"offsets": [0, 0], "extents": [1, 64]} for e in deps["edges"])
    assert deps["checks"]["dependency"]["ok"] and deps["checks"]["bounds"] is None


def test_deps_json_gives_an_edge_inside_a_root_the_compilers_reason_and_the_gm_it_orders():
    """A matmul (one cube task) read by a vector op tiled in two row halves: two edges in the
    instance, each through the half of the matmul's result that vector task reads."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 3})
    def mm_act(x: pypto.Tensor([64, 64], F32), w: pypto.Tensor([64, 64], F32),
               out: pypto.Tensor([64, 64], F32)):
        pypto.set_vec_tile_shapes(32, 64)
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        out[:, :] = pypto.sigmoid(pypto.matmul(x, w, F32))
    mm_act(torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64))
    deps = _deps(mm_act.last.folder)
    assert [(t["core"], t["ops"]) for t in deps["tasks"]] == \
        [("AIC", ["MATMUL"]), ("AIV", ["SIGMOID", "ASSEMBLE"]), ("AIV", ["SIGMOID", "ASSEMBLE"])]
    result = mm_act.last.pending.tasks[0].writes[0][0]
    edges = sorted(deps["edges"], key=lambda e: e["dst"])
    assert [(e["src"], e["dst"], e["storage"], e["region"]["offsets"], e["region"]["extents"])
            for e in edges] == [(0, 1, result, [0, 0], [32, 64]), (0, 2, result, [32, 0], [32, 64])]
    assert all(e["reason"].split(": ")[0] == "intra-root" and
               set(e["reason"].split(": ")[1].split("+")) <= {"FUSE", "GM", "ORDER"}
               for e in edges)


def test_mode3_names_the_pairs_a_forgotten_edge_leaves_unordered(monkeypatch):
    """Instance i waits only for instance i - 1 (the last writer of acc): without the edge
    1 -> 2 the chain is cut, so instances 0 and 1 are unordered with 2 and 3."""
    k = _running_sum()
    _drop_edge(monkeypatch, 1, 2)
    with pytest.raises(E.PyptoDependencyError) as info:
        k(torch.randn(4, 64), torch.zeros(1, 64))
    line = f"{HERE}:{marker_line(HERE, '# RUNNING_SUM')}"
    text = str(info.value)
    assert "4 pair(s) of tasks" in text
    assert ("RAW on acc[0:1, 0:64]: task 0-1-0 (leaf " in text
            and f"ADD/ASSEMBLE at {line}) and task 0-2-0 (leaf " in text)
    folder = text.split("the task graph: ")[1].split("deps.json")[0]
    deps = _deps(folder)   # written before raising
    races = deps["checks"]["dependency"]["races"]
    assert [(r["first"]["name"], r["second"]["name"], r["kind"]) for r in races] == \
        [("0-0-0", "0-2-0", "RAW"), ("0-0-0", "0-3-0", "RAW"), ("0-1-0", "0-2-0", "RAW"),
         ("0-1-0", "0-3-0", "RAW")]
    assert all(r["first"]["lines"] == [line] for r in races)
    assert (1, 2) not in {(e["src"], e["dst"]) for e in deps["edges"]}


def test_mode3_orders_a_reader_of_topks_second_output():
    """This check found it: passes/deps.py linked only a whole op's first output, so topk's
    indices reached their reader with no edge and the reader could start first."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 3})
    def pick(x: pypto.Tensor([16, 64], F32), ids: pypto.Tensor([16, 4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16, 64)
        _, top = pypto.topk(x * 2.0, 4)
        ids[:, :] = top
    with pytest.warns(pypto.errors.PyptoWarning):
        pick(torch.randn(16, 64), torch.zeros(16, 4, dtype=torch.int32))


# ---- mode 4 ----------------------------------------------------------------------------------
def _pick_rows(mode):
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": mode})
    def pick_rows(x: pypto.Tensor([8, 16], F32), idx: pypto.Tensor([1, 3], pypto.DT_INT32),
                  out: pypto.Tensor([3, 16], F32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(3, name="rows", idx_name="i"):
            r = idx[0, i]
            out[i:, :] = x[r:r + 1, :] * 2.0   # PICK_ROW
    return pick_rows


def test_mode4_lists_every_view_outside_its_tensor(executor):
    """Rows 9 and 8 of an 8-row tensor: one op, two windows, the first named with its index;
    the in-range row 3 is not reported."""
    k = _pick_rows(4)
    with pytest.raises(E.PyptoBoundsError) as info:
        k(torch.randn(8, 16), torch.tensor([[9, 3, 8]], dtype=torch.int32),
          torch.zeros(3, 16))
    line = f"{HERE}:{marker_line(HERE, '# PICK_ROW')}"
    text = str(info.value)
    assert "2 GM access(es) outside their tensor, by 1 op(s)" in text
    assert (f"view at {line} reads x[9:10, 0:16] outside x's shape [8, 16] "
            f"(2 times, first with i=0)") in text
    if executor == "tile":
        bounds = _deps(text.split("the task graph: ")[1].split("deps.json")[0])["checks"]["bounds"]
        assert bounds["accesses"] == 2 and bounds["out_of_bounds"][0]["offsets"] == [9, 0]


def test_mode4_passes_in_range_indices_and_every_mode_checks_indices(executor):
    x, idx = torch.randn(8, 16), torch.tensor([[7, 0, 3]], dtype=torch.int32)
    out = torch.zeros(3, 16)
    k = _pick_rows(4)
    k(x, idx, out)
    torch.testing.assert_close(out, x[[7, 0, 3]] * 2.0)
    if executor == "tile":      # (the reference executor stitches no tasks: no deps.json)
        assert _deps(k.last.folder)["checks"]["bounds"]["ok"]
    # mode 0 checks the indices too: row 9 of 8 is an error, not an unwritten row
    with pytest.raises(E.PyptoBoundsError) as info:
        _pick_rows(0)(x, torch.tensor([[9, 0, 3]], dtype=torch.int32), torch.zeros(3, 16))
    text = str(info.value)
    assert "1 view(s) at an index read from a tensor, past its end" in text
    assert f"test_debug_checks.py:{marker_line(HERE, '# PICK_ROW')} reads x[9:10, 0:16] " \
           f"outside x's shape [8, 16] (once with i=0)" in text


def test_every_mode_checks_indices_under_the_differential_run_too():
    """The test suite's differential run (both executors, compared) watches the indices as
    well: the error comes before any comparison."""
    assert os.environ.get("OPENPTO_CHECK_EXECUTORS") not in (None, "", "0")
    with pytest.raises(E.PyptoBoundsError, match="past its end"):
        _pick_rows(1)(torch.randn(8, 16), torch.tensor([[0, 8, 3]], dtype=torch.int32),
                      torch.zeros(3, 16))


def _blocks(valid):
    """Blocks of 16 rows of a dynamic x, two per outer step: the second may pass the end."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 4})
    def blocks(x: pypto.Tensor([pypto.DYNAMIC, 64], F32),
               y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 32, name="O"):
            for j in pypto.loop(2, name="I"):
                r = i + j * 16
                v = pypto.view(x, [16, 64], [r, 0], valid_shape=[valid(n, r), 64])  # BLOCK
                y[r:, :] = v * 2.0
    return blocks


def test_mode4_lets_an_empty_tail_block_pass_and_names_one_reaching_past_the_edge():
    """48 rows: the block at row 48 is empty with a clamped valid_shape (the tail idiom, legal);
    with valid_shape 16 the block at row 32 reads rows 32:48 (in range), the one at 48 reads
    48:64 of 48 rows, which the executors fill with zeros."""
    x = torch.randn(48, 64)
    y = torch.zeros(48, 64)
    _blocks(lambda n, r: (n - r).max(0).min(16))(x, y)
    torch.testing.assert_close(y, x * 2.0)
    with pytest.raises(E.PyptoBoundsError) as info:
        _blocks(lambda n, r: 16)(x, torch.zeros(48, 64))
    line = f"{HERE}:{marker_line(HERE, '# BLOCK')}"
    assert (f"view at {line} reads x[48:64, 0:64] outside x's shape [48, 64] "
            f"(once with") in str(info.value)


def test_mode4_names_an_assemble_outside_its_destination():
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 4},
                        runtime_options={"numerics": "timing_only"})
    def put_rows(x: pypto.Tensor([2, 16], F32), idx: pypto.Tensor([1, 2], pypto.DT_INT32),
                 out: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(2, name="rows", idx_name="i"):
            r = idx[0, i]
            out[r:r + 1, :] = x[i:i + 1, :] * 2.0   # PUT_ROW
    with pytest.raises(E.PyptoBoundsError) as info:
        put_rows(torch.randn(2, 16), torch.tensor([[5, 4]], dtype=torch.int32),
                 torch.zeros(4, 16))
    line = f"{HERE}:{marker_line(HERE, '# PUT_ROW')}"
    assert (f"assemble at {line} writes out[5:6, 0:16] outside out's shape [4, 16] "
            f"(2 times, first with i=0)") in str(info.value)
