"""The inside of one cube tile op: the steps PyPTO puts into a cube subgraph (compiler_runtime
§3.2), recorded as data so that later stages (simulator, dumps) can cost and show them.

A matmul tile op covers one (mL1, nL1) output block and a K range (the whole K, or one kL1 chunk
under split-K). Its `attrs["cube_plan"]` is a `CubePlan`: the block's static sizes and the cube
TileShape; `CubePlan.steps()` unrolls it into `CubeStep`s in program order, each with the steps
it waits for. The numbers come from the op's own sizes, so isomorphic tile ops share a plan.

Structure (with the cube TileShape [mL0, mL1], [kL0, kAL1, kBL1], [nL0, nL1]):
- COPY_IN (GM -> L1) of A[m x kAL1] once per kAL1 chunk of K and of B[kBL1 x n] once per kBL1
  chunk. With kAL1 = K (or kBL1 = K) that operand is loaded once and stays resident in L1;
- per kL0 step of K: L1_TO_L0A of A[mL0 x kL0] for each mL0 row block and L1_TO_L0B of
  B[kL0 x nL0] for each nL0 column block (each is shared by the MMADs that read it);
- per kL0 step and (mL0, nL0) sub-block: A_MUL_B on the first step (it starts the L0C
  accumulator), A_MULACC_B on the later ones (it adds into it);
- one COPY_OUT (L0C -> GM, through the fixpipe) per (mL0, nL0) sub-block.

Count rule. With S = ceil(K/kL0) k steps, P = ceil(m/mL0), Q = ceil(n/nL0):
    COPY_IN    = ceil(K/kAL1) + ceil(K/kBL1)
    L1_TO_L0A  = S*P          L1_TO_L0B = S*Q
    A_MUL_B    = P*Q          A_MULACC_B = (S-1)*P*Q
    COPY_OUT   = P*Q
With mL0 = mL1 and nL0 = nL1 (P = Q = 1) this is PyPTO's observed structure: tile 128x256x256
with kL0 = 64 gives 2 COPY_IN, 4 + 4 L1 -> L0 moves, A_MUL_B + 3 A_MULACC_B, 1 COPY_OUT; K = 8192
with [128,128],[64,256],[256,256] gives 64 COPY_IN, 128 + 128 L1 -> L0 moves and 127 A_MULACC_B
(449 steps). PyPTO's leaf op counts (38 and 1310 for these two) also hold the set_flag/wait_flag
sync ops between pipes, which are not modelled here.

Shapes are logical: A steps are (m, k), B steps (k, n), MMADs (m, k, n), COPY_OUT (m, n), all
clipped to the block (tails are smaller, never padded). `nbytes` is what a step moves; for an
MMAD it is the L0C accumulator tile (4-byte elements) it writes.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

# Pipes (hw_model §4.1): GM -> L1, L1 -> L0A/L0B, the cube unit, L0C -> GM.
MTE2, MTE1, CUBE, FIX = "MTE2", "MTE1", "CUBE", "FIX"
STEP_OPCODES = ("COPY_IN", "L1_TO_L0A", "L1_TO_L0B", "A_MUL_B", "A_MULACC_B", "COPY_OUT")


@dataclass(frozen=True, slots=True)
class CubeStep:
    """One step inside a cube tile op. `deps` are indices of earlier steps of the same plan."""

    opcode: str
    pipe: str
    operand: str                 # "A", "B" (inputs) or "C" (the L0C accumulator)
    shape: tuple[int, ...]
    nbytes: int
    deps: tuple[int, ...] = ()

    @property
    def macs(self) -> int:
        """Multiply-accumulates of an MMAD step (0 for data moves)."""
        if self.pipe != CUBE:
            return 0
        m, k, n = self.shape
        return m * k * n


@dataclass(frozen=True, slots=True)
class CubePlan:
    """The static description of one cube tile op: block m x n over a K range of k, with the
    cube TileShape's L0 sizes and the L1 chunk of each operand, and element sizes in bytes."""

    m: int
    n: int
    k: int
    m_l0: int
    n_l0: int
    k_l0: int
    k_a_l1: int
    k_b_l1: int
    a_bytes: float
    b_bytes: float
    out_bytes: float

    @property
    def k_steps(self) -> int:
        return -(-self.k // self.k_l0)

    @property
    def k_chunks(self) -> int:
        """L1 chunks of K: the larger of the two operands' copy-in counts."""
        return max(-(-self.k // self.k_a_l1), -(-self.k // self.k_b_l1))

    def counts(self) -> dict[str, int]:
        """Steps per opcode, by the count rule of the module docstring (no unrolling)."""
        s, p, q = self.k_steps, -(-self.m // self.m_l0), -(-self.n // self.n_l0)
        return {"COPY_IN": -(-self.k // self.k_a_l1) + -(-self.k // self.k_b_l1),
                "L1_TO_L0A": s * p, "L1_TO_L0B": s * q, "A_MUL_B": p * q,
                "A_MULACC_B": (s - 1) * p * q, "COPY_OUT": p * q}

    def leaf_op_count(self) -> int:
        """Number of steps (leaf-level tile ops without sync ops) of this cube tile op."""
        return sum(self.counts().values())

    def steps(self) -> tuple[CubeStep, ...]:
        """The steps in program order, unrolled on each call (nothing on the compile or run
        path asks for them: they are for inspection)."""
        return _unroll(self)


def _spans(total: int, size: int) -> list[tuple[int, int]]:
    return [(o, min(size, total - o)) for o in range(0, total, size)]


def _unroll(plan: CubePlan) -> tuple[CubeStep, ...]:
    steps: list[CubeStep] = []

    def add(step: CubeStep) -> int:
        steps.append(step)
        return len(steps) - 1

    m_blocks, n_blocks = _spans(plan.m, plan.m_l0), _spans(plan.n, plan.n_l0)
    copy_a = copy_b = -1
    acc: dict[tuple[int, int], int] = {}      # (mi, ni) -> last MMAD step
    for k0, kk in _spans(plan.k, plan.k_l0):
        # kL0 divides kAL1 and kBL1, so a k step never straddles an L1 chunk.
        if k0 % plan.k_a_l1 == 0:
            ka = min(plan.k_a_l1, plan.k - k0)
            copy_a = add(CubeStep("COPY_IN", MTE2, "A", (plan.m, ka),
                                  int(plan.m * ka * plan.a_bytes)))
        if k0 % plan.k_b_l1 == 0:
            kb = min(plan.k_b_l1, plan.k - k0)
            copy_b = add(CubeStep("COPY_IN", MTE2, "B", (kb, plan.n),
                                  int(kb * plan.n * plan.b_bytes)))
        l0a = [add(CubeStep("L1_TO_L0A", MTE1, "A", (mm, kk), int(mm * kk * plan.a_bytes),
                            (copy_a,))) for _, mm in m_blocks]
        l0b = [add(CubeStep("L1_TO_L0B", MTE1, "B", (kk, nn), int(kk * nn * plan.b_bytes),
                            (copy_b,))) for _, nn in n_blocks]
        for mi, (_, mm) in enumerate(m_blocks):
            for ni, (_, nn) in enumerate(n_blocks):
                prev = acc.get((mi, ni))
                code = "A_MUL_B" if prev is None else "A_MULACC_B"
                deps = (l0a[mi], l0b[ni]) + (() if prev is None else (prev,))
                acc[(mi, ni)] = add(CubeStep(code, CUBE, "C", (mm, kk, nn), mm * nn * 4, deps))
    for mi, (_, mm) in enumerate(m_blocks):
        for ni, (_, nn) in enumerate(n_blocks):
            add(CubeStep("COPY_OUT", FIX, "C", (mm, nn), int(mm * nn * plan.out_bytes),
                         (acc[(mi, ni)],)))
    return tuple(steps)


def step_counts(steps: tuple[CubeStep, ...]) -> dict[str, int]:
    """Steps per opcode of an unrolled plan (the same numbers as `CubePlan.counts`)."""
    c = Counter(s.opcode for s in steps)
    return {code: c.get(code, 0) for code in STEP_OPCODES}


def plan_of(op) -> CubePlan | None:
    """The cube plan of a tile op (None for ops that are not cube tile ops)."""
    return op.attrs.get("cube_plan")
