#!/usr/bin/env python
"""Benchmark tangent_x.random against numpy.random.default_rng() in one run.

    python tools/bench_random.py [--n 10000000] [--repeat 5]

Times 10**7 float32 uniforms and normals three ways -- NumPy's PCG64
generator (the baseline), tangent_x.random eagerly (vectorised NumPy uint32
Threefry), and the fused Numba kernels the jit path uses -- and prints a
markdown table of best-of-``repeat`` times and ratios to the baseline.
Compilation happens in a warm-up call and is not timed.  Benchmark only:
nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tangent_x import random  # noqa: E402
from tangent_x.config import config  # noqa: E402
from tangent_x.random import _numba  # noqa: E402


def best_time(fn, repeat):
    fn()                                   # warm-up (compiles Numba kernels)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    n, shape = args.n, (args.n,)
    rng = np.random.default_rng(0)
    key = random.PRNGKey(0)

    rows = []
    for name in ("uniform", "normal"):
        base = best_time(lambda: getattr(rng, "random" if name == "uniform" else "standard_normal")(
            n, dtype=np.float32), args.repeat)
        rows.append((name, "numpy default_rng (baseline)", base, 1.0))
        for stream in (True, False):
            with config.override("threefry_partitionable", stream):
                label = "partitionable" if stream else "original"
                t = best_time(lambda: getattr(random, name)(key, shape, np.float32), args.repeat)
                rows.append((name, f"tangent_x eager ({label})", t, t / base))
                t = best_time(lambda: getattr(_numba, name)(key, shape, np.float32), args.repeat)
                rows.append((name, f"tangent_x Numba kernel ({label})", t, t / base))

    print(f"{n:,} float32 draws, best of {args.repeat}; numpy {np.__version__}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| sampler | implementation | time (ms) | ratio to default_rng |")
    print("|---|---|---:|---:|")
    for name, impl, t, ratio in rows:
        print(f"| {name} | {impl} | {t * 1e3:.1f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
