"""Properties checked over generated cases (hypothesis, derandomized so that every run draws the
same examples): broadcasting against NumPy, type promotion against PyTorch, and basic indexing
views against NumPy, writes through the view included."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import backplane as bp

DEVICES = [d for d in ("cpu", "opencl:0") if d in {str(each) for each in bp.devices()}]

# No example database: derandomized runs draw the same examples anyway, and the suites leave
# the source tree as they found it.
checked = settings(deadline=None, derandomize=True, database=None, max_examples=60)

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
NUMPY_DTYPES = {  # bfloat16 has no NumPy dtype: made from float32 on both sides
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
    "float64": np.float64,
}


def bp_tensor(array, dtype, device):
    t = bp.tensor(array, device=device)
    return t.to(bp.bfloat16) if dtype == "bfloat16" else t


def torch_tensor(array, dtype):
    t = torch.tensor(array)
    return t.to(torch.bfloat16) if dtype == "bfloat16" else t


def dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def host_array(tensor):
    if tensor.dtype == bp.bfloat16:
        tensor = tensor.to(bp.float32)
    return tensor.cpu().numpy()


# --- broadcasting -----------------------------------------------------------------------------

BROADCAST_OPS = {"add": np.add, "mul": np.multiply, "maximum": np.maximum}


@pytest.mark.parametrize("device", DEVICES)
@checked
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                min_side=0, max_side=4),
       op=st.sampled_from(sorted(BROADCAST_OPS)), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_as_numpy(device, shapes, op, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(shape).astype(np.float32) for shape in shapes.input_shapes)
    result = getattr(bp, op)(bp.tensor(a, device=device), bp.tensor(b, device=device))
    expected = BROADCAST_OPS[op](a, b)
    assert result.shape == shapes.result_shape == expected.shape
    np.testing.assert_allclose(host_array(result), expected, rtol=1e-6)


@checked
@given(shapes=st.tuples(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                        hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)),
       op=st.sampled_from(sorted(BROADCAST_OPS)))
def test_shapes_numpy_cannot_broadcast_raise_an_error_naming_both(shapes, op):
    a, b = (np.zeros(shape, dtype=np.float32) for shape in shapes)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        with pytest.raises(bp.Error) as error:
            getattr(bp, op)(bp.tensor(a), bp.tensor(b))
        message = str(error.value)
        for shape in shapes:
            assert str(list(shape)) in message
    else:
        assert getattr(bp, op)(bp.tensor(a), bp.tensor(b)).shape == np.broadcast_shapes(
            a.shape, b.shape)


# --- type promotion ---------------------------------------------------------------------------

# Backplane has no int16: where PyTorch widens int8 with uint8 to int16, Backplane takes int32
# (core/src/tensor/type_promotion.cpp).
NO_INT16 = {"int16": "int32"}


def expected_dtype(torch_result):
    name = dtype_name(torch_result.dtype)
    return NO_INT16.get(name, name)


def small_values(dtype, shape, rng):
    # 1..3: representable in every dtype, never zero (division), and exact in bfloat16.
    return rng.integers(1, 4, shape).astype(NUMPY_DTYPES[dtype]) if dtype != "bool" else (
        rng.integers(0, 2, shape).astype(np.bool_))


TENSOR_OPS = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "gt"]


def run_both(op, make_args):
    """(bp's result or its exception, torch's result or its exception)."""
    results = []
    for module, args in ((bp, make_args("bp")), (torch, make_args("torch"))):
        try:
            results.append(getattr(module, op)(*args))
        except (RuntimeError, TypeError) as error:
            results.append(error)
    return results


def assert_same_result_dtype(ours, theirs, what):
    if isinstance(theirs, Exception):
        # PyTorch refuses it (sub of two bools): so does Backplane.
        assert isinstance(ours, Exception), f"{what}: PyTorch refuses it ({theirs}), not bp"
        return
    assert not isinstance(ours, Exception), f"{what}: refused, PyTorch computes it ({ours})"
    assert dtype_name(ours.dtype) == expected_dtype(theirs), what
    np.testing.assert_allclose(host_array(ours).astype(np.float64),
                               theirs.to(torch.float64).numpy(), rtol=1e-2, err_msg=what)


PAIRS = [(left, right) for left in DTYPES for right in DTYPES]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("left,right", PAIRS, ids=[f"{l}-{r}" for l, r in PAIRS])
@settings(deadline=None, derandomize=True, database=None, max_examples=6)
@given(ranks=st.sampled_from([(1, 1), (0, 1), (1, 0), (0, 0)]), seed=st.integers(0, 99))
def test_tensor_tensor_promotion_is_pytorchs(device, left, right, ranks, seed):
    # A 0-d operand promotes only across categories (bool < integer < floating), as in
    # PyTorch.
    rng = np.random.default_rng(seed)
    a = small_values(left, (3,) if ranks[0] else (), rng)
    b = small_values(right, (3,) if ranks[1] else (), rng)

    def args(side):
        if side == "bp":
            return bp_tensor(a, left, device), bp_tensor(b, right, device)
        return torch_tensor(a, left), torch_tensor(b, right)

    for op in TENSOR_OPS:
        what = f"{op}({left} {ranks[0]}-d, {right} {ranks[1]}-d)"
        assert_same_result_dtype(*run_both(op, args), what)


SCALARS = [True, 2, -3, 2.5, 0.5]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@settings(deadline=None, derandomize=True, database=None, max_examples=3)
@given(seed=st.integers(0, 99))
def test_tensor_python_number_promotion_is_pytorchs(device, dtype, seed):
    # Python numbers are weak: they change the dtype only across categories.
    a = small_values(dtype, (3,), np.random.default_rng(seed))
    for op in TENSOR_OPS:
        for scalar in SCALARS:

            def args(side):
                tensor = bp_tensor(a, dtype, device) if side == "bp" else torch_tensor(a, dtype)
                return tensor, scalar

            ours, theirs = run_both(op, args)
            if isinstance(theirs, Exception) and op in ("maximum", "minimum"):
                # maximum and minimum take tensors only, in both libraries.
                assert isinstance(ours, TypeError)
                continue
            assert_same_result_dtype(ours, theirs, f"{op}({dtype}, {scalar!r})")


OPERATORS = {
    "x + s": lambda x, s: x + s, "x - s": lambda x, s: x - s, "x * s": lambda x, s: x * s,
    "x / s": lambda x, s: x / s, "s + x": lambda x, s: s + x, "s * x": lambda x, s: s * x,
    "s - x": lambda x, s: s - x, "s / x": lambda x, s: s / x,
}


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
@settings(deadline=None, derandomize=True, database=None, max_examples=3)
@given(seed=st.integers(0, 99))
def test_operators_with_python_numbers_promote_as_pytorchs(dtype, seed):
    a = small_values(dtype, (3,), np.random.default_rng(seed))
    for name, apply in OPERATORS.items():
        for scalar in SCALARS[1:]:
            assert_same_result_dtype(apply(bp_tensor(a, dtype, "cpu"), scalar),
                                     apply(torch_tensor(a, dtype), scalar),
                                     f"{name} with s = {scalar!r}")


# --- views ------------------------------------------------------------------------------------


def positive_steps(index):
    """basic_indices draws negative steps too, which PyTorch and Backplane refuse."""
    parts = index if isinstance(index, tuple) else (index,)
    return tuple(slice(p.start, p.stop, abs(p.step)) if isinstance(p, slice) and p.step else p
                 for p in parts)


@st.composite
def shapes_and_indices(draw, swapped=False):
    """A shape, and a basic index into it (or into it with its first and last dims swapped)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    indexed = shape[-1:] + shape[1:-1] + shape[:1] if swapped and len(shape) > 1 else shape
    index = draw(hnp.basic_indices(indexed, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, positive_steps(index)


@pytest.mark.parametrize("device", DEVICES)
@checked
@given(case=shapes_and_indices())
def test_indexing_gives_numpys_view(device, case):
    shape, index = case
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = bp.tensor(base, device=device)
    view = x[index]
    expected = np.asarray(base[index])
    assert view.shape == expected.shape
    np.testing.assert_array_equal(host_array(view), expected)


@pytest.mark.parametrize("device", DEVICES)
@checked
@given(case=shapes_and_indices())
def test_writes_through_a_view_are_seen_in_the_base(device, case):
    shape, index = case
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = bp.tensor(base, device=device)
    view = x[index]
    new = -1.0 - np.arange(np.prod(view.shape), dtype=np.float32).reshape(view.shape)
    view.copy_(bp.tensor(new))
    base[index] = new
    np.testing.assert_array_equal(host_array(x), base)


@pytest.mark.parametrize("device", DEVICES)
@checked
@given(case=shapes_and_indices(), value=st.sampled_from([7, -2.5, True]))
def test_assigning_to_an_index_writes_the_base_as_numpy(device, case, value):
    shape, index = case
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = bp.tensor(base, device=device)
    x[index] = value
    base[index] = value
    np.testing.assert_array_equal(host_array(x), base)


@checked
@given(case=shapes_and_indices(swapped=True))
def test_a_view_of_a_view_still_aliases_the_base(case):
    shape, index = case
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = bp.tensor(base)
    x.transpose(0, -1)[index].fill_(-5)
    np.swapaxes(base, 0, -1)[index] = -5
    np.testing.assert_array_equal(host_array(x), base)
