"""The argument parsing of the generated functions and of the hand-written ones, which share it:
which overload a call takes, and the message when none fits (python/src/arg_parser.cpp)."""

import numpy as np
import pytest

import backplane as bp


@pytest.fixture
def x():
    return bp.tensor([[1.0, 2.0], [3.0, 4.0]])


def test_overloads_are_chosen_by_argument_type(x):
    assert bp.add(x, x).tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert bp.add(x, 1).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert bp.add(x, x, alpha=2).tolist() == [[3.0, 6.0], [9.0, 12.0]]
    assert bp.add(x, True).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert bp.add(input=x, other=2.5).tolist() == [[3.5, 4.5], [5.5, 6.5]]


def test_out_returns_the_object_passed(x):
    out = bp.add(x, x)
    assert bp.add(x, x, out=out) is out
    assert out.tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_numpy_scalars_count_as_numbers(x):
    assert bp.add(x, np.float32(1.0)).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert bp.softmax(x, np.int64(1)).shape == (2, 2)


def test_keywords_built_at_run_time_match_too(x):
    # Not interned, unlike the names written in source code.
    name = "".join(["d", "i", "m"])
    assert bp.softmax(x, **{name: 1}).shape == (2, 2)


def test_wrong_type_with_one_signature(x):
    with pytest.raises(TypeError) as error:
        bp.softmax(x, "1")
    assert str(error.value) == "softmax(): argument 'dim' (position 2) must be int, not str"


def test_wrong_type_with_several_signatures_lists_each(x):
    with pytest.raises(TypeError) as error:
        bp.add(x, "a")
    message = str(error.value)
    assert message.startswith("add() received an invalid combination of arguments (Tensor, str)")
    assert "argument 'other' (position 2) must be Tensor, not str" in message
    assert "argument 'other' (position 2) must be a number (int, float or bool), not str" in message


def test_bool_is_not_an_int_and_float_is_not_an_int(x):
    with pytest.raises(TypeError, match="must be int, not bool"):
        bp.softmax(x, True)
    with pytest.raises(TypeError, match="must be int, not float"):
        bp.softmax(x, 1.0)


def test_unknown_keyword_suggests_the_closest_name(x):
    with pytest.raises(TypeError) as error:
        bp.add(x, x, alpah=2)
    assert str(error.value) == (
        "add() got an unexpected keyword argument 'alpah'; did you mean 'alpha'?")


def test_missing_required_argument(x):
    with pytest.raises(TypeError) as error:
        bp.softmax(x)
    assert str(error.value) == "softmax() missing required argument 'dim' (position 2)"


def test_too_many_positional_arguments(x):
    with pytest.raises(TypeError, match=r"softmax\(\) takes 3 positional arguments but 4"):
        bp.softmax(x, 1, None, 2)


def test_an_argument_given_twice(x):
    with pytest.raises(TypeError, match="got multiple values for argument 'dim'"):
        bp.softmax(x, 1, dim=1)


def test_int_list_of_the_wrong_length_is_a_value_error(x):
    image = bp.zeros(1, 1, 4, 4)
    weight = bp.zeros(1, 1, 3, 3)
    assert bp.conv2d(image, weight, stride=1).shape == (1, 1, 2, 2)
    assert bp.conv2d(image, weight, stride=[1, 1]).shape == (1, 1, 2, 2)
    with pytest.raises(ValueError) as error:
        bp.conv2d(image, weight, stride=[1, 2, 3])
    assert str(error.value) == ("conv2d(): argument 'stride' (position 4) must be an int or a "
                                "list of 2 ints, got a list of 3")
    with pytest.raises(TypeError, match=r"item 1 is str"):
        bp.conv2d(image, weight, stride=[1, "2"])


def test_int_overflow_is_an_overflow_error(x):
    with pytest.raises(OverflowError, match="argument 'dim' .* 64-bit"):
        bp.softmax(x, 2**70)
    with pytest.raises(OverflowError, match="argument 'alpha' is out of the range"):
        bp.add(x, x, alpha=2**64)


def test_dtype_arguments_take_dtype_objects_only(x):
    assert bp.softmax(x, 1, dtype=bp.float64).dtype is bp.float64
    with pytest.raises(TypeError, match="must be dtype or None, not str"):
        bp.softmax(x, 1, dtype="float64")


def test_device_strings_are_parsed_and_name_the_argument():
    assert bp.arange(3, device="cpu").tolist() == [0, 1, 2]
    assert bp.arange(3, device=bp.device("cpu")).device == "cpu"
    with pytest.raises(ValueError, match="arange\\(\\): argument 'device': unknown device type"):
        bp.arange(3, device="no_such_backend")
    with pytest.raises(TypeError, match="must be device, str or None, not int"):
        bp.arange(3, device=0)


def test_methods_count_positions_after_self(x):
    with pytest.raises(TypeError) as error:
        x.softmax("1")
    assert str(error.value) == "softmax(): argument 'dim' (position 1) must be int, not str"


def test_an_int_list_may_be_spread_as_separate_arguments(x):
    assert x.view(4).shape == (4,)
    assert x.view(1, 4).shape == (1, 4)
    assert x.view([4, 1]).shape == (4, 1)
    assert x.view((2, 2)).shape == (2, 2)
    assert x.permute(1, 0).tolist() == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(TypeError, match="argument 2 is str"):
        x.view(2, "2")


# --- the hand-written functions ------------------------------------------------------------------


def test_a_function_spreads_its_lone_int_list_too():
    assert bp.zeros(2, 3).shape == (2, 3)
    assert bp.zeros((2, 3)).shape == (2, 3)
    assert bp.zeros(3).shape == (3,)
    assert bp.zeros(size=3).shape == (3,)
    assert bp.zeros([]).shape == ()
    assert bp.ones(2, 1, dtype=bp.int64).dtype is bp.int64
    with pytest.raises(TypeError, match="argument 2 is str"):
        bp.zeros(2, "3")
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        bp.zeros(2, size=3)
    # full's size is not its only positional parameter: a second int is the fill value.
    assert bp.full(3, 2).tolist() == [2, 2, 2]


def test_hand_written_functions_word_their_errors_as_the_ops_do(x):
    with pytest.raises(TypeError) as error:
        bp.full((2,), "a")
    assert str(error.value) == ("full(): argument 'fill_value' (position 2) must be a number "
                                "(int, float or bool), not str")
    with pytest.raises(TypeError) as error:
        bp.zeros_like(x, colour=1)
    assert str(error.value) == "zeros_like() got an unexpected keyword argument 'colour'"
    with pytest.raises(TypeError) as error:
        bp.manual_seed()
    assert str(error.value) == "manual_seed() missing required argument 'seed' (position 1)"
    with pytest.raises(TypeError, match=r"numpy\(\) takes 0 positional arguments but 1 was"):
        x.numpy(True)


def test_every_parameter_of_a_hand_written_function_has_its_keyword(x):
    bp.manual_seed(seed=3)
    assert bp.tensor(data=[1, 2]).tolist() == [1, 2]
    assert bp.from_dlpack(ext_tensor=x).tolist() == x.tolist()
    assert bp.from_numpy(ndarray=np.zeros(2)).tolist() == [0.0, 0.0]
    bp._C._set_grad_enabled(mode=True)
    assert bp._C._backend_counters(backend="cpu") == bp._C._backend_counters("cpu")
    start = bp.Event(device="cpu")
    start.record()
    assert start.elapsed_time(end_event=start) >= 0.0


def test_a_tensor_or_a_list_of_tensors():
    leaf = bp.tensor([1.0, 2.0], requires_grad=True)
    (got,) = bp.autograd.grad((leaf * 3).sum(), leaf)
    assert got.tolist() == [3.0, 3.0]
    unused = bp.tensor([1.0], requires_grad=True)
    a, b = bp.autograd.grad([(leaf * 2).sum()], (leaf, unused), grad_outputs=[None],
                            allow_unused=True)
    assert a.tolist() == [2.0, 2.0] and b is None
    with pytest.raises(TypeError) as error:
        bp.autograd.grad(leaf.sum(), [leaf, 3])
    assert str(error.value) == ("grad(): argument 'inputs' (position 2) must be a Tensor or a "
                                "list or tuple of Tensors, not list (item 1 is int)")
    with pytest.raises(TypeError, match=r"'grad_outputs' .*\(item 0 is str\)"):
        bp.autograd.grad(leaf.sum(), leaf, grad_outputs=["a"])


def test_an_optional_bool_takes_none():
    leaf = bp.tensor([1.0], requires_grad=True)
    y = leaf * 2
    y.backward(retain_graph=True)
    y.backward(retain_graph=None)
    assert leaf.grad.tolist() == [4.0]
    with pytest.raises(TypeError, match="'retain_graph' .* must be bool or None, not int"):
        (leaf * 2).backward(retain_graph=1)


def test_constructors_parse_as_functions_do():
    assert bp.device(type="cpu", index=0) == "cpu"
    assert bp.device.__new__(bp.device, "cpu") == "cpu"
    assert bp.Event.__new__(bp.Event, device="cpu").device == "cpu"
    with pytest.raises(TypeError, match=r"device\(\) takes 2 positional arguments but 3"):
        bp.device("cpu", 0, 1)
    with pytest.raises(TypeError, match=r"Event\(\) got an unexpected keyword argument 'dev'"):
        bp.Event(dev="cpu")
