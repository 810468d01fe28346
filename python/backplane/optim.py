"""backplane.optim: torch.optim's SGD and AdamW, over the C++ optimizers of <backplane/optim.h>.

Each step() updates every parameter that has a gradient with one kernel call per parameter (the
`_sgd_step` and `_adamw_step` ops), on whatever device the parameter lives, without recording
for autograd.

    opt = bp.optim.SGD([w, b], lr=0.1, momentum=0.9)
    loss.backward()
    opt.step()
    opt.zero_grad()
"""

from backplane import _C, enable_grad


class Optimizer:
    """What SGD and AdamW share: step(), zero_grad() and the learning rate."""

    def step(self, closure=None):
        """Updates the parameters from their gradients. With `closure` (a function that
        recomputes the loss and calls backward()), runs it first and returns its loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._optimizer.step()
        return loss

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's gradient: to None (PyTorch's default) or to zeros."""
        self._optimizer.zero_grad(set_to_none)

    @property
    def lr(self):
        """The learning rate the next step uses; assign to change it between steps."""
        return self._optimizer.lr

    @lr.setter
    def lr(self, value):
        self._optimizer.lr = value

    def __repr__(self):
        settings = "".join(f", {name}={value}" for name, value in self._hyperparameters.items())
        return f"{type(self).__name__}(lr={self.lr}{settings})"


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, weight decay and Nesterov
    momentum, as torch.optim.SGD."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        self._optimizer = _C._sgd(list(params), lr, momentum, dampening, weight_decay, nesterov)
        self._hyperparameters = dict(momentum=momentum, dampening=dampening,
                                     weight_decay=weight_decay, nesterov=nesterov)


class AdamW(Optimizer):
    """Adam with decoupled weight decay (without amsgrad), as torch.optim.AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        if len(betas) != 2:
            raise ValueError(f"AdamW: betas must be a pair (beta1, beta2), got {betas!r}")
        beta1, beta2 = betas
        self._optimizer = _C._adamw(list(params), lr, beta1, beta2, eps, weight_decay)
        self._hyperparameters = dict(betas=(beta1, beta2), eps=eps, weight_decay=weight_decay)
