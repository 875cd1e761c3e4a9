"""Symbolic integer expressions: build, simplify (`core`), evaluate (`evaluate`).

The compiler and runtime handle `Expr` nodes; users see `SymbolicScalar`, PyPTO's class of that
name (see `core`). The runtime evaluates expressions through one code generator, `CodeGen`.
"""
from pypto.symbolic.core import (BRANCH_DECIDER, Bin, Const, ElementRead, Expr, Select, Sym,
                                 SymbolicScalar, SymInt, Un, as_expr, binary, ceildiv, const,
                                 const_diff, element_reads, free_symbols, nodes, polynomial,
                                 reads_elements, select, sym_max, sym_min, symbolic_scalar,
                                 unary, wrap)
from pypto.symbolic.evaluate import (CodeGen, EvalEnv, evaluate, expr_function,
                                     raise_evaluation_error, tuple_code)

__all__ = ["BRANCH_DECIDER", "Bin", "CodeGen", "Const", "ElementRead", "EvalEnv", "Expr",
           "Select", "Sym", "SymInt", "SymbolicScalar", "Un", "as_expr", "binary", "ceildiv",
           "const", "const_diff", "element_reads", "evaluate", "expr_function",
           "free_symbols", "nodes", "polynomial", "raise_evaluation_error", "reads_elements",
           "select", "sym_max", "sym_min", "symbolic_scalar", "tuple_code", "unary", "wrap"]
