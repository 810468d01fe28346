"""What a Python caller sees when a call is wrong: bp.Error (a RuntimeError) with the core's
message for what the core refuses; TypeError naming the function, the argument and what it
accepts; ValueError and OverflowError for values an argument cannot take; and, after any of
them, tensors and the module as they were."""

import subprocess
import sys

import numpy as np
import pytest

import backplane as bp

HAS_OPENCL = "opencl:0" in {str(each) for each in bp.devices()}


@pytest.fixture
def x():
    return bp.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


# --- bp.Error -----------------------------------------------------------------------------------


def test_error_is_a_runtime_error():
    assert issubclass(bp.Error, RuntimeError)
    assert bp.Error.__module__ == "backplane"


def test_shape_mismatch_names_both_shapes(x):
    with pytest.raises(bp.Error) as error:
        bp.add(x, bp.tensor([1.0, 2.0]))
    assert "[2, 3]" in str(error.value) and "[2]" in str(error.value)


def test_the_core_error_is_caught_as_runtime_error(x):
    with pytest.raises(RuntimeError, match=r"dim 5 is out of range"):
        bp.softmax(x, 5)


@pytest.mark.skipif(not HAS_OPENCL, reason="needs a second device (opencl:0)")
def test_tensors_on_two_devices_name_both(x):
    with pytest.raises(bp.Error) as error:
        bp.add(x, x.to("opencl:0"))
    assert "cpu" in str(error.value) and "opencl:0" in str(error.value)


def test_a_dtype_the_op_does_not_compute_is_refused_by_name():
    with pytest.raises(bp.Error, match="sub"):
        bp.sub(bp.tensor([True]), bp.tensor([False]))


def test_an_impossible_view_names_the_shape():
    with pytest.raises(bp.Error, match=r"\[3\]"):
        bp.zeros(2).view([3])


# --- TypeError ----------------------------------------------------------------------------------


def test_wrong_type_names_function_argument_position_and_accepted_type(x):
    with pytest.raises(TypeError) as error:
        bp.softmax(x, "1")
    message = str(error.value)
    for part in ("softmax()", "'dim'", "position 2", "int", "str"):
        assert part in message


def test_wrong_type_lists_every_signature_and_why_each_failed(x):
    with pytest.raises(TypeError) as error:
        bp.add(x, "a")
    message = str(error.value)
    assert message.startswith("add()")
    assert "must be Tensor, not str" in message
    assert "must be a number (int, float or bool), not str" in message


def test_method_errors_name_the_method(x):
    with pytest.raises(TypeError, match=r"(?s)sum\(\).*'dim'"):
        x.sum("0")


def test_missing_argument_is_named():
    with pytest.raises(TypeError, match=r"softmax\(\) missing required argument 'dim'"):
        bp.softmax(bp.zeros(2))


def test_unknown_keyword_is_named_with_the_closest_one(x):
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'alpah'.*'alpha'"):
        bp.add(x, x, alpah=2)


def test_too_many_positional_arguments(x):
    with pytest.raises(TypeError, match=r"takes 2 positional arguments but 4"):
        bp.add(x, x, x, x)


def test_a_dtype_given_as_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="dtype"):
        bp.zeros(2, dtype="float32")


def test_tensor_of_a_string_is_a_type_error():
    with pytest.raises(TypeError, match=r"tensor\(\)"):
        bp.tensor("abc")


def test_from_dlpack_of_an_object_without_dlpack_is_a_type_error():
    with pytest.raises(TypeError, match="__dlpack__"):
        bp.from_dlpack(3)


# --- ValueError and OverflowError -----------------------------------------------------------


@pytest.mark.parametrize("text", ["cuda:x", "nonsense", "cpu:-1", "", "cpu:0:1"])
def test_bad_device_strings_are_value_errors(text):
    with pytest.raises(ValueError, match="device"):
        bp.device(text)


def test_unknown_device_type_names_the_loaded_backends():
    with pytest.raises(ValueError) as error:
        bp.zeros(2, device="gpu")
    message = str(error.value)
    assert "'device'" in message and "'gpu'" in message and "cpu" in message


def test_device_index_out_of_range_is_a_value_error(x):
    with pytest.raises(ValueError, match="cpu:5"):
        x.to("cpu:5")


def test_int_list_of_the_wrong_length_names_argument_and_length():
    with pytest.raises(ValueError) as error:
        bp.conv2d(bp.zeros(1, 1, 4, 4), bp.zeros(1, 1, 3, 3), stride=[1, 2, 3])
    message = str(error.value)
    assert "'stride'" in message and "2" in message and "3" in message


def test_out_tuple_of_the_wrong_length_is_a_value_error(x):
    with pytest.raises(ValueError, match="'out'"):
        bp.max(x, 1, out=(bp.empty([2]),))


def test_int_overflow_is_an_overflow_error_naming_the_argument(x):
    with pytest.raises(OverflowError, match="'dim'"):
        bp.softmax(x, 2**70)


def test_ragged_nested_lists_are_a_value_error():
    with pytest.raises(ValueError, match="ragged"):
        bp.tensor([[1, 2], [3]])


def test_a_consumed_capsule_cannot_be_consumed_again(x):
    capsule = x.__dlpack__()
    bp.from_dlpack(capsule)
    with pytest.raises(ValueError, match="capsule"):
        bp.from_dlpack(capsule)


def test_negative_slice_steps_are_refused_as_in_pytorch(x):
    with pytest.raises(ValueError, match="step"):
        x[::-1]


def test_index_out_of_range_is_an_index_error(x):
    with pytest.raises(IndexError, match="5"):
        x[5]
    with pytest.raises(IndexError):
        x[0, 0, 0]


# --- refusals at the edges: NumPy and DLPack ----------------------------------------------------


def test_numpy_of_a_tensor_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match=r"detach\(\)"):
        bp.tensor([1.0], requires_grad=True).numpy()


@pytest.mark.skipif(not HAS_OPENCL, reason="needs a device other than the host")
def test_numpy_of_a_device_tensor_is_refused(x):
    with pytest.raises(TypeError, match=r"cpu\(\)"):
        x.to("opencl:0").numpy()


def test_a_dtype_backplane_lacks_is_refused_when_shared():
    with pytest.raises(bp.Error, match="DLPack dtype"):
        bp.from_dlpack(np.zeros(3, dtype=np.complex64))


@pytest.mark.skipif(not HAS_OPENCL, reason="needs a device other than the host")
def test_a_device_tensor_pytorch_cannot_take_leaves_the_process_running():
    # PyTorch 1.13 refuses kDLOpenCL only after it has taken the capsule's tensor, and then
    # runs its deleter without marking the capsule used: the capsule must not run it again.
    code = "\n".join([
        "import backplane as bp, torch",
        "capsule = bp.zeros(2, device='opencl:0').__dlpack__()",
        "try:",
        "    torch.utils.dlpack.from_dlpack(capsule)",
        "except RuntimeError:",
        "    pass",
        "del capsule",
        "print(bp.add(bp.ones(2), 1).tolist())",
    ])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[2.0, 2.0]"


# --- nothing left broken ------------------------------------------------------------------------

FAILING_CALLS = {
    "core refusal": (lambda x: bp.add(x, bp.tensor([1.0, 2.0])), bp.Error),
    "wrong type": (lambda x: bp.add(x, "a"), TypeError),
    "unknown keyword": (lambda x: bp.add(x, x, alpah=1), TypeError),
    "bad device": (lambda x: x.to("gpu"), ValueError),
    "overflow": (lambda x: bp.softmax(x, 2**70), OverflowError),
    "in place, wrong shape": (lambda x: x.add_(bp.zeros(4)), bp.Error),
    "out=, wrong dtype": (lambda x: bp.add(x, x, out=bp.zeros(2, 3, dtype=bp.int32)), bp.Error),
    "setitem, wrong shape": (lambda x: x.__setitem__(0, bp.zeros(2)), bp.Error),
    "bad index": (lambda x: x[7], IndexError),
}


@pytest.mark.parametrize("name", sorted(FAILING_CALLS))
def test_after_an_error_the_tensor_is_unchanged_and_the_next_call_works(x, name):
    call, error_type = FAILING_CALLS[name]
    before = x.tolist()
    with pytest.raises(error_type):
        call(x)
    assert x.tolist() == before
    assert bp.add(x, x).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert bp.add(x, 1).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_a_failed_out_call_leaves_out_unchanged(x):
    out = bp.full([2, 3], 7.0)
    with pytest.raises(bp.Error):
        bp.add(x, bp.zeros(4), out=out)
    assert out.tolist() == [[7.0] * 3] * 2


def test_an_error_inside_no_grad_restores_grad_mode(x):
    assert bp.is_grad_enabled()
    with pytest.raises(bp.Error):
        with bp.no_grad():
            bp.add(x, bp.zeros(4))
    assert bp.is_grad_enabled()


def test_an_error_in_a_recorded_graph_leaves_backward_working():
    w = bp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(bp.Error):
        bp.mul(w, bp.zeros(2))
    bp.sum(bp.mul(w, w)).backward()
    assert w.grad.tolist() == [2.0, 4.0, 6.0]


def test_many_errors_in_a_row_then_a_call_works(x):
    for _ in range(1000):
        with pytest.raises(bp.Error):
            bp.add(x, bp.zeros(4))
        with pytest.raises(TypeError):
            bp.add(x, None)
    assert bp.add(x, x).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
