"""Partition never creates a cycle among subgraphs (issue 13: "subgraphs ... form a cycle").

A cycle among subgraphs need not be a path among tile ops: with a -> x and y -> b, x and y in
one subgraph, merging a with b closes a -> {x, y} -> b. The reduce-then-broadcast kernels below
reach that shape (a reduction's partials and combines next to a broadcast that reads them); they
must compile and match torch. The unit tests drive the partition's sets directly."""
from __future__ import annotations

import inspect
import random

import pytest
import torch

import pypto
from pypto.passes.partition import _Sets, partition
from pypto.passes.kinds import AIV, COMPUTE, FUSE, GM
from pypto.passes.tile_graph import TileGraph, TileOp

F32 = pypto.DT_FP32
_REDUCE = {"sum": (pypto.sum, lambda t, d: t.sum(d, keepdim=True)),
           "amax": (pypto.amax, lambda t, d: t.amax(d, keepdim=True)),
           "mean": (pypto.mean, lambda t, d: t.mean(d, keepdim=True))}


def test_issue13_sum_reshaped_and_broadcast_with_its_input():
    """The issue's kernel: a dim-0 sum reshaped to rank 3 added to the 4-D value it sums."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([11, 32, 1, 1], F32), out: pypto.Tensor([11, 32, 32, 1], F32)):
        pypto.set_vec_tile_shapes(4, 3, 7, 32)
        v = x * 2.0
        out[:] = pypto.reshape(pypto.sum(v, dim=0, keepdim=True), [1, 32, 1]) + v

    x = torch.rand(11, 32, 1, 1)
    out = torch.full((11, 32, 32, 1), 7.0)
    k(x, out)
    v = x * 2.0
    torch.testing.assert_close(out, v.sum(0, keepdim=True).reshape(1, 32, 1) + v)


def _run(case: dict) -> None:
    """v = x * 2; r = reshape(reduce(v, d, keepdim), target); out = r (+, *, reversed -) v,
    each op on its own vector TileShape; compared with torch."""
    red, golden_red = _REDUCE[case["red"]]

    def k(x, out):
        pypto.set_vec_tile_shapes(*case["tiles"][0])
        v = x * 2.0
        pypto.set_vec_tile_shapes(*case["tiles"][1])
        r = pypto.reshape(red(v, dim=case["d"], keepdim=True), case["target"])
        pypto.set_vec_tile_shapes(*case["otile"])
        if case["comb"] == "add":
            out[:] = r + v
        elif case["comb"] == "mul":
            out[:] = r * v
        else:
            out[:] = v - r

    param = inspect.Parameter.POSITIONAL_OR_KEYWORD
    k.__signature__ = inspect.Signature([
        inspect.Parameter("x", param, annotation=pypto.Tensor(case["shape"], F32)),
        inspect.Parameter("out", param, annotation=pypto.Tensor(case["out"], F32))])
    gen = torch.Generator().manual_seed(len(str(case)))
    x = torch.rand(*case["shape"], generator=gen)
    out = torch.full(case["out"], 7.0)
    pypto.frontend.jit(k)(x, out)
    v = x * 2.0
    r = golden_red(v, case["d"]).reshape(case["target"])
    want = {"add": r + v, "mul": r * v, "sub_rev": v - r}[case["comb"]]
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def _case(shape, d, red, target, out, tiles, otile, comb):
    return dict(shape=shape, d=d, red=red, target=target, out=out, tiles=tiles, otile=otile,
                comb=comb)


# Kernels of the generated family below that made the partition close a cycle.
_FOUND = [
    _case([32, 1, 5, 16], 1, "sum", [32, 5, 16], [32, 32, 5, 16],
          [[7, 7, 1, 16], [3, 16, 2, 16]], [7, 4, 1, 16], "add"),
    _case([1, 1, 8, 5], 1, "sum", [8, 1, 5], [1, 8, 8, 5],
          [[3, 16, 4, 8], [32, 3, 2, 8]], [7, 8, 2, 16], "add"),
    _case([1, 32, 1], 0, "mean", [1, 1, 1, 32], [1, 1, 32, 32],
          [[4, 3, 16], [4, 8, 8]], [1, 16, 1, 16], "add"),
    _case([8, 8], 1, "sum", [8, 1, 1], [8, 8, 8], [[2, 32], [3, 8]], [2, 1, 8], "sub_rev"),
    _case([3, 11, 1, 16], 2, "amax", [3, 1, 11, 16], [3, 11, 11, 16],
          [[7, 8, 4, 16], [3, 4, 16, 8]], [8, 7, 4, 8], "sub_rev"),
    _case([2, 32], 0, "amax", [32, 1, 1, 1], [32, 1, 2, 32], [[3, 16], [2, 8]],
          [16, 8, 8, 32], "sub_rev"),
]


@pytest.mark.parametrize("case", _FOUND, ids=lambda c: f"{c['shape']}-{c['red']}{c['d']}")
def test_reduce_reshape_broadcast_cases_that_closed_cycles(case):
    _run(case)


def _generated(seed: int) -> dict:
    """A kernel of the family: rank 2-4 input (size-1 dims likely), a reduction on any axis,
    its result reshaped (size-1 dims moved, added or dropped) so that it still broadcasts
    against the input, tile shapes that often split the reduce axis."""
    rng = random.Random(seed)
    while True:
        rank = rng.randint(2, 4)
        shape = [rng.choice([1, 1, 2, 3, 5, 8, 11, 16, 32]) for _ in range(rank)]
        d = rng.randrange(rank)
        kept = [s for i, s in enumerate(shape) if s != 1 and i != d]
        k = rng.randint(max(1, len(kept)), 4)
        target = [1] * k
        for i, s in zip(sorted(rng.sample(range(k), len(kept))), kept):
            target[i] = s
        try:
            out = list(torch.broadcast_shapes(tuple(target), tuple(shape)))
        except RuntimeError:
            continue
        tiles = [[rng.choice([1, 2, 3, 4, 7, 8, 16, 32]) for _ in shape[:-1]]
                 + [rng.choice([8, 16, 32])] for _ in range(2)]
        otile = [rng.choice([1, 2, 3, 4, 7, 8, 16]) for _ in out[:-1]] + [rng.choice([8, 16, 32])]
        return _case(shape, d, rng.choice(list(_REDUCE)), target, out, tiles, otile,
                     rng.choice(["add", "mul", "sub_rev"]))


@pytest.mark.parametrize("seed", range(40))
def test_generated_reduce_reshape_broadcast_family(seed):
    _run(_generated(seed))


# ---- the partition's sets, directly ----

def _graph(n: int, edges: dict[tuple[int, int], str],
           latency: list[float] | None = None) -> TileGraph:
    return TileGraph("g", [TileOp(i, COMPUTE, "ADD", AIV, [], None, None, {},
                                  latency[i] if latency else 1.0) for i in range(n)],
                     dict(edges))


def test_merge_refused_when_a_path_runs_through_another_subgraph():
    """a=0 -> x=1 and y=2 -> b=3 with no op path from x to y: once x and y share a subgraph,
    merging a with b would close a -> {x, y} -> b -> ... -> a."""
    sets = _Sets(_graph(4, {(0, 1): FUSE, (2, 3): FUSE, (0, 3): FUSE}))
    assert sets.merge_if_acyclic(1, 2)
    assert not sets.merge_if_acyclic(sets.find(0), sets.find(3))
    assert sets.find(0) != sets.find(3)


def test_merge_reorders_the_sets_placed_between():
    """Merging 0 with 3 when 0 also feeds 1 and 2 feeds 3 (both placed between them) keeps a
    topological order: 1 after {0, 3}, 2 before it."""
    g = _graph(5, {(0, 1): GM, (0, 3): FUSE, (2, 3): GM, (1, 4): FUSE})
    sets = _Sets(g)
    assert sets.merge_if_acyclic(0, 3)
    order = [r for r in sets.slots if r is not None]
    assert order.index(sets.find(1)) > order.index(sets.find(3))
    assert order.index(sets.find(2)) < order.index(sets.find(3))


def _random_dag(rng: random.Random, n: int) -> TileGraph:
    edges = {}
    for c in range(1, n):
        for p in rng.sample(range(c), min(c, rng.randint(0, 3))):
            edges[(p, c)] = rng.choice([FUSE, FUSE, GM])
    return _graph(n, edges, [float(rng.choice([0, 1, 2, 5])) for _ in range(n)])


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_partition_into_an_acyclic_order(seed):
    """Any DAG, any bound: every op in exactly one subgraph, and every edge between two
    subgraphs goes forward in the emitted order (no cycle, no error); with no binding bound
    some fusible edge is merged."""
    rng = random.Random(seed)
    g = _random_dag(rng, rng.randint(5, 60))
    bound = rng.choice([3, 8, 1000])
    subgraphs = partition(g, upper_bound=bound)
    where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
    assert sorted(where) == list(range(len(g.ops)))
    assert all(where[p] <= where[c] for p, c in g.edges)
    if bound == 1000 and FUSE in g.edges.values():
        assert len(subgraphs) < len(g.ops)


@pytest.mark.parametrize("seed", range(20))
def test_random_merges_keep_the_order_of_sets_topological(seed):
    """Merge random pairs of sets (not only along edges): each refused merge would close a
    cycle, and after every merge the kept order puts every set before the sets it feeds."""
    rng = random.Random(seed)
    g = _random_dag(rng, rng.randint(5, 40))
    sets = _Sets(g)
    for _ in range(3 * len(g.ops)):
        a, b = sets.find(rng.randrange(len(g.ops))), sets.find(rng.randrange(len(g.ops)))
        if a == b:
            continue
        groups = {r: i for i, r in enumerate(sets.members)}
        edges = {(groups[sets.find(p)], groups[sets.find(c)]) for p, c in g.edges}
        merged = {(groups[b] if x == groups[a] else x, groups[b] if y == groups[a] else y)
                  for x, y in edges}
        closes = _has_cycle(set(groups.values()), {(x, y) for x, y in merged if x != y})
        assert sets.merge_if_acyclic(a, b) is not closes
        order = {r: i for i, r in enumerate(r for r in sets.slots if r is not None)}
        assert sorted(order) == sorted(sets.members)
        assert all(order[sets.find(p)] <= order[sets.find(c)] for p, c in g.edges)


def _has_cycle(nodes: set[int], edges: set[tuple[int, int]]) -> bool:
    succ: dict[int, list[int]] = {n: [] for n in nodes}
    for p, c in edges:
        succ[p].append(c)
    state: dict[int, int] = {}

    def visit(n: int) -> bool:
        state[n] = 1
        for c in succ[n]:
            if state.get(c) == 1 or (c not in state and visit(c)):
                return True
        state[n] = 2
        return False

    return any(n not in state and visit(n) for n in nodes)


def test_row_sum_and_column_max_of_one_value():
    """(v - rowsum(v)) * colmax(v) + exp(v) on [64, 256] with tile (4, 16): both reductions
    split their axis, and the column max's combines read partials of every row slab (the
    op-level cycle check let this close a cycle)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([64, 256], F32), out: pypto.Tensor([64, 256], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        v = x * 2.0
        s = pypto.sum(v, dim=1, keepdim=True)
        m = pypto.amax(v, dim=0, keepdim=True)
        out[:] = (v - s) * m + pypto.exp(v)

    x = torch.rand(64, 256)
    out = torch.zeros(64, 256)
    k(x, out)
    v = x * 2.0
    want = (v - v.sum(1, keepdim=True)) * v.amax(0, keepdim=True) + torch.exp(v)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-4)
