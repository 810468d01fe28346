"""No leaks across 100,000 calls: the arguments' reference counts come back to where they were,
the memory Python allocates (tracemalloc) stays flat, and so does the process's resident size,
which also counts what the C++ side allocates (tensors, DLPack structures, error messages)."""

import gc
import os
import sys
import tracemalloc

import numpy as np
import pytest
import torch

import backplane as bp

CALLS = 100_000
# Per call, at most: a leak of one byte of Python memory or 40 bytes of resident memory per
# call would exceed these.
PYTHON_BYTES = CALLS
RESIDENT_BYTES = 40 * CALLS


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth(call):
    """(Python bytes, resident bytes) still held after CALLS calls of `call`, past a warm-up
    that fills the caches (the allocator's, the interpreter's free lists)."""
    for _ in range(CALLS // 20):
        call()
    gc.collect()
    resident = resident_bytes()
    tracemalloc.start()
    try:
        python = tracemalloc.get_traced_memory()[0]
        for _ in range(CALLS):
            call()
        gc.collect()
        python = tracemalloc.get_traced_memory()[0] - python
    finally:
        tracemalloc.stop()
    return python, resident_bytes() - resident


def assert_no_leak(call, *arguments):
    counts = [sys.getrefcount(argument) for argument in arguments]
    python, resident = growth(call)
    assert [sys.getrefcount(argument) for argument in arguments] == counts
    assert python < PYTHON_BYTES, f"{python} bytes of Python memory kept by {CALLS} calls"
    assert resident < RESIDENT_BYTES, f"resident size grew by {resident} bytes in {CALLS} calls"


@pytest.fixture
def x():
    return bp.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


def test_add_keeps_no_reference_and_no_memory(x):
    y = bp.tensor([1.0, 2.0, 3.0])
    alpha = 2.5
    assert_no_leak(lambda: bp.add(x, y, alpha=alpha), x, y, alpha)


def test_method_and_operator_calls_keep_nothing(x):
    y = bp.tensor([1.0, 2.0, 3.0])

    def call():
        x.mul(y)
        x + y
        x.sum(1, keepdim=True)

    assert_no_leak(call, x, y)


def test_out_calls_keep_nothing(x):
    out = bp.empty([2, 3])
    assert_no_leak(lambda: bp.add(x, x, out=out), x, out)


def test_calls_with_a_wrong_argument_type_keep_nothing(x):
    wrong = "not a tensor"

    def call():
        try:
            bp.add(x, wrong)
        except TypeError:
            pass

    assert_no_leak(call, x, wrong)


def test_calls_with_an_unknown_keyword_keep_nothing(x):
    def call():
        try:
            bp.add(x, x, alpah=2)
        except TypeError:
            pass

    assert_no_leak(call, x)


def test_calls_the_core_refuses_keep_nothing(x):
    # The shapes do not broadcast: the core's bp::Error becomes bp.Error.
    other = bp.tensor([1.0, 2.0])

    def call():
        try:
            bp.add(x, other)
        except bp.Error:
            pass

    assert_no_leak(call, x, other)


def test_numpy_to_backplane_to_numpy_keeps_nothing():
    array = np.arange(6, dtype=np.float32)
    assert_no_leak(lambda: np.from_dlpack(bp.from_dlpack(array)), array)


def test_backplane_to_torch_to_backplane_keeps_nothing(x):
    assert_no_leak(lambda: bp.from_dlpack(torch.from_dlpack(x)), x)


def test_capsules_never_consumed_are_released(x):
    assert_no_leak(lambda: x.__dlpack__(), x)


def test_a_capsule_consumed_once_is_released_with_its_tensor(x):
    assert_no_leak(lambda: bp.from_dlpack(x.__dlpack__()), x)


def test_indexing_keeps_nothing(x):
    index = bp.tensor([1, 0])

    def call():
        x[0, 1:3]
        x[..., None, ::2]
        x[index]
        x[1] = 2.0
        x[:, 0] = index

    assert_no_leak(call, x, index)


def test_a_view_keeps_its_base_alive_and_then_lets_it_go():
    base = bp.tensor([1.0, 2.0, 3.0])
    view = base[1:]
    del base
    gc.collect()
    assert view.tolist() == [2.0, 3.0]
    before = resident_bytes()
    for _ in range(1000):  # 256 MiB in all if each 256 KiB base outlived its view
        base = bp.zeros(1 << 16)
        view = base[1:]
        del base, view
    assert resident_bytes() - before < 16 << 20
