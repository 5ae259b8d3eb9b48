"""jit(vmap(f)): the batched code against the compiled loop over examples.

    python tools/bench_jit_vmap.py [--quick]

Prints a markdown table.  Each workload is checked for equal results (eager
vmap, the batched compiled code, the prange loop) before it is timed;
steady-state times are medians of rounds interleaved across the
implementations.  Threads: this is the one benchmark where more than one
core is the point (issue #7 item 4, "threads are Numba's own"), so it runs
with NUMBA_NUM_THREADS=2 and times the loop both on one thread
(``numba.set_num_threads(1)``: the like-for-like single-core comparison
that ``tools/bench.py`` makes everywhere) and on two.  BLAS and OpenMP stay
on one thread.
"""
import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "2")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tangent_x as tx  # noqa: E402
from tangent_x.api.jit import jitted  # noqa: E402

from batching import steps_to_exceed  # noqa: E402


def scalar_loop(x):
    """100 steps of a scalar recurrence per example."""
    for _ in range(100):
        x = np.sin(x) * 0.99 + 0.01
    return x


def logistic(x):
    """100 steps of the logistic map per example: arithmetic only, no libm."""
    for _ in range(100):
        x = 3.7 * x * (1.0 - x)
    return x


def newton_sqrt(a):
    """Newton's square root with a tolerance: 4-40 steps per example."""
    y = a
    while np.abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.2f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def _median_interleaved(fns, rounds):
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def workload(name, fun, args, in_axes, rounds):
    batched = jitted(tx.vmap(fun, in_axes=in_axes))          # the vectorised code, compiled
    loop = tx.jit(tx.vmap(fun, in_axes=in_axes, method="loop"))   # the prange loop
    eager = tx.vmap(fun, in_axes=in_axes)
    chosen = tx.jit(tx.vmap(fun, in_axes=in_axes)).strategy(*args)   # what jit(vmap(f)) runs
    first = {}
    for label, f in (("batched", batched), ("loop", loop)):
        t = time.perf_counter()
        f(*args)
        first[label] = time.perf_counter() - t
    want = eager(*args)
    np.testing.assert_allclose(batched(*args), want, rtol=1e-12)
    np.testing.assert_allclose(loop(*args), want, rtol=1e-12)

    def on(threads, f):
        def run():
            numba.set_num_threads(threads)
            f(*args)
        return run
    med = _median_interleaved({
        "eager vmap (NumPy)": lambda: eager(*args),
        "jit batched": on(1, batched),
        "jit loop, 1 thread": on(1, loop),
        "jit loop, 2 threads": on(2, loop),
    }, rounds)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return name, chosen, first, med


def main(quick=False):
    n = 10_000 if quick else 200_000
    rounds = 3 if quick else 15
    rng = np.random.default_rng(0)
    rows = [
        workload("steps_to_exceed (while, 0-11 steps per example)", steps_to_exceed,
                 (rng.uniform(0.5, 1000.0, n), 1000.0), (0, None), rounds),
        workload("scalar_loop (100 steps per example)", scalar_loop,
                 (rng.uniform(-1.0, 1.0, n),), 0, rounds),
        workload("logistic (100 steps per example, no libm)", logistic,
                 (rng.uniform(0.1, 0.9, n),), 0, rounds),
        workload("newton_sqrt (tolerance stop)", newton_sqrt,
                 (rng.uniform(0.1, 1e6, n),), 0, rounds),
    ]
    print(f"{n} examples, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
          f"threading layer: {_layer()}\n")
    print("| workload | cost model picks | eager vmap (NumPy) | jit batched | jit loop, 1 thread "
          "| jit loop, 2 threads | batched / loop (1 thread) | batched / loop (2 threads) "
          "| first call batched / loop |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, chosen, first, med in rows:
        b, l1, l2 = med["jit batched"], med["jit loop, 1 thread"], med["jit loop, 2 threads"]
        print(f"| {name} | {chosen} | {_fmt(med['eager vmap (NumPy)'])} | {_fmt(b)} | "
              f"{_fmt(l1)} | {_fmt(l2)} | {b / l1:.2f}x | {b / l2:.2f}x | "
              f"{_fmt(first['batched'])} / {_fmt(first['loop'])} |")


def _layer():
    try:
        return numba.threading_layer()
    except ValueError:
        return "not started"


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
