"""The op functions and Tensor methods that bp-codegen generates from ops.yaml
(python_functions.cpp): which entries become what, the C++ call each makes, and what it returns.
"""

import pathlib
import re

import pytest

import backplane as bp

OPS_YAML = pathlib.Path(__file__).resolve().parents[2] / "core" / "ops" / "ops.yaml"


@pytest.fixture
def x():
    return bp.tensor([[1.0, 2.0], [3.0, 4.0]])


@pytest.fixture
def y():
    return bp.tensor([[10.0, 20.0], [30.0, 40.0]])


def test_every_entry_is_bound_once_the_hand_written_to_last():
    schemas = re.findall(r"^- func: (.*)$", OPS_YAML.read_text(), re.MULTILINE)
    bound = bp._C._bound_schemas()
    assert len(bound) == len(set(bound))
    to = [s for s in schemas if s.startswith("to.")]
    assert bound == [s for s in schemas if s not in to] + to


def test_functions_for_function_entries_methods_for_method_entries(x):
    assert callable(bp.neg_) and callable(bp.Tensor.neg_)  # variants: function, method
    assert not hasattr(bp, "add_") and callable(bp.Tensor.add_)  # variants: method
    assert not hasattr(bp.Tensor, "conv2d") and callable(bp.conv2d)  # variants: function


def test_overloads_in_ops_yaml_order_and_the_receiver(x, y):
    assert bp.add(x, y, alpha=2).tolist() == [[21.0, 42.0], [63.0, 84.0]]
    assert bp.add(x, 1.5, 2).tolist() == [[4.0, 5.0], [6.0, 7.0]]
    assert x.sub(y).tolist() == [[-9.0, -18.0], [-27.0, -36.0]]
    condition = bp.gt(x, 2)
    # where.self(Tensor condition, Tensor self, Tensor other): the receiver is `self`.
    assert x.where(condition, y).tolist() == bp.where(condition, x, y).tolist()
    assert bp.where(condition, x, y).tolist() == [[10.0, 20.0], [3.0, 4.0]]


def test_in_place_calls_return_the_receiver_itself(x, y):
    assert x.add_(y) is x
    assert x.tolist() == [[11.0, 22.0], [33.0, 44.0]]
    assert x.mul_(2) is x
    assert bp.neg_(x) is x
    assert x.tolist() == [[-22.0, -44.0], [-66.0, -88.0]]
    assert x.copy_(y) is x and x.tolist() == y.tolist()
    assert bp.fill_(x, 7) is x and x.tolist() == [[7.0, 7.0], [7.0, 7.0]]


def test_out_returns_the_object_passed(x, y):
    out = bp.mul(x, 0)
    assert bp.mul(x, y, out=out) is out
    assert out.tolist() == [[10.0, 40.0], [90.0, 160.0]]
    assert bp.sum(x, 1, out=bp.sum(x, 1)).tolist() == [3.0, 7.0]


def test_named_returns_and_the_out_tuple(x, y):
    result = bp.max(y, 1)
    assert type(result).__name__ == "max"
    assert result.values.tolist() == [20.0, 40.0] and result.indices.tolist() == [1, 1]
    values, indices = x.max(dim=0, keepdim=True)
    assert values.tolist() == [[3.0, 4.0]] and indices.tolist() == [[1, 1]]
    outs = (bp.sum(x, 1), bp.argmax(x, 1))
    written = bp.max(y, 1, out=outs)
    assert written.values.tolist() == outs[0].tolist() == [20.0, 40.0]
    assert outs[1].tolist() == [1, 1]
    # Unnamed returns are a plain tuple.
    layer_norm = bp.native_layer_norm(y, [2], None, None, 1e-5)
    assert type(layer_norm) is tuple and len(layer_norm) == 3


def test_int_lists_optional_lists_and_their_defaults(x):
    assert bp.sum(x).tolist() == 10.0
    assert bp.sum(x, 1).tolist() == [3.0, 7.0]  # int[1]? dim: one int is a list of one
    assert bp.sum(x, [0]).tolist() == [4.0, 6.0]
    assert bp.sum(x, None).tolist() == 10.0
    assert x.sum(dim=1, keepdim=True).shape == (2, 1)
    assert bp.sum(x, dtype=bp.float64).dtype is bp.float64
    assert bp.amax(x).tolist() == 4.0  # int[1] dim=[]: every dimension
    assert x.reshape([4]).shape == (4,) and x.permute([1, 0]).tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_conv2d_int2_defaults_and_single_ints():
    image = bp.arange(16.0).reshape([1, 1, 4, 4])
    weight = bp.tensor([[1.0, 1.0], [1.0, 1.0]]).reshape([1, 1, 2, 2])
    assert bp.conv2d(image, weight).shape == (1, 1, 3, 3)
    strided = [[[[10.0, 18.0], [42.0, 50.0]]]]
    assert bp.conv2d(image, weight, stride=2).tolist() == strided
    assert bp.conv2d(image, weight, None, [2, 2], 0, 1, 1).tolist() == strided
    assert bp.conv2d(image, weight, padding=1).shape == (1, 1, 5, 5)


def test_other_argument_types(x, y):
    assert bp.cat([x, y], 0).shape == (4, 2)  # Tensor[]
    assert bp.arange(3, device="cpu").device == "cpu"  # Device?
    assert bp.arange(0, 10, 3).tolist() == [0, 3, 6, 9]
    # str approximate='none', keyword-only.
    assert bp.gelu(x, approximate="tanh").tolist() != bp.gelu(x).tolist()
    normalized = bp.layer_norm(y, [2]).reshape([4]).tolist()
    assert normalized == pytest.approx([-1.0, 1.0, -1.0, 1.0], abs=1e-5)
    assert bp.softmax(x, 1, bp.float64).dtype is bp.float64  # ScalarType?


def test_docstrings_give_the_python_signatures_then_the_schemas():
    doc = bp.add.__doc__.split("\n")
    assert doc[:4] == [
        "add(input, other, *, alpha=1) -> Tensor",
        "add(input, other, *, alpha=1, out) -> Tensor",
        "add(input, other, alpha=1) -> Tensor",
        "",
    ]
    assert doc[4] == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert bp.Tensor.add_.__doc__.startswith("add_(other, *, alpha=1) -> Tensor\n")
    assert bp.max.__doc__.startswith(
        "max(input, dim, keepdim=False) -> (Tensor values, Tensor indices)\n")
