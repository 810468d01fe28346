"""Autograd from Python against PyTorch: requires_grad, grad, is_leaf, grad_fn, _version,
backward and detach on tensors, and bp.autograd.grad/backward and the grad mode."""

import numpy as np
import pytest
import torch

import backplane as bp


def pair(values, requires_grad=True):
    return (
        torch.tensor(values, requires_grad=requires_grad),
        bp.tensor(values, requires_grad=requires_grad),
    )


def assert_close(got, expected):
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def test_backward_matches_torch():
    t, x = pair([[1.0, -2.0], [3.0, 0.5]])
    u, y = pair([2.0, 4.0])
    (t * u + t / 3 - u).relu().sum().backward()
    (x * y + x / 3 - y).relu().sum().backward()
    assert_close(x.grad, t.grad)
    assert_close(y.grad, u.grad)
    # Gradients accumulate.
    (t * 2).sum().backward()
    (x * 2).sum().backward()
    assert_close(x.grad, t.grad)


def test_backward_with_a_gradient():
    t, x = pair([1.0, 2.0, 3.0])
    (t * t).backward(torch.tensor([1.0, 0.5, 2.0]))
    (x * x).backward(bp.tensor([1.0, 0.5, 2.0]))
    assert_close(x.grad, t.grad)
    with pytest.raises(RuntimeError):
        (x * x).backward()  # three elements need a gradient
    with pytest.raises(TypeError):
        (x * x).backward([1.0, 1.0, 1.0])


def test_retain_graph():
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError):
        y.backward()


def test_requires_grad_property_and_method():
    x = bp.zeros(2)
    assert x.requires_grad is False
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    x.requires_grad_(requires_grad=True)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    with pytest.raises(RuntimeError):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="floating-point"):
        bp.zeros(2, dtype=bp.int64).requires_grad_()
    with pytest.raises(TypeError):
        x.requires_grad = 1
    with pytest.raises(TypeError):
        del x.requires_grad


def test_grad_property():
    x = bp.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    x.grad = bp.ones(2)
    assert x.grad.tolist() == [1.0, 1.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
    del x.grad
    assert x.grad is None
    x.grad = bp.zeros(2)
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = bp.zeros(3)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = bp.zeros(2, dtype=bp.float64)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]


def test_grad_fn():
    t, x = pair([1.0, 2.0])
    assert x.grad_fn is None
    y = x + x
    assert repr(y.grad_fn) == "<AddBackward0 object>"
    assert y.grad_fn.name() == type((t + t).grad_fn).__name__
    assert y.grad_fn == y.grad_fn and hash(y.grad_fn) == hash(y.grad_fn)
    z = y * 2
    assert z.grad_fn.name() == "MulBackward0"
    assert z.grad_fn != y.grad_fn
    (node, input_nr), *_ = z.grad_fn.next_functions
    assert node == y.grad_fn and input_nr == 0
    leaf_edges = y.grad_fn.next_functions
    assert len(leaf_edges) == 2 and leaf_edges[0][0] is not None
    with pytest.raises(TypeError):
        type(y.grad_fn)()


def test_version_and_detach():
    x = bp.zeros(3)
    version = x._version
    x += 1
    assert x._version > version
    y = x.detach()
    assert y is not x and not y.requires_grad
    y[0] = 7.0
    assert x[0].item() == 7.0
    assert x._version == y._version
    w = bp.tensor([1.0], requires_grad=True)
    assert w.detach().is_leaf and not w.detach().requires_grad


def test_autograd_grad_matches_torch():
    t, x = pair([1.0, 2.0, 3.0])
    u, y = pair([0.5, -1.0, 2.0])
    unused_t, unused_x = pair([1.0])
    expected = torch.autograd.grad((t * u).sum(), [t, u])
    got = bp.autograd.grad((x * y).sum(), [x, y])
    assert isinstance(got, tuple) and len(got) == 2
    assert_close(got[0], expected[0])
    assert_close(got[1], expected[1])
    assert x.grad is None
    got = bp.autograd.grad(x * y, x, grad_outputs=bp.tensor([1.0, 2.0, 3.0]))
    expected = torch.autograd.grad(t * u, t, grad_outputs=torch.tensor([1.0, 2.0, 3.0]))
    assert_close(got[0], expected[0])
    grads = bp.autograd.grad([(x * 2).sum()], [x, unused_x], allow_unused=True)
    assert grads[1] is None and grads[0].tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError):
        bp.autograd.grad((x * 2).sum(), [x, unused_x])
    with pytest.raises(TypeError):
        bp.autograd.grad((x * 2).sum(), [x, 3])
    with pytest.raises(TypeError):
        bp.autograd.grad((x * 2).sum())


def test_autograd_backward():
    t, x = pair([1.0, 2.0])
    torch.autograd.backward([(t * t).sum(), t * 3], [None, torch.tensor([1.0, -1.0])])
    bp.autograd.backward([(x * x).sum(), x * 3], [None, bp.tensor([1.0, -1.0])])
    assert_close(x.grad, t.grad)
    bp.autograd.backward((x * 2).sum())
    assert_close(x.grad, t.grad + 2)


def test_grad_mode():
    assert bp.is_grad_enabled()
    x = bp.tensor([1.0], requires_grad=True)
    with bp.no_grad():
        assert not bp.is_grad_enabled()
        assert (x * 2).grad_fn is None
        with bp.enable_grad():
            assert (x * 2).grad_fn is not None
    assert bp.is_grad_enabled()
    bp._C._set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        bp._C._set_grad_enabled(True)
    with pytest.raises(TypeError):
        bp._C._set_grad_enabled(1)
