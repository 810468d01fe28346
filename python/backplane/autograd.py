"""backplane.autograd: gradients of tensors with requires_grad set.

grad(outputs, inputs, grad_outputs=None, retain_graph=None, allow_unused=False) returns the
gradients of outputs with respect to inputs; backward(tensors, grad_tensors=None,
retain_graph=None) accumulates them into the leaves' .grad.
"""

from backplane._C import backward, grad  # noqa: F401
from backplane import no_grad, enable_grad, set_grad_enabled, is_grad_enabled  # noqa: F401
