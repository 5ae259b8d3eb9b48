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
