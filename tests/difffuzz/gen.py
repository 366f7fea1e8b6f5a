#!/usr/bin/env python3
"""gen.py: the differential fuzzer's generator: a random, valid, well-typed tile kernel per
seed (the same seed gives the same program). A kernel cuts an [M, N] problem into BM x BN
blocks; it loads blocks, rows, columns and scalars of f32/f16/bf16 and integer inputs with
masks at odd sizes, computes with elementwise math, casts, where, broadcasting, reductions,
scans, sorts, shape ops and dot (in K loops too), carries accumulators through loops and
branches, and stores what it computed (and updates atomics) so that `tilec run --backend=sim
--check` can compare the GPU code path with the CPU backend. run.py drives it.

usage: gen.py SEED   (prints the kernel)"""

import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import control  # noqa: E402
import sinks  # noqa: E402
import sources  # noqa: E402
from kernel import Kernel  # noqa: E402


def body_step(k):
    r = k.rng.random()
    if r < 0.05:
        control.slice_loop(k)
    elif r < 0.08:
        control.row_loop(k)
    elif r < 0.12:
        control.branch(k)
    elif r < 0.13:
        control.early_return(k)
    elif r < 0.18:
        sources.add_source(k)
    else:
        k.step()


def generate(seed):
    """The kernel of seed (a Kernel: render() gives its source)."""
    rng = random.Random(seed)
    k = Kernel(rng, with_dot=rng.random() < 0.3)
    k.aux = random.Random(seed * 7919 + 1)  # choices added later, leaving rng's stream as it was
    sources.prologue(k)
    for _ in range(rng.randint(2, 5)):
        sources.add_source(k)
    if k.bk:
        control.dot_loop(k)
    for _ in range(rng.randint(6, 22)):
        body_step(k)
    sinks.stores(k)
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        sinks.atomic(k)
    return k


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: gen.py SEED")
    seed = int(sys.argv[1])
    k = generate(seed)
    print(k.render(seed, "tests/difffuzz/run.py --seeds %d" % seed))


if __name__ == "__main__":
    main()
