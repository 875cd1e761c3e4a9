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
`Annotation.shared_loads` the GM loads that more than one of its matmul tile ops reads
(`matmul_loads`), so a cost model charges each once.

Elsewhere, each its own idea: what a setting dict's keys mean and where a block's settings come
from (`merge_settings`), the GM loads of matmul subgraphs (`matmul_loads`), and the subgraph
DAG the passes merge in, with its unions and cycle checks (`subgraph_dag`). This module only
decides who absorbs whom.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

from pypto.passes.functions import Signatures
from pypto.passes.matmul_loads import copyin_bytes, loads, shared_loads
from pypto.passes.merge_settings import GroupInfo, MergeSettings, group_key, resolve
from pypto.passes.subgraph_dag import SubgraphDag
from pypto.passes.tile_graph import Region, TileGraph, TileOp

VEC, L1, CUBE = "vec_nbuffer", "cube_l1_reuse", "cube_nbuffer"


class Annotation(NamedTuple):
    """What the merges record on one (merged) subgraph; `build_root` copies it to the call."""

    info: dict[str, GroupInfo]
    shared_loads: list[Region]
    # the subgraph's `Signatures` key when a merge pass computed it (None otherwise), so that
    # `build_root` does not hash every subgraph again
    signature: str | None


def auto_vec_factor(size: int, parallel: int) -> int:
    """The auto vec NBuffer factor: the largest n <= ceil(S/C) that keeps >= C subgraphs."""
    if size <= parallel:
        return 1
    n = -(-size // parallel)
    while n > 1 and -(-size // n) < parallel:
        n -= 1
    return n


def _repeat(n: int) -> Iterator[int]:
    while True:
        yield n


def _buckets(st: SubgraphDag, members: list[int]) -> list[list[int]]:
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


def _start(st: SubgraphDag, name: str, members: list[int], group: int, magic: int) -> None:
    key = group_key(magic, group)
    for i in members:
        st.info[i][name] = GroupInfo(group, key, len(members), 1)


def _vec_nbuffer(st: SubgraphDag, s: MergeSettings) -> None:
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


def _l1_reuse(st: SubgraphDag, s: MergeSettings) -> None:
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


def _cube_nbuffer(st: SubgraphDag, s: MergeSettings) -> None:
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
    st = SubgraphDag(graph, subgraphs, signatures)
    _vec_nbuffer(st, settings)
    _l1_reuse(st, settings)
    _cube_nbuffer(st, settings)
    order = st.topological_order() if st.merged_any else list(range(len(subgraphs)))
    out = [st.ops_of(i) for i in order]
    notes = [Annotation(st.info[i], shared_loads(st.ops_of(i)) if st.is_cube(i) else [],
                        st.sigs[i]) for i in order]
    return out, notes
