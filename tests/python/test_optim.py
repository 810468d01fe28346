"""bp.optim: SGD and AdamW step as torch.optim's do, on every loaded device."""

import numpy as np
import pytest
import torch

import backplane as bp

DEVICES = [d for d in ("cpu", "opencl:0") if d in [str(x) for x in bp.devices()]]


def regression_pair(device, seed=0):
    """The same small least-squares problem as backplane and torch leaves."""
    rng = np.random.default_rng(seed)
    data = {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in (("w", (3, 4)), ("b", (3,)), ("x", (5, 4)), ("y", (5, 3)))}
    ours = {k: bp.tensor(v, device=device) for k, v in data.items()}
    theirs = {k: torch.tensor(v) for k, v in data.items()}
    for params in (ours, theirs):
        params["w"].requires_grad_()
        params["b"].requires_grad_()
    return ours, theirs


def loss_of(p):
    prediction = p["x"] @ p["w"].transpose(0, 1) + p["b"]
    return ((prediction - p["y"]) * (prediction - p["y"])).mean()


def train(make_ours, make_theirs, device, steps=5):
    ours, theirs = regression_pair(device)
    opt = make_ours([ours["w"], ours["b"]])
    reference = make_theirs([theirs["w"], theirs["b"]])
    for _ in range(steps):
        for p, o in ((ours, opt), (theirs, reference)):
            o.zero_grad()
            loss_of(p).backward()
            o.step()
    for name in ("w", "b"):
        np.testing.assert_allclose(ours[name].detach().cpu().numpy(),
                                   theirs[name].detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("settings", [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, nesterov=True),
])
def test_sgd_steps_as_torch_sgd(device, settings):
    train(lambda ps: bp.optim.SGD(ps, **settings),
          lambda ps: torch.optim.SGD(ps, **settings), device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("settings", [
    dict(lr=0.01),
    dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
])
def test_adamw_steps_as_torch_adamw(device, settings):
    train(lambda ps: bp.optim.AdamW(ps, **settings),
          lambda ps: torch.optim.AdamW(ps, **settings), device)


def test_parameters_may_come_from_any_iterable_and_change_in_place():
    w = bp.ones(2).requires_grad_()
    opt = bp.optim.SGD((p for p in [w]), lr=0.5)
    (w * w).sum().backward()
    opt.step()
    assert w.tolist() == [0.0, 0.0]


def test_a_closure_is_run_with_grad_enabled_and_its_loss_returned():
    w = bp.ones(2).requires_grad_()
    opt = bp.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with bp.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 2.0
    assert w.tolist() == [0.5, 0.5]


def test_the_learning_rate_can_change_between_steps():
    w = bp.ones(1).requires_grad_()
    opt = bp.optim.SGD([w], lr=1.0)
    opt.lr = 0.5
    assert opt.lr == 0.5
    w.sum().backward()
    opt.step()
    assert w.tolist() == [0.5]
    assert repr(opt) == "SGD(lr=0.5, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)"


def test_zero_grad_clears_to_none_or_to_zeros():
    w = bp.ones(2).requires_grad_()
    opt = bp.optim.AdamW([w])
    w.sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_parameters_without_gradients_are_left_alone():
    w = bp.ones(2).requires_grad_()
    unused = bp.ones(2).requires_grad_()
    opt = bp.optim.SGD([w, unused], lr=1.0)
    w.sum().backward()
    opt.step()
    assert w.tolist() == [0.0, 0.0] and unused.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("make, message", [
    (lambda w: bp.optim.SGD([w], lr=-1.0), "lr"),
    (lambda w: bp.optim.SGD([w], momentum=0.0, nesterov=True), "nesterov"),
    (lambda w: bp.optim.AdamW([w], betas=(1.5, 0.9)), "beta1"),
    (lambda w: bp.optim.SGD([w.detach()]), "does not require grad"),
    (lambda w: bp.optim.SGD([w, w]), "the same tensor"),
    (lambda w: bp.optim.SGD([]), "empty list of parameters"),
])
def test_bad_settings_and_parameters_are_refused_with_the_reason(make, message):
    w = bp.ones(2).requires_grad_()
    with pytest.raises(bp.Error, match=message):
        make(w)


def test_arguments_of_the_wrong_type_are_type_errors():
    w = bp.ones(2).requires_grad_()
    with pytest.raises(TypeError, match="lr"):
        bp.optim.SGD([w], lr="fast")
    with pytest.raises(TypeError, match="params"):
        bp.optim.SGD([w, 3])
    with pytest.raises(ValueError, match="betas"):
        bp.optim.AdamW([w], betas=(0.9,))


def test_a_learning_rate_that_is_negative_or_not_a_number_is_refused_and_kept():
    w = bp.ones(1).requires_grad_()
    opt = bp.optim.SGD([w], lr=0.5)
    with pytest.raises(ValueError, match="lr must be at least 0"):
        opt.lr = -1.0
    with pytest.raises(TypeError, match="lr must be a float"):
        opt.lr = "fast"
    assert opt.lr == 0.5
