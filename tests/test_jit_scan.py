"""Under jit: loop cotangents seeded by an int (``s * i`` with an int
counter ``i``), and lax.scan (tuple carries mixing an int counter and a
float, steps returning ``(carry, None)``), forward and under grad.  Each
agrees with eager execution and with central finite differences computed
here."""
import numpy as np
import pytest

import tangent_x as tx
from fuzzing.oracles import compare, fd_grad

X = np.array([0.5, 0.7, 0.2])


def counted_while(x):
    i = 0
    s = 0.0
    while s < 3.0:
        s = s * 1.5 + np.sum(x * x)
        i += 1
    return s * i


def counted_for(x):
    n = 0
    acc = 0.0
    for k in range(3):
        acc = acc * 0.5 + np.sum(x) * k
        n = n + 2
    return n * acc


def times_int_argument(x, n):
    s = 0.0
    while s < 3.0:
        s = s * 1.5 + np.sum(x * x)
    return s * n


def sum_times_first(x):
    return np.sum(x) * x[0]


def _check_grad(f, x):
    eager = tx.grad(f)(x)
    jitted = tx.jit(tx.grad(f))(x)
    compare(jitted, eager, 1e-12, 1.0, "jit(grad) against eager")
    compare(jitted, fd_grad(f, [x], 1e-6)[0], 1e-6, 1.0, "jit(grad) against finite differences")
    assert np.asarray(jitted).dtype == np.float64


@pytest.mark.parametrize("f", [counted_while, counted_for])
def test_int_seeded_cotangent_in_loop(f):
    _check_grad(f, X)


def test_int_argument_seeds_float_cotangent_in_loop():
    n = 2
    eager = tx.grad(times_int_argument)(X, n)
    jitted = tx.jit(tx.grad(times_int_argument))(X, n)
    compare(jitted, eager, 1e-12, 1.0, "jit(grad) against eager")
    fd = fd_grad(lambda x: times_int_argument(x, n), [X], 1e-6)[0]
    compare(jitted, fd, 1e-6, 1.0, "jit(grad) against finite differences")


def test_int_seed_keeps_float_cotangent_in_source():
    # the seed 1.0 * i stays: folded to i, the cotangent would be an int
    assert "s_bar = 1.0 * i" in tx.source(tx.grad(counted_while))
    # a float name's seed still folds away
    assert "1.0 *" not in tx.source(tx.grad(sum_times_first))


# ---------------------------------------------------------------- lax.scan

def scan_int_counter(x):
    def step(c, xi):
        i, acc = c
        return (i + 1, acc * 0.9 + xi * i), acc * xi
    (n, total), ys = tx.lax.scan(step, (0, 0.0), x)
    return total + np.sum(ys)


def scan_no_outputs(x):
    def step(c, xi):
        i, acc = c
        return (i + 1, acc * 0.9 + xi * i), None
    (n, total), ys = tx.lax.scan(step, (0, 0.0), x)
    return total * n


def scan_reverse_tuple_outputs(x):
    def step(c, xi):
        return c + xi, (c * xi, np.sin(xi))
    c, (a, b) = tx.lax.scan(step, 0.0, x, reverse=True)
    return c + np.sum(a * b * np.arange(1.0, x.shape[0] + 1.0))


def scan_vector_outputs(w):
    def step(h, xi):
        h = np.tanh(h * w + xi)
        return h, h * h
    h, hs = tx.lax.scan(step, np.zeros(2), np.ones((3, 2)) * 0.3)
    return np.sum(h) + np.sum(hs * np.arange(6.0).reshape(3, 2))


def scan_length_only(x):
    def step(c, _):
        return c * x, c
    c, ys = tx.lax.scan(step, 1.0, None, length=4)
    return c + np.sum(ys)


SCANS = [scan_int_counter, scan_no_outputs, scan_reverse_tuple_outputs, scan_vector_outputs,
         scan_length_only]
ARGS = {scan_vector_outputs: np.array([0.4, -0.6]), scan_length_only: 0.7}


@pytest.mark.parametrize("f", SCANS, ids=lambda f: f.__name__)
def test_jit_scan_matches_eager(f):
    x = ARGS.get(f, X)
    compare(tx.jit(f)(x), f(x), 1e-12, 1.0, "jit against eager")


@pytest.mark.parametrize("f", SCANS, ids=lambda f: f.__name__)
def test_jit_grad_scan(f):
    _check_grad(f, ARGS.get(f, X))


def scan_in_a_loop_over_rows(x):
    # fuzz seed 580046, shrunk: a scan inside a compiled loop (over an
    # array's rows), its outputs list made afresh each turn; jit(grad)
    # refused it as a list kept in each of its versions
    y = x * 0.0
    for row in (np.ones((2, 3)) * 1.2)[:, ::-1]:
        c, ys = tx.lax.scan(lambda a, xi: (0.6 * a + 0.4 * a[::-1], a[0] * xi),
                            x * row, np.array([0.3, 0.7]))
        x = 0.7 * x + 0.3 * (x * 2.0 if ys.max() > 0.56 else x)
        y = 0.7 * y + 0.3 * c + np.sum(ys)
    return np.sum(y * x)


def test_jit_grad_of_a_scan_inside_a_compiled_loop():
    _check_grad(scan_in_a_loop_over_rows, np.array([0.5, -0.2, 0.3]))
    compare(tx.jit(scan_in_a_loop_over_rows)(X), scan_in_a_loop_over_rows(X), 1e-12, 1.0,
            "jit against eager")
