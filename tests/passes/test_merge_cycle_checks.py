"""The breadth merges' cycle checks (passes/subgraph_dag.py `SubgraphDag._path`) search only
inside the level window between two subgraphs: the same answers as a search of everything
downstream, and none at all for siblings (issue 31: a 145-task kernel spent 50 s in 38,592
checks)."""
import warnings

import pytest
import torch

import pypto
from pypto.passes.subgraph_dag import SubgraphDag


def _downstream_search(st, src: int, dst: int) -> bool:
    """The unpruned answer: a path of two or more edges from src to dst."""
    stack = [s for s in st.succ[src] if s != dst]
    seen = set(stack)
    while stack:
        x = stack.pop()
        if dst in st.succ[x]:
            return True
        for s in st.succ[x]:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


@pytest.fixture
def checks(monkeypatch):
    """Every cycle check of the compilations in the test: (answer, searched, unpruned)."""
    seen = []
    pruned = SubgraphDag._path

    def path(st, src, dst):
        answer = pruned(st, src, dst)
        searched = st.level[dst] - st.level[src] >= 2
        seen.append((answer, searched, _downstream_search(st, src, dst)))
        return answer
    monkeypatch.setattr(SubgraphDag, "_path", path)
    return seen


def test_the_issues_kernel_needs_no_search(checks, monkeypatch):
    monkeypatch.setenv("OPENPTO_CHECK_EXECUTORS", "0")

    @pypto.frontend.jit(host_options={"compile_stage": pypto.CompStage.EXECUTE_GRAPH})
    def k(x: pypto.Tensor([27, 39, 8, 30], pypto.DT_FP32),
          o0: pypto.Tensor([27, 39, 16, 30], pypto.DT_FP32),
          o1: pypto.Tensor([27, 39, 8, 30], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 2, 3, 8)
        v1 = pypto.abs(x)
        o0[:] = pypto.concat([x, v1], dim=2)
        pypto.assemble(v1[0:9, :, :, :], [0, 0, 0, 0], o1)
        pypto.assemble(pypto.neg(v1[9:27, :, :, :]), [9, 0, 0, 0], o1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k(torch.zeros(27, 39, 8, 30), torch.zeros(27, 39, 16, 30), torch.zeros(27, 39, 8, 30))
    assert len(checks) > 30_000
    assert not any(searched for _, searched, _ in checks)
    assert all(answer == unpruned for answer, _, unpruned in checks)


class _Op:
    def __init__(self, i):
        self.id, self.kind, self.grid, self.core = i, None, None, "AIV"


class _Graph:
    """The parts of a TileGraph that SubgraphDag reads: ops, edges, preds."""

    def __init__(self, n, edges):
        self.ops = [_Op(i) for i in range(n)]
        self.edges = {e: None for e in edges}
        self.block_name = "random"

    def preds(self):
        out = {op.id: [] for op in self.ops}
        for p, c in self.edges:
            out[c].append(p)
        return out


@pytest.mark.parametrize("seed", range(6))
def test_random_unions_answer_as_the_unpruned_search_and_keep_levels_valid(seed):
    """Random DAGs, random merge attempts: every check equals the unpruned search, a pair that
    would close a cycle is refused, and after every union each edge still climbs a level."""
    import random
    rng = random.Random(seed)
    n = 80
    edges = {(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.05}
    st = SubgraphDag(_Graph(n, edges), [[op] for op in _Graph(n, ()).ops], None)
    cycles = searches = 0
    while len(st.live()) > 2:
        a, b = sorted(rng.sample(st.live(), 2))
        want = _downstream_search(st, a, b) or _downstream_search(st, b, a)
        searches += max(st.level[b] - st.level[a], st.level[a] - st.level[b]) >= 2
        assert st.cyclic(a, b) == want
        if want:
            cycles += 1
            continue
        st.union(a, b)
        assert all(st.level[u] < st.level[v] for u in st.live() for v in st.succ[u])
    assert cycles > 0 and searches > 0     # both answers and real searches were exercised
