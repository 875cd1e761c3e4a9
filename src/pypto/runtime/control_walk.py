"""The walk of a program's control tree at run time, shared by both executors.

Loop bounds and branch conditions are evaluated when reached, with the real input shapes and
values; each loop index is bound in the call's symbols while its body runs; every root
function instance (a `Block`) is checked (`ExecutionPlan.checks`: extents that must hold
before and after it; with runtime_debug_mode=4 also `runtime.gm_bounds`, the call's
`CallState.bounds`) around the executor's own way of running it. The executors differ only
in what a block is, so they pass that in: the walk is a function of a `CallState` and two
callbacks, not a base class.
"""
from __future__ import annotations

from typing import Callable

from pypto.errors import PyptoRuntimeError
from pypto.ir.program import Block, If, Loop, Seq
from pypto.runtime.call_state import CallState


class ControlWalk:
    """Runs `run_block` for every root-function instance of `state`'s program, in program
    order; `before_loop(loop)` is called as each loop is reached (the tile executor submits
    the work so far before a loop marked `submit_before_loop`)."""

    def __init__(self, state: CallState, run_block: Callable[[Block], None],
                 before_loop: Callable[[Loop], None] | None = None):
        self.state, self.run_block = state, run_block
        self.before_loop = before_loop

    def run(self) -> None:
        self.run_loop(self.state.program.root)

    def run_loop(self, loop: Loop) -> None:
        if self.before_loop is not None:
            self.before_loop(loop)
        ev, values = self.state.ev, self.state.env.values
        for variant in loop.variants:
            start, stop, step = ev(variant.start), ev(variant.stop), ev(variant.step)
            if step == 0:
                raise PyptoRuntimeError(f"loop '{loop.name}' has step 0 at run time", loop.loc)
            name = variant.index.name
            # (runtime_debug_mode=4: an unrolled iteration whose last copies pass the end)
            tails = self.state.bounds.tails if self.state.bounds is not None and \
                variant.factor > 1 else None
            for i in range(start, stop, step):
                values[name] = i
                if tails is not None:
                    tails.append(i + step - step // variant.factor >= stop)
                self.run_seq(self.select(variant.body))
                if tails is not None:
                    tails.pop()
            values.pop(name, None)

    def select(self, node: If | Seq) -> Seq:
        """The branch the conditions take now."""
        while isinstance(node, If):
            node = node.then if self.state.ev(node.cond) else node.else_
        return node

    def run_seq(self, seq: Seq) -> None:
        for item in seq.items:
            if isinstance(item, Block):
                self.block(item)
            else:
                self.run_loop(item)

    def block(self, block: Block) -> None:
        env = self.state.env
        checks = self.state.plan.checks(block)
        checks.before(env.values, env.read_element)
        bounds = self.state.bounds
        if bounds is not None:
            bounds.check(block, env.values, env.read_element, after=False)
        self.run_block(block)
        checks.after(env.values, env.read_element)
        if bounds is not None:
            bounds.check(block, env.values, env.read_element, after=True)
