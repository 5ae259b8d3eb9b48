"""Functions for the batching corpus: each exercises batching rules, and is
vmapped over in_axes 0, 1, -1 and None and compared with a Python loop.

``CASES``: name -> (function, per-example arguments).  Functions of two
arguments are mapped over each argument alone and over both.
"""
from typing import NamedTuple

import numpy as np

import tangent_x as tx

_r = np.random.default_rng(7)
A3 = _r.normal(size=3)
M23 = _r.normal(size=(2, 3))
M34 = _r.normal(size=(3, 4))
T234 = _r.normal(size=(2, 3, 4))


def v(*shape):
    return _r.normal(size=shape) if shape else float(_r.normal())


def elementwise_unary(x, y):
    return np.tanh(x) + np.exp(-np.abs(y)) + np.sqrt(np.square(x) + 1.0) + np.log1p(y * y)


def elementwise_more(x, y):
    a = np.sin(x) * np.cos(y) - np.arctan(x) / (1.0 + np.sinh(y) ** 2)
    b = np.maximum(x, y) + np.minimum(x, 0.5) + np.arctan2(x, y + 3.0) + np.hypot(x, y)
    c = np.expm1(x * 0.1) + np.log(np.cosh(y)) + np.cbrt(x) + np.reciprocal(2.0 + np.tanh(y))
    d = np.exp2(x * 0.1) + np.log2(3.0 + np.sin(y)) + np.log10(2.0 + np.cos(x))
    return a + b + c + d + np.logaddexp(x, y) + np.fmax(x, y) - np.fmin(x, y)


def rank_mismatch(x, y):
    """A scalar per example against a vector: needs a new axis when both batched."""
    return x * y + x


def compare_where(x, y):
    return np.where(x > y, x - y, y * 2.0) + np.clip(x, -0.5, 0.5) + (x >= 0) * 1.0 \
        + np.sign(y) + np.floor(x) + np.round(y) + np.isfinite(x) * 1.0


def powers_and_mod(x, y):
    return x ** 2 + np.abs(y) ** 0.5 + np.mod(x, 1.5) + (-x) + np.floor_divide(y, 0.7)


def logic(x, y):
    both = np.logical_and(x > 0, y > 0)
    either = np.logical_or(x > 0, np.logical_not(y > 0))
    return np.where(np.logical_xor(both, either), x, y)


def reductions(x, y):
    return (np.sum(x) + np.mean(y) + np.prod(np.tanh(x)) + np.max(x) + np.min(y)
            + np.var(x) + np.std(y) + np.sum(np.abs(x), axis=0) + np.amax(y) + np.amin(x))


def reductions_axis(x, y):
    a = np.sum(x, axis=0) + np.mean(x, axis=-1, keepdims=False).sum()
    b = np.max(x, axis=1) + np.min(x, axis=(0, 1)) + np.prod(x, axis=0).sum()
    c = np.sum(x, axis=0, keepdims=True) * y
    return a.sum() + b.sum() + c + np.var(x, axis=1).sum() + np.std(x, axis=-2).sum()


def arg_and_cumulative(x, y):
    return np.cumsum(x) + np.argmax(x) + np.argmin(y) + np.cumsum(y, axis=0)[-1] \
        + np.all(x > -10) + np.any(y > 10) + np.count_nonzero(x > 0)


def matmul_vec(x, y):
    return M23 @ x + y @ M34 @ np.ones(4) + x @ y


def matmul_mat(x, y):
    return (x @ y).sum() + (M23 @ y).sum() + (x @ M34).sum()


def dots(x, y):
    return np.dot(x, y) + np.dot(M23, x).sum() + np.dot(2.0, x).sum() + np.einsum("i,i->", x, y) \
        + np.einsum("ij,j", M23, y).sum() + np.einsum("i,j->ij", x, y).sum()


def indexing(x, y):
    a = x[0] + x[-1] + x[1:3].sum() + x[::2].sum() + x[None, :].sum()
    b = y[1, :].sum() + y[:, 2].sum() + y[..., 0].sum() + y[np.array([0, 1])].sum()
    return a + b


def indexing_by_batched_index(x, i):
    k = int(np.abs(i) * 2) % 3
    return x[k] + A3[k] + x[k:k + 1].sum() * 0.0


def index_update(x, y):
    u = np.zeros(3)
    u[0] = y
    u[1:] = x[:2] * y
    z = np.copy(x)
    z[2] = 5.0
    z[0] += y
    return u + z


def shapes(x, y):
    a = np.reshape(x, (2, 3)).T.sum(axis=1)
    b = x.reshape(3, 2)[:, 0]
    c = np.transpose(np.reshape(x, (1, 2, 3)), (2, 0, 1)).sum(axis=(1, 2))
    d = np.expand_dims(y, 0).sum(axis=0) + np.squeeze(np.reshape(y, (1, 3)), axis=0)
    e = np.swapaxes(np.reshape(x, (2, 3)), 0, 1).ravel()[:3]
    f = np.moveaxis(np.reshape(x, (2, 3, 1)), 0, -1).sum(axis=(1, 2))
    return a + b + c + d + e + f + np.flip(y) + np.broadcast_to(y, (2, 3)).sum(axis=0)


def joins(x, y):
    a = np.concatenate([x, y]).sum() + np.stack([x, y]).sum(axis=0)
    b = np.hstack([x, y])[:3] + np.vstack([x, y]).sum(axis=0) + np.stack([x, A3], axis=1).sum(axis=1)
    return a + b + np.array([x[0], y[1], 2.0]) + np.concatenate([A3, y], axis=0)[:3]


def matrix_ops(x, y):
    return np.trace(x) + np.diagonal(x).sum() + np.repeat(y, 2, axis=0)[:3] \
        + np.flip(x, axis=0)[0] + x.T[0]


def shape_queries(x, y):
    n = len(x) + x.shape[0] + np.shape(y)[0] + x.ndim + np.size(y)
    return x * n + y.sum() / y.size


def likes(x, y):
    return np.zeros_like(x) + np.ones_like(y) * 2.0 + np.full_like(x, 3.0) + np.copy(x) \
        + np.asarray(y) + x.astype(np.float64)


def containers(x, y):
    pair = (x, y)
    d = {"a": x, "b": A3}
    items = [y, d["b"]]
    return pair[0] * d["a"] + items[0] + items[1] + d["b"] * pair[1]


def scalar_casts(x, y):
    return float(x) * y + int(abs(x) * 3) + bool(x > 0)


def if_batched(x, y):
    if np.sum(x) > 0:
        z = x * 2.0
    else:
        z = -x + y
    return z


def if_shared_and_batched(x, y):
    t = 0.5 if np.sum(y) > 0 else -0.5
    if x[0] > t:
        return x * t
    return y


def while_lanes(x, y):
    """Lanes finish at different iterations."""
    s = np.abs(x) + 0.1
    n = 0.0
    while s < 10.0:
        s = s * 1.7 + y * y
        n = n + 1.0
    return s + n


def while_shared(x, y):
    k = 0
    acc = x
    while k < 4:
        acc = np.tanh(acc) + y
        k += 1
    return acc


def for_loop(x, y):
    acc = np.zeros(3)
    for i in range(3):
        acc = acc + x[i] * y
        if x[i] > 0:
            acc = acc * 0.5
    return acc


def break_loop(x, y):
    acc = 0.0
    for i in range(10):
        acc = acc + x * i
        if acc > y:
            break
    return acc


def newton_sqrt(a, y):
    x = a
    while np.abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x + y


def elementwise_rest(x, y):
    t = np.tanh(x) * 0.5
    a = np.arccos(t) + np.arcsin(t) + np.arctanh(t) + np.arcsinh(y) + np.arccosh(2.0 + y * y)
    b = np.tan(t) + np.ceil(y) + np.rint(x) + np.trunc(y) + np.isinf(x) + np.isnan(y)
    c = np.conj(x) + np.real(y) + (x == y) + (x != y) + (x <= y) + (+x)
    d = (~(x > 0)) * 1.0 + ((x > 0) & (y > 0)) * 2.0 + ((x > 0) | (y > 0)) * 3.0
    return a + b + c + d + tx.stop_gradient(x) + x.real


def casts(x, y):
    e = np.empty_like(x)
    return np.float64(x) + np.float32(y) + np.int64(x > 0) + np.int32(y > 0) + np.shape(e)[0]


class Pair(NamedTuple):
    first: float
    second: float


def named(x, y):
    p = Pair(x, y * 2.0)
    z = x
    return p.first * p.second + z


def scatter_add(x, y):
    z = np.zeros(3)
    z[np.array([0, 0, 2])] += y
    return z * x


def container_update(x, y):
    d = {"a": x, "b": 1.0}
    d["b"] = y * 2.0
    items = [x, x]
    items[1] = y
    return d["a"] * d["b"] + items[0] - items[1]


def negation(x, y):
    if not np.sum(x) > 0:
        return x
    return y


def scan_sum(x, y):
    def step(carry, xi):
        return carry + xi * y[0], carry * xi
    total, partial = tx.lax.scan(step, 0.0, x)
    return partial + total


def per_example_trip_count(x, y):
    n = int(np.abs(y) * 3) + 1
    acc = 0.0
    for i in range(n):
        acc = acc + x[i % 3] * i
    for j in range(5, n, -2):
        acc = acc - j * 0.5
    return acc


def opaque_callable(x, y):
    return _helper(x) + y


def _helper(x):
    return np.sort(x)[0]


CASES = {
    "elementwise_unary": (elementwise_unary, lambda: (v(3), v(3))),
    "elementwise_scalar": (elementwise_unary, lambda: (v(), v())),
    "elementwise_more": (elementwise_more, lambda: (v(2, 3), v(2, 3))),
    "rank_mismatch": (rank_mismatch, lambda: (v(), v(3))),
    "compare_where": (compare_where, lambda: (v(4), v(4))),
    "powers_and_mod": (powers_and_mod, lambda: (v(3), v(3))),
    "logic": (logic, lambda: (v(3), v(3))),
    "reductions": (reductions, lambda: (v(3), v(3))),
    "reductions_axis": (reductions_axis, lambda: (v(2, 3), v(3))),
    "arg_and_cumulative": (arg_and_cumulative, lambda: (v(4), v(4))),
    "matmul_vec": (matmul_vec, lambda: (v(3), v(3))),
    "matmul_mat": (matmul_mat, lambda: (v(2, 3), v(3, 4))),
    "dots": (dots, lambda: (v(3), v(3))),
    "indexing": (indexing, lambda: (v(4), v(3, 3))),
    "indexing_by_batched_index": (indexing_by_batched_index, lambda: (v(3), v())),
    "index_update": (index_update, lambda: (v(3), v())),
    "shapes": (shapes, lambda: (v(6), v(3))),
    "joins": (joins, lambda: (v(3), v(3))),
    "matrix_ops": (matrix_ops, lambda: (v(3, 3), v(3))),
    "shape_queries": (shape_queries, lambda: (v(3), v(4))),
    "likes": (likes, lambda: (v(3), v(3))),
    "containers": (containers, lambda: (v(3), v(3))),
    "scalar_casts": (scalar_casts, lambda: (v(), v(2))),
    "if_batched": (if_batched, lambda: (v(3), v(3))),
    "if_shared_and_batched": (if_shared_and_batched, lambda: (v(3), v(3))),
    "while_lanes": (while_lanes, lambda: (v(), v())),
    "while_shared": (while_shared, lambda: (v(2), v(2))),
    "for_loop": (for_loop, lambda: (v(3), v(3))),
    "break_loop": (break_loop, lambda: (v(), v())),
    "newton_sqrt": (newton_sqrt, lambda: (abs(v()) + 0.5, v())),
    "elementwise_rest": (elementwise_rest, lambda: (v(3), v(3))),
    "casts": (casts, lambda: (v(3), v(3))),
    "named": (named, lambda: (v(), v())),
    "scatter_add": (scatter_add, lambda: (v(3), v())),
    "container_update": (container_update, lambda: (v(3), v(3))),
    "negation": (negation, lambda: (v(3), v(3))),
    "scan_sum": (scan_sum, lambda: (v(4), v(4))),
    "per_example_trip_count": (per_example_trip_count, lambda: (v(3), v())),
    "opaque_callable": (opaque_callable, lambda: (v(3), v())),
}


BATCH = 5


def stack_examples(examples, axis):
    """Stack per-example values along ``axis`` (None: the first example, shared)."""
    if axis is None:
        return examples[0]
    return np.stack([np.asarray(e) for e in examples], axis=axis)


def loop_over_examples(fun, batched_args, in_axes):
    """What vmap must equal: ``fun`` called once per example, results stacked."""
    outs = []
    for k in range(BATCH):
        args = [a if ax is None else np.take(a, k, axis=ax)
                for a, ax in zip(batched_args, in_axes)]
        outs.append(fun(*args))
    return np.stack([np.asarray(o) for o in outs])


def steps_to(x, limit):
    """Doublings of x until it reaches limit: a while loop whose examples
    finish at different iterations."""
    n = 0.0
    while x < limit:
        x = x * 2.0
        n = n + 1.0
    return n
