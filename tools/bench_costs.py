"""tools/bench.py's issue #4 rows: the time of the transform itself (a
30-line function), eager grad of the MLP against hand-written NumPy, the
eager loop's gradient against its primal, tape memory per loop step, and
jvp and Hessian-vector-product ratios."""
import numpy as np

import tangent_x as tx
from tangent_x.api.generate import generate

import bench_harness as harness
import bench_refs
from bench_harness import check, median_time, mlp_inputs


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
        generate(thirty_line_function, "grad", (0,))
    transform()
    seconds = median_time(transform, repeat=20)
    return {"workload": "transform (30-line function)", "tangent_x": f"{seconds * 1e3:.1f} ms",
            "reference": "target 30 ms", "ratio": f"{seconds / 0.030:.2f}x of target"}


def bench_mlp_eager():
    """Eager tx.grad of the MLP loss against the hand-written NumPy backprop."""
    mlp, params, x, y = mlp_inputs()
    grad = tx.grad(mlp.loss)
    check("mlp_grad eager", "tangent_x grad", grad(params, x, y),
          bench_refs.mlp_grad_numpy(params, x, y), required=True)
    t_ours = median_time(lambda: grad(params, x, y), repeat=50)
    t_ref = median_time(lambda: bench_refs.mlp_grad_numpy(params, x, y), repeat=50)
    return {"workload": "mlp_grad (eager, 784-64-10, batch 128)",
            "tangent_x": f"{t_ours * 1e3:.2f} ms",
            "reference": f"{t_ref * 1e3:.2f} ms (hand-written NumPy)",
            "ratio": f"{t_ours / t_ref:.2f}x (target <= 1.3x)"}


def recurrence_n(x, n):
    for _ in range(n):
        x = np.sin(x) * 0.99 + 0.01
    return x


def recurrence_1000(x):
    return recurrence_n(x, 1000)


def _fd(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


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


def bench_tape_memory(sizes=(10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)):
    """Peak memory of the gradient of an N-step loop, per step: constant in N
    means the tape grows as O(N * carried state)."""
    import tracemalloc
    if harness.QUICK:
        sizes = sizes[:2]
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
                     f"bytes/step at {rows[-1][0]:.0e} vs {rows[0][0]:.0e}"}


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
    mlp, params, x, y = mlp_inputs()
    rng = np.random.default_rng(0)
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
