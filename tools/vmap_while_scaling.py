"""Time per step of eager ``vmap(grad(f))`` through a while loop, at 100 and
1,000 steps: the ratio says whether the cost grows linearly with the steps
(about 1) or faster (a tape re-copied or re-flattened every step makes it
quadratic: the ratio grows towards 10).

    python tools/vmap_while_scaling.py [--batch 3] [--state 3]

A measurement, not a test: the machine's load moves the times.  Workloads:
an RK4 integrator of ``y' = -k y + sin(y)`` in a ``while i < n`` loop (the
same trip count for every example), and the same in ``while t < T`` with a
stop per example (lanes finish at different steps), each through ``vmap``
of the plain function and of ``grad``.  Each time is the best of a few
calls after one warm-up call (which builds and caches the code).
"""
import argparse
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np  # noqa: E402

import tangent_x as tx  # noqa: E402
from test_vmap_while import integrate, integrate_until  # noqa: E402  (the tested workloads)


def best_of(fn, args, rounds):
    fn(*args)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=3)
    parser.add_argument("--state", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    y0 = rng.random((opts.batch, opts.state))
    k = 0.5 + rng.random(opts.batch)
    # stops spread over the last tenth of the run: lanes finish at different steps
    spread = 1.0 - 0.1 * rng.random(opts.batch)
    workloads = [
        ("vmap(integrate), while i < n", tx.vmap(integrate, in_axes=(0, 0, None)),
         lambda n: (y0, k, n)),
        ("vmap(grad(integrate)), while i < n",
         tx.vmap(tx.grad(integrate, argnums=(0, 1)), in_axes=(0, 0, None)),
         lambda n: (y0, k, n)),
        ("vmap(integrate_until), t < T per example",
         tx.vmap(integrate_until, in_axes=(0, 0, 0)),
         lambda n: (y0, k, spread * n * 0.01)),
        ("vmap(grad(integrate_until)), t < T per example",
         tx.vmap(tx.grad(integrate_until, argnums=(0, 1)), in_axes=(0, 0, 0)),
         lambda n: (y0, k, spread * n * 0.01)),
    ]
    print(f"batch {opts.batch}, state {opts.state}; time per step (best of {opts.rounds})")
    print(f"{'workload':50s} {'100 steps':>12s} {'1000 steps':>12s} {'ratio':>7s}")
    for label, fn, args in workloads:
        try:
            per = [best_of(fn, args(n), opts.rounds) / n for n in (100, 1000)]
        except Exception as exc:    # noqa: BLE001 - a measurement tool reports and goes on
            print(f"{label:50s} failed: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        print(f"{label:50s} {per[0] * 1e6:9.1f} us {per[1] * 1e6:9.1f} us "
              f"{per[1] / per[0]:6.2f}x")


if __name__ == "__main__":
    main()
