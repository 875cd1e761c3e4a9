"""Breadth-direction merges: isomorphic subgraphs of one block merged side by side.

Takes the linked `TileGraph` of one block, its subgraphs from `partition` (lists of tile ops in
a topological order) and the block's `MergeSettings` → the merged subgraphs (lists of tile ops,
again in a topological order, ties by first original subgraph) and one `Annotation` per merged
subgraph. Keeps: a merged subgraph is the concatenation of its members' tile ops in program
order (a topological order of the tile dependencies, so the executor runs it as one task); no
merge creates a cycle in the subgraph graph (a member that would is skipped); nothing merges
across core types, "whole" ops stay alone; the output is deterministic. `build_root` then
recomputes leaves from the merged subgraphs: merged subgraphs whose members are isomorphic are
isomorphic too.

Three passes, in PyPTO's order (compiler_runtime.md §4.3-§4.6):

1. vec NBuffer (`vec_nbuffer_setting`): AIV subgraphs.
2. cube L1 reuse (`cube_l1_reuse_setting`): AIC subgraphs holding a matmul tile op.
3. cube NBuffer (`cube_nbuffer_setting`): the same cube subgraphs after step 2, regrouped.

Groups. Each pass groups its participants by the leaf isomorphism signature
(`functions.Signatures`); a group's id ("hashorder") is the rank of its first member in subgraph
order, numbered separately by each pass among that pass's participants only. Every participant's
call op shows it: `call.merge_info[pass] = GroupInfo(group, key, size, merged)` with the int key,
the HEAD-style key "func{magic}_{group}" (magic = the block's index in `Program.blocks()`), the
group's size before the pass and how many of the pass's subgraphs the call holds.

Keys of a setting dict: int keys (0.2.0) — `k >= 0` is group k, `-1` the default of every group,
`-2` only a mode flag (below); or str keys (HEAD) — "func{magic}_{group}", "DEFAULT" (= -1), or a
semantic label (`set_semantic_label`). Resolution: exact group key > labels (the max of the
labels that hit; for the vec/cube NBuffers any op of the group, for L1 reuse any op of the
subgraph itself) > default > auto. A key that matches nothing is ignored silently.

vec NBuffer, per group of S members (C = `mg_vec_parallel_lb`, 48):
- an explicit count N: runs of N consecutive members of the whole group merge (1 or 0 = none);
  0.2.0 also needs `{-2: 1}` for groups whose members share no neighbour subgraph (plain
  input-to-output element-wise graphs); we merge with `{-1: N}` alone, and accept `-2` without
  effect in that case (so S5's `{-1: N}` and `{0: 4}`, which leave 64 in 0.2.0, merge here);
- auto (no count for the group; `{}` is all-auto): n = 1 if S <= C, else the largest
  n <= ceil(S/C) with ceil(S/n) >= C (at least one full wave on C cores). Like 0.2.0, runs are
  formed within buckets of members that share a producer subgraph, or a consumer subgraph
  (whichever gives fewer buckets; members with no such neighbour are alone), so plain
  input-to-output element-wise groups do not merge. With a `-2` key present (`{-2: 0}` = 0.2.0's
  "auto multi-in/out") auto groups are one bucket: S=256 → n=5 → 52 subgraphs, S=64 → none.

cube L1 reuse, per group of S members (#AIC cores = 24 on A2/A3):
- a count N (or `(N, side)`, side "left" = share A loads only, "right" = B only, "auto" = both);
  auto = floor(S / (2 × #AIC)); 0 or 1 = no merge (`{-1: 1}` = off);
- visiting the group's members in order, member i merges into the earliest earlier head t of
  the same group that reads an identical GM load (a matmul A/B input region not produced inside
  the subgraph: same value, offsets, shape) that fits L1 whole (a shared A row panel or B
  column panel stays resident for all members: a very long K disables L1 reuse, §4.4) while t
  holds fewer than t's N members, the merge makes no cycle and the deduplicated load bytes of
  t + i stay <= `mg_copyin_upper_bound`;
  otherwise i becomes a head. (0.2.0 leaves the auto remainder unspread; so do we.)

cube NBuffer (default `{-1: 1}` = off), per regrouped group of S members:
- a count N: runs of N consecutive members, N capped by mg_copyin_upper_bound / load bytes;
- auto (`{}`): if S <= 2 × #AIC nothing; otherwise S members are spread over
  max(2 × #AIC, ceil(S / cap)) consecutive runs whose sizes differ by at most one.

Shared loads: after the passes, every subgraph with matmul tile ops lists in
`Annotation.shared_loads` the GM loads (one `Region` per distinct (value, offsets, shape)) that
more than one of its matmul tile ops reads, so a cost model charges each once (PyPTO's CSE of
identical loads inside a subgraph). `copyin_bytes` gives a subgraph's deduplicated load bytes.

Settings: each op keeps the merge pass options current when it was recorded
(`Operation.pass_options`, see _config.MERGE_OPTION_KEYS); a block uses those of its last op, so
a `set_pass_options` inside a loop body (before its ops) applies to that loop's roots only. Keys
the op did not record fall back to the options current at compile time (`current_options`),
then to the defaults (`mg_*` bounds from the machine spec's partition section).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, NamedTuple

from pypto.machine.spec import MachineSpec
from pypto.passes.functions import Signatures
from pypto.passes.kinds import AIC, AIV, COPY_OUT, FUSE, GM, WHOLE
from pypto.passes.tile_graph import Region, TileGraph, TileOp

VEC, L1, CUBE = "vec_nbuffer", "cube_l1_reuse", "cube_nbuffer"
@dataclass(frozen=True)
class MergeSettings:
    vec_nbuffer: dict = field(default_factory=dict)
    cube_l1_reuse: dict = field(default_factory=dict)
    cube_nbuffer: dict = field(default_factory=lambda: {-1: 1})
    copyin_upper_bound: int = 104857600
    vec_parallel_lb: int = 48
    aic_cores: int = 24
    l1_bytes: int = 524288   # L1 per AIC: a load merged subgraphs share must fit it whole
    magic: int = 0  # the block's index in Program.blocks(): "func{magic}_{group}" keys


class GroupInfo(NamedTuple):
    group: int   # hashorder in this pass's numbering: the int key of the setting
    key: str     # the same group as a HEAD string key, "func{magic}_{group}"
    size: int    # members of the group before this pass merged (PyPTO's subGraphCount)
    merged: int  # this pass's subgraphs held by the call (1 = not merged)


class Annotation(NamedTuple):
    """What the merges record on one (merged) subgraph; `build_root` copies it to the call."""

    info: dict[str, GroupInfo]
    shared_loads: list[Region]
    # the subgraph's `Signatures` key when a merge pass computed it (None otherwise), so that
    # `build_root` does not hash every subgraph again
    signature: str | None


def block_settings(block: Any, spec: MachineSpec, current: dict[str, Any],
                   magic: int) -> MergeSettings:
    """The settings of one block: its last op's recorded options, else `current`, else the
    defaults (machine spec for the two bounds)."""
    recorded = block.ops[-1].pass_options if block.ops else {}

    def get(k: str, default: Any) -> Any:
        v = recorded[k] if k in recorded else current.get(k)
        return default if v is None else v

    return MergeSettings(
        get("vec_nbuffer_setting", {}), get("cube_l1_reuse_setting", {}),
        get("cube_nbuffer_setting", {-1: 1}),
        get("mg_copyin_upper_bound", spec.partition["mg_copyin_upper_bound"]),
        max(1, get("mg_vec_parallel_lb", spec.partition["mg_vec_parallel_lb"])),
        spec.aic, spec.l1, magic)


def _count(v: Any) -> tuple[int, str | None]:
    return v if isinstance(v, tuple) else (v, None)


def resolve(setting: dict, group: int, labels: Iterable[str],
            magic: int) -> tuple[int | None, str | None]:
    """(merge count or None for auto, L1 side or None) of `group` under `setting`."""
    if not setting:
        return None, None
    if all(isinstance(k, int) for k in setting):
        for k in (group, -1):
            if k in setting:
                return _count(setting[k])
        return None, None
    key = f"func{magic}_{group}"
    if key in setting:
        return _count(setting[key])
    hits = [_count(setting[lb]) for lb in labels if lb and lb in setting]
    if hits:
        return max(hits, key=lambda h: h[0])
    if "DEFAULT" in setting:
        return _count(setting["DEFAULT"])
    return None, None


def auto_vec_factor(size: int, parallel: int) -> int:
    """The auto vec NBuffer factor: the largest n <= ceil(S/C) that keeps >= C subgraphs."""
    if size <= parallel:
        return 1
    n = -(-size // parallel)
    while n > 1 and -(-size // n) < parallel:
        n -= 1
    return n


def _is_matmul(op: TileOp) -> bool:
    return op.opcode == "MATMUL" and op.kind is not WHOLE


def _load_key(r: Region) -> tuple:
    return (r.value.id, r.offsets, r.shape, r.dims)


def loads(ops: list[TileOp], side: str | None = None) -> list[tuple[tuple, Region]]:
    """(key, region) of the GM loads of a subgraph's matmul tile ops, deduplicated, in order:
    the A (side "left") and B ("right") input regions not produced inside the subgraph."""
    made = {op.output.value.id for op in ops if op.output is not None and op.kind is not COPY_OUT}
    which = {"left": (0,), "right": (1,)}.get(side or "auto", (0, 1))
    out: dict[tuple, Region] = {}
    for op in ops:
        if _is_matmul(op):
            for i in which:
                r = op.inputs[i]
                if r.value.id not in made:
                    out.setdefault(_load_key(r), r)
    return list(out.items())


def copyin_bytes(ops: list[TileOp]) -> int:
    """Bytes a subgraph loads from GM into L1 for its matmuls, each distinct region once."""
    return sum(r.nbytes for _, r in loads(ops))


def shared_loads(ops: list[TileOp]) -> list[Region]:
    """Loads read by more than one matmul tile op of the subgraph (one region each)."""
    made = {op.output.value.id for op in ops if op.output is not None and op.kind is not COPY_OUT}
    seen: dict[tuple, list] = {}
    for op in ops:
        if _is_matmul(op):
            for r in op.inputs[:2]:
                if r.value.id not in made:
                    seen.setdefault(_load_key(r), [r, 0])[1] += 1
    return [r for r, n in seen.values() if n > 1]


class _State:
    """The subgraph DAG under merging: union by absorbing a later subgraph into an earlier one
    (the survivor keeps the smaller original index)."""

    def __init__(self, graph: TileGraph, subgraphs: list[list[TileOp]], signatures: Signatures):
        self.graph = graph
        self.signatures = signatures
        self.pos = {op.id: i for i, op in enumerate(graph.ops)}
        self.op_preds = graph.preds()
        self.ops = [list(sg) for sg in subgraphs]
        self.alive = [True] * len(subgraphs)
        # per subgraph: whether it holds a "whole" op, and its signature once computed (both
        # asked by every pass for every subgraph; union updates them)
        # (ops on a run-time grid are never breadth-merged either: one task per tile already)
        self.has_whole = [any(op.kind is WHOLE or op.grid is not None for op in sg)
                          for sg in subgraphs]
        self.sigs: list[str | None] = [None] * len(subgraphs)
        self.info: list[dict[str, GroupInfo]] = [{} for _ in subgraphs]
        self.where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
        self.succ: list[set[int]] = [set() for _ in subgraphs]
        self.pred: list[set[int]] = [set() for _ in subgraphs]
        for (p, c) in graph.edges:
            a, b = self.where[p], self.where[c]
            if a != b:
                self.succ[a].add(b)
                self.pred[b].add(a)
        # data-flow (FUSE or GM) edges between tile ops, both ways: the neighbours of _buckets
        self.data_preds: dict[int, list[int]] = {op.id: [] for op in graph.ops}
        self.data_succs: dict[int, list[int]] = {op.id: [] for op in graph.ops}
        for (p, c), kind in graph.edges.items():
            if kind is FUSE or kind is GM:
                self.data_succs[p].append(c)
                self.data_preds[c].append(p)
        self._into: dict[int, int] = {}   # absorbed subgraph -> the one that absorbed it
        self.merged_any = False
        self.level = _levels(self.succ, self.pred)
        self._unsorted: set[int] = set()   # subgraphs whose ops are out of program order

    def ops_of(self, i: int) -> list[TileOp]:
        """Subgraph i's tile ops in program order."""
        if i in self._unsorted:
            self._unsorted.discard(i)
            self.ops[i].sort(key=lambda op: self.pos[op.id])
        return self.ops[i]


    def live(self) -> list[int]:
        return [i for i, a in enumerate(self.alive) if a]

    def core(self, i: int) -> str | None:
        return None if self.has_whole[i] else self.ops_of(i)[0].core

    def is_vec(self, i: int) -> bool:
        return self.core(i) is AIV

    def is_cube(self, i: int) -> bool:
        return self.core(i) is AIC and any(_is_matmul(op) for op in self.ops_of(i))

    def labels(self, members: Iterable[int]) -> list[str]:
        out: dict[str, None] = {}
        for i in members:
            for op in self.ops_of(i):
                out.setdefault(op.src.label, None)
        return list(out)

    def signature(self, i: int) -> str:
        if self.sigs[i] is None:
            self.sigs[i] = self.signatures.of(self.ops_of(i), self.op_preds)
        return self.sigs[i]

    def groups(self, members: list[int]) -> list[list[int]]:
        """Members grouped by isomorphism, groups in order of first appearance."""
        by_sig: dict[str, list[int]] = {}
        for i in members:
            by_sig.setdefault(self.signature(i), []).append(i)
        return list(by_sig.values())

    def _path(self, src: int, dst: int) -> bool:
        """Whether a path of two or more edges leads from src to dst.

        NOTE: levels grow along every edge, so such a path climbs at least two levels and
        passes only through levels strictly between src's and dst's: siblings (one level, what
        the breadth merges mostly ask about) answer at once, and a search never leaves the
        window. (The unpruned search walked 165M nodes for 38,592 checks of one small kernel.)"""
        level = self.level
        top = level[dst]
        if top - level[src] < 2:
            return False
        stack = [s for s in self.succ[src] if s != dst and level[s] < top]
        seen = set(stack)
        while stack:
            x = stack.pop()
            if dst in self.succ[x]:
                return True
            for s in self.succ[x]:
                if s not in seen and level[s] < top:
                    seen.add(s)
                    stack.append(s)
        return False

    def cyclic(self, a: int, b: int) -> bool:
        return self._path(a, b) or self._path(b, a)

    def union(self, a: int, b: int) -> None:
        """Absorb subgraph b into subgraph a."""
        # NOTE: put in program order when next read (ops_of): a head absorbing a long run
        # re-merged its growing list on every union (2.4M steps for 19k unions)
        self.ops[a].extend(self.ops[b])
        self._unsorted.add(a)
        self.ops[b] = []
        self.alive[b] = False
        self.has_whole[a] = self.has_whole[a] or self.has_whole[b]
        self.sigs[a] = self.sigs[b] = None
        self._into[b] = a
        for s in self.succ[b]:
            self.pred[s].discard(b)
            if s != a:
                self.pred[s].add(a)
                self.succ[a].add(s)
        for p in self.pred[b]:
            self.succ[p].discard(b)
            if p != a:
                self.succ[p].add(a)
                self.pred[a].add(p)
        self.succ[a].discard(b)
        self.pred[a].discard(b)
        self.succ[b], self.pred[b] = set(), set()
        self._relevel(a, max(self.level[a], self.level[b]))
        for k, g in self.info[b].items():
            mine = self.info[a].get(k)
            self.info[a][k] = g if mine is None else mine._replace(merged=mine.merged + g.merged)
        self.info[b] = {}
        self.merged_any = True

    def _relevel(self, a: int, level: int) -> None:
        """Give the merged subgraph `a` the higher of its parts' levels and push successors
        that are no longer above their predecessors (none, when siblings merge)."""
        levels, succ = self.level, self.succ
        levels[a] = level
        stack = [a]
        while stack:
            x = stack.pop()
            above = levels[x] + 1
            for s in succ[x]:
                if levels[s] < above:
                    levels[s] = above
                    stack.append(s)

    def data_neighbours(self, i: int, producers: bool) -> list[int]:
        """Live subgraphs feeding (or fed by) subgraph i through data edges, sorted."""
        out = set()
        adjacent = self.data_preds if producers else self.data_succs
        for op in self.ops[i]:
            for other in adjacent[op.id]:
                r = self.root(other)
                if r != i:
                    out.add(r)
        return sorted(out)

    def root(self, op_id: int) -> int:
        i = self.where[op_id]
        while not self.alive[i]:
            i = self._into[i]
        return i

    def runs(self, bucket: list[int], sizes: Iterator[int]) -> None:
        """Merge consecutive members of `bucket`: each head absorbs the following members up
        to its run size; a member whose merge would make a cycle starts the next run."""
        head, room = None, 0
        for m in bucket:
            if head is not None and room > 0 and not self.cyclic(head, m):
                self.union(head, m)
                room -= 1
            else:
                head, room = m, next(sizes, 1) - 1


def _levels(succ: list[set[int]], pred: list[set[int]]) -> list[int]:
    """Longest-path levels of the subgraph DAG: every edge climbs at least one level."""
    level = [0] * len(succ)
    indeg = [len(p) for p in pred]
    ready = [i for i, d in enumerate(indeg) if d == 0]
    while ready:
        i = ready.pop()
        for s in succ[i]:
            level[s] = max(level[s], level[i] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return level


def _repeat(n: int) -> Iterator[int]:
    while True:
        yield n


def _buckets(st: _State, members: list[int]) -> list[list[int]]:
    """Members sharing a producer subgraph, or a consumer subgraph (whichever gives fewer
    buckets); a member with no such neighbour is alone."""
    best = None
    for producers in (True, False):
        parent = {m: m for m in members}

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        owner: dict[int, int] = {}
        for m in members:
            for nb in st.data_neighbours(m, producers):
                if nb in owner:
                    a, b = find(owner[nb]), find(m)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                else:
                    owner[nb] = m
        out: dict[int, list[int]] = {}
        for m in members:
            out.setdefault(find(m), []).append(m)
        if best is None or len(out) < len(best):
            best = list(out.values())
    return best or []


def _start(st: _State, name: str, members: list[int], group: int, magic: int) -> None:
    key = f"func{magic}_{group}"
    for i in members:
        st.info[i][name] = GroupInfo(group, key, len(members), 1)


def _vec_nbuffer(st: _State, s: MergeSettings) -> None:
    setting = s.vec_nbuffer
    multi = -2 in setting
    for gid, members in enumerate(st.groups([i for i in st.live() if st.is_vec(i)])):
        _start(st, VEC, members, gid, s.magic)
        n, _ = resolve(setting, gid, st.labels(members), s.magic)
        if n is None:
            n = auto_vec_factor(len(members), s.vec_parallel_lb)
            buckets = [members] if multi else _buckets(st, members)
        else:
            buckets = [members]
        if n > 1:
            for bucket in buckets:
                st.runs(bucket, _repeat(n))


def _l1_reuse(st: _State, s: MergeSettings) -> None:
    setting = s.cube_l1_reuse
    for gid, members in enumerate(st.groups([i for i in st.live() if st.is_cube(i)])):
        _start(st, L1, members, gid, s.magic)
        auto = len(members) // (2 * s.aic_cores)
        cap: dict[int, int] = {}          # head -> its N
        held: dict[int, int] = {}         # head -> members held
        offered: dict[int, list[tuple]] = {}   # head -> its load keys
        # load key -> heads offering it that still have room (a full head leaves, so that
        # a load every member reads is not a scan over every earlier head)
        by_load: dict[tuple, dict[int, None]] = {}
        for i in members:
            n, side = resolve(setting, gid, st.labels([i]), s.magic)
            n = auto if n is None else n
            # only a load that fits L1 whole can stay resident for the members that share it
            mine = [(k, r) for k, r in loads(st.ops_of(i), side) if r.nbytes <= s.l1_bytes]
            target = None
            if n > 1:
                heads = sorted({t for k, _ in mine for t in by_load.get(k, ())})
                for t in heads:
                    if st.cyclic(t, i):
                        continue
                    if copyin_bytes(st.ops_of(t) + st.ops_of(i)) > s.copyin_upper_bound:
                        continue
                    target = t
                    break
            if target is None:
                cap[i], held[i] = n, 1
                offered[i] = [k for k, _ in mine]
                if n > 1:
                    for k in offered[i]:
                        by_load.setdefault(k, {})[i] = None
            else:
                st.union(target, i)
                held[target] += 1
                if held[target] >= cap[target]:
                    for k in offered[target]:
                        del by_load[k][target]


def _cube_nbuffer(st: _State, s: MergeSettings) -> None:
    setting = s.cube_nbuffer
    for gid, members in enumerate(st.groups([i for i in st.live() if st.is_cube(i)])):
        _start(st, CUBE, members, gid, s.magic)
        n, _ = resolve(setting, gid, st.labels(members), s.magic)
        per = max(copyin_bytes(st.ops_of(i)) for i in members)
        cap = max(1, s.copyin_upper_bound // per) if per else len(members)
        size = len(members)
        if n is not None:
            if min(n, cap) > 1:
                st.runs(members, _repeat(min(n, cap)))
            continue
        target = 2 * s.aic_cores
        if size <= target:
            continue
        count = max(target, -(-size // cap))
        base, extra = divmod(size, count)
        st.runs(members, iter([base + 1] * extra + [base] * (count - extra)))


def breadth_merge(graph: TileGraph, subgraphs: list[list[TileOp]], settings: MergeSettings,
                  signatures: Signatures | None = None
                  ) -> tuple[list[list[TileOp]], list[Annotation]]:
    """The three breadth merges on one block's subgraphs (see the module docstring);
    `signatures`: the compilation's isomorphism keys (shared with `build_root`)."""
    signatures = signatures or Signatures()
    st = _State(graph, subgraphs, signatures)
    _vec_nbuffer(st, settings)
    _l1_reuse(st, settings)
    _cube_nbuffer(st, settings)
    order = _topological(st) if st.merged_any else list(range(len(subgraphs)))
    out = [st.ops_of(i) for i in order]
    notes = [Annotation(st.info[i], shared_loads(st.ops_of(i)) if st.is_cube(i) else [],
                        st.sigs[i]) for i in order]
    return out, notes


def _topological(st: _State) -> list[int]:
    """Live subgraphs in dependency order, ties by original index (identity when unmerged)."""
    live = st.live()
    indeg = {i: len(st.pred[i]) for i in live}
    heap = [i for i in live if indeg[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for s in sorted(st.succ[i]):
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, s)
    if len(order) != len(live):
        raise RuntimeError(f"internal: merged subgraphs of {st.graph.block_name} form a cycle")
    return order
