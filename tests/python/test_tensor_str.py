"""repr(bp.Tensor) against repr(torch.Tensor) of the same values: PyTorch's format exactly,
with `backplane.` where PyTorch writes `torch.`."""

import math
import re

import numpy as np
import pytest
import torch

import backplane as bp

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]


def unwrapped_suffixes(text):
    # "backplane." is longer than "torch.", so a suffix may move to a line of its own where
    # PyTorch's stays on the last line; test_suffix_wraps_past_the_line_width checks that rule.
    return re.sub(r",\s+(dtype|device|size|requires_grad|grad_fn)=", r", \1=", text)


def same_repr(values, dtype="float32", **kwargs):
    expected = repr(torch.tensor(values, dtype=getattr(torch, dtype), **kwargs))
    got = repr(bp.tensor(values, dtype=getattr(bp, dtype), **kwargs))
    assert unwrapped_suffixes(got) == unwrapped_suffixes(expected.replace("torch.", "backplane."))


@pytest.mark.parametrize(
    "values",
    [
        [[0.2689, 0.7311], [0.2689, 0.7311]],
        [1.0, 2.0],
        [1.0, -2.0, 0.0],
        [0.0, 0.0],
        3.5,
        0.0,
        -7.0,
        [1e-5, 1.0],
        [1e9, 1.0],
        [123456789.0, 1.0],
        [1.0, 2000.0],
        [1.0, 1000.0],
        [0.5, 600.0],
        [float("nan"), 1.0, float("inf"), -float("inf")],
        [float("nan"), 1.5],
        [float("nan")],
        [float("inf"), 0.0],
        [-0.0, 1.0],
        [[1.5] * 30],
        [list(range(25))],
        [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]],
        [[[[1.0]]]],
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floats(values, dtype):
    same_repr(values, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    same_repr([[1, 0, 3], [2, 1, 0]], dtype)
    same_repr(1, dtype)
    same_repr([], dtype)


def test_integers_and_bools():
    same_repr([-5, 12345, 0], "int64")
    same_repr([True, False], "bool")
    same_repr(list(range(-40, 40)), "int32")


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
def test_empty(shape):
    expected = repr(torch.empty(shape)).replace("torch.", "backplane.")
    assert repr(bp.empty(*shape)) == expected
    expected = repr(torch.empty(shape, dtype=torch.int64)).replace("torch.", "backplane.")
    assert repr(bp.empty(*shape, dtype=bp.int64)) == expected


@pytest.mark.parametrize("shape", [(1001,), (40, 30), (2, 600), (7, 7, 30), (3, 4, 100), (5, 201)])
def test_summarised(shape):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape).astype(np.float32) * 100
    expected = repr(torch.from_numpy(values)).replace("torch.", "backplane.")
    assert repr(bp.tensor(values)) == expected


def test_random_values_wrap_like_torch():
    rng = np.random.default_rng(1)
    for scale in [1e-6, 1e-3, 1.0, 1e3, 1e6, 1e10]:
        values = (rng.standard_normal((6, 17)) * scale).astype(np.float32)
        expected = repr(torch.from_numpy(values)).replace("torch.", "backplane.")
        assert repr(bp.tensor(values)) == expected


def test_autograd_suffixes():
    same_repr([1.0, 2.0], requires_grad=True)
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    expected = repr(t + t).replace("torch.", "backplane.")
    assert repr(x + x) == expected
    assert repr((x * 2).sum()) == repr((t * 2).sum())
    assert repr(x.detach()) == "tensor([1., 2.])"


def test_suffix_wraps_past_the_line_width():
    # The last line and ", dtype=backplane.int32" take 81 columns: the suffix moves down,
    # indented like the values.
    x = bp.tensor(list(range(-40, 40)), dtype=bp.int32)
    assert repr(x).endswith("  38,  39],\n       dtype=backplane.int32)")
    y = bp.tensor(list(range(-40, 38)), dtype=bp.int32)
    assert repr(y).endswith("  36,  37], dtype=backplane.int32)")


@pytest.mark.parametrize("count", range(4, 13))
def test_suffix_wrap_as_torch(count):
    # requires_grad=True reads the same in both: where it wraps must match exactly.
    values = [1.5] * count
    expected = repr(torch.tensor(values, requires_grad=True))
    assert repr(bp.tensor(values, requires_grad=True)) == expected
    expected = repr(torch.tensor([values, values], requires_grad=True))
    assert repr(bp.tensor([values, values], requires_grad=True)) == expected


def test_dtype_suffix_on_a_long_line():
    values = [[1.2345678] * 8] * 2
    same_repr(values, "float64")
    same_repr([float(v) for v in range(9)], "float16")


def test_device_suffix():
    others = [d for d in bp.devices() if d.type != "cpu"]
    if not others:
        pytest.skip("no device but the host is loaded")
    x = bp.tensor([1.5, 2.0], device=others[0])
    assert repr(x) == f"tensor([1.5000, 2.0000], device='{others[0]}')"
    y = bp.tensor([1, 2], dtype=bp.int32, device=others[0])
    assert repr(y) == f"tensor([1, 2], device='{others[0]}', dtype=backplane.int32)"


def test_str_is_repr():
    x = bp.tensor([math.pi])
    assert str(x) == repr(x) == "tensor([3.1416])"
