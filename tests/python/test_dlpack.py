"""DLPack between Backplane, NumPy and PyTorch: shared memory both ways, capsule ownership, the
device tuple, and bp.from_dlpack's cost against torch.from_dlpack's."""

import gc
import timeit

import numpy as np
import pytest
import torch

import backplane as bp

NUMPY_DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int32", "int64"]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_shares_memory(dtype):
    array = np.arange(12).reshape(3, 4).astype(dtype)
    x = bp.from_dlpack(array)
    assert x.dtype == getattr(bp, dtype) and tuple(x.shape) == (3, 4)
    np.testing.assert_array_equal(x.numpy(), array)
    array[1, 2] = 7
    assert x[1, 2].item() == 7
    x[0, 0] = 5
    assert array[0, 0] == 5


def test_from_numpy_strided_and_zero_dim():
    array = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::3]
    x = bp.from_dlpack(array)
    np.testing.assert_array_equal(x.numpy(), array)
    assert x.stride() == tuple(s // 4 for s in array.strides)
    scalar = bp.from_dlpack(np.array(2.5))
    assert scalar.dim() == 0 and scalar.item() == 2.5
    assert bp.from_numpy(array).tolist() == array.tolist()


def test_the_array_outlives_nothing():
    x = bp.from_dlpack(np.arange(5, dtype=np.int64))
    gc.collect()
    assert x.tolist() == [0, 1, 2, 3, 4]
    array = bp.from_dlpack(np.ones(3)).numpy()
    gc.collect()
    np.testing.assert_array_equal(array, np.ones(3))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES + ["bfloat16"])
def test_torch_both_ways(dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    x = bp.from_dlpack(t)
    assert x.dtype == getattr(bp, dtype)
    assert x.tolist() == t.tolist()
    x[0, 1] = 9
    assert t[0, 1].item() == 9
    back = torch.from_dlpack(x)
    assert back.dtype == t.dtype and back.tolist() == t.tolist()
    back[1, 2] = 4
    assert x[1, 2].item() == 4
    transposed = bp.from_dlpack(t.t())
    assert transposed.tolist() == t.t().tolist()


def test_numpy_reads_a_tensor():
    x = bp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    array = np.from_dlpack(x[:, 1:])
    np.testing.assert_array_equal(array, [[2.0, 3.0], [5.0, 6.0]])
    x[0, 2] = -1.0
    assert array[0, 1] == -1.0


def capsule_name(capsule):
    return repr(capsule).split('"')[1]


def test_capsules():
    x = bp.tensor([1.0, 2.0])
    capsule = x.__dlpack__()
    assert capsule_name(capsule) == "dltensor"
    del x
    gc.collect()
    y = bp.from_dlpack(capsule)
    assert capsule_name(capsule) == "used_dltensor"
    assert y.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="consumed once"):
        bp.from_dlpack(capsule)
    # Capsules nobody consumes give their tensor back when they go.
    for _ in range(100):
        bp.zeros(1000).__dlpack__(stream=None)
    gc.collect()
    with pytest.raises(TypeError, match="stream"):
        bp.zeros(1).__dlpack__(stream="default")


def test_round_trip_shares_the_storage():
    x = bp.zeros(3)
    y = bp.from_dlpack(x.__dlpack__())
    y += 1
    assert x.tolist() == [1.0, 1.0, 1.0]
    assert x._version == y._version


def test_from_dlpack_of_a_tensor_is_a_detached_alias():
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    y = bp.from_dlpack(x)
    assert y is not x and not y.requires_grad
    y[0] = 3.0
    assert x.tolist() == [3.0, 2.0]


def test_from_dlpack_errors():
    with pytest.raises(TypeError, match="__dlpack__"):
        bp.from_dlpack([1, 2])

    class Broken:
        def __dlpack__(self):
            return 3

    with pytest.raises(TypeError, match="not a DLPack capsule"):
        bp.from_dlpack(Broken())

    class Failing:
        def __dlpack__(self):
            raise BufferError("no export")

    with pytest.raises(BufferError, match="no export"):
        bp.from_dlpack(Failing())


def test_dlpack_device():
    assert bp.zeros(1).__dlpack_device__() == (1, 0)
    for device in bp.devices():
        if device.type == "cpu":
            continue
        x = bp.tensor([1.0, 2.0], device=device)
        kind, index = x.__dlpack_device__()
        assert index == device.index
        assert kind not in (1, 3)
        y = bp.from_dlpack(x.__dlpack__())
        assert y.device == device
        y += 1
        assert x.cpu().tolist() == [2.0, 3.0]


def test_from_dlpack_is_as_cheap_as_torch():
    array = np.ones(16, dtype=np.float32)

    def best(function):
        return min(timeit.repeat(lambda: function(array), number=2000, repeat=7))

    best(bp.from_dlpack)
    best(torch.from_dlpack)
    assert best(bp.from_dlpack) <= best(torch.from_dlpack)
