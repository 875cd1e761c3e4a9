"""Tensor's op methods are defined where go-to-definition finds them: the generated
`frontend/tensor_methods.py` is current with the op table (`ops/tensor_api.METHODS`), every
method it defines is bound to its op function, and a method is source code in that file, not an
attribute set at import."""
import ast
import inspect

import torch

import pypto
from pypto.frontend import tensor_methods
from pypto.frontend.tensor import Tensor
from pypto.frontend.tensor_methods import TensorMethods
from pypto.ops import tensor_api


def test_the_generated_file_is_current():
    on_disk = tensor_api.TARGET.read_text(encoding="utf-8")
    assert on_disk == tensor_api.generate(), (
        "frontend/tensor_methods.py is stale: run "
        "python -c \"import pypto.ops.tensor_api as t; t.main()\"")


def test_every_method_is_defined_in_the_file_and_bound():
    tree = ast.parse(tensor_api.TARGET.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorMethods"]
    defined = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert defined == set(tensor_api.METHODS)
    assert set(tensor_methods._OPS) == defined
    for name in ("exp", "sum", "__add__", "__getitem__", "where", "set_cache_policy"):
        method = inspect.unwrap(getattr(Tensor, name))
        assert inspect.getsourcefile(method) == str(tensor_api.TARGET), name
        assert name in vars(TensorMethods) and name not in vars(Tensor)


def test_tensors_stay_hashable_and_the_methods_compute():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        assert len({x, y}) == 2                      # hashable by identity
        y[:] = (x.exp() + 1.0) * 2.0 - x.abs()

    x, y = torch.rand(16, 32), torch.zeros(16, 32)
    k(x, y)
    torch.testing.assert_close(y, (torch.exp(x) + 1.0) * 2.0 - x.abs())
