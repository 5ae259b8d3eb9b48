"""lax loops with tuple carries under jit (issue #19, item 4): a counter and
a value carried together (``(i, x)``), nested tuple carries, an int counter
beside a float array, scans whose outputs are pytrees; compiled as they
are, under grad and under vmap.  Oracles: the function run eagerly, finite
differences, a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax
from _fd import assert_tree_allclose, numerical_grad


def scan_counter_carry(x):
    """JAX's idiom: the carry is (step count, running value)."""
    def body(carry, xi):
        i, acc = carry
        return (i + 1, acc + xi * x[0]), acc * xi
    (n, s), ys = lax.scan(body, (0, 0.0), x)
    return s * n + np.sum(ys)


def while_counter_carry(x):
    def cond(carry):
        i, y = carry
        return i < 5
    def body(carry):
        i, y = carry
        return i + 1, y * 0.9 + np.sin(y)
    i, y = lax.while_loop(cond, body, (0, x))
    return np.sum(y) * i


def fori_counter_carry(x):
    def body(i, carry):
        k, y = carry
        return k + 1, y * np.cos(x) + i
    k, y = lax.fori_loop(0, 4, body, (0, x))
    return np.sum(y * y) / k


def scan_nested_carry_pytree_outputs(x):
    def body(carry, xi):
        i, (a, b) = carry
        return (i + 1, (a + xi, b * np.cos(xi))), {"s": a * xi, "t": (b, xi * 2.0)}
    (n, (a, b)), ys = lax.scan(body, (0, (0.0, 1.0)), x)
    return a + b * n + np.sum(ys["s"]) + np.sum(ys["t"][0] * ys["t"][1])


def while_data_dependent_array_carry(x):
    """An int counter and a float array, the trip count decided by data."""
    def cond(carry):
        i, y = carry
        return np.sum(y * y) < 10.0
    def body(carry):
        i, y = carry
        return i + 1, y * 1.5 + 0.1
    i, y = lax.while_loop(cond, body, (0, x))
    return np.sum(np.tanh(y)) + i


def scan_carry_from_zeros_like(xs):
    """The carry starts as np.zeros_like of a step's input: a number for a
    vector's step (NumPy's 0-d array computes as the number)."""
    def step(c, x):
        c = c + x
        return c, c * x
    carry, ys = lax.scan(step, np.zeros_like(xs[0]), xs)
    return np.sum(carry ** 2) + np.sum(ys)


FUNCTIONS = [scan_counter_carry, while_counter_carry, fori_counter_carry,
             scan_nested_carry_pytree_outputs, while_data_dependent_array_carry,
             scan_carry_from_zeros_like]
X = np.array([0.3, -0.2, 0.5])
XS = np.stack([X, 2.0 * X, X - 0.4])


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_jit_matches_eager(fun):
    assert tx.jit(fun)(X) == pytest.approx(fun(X), rel=1e-13)


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_jit_grad_matches_finite_differences(fun):
    compiled = tx.jit(tx.grad(fun))(X)
    assert_tree_allclose(compiled, tx.grad(fun)(X), rtol=1e-12, atol=1e-14)
    assert_tree_allclose(compiled, numerical_grad(fun, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_jit_vmap_grad_matches_a_loop_over_examples(fun):
    per_example = np.stack([numerical_grad(fun, (x,), 0) for x in XS])
    np.testing.assert_allclose(tx.jit(tx.vmap(tx.grad(fun)))(XS), per_example,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(tx.vmap(fun))(XS), [fun(x) for x in XS], rtol=1e-13)


def reversed_views(x, z):
    """``z`` is the caller's C array in the first turn and a reversed view
    after: its tape holds arrays of two layouts."""
    for j in x:
        if j < 0.5:
            z = (z * 0.8 + z)[::-1]
        else:
            z = (z - 0.1 * z)[::-1]
    return np.sum(np.sin(z) * z)


def test_jit_grad_of_a_carry_pushed_as_a_c_array_and_as_a_view():
    """Fuzz seed 320049: Numba typed the tape a list of C arrays, then of
    any-layout arrays, unified the two and failed to cast one to the other
    (an AssertionError inside Numba).  Tapes of arrays now hold any layout."""
    z = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = tx.jit(tx.grad(reversed_views, argnums=1))(X, z)
    assert_tree_allclose(g, tx.grad(reversed_views, argnums=1)(X, z), rtol=1e-13, atol=1e-15)
    assert_tree_allclose(g, numerical_grad(reversed_views, (X, z), 1), rtol=1e-6, atol=1e-8)


def rebound_loop_variable(y):
    """The for loop's variable, rebound to a float in a ``while`` inside it
    whose test is an ``and``: the value restored for the backward pass is
    None before the first turn and a number after."""
    k = y
    for i in range(2):
        w = 0.0
        j = 0
        while w < 0.93 and j < 2:
            i = 0.7 * i + 0.3 * y
            w = w + 0.3 + 0.1 * np.sin(y)
            j += 1
        k = k * i
    return k


def rebound_loop_variable_of_a_vector(x):
    k = x * 1.5
    for i in range(3):
        w = np.tanh(i) * 0.1
        j = 0
        while w < 0.93 and j < 2:
            i = 0.7 * i + 0.3 * (x[1] - 0.9)
            w = w + 0.3 + 0.1 * np.sin(x[0])
            j += 1
        k = 0.7 * k + 0.3 * k * i
    return np.sum(k * k)


@pytest.mark.parametrize("fun, arg", [(rebound_loop_variable, 0.7),
                                      (rebound_loop_variable_of_a_vector, X)],
                         ids=["number", "vector"])
def test_jit_grad_of_a_tape_that_holds_none_then_numbers(fun, arg):
    """Fuzz seed 670160: the tape was typed a list of float64 in one round
    of Numba's typing and of optional(float64) in the next; Numba unified
    the two list types, then failed to cast one to the other (an
    AssertionError inside Numba, refused as a compile failure).  A tape
    list is now always built of its items' common type."""
    g = tx.jit(tx.grad(fun))(arg)
    assert_tree_allclose(g, tx.grad(fun)(arg), rtol=1e-13, atol=1e-15)
    assert_tree_allclose(g, numerical_grad(fun, (arg,), 0), rtol=1e-6, atol=1e-8)
    assert tx.jit(fun)(arg) == pytest.approx(fun(arg), rel=1e-13)
    args = np.array([arg, arg * 0.5, -arg]) if np.ndim(arg) == 0 else XS
    per_example = np.stack([numerical_grad(fun, (a,), 0) for a in args])
    np.testing.assert_allclose(tx.jit(tx.vmap(tx.grad(fun)))(args), per_example,
                               rtol=1e-6, atol=1e-8)
