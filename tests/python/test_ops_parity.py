"""Every op of core/ops/ops.yaml gives PyTorch's results, called from Python.

CASES maps each ops.yaml entry name to a case: the NumPy inputs (drawn from a generator seeded
by the entry name), and a function that calls the op through a module, backplane or torch,
with keyword arguments, defaults and out= as the schema has them. The same function runs
against torch 1.13 on the CPU, unless the case names a reference: for entries torch lacks or
calls otherwise (torch.ops.aten.<op>.<overload>, or the formula written out in torch). Each
case runs on every device of (cpu, opencl:0) that backplane has loaded; results are compared
as NumPy arrays, with their dtypes and shapes, within tolerances that depend on the dtype.
test_every_ops_yaml_entry_has_a_case makes a new op add its case here.
"""

import functools
import math
import zlib
from typing import Callable, Dict, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pytest
import torch

import backplane as bp
from ops_yaml import read_entries

DEVICES = [d for d in ("cpu", "opencl:0") if d in {str(each) for each in bp.devices()}]


class Lib:
    """One side of a comparison: the module that runs the ops, and the device of its tensors.
    Attributes fall through to the module (on the torch side, to torch.ops.aten for the ops
    torch's Python API leaves out)."""

    def __init__(self, module, device: str):
        self.m = module
        self.device = device
        self.is_torch = module is torch

    def __getattr__(self, name):
        if self.is_torch and not hasattr(torch, name):
            return getattr(torch.ops.aten, name)
        return getattr(self.m, name)

    def dtype(self, name: str):
        return getattr(self.m, name)

    def tensor(self, array):
        if self.is_torch:
            return torch.tensor(array)
        return bp.tensor(array, device=self.device)

    def empty(self, shape, dtype: str = "float32"):
        return self.m.empty(shape, dtype=self.dtype(dtype), device=self.device)


def convert(lib: Lib, inputs):
    """NumPy arrays (also inside lists) become the library's tensors; anything else stays."""
    if isinstance(inputs, np.ndarray):
        return lib.tensor(inputs)
    if isinstance(inputs, list):
        return [convert(lib, each) for each in inputs]
    return inputs


class Case(NamedTuple):
    inputs: Callable[[np.random.Generator], Sequence]
    run: Callable
    reference: Optional[Callable]
    tolerance: Dict[str, Tuple[float, float]]


CASES: Dict[str, Case] = {}


def parity(name: str, inputs, reference=None, **tolerance):
    """Registers the decorated function as the case of ops.yaml entry `name`. tolerance:
    float32=(rtol, atol) and the like, replacing the dtype's default."""

    def register(run):
        assert name not in CASES, f"two cases for {name}"
        CASES[name] = Case(inputs, run, reference, tolerance)
        return run

    return register


def aliased(result, *expected):
    """The result of an in-place or out= call. One tensor written: the very object passed, as in
    PyTorch. Several: a tuple of tensors that share their memory with the ones passed (which
    PyTorch returns themselves), seen by writing through each; their values before that are
    returned."""
    if len(expected) == 1:
        assert result is expected[0], "the result is not the tensor written"
        return result
    assert isinstance(result, tuple) and len(result) == len(expected)
    values = [each.clone() for each in result]
    for index, (got, want) in enumerate(zip(result, expected)):
        got.fill_(7)
        assert (want.cpu().numpy() == 7).all(), f"result {index} is not out[{index}]'s memory"
    return values


# --- inputs --------------------------------------------------------------------------------


def normal(r, *shape, dtype=np.float32):
    return np.asarray(r.standard_normal(shape), dtype=dtype)


def uniform(r, low, high, *shape, dtype=np.float32):
    return np.asarray(r.uniform(low, high, shape), dtype=dtype)


def integers(r, low, high, *shape, dtype=np.int64):
    return np.asarray(r.integers(low, high, shape), dtype=dtype)


def booleans(r, *shape):
    return np.asarray(r.integers(0, 2, shape), dtype=np.bool_)


def with_nan(array):
    array = array.copy()
    array.flat[1] = np.nan
    return array


def two(r, *shape):
    return [normal(r, *shape), normal(r, *shape)]


# --- elementwise binary arithmetic -----------------------------------------------------------


def binary_inputs(r):
    # float32 (2, 3) and (3,) broadcast; int64 and int32 operands for the promotion.
    return [normal(r, 2, 3), normal(r, 3), integers(r, -5, 5, 2, 3), integers(r, 1, 5, 3,
                                                                               dtype=np.int32)]


@parity("add.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return L.add(a, b), L.add(a, b, alpha=2), a.add(b, alpha=-1.5), L.add(i, j), L.add(i, a)


@parity("add_.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return (aliased(a.add_(b), a).clone(), aliased(a.add_(b, alpha=3), a),
            aliased(i.add_(j, alpha=2), i))


@parity("add.out", binary_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.add(a, b, alpha=2, out=out), out).clone(), aliased(L.add(i, j, out=out), out)


def add_scalar_reference(L, a, b, i, j):
    # torch's Python API reads add(a, 2, 3) as another overload; aten's takes alpha there.
    return (torch.add(a, 2.5), torch.ops.aten.add.Scalar(a, 2, 3), a.add(1, alpha=0.5),
            torch.add(i, 2), torch.add(i, 0.5))


@parity("add.Scalar", binary_inputs, reference=add_scalar_reference)
def _(L, a, b, i, j):
    return L.add(a, 2.5), L.add(a, 2, 3), a.add(1, alpha=0.5), L.add(i, 2), L.add(i, 0.5)


@parity("add_.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.add_(2.5), a).clone(), aliased(a.add_(2, alpha=3), a), aliased(i.add_(3), i)


@parity("sub.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return L.sub(a, b), L.sub(a, b, alpha=2), a.sub(b, alpha=0.5), L.sub(i, j), L.sub(j, a)


@parity("sub_.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.sub_(b), a).clone(), aliased(a.sub_(b, alpha=3), a), aliased(i.sub_(j), i)


@parity("sub.out", binary_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.sub(a, b, alpha=2, out=out), out).clone(), aliased(L.sub(i, j, out=out), out)


def sub_scalar_reference(L, a, b, i, j):
    # torch's Python API reads sub(a, 2, 3) as another overload; aten's takes alpha there.
    return (torch.sub(a, 2.5), torch.ops.aten.sub.Scalar(a, 2, 3), a.sub(1, alpha=0.5),
            torch.sub(i, 2), torch.sub(i, 0.5))


@parity("sub.Scalar", binary_inputs, reference=sub_scalar_reference)
def _(L, a, b, i, j):
    return L.sub(a, 2.5), L.sub(a, 2, 3), a.sub(1, alpha=0.5), L.sub(i, 2), L.sub(i, 0.5)


@parity("sub_.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.sub_(2.5), a).clone(), aliased(a.sub_(2, alpha=3), a), aliased(i.sub_(3), i)


@parity("mul.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return L.mul(a, b), a.mul(b), L.mul(i, j), L.mul(i, a)


@parity("mul_.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.mul_(b), a).clone(), aliased(i.mul_(j), i)


@parity("mul.out", binary_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.mul(a, b, out=out), out).clone(), aliased(L.mul(i, j, out=out), out)


@parity("mul.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return L.mul(a, 2.5), a.mul(-3), L.mul(i, 2), L.mul(i, 0.5), L.mul(i, True)


@parity("mul_.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.mul_(2.5), a).clone(), aliased(i.mul_(-3), i)


@parity("div.Tensor", binary_inputs)
def _(L, a, b, i, j):
    # True division: integer operands give float32.
    return L.div(a, b), a.div(b), L.div(i, j), L.div(j, a)


@parity("div_.Tensor", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.div_(b), a).clone(), aliased(a.div_(j), a)


@parity("div.out", binary_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.div(a, b, out=out), out).clone(), aliased(L.div(i, j, out=out), out)


@parity("div.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return L.div(a, 2.5), a.div(-4), L.div(i, 2), L.div(i, 0.5)


@parity("div_.Scalar", binary_inputs)
def _(L, a, b, i, j):
    return aliased(a.div_(2.5), a).clone(), aliased(a.div_(-4), a)


def extremum_inputs(r):
    # A NaN in each float operand, at different places: both ops propagate NaN.
    a, b = normal(r, 2, 3), normal(r, 3)
    a.flat[1] = np.nan
    b.flat[2] = np.nan
    return [a, b, integers(r, -5, 5, 2, 3), integers(r, -5, 5, 3, dtype=np.int32)]


@parity("maximum", extremum_inputs)
def _(L, a, b, i, j):
    return L.maximum(a, b), a.maximum(b), L.maximum(i, j), L.maximum(j, a)


@parity("maximum.out", extremum_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.maximum(a, b, out=out), out)


@parity("minimum", extremum_inputs)
def _(L, a, b, i, j):
    return L.minimum(a, b), a.minimum(b), L.minimum(i, j), L.minimum(j, a)


@parity("minimum.out", extremum_inputs)
def _(L, a, b, i, j):
    out = L.empty([2, 3])
    return aliased(L.minimum(a, b, out=out), out)


# --- comparisons ------------------------------------------------------------------------------


def comparison_inputs(r):
    # Small integers, as floats too, so that some elements compare equal.
    return [integers(r, -2, 3, 3, 4).astype(np.float32), integers(r, -2, 3, 4).astype(np.float32),
            integers(r, -2, 3, 3, 4), integers(r, -2, 3, 4, dtype=np.int32)]


def comparison_cases(op):
    @parity(f"{op}.Tensor", comparison_inputs)
    def _(L, a, b, i, j):
        f = getattr(L, op)
        return f(a, b), getattr(a, op)(b), f(i, j), f(i, a)

    @parity(f"{op}_.Tensor", comparison_inputs)
    def _(L, a, b, i, j):
        # In place, the result keeps self's dtype: 1 and 0.
        return aliased(getattr(a, op + "_")(b), a), aliased(getattr(i, op + "_")(j), i)

    @parity(f"{op}.Tensor_out", comparison_inputs)
    def _(L, a, b, i, j):
        out = L.empty([3, 4], "bool")
        return aliased(getattr(L, op)(a, b, out=out), out)

    @parity(f"{op}.Scalar", comparison_inputs)
    def _(L, a, b, i, j):
        f = getattr(L, op)
        return f(a, 1), getattr(a, op)(0.5), f(i, 1), f(i, 0.5), f(j, -2)

    @parity(f"{op}_.Scalar", comparison_inputs)
    def _(L, a, b, i, j):
        return aliased(getattr(a, op + "_")(1), a), aliased(getattr(i, op + "_")(0), i)

    @parity(f"{op}.Scalar_out", comparison_inputs)
    def _(L, a, b, i, j):
        out = L.empty([3, 4], "bool")
        return aliased(getattr(L, op)(a, 0.5, out=out), out)


for _op in ("eq", "lt", "gt"):
    comparison_cases(_op)


def where_inputs(r):
    return [booleans(r, 2, 1, 4), normal(r, 3, 4), normal(r, 2, 3, 1), integers(r, -3, 3, 4)]


@parity("where.self", where_inputs)
def _(L, c, a, b, i):
    # The method's receiver is self, the second argument.
    return L.where(c, a, b), a.where(c, b), L.where(c, i, i)


@parity("where.self_out", where_inputs)
def _(L, c, a, b, i):
    out = L.empty([2, 3, 4])
    return aliased(L.where(c, a, b, out=out), out)


# --- elementwise unary ------------------------------------------------------------------------


def unary_cases(op, low=None, high=None, integers_give="same"):
    """op, op_ and op.out on float32, on a strided view and on int32. integers_give: "same"
    (the op keeps an integer dtype, in place too) or "float" (its result is float32). torch's
    Python API has no relu.out: torch.relu's results are the reference there."""

    def inputs(r):
        x = normal(r, 3, 4) if low is None else uniform(r, low, high, 3, 4)
        return [x, integers(r, 0 if low is not None else -9, 9, 3, 4, dtype=np.int32)]

    @parity(op, inputs)
    def _(L, x, i):
        f = getattr(L, op)
        return f(x), getattr(x, op)(), f(x.transpose(0, 1)), f(i)

    @parity(op + "_", inputs)
    def _(L, x, i):
        results = [aliased(getattr(x, op + "_")(), x).clone(), aliased(getattr(L, op + "_")(x), x)]
        if integers_give == "same":
            results.append(aliased(getattr(i, op + "_")(), i))
        return results

    def out_reference(L, x, i):
        return torch.relu(x), torch.relu(i)

    @parity(op + ".out", inputs, reference=out_reference if op == "relu" else None)
    def _(L, x, i):
        out = L.empty([3, 4])
        results = [aliased(getattr(L, op)(x, out=out), out).clone()]
        if integers_give == "same":
            int_out = L.empty([3, 4], "int32")
            results.append(aliased(getattr(L, op)(i, out=int_out), int_out))
        else:
            results.append(aliased(getattr(L, op)(i, out=out), out))
        return results


unary_cases("neg")
unary_cases("abs")
unary_cases("exp", integers_give="float")
unary_cases("log", 0.1, 4.0, integers_give="float")
unary_cases("sqrt", 0.0, 4.0, integers_give="float")
unary_cases("tanh", integers_give="float")
unary_cases("sigmoid", integers_give="float")
unary_cases("relu")


def gelu_inputs(r):
    return [normal(r, 3, 4)]


@parity("gelu", gelu_inputs,
        reference=lambda L, x: (L.gelu(x), L.gelu(x, approximate="tanh"),
                                L.gelu(x, approximate="none")))
def _(L, x):
    return L.gelu(x), x.gelu(approximate="tanh"), L.gelu(x, approximate="none")


@parity("gelu_", gelu_inputs,
        reference=lambda L, x: (L.gelu_(x).clone(), L.gelu_(x, approximate="tanh")))
def _(L, x):
    return aliased(L.gelu_(x), x).clone(), aliased(x.gelu_(approximate="tanh"), x)


@parity("gelu.out", gelu_inputs)
def _(L, x):
    out = L.empty([3, 4])
    return aliased(L.gelu(x, approximate="tanh", out=out), out)


@parity("silu", gelu_inputs, reference=lambda L, x: (L.silu(x),) * 3)
def _(L, x):
    return L.silu(x), x.silu(), L.silu(x.transpose(0, 1)).transpose(0, 1)


@parity("silu_", gelu_inputs, reference=lambda L, x: (L.silu(x), L.silu_(x)))
def _(L, x):
    copy = x.clone()
    return aliased(L.silu_(copy), copy), aliased(x.silu_(), x)


@parity("silu.out", gelu_inputs)
def _(L, x):
    out = L.empty([3, 4])
    return aliased(L.silu(x, out=out), out)


def backward_pointwise_inputs(r):
    return [normal(r, 3, 4), normal(r, 3, 4)]


@parity("threshold_backward", backward_pointwise_inputs)
def _(L, g, x):
    return L.threshold_backward(g, x, 0.0), L.threshold_backward(g, x, threshold=0.5)


@parity("threshold_backward.grad_input", backward_pointwise_inputs,
        reference=lambda L, g, x: L.threshold_backward(g, x, 0.25))
def _(L, g, x):
    out = L.empty([3, 4])
    return aliased(L.threshold_backward(g, x, 0.25, out=out), out)


@parity("gelu_backward", backward_pointwise_inputs)
def _(L, g, x):
    return L.gelu_backward(g, x), L.gelu_backward(g, x, approximate="tanh")


@parity("gelu_backward.grad_input", backward_pointwise_inputs,
        reference=lambda L, g, x: L.gelu_backward(g, x, approximate="tanh"))
def _(L, g, x):
    out = L.empty([3, 4])
    return aliased(L.gelu_backward(g, x, approximate="tanh", out=out), out)


# --- reductions -------------------------------------------------------------------------------


def reduction_inputs(r):
    return [normal(r, 2, 3, 4), integers(r, -9, 9, 3, 4, dtype=np.int32), booleans(r, 5)]


@parity("sum", reduction_inputs)
def _(L, x, i, b):
    # Integer and bool sums are int64, as in PyTorch.
    return L.sum(x), x.sum(), L.sum(x, dtype=L.float64), L.sum(i), L.sum(b)


@parity("mean", reduction_inputs)
def _(L, x, i, b):
    return L.mean(x), x.mean(), L.mean(x, dtype=L.float64), L.mean(i, dtype=L.float32)


@parity("sum.dim_IntList", reduction_inputs)
def _(L, x, i, b):
    return (L.sum(x, [0, 2]), L.sum(x, dim=1, keepdim=True), x.sum(-1, dtype=L.float64),
            x.sum([]), L.sum(i, 0), L.sum(x.transpose(0, 2), [1]))


@parity("sum.IntList_out", reduction_inputs)
def _(L, x, i, b):
    out = L.empty([2, 1, 4], "float64")
    return aliased(L.sum(x, [1], True, dtype=L.float64, out=out), out)


@parity("mean.dim", reduction_inputs)
def _(L, x, i, b):
    return (L.mean(x, [0, 2]), L.mean(x, dim=1, keepdim=True), x.mean(-1, dtype=L.float64),
            L.mean(i, [1], dtype=L.float32))


@parity("mean.out", reduction_inputs)
def _(L, x, i, b):
    out = L.empty([3])
    return aliased(L.mean(x, [0, 2], out=out), out)


@parity("amax", reduction_inputs)
def _(L, x, i, b):
    return L.amax(x), L.amax(x, [0, 2]), x.amax(1, True), L.amax(i, dim=-1), L.amax(b)


@parity("amax.out", reduction_inputs)
def _(L, x, i, b):
    out = L.empty([2, 1, 4])
    return aliased(L.amax(x, 1, keepdim=True, out=out), out)


@parity("max.dim", reduction_inputs)
def _(L, x, i, b):
    named = L.max(x, 1)
    kept = x.max(dim=-1, keepdim=True)
    return named.values, named.indices, kept[0], kept[1], L.max(i, 0)


@parity("max.dim_max", reduction_inputs)
def _(L, x, i, b):
    values, indices = L.empty([2, 1, 4]), L.empty([2, 1, 4], "int64")
    result = L.max(x, 1, True, out=(values, indices))
    assert result.values is result[0] and result.indices is result[1]
    return aliased(result, values, indices)


@parity("argmax", reduction_inputs)
def _(L, x, i, b):
    return L.argmax(x), L.argmax(x, 1), x.argmax(dim=-1, keepdim=True), L.argmax(i, 0)


@parity("argmax.out", reduction_inputs)
def _(L, x, i, b):
    out = L.empty([2, 4], "int64")
    return aliased(L.argmax(x, dim=1, out=out), out)


# --- normalisation ----------------------------------------------------------------------------


def softmax_inputs(r):
    return [normal(r, 2, 3, 5)]


@parity("softmax.int", softmax_inputs)
def _(L, x):
    return L.softmax(x, 1), x.softmax(-1), L.softmax(x, dim=0, dtype=L.float64)


@parity("softmax.int_out", softmax_inputs)
def _(L, x):
    out = L.empty([2, 3, 5])
    return aliased(L.softmax(x, 2, out=out), out)


@parity("log_softmax.int", softmax_inputs)
def _(L, x):
    return L.log_softmax(x, 1), x.log_softmax(-1), L.log_softmax(x, dim=0, dtype=L.float64)


@parity("log_softmax.int_out", softmax_inputs)
def _(L, x):
    out = L.empty([2, 3, 5])
    return aliased(L.log_softmax(x, 2, out=out), out)


def softmax_backward_inputs(r):
    y = normal(r, 2, 3, 5)
    probabilities = np.exp(y) / np.exp(y).sum(-1, keepdims=True)
    return [normal(r, 2, 3, 5), probabilities, y - np.log(np.exp(y).sum(-1, keepdims=True))]


@parity("_softmax_backward_data", softmax_backward_inputs)
def _(L, g, p, logp):
    return L._softmax_backward_data(g, p, 2, L.float32), L._softmax_backward_data(g, p, 0,
                                                                                  L.float32)


@parity("_softmax_backward_data.out", softmax_backward_inputs,
        reference=lambda L, g, p, logp: L._softmax_backward_data(g, p, 1, L.float32))
def _(L, g, p, logp):
    out = L.empty([2, 3, 5])
    return aliased(L._softmax_backward_data(g, p, 1, L.float32, out=out), out)


@parity("_log_softmax_backward_data", softmax_backward_inputs)
def _(L, g, p, logp):
    return L._log_softmax_backward_data(g, logp, 2, L.float32)


@parity("_log_softmax_backward_data.out", softmax_backward_inputs,
        reference=lambda L, g, p, logp: L._log_softmax_backward_data(g, logp, 2, L.float32))
def _(L, g, p, logp):
    out = L.empty([2, 3, 5])
    return aliased(L._log_softmax_backward_data(g, logp, 2, L.float32, out=out), out)


def layer_norm_inputs(r):
    x = normal(r, 2, 3, 4)
    mean = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    return [x, normal(r, 4), normal(r, 4), normal(r, 2, 3, 4), mean, rstd.astype(np.float32)]


@parity("native_layer_norm", layer_norm_inputs)
def _(L, x, w, b, g, mean, rstd):
    return L.native_layer_norm(x, [4], w, b, 1e-5), L.native_layer_norm(x, [3, 4], None, None,
                                                                        1e-3)


@parity("native_layer_norm.out", layer_norm_inputs,
        reference=lambda L, x, w, b, g, mean, rstd: L.native_layer_norm(x, [4], w, b, 1e-5))
def _(L, x, w, b, g, mean, rstd):
    outs = L.empty([2, 3, 4]), L.empty([2, 3, 1]), L.empty([2, 3, 1])
    return aliased(L.native_layer_norm(x, [4], w, b, 1e-5, out=outs), *outs)


def layer_norm_backward_reference(L, x, w, b, g, mean, rstd):
    return L.native_layer_norm_backward(g, x, [4], mean, rstd, w, b, [True, True, True])


@parity("native_layer_norm_backward", layer_norm_inputs,
        reference=layer_norm_backward_reference, float32=(1e-4, 1e-5))
def _(L, x, w, b, g, mean, rstd):
    return L.native_layer_norm_backward(g, x, [4], mean, rstd, w, b)


@parity("native_layer_norm_backward.out", layer_norm_inputs,
        reference=layer_norm_backward_reference, float32=(1e-4, 1e-5))
def _(L, x, w, b, g, mean, rstd):
    outs = L.empty([2, 3, 4]), L.empty([4]), L.empty([4])
    return aliased(L.native_layer_norm_backward(g, x, [4], mean, rstd, w, b, out=outs), *outs)


@parity("layer_norm", layer_norm_inputs)
def _(L, x, w, b, g, mean, rstd):
    return (L.layer_norm(x, [4]), L.layer_norm(x, [4], w, b),
            L.layer_norm(x, [3, 4], eps=0.5, cudnn_enable=False))


def rms_norm_reference(x, shape, weight=None, eps=None):
    dims = tuple(range(-len(shape), 0))
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y if weight is None else y * weight


@parity("rms_norm", layer_norm_inputs,
        reference=lambda L, x, w, b, g, mean, rstd: (
            rms_norm_reference(x, [4]), rms_norm_reference(x, [4], w),
            rms_norm_reference(x, [3, 4], None, 0.25)))
def _(L, x, w, b, g, mean, rstd):
    return L.rms_norm(x, [4]), L.rms_norm(x, [4], w), L.rms_norm(x, [3, 4], eps=0.25)


@parity("rms_norm.out", layer_norm_inputs,
        reference=lambda L, x, w, b, g, mean, rstd: rms_norm_reference(x, [4], w, 1e-6))
def _(L, x, w, b, g, mean, rstd):
    out = L.empty([2, 3, 4])
    return aliased(L.rms_norm(x, [4], weight=w, eps=1e-6, out=out), out)


def batch_norm_inputs(r):
    x = normal(r, 2, 3, 4, 4)
    mean = x.mean((0, 2, 3))
    invstd = (1.0 / np.sqrt(x.var((0, 2, 3)) + 1e-5)).astype(np.float32)
    return [x, normal(r, 3), normal(r, 3), normal(r, 3), uniform(r, 0.5, 2.0, 3),
            normal(r, 2, 3, 4, 4), mean, invstd]


@parity("batch_norm", batch_norm_inputs)
def _(L, x, w, b, rm, rv, g, mean, invstd):
    return (L.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, True),
            L.batch_norm(x, None, None, rm, rv, False, 0.1, 0.5, False))


def batch_norm_inference_reference(L, x, w, b, rm, rv, g, mean, invstd):
    return (torch.batch_norm(x, w, b, rm, rv, False, 0.0, 1e-5, False),
            torch.batch_norm(x, None, None, rm, rv, False, 0.0, 0.5, False))


@parity("batch_norm_inference", batch_norm_inputs, reference=batch_norm_inference_reference)
def _(L, x, w, b, rm, rv, g, mean, invstd):
    return (L.batch_norm_inference(x, w, b, rm, rv, 1e-5),
            L.batch_norm_inference(x, None, None, rm, rv, 0.5))


@parity("batch_norm_inference.out", batch_norm_inputs,
        reference=lambda *args: batch_norm_inference_reference(*args)[0])
def _(L, x, w, b, rm, rv, g, mean, invstd):
    out = L.empty([2, 3, 4, 4])
    return aliased(L.batch_norm_inference(x, w, b, rm, rv, 1e-5, out=out), out)


@parity("native_batch_norm", batch_norm_inputs, float32=(1e-4, 1e-5))
def _(L, x, w, b, rm, rv, g, mean, invstd):
    return (L.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
            L.native_batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5))


@parity("native_batch_norm.out", batch_norm_inputs, float32=(1e-4, 1e-5),
        reference=lambda L, x, w, b, rm, rv, g, mean, invstd: L.native_batch_norm(
            x, w, b, None, None, True, 0.1, 1e-5))
def _(L, x, w, b, rm, rv, g, mean, invstd):
    outs = L.empty([2, 3, 4, 4]), L.empty([3]), L.empty([3])
    return aliased(L.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5, out=outs), *outs)


def batch_norm_backward_reference(L, x, w, b, rm, rv, g, mean, invstd):
    return L.native_batch_norm_backward(g, x, w, None, None, mean, invstd, True, 1e-5,
                                        [True, True, True])


@parity("native_batch_norm_backward", batch_norm_inputs, float32=(1e-4, 1e-4),
        reference=batch_norm_backward_reference)
def _(L, x, w, b, rm, rv, g, mean, invstd):
    return L.native_batch_norm_backward(g, x, w, None, None, mean, invstd, True, 1e-5)


@parity("native_batch_norm_backward.out", batch_norm_inputs, float32=(1e-4, 1e-4),
        reference=batch_norm_backward_reference)
def _(L, x, w, b, rm, rv, g, mean, invstd):
    outs = L.empty([2, 3, 4, 4]), L.empty([3]), L.empty([3])
    return aliased(L.native_batch_norm_backward(g, x, w, None, None, mean, invstd, True, 1e-5,
                                                out=outs), *outs)


# --- convolution and pooling ------------------------------------------------------------------


def conv_inputs(r):
    # input (2, 4, 7, 6); weight for groups=1 (6, 4, 3, 3) and groups=2 (6, 2, 3, 2).
    return [normal(r, 2, 4, 7, 6), normal(r, 6, 4, 3, 3), normal(r, 6), normal(r, 6, 2, 3, 2),
            normal(r, 2, 6, 4, 3)]


@parity("conv2d", conv_inputs, float32=(1e-4, 1e-4))
def _(L, x, w, b, wg, g):
    return (L.conv2d(x, w), L.conv2d(x, w, b, stride=2, padding=1),
            L.conv2d(x, w, None, [1, 2], [2, 0], dilation=2),
            L.conv2d(x, wg, b, padding=[1, 0], groups=2))


@parity("conv2d.out", conv_inputs, float32=(1e-4, 1e-4),
        reference=lambda L, x, w, b, wg, g: torch.conv2d(x, w, b, 2, 1))
def _(L, x, w, b, wg, g):
    out = L.empty([2, 6, 4, 3])
    return aliased(L.conv2d(x, w, b, stride=2, padding=1, out=out), out)


def convolution_backward_reference(L, x, w, b, wg, g):
    return torch.ops.aten.convolution_backward(g, x, w, [6], [2, 2], [1, 1], [1, 1], False,
                                               [0, 0], 1, [True, True, True])


@parity("convolution_backward", conv_inputs, float32=(1e-4, 1e-4),
        reference=convolution_backward_reference)
def _(L, x, w, b, wg, g):
    return L.convolution_backward(g, x, w, 2, 1, 1, 1)


@parity("convolution_backward.out", conv_inputs, float32=(1e-4, 1e-4),
        reference=convolution_backward_reference)
def _(L, x, w, b, wg, g):
    outs = L.empty([2, 4, 7, 6]), L.empty([6, 4, 3, 3]), L.empty([6])
    return aliased(L.convolution_backward(g, x, w, [2, 2], [1, 1], [1, 1], 1, out=outs), *outs)


def pool_inputs(r):
    # input (2, 3, 7, 6); gradients of the outputs of kernel 3, stride 2, padding 1 (4, 3) and
    # of kernel 2 (3, 3).
    return [normal(r, 2, 3, 7, 6), normal(r, 2, 3, 4, 3), normal(r, 2, 3, 3, 3)]


@parity("max_pool2d", pool_inputs)
def _(L, x, g, g2):
    return (L.max_pool2d(x, 2), L.max_pool2d(x, [3, 2], stride=[2, 1]),
            L.max_pool2d(x, 3, 2, 1, dilation=1, ceil_mode=True), L.max_pool2d(x, 2, 1, 0, 2))


@parity("max_pool2d.out", pool_inputs, reference=lambda L, x, g, g2: torch.max_pool2d(x, 3, 2, 1))
def _(L, x, g, g2):
    out = L.empty([2, 3, 4, 3])
    return aliased(L.max_pool2d(x, 3, 2, 1, out=out), out)


@parity("max_pool2d_with_indices", pool_inputs)
def _(L, x, g, g2):
    return (L.max_pool2d_with_indices(x, [2, 2]),
            L.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], True))


@parity("max_pool2d_with_indices.out", pool_inputs,
        reference=lambda L, x, g, g2: L.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]))
def _(L, x, g, g2):
    outs = L.empty([2, 3, 4, 3]), L.empty([2, 3, 4, 3], "int64")
    return aliased(L.max_pool2d_with_indices(x, 3, 2, 1, out=outs), *outs)


def max_pool_backward_reference(L, x, g, g2):
    _, indices = torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
    return torch.ops.aten.max_pool2d_with_indices_backward(g, x, [3, 3], [2, 2], [1, 1], [1, 1],
                                                           False, indices)


def max_pool_backward_indices(L, x):
    return L.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])[1]


@parity("max_pool2d_with_indices_backward", pool_inputs, reference=max_pool_backward_reference)
def _(L, x, g, g2):
    indices = max_pool_backward_indices(L, x)
    return L.max_pool2d_with_indices_backward(g, x, 3, 2, 1, 1, False, indices)


@parity("max_pool2d_with_indices_backward.grad_input", pool_inputs,
        reference=max_pool_backward_reference)
def _(L, x, g, g2):
    indices = max_pool_backward_indices(L, x)
    out = L.empty([2, 3, 7, 6])
    return aliased(L.max_pool2d_with_indices_backward(g, x, [3, 3], [2, 2], [1, 1], [1, 1],
                                                      False, indices, out=out), out)


@parity("avg_pool2d", pool_inputs)
def _(L, x, g, g2):
    return (L.avg_pool2d(x, 2), L.avg_pool2d(x, [3, 2], stride=[2, 1]),
            L.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            L.avg_pool2d(x, 3, 2, 1, divisor_override=4))


@parity("avg_pool2d.out", pool_inputs,
        reference=lambda L, x, g, g2: L.avg_pool2d(x, [3, 3], [2, 2], [1, 1], False, False))
def _(L, x, g, g2):
    out = L.empty([2, 3, 4, 3])
    return aliased(L.avg_pool2d(x, 3, 2, 1, count_include_pad=False, out=out), out)


@parity("avg_pool2d_backward", pool_inputs)
def _(L, x, g, g2):
    return (L.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], False, True, None),
            L.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], False, False, None),
            L.avg_pool2d_backward(g2, x, [2, 2], [2, 2], [0, 0], False, True, 3))


@parity("avg_pool2d_backward.grad_input", pool_inputs,
        reference=lambda L, x, g, g2: L.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], False,
                                                            False, None))
def _(L, x, g, g2):
    out = L.empty([2, 3, 7, 6])
    return aliased(L.avg_pool2d_backward(g, x, 3, 2, 1, False, False, None, out=out), out)


def adaptive_avg_pool2d_reference(L, x, g, g2):
    pool = torch.nn.functional.adaptive_avg_pool2d
    return pool(x, [4, 3]), pool(x, 3), pool(x, [1, 1])


@parity("adaptive_avg_pool2d", pool_inputs, reference=adaptive_avg_pool2d_reference)
def _(L, x, g, g2):
    return L.adaptive_avg_pool2d(x, [4, 3]), L.adaptive_avg_pool2d(x, 3), L.adaptive_avg_pool2d(
        x, [1, 1])


@parity("adaptive_avg_pool2d.out", pool_inputs)
def _(L, x, g, g2):
    out = L.empty([2, 3, 4, 3])
    return aliased(L.adaptive_avg_pool2d(x, [4, 3], out=out), out)


@parity("_adaptive_avg_pool2d_backward", pool_inputs)
def _(L, x, g, g2):
    return L._adaptive_avg_pool2d_backward(g, x), L._adaptive_avg_pool2d_backward(g2, x)


@parity("_adaptive_avg_pool2d_backward.out", pool_inputs,
        reference=lambda L, x, g, g2: L._adaptive_avg_pool2d_backward(g, x))
def _(L, x, g, g2):
    out = L.empty([2, 3, 7, 6])
    return aliased(L._adaptive_avg_pool2d_backward(g, x, out=out), out)


# --- linear algebra ---------------------------------------------------------------------------


def matrix_inputs(r):
    return [normal(r, 3, 4), normal(r, 4, 5), normal(r, 2, 3, 4), normal(r, 2, 4, 5),
            normal(r, 5), integers(r, -3, 3, 3, 4), integers(r, -3, 3, 4, 5)]


@parity("mm", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    return L.mm(a, b), a.mm(b), L.mm(b.transpose(0, 1), a.transpose(0, 1)), L.mm(i, j)


@parity("mm.out", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    out = L.empty([3, 5])
    return aliased(L.mm(a, b, out=out), out)


@parity("bmm", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    return L.bmm(ba, bb), ba.bmm(bb), L.bmm(bb.transpose(1, 2), ba.transpose(1, 2))


@parity("bmm.out", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    out = L.empty([2, 3, 5])
    return aliased(L.bmm(ba, bb, out=out), out)


@parity("addmm", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    return L.addmm(c, a, b), c.addmm(a, b, beta=0.5, alpha=2), L.addmm(c, a, b, beta=0)


@parity("addmm_", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    self = L.mm(a, b)
    return aliased(self.addmm_(a, b), self), aliased(self.addmm_(a, b, beta=0.5, alpha=-1), self)


@parity("addmm.out", matrix_inputs)
def _(L, a, b, ba, bb, c, i, j):
    out = L.empty([3, 5])
    return aliased(L.addmm(c, a, b, alpha=3, out=out), out)


def addmm_activation_reference(L, a, b, ba, bb, c, i, j, beta=1, alpha=1):
    product = torch.addmm(c, a, b, beta=beta, alpha=alpha)
    return (torch.relu(product), torch.nn.functional.gelu(product, approximate="tanh"))


@parity("_addmm_activation", matrix_inputs,
        reference=lambda *args: addmm_activation_reference(*args) + addmm_activation_reference(
            *args, beta=0.5, alpha=2)[:1])
def _(L, a, b, ba, bb, c, i, j):
    # GELU is the tanh approximation on every device (ops.yaml says why).
    return (L._addmm_activation(c, a, b), L._addmm_activation(c, a, b, use_gelu=True),
            L._addmm_activation(c, a, b, beta=0.5, alpha=2))


@parity("_addmm_activation.out", matrix_inputs,
        reference=lambda *args: addmm_activation_reference(*args)[1])
def _(L, a, b, ba, bb, c, i, j):
    out = L.empty([3, 5])
    return aliased(L._addmm_activation(c, a, b, use_gelu=True, out=out), out)


def matmul_inputs(r):
    return [normal(r, 4), normal(r, 3, 4), normal(r, 4, 2), normal(r, 2, 1, 3, 4),
            normal(r, 5, 4, 2), integers(r, -3, 3, 3, 4)]


@parity("matmul", matmul_inputs)
def _(L, v, m, n, batch, other, i):
    # 1-D by 1-D, 2-D by 1-D, 1-D by 2-D, 2-D by 2-D, and batch broadcasting.
    return (L.matmul(v, v), L.matmul(m, v), L.matmul(v, n), m.matmul(n), L.matmul(batch, other),
            L.matmul(batch, n), L.matmul(i, i.transpose(0, 1)))


@parity("linear", lambda r: [normal(r, 2, 3, 4), normal(r, 5, 4), normal(r, 5)])
def _(L, x, w, b):
    return L.linear(x, w), L.linear(x, w, b), L.linear(x[0], w, bias=b)


def attention_inputs(r):
    # query (2, 4, 5, 8), key and value (2, 4, 6, 8), grouped key and value (2, 2, 6, 8), a
    # boolean mask (5, 6), an additive mask (2, 1, 5, 6), square (2, 4, 5, 8) key and value
    # for causal masks.
    return [normal(r, 2, 4, 5, 8), normal(r, 2, 4, 6, 8), normal(r, 2, 4, 6, 8),
            normal(r, 2, 2, 6, 8), normal(r, 2, 2, 6, 8),
            booleans(r, 5, 6) | np.eye(5, 6, dtype=np.bool_), normal(r, 2, 1, 5, 6),
            normal(r, 2, 4, 5, 8), normal(r, 2, 4, 5, 8)]


def attention_reference(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    if gqa:
        group = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(group, -3), v.repeat_interleave(group, -3)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        allowed = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~allowed, -math.inf)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else (
            scores + mask)
    return torch.softmax(scores, -1) @ v


@parity("scaled_dot_product_attention", attention_inputs, float32=(1e-4, 1e-5),
        reference=lambda L, q, k, v, gk, gv, bm, am, sk, sv: (
            attention_reference(q, k, v), attention_reference(q, k, v, mask=bm),
            attention_reference(q, k, v, mask=am, scale=0.3),
            attention_reference(q, sk, sv, causal=True),
            attention_reference(q, gk, gv, gqa=True),
            attention_reference(q, gk, gv, mask=bm, gqa=True)))
def _(L, q, k, v, gk, gv, bm, am, sk, sv):
    return (L.scaled_dot_product_attention(q, k, v),
            L.scaled_dot_product_attention(q, k, v, bm),
            L.scaled_dot_product_attention(q, k, v, attn_mask=am, dropout_p=0.0, scale=0.3),
            L.scaled_dot_product_attention(q, sk, sv, is_causal=True),
            L.scaled_dot_product_attention(q, gk, gv, enable_gqa=True),
            L.scaled_dot_product_attention(q, gk, gv, bm, enable_gqa=True))


@parity("_scaled_dot_product_fused_attention", attention_inputs, float32=(1e-4, 1e-5),
        reference=lambda L, q, k, v, gk, gv, bm, am, sk, sv: (
            attention_reference(q, k, v), attention_reference(q, sk, sv, causal=True),
            attention_reference(q, k, v, scale=0.25)))
def _(L, q, k, v, gk, gv, bm, am, sk, sv):
    return (L._scaled_dot_product_fused_attention(q, k, v),
            L._scaled_dot_product_fused_attention(q, sk, sv, True),
            L._scaled_dot_product_fused_attention(q, k, v, scale=0.25))


@parity("_scaled_dot_product_fused_attention.out", attention_inputs, float32=(1e-4, 1e-5),
        reference=lambda L, q, k, v, gk, gv, bm, am, sk, sv: attention_reference(
            q, sk, sv, causal=True, scale=0.5))
def _(L, q, k, v, gk, gv, bm, am, sk, sv):
    out = L.empty([2, 4, 5, 8])
    return aliased(L._scaled_dot_product_fused_attention(q, sk, sv, is_causal=True, scale=0.5,
                                                         out=out), out)


# --- indexing ---------------------------------------------------------------------------------


def embedding_inputs(r):
    return [normal(r, 6, 3), integers(r, 0, 6, 2, 4), integers(r, 0, 6, 5, dtype=np.int32),
            normal(r, 2, 4, 3)]


@parity("embedding", embedding_inputs)
def _(L, w, idx, idx32, g):
    return L.embedding(w, idx), L.embedding(w, idx32, padding_idx=0), L.embedding(
        w, idx, 2, True, False)


@parity("embedding.out", embedding_inputs, reference=lambda L, w, idx, idx32, g: L.embedding(w,
                                                                                            idx))
def _(L, w, idx, idx32, g):
    out = L.empty([2, 4, 3])
    return aliased(L.embedding(w, idx, out=out), out)


@parity("embedding_dense_backward", embedding_inputs)
def _(L, w, idx, idx32, g):
    return (L.embedding_dense_backward(g, idx, 6, -1, False),
            L.embedding_dense_backward(g, idx, 7, 2, True))


@parity("embedding_dense_backward.out", embedding_inputs,
        reference=lambda L, w, idx, idx32, g: L.embedding_dense_backward(g, idx, 6, 1, True))
def _(L, w, idx, idx32, g):
    out = L.empty([6, 3])
    return aliased(L.embedding_dense_backward(g, idx, 6, 1, True, out=out), out)


def index_inputs(r):
    # index repeats 1, so that index_add sums into one slice twice.
    return [normal(r, 4, 5), np.array([3, 1, 0, 1]), np.array([4, 0], dtype=np.int32),
            normal(r, 4, 5), integers(r, -5, 5, 4, 5)]


@parity("index_select", index_inputs)
def _(L, x, index, index32, source, i):
    return (L.index_select(x, 0, index), x.index_select(1, index32), L.index_select(i, -1, index),
            L.index_select(x.transpose(0, 1), 1, index))


@parity("index_select.out", index_inputs)
def _(L, x, index, index32, source, i):
    out = L.empty([4, 5])
    return aliased(L.index_select(x, 0, index, out=out), out)


@parity("index_add", index_inputs)
def _(L, x, index, index32, source, i):
    return (L.index_add(x, 0, index, source), x.index_add(0, index, source, alpha=2),
            L.index_add(x, 1, index32, source[:, :2], alpha=-1), L.index_add(i, 0, index, i))


@parity("index_add.out", index_inputs)
def _(L, x, index, index32, source, i):
    out = L.empty([4, 5])
    return aliased(L.index_add(x, 0, index, source, alpha=0.5, out=out), out)


# --- shape and memory -------------------------------------------------------------------------


def cat_inputs(r):
    return [[normal(r, 2, 3), normal(r, 1, 3), normal(r, 3, 3)], normal(r, 2, 4),
            [integers(r, 0, 5, 2), integers(r, 0, 5, 3)]]


@parity("cat", cat_inputs)
def _(L, parts, x, ints):
    return L.cat(parts), L.cat((parts[0], x), dim=1), L.cat(ints, -1), L.cat([x.transpose(0, 1)],
                                                                           0)


@parity("cat.out", cat_inputs)
def _(L, parts, x, ints):
    out = L.empty([6, 3])
    return aliased(L.cat(parts, 0, out=out), out)


@parity("copy_", lambda r: [normal(r, 2, 3), normal(r, 3, 2), integers(r, -9, 9, 3)])
def _(L, x, other, ints):
    # Strided source, a broadcast source, an integer source, float to integer (toward zero).
    results = [aliased(x.copy_(other.transpose(0, 1)), x).clone()]
    results.append(aliased(x.copy_(ints), x).clone())
    results.append(aliased(x.copy_(other[:, 0], non_blocking=False), x).clone())
    target = L.empty([3, 2], "int32")
    results.append(aliased(target.copy_(other * 4), target))
    return results


@parity("fill_.Scalar", lambda r: [normal(r, 2, 3), integers(r, 0, 5, 4)])
def _(L, x, i):
    results = [aliased(L.fill_(x, 2.5), x).clone(), aliased(x.fill_(-1), x).clone()]
    view = x.transpose(0, 1)[1]
    view.fill_(7)
    results += [x, aliased(i.fill_(3), i)]
    return results


@parity("arange", lambda r: [])
def _(L):
    return (L.arange(5, device=L.device), L.arange(2.5, device=L.device),
            L.arange(4, dtype=L.float64, device=L.device),
            L.arange(end=3, dtype=L.int32, device=L.device))


@parity("arange.start_step", lambda r: [])
def _(L):
    return (L.arange(1, 10, 3, device=L.device), L.arange(0, 1, 0.25, device=L.device),
            L.arange(10, 0, -2, dtype=L.int32, device=L.device),
            L.arange(start=-1, end=1, step=0.5, dtype=L.float64, device=L.device),
            L.arange(2, 5, device=L.device))


@parity("arange.start_out", lambda r: [])
def _(L):
    out = L.empty([4])
    ints = L.empty([3], "int64")
    return (aliased(L.arange(0, 2, 0.5, out=out), out).clone(),
            aliased(L.arange(1, 7, 2, out=ints), ints))


# --- views and copies -------------------------------------------------------------------------


def view_inputs(r):
    return [normal(r, 2, 3, 4), normal(r, 3, 1), normal(r, 1, 3, 1, 2)]


@parity("view", view_inputs)
def _(L, x, column, ones):
    return x.view([6, 4]), x.view([-1]), x.view([4, -1, 3]), column.view([3])


@parity("reshape", view_inputs)
def _(L, x, column, ones):
    return (L.reshape(x, [6, 4]), x.reshape([-1, 2]), x.transpose(0, 2).reshape([4, 6]),
            L.reshape(column, shape=[1, 3]))


@parity("permute", view_inputs)
def _(L, x, column, ones):
    return L.permute(x, [2, 0, 1]), x.permute([-1, 1, 0]), L.permute(x, dims=[0, 1, 2])


@parity("transpose.int", view_inputs)
def _(L, x, column, ones):
    return L.transpose(x, 0, 2), x.transpose(-1, 1), L.transpose(column, dim0=1, dim1=0)


@parity("slice.Tensor", view_inputs,
        reference=lambda L, x, column, ones: (
            torch.ops.aten.slice.Tensor(x, 1, 1, None, 2), x[-2:], x[:, :, -10:2],
            x[..., 1:10:3], x[:, :, :]))
def _(L, x, column, ones):
    # Negative and out-of-range bounds as in Python's slicing; every argument has a default.
    return (L.slice(x, 1, 1, None, 2), x.slice(dim=0, start=-2), L.slice(x, 2, -10, 2),
            x.slice(2, 1, 10, 3), L.slice(x))


@parity("select.int", view_inputs)
def _(L, x, column, ones):
    return L.select(x, 1, -1), x.select(0, 1), L.select(x, dim=2, index=3)


@parity("expand", view_inputs)
def _(L, x, column, ones):
    return column.expand([3, 4]), column.expand([2, -1, 5]), x.expand([2, 3, 4])


@parity("squeeze", view_inputs)
def _(L, x, column, ones):
    return L.squeeze(ones), ones.squeeze(), L.squeeze(x)


@parity("squeeze.dim", view_inputs)
def _(L, x, column, ones):
    return L.squeeze(ones, 2), ones.squeeze(-1), L.squeeze(ones, dim=1), L.squeeze(ones, 0)


@parity("unsqueeze", view_inputs)
def _(L, x, column, ones):
    return L.unsqueeze(x, 0), x.unsqueeze(-1), L.unsqueeze(x, dim=2)


@parity("flatten.using_ints", view_inputs)
def _(L, x, column, ones):
    return (L.flatten(x), x.flatten(1), L.flatten(x, start_dim=0, end_dim=1),
            x.transpose(0, 2).flatten(-2))


@parity("contiguous", view_inputs)
def _(L, x, column, ones):
    # Already contiguous: self's memory, seen by writing through it.
    transposed = x.transpose(0, 2).contiguous()
    assert transposed.is_contiguous()
    same = x.contiguous()
    same.select(0, 1).fill_(5)
    return transposed, x


@parity("clone", view_inputs)
def _(L, x, column, ones):
    copy = L.clone(x)
    x.fill_(0)
    return copy, x.transpose(0, 1).clone(), x


@parity("to.dtype", lambda r: [uniform(r, -5, 5, 2, 3), integers(r, -3, 3, 4)])
def _(L, x, i):
    # float to integer truncates toward zero; a dtype the tensor has returns it.
    assert x.to(L.float32) is x
    return (x.to(L.float64), x.to(L.int32), x.to(dtype=L.float16), i.to(L.float32),
            i.to(L.bool), x.to(L.bfloat16))


@parity("to.device", lambda r: [normal(r, 2, 3)])
def _(L, x):
    assert x.to(L.device) is x
    on_host = x.to("cpu")
    assert str(on_host.device) == "cpu"
    back = on_host.to(L.device)
    assert str(back.device) == L.device
    return on_host, back


@parity("to.other", lambda r: [normal(r, 2, 3), integers(r, -3, 3, 4)])
def _(L, x, i):
    # The other tensor's dtype and device; copy=True copies even when nothing changes.
    assert x.to(x) is x
    copied = x.to(x, copy=True)
    assert copied is not x
    as_int = x.to(i)
    assert as_int.dtype == L.int64 and str(as_int.device) == L.device
    return as_int, i.to(x), copied, x.to(L.device, L.float64, copy=False)


# --- losses -----------------------------------------------------------------------------------


def loss_inputs(r):
    x = normal(r, 4, 5)
    log_probabilities = x - np.log(np.exp(x).sum(-1, keepdims=True))
    # target: classes with one equal to the ignore_index used below (2).
    return [log_probabilities, np.array([1, 2, 4, 0]), uniform(r, 0.5, 2, 5), normal(r, 4, 5),
            x, np.array(3), log_probabilities[0], normal(r, 4)]


@parity("nll_loss_forward", loss_inputs)
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    return (L.nll_loss_forward(logp, target, None, 1, -100),
            L.nll_loss_forward(logp, target, weight, 0, 2),
            L.nll_loss_forward(logp, target, weight, 2, 2),
            L.nll_loss_forward(one_logp, one_target, None, 1, -100))


@parity("nll_loss_forward.output", loss_inputs,
        reference=lambda L, logp, target, weight, *rest: L.nll_loss_forward(logp, target, weight,
                                                                            1, 2))
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    outs = L.empty([]), L.empty([])
    return aliased(L.nll_loss_forward(logp, target, weight, 1, 2, out=outs), *outs)


@parity("nll_loss_backward", loss_inputs)
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    results = []
    for reduction, grad in ((0, g), (1, g[0]), (2, g[1])):
        total_weight = L.nll_loss_forward(logp, target, weight, reduction, 2)[1]
        results.append(L.nll_loss_backward(grad, logp, target, weight, reduction, 2,
                                           total_weight))
    return results


@parity("nll_loss_backward.grad_input", loss_inputs,
        reference=lambda L, logp, target, weight, y, x, one_target, one_logp, g:
        L.nll_loss_backward(g[0], logp, target, None, 1, -100,
                            L.nll_loss_forward(logp, target, None, 1, -100)[1]))
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    total_weight = L.nll_loss_forward(logp, target, None, 1, -100)[1]
    out = L.empty([4, 5])
    return aliased(L.nll_loss_backward(g[0], logp, target, None, 1, -100, total_weight, out=out),
                   out)


@parity("nll_loss", loss_inputs)
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    return (L.nll_loss(logp, target), L.nll_loss(logp, target, weight, 2, 2),
            L.nll_loss(logp, target, weight=weight, reduction=0, ignore_index=1),
            L.nll_loss(one_logp, one_target))


@parity("cross_entropy_loss", loss_inputs)
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    return (L.cross_entropy_loss(x, target), L.cross_entropy_loss(x, target, weight, 0, 2),
            L.cross_entropy_loss(x, target, weight, label_smoothing=0.2),
            L.cross_entropy_loss(x, target, reduction=2, ignore_index=4, label_smoothing=0.1))


@parity("mse_loss", loss_inputs)
def _(L, logp, target, weight, y, x, one_target, one_logp, g):
    return L.mse_loss(x, y), L.mse_loss(x, y, 0), L.mse_loss(x, y, reduction=2)


# --- optimizer steps --------------------------------------------------------------------------


def optimizer_inputs(r):
    return [normal(r, 3, 4), normal(r, 3, 4), normal(r, 3, 4), uniform(r, 0.1, 1, 3, 4)]


def sgd_reference(param, grad, buffer, lr, momentum, dampening, weight_decay, nesterov,
                  first_step):
    grad = grad + weight_decay * param
    if momentum != 0:
        buffer = grad if first_step else momentum * buffer + (1 - dampening) * grad
        step = grad + momentum * buffer if nesterov else buffer
    else:
        buffer, step = grad, grad
    return param - lr * step, buffer


SGD_SETTINGS = [
    dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True, first_step=False),
    dict(lr=0.05, momentum=0.5, dampening=0.25, weight_decay=0.0, nesterov=False,
         first_step=True),
    dict(lr=0.2, momentum=0.0, dampening=0.0, weight_decay=0.1, nesterov=False,
         first_step=False),
]


def sgd_references(L, param, grad, buffer, _):
    return [sgd_reference(param, grad, buffer, **settings) for settings in SGD_SETTINGS]


@parity("_sgd_step.out", optimizer_inputs, reference=sgd_references)
def _(L, param, grad, buffer, _):
    results = []
    for settings in SGD_SETTINGS:
        p, b = param.clone(), buffer.clone()
        results.append(aliased(L._sgd_step(p, grad, b, **settings, out=(p, b)), p, b))
    return results


def adamw_reference(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, eps,
                    step):
    param = param * (1 - lr * weight_decay)
    exp_avg = beta1 * exp_avg + (1 - beta1) * grad
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    denominator = exp_avg_sq.sqrt() / math.sqrt(bias_correction2) + eps
    return param - lr / bias_correction1 * exp_avg / denominator, exp_avg, exp_avg_sq


ADAMW_SETTINGS = [
    dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, step=1),
    dict(lr=0.1, beta1=0.8, beta2=0.99, weight_decay=0.0, eps=1e-3, step=7),
]


def adamw_references(L, param, grad, exp_avg, exp_avg_sq):
    return [adamw_reference(param, grad, exp_avg, exp_avg_sq, **settings)
            for settings in ADAMW_SETTINGS]


@parity("_adamw_step.out", optimizer_inputs, reference=adamw_references)
def _(L, param, grad, exp_avg, exp_avg_sq):
    results = []
    for settings in ADAMW_SETTINGS:
        p, m, v = param.clone(), exp_avg.clone(), exp_avg_sq.clone()
        results.append(aliased(L._adamw_step(p, grad, m, v, **settings, out=(p, m, v)), p, m, v))
    return results


# --- running and comparing --------------------------------------------------------------------

TOLERANCE = {  # (rtol, atol) by result dtype; integer and bool results are compared exactly
    "float64": (1e-9, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}


def as_numpy(result):
    """Nested tuples and lists of (dtype name, NumPy array), from either library's tensors."""
    if isinstance(result, (tuple, list)):
        return [as_numpy(each) for each in result]
    if isinstance(result, torch.Tensor):
        name = str(result.dtype).rsplit(".", 1)[-1]
        tensor = result.detach().cpu()
        return name, (tensor.float() if name == "bfloat16" else tensor).numpy()
    if isinstance(result, bp.Tensor):
        name = str(result.dtype).rsplit(".", 1)[-1]
        return name, (result.to(bp.float32) if name == "bfloat16" else result).cpu().numpy()
    raise TypeError(f"a case returned {type(result).__name__}, not tensors")


def inputs_of(name):
    generator = np.random.default_rng(zlib.crc32(name.encode()))
    return CASES[name].inputs(generator)


@functools.lru_cache(maxsize=None)
def torch_result(name):
    case = CASES[name]
    lib = Lib(torch, "cpu")
    run = case.reference or case.run
    return as_numpy(run(lib, *convert(lib, inputs_of(name))))


def assert_close(got, want, tolerance, where="result"):
    if isinstance(want, list):
        assert isinstance(got, list), f"{where}: a tensor where a tuple was expected"
        assert len(got) == len(want), f"{where}: {len(got)} results, expected {len(want)}"
        for index, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, tolerance, f"{where}[{index}]")
        return
    (got_dtype, got_array), (want_dtype, want_array) = got, want
    assert got_dtype == want_dtype, f"{where}: dtype {got_dtype}, expected {want_dtype}"
    assert got_array.shape == want_array.shape, (
        f"{where}: shape {got_array.shape}, expected {want_array.shape}")
    if want_dtype in TOLERANCE:
        rtol, atol = tolerance.get(want_dtype, TOLERANCE[want_dtype])
        np.testing.assert_allclose(got_array, want_array, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got_array, want_array, err_msg=where)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_gives_pytorchs_result(name, device):
    case = CASES[name]
    lib = Lib(bp, device)
    got = as_numpy(case.run(lib, *convert(lib, inputs_of(name))))
    assert_close(got, torch_result(name), case.tolerance)


def test_every_ops_yaml_entry_has_a_case():
    names = {entry.name for entry in read_entries()}
    assert sorted(names - set(CASES)) == [], "ops.yaml entries without a parity case"
    assert sorted(set(CASES) - names) == [], "parity cases for entries ops.yaml lacks"


def test_the_host_is_among_the_devices_compared():
    assert "cpu" in DEVICES
