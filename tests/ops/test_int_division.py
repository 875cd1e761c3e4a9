"""Integer division and remainder by zero raise a named error at the user's line in both
executors, as torch does (issue 13: floor_div gave 0, div garbage). Float division by zero
stays IEEE: inf and nan."""
import pytest
import torch

import pypto

E = pypto.errors
I32 = pypto.DT_INT32

_OPS = {
    "floor_div": (lambda a, b: pypto.floor_div(a, b), lambda a, b: torch.floor_divide(a, b)),
    "div": (lambda a, b: a / b, lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    "fmod": (lambda a, b: pypto.fmod(a, b), torch.fmod),
    "remainder": (lambda a, b: pypto.remainder(a, b), torch.remainder),
}


def _kernel(fn, dtype=I32):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([8, 64], dtype), b: pypto.Tensor([8, 64], dtype),
          out: pypto.Tensor([8, 64], dtype)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = fn(a, b)
    return k


def _operands():
    a = torch.randint(-50, 50, (8, 64), dtype=torch.int32)
    b = torch.randint(1, 7, (8, 64), dtype=torch.int32) * (1 - 2 * (torch.rand(8, 64) < 0.5))
    return a, b.to(torch.int32)


@pytest.mark.parametrize("name", sorted(_OPS))
def test_a_zero_int_divisor_raises_naming_the_op_and_line(name, executor):
    fn, golden = _OPS[name]
    a, b = _operands()
    b[5, 7] = 0
    with pytest.raises(RuntimeError):      # torch refuses too
        golden(a, b)
    with pytest.raises(E.PyptoRuntimeError, match=rf"{name}: integer division by zero \(the "
                                                  rf"divisor holds 0\).*test_int_division\.py"):
        _kernel(fn)(a, b, torch.zeros(8, 64, dtype=torch.int32))


@pytest.mark.parametrize("name", sorted(_OPS))
def test_nonzero_int_divisors_match_torch(name, executor):
    fn, golden = _OPS[name]
    a, b = _operands()
    out = torch.zeros(8, 64, dtype=torch.int32)
    _kernel(fn)(a, b, out)
    assert torch.equal(out, golden(a, b))


def test_scalar_divisors(executor):
    a, b = _operands()
    out = torch.zeros(8, 64, dtype=torch.int32)
    with pytest.raises(E.PyptoValueError, match=r"floor_div: integer division by zero \(the "
                                                r"scalar divisor is 0\).*test_int_division"):
        _kernel(lambda x, y: pypto.floor_div(x, 0))(a, b, out)
    with pytest.raises(E.PyptoValueError, match=r"remainder: integer division by zero"):
        _kernel(lambda x, y: pypto.remainder(x, 0))(a, b, out)
    b[0, 0] = 0                       # a scalar dividend over a tensor divisor
    with pytest.raises(E.PyptoRuntimeError, match=r"floor_div: integer division by zero"):
        _kernel(lambda x, y: pypto.floor_div(7, y))(a, b, out)
    _kernel(lambda x, y: pypto.floor_div(x, -3))(a, b, out)
    assert torch.equal(out, torch.floor_divide(a, -3))


def test_a_run_time_scalar_divisor_of_zero_raises(executor):
    """A SymbolicScalar divisor is known only when the kernel runs."""
    a, b = _operands()
    b[0, 0] = 0
    with pytest.raises(E.PyptoRuntimeError, match=r"floor_div: integer division by zero \(the "
                                                  r"divisor is 0\)"):
        _kernel(lambda x, y: pypto.floor_div(x, y[0, 0]))(a, b, torch.zeros(8, 64,
                                                                           dtype=torch.int32))


def test_float_division_by_zero_stays_ieee(executor):
    a = torch.tensor([1.0, -1.0, 0.0, 2.0] * 128).reshape(8, 64)
    b = torch.tensor([0.0, 0.0, 0.0, 4.0] * 128).reshape(8, 64)
    for fn, golden in [(lambda x, y: x / y, torch.div),
                       (lambda x, y: pypto.floor_div(x, y), torch.floor_divide),
                       (lambda x, y: pypto.fmod(x, y), torch.fmod),
                       (lambda x, y: pypto.remainder(x, y), torch.remainder)]:
        out = torch.zeros(8, 64)
        _kernel(fn, pypto.DT_FP32)(a, b, out)
        torch.testing.assert_close(out, golden(a, b), equal_nan=True)


def test_an_int_negative_power_is_a_named_error(executor):
    """numpy's bare ValueError once escaped from the compute. torch refuses a negative scalar
    exponent (so does pypto.pow while tracing) and truncates 1 / a**-b per element for a
    tensor one; here a negative int exponent is an error either way."""
    a, b = _operands()
    with pytest.raises(RuntimeError):
        torch.pow(a, -1)
    with pytest.raises(E.PyptoRuntimeError, match=r"pow: an integer tensor raised to a negative "
                                                  r"power \(the exponent holds -\d\).*"
                                                  r"test_int_division\.py"):
        _kernel(lambda x, y: pypto.pow(x, y))(a, b, torch.zeros(8, 64, dtype=torch.int32))
    out = torch.zeros(8, 64, dtype=torch.int32)
    _kernel(lambda x, y: pypto.pow(x, y))(a, b.abs(), out)
    assert torch.equal(out, torch.pow(a, b.abs()))
