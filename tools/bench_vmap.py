"""vmap benchmarks (issue #5), printed as a markdown table of ratios.

    python tools/bench_vmap.py

Each workload is checked for equal results first; times are medians of
repeated runs in this one process, reported as ratios against hand-written
NumPy measured in the same run:

- per_example_grad: eager ``vmap(grad(tanh))`` over 10^6 float64 against
  ``1 - np.tanh(x)**2`` — target within 1.5x;
- mlp_forward: ``vmap(predict)`` of the examples/mlp.py MLP (784-64-10,
  tanh) over 128 examples against the hand-batched forward — target 1.2x.
"""
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import tangent_x as tx  # noqa: E402


def median_time(fn, repeat=25):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def tanh(x):
    return np.tanh(x)


def per_example_grad():
    x = np.random.default_rng(0).normal(size=10 ** 6)
    vg = tx.vmap(tx.grad(tanh))

    def hand():
        return 1 - np.tanh(x) ** 2
    np.testing.assert_allclose(vg(x), hand(), rtol=1e-14)
    return median_time(lambda: vg(x)), median_time(hand), 1.5


def mlp_forward():
    import mlp
    params = mlp.init_params([784, 64, 10])
    X = np.random.default_rng(1).normal(size=(128, 784))

    def one(params, x):
        hidden = np.tanh(params[0]["W"] @ x + params[0]["b"])
        return params[1]["W"] @ hidden + params[1]["b"]
    vf = tx.vmap(one, in_axes=(None, 0))

    def hand():
        return mlp.predict(params, X)
    np.testing.assert_allclose(vf(params, X), hand(), rtol=1e-12)
    return median_time(lambda: vf(params, X), 200), median_time(hand, 200), 1.2


def main():
    print("| workload | tangent_x vmap | hand-written NumPy | ratio | target | holds |")
    print("|---|---|---|---|---|---|")
    for name, bench in (("per_example_grad (10^6)", per_example_grad),
                        ("mlp_forward (128)", mlp_forward)):
        ours, ref, target = bench()
        ratio = ours / ref
        print(f"| {name} | {ours * 1e3:.3f} ms | {ref * 1e3:.3f} ms | {ratio:.2f}x | "
              f"{target}x | {'yes' if ratio <= target else 'no'} |")


if __name__ == "__main__":
    main()
