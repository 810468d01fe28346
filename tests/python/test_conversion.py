"""Tensors to and from Python: to(), cpu(), numpy(), tolist(), item(), bp.tensor and the
factories, against NumPy and PyTorch."""

import numpy as np
import pytest
import torch

import backplane as bp

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]


def other_devices():
    return [d for d in bp.devices() if d.type != "cpu"]


# --- to and cpu ---------------------------------------------------------------------------------


def test_to_forms():
    x = bp.tensor([1.5, 2.5])
    assert x.to(bp.float64).dtype == bp.float64
    assert x.to("cpu") is x
    assert x.to(bp.float32) is x
    assert x.to(x) is x
    assert x.to(device="cpu", dtype=bp.float32) is x
    assert x.to(bp.float32, copy=True) is not x
    y = x.to("cpu", bp.int32)
    assert y.dtype == bp.int32 and y.tolist() == [1, 2]
    z = x.to(device=bp.device("cpu"), dtype=bp.float16)
    assert z.dtype == bp.float16 and z.tolist() == [1.5, 2.5]
    assert x.to(bp.int64, False, True).tolist() == [1, 2]
    assert x.to(bp.tensor([1], dtype=bp.int8)).dtype == bp.int8
    copied = x.to("cpu", copy=True)
    copied[0] = 9.0
    assert x.tolist() == [1.5, 2.5]


@pytest.mark.parametrize(
    "args, kwargs, error",
    [
        ((1.5,), {}, TypeError),
        (("cpu", "cpu"), {}, TypeError),
        ((bp.float32,), {"dtype": bp.float32}, TypeError),
        (("nodevice",), {}, ValueError),
        ((bp.float32, False, False, False), {}, TypeError),
        ((), {"colour": 1}, TypeError),
        ((), {"copy": 1}, TypeError),
    ],
)
def test_to_errors(args, kwargs, error):
    with pytest.raises(error):
        bp.tensor([1.0]).to(*args, **kwargs)


def test_cpu_returns_self_on_the_host():
    x = bp.tensor([1.0])
    assert x.cpu() is x


def test_to_and_from_another_device():
    if not other_devices():
        pytest.skip("no device but the host is loaded")
    device = other_devices()[0]
    x = bp.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = x.to(device, bp.float16)
    assert y.device == device and y.dtype == bp.float16
    assert y.to(device) is y
    back = y.cpu()
    assert back.device == bp.device("cpu") and back.tolist() == x.tolist()
    assert y.tolist() == x.tolist()
    assert y[1, 0].item() == 3.0


# --- numpy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_numpy_shares_memory(dtype):
    x = bp.tensor([[1, 0, 3], [2, 1, 0]], dtype=getattr(bp, dtype))
    array = x.numpy()
    assert array.dtype == np.dtype(dtype)
    expected = torch.tensor([[1, 0, 3], [2, 1, 0]]).to(getattr(torch, dtype))
    np.testing.assert_array_equal(array, expected.numpy())
    array[0, 1] = 1
    assert x[0, 1].item() == 1
    column = x[:, 2].numpy()
    np.testing.assert_array_equal(column, array[:, 2])
    assert column.strides == array[:, 2].strides


def test_numpy_keeps_the_memory_alive():
    array = bp.tensor([1.0, 2.0]).numpy()
    bools = bp.tensor([True, False]).numpy()
    np.testing.assert_array_equal(array, [1.0, 2.0])
    np.testing.assert_array_equal(bools, [True, False])


def test_numpy_errors():
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\) instead"):
        bp.tensor([1.0], requires_grad=True).numpy()
    with pytest.raises(TypeError, match="bfloat16"):
        bp.tensor([1.0], dtype=bp.bfloat16).numpy()
    forced = bp.tensor([1.0], requires_grad=True).numpy(force=True)
    np.testing.assert_array_equal(forced, [1.0])
    if other_devices():
        device = other_devices()[0]
        x = bp.tensor([1.0], device=device)
        message = f"can't convert {device} device type tensor to numpy. Use Tensor.cpu()"
        with pytest.raises(TypeError, match=message):
            x.numpy()
        np.testing.assert_array_equal(x.numpy(force=True), [1.0])


# --- tolist and item ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_tolist_matches_torch(dtype):
    values = [[1.5, 0.0, -3.25], [2.0, 1.0, 0.5]]
    t = torch.tensor(values).to(getattr(torch, dtype))
    x = bp.tensor(values).to(getattr(bp, dtype))
    assert x.tolist() == t.tolist()
    assert x[:, 1].tolist() == t[:, 1].tolist()
    assert x[1, 2].tolist() == t[1, 2].tolist()
    assert type(x[1, 2].item()) is type(t[1, 2].item())
    assert x[1, 2].item() == t[1, 2].item()


def test_tolist_of_empty_and_strided():
    assert bp.zeros(2, 0).tolist() == [[], []]
    assert bp.zeros(0).tolist() == []
    x = bp.tensor(np.arange(24).reshape(2, 3, 4))
    assert x[:, ::2, 1:].tolist() == np.arange(24).reshape(2, 3, 4)[:, ::2, 1:].tolist()


def test_item_errors():
    with pytest.raises(RuntimeError, match="3 elements"):
        bp.zeros(3).item()
    with pytest.raises(RuntimeError):
        bp.zeros(0).item()


# --- bp.tensor ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        3,
        3.5,
        True,
        [],
        [[]],
        [True, 1],
        [1, 2.0],
        [True, False],
        [[1, 2], [3, 4]],
        ((1.5, 2), [3, 4]),
        [[[1], [2]], [[3], [4]]],
        [-(2**63), 2**63 - 1],
        [np.float32(1.5), np.int64(2)],
        [np.int32(4), 5],
    ],
    ids=repr,
)
def test_tensor_infers_like_torch(data):
    expected = torch.tensor(data)
    got = bp.tensor(data)
    assert repr(got.dtype) == str(expected.dtype).replace("torch.", "backplane.")
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_dtype(dtype):
    data = [[1.75, -2.0], [0.0, 3.0]] if dtype != "uint8" else [[1.75, 2.0], [0.0, 3.0]]
    expected = torch.tensor(data, dtype=getattr(torch, dtype))
    got = bp.tensor(data, dtype=getattr(bp, dtype))
    assert got.dtype == getattr(bp, dtype)
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2],
        np.arange(6, dtype=np.float64)[::-1],
        np.arange(6, dtype=np.float16).reshape(3, 2).T,
        np.array([True, False]),
        np.array(2.5, dtype=np.float32),
        np.float64(2.0),
        np.zeros((2, 0), dtype=np.uint8),
        np.arange(4, dtype=np.int8),
        np.arange(4, dtype=np.int64),
    ],
    ids=lambda a: f"{a.dtype}{a.shape}",
)
def test_tensor_copies_arrays(array):
    got = bp.tensor(array)
    assert got.dtype == getattr(bp, str(array.dtype))
    assert tuple(got.shape) == array.shape
    np.testing.assert_array_equal(got.numpy(), array)
    if array.size:
        writable = np.array(array)
        copied = bp.tensor(writable)
        writable.flat[0] = 1
        assert copied.numpy().flat[0] == array.flat[0]


def test_tensor_from_read_only_buffers_and_other_libraries():
    array = np.arange(3, dtype=np.float32)
    array.flags.writeable = False
    assert bp.tensor(array).tolist() == [0.0, 1.0, 2.0]
    assert bp.tensor(torch.arange(4)).tolist() == [0, 1, 2, 3]
    assert bp.tensor(torch.arange(4)).dtype == bp.int64
    assert bp.tensor([torch.tensor(1.5), 2]).tolist() == [1.5, 2.0]
    assert bp.tensor([bp.tensor(1), bp.tensor(2)]).dtype == bp.int64


def test_tensor_from_tensor_is_a_detached_copy():
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    y = bp.tensor(x)
    assert not y.requires_grad
    y[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    assert bp.tensor(x, dtype=bp.float64).dtype == bp.float64


def test_tensor_options():
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert bp.tensor(np.ones(2), dtype=bp.float32).dtype == bp.float32
    with pytest.raises(RuntimeError, match="floating-point"):
        bp.tensor([1, 2], requires_grad=True)
    if other_devices():
        device = other_devices()[0]
        y = bp.tensor([[1, 2]], device=device, dtype=bp.float16)
        assert y.device == device and y.dtype == bp.float16 and y.tolist() == [[1.0, 2.0]]
        assert bp.tensor(3.5, device=device).device == device


@pytest.mark.parametrize(
    "data, error, match",
    [
        ([[1, 2], [3]], ValueError, "expected a sequence of length 2 at dim 1"),
        ([[1, 2], 3], ValueError, "ragged"),
        ([1, [2]], ValueError, "ragged"),
        (["a"], TypeError, r"element \[0\] is a str"),
        ("abc", TypeError, "not str"),
        ([2**70], OverflowError, "int64"),
        (object(), TypeError, "not object"),
        (np.array(["a"]), TypeError, "format"),
        (np.array([1], dtype=">i4"), TypeError, "format"),
        (np.array([1], dtype=np.int16), TypeError, "format"),
    ],
    ids=repr,
)
def test_tensor_errors(data, error, match):
    with pytest.raises(error, match=match):
        bp.tensor(data)


def test_tensor_overflow_for_the_dtype():
    with pytest.raises(OverflowError, match="uint8"):
        bp.tensor([300], dtype=bp.uint8)
    with pytest.raises(OverflowError, match="int8"):
        bp.tensor([-129.0], dtype=bp.int8)
    with pytest.raises(OverflowError, match="float32"):
        bp.tensor([1e300], dtype=bp.float32)
    assert bp.tensor([float("inf")], dtype=bp.float32).tolist() == [float("inf")]
    assert bp.tensor([-1.9, 1.9], dtype=bp.int32).tolist() == [-1, 1]


# --- factories ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_factories(name):
    make = getattr(bp, name)
    for args in [(2, 3), ((2, 3),), ([2, 3],), ((),), (0,)]:
        expected_shape = tuple(getattr(torch, name)(*args).shape)
        x = make(*args)
        assert tuple(x.shape) == expected_shape and x.dtype == bp.float32
    assert tuple(make(size=(4,)).shape) == (4,)
    x = make(2, dtype=bp.float64, requires_grad=True)
    assert x.dtype == bp.float64 and x.requires_grad
    if name in ("zeros", "ones"):
        assert make(2, 2).tolist() == getattr(torch, name)(2, 2).tolist()
        assert make(3, dtype=bp.int32).tolist() == [int(name == "ones")] * 3


@pytest.mark.parametrize(
    "args, kwargs, error",
    [
        ((), {}, TypeError),
        ((2.0,), {}, TypeError),
        ((2, "a"), {}, TypeError),
        ((True,), {}, TypeError),
        ((2,), {"size": (2,)}, TypeError),
        ((2,), {"dtype": "float32"}, TypeError),
        ((2,), {"device": 0.5}, TypeError),
        ((-1,), {}, RuntimeError),
        ((2,), {"layout": None}, TypeError),
    ],
)
def test_size_factory_errors(args, kwargs, error):
    with pytest.raises(error):
        bp.zeros(*args, **kwargs)


def test_random_factories_follow_the_seed():
    bp.manual_seed(7)
    a = bp.rand(100)
    b = bp.randn(3, 3)
    bp.manual_seed(7)
    assert bp.rand(100).tolist() == a.tolist()
    assert bp.randn(3, 3).tolist() == b.tolist()
    values = a.numpy()
    assert values.min() >= 0.0 and values.max() < 1.0
    bp.manual_seed(-1)
    bp.manual_seed(2**64 - 1)
    with pytest.raises(ValueError):
        bp.manual_seed(2**64)
    with pytest.raises(TypeError):
        bp.manual_seed(1.0)


@pytest.mark.parametrize("fill", [True, 3, 2.5, -1])
def test_full(fill):
    expected = torch.full((2, 3), fill)
    got = bp.full((2, 3), fill)
    assert repr(got.dtype) == str(expected.dtype).replace("torch.", "backplane.")
    assert got.tolist() == expected.tolist()
    assert bp.full([2], fill, dtype=bp.float64).dtype == bp.float64
    assert bp.full(size=(1,), fill_value=fill).tolist() == [fill]


def test_like_factories():
    x = bp.tensor([[1, 2, 3]], dtype=bp.int32)
    for name in ["zeros_like", "ones_like", "empty_like"]:
        y = getattr(bp, name)(x)
        assert tuple(y.shape) == (1, 3) and y.dtype == bp.int32 and y.device == x.device
    assert bp.ones_like(x).tolist() == [[1, 1, 1]]
    assert bp.zeros_like(x, dtype=bp.float16).dtype == bp.float16
    assert bp.full_like(x, 7).tolist() == [[7, 7, 7]]
    assert bp.full_like(x, 7.9).dtype == bp.int32
    assert bp.rand_like(x, dtype=bp.float32).dtype == bp.float32
    assert bp.randn_like(bp.zeros(2, 2), requires_grad=True).requires_grad
    with pytest.raises(TypeError):
        bp.zeros_like([1, 2])
    if other_devices():
        device = other_devices()[0]
        z = bp.zeros_like(x, device=device)
        assert z.device == device and z.tolist() == [[0, 0, 0]]
        assert bp.zeros(2, device=device).device == device
