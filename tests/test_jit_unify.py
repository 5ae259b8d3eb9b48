"""Under jit, a value that is a 0-d array on one path and a number on
another, and loop carries mixing an int counter with a float (lax
while_loop/fori_loop tuples, Python loops), compile and agree with eager
execution and with finite differences."""
import os
import sys

import numpy as np
import pytest

import tangent_x as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _fd
from _fd import assert_tree_allclose, numerical_grad  # noqa: E402

X = np.array([0.3, 0.5, 0.7, 0.9, 1.1])


def sum_or_number(x):
    a = np.sum(x) if x[0] > 0 else 1.0
    return a * x[1]


def number_or_sum(x):
    a = np.sum(x) if x[0] > 10.0 else 1.0
    return a * x[1]


def sum_or_product(x):
    if x[0] > 0:
        a = np.sum(x)
    else:
        a = x[0] * 2.0
    return a * x[1]


def number_becomes_sum_in_loop(x):
    a = 1.0
    for i in range(x.shape[0]):
        a = a * np.sum(x[i:])
    return a


def number_becomes_sum_in_while(x):
    a = 0.0
    n = x.shape[0]
    i = 0
    while i < n:
        a = a * 0.5 + np.sum(x[i:])
        i += 1
    return a


def while_loop_counter_and_float(x):
    c = tx.lax.while_loop(lambda c: c[0] < 5,
                          lambda c: (c[0] + 1, c[1] * 1.1 + np.sin(c[1])), (0, x[0]))
    return c[1]


def fori_loop_tuple_carry(x):
    def body(i, c):
        k, s = c
        return (k + 2, s + np.sin(x[i]) * k)
    k, s = tx.lax.fori_loop(0, x.shape[0], body, (1, 0.0))
    return s * k


def fori_loop_float_counter(x):
    c = tx.lax.fori_loop(0, 4, lambda i, c: (c[0] + i, c[1] * np.cos(c[1]) + c[0]),
                         (0.0, x[1]))
    return c[1]


def python_while_counter_and_float(x):
    i = 0
    s = 0.0
    while i < 4:
        s = s + x[i] * i
        i = i + 1
    return s * s


def python_for_counter_and_float(x):
    n = 0
    s = 0.0
    for v in x:
        s = s + v * n
        n += 1
    return s * s


CASES = [sum_or_number, number_or_sum, sum_or_product, number_becomes_sum_in_loop,
         number_becomes_sum_in_while, while_loop_counter_and_float, fori_loop_tuple_carry,
         fori_loop_float_counter, python_while_counter_and_float,
         python_for_counter_and_float]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jit_matches_eager(f):
    assert tx.jit(f)(X) == pytest.approx(f(X), rel=1e-12)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jit_grad_matches_finite_differences(f):
    want = numerical_grad(f, (X,))
    assert_tree_allclose(tx.jit(tx.grad(f))(X), want)
    assert_tree_allclose(tx.grad(f)(X), want)


# A 0-d array argument (jnp.array(0.5) in JAX code, or a float32 number kept
# in its dtype) on one path, and a number computed from it on another:
# NumPy's arithmetic gives numbers from 0-d arrays, so compiled code takes
# the argument as the number it holds.

def scalar_passed_or_computed(x, y):
    if np.sum(x) > 0.0:
        y = np.maximum(y, 0.1)
    return np.sum(x * y)


def scalar_carried_by_while_loop(x, y):
    _, s = tx.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.6 * c[1] + 0.4 * np.tanh(y)),
                             (0, y))
    return s * np.sum(x)


def scalar_returned(x, y):
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [scalar_passed_or_computed, scalar_carried_by_while_loop],
                         ids=lambda f: f.__name__)
def test_zero_d_argument_joins_numbers(f, dtype):
    x, y = X.astype(dtype), np.array(0.7, dtype=dtype)
    got, want = tx.jit(f)(x, y), f(x, y)
    assert np.result_type(got) == np.result_type(want)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    assert got == pytest.approx(want, rel=rtol)
    assert_tree_allclose(tx.jit(tx.grad(f, argnums=(0, 1)))(x, y),
                         tx.grad(f, argnums=(0, 1))(x, y), rtol=rtol)
    if dtype == np.float64:
        assert_tree_allclose(tx.grad(f, argnums=1)(x, y), numerical_grad(f, (x, y), 1))


def test_zero_d_argument_returned_keeps_its_dtype():
    y = np.array(0.7, dtype=np.float32)
    got = tx.jit(scalar_returned)(X, y)
    assert np.result_type(got) == np.float32 and got == y


def tuple_returned_from_inside_a_loop(x, y):
    w = np.sum(y)
    while w < 0.9:
        if x >= -0.1:
            return (np.sum(y) * x, 0.5 - y)    # None until it runs: optional leaves
        w = w + 0.3 + 0.1 * np.sin(x)
    return (w * 2.0, y * x)


def _loss_of_tuple(x, y):
    a, b = tuple_returned_from_inside_a_loop(x, y)
    return a + np.sum(b * b)


@pytest.mark.parametrize("x", [0.5, -0.5])
def test_tuple_returned_from_inside_a_loop(x):
    y = np.array([0.1, 0.2])
    assert_tree_allclose(tx.jit(tuple_returned_from_inside_a_loop)(x, y),
                         tuple_returned_from_inside_a_loop(x, y), rtol=1e-12)
    want = tx.grad(_loss_of_tuple, argnums=(0, 1))(x, y)
    assert_tree_allclose(want, (numerical_grad(_loss_of_tuple, (x, y), 0),
                                numerical_grad(_loss_of_tuple, (x, y), 1)))
    # jit(grad): the array leaf is None until the return runs, and the
    # reverse pass takes its zero after the loop (``zeros_like`` of an
    # optional array; once refused)
    assert_tree_allclose(tx.jit(tx.grad(_loss_of_tuple, argnums=(0, 1)))(x, y), want,
                         rtol=1e-12)


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_jit_vmap_of_a_tuple_returned_from_inside_a_loop():
    # (fuzzed seed 55) the compiled loop over examples gets results Numba
    # types as optional (None until the return runs): once refused
    # ("OptionalType(float64) cannot be represented as a NumPy dtype")
    X, y = np.array([-0.022, 0.692, -0.177, 0.263]), -0.993
    got = tx.jit(tx.vmap(numbers_returned_from_inside_a_loop, in_axes=(0, None)))(X, y)
    want = [numbers_returned_from_inside_a_loop(x, y) for x in X]
    assert_tree_allclose(got, tuple(np.array([w[i] for w in want]) for i in range(2)),
                         rtol=1e-12)
    Y = np.array([[0.1, 0.2], [0.3, -0.2], [0.5, 0.5]])
    got = tx.jit(tx.vmap(tuple_returned_from_inside_a_loop, in_axes=(None, 0)))(-0.5, Y)
    want = [tuple_returned_from_inside_a_loop(-0.5, y) for y in Y]
    assert_tree_allclose(got, tuple(np.array([w[i] for w in want]) for i in range(2)),
                         rtol=1e-12)


def numbers_returned_from_inside_a_loop(x, y):
    w = np.tanh(y)
    while w < 0.9:
        if x >= -0.1:
            return (y, y * 2.0)
        w = w + 0.3
    return (w * 0.5, y * x)


def _loss_of_numbers(x, y):
    first, second = numbers_returned_from_inside_a_loop(x, y)
    return first * 2.0 + np.sum(second)


@pytest.mark.parametrize("x", [0.5, -0.454])
def test_jit_grad_of_numbers_returned_from_inside_a_loop(x):
    # (fuzzed seed 55) the tape of the return's value gets None in the first
    # trial pass and numbers once the return's carry is known; and the join
    # of leaf 1 of return_value_bar must not be named like the adjoint's own
    # variable return_value_bar_1
    y = -0.993
    want = numerical_grad(_loss_of_numbers, (x, y), 0), numerical_grad(_loss_of_numbers, (x, y), 1)
    assert_tree_allclose(tx.grad(_loss_of_numbers, argnums=(0, 1))(x, y), want, rtol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(_loss_of_numbers, argnums=(0, 1)))(x, y),
                         tx.grad(_loss_of_numbers, argnums=(0, 1))(x, y), rtol=1e-12)
