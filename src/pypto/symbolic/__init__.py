"""Symbolic integer expressions: the nodes (`expr_nodes`), the polynomial normal form sums and
products simplify through (`polynomial`), the simplifying constructors and the user's wrapper
(`core`), evaluation (`evaluate`).

The compiler and runtime handle `Expr` nodes; users see `SymbolicScalar`, PyPTO's class of that
name (see `core`). The runtime evaluates expressions through one code generator, `CodeGen`.
"""
from pypto.symbolic.core import (BRANCH_DECIDER, SymbolicScalar, SymInt, as_expr, binary,
                                 ceildiv, const, select, sym_max, sym_min, symbolic_scalar,
                                 unary, wrap)
from pypto.symbolic.evaluate import (CodeGen, EvalEnv, evaluate, expr_function,
                                     raise_evaluation_error, tuple_code)
from pypto.symbolic.expr_nodes import (Bin, Const, ElementRead, Expr, Select, Sym, Un,
                                       element_reads, free_symbols, nodes, reads_elements)
from pypto.symbolic.polynomial import const_diff, polynomial

__all__ = ["BRANCH_DECIDER", "Bin", "CodeGen", "Const", "ElementRead", "EvalEnv", "Expr",
           "Select", "Sym", "SymInt", "SymbolicScalar", "Un", "as_expr", "binary", "ceildiv",
           "const", "const_diff", "element_reads", "evaluate", "expr_function",
           "free_symbols", "nodes", "polynomial", "raise_evaluation_error", "reads_elements",
           "select", "sym_max", "sym_min", "symbolic_scalar", "tuple_code", "unary", "wrap"]
