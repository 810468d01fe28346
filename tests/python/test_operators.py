"""Tensor's operators against PyTorch's: values and result dtypes (type promotion with Python
numbers as weak operands), reflected and in-place forms, comparisons with NaN, and the
conversions of one-element tensors."""

import operator

import numpy as np
import pytest
import torch

import backplane as bp

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]
ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv]
COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
# Backplane has no int16: int8 with uint8 promotes to int32 where PyTorch gives int16.
NO_INT16 = {("int8", "uint8"), ("uint8", "int8")}


def pair(values, dtype):
    array = np.array(values, dtype=np.float64)
    return (
        torch.from_numpy(array).to(getattr(torch, dtype)),
        bp.tensor(array).to(getattr(bp, dtype)),
    )


def check_same(expected, got, exact=False):
    assert repr(got.dtype) == str(expected.dtype).replace("torch.", "backplane.")
    assert tuple(got.shape) == tuple(expected.shape)
    want = expected.double().numpy()
    have = got.to(bp.float64).numpy()
    if exact:
        np.testing.assert_array_equal(have, want)
    else:
        # PyTorch divides a number by a half-width tensor through a rounded reciprocal.
        np.testing.assert_allclose(have, want, rtol=1e-2, equal_nan=True)


def run_both(op, torch_args, bp_args):
    try:
        expected = op(*torch_args)
    except (RuntimeError, TypeError) as error:
        with pytest.raises((RuntimeError, TypeError)):
            op(*bp_args)
        return None, error
    return expected, op(*bp_args)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number", [2, 2.5, True, -3])
@pytest.mark.parametrize("op", ARITHMETIC + COMPARISONS)
def test_tensor_and_number(dtype, number, op):
    t, x = pair([1, 0, 3, 2], dtype)
    for reflected in (False, True):
        args = ((number, t), (number, x)) if reflected else ((t, number), (x, number))
        expected, got = run_both(op, *args)
        if expected is not None:
            check_same(expected, got, exact=op in COMPARISONS)


@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize("right", DTYPES)
def test_two_tensors(left, right):
    # NaN only where the dtype holds it: converting NaN to an integer is undefined.
    last = float("nan") if left.startswith(("float", "bfloat")) else 2
    t, x = pair([[1, 0, 3, last]], left)
    u, y = pair([[1], [2], [0]], right)
    for op in ARITHMETIC + COMPARISONS:
        expected, got = run_both(op, (t, u), (x, y))
        if expected is None:
            continue
        if (left, right) in NO_INT16 and expected.dtype == torch.int16:
            assert got.dtype == bp.int32
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
        else:
            check_same(expected, got, exact=op in COMPARISONS)


def test_comparisons_with_nan_are_exact():
    t = torch.tensor([float("nan"), 1.0, 2.0, float("nan")])
    u = torch.tensor([1.0, float("nan"), 2.0, float("nan")])
    x, y = bp.tensor(t.numpy()), bp.tensor(u.numpy())
    for op in COMPARISONS:
        assert op(x, y).tolist() == op(t, u).tolist()
        assert op(x, float("nan")).tolist() == op(t, float("nan")).tolist()
        assert op(x, 1.0).tolist() == op(t, 1.0).tolist()


def test_zero_dim_tensors_promote_as_in_torch():
    t, x = pair([1, 2], "int32")
    s, y = torch.tensor(2.5, dtype=torch.float64), bp.tensor(2.5, dtype=bp.float64)
    check_same(t * s, x * y)
    h, z = pair([1, 2], "float16")
    check_same(h + s, z + y)


def test_comparison_with_other_objects():
    x = bp.tensor([1.0])
    assert (x == None) is False  # noqa: E711
    assert (x != "a") is True
    with pytest.raises(TypeError):
        x < "a"
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        [1] - x


@pytest.mark.parametrize(
    "op, method",
    [(operator.iadd, "add"), (operator.isub, "sub"), (operator.imul, "mul"),
     (operator.itruediv, "div")],
)
def test_inplace_returns_self_and_writes_views(op, method):
    base = bp.tensor([[1.0, 2.0], [3.0, 4.0]])
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    row, expected_row = base[1], expected[1]
    version = base._version
    result = op(row, 2)
    assert result is row
    op(expected_row, 2)
    assert base.tolist() == expected.tolist()
    assert base._version > version
    result = op(row, bp.tensor([2.0, 4.0]))
    op(expected_row, torch.tensor([2.0, 4.0]))
    assert result is row
    assert base.tolist() == expected.tolist()


def test_inplace_keeps_the_dtype():
    x = bp.tensor([1, 2], dtype=bp.int32)
    x += 3
    assert x.dtype == bp.int32 and x.tolist() == [4, 5]
    with pytest.raises(RuntimeError):
        x += 1.5  # a float result cannot go into int32, as in PyTorch


def test_unary_and_matmul():
    t = torch.tensor([[1.0, -2.0], [-3.0, 4.0]])
    x = bp.tensor(t.numpy())
    check_same(-t, -x, exact=True)
    check_same(abs(t), abs(x), exact=True)
    check_same(t @ t, x @ x)
    v = torch.tensor([1.0, 2.0])
    check_same(t @ v, x @ bp.tensor([1.0, 2.0]))
    b = bp.tensor([True, False])
    assert (~b).tolist() == [False, True]
    with pytest.raises(TypeError, match="bool"):
        ~bp.tensor([1, 2])
    with pytest.raises(TypeError):
        x @ 2


def test_one_element_conversions():
    assert bool(bp.tensor([0.0])) is False
    assert bool(bp.tensor(float("nan"))) is True
    assert int(bp.tensor([[2.7]])) == 2
    assert int(bp.tensor(-2.7)) == -2
    assert float(bp.tensor(3, dtype=bp.int8)) == 3.0
    assert float(bp.tensor(0.1)) == float(torch.tensor(0.1))
    assert float(bp.tensor(1.5, dtype=bp.bfloat16)) == 1.5
    assert [10, 20, 30][bp.tensor(1)] == 20
    assert list(range(5))[bp.tensor(True)] == 1
    assert type(bp.tensor(2).__index__()) is int


def test_one_element_conversion_errors():
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(bp.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="no values is ambiguous"):
        bool(bp.tensor([]))
    with pytest.raises(ValueError, match="only one element tensors"):
        int(bp.tensor([1, 2]))
    with pytest.raises(ValueError, match="only one element tensors"):
        float(bp.zeros(0))
    with pytest.raises(ValueError):
        int(bp.tensor(float("nan")))
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][bp.tensor(1.0)]
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][bp.tensor([0, 1])]


def test_operators_on_another_device():
    others = [d for d in bp.devices() if d.type != "cpu"]
    if not others:
        pytest.skip("no device but the host is loaded")
    t = torch.tensor([1.0, 2.0, float("nan")])
    x = bp.tensor(t.numpy(), device=others[0])
    for op in ARITHMETIC + COMPARISONS:
        check_same(op(t, 2), op(x, 2).cpu())
        check_same(op(3, t), op(3, x).cpu())
    assert float(x[1]) == 2.0
    x += 1
    assert x.device == others[0] and x.cpu().tolist()[:2] == [2.0, 3.0]
