"""Per-call cost of the Python package against PyTorch's, and of bp.add from Python against
the same op from C++, each pair timed in one process with the rounds interleaved.

Every row is a ratio of medians (ours / reference); bench/README.md says which targets each
must meet. --quick runs every case once, briefly, to check that the program works.
"""

import argparse
import statistics
import sys
import time

import numpy as np
import torch

import backplane as bp
import cpp_reference


def per_call_seconds(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def compare(name, ours, reference, calls, rounds, target):
    ours_times, reference_times = [], []
    for round_index in range(rounds):
        # Each side goes first in every other round, so that neither inherits the other's
        # caches or clock more often.
        if round_index % 2 == 0:
            ours_times.append(ours(calls))
            reference_times.append(reference(calls))
        else:
            reference_times.append(reference(calls))
            ours_times.append(ours(calls))
    mine = statistics.median(ours_times)
    theirs = statistics.median(reference_times)
    ratio = mine / theirs
    verdict = "meets" if ratio <= target else "misses"
    print(f"{name:<52} {mine * 1e6:10.3f} us {theirs * 1e6:10.3f} us {ratio:7.3f}x"
          f"   target <= {target}x: {verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short round of each case")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    scale = 0.01 if args.quick else 1.0
    small_calls = max(1, int(20000 * scale))
    torch.set_num_threads(1)

    print(f"{'case':<52} {'ours':>13} {'reference':>13} {'ratio':>8}")

    x, y = bp.ones([1]), bp.ones([1])
    xt, yt = torch.ones(1), torch.ones(1)
    add, torch_add = bp.add, torch.add
    compare(
        "bp.add / torch.add, 1-element float32 cpu",
        lambda n: per_call_seconds(lambda: add(x, y), n),
        lambda n: per_call_seconds(lambda: torch_add(xt, yt), n),
        small_calls, rounds, 0.5)
    compare(
        "x + y: bp / torch, 1-element float32 cpu",
        lambda n: per_call_seconds(lambda: x + y, n),
        lambda n: per_call_seconds(lambda: xt + yt, n),
        small_calls, rounds, 0.5)

    array = np.ones(16, dtype=np.float32)
    from_dlpack, torch_from_dlpack = bp.from_dlpack, torch.from_dlpack
    compare(
        "bp.from_dlpack / torch.from_dlpack, NumPy array",
        lambda n: per_call_seconds(lambda: from_dlpack(array), n),
        lambda n: per_call_seconds(lambda: torch_from_dlpack(array), n),
        small_calls, rounds, 1.0)

    numel = 16 * 1024 * 1024 if not args.quick else 1024
    large_calls = 10 if not args.quick else 1
    big_x = bp.randn([numel])
    big_y = bp.randn([numel])

    def python_side(n):
        start = time.perf_counter()
        for _ in range(n):
            add(big_x, big_y)
        bp.synchronize(big_x.device)
        return (time.perf_counter() - start) / n

    compare(
        f"bp.add from Python / from C++, {numel} float32 cpu",
        python_side,
        lambda n: cpp_reference.add_seconds(numel, n, "cpu") / n,
        large_calls, rounds, 1.05)

    return 0


if __name__ == "__main__":
    sys.exit(main())
