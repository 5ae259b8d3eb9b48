"""Benchmarks for tangent_x, printed as a markdown table of ratios.

    python tools/bench.py

Each workload is checked for equal results before it is timed; timings are
medians of repeated runs in this one process, reported as ratios against a
reference measured in the same run (never as absolute targets in tests).

Workloads:
- transform: source in, source out for a 30-line function (parse,
  canonical form, reverse mode, rendering) — target under 30 ms;
- mlp_grad: eager ``tx.grad`` of the examples/mlp.py loss (784-64-10 tanh
  MLP, batch 128, float64) against a hand-written NumPy backprop — target
  within 1.3x;
- scalar_loop: eager grad of a 1000-step scalar recurrence against the eager
  primal — target at most 4x;
- tape memory: peak bytes per step of the gradient of an N-step loop for
  N = 10^3..10^6 — constant per step means O(N * carried state);
- autograd / JAX / tangent-ad columns appear when those are installed.
"""
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import tangent_x as tx  # noqa: E402
from tangent_x import api  # noqa: E402


def median_time(fn, repeat=30, number=1):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def thirty_line_function(x, w, b):
    h1 = np.tanh(w @ x + b)
    h2 = np.sin(h1) * np.cos(h1)
    h3 = h2 ** 2 + np.exp(-h1)
    h4 = np.log1p(h3 * h3)
    h5 = np.sqrt(h4 + 1.0)
    a = np.sum(h5 * h1)
    c = np.mean(h2 - h3)
    d = a * c + a / (1.0 + c * c)
    e = np.maximum(h1, h2)
    f = np.minimum(h3, h4)
    g = np.sum(e * f)
    k = np.arctan(g) + np.sinh(d / 10.0)
    m = np.where(h1 > 0, h1, 0.1 * h1)
    n = np.sum(m ** 3)
    p = np.abs(n - k)
    q = np.clip(h5, 0.0, 2.0)
    r = np.sum(q * q)
    s = np.exp2(r / 100.0) + np.log2(p + 1.0)
    t = s * 2.0 - 1.0
    u = np.tanh(t)
    v = u * a + c
    z1 = np.cosh(v / 100.0)
    z2 = np.square(z1)
    z3 = np.reciprocal(z2 + 1.0)
    z4 = np.expm1(z3)
    z5 = np.log10(z4 + 2.0)
    z6 = np.arcsinh(z5)
    z7 = z6 * z6 + u
    return z7 + np.sum(b ** 2)


def bench_transform():
    """Time the source-to-source transform alone: parse, canonical form,
    reverse mode, simplification, rendering (no file I/O, no import)."""
    def transform():
        api.generate(thirty_line_function, "grad", (0,))
    transform()
    seconds = median_time(transform, repeat=20)
    return {"workload": "transform (30-line function)", "tangent_x": f"{seconds * 1e3:.1f} ms",
            "reference": "target 30 ms", "ratio": f"{seconds / 0.030:.2f}x of target"}


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hand_written_mlp_grad(params, x, y):
    """Backprop for examples/mlp.py's loss, written out by hand."""
    W1, b1, W2, b2 = params[0]["W"], params[0]["b"], params[1]["W"], params[1]["b"]
    hidden = np.tanh(x @ W1.T + b1)
    err = hidden @ W2.T + b2 - y
    d_out = 2.0 * err / err.size
    d_hidden = (d_out @ W2) * (1.0 - hidden * hidden)
    return [{"W": d_hidden.T @ x, "b": d_hidden.sum(axis=0)},
            {"W": d_out.T @ hidden, "b": d_out.sum(axis=0)}]


def bench_mlp():
    mlp = _load_example("mlp")
    rng = np.random.default_rng(0)
    params = mlp.init_params([784, 64, 10])
    x = rng.normal(size=(128, 784))
    y = rng.normal(size=(128, 10))
    grad = tx.grad(mlp.loss)
    ours, ref = grad(params, x, y), hand_written_mlp_grad(params, x, y)
    for a, b in zip(tx.tree_util.tree_leaves(ours), tx.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    t_ours = median_time(lambda: grad(params, x, y), repeat=50)
    t_ref = median_time(lambda: hand_written_mlp_grad(params, x, y), repeat=50)
    row = {"workload": "mlp_grad (eager, 784-64-10, batch 128)",
           "tangent_x": f"{t_ours * 1e3:.2f} ms",
           "reference": f"{t_ref * 1e3:.2f} ms (hand-written NumPy)",
           "ratio": f"{t_ours / t_ref:.2f}x (target <= 1.3x)"}
    try:
        import autograd  # noqa: F401
        row["autograd"] = "installed (not compared yet)"
    except ImportError:
        row["autograd"] = "not installed"
    return row


def recurrence_n(x, n):
    for _ in range(n):
        x = np.sin(x) * 0.99 + 0.01
    return x


def recurrence_1000(x):
    return recurrence_n(x, 1000)


def bench_loop_cost():
    """Eager gradient of the 1000-step scalar recurrence vs its eager primal
    (target: at most 4x; the backward pass replays each step once)."""
    grad = tx.grad(recurrence_n)
    assert abs(grad(0.5, 1000) - _fd(recurrence_n, 0.5, 1000)) < 1e-6
    t_grad = median_time(lambda: grad(0.5, 1000), repeat=15)
    t_primal = median_time(lambda: recurrence_n(0.5, 1000), repeat=15)
    return {"workload": "scalar_loop eager grad / eager primal (1000 steps)",
            "tangent_x": f"{t_grad * 1e3:.2f} ms", "reference": f"{t_primal * 1e3:.2f} ms",
            "ratio": f"{t_grad / t_primal:.2f}x (target <= 4x)"}


def _fd(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def bench_tape_memory(sizes=(10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)):
    """Peak memory of the gradient of an N-step loop, per step: constant in N
    means the tape grows as O(N * carried state)."""
    import tracemalloc
    grad = tx.grad(recurrence_n)
    grad(0.5, 10)
    rows = []
    for n in sizes:
        tracemalloc.start()
        grad(0.5, n)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append((n, peak))
    per_step = ", ".join(f"N={n:.0e}: {peak / n:.0f} B/step" for n, peak in rows)
    return {"workload": "tape memory of grad through an N-step loop (scalar carry)",
            "tangent_x": per_step, "reference": "O(N * carry) expected",
            "ratio": f"{rows[-1][1] / rows[-1][0] / (rows[0][1] / rows[0][0]):.2f}x "
                     "bytes/step at 1e6 vs 1e3"}


def bench_forward_and_hvp():
    """jvp / primal (target <= 2.5x) and Hessian-vector product by forward
    over reverse / primal (target <= 6x), on the scalar recurrence and the
    MLP loss."""
    rows = []
    grad_rec = tx.grad(recurrence_1000)
    jvp_out = tx.jvp(recurrence_1000, (0.5,), (1.0,))
    assert abs(jvp_out[1] - grad_rec(0.5)) < 1e-12
    t_primal = median_time(lambda: recurrence_1000(0.5), repeat=15)
    t_jvp = median_time(lambda: tx.jvp(recurrence_1000, (0.5,), (1.0,)), repeat=15)
    t_hvp = median_time(lambda: tx.jvp(grad_rec, (0.5,), (1.0,)), repeat=15)
    rows.append({"workload": "scalar_loop jvp / primal", "tangent_x": f"{t_jvp * 1e3:.2f} ms",
                 "reference": f"{t_primal * 1e3:.2f} ms",
                 "ratio": f"{t_jvp / t_primal:.2f}x (target <= 2.5x)"})
    rows.append({"workload": "scalar_loop Hessian-vector product / primal",
                 "tangent_x": f"{t_hvp * 1e3:.2f} ms", "reference": f"{t_primal * 1e3:.2f} ms",
                 "ratio": f"{t_hvp / t_primal:.2f}x (target <= 6x)"})
    mlp = _load_example("mlp")
    rng = np.random.default_rng(0)
    params = mlp.init_params([784, 64, 10])
    x, y = rng.normal(size=(128, 784)), rng.normal(size=(128, 10))
    v = tx.tree_util.tree_map(lambda p: rng.normal(size=np.shape(p)), params)
    grad_loss = tx.grad(mlp.loss)
    # Directions in parameter space (the data are constants), as a
    # Hessian-vector product of a loss is meant: a tangent for x would add
    # a full x_dot @ W.T product that zeros cannot skip.
    loss_at = lambda p: mlp.loss(p, x, y)           # noqa: E731
    grad_at = lambda p: grad_loss(p, x, y)          # noqa: E731
    tx.jvp(loss_at, (params,), (v,))
    tx.jvp(grad_at, (params,), (v,))                # generate before timing
    median_time(lambda: mlp.loss(params, x, y), repeat=30)   # warm up BLAS threads
    t_primal = median_time(lambda: mlp.loss(params, x, y), repeat=30)
    t_jvp = median_time(lambda: tx.jvp(loss_at, (params,), (v,)), repeat=30)
    t_hvp = median_time(lambda: tx.jvp(grad_at, (params,), (v,)), repeat=30)
    rows.append({"workload": "mlp_loss jvp / primal (tangent along params)",
                 "tangent_x": f"{t_jvp * 1e3:.2f} ms",
                 "reference": f"{t_primal * 1e3:.2f} ms",
                 "ratio": f"{t_jvp / t_primal:.2f}x (target <= 2.5x)"})
    rows.append({"workload": "mlp_loss Hessian-vector product / primal (along params)",
                 "tangent_x": f"{t_hvp * 1e3:.2f} ms", "reference": f"{t_primal * 1e3:.2f} ms",
                 "ratio": f"{t_hvp / t_primal:.2f}x (target <= 6x)"})
    return rows


def main():
    import platform
    rows = [bench_transform(), bench_mlp(), bench_loop_cost(), bench_tape_memory()]
    rows += bench_forward_and_hvp()
    print(f"Machine: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}\n")
    keys = ["workload", "tangent_x", "reference", "ratio"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


if __name__ == "__main__":
    main()
