"""``tangent_x.lax`` control-flow primitives called inside the function being
differentiated, with lambdas and nested defs as bodies: fori_loop (closures,
tuple carries, dynamic bounds), while_loop (counter, data-dependent, Newton),
cond (operands, no operands, several operands, Python ``if`` inside a
branch), switch (index from an argument, clamped, computed from data), scan
(carry and stacked outputs, reverse, ``length`` without ``xs``, an RNN),
select, and lax primitives inside Python loops.

Run as plain Python these call the eager lax reference implementation, so
the original function, and finite differences of it, are the reference."""
import numpy as np

import tangent_x as tx

from . import A, C, F, N, Pos, SumSign, V, case


def _small(shape, scale=0.5):
    def make(rng):
        return rng.standard_normal(shape) * scale
    make.__name__ = f"small{shape}"
    return F(make)


@case((N(),), (N((3,)),))
def fori_loop_lambda_closes_over_x(x):
    return np.sum(tx.lax.fori_loop(0, 5, lambda i, c: c * np.cos(x) + x * i,
                                   np.zeros_like(x) + 0.3))


@case((N(),), (N((2,)),))
def fori_loop_nested_def_tuple_carry(x):
    def body(i, carry):
        a, b = carry
        return b, a * 0.5 + np.sin(b) * (i + 1.0)
    a, b = tx.lax.fori_loop(0, 4, body, (x, x * x))
    return np.sum(a * b)


@case((N(), C(2), C(6)), (N((3,)), C(3), C(3)), (N(), C(0), C(10)))
def fori_loop_dynamic_bounds(x, lo, hi):
    return np.sum(tx.lax.fori_loop(lo, hi, lambda i, c: np.tanh(c) + 0.1 * x, x))


@case((N(),), (N((3,)),))
def while_loop_counter_lambdas(x):
    i, y = tx.lax.while_loop(lambda c: c[0] < 6,
                             lambda c: (c[0] + 1, np.sin(c[1]) * 1.1 + x),
                             (0, x))
    return np.sum(y)


@case((V(0.3, scalar=True),), (V(2.0, scalar=True),), (V(12.0, scalar=True),))
def while_loop_data_dependent(x):
    return tx.lax.while_loop(lambda v: v < 10.0, lambda v: v * 1.7 + 0.3, x) ** 2


@case((V(2.0, scalar=True),), (Pos(),))
def while_loop_newton_sqrt(a):
    def not_done(y):
        return abs(y * y - a) > 1e-12

    def newton(y):
        return 0.5 * (y + a / y)
    return tx.lax.while_loop(not_done, newton, a)


@case((SumSign((3,), 1),), (SumSign((3,), -1),))
def cond_lambdas_with_operand(x):
    return tx.lax.cond(np.sum(x) > 0, lambda v: np.sum(np.sin(v) * v),
                       lambda v: np.sum(v ** 2), x)


@case((Pos(), N()), (A(), N((2,))), argnums=(0, 1))
def cond_nested_defs_no_operands(x, y):
    def true_branch():
        return np.sum(x * y + y)

    def false_branch():
        return np.sum(np.exp(x) * y * y)
    return tx.lax.cond(x > 0, true_branch, false_branch)


@case((Pos(), N((3,))), (A(), N((3,))), argnums=(0, 1))
def cond_several_operands(x, y):
    out = tx.lax.cond(x < 0, lambda a, b: a * b, lambda a, b: np.tanh(b) + a, x, y)
    return np.sum(out ** 2)


@case((SumSign((3,), 1),), (SumSign((3,), -1),), (V(12.0, -1.0, 0.5),))
def cond_branch_with_python_if(x):
    def branch(v):
        if np.max(v) > 10.0:
            return v * 0.0
        return np.sin(v) * 2.0
    return np.sum(tx.lax.cond(np.sum(x) > 0, branch, lambda v: v * v, x))


@case((N((3,)), C(0)), (N((3,)), C(1)), (N((3,)), C(2)), (N((3,)), C(7)), (N((3,)), C(-3)))
def switch_list_of_lambdas(x, k):
    branches = [lambda v: np.sum(v ** 2), lambda v: np.sum(np.sin(v)),
                lambda v: np.sum(np.exp(v * 0.5))]
    return tx.lax.switch(k, branches, x)


@case((V(1.0, 2.0, -1.0),), (V(-1.0, -2.0, -1.0),), (V(1.0, 2.0, 3.0),))
def switch_index_from_data(x):
    def zero(v):
        return np.sum(v) * 2.0

    def one(v):
        return np.sum(v * v)

    def many(v):
        return np.sum(np.tanh(v))
    k = int(np.sum(x > 0))
    return tx.lax.switch(k, [zero, one, many], x)


@case((N((4,)),), (N((5, 2)),))
def scan_cumulative(xs):
    def step(c, x):
        c = c + x
        return c, c * x
    carry, ys = tx.lax.scan(step, np.zeros_like(xs[0]), xs)
    return np.sum(carry ** 2) + np.sum(ys)


@case((N((4,)),), (N((3,)),))
def scan_lambda_reverse(xs):
    carry, ys = tx.lax.scan(lambda c, x: (c * 0.5 + x, np.sin(c) * x), 0.0, xs, reverse=True)
    return carry + np.sum(ys * np.arange(1.0, xs.shape[0] + 1.0))


@case((N(),), (N((2,)),))
def scan_length_without_xs(x):
    carry, ys = tx.lax.scan(lambda c, _: (np.cos(c) + x, c * c), x, None, length=5)
    return np.sum(carry) + np.sum(ys)


@case((_small((3, 3)), _small((4, 3))), (_small((2, 2)), _small((5, 2))), argnums=(0, 1))
def scan_rnn_nested_def(W, xs):
    def cell(h, x):
        h = np.tanh(W @ h + x)
        return h, np.sum(h)
    h, outs = tx.lax.scan(cell, np.zeros(W.shape[0]), xs)
    return np.sum(h) + np.sum(outs ** 2)


@case((A((4,)), N((4,))), (A((2, 3)), N((2, 3))), argnums=(0, 1))
def select_elementwise(x, y):
    return np.sum(tx.lax.select(x > 0, x * y, np.sin(y)))


@case((V(1.3, scalar=True),), (V(-0.9, scalar=True),))
def lax_cond_inside_python_loop(x):
    for i in range(5):
        x = tx.lax.cond(x > 0, lambda v: v * 0.8 + 0.05, lambda v: v * 0.7 - 0.05, x)
    return x * x


@case((N(),), (N((3,)),))
def python_loop_inside_fori_body(x):
    def body(i, c):
        for k in range(2):
            c = np.sin(c) + x * (k + 1.0)
        return c
    return np.sum(tx.lax.fori_loop(0, 3, body, x))


@case((N(),), (N((2,)),))
def nested_fori_loops(x):
    def outer(i, c):
        return tx.lax.fori_loop(0, 2, lambda j, d: np.tanh(d) * 1.2 + 0.1 * i, c) + x
    return np.sum(tx.lax.fori_loop(0, 3, outer, x))
