"""The GM loads of a subgraph's matmuls: what cube L1 reuse shares and cube NBuffer bounds.

Its own module because it is a fact about a list of tile ops, not about merging: the merges ask
it which loads two subgraphs have in common and how many bytes a merge would load, and the
result (`shared_loads`) goes on to the cost model, which charges each shared load once.

A load is a matmul A/B input region not produced inside the subgraph, identified by
(value, offsets, shape, dims). After the merges, every subgraph with matmul tile ops lists in
`Annotation.shared_loads` the loads (one `Region` per distinct key) that more than one of its
matmul tile ops reads: PyPTO's CSE of identical loads inside a subgraph. `copyin_bytes` gives a
subgraph's deduplicated load bytes.
"""
from __future__ import annotations

from pypto.passes.kinds import COPY_OUT, WHOLE
from pypto.passes.tile_graph import Region, TileOp


def is_matmul(op: TileOp) -> bool:
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
        if is_matmul(op):
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
        if is_matmul(op):
            for r in op.inputs[:2]:
                if r.value.id not in made:
                    seen.setdefault(_load_key(r), [r, 0])[1] += 1
    return [r for r, n in seen.values() if n > 1]
