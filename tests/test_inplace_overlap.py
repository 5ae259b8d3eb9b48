"""In-place updates whose right-hand side reads the array being written
(the slice itself, overlapping slices, negative starts, steps), through
every name that holds the array: an alias of an argument, a helper that
changes its argument, aliases carried by a loop.  References are central
finite differences of the untransformed function."""
import os
import sys

import numpy as np
import pytest

import tangent_x as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _fd
from _fd import assert_tree_allclose, numerical_grad  # noqa: E402

X = np.array([0.3, 0.5, 0.7, 0.9, 1.1, 0.4])
V = np.array([0.2, -0.4, 0.9, 0.1, 0.6, -0.3])
W = np.array([1.0, -2.0, 0.5, 3.0, -1.5, 0.7])


def gate_overlapping(c):
    c = c * 1.0
    c[1::2] *= 1.0 / (1.0 + np.exp(-(c[-2::2] * c[:2:2])))
    return np.sum(c * W)


def shifted_add(x):
    x = x * 1.0
    x[1:4] += x[0:3] * x[1:4]
    return np.sum(x * W)


def reversed_steps(x):
    x = x * 1.0
    x[::2] = x[::-2] * x[::2]
    return np.sum(x * W)


def item_of_itself(x):
    x = x * 1.0
    for i in range(1, 5):
        x[i] = np.sin(x[i]) * x[i - 1]
    return np.sum(x * x)


def alias_of_argument(c):
    d = c
    d[1::2] *= 1.0 / (1.0 + np.exp(-(c[-2::2] * c[:2:2])))
    return np.sum(c * c * W)


def alias_of_argument_in_loop(c):
    d = c
    for _ in range(2):
        d[:] *= np.sin(c[:] + c[::-1])
        d[-4] *= np.sin(c[-1])
    return np.sum(c * W)


def _gate(c):
    c[1::2] *= 1.0 / (1.0 + np.exp(-(c[-2::2] * c[:2:2])))
    return c


def helper_changes_argument(c):
    c = c * 1.0
    d = _gate(c)
    return np.sum(c * d)


def helper_result_ignored(c):
    c = c * 1.0
    _gate(c)
    return np.sum(c * c * W)


def _scale_param(a):
    b = a
    b[0] = b[0] * a[1]
    return a


def helper_alias_of_parameter(c):
    c = c * 1.0
    return np.sum(_scale_param(c) * W)


CASES = [gate_overlapping, shifted_add, reversed_steps, item_of_itself, alias_of_argument,
         alias_of_argument_in_loop, helper_changes_argument, helper_result_ignored,
         helper_alias_of_parameter]


def _eager(f, x):
    return f(x.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_primal_and_grad(f):
    assert tx.vjp(f, X.copy())[0] == pytest.approx(_eager(f, X), rel=1e-12)
    want = numerical_grad(lambda x: _eager(f, x), (X,))
    assert_tree_allclose(tx.grad(f)(X.copy()), want)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp(f):
    want = numerical_grad(lambda x: _eager(f, x), (X,)) @ V
    assert tx.jvp(f, (X.copy(),), (V,))[1] == pytest.approx(want, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("f", [alias_of_argument, helper_changes_argument],
                         ids=lambda f: f.__name__)
def test_jit_grad(f):
    want = numerical_grad(lambda x: _eager(f, x), (X,))
    assert_tree_allclose(tx.jit(tx.grad(f))(X.copy()), want)
