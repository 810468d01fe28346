"""x[index] and x[index] = value against NumPy's and PyTorch's results, views that writes go
through, and the errors of indices Backplane does not take."""

import numpy as np
import pytest
import torch

import backplane as bp

E = Ellipsis
ARRAY = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

INDICES = [
    0,
    -1,
    (1, 2),
    (-2, -3, -4, -5),
    (0, 0, 0, 0),
    (slice(None), 1),
    slice(1, None),
    slice(None, None, 2),
    (slice(None), slice(None, None, 3)),
    (slice(-3, -1), slice(1, 100)),
    (slice(5, 10),),
    (slice(2, 1),),
    (E, 1),
    (E, slice(1, 3)),
    (1, E, 2),
    (None, 0),
    (0, None, E, None),
    (1, slice(-3, -1), E, slice(None, None, 3)),
    (slice(None), None, slice(None), None),
    E,
    (),
    (slice(None),) * 4,
    (slice(None), [2, 0]),
    ([1, 1, 0],),
    (E, [4, 0, 4]),
    (E, [-1, -5, 0]),
    ([],),
    np.int64(1),
    (np.int32(-1), slice(None)),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_matches_numpy(index):
    x = bp.tensor(ARRAY)
    expected = ARRAY[index]
    got = x[index]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


def test_index_tensors_match_torch():
    t = torch.from_numpy(ARRAY)
    x = bp.tensor(ARRAY)
    for index_values, dtype in [([2, 0, 2], bp.int64), ([1, 0], bp.int32), ([-1, 0], bp.int64)]:
        torch_index = torch.tensor(index_values)
        bp_index = bp.tensor(index_values, dtype=dtype)
        np.testing.assert_array_equal(x[:, bp_index].numpy(), t[:, torch_index].numpy())
        np.testing.assert_array_equal(x[..., bp_index].numpy(), t[..., torch_index].numpy())
    # An int beside an index list selects first, as in PyTorch (NumPy would broadcast them).
    np.testing.assert_array_equal(x[0, :, [3, 1]].numpy(), t[0, :, [3, 1]].numpy())
    np.testing.assert_array_equal(x[bp.tensor(1)].numpy(), t[torch.tensor(1)].numpy())
    np.testing.assert_array_equal(x[0, bp.tensor(-1)].numpy(), t[0, torch.tensor(-1)].numpy())


def test_basic_indexing_gives_views():
    x = bp.zeros(3, 4)
    x[1][2] = 5.0
    column = x[:, 3]
    column += 1
    x[..., 0][::2] = 7.0
    expected = np.zeros((3, 4), np.float32)
    expected[1, 2] = 5
    expected[:, 3] += 1
    expected[::2, 0] = 7
    np.testing.assert_array_equal(x.numpy(), expected)
    whole = x[:]
    assert whole is not x
    whole[0, 0] = -1.0
    assert x[0, 0].item() == -1.0


def test_index_tensor_copies():
    x = bp.zeros(3)
    picked = x[[0, 2]]
    picked += 1
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_setitem():
    x = bp.zeros(3, 4)
    t = torch.zeros(3, 4)
    for index, value in [
        (1, 5),
        ((slice(None), 2), [1.0, 2.0, 3.0]),
        ((0, slice(None, None, 2)), 7.5),
        ((2, slice(1, 3)), [8, 9]),
        ((E, -1), True),
        ((slice(1, None), slice(0, 2)), np.array([[1.5, 2.5], [3.5, 4.5]], np.float32)),
    ]:
        x[index] = value
        t[index] = torch.tensor(value) if isinstance(value, (list, np.ndarray)) else value
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    # A tensor broadcasts to the view, and converts to its dtype.
    x[1:] = bp.tensor([1, 2, 3, 4], dtype=bp.int32)
    t[1:] = torch.tensor([1, 2, 3, 4], dtype=torch.int32)
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    y = bp.zeros(2, dtype=bp.int64)
    y[0] = 2.7
    assert y.tolist() == [2, 0]


def test_len():
    assert len(bp.zeros(4, 2)) == 4
    with pytest.raises(TypeError, match="0-d"):
        len(bp.tensor(1.0))


@pytest.mark.parametrize(
    "index, error, match",
    [
        (2, IndexError, "out of bounds for dimension 0 with size 2"),
        ((0, 3), IndexError, "out of bounds for dimension 1 with size 3"),
        ((0, -4), IndexError, "out of bounds"),
        ((None, 0, E, 7), IndexError, "index 7 is out of bounds for dimension 3 with size 5"),
        ((0, 0, 0, 0, 0), IndexError, "too many indices"),
        ((E, E), IndexError, "single ellipsis"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        (slice(None, None, 0), ValueError, "zero"),
        (True, TypeError, "bool"),
        (bp.tensor([True, False]), TypeError, "mask"),
        (1.5, IndexError, "valid indices"),
        ("a", IndexError, "valid indices"),
        (bp.tensor([1.0]), IndexError, "int64 or int32"),
        (bp.tensor([[0]]), IndexError, "1-D"),
        (([0], [0]), IndexError, "one index tensor"),
        ((0, [0, 3]), IndexError, "index 3 is out of bounds for dimension 1 with size 3"),
        ((E, [-6]), IndexError, "index -6 is out of bounds for dimension 3 with size 5"),
        (bp.tensor([1], dtype=bp.uint8), TypeError, "mask"),
        (bp.tensor([1], dtype=bp.int8), IndexError, "int64 or int32"),
    ],
    ids=repr,
)
def test_errors(index, error, match):
    x = bp.zeros(2, 3, 4, 5)
    with pytest.raises(error, match=match):
        x[index]


def test_setitem_errors():
    x = bp.zeros(3)
    with pytest.raises(TypeError, match="index_put_"):
        x[[0, 1]] = 1.0
    with pytest.raises(TypeError):
        del x[0]
    with pytest.raises(RuntimeError):
        x[0:2] = bp.ones(3)
    with pytest.raises(TypeError):
        x[0] = "a"


def test_indexing_on_another_device():
    others = [d for d in bp.devices() if d.type != "cpu"]
    if not others:
        pytest.skip("no device but the host is loaded")
    x = bp.tensor(ARRAY, device=others[0])
    t = torch.from_numpy(ARRAY)
    for index in [(1, slice(None), [2, 0]), (E, None, 3), (slice(None, None, 2), -1)]:
        got = x[index]
        assert got.device == others[0]
        np.testing.assert_array_equal(got.cpu().numpy(), t[index].numpy())
    x[0, 0] = 1.0
    x[1, :, 2] = bp.zeros(5)
    expected = ARRAY.copy()
    expected[0, 0] = 1.0
    expected[1, :, 2] = 0
    np.testing.assert_array_equal(x.cpu().numpy(), expected)
