"""Backplane: tensors, and the ops of ops.yaml run by whichever loaded backend holds them.

    import backplane as bp
    x = bp.tensor([[1.0, 2.0], [3.0, 4.0]])
    bp.softmax(x, dim=1)

The functions, Tensor, dtype, device, Error and Event come from the compiled module
backplane._C; this file adds what is plain Python: the grad-mode context managers.
"""

import builtins as _builtins
import functools as _functools

from backplane import _C
from backplane._C import *  # noqa: F401,F403 (the ops, the types and the dtype objects)

# `import *` leaves out the names that start with an underscore, which some ops have (the kernels
# behind composites, the optimizer steps): every op function the module binds is re-exported.
globals().update({
    name: getattr(_C, name)
    for name in {schema.split("(", 1)[0].split(".", 1)[0] for schema in _C._bound_schemas()}
    if name.startswith("_") and hasattr(_C, name)
})

# The dtype objects bool, float, int and long replace the builtins of those names here;
# annotations below are strings and the code uses _builtins.


class _GradMode:
    """Sets whether autograd records ops (on this thread) until the block or function ends."""

    _enabled: "bool"

    def __enter__(self) -> None:
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exception) -> None:
        _C._set_grad_enabled(self._previous)

    def __call__(self, function):
        @_functools.wraps(function)
        def with_mode(*args, **kwargs):
            with self._copy():
                return function(*args, **kwargs)

        return with_mode

    def _copy(self) -> "_GradMode":
        # A fresh object per call, so that recursive and concurrent calls each restore the mode
        # they found.
        return _SetMode(self._enabled)


class _SetMode(_GradMode):
    def __init__(self, enabled: "bool") -> None:
        self._enabled = enabled


class no_grad(_GradMode):
    """Within the block (or the decorated function), ops record nothing for autograd."""

    _enabled = False


class enable_grad(_GradMode):
    """Within the block (or the decorated function), ops record for autograd again."""

    _enabled = True


class set_grad_enabled(_GradMode):
    """set_grad_enabled(mode): turns recording on or off at once, for this thread; as a context
    manager, the mode it found comes back when the block ends."""

    def __init__(self, mode: "bool") -> None:
        self._enabled = _builtins.bool(mode)
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __enter__(self) -> None:
        pass

    def __call__(self, function):
        # Used as a decorator, the mode applies during each call only.
        _C._set_grad_enabled(self._previous)
        return super().__call__(function)


from backplane import autograd  # noqa: E402,F401 (it re-exports the grad modes above)
from backplane import optim  # noqa: E402,F401
