"""The package imports, and its types behave as PyTorch's do: dtypes, devices, errors, the
basic properties of a tensor and the grad-mode context managers."""

import pickle
import subprocess
import sys
import threading

import pytest

import backplane as bp


def test_softmax_of_a_small_tensor():
    y = bp.softmax(bp.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
    assert y.shape == (2, 2)
    assert y.dtype is bp.float32
    row = y.tolist()[0]
    assert row[0] == pytest.approx(0.2689414, rel=1e-6)
    assert row[0] + row[1] == pytest.approx(1.0, rel=1e-6)


def test_the_package_exports_the_types_and_ops():
    for name in ["Tensor", "dtype", "device", "Error", "add", "softmax", "tensor"]:
        assert hasattr(bp, name), name
    assert bp.add is bp._C.add  # no Python layer on the op path
    assert callable(bp.autograd.grad) and callable(bp.autograd.backward)


def test_dtypes_are_unique_objects_with_pytorch_names():
    assert bp.float is bp.float32 and bp.double is bp.float64 and bp.half is bp.float16
    assert bp.long is bp.int64 and bp.int is bp.int32
    assert repr(bp.float32) == "backplane.float32"
    assert repr(bp.bool) == "backplane.bool"
    sizes = {bp.float32: 4, bp.float64: 8, bp.float16: 2, bp.bfloat16: 2, bp.int8: 1,
             bp.uint8: 1, bp.int32: 4, bp.int64: 8, bp.bool: 1}
    for dtype, size in sizes.items():
        assert isinstance(dtype, bp.dtype)
        assert dtype.itemsize == size
    assert bp.bfloat16.is_floating_point and not bp.int64.is_floating_point
    assert pickle.loads(pickle.dumps(bp.float16)) is bp.float16
    with pytest.raises(TypeError):
        bp.dtype()


def test_devices_parse_compare_and_hash():
    cpu = bp.device("cpu")
    assert cpu.type == "cpu" and cpu.index == 0
    assert str(cpu) == "cpu" and repr(cpu) == "device(type='cpu')"
    assert cpu == "cpu" and cpu == "cpu:0" and cpu == bp.device("cpu", 0)
    assert cpu != "cpu:7" and cpu != "no such device" and cpu != 3
    assert hash(cpu) == hash(bp.device("cpu:0"))
    assert {cpu: 1}[bp.device("cpu")] == 1
    assert bp.device(cpu) is cpu
    assert pickle.loads(pickle.dumps(cpu)) == cpu


@pytest.mark.parametrize("spec, words", [
    ("no_such_backend", "unknown device type 'no_such_backend'"),
    ("cpu:9", "device index 9 is out of range"),
    ("cpu:x", "invalid device string"),
])
def test_a_device_string_that_names_no_device_is_a_value_error(spec, words):
    with pytest.raises(ValueError, match=words):
        bp.device(spec)


def test_device_arguments_of_the_wrong_type():
    with pytest.raises(TypeError, match="must be str"):
        bp.device(0)
    with pytest.raises(TypeError, match="'index' must be int"):
        bp.device("cpu", "0")
    with pytest.raises(ValueError, match="either in the string or as 'index'"):
        bp.device("cpu:0", 0)


def test_error_is_a_runtime_error_with_the_core_message():
    assert issubclass(bp.Error, RuntimeError)
    with pytest.raises(bp.Error, match="cannot be broadcast"):
        bp.add(bp.tensor([1.0, 2.0]), bp.tensor([1.0, 2.0, 3.0]))


def test_tensor_properties():
    x = bp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert isinstance(x, bp.Tensor)
    assert x.shape == (2, 3) and x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert x.stride() == (3, 1) and x.stride(0) == 3
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 6 and len(x) == 2
    assert x.dtype is bp.float32 and x.device == "cpu" and x.is_cpu
    assert x.element_size() == 4 and x.is_contiguous() and x.storage_offset() == 0
    assert isinstance(x.data_ptr(), int) and x.data_ptr() != 0
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        x.size(2)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(bp.tensor(1.0))


def test_iteration_goes_over_the_first_dimension():
    x = bp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert [row.tolist() for row in x] == [[1.0, 2.0], [3.0, 4.0]]
    first, second = x
    assert second.tolist() == [3.0, 4.0]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(bp.tensor(1.0))


def test_tensors_hash_by_identity():
    x = bp.tensor([1.0])
    y = bp.tensor([1.0])
    table = {x: "x", y: "y"}
    assert table[x] == "x" and table[y] == "y"


def test_repr_comes_from_tensor_str():
    assert repr(bp.tensor([1.0, 2.0])).startswith("tensor(")
    assert str(bp.tensor([1.0, 2.0])) == repr(bp.tensor([1.0, 2.0]))


def test_named_returns_are_tuples_with_fields():
    result = bp.max(bp.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
    values, indices = result
    assert type(result).__name__ == "max"
    assert result.values.tolist() == values.tolist() == [5.0, 7.0]
    assert result.indices.tolist() == indices.tolist() == [1, 0]


def test_no_grad_and_enable_grad_as_blocks_and_decorators():
    assert bp.is_grad_enabled()
    with bp.no_grad():
        assert not bp.is_grad_enabled()
        with bp.enable_grad():
            assert bp.is_grad_enabled()
        assert not bp.is_grad_enabled()
    assert bp.is_grad_enabled()

    @bp.no_grad()
    def inside():
        return bp.is_grad_enabled()

    assert inside() is False and bp.is_grad_enabled()


def test_set_grad_enabled_applies_at_once_and_restores_as_a_block():
    bp.set_grad_enabled(False)
    try:
        assert not bp.is_grad_enabled()
    finally:
        bp.set_grad_enabled(True)
    with bp.set_grad_enabled(False):
        assert not bp.is_grad_enabled()
    assert bp.is_grad_enabled()

    @bp.set_grad_enabled(False)
    def inside():
        return bp.is_grad_enabled()

    assert bp.is_grad_enabled()
    assert inside() is False and bp.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with bp.no_grad():
        thread = threading.Thread(target=lambda: seen.append(bp.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


def test_a_grad_mode_restores_after_an_exception():
    with pytest.raises(KeyError):
        with bp.no_grad():
            raise KeyError
    assert bp.is_grad_enabled()


def test_the_module_imports_in_a_fresh_interpreter():
    # The extension resolves every symbol it needs at load time, not only the ones the tests
    # above reach.
    result = subprocess.run([sys.executable, "-X", "dev", "-c", "import backplane"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
