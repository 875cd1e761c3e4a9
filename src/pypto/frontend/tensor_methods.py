"""Tensor's op methods and operators, generated from `ops/tensor_api.py` METHODS by
`python -c "import pypto.ops.tensor_api as t; t.main()"`; do not edit by hand
(tests/frontend/test_tensor_methods.py fails when it is not current).

Each method forwards to the op function `ops` binds at import (`bind`): `frontend` does not
import `ops`, yet every method is defined here, where a reader and go-to-definition find it.
"""
from __future__ import annotations

from typing import Any, Callable

_OPS: dict[str, Callable[..., Any]] = {}


def bind(table: dict[str, Callable[..., Any]]) -> None:
    """The op function of each method (`ops/tensor_api.py`)."""
    _OPS.update(table)


class TensorMethods:
    """The op methods and operators of `frontend.tensor.Tensor`."""

    __slots__ = ()
    __hash__ = object.__hash__   # (defining __eq__ would otherwise unset it)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.add(input: 'Any', other: 'Any', *, alpha: 'int | float' = 1) -> 'Tensor' on
        this tensor (`pypto.ops.elementwise.add`)"""
        return _OPS['add'](self, *args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sub(input: 'Any', other: 'Any', *, alpha: 'int | float' = 1) -> 'Tensor' on
        this tensor (`pypto.ops.elementwise.sub`)"""
        return _OPS['sub'](self, *args, **kwargs)

    def mul(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.mul(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.mul`)"""
        return _OPS['mul'](self, *args, **kwargs)

    def div(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.div(input: 'Any', other: 'Any', precision_type: 'Any' = None) -> 'Tensor' on
        this tensor (`pypto.ops.elementwise.div`)"""
        return _OPS['div'](self, *args, **kwargs)

    def fmod(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.fmod(input: 'Any', other: 'Any', precision_type: 'Any' = None) -> 'Tensor' on
        this tensor (`pypto.ops.elementwise.fmod`)"""
        return _OPS['fmod'](self, *args, **kwargs)

    def remainder(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.remainder(input: 'Any', other: 'Any', precision_type: 'Any' = None) ->
        'Tensor' on this tensor (`pypto.ops.elementwise.remainder`)"""
        return _OPS['remainder'](self, *args, **kwargs)

    def hypot(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.hypot(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.hypot`)"""
        return _OPS['hypot'](self, *args, **kwargs)

    def prelu(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.prelu(input: 'Any', weight: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.prelu`)"""
        return _OPS['prelu'](self, *args, **kwargs)

    def greater(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.greater(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.gt`)"""
        return _OPS['greater'](self, *args, **kwargs)

    def maximum(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.maximum(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.maximum`)"""
        return _OPS['maximum'](self, *args, **kwargs)

    def minimum(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.minimum(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.minimum`)"""
        return _OPS['minimum'](self, *args, **kwargs)

    def matmul(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.matmul(input: 'Any', mat2: 'Any', out_dtype: 'DataType | None' = None, *,
        a_trans: 'bool' = False, b_trans: 'bool' = False, c_matrix_nz: 'bool' = False,
        extend_params: 'dict | None' = None) -> 'Tensor' on this tensor
        (`pypto.ops.matmul.matmul`)"""
        return _OPS['matmul'](self, *args, **kwargs)

    def reshape(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.reshape(input: 'Any', shape: 'Any', *, valid_shape: 'Any' = None, inplace:
        'bool' = False) -> 'Tensor' on this tensor (`pypto.ops.reshaping.reshape`)"""
        return _OPS['reshape'](self, *args, **kwargs)

    def unsqueeze(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.unsqueeze(input: 'Any', dim: 'int') -> 'Tensor' on this tensor
        (`pypto.ops.reshaping.unsqueeze`)"""
        return _OPS['unsqueeze'](self, *args, **kwargs)

    def squeeze(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.squeeze(input: 'Any', dim: 'int | None' = None) -> 'Tensor' on this tensor
        (`pypto.ops.reshaping.squeeze`)"""
        return _OPS['squeeze'](self, *args, **kwargs)

    def view(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.view(input: 'Any', shape: 'Any' = None, offsets: 'Any' = None, *, valid_shape:
        'Any' = None, dtype: 'DataType | None' = None) -> 'Tensor' on this tensor
        (`pypto.ops.shape.view`)"""
        return _OPS['view'](self, *args, **kwargs)

    def clone(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.clone(input: 'Any') -> 'Tensor' on this tensor (`pypto.ops.shape.clone`)"""
        return _OPS['clone'](self, *args, **kwargs)

    def sin(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sin(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.sin`)"""
        return _OPS['sin'](self, *args, **kwargs)

    def cos(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.cos(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.cos`)"""
        return _OPS['cos'](self, *args, **kwargs)

    def sinh(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sinh(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.sinh`)"""
        return _OPS['sinh'](self, *args, **kwargs)

    def cosh(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.cosh(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.cosh`)"""
        return _OPS['cosh'](self, *args, **kwargs)

    def asinh(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.asinh(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.asinh`)"""
        return _OPS['asinh'](self, *args, **kwargs)

    def acosh(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.acosh(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.acosh`)"""
        return _OPS['acosh'](self, *args, **kwargs)

    def sigmoid(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sigmoid(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.sigmoid`)"""
        return _OPS['sigmoid'](self, *args, **kwargs)

    def softmax(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.softmax(input: 'Any', dim: 'int' = -1) -> 'Tensor' on this tensor
        (`pypto.ops.reduce.softmax`)"""
        return _OPS['softmax'](self, *args, **kwargs)

    def lrelu(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.lrelu(input: 'Any', negative_slope: 'float' = 0.01) -> 'Tensor' on this tensor
        (`pypto.ops.unary.lrelu`)"""
        return _OPS['lrelu'](self, *args, **kwargs)

    def exp(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.exp(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.exp`)"""
        return _OPS['exp'](self, *args, **kwargs)

    def exp2(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.exp2(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.exp2`)"""
        return _OPS['exp2'](self, *args, **kwargs)

    def expm1(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.expm1(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.expm1`)"""
        return _OPS['expm1'](self, *args, **kwargs)

    def erf(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.erf(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.erf`)"""
        return _OPS['erf'](self, *args, **kwargs)

    def erfc(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.erfc(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.erfc`)"""
        return _OPS['erfc'](self, *args, **kwargs)

    def tanh(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.tanh(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.tanh`)"""
        return _OPS['tanh'](self, *args, **kwargs)

    def sign(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sign(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.sign`)"""
        return _OPS['sign'](self, *args, **kwargs)

    def signbit(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.signbit(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.signbit`)"""
        return _OPS['signbit'](self, *args, **kwargs)

    def log(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.log(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.log`)"""
        return _OPS['log'](self, *args, **kwargs)

    def log1p(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.log1p(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.log1p`)"""
        return _OPS['log1p'](self, *args, **kwargs)

    def log2(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.log2(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.log2`)"""
        return _OPS['log2'](self, *args, **kwargs)

    def log10(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.log10(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.log10`)"""
        return _OPS['log10'](self, *args, **kwargs)

    def logical_not(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.logical_not(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this
        tensor (`pypto.ops.unary.logical_not`)"""
        return _OPS['logical_not'](self, *args, **kwargs)

    def amax(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.amax(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.amax`)"""
        return _OPS['amax'](self, *args, **kwargs)

    def amin(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.amin(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.amin`)"""
        return _OPS['amin'](self, *args, **kwargs)

    def argmax(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.argmax(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.argmax`)"""
        return _OPS['argmax'](self, *args, **kwargs)

    def argmin(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.argmin(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.argmin`)"""
        return _OPS['argmin'](self, *args, **kwargs)

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sum(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.sum`)"""
        return _OPS['sum'](self, *args, **kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.mean(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.mean`)"""
        return _OPS['mean'](self, *args, **kwargs)

    def prod(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.prod(input: 'Any', dim: 'int' = -1, keepdim: 'bool' = False) -> 'Tensor' on
        this tensor (`pypto.ops.reduce.prod`)"""
        return _OPS['prod'](self, *args, **kwargs)

    def var(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.var(input: 'Any', dim: 'Any' = None, *, correction: 'int' = 1, keepdim: 'bool'
        = False) -> 'Tensor' on this tensor (`pypto.ops.reduce.var`)"""
        return _OPS['var'](self, *args, **kwargs)

    def round(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.round(input: 'Any', decimals: 'int' = 0) -> 'Tensor' on this tensor
        (`pypto.ops.unary.round`)"""
        return _OPS['round'](self, *args, **kwargs)

    def rsqrt(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.rsqrt(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.rsqrt`)"""
        return _OPS['rsqrt'](self, *args, **kwargs)

    def sqrt(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.sqrt(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.sqrt`)"""
        return _OPS['sqrt'](self, *args, **kwargs)

    def ceil(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.ceil(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.ceil`)"""
        return _OPS['ceil'](self, *args, **kwargs)

    def floor(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.floor(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.floor`)"""
        return _OPS['floor'](self, *args, **kwargs)

    def trunc(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.trunc(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.trunc`)"""
        return _OPS['trunc'](self, *args, **kwargs)

    def reciprocal(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.reciprocal(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this
        tensor (`pypto.ops.unary.reciprocal`)"""
        return _OPS['reciprocal'](self, *args, **kwargs)

    def relu(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.relu(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.relu`)"""
        return _OPS['relu'](self, *args, **kwargs)

    def abs(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.abs(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.abs`)"""
        return _OPS['abs'](self, *args, **kwargs)

    def neg(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.neg(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.neg`)"""
        return _OPS['neg'](self, *args, **kwargs)

    def permute(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.permute(input: 'Any', perm: 'Sequence[int]') -> 'Tensor' on this tensor
        (`pypto.ops.shape.permute`)"""
        return _OPS['permute'](self, *args, **kwargs)

    def transpose(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.transpose(input: 'Any', dim0: 'int', dim1: 'int | None' = None) -> 'Tensor' on
        this tensor (`pypto.ops.shape.transpose`)"""
        return _OPS['transpose'](self, *args, **kwargs)

    def cumsum(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.cumsum(input: 'Any', dim: 'int') -> 'Tensor' on this tensor
        (`pypto.ops.reduce.cumsum`)"""
        return _OPS['cumsum'](self, *args, **kwargs)

    def cumprod(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.cumprod(input: 'Any', dim: 'int') -> 'Tensor' on this tensor
        (`pypto.ops.reduce.cumprod`)"""
        return _OPS['cumprod'](self, *args, **kwargs)

    def triu(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.triu(x: 'Any', diagonal: 'int | SymbolicScalar' = 0) -> 'Tensor' on this
        tensor (`pypto.ops.ordering.triu`)"""
        return _OPS['triu'](self, *args, **kwargs)

    def tril(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.tril(x: 'Any', diagonal: 'int | SymbolicScalar' = 0) -> 'Tensor' on this
        tensor (`pypto.ops.ordering.tril`)"""
        return _OPS['tril'](self, *args, **kwargs)

    def expand_clone(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.expand_clone(input: 'Any', shape: 'Any', *, valid_shape: 'Any' = None) ->
        'Tensor' on this tensor (`pypto.ops.shape.expand_clone`)"""
        return _OPS['expand_clone'](self, *args, **kwargs)

    def pad(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.pad(input: 'Any', pad: 'Sequence[int]', mode: 'str' = 'constant', value: 'Any'
        = 0) -> 'Tensor' on this tensor (`pypto.ops.shape.pad`)"""
        return _OPS['pad'](self, *args, **kwargs)

    def fillpad(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.fillpad(input: 'Any', mode: 'str' = 'constant', value: 'Any' = 0) -> 'Tensor'
        on this tensor (`pypto.ops.shape.fillpad`)"""
        return _OPS['fillpad'](self, *args, **kwargs)

    def gather(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.gather(input: 'Any', dim: 'int', index: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.index.gather`)"""
        return _OPS['gather'](self, *args, **kwargs)

    def scatter(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.scatter(input: 'Any', dim: 'int', index: 'Any', src: 'Any', *, reduce: 'str |
        None' = None) -> 'Tensor' on this tensor (`pypto.ops.index.scatter`)"""
        return _OPS['scatter'](self, *args, **kwargs)

    def scatter_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.scatter_(input: 'Any', dim: 'int', index: 'Any', src: 'Any', *, reduce: 'str |
        None' = None) -> 'Tensor' on this tensor (`pypto.ops.index.scatter_`)"""
        return _OPS['scatter_'](self, *args, **kwargs)

    def scatter_update(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.scatter_update(input: 'Any', dim: 'int', index: 'Any', src: 'Any') -> 'Tensor'
        on this tensor (`pypto.ops.index.scatter_update`)"""
        return _OPS['scatter_update'](self, *args, **kwargs)

    def index_add(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.index_add(input: 'Any', dim: 'int', index: 'Any', source: 'Any', *, alpha:
        'int | float' = 1) -> 'Tensor' on this tensor (`pypto.ops.index.index_add`)"""
        return _OPS['index_add'](self, *args, **kwargs)

    def index_add_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.index_add_(input: 'Any', dim: 'int', index: 'Any', source: 'Any', *, alpha:
        'int | float' = 1) -> 'Tensor' on this tensor (`pypto.ops.index.index_add_`)"""
        return _OPS['index_add_'](self, *args, **kwargs)

    def topk(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.topk(input: 'Any', k: 'int', dim: 'int | None' = None, largest: 'bool' = True,
        algo: 'Any' = None) -> 'tuple[Tensor, Tensor]' on this tensor
        (`pypto.ops.ordering.topk`)"""
        return _OPS['topk'](self, *args, **kwargs)

    def cast(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.cast(input: 'Any', dtype: 'DataType', mode: 'CastMode' = <CastMode.CAST_NONE:
        0>, satmode: 'SaturationMode' = <SaturationMode.OFF: 1>) -> 'Tensor' on this tensor
        (`pypto.ops.cast.cast`)"""
        return _OPS['cast'](self, *args, **kwargs)

    def clip(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.clip(input: 'Any', min: 'Any' = None, max: 'Any' = None) -> 'Tensor' on this
        tensor (`pypto.ops.selection.clip`)"""
        return _OPS['clip'](self, *args, **kwargs)

    def pow(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.pow(input: 'Any', other: 'Any', precision_type: 'Any' = None) -> 'Tensor' on
        this tensor (`pypto.ops.elementwise.pow`)"""
        return _OPS['pow'](self, *args, **kwargs)

    def isnan(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.isnan(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this tensor
        (`pypto.ops.unary.isnan`)"""
        return _OPS['isnan'](self, *args, **kwargs)

    def isfinite(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.isfinite(input: 'Any', precision_type: 'Any' = None) -> 'Tensor' on this
        tensor (`pypto.ops.unary.isfinite`)"""
        return _OPS['isfinite'](self, *args, **kwargs)

    def gcd(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.gcd(input: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.gcd`)"""
        return _OPS['gcd'](self, *args, **kwargs)

    def argsort(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.argsort(input: 'Any', dim: 'int | None' = None, descending: 'bool' = False) ->
        'Tensor' on this tensor (`pypto.ops.ordering.argsort`)"""
        return _OPS['argsort'](self, *args, **kwargs)

    def index_select(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.index_select(input: 'Any', dim: 'int', index: 'Any') -> 'Tensor' on this
        tensor (`pypto.ops.index.index_select`)"""
        return _OPS['index_select'](self, *args, **kwargs)

    def triu_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.triu_(x: 'Any', diagonal: 'int | SymbolicScalar' = 0) -> 'Tensor' on this
        tensor (`pypto.ops.ordering.triu_`)"""
        return _OPS['triu_'](self, *args, **kwargs)

    def tril_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.tril_(x: 'Any', diagonal: 'int | SymbolicScalar' = 0) -> 'Tensor' on this
        tensor (`pypto.ops.ordering.tril_`)"""
        return _OPS['tril_'](self, *args, **kwargs)

    def gathermask(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.gathermask(x: 'Any', pattern_mode: 'int') -> 'Tensor' on this tensor
        (`pypto.ops.ordering.gathermask`)"""
        return _OPS['gathermask'](self, *args, **kwargs)

    def index_put_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.index_put_(input: 'Any', indices: 'Any', values: 'Any', accumulate: 'bool' =
        False) -> 'None' on this tensor (`pypto.ops.index.index_put_`)"""
        return _OPS['index_put_'](self, *args, **kwargs)

    def axpy_(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.axpy_(y: 'Any', x: 'Any', alpha: 'int | float' = 1.0) -> 'Tensor' on this
        tensor (`pypto.ops.elementwise.axpy_`)"""
        return _OPS['axpy_'](self, *args, **kwargs)

    def ceil_div(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.ceil_div(self: 'Any', other: 'Any') -> 'Tensor' on this tensor
        (`pypto.ops.elementwise.ceil_div`)"""
        return _OPS['ceil_div'](self, *args, **kwargs)

    def quant_mx(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.quant_mx(input: 'Any', quant_dtype: 'DataType' = DataType.DT_FP8E4M3, mode:
        'DequantScaleRoundingMode' = <DequantScaleRoundingMode.ROUND_DOWN: 1>, axis: 'int' =
        -1, performance_mode: 'bool' = True) -> 'tuple[Tensor, Tensor]' on this tensor
        (`pypto.ops.quant.quant_mx`)"""
        return _OPS['quant_mx'](self, *args, **kwargs)

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        """pypto.copy(input: 'Any', name: 'str' = '') -> 'Tensor' on this tensor
        (`pypto.ops.shape.copy`)"""
        return _OPS['copy'](self, *args, **kwargs)

    def __add__(self, *args: Any, **kwargs: Any) -> Any:
        """self + other: pypto.add"""
        return _OPS['__add__'](self, *args, **kwargs)

    def __radd__(self, *args: Any, **kwargs: Any) -> Any:
        """other + self: pypto.add"""
        return _OPS['__radd__'](self, *args, **kwargs)

    def __sub__(self, *args: Any, **kwargs: Any) -> Any:
        """self - other: pypto.sub"""
        return _OPS['__sub__'](self, *args, **kwargs)

    def __rsub__(self, *args: Any, **kwargs: Any) -> Any:
        """other - self: pypto.sub"""
        return _OPS['__rsub__'](self, *args, **kwargs)

    def __mul__(self, *args: Any, **kwargs: Any) -> Any:
        """self * other: pypto.mul"""
        return _OPS['__mul__'](self, *args, **kwargs)

    def __rmul__(self, *args: Any, **kwargs: Any) -> Any:
        """other * self: pypto.mul"""
        return _OPS['__rmul__'](self, *args, **kwargs)

    def __truediv__(self, *args: Any, **kwargs: Any) -> Any:
        """self / other: pypto.div"""
        return _OPS['__truediv__'](self, *args, **kwargs)

    def __rtruediv__(self, *args: Any, **kwargs: Any) -> Any:
        """other / self: pypto.div"""
        return _OPS['__rtruediv__'](self, *args, **kwargs)

    def __floordiv__(self, *args: Any, **kwargs: Any) -> Any:
        """self // other (flooring)"""
        return _OPS['__floordiv__'](self, *args, **kwargs)

    def __rfloordiv__(self, *args: Any, **kwargs: Any) -> Any:
        """other // self (flooring)"""
        return _OPS['__rfloordiv__'](self, *args, **kwargs)

    def __mod__(self, *args: Any, **kwargs: Any) -> Any:
        """self % other: pypto.remainder"""
        return _OPS['__mod__'](self, *args, **kwargs)

    def __rmod__(self, *args: Any, **kwargs: Any) -> Any:
        """other % self: pypto.remainder"""
        return _OPS['__rmod__'](self, *args, **kwargs)

    def __pow__(self, *args: Any, **kwargs: Any) -> Any:
        """self ** other: pypto.pow"""
        return _OPS['__pow__'](self, *args, **kwargs)

    def __rpow__(self, *args: Any, **kwargs: Any) -> Any:
        """other ** self: pypto.pow"""
        return _OPS['__rpow__'](self, *args, **kwargs)

    def __neg__(self, *args: Any, **kwargs: Any) -> Any:
        """-self: pypto.neg"""
        return _OPS['__neg__'](self, *args, **kwargs)

    def __pos__(self, *args: Any, **kwargs: Any) -> Any:
        """+self: the tensor itself"""
        return _OPS['__pos__'](self, *args, **kwargs)

    def __lt__(self, *args: Any, **kwargs: Any) -> Any:
        """self < other: pypto.lt"""
        return _OPS['__lt__'](self, *args, **kwargs)

    def __le__(self, *args: Any, **kwargs: Any) -> Any:
        """self <= other: pypto.le"""
        return _OPS['__le__'](self, *args, **kwargs)

    def __gt__(self, *args: Any, **kwargs: Any) -> Any:
        """self > other: pypto.gt"""
        return _OPS['__gt__'](self, *args, **kwargs)

    def __ge__(self, *args: Any, **kwargs: Any) -> Any:
        """self >= other: pypto.ge"""
        return _OPS['__ge__'](self, *args, **kwargs)

    def __eq__(self, *args: Any, **kwargs: Any) -> Any:
        """self == other: pypto.eq (elementwise)"""
        return _OPS['__eq__'](self, *args, **kwargs)

    def __ne__(self, *args: Any, **kwargs: Any) -> Any:
        """self != other: pypto.ne (elementwise)"""
        return _OPS['__ne__'](self, *args, **kwargs)

    def __matmul__(self, *args: Any, **kwargs: Any) -> Any:
        """`a @ b`: the output dtype is the rhs dtype for FP16/BF16/FP32, INT32 for INT8."""
        return _OPS['__matmul__'](self, *args, **kwargs)

    def __getitem__(self, *args: Any, **kwargs: Any) -> Any:
        """self[index]: a view, or an element as a scalar"""
        return _OPS['__getitem__'](self, *args, **kwargs)

    def __setitem__(self, *args: Any, **kwargs: Any) -> Any:
        """self[index] = value: an assemble into the view"""
        return _OPS['__setitem__'](self, *args, **kwargs)

    def where(self, *args: Any, **kwargs: Any) -> Any:
        """where(condition, other): self where condition, else other (torch's order)"""
        return _OPS['where'](self, *args, **kwargs)

    def move(self, *args: Any, **kwargs: Any) -> Any:
        """move(other): other into self"""
        return _OPS['move'](self, *args, **kwargs)

    def assemble(self, *args: Any, **kwargs: Any) -> Any:
        """assemble(src, offsets): src into self at offsets"""
        return _OPS['assemble'](self, *args, **kwargs)

    def fill_(self, *args: Any, **kwargs: Any) -> Any:
        """Fill the tensor with `value` in place."""
        return _OPS['fill_'](self, *args, **kwargs)

    def set_cache_policy(self, *args: Any, **kwargs: Any) -> Any:
        """Record a cache-policy hint for this tensor's buffer (read by the simulator)."""
        return _OPS['set_cache_policy'](self, *args, **kwargs)

    def get_cache_policy(self, *args: Any, **kwargs: Any) -> Any:
        """Whether a cache-policy hint is set for this tensor's buffer."""
        return _OPS['get_cache_policy'](self, *args, **kwargs)
