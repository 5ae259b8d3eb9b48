"""Unpacking assignments under jit: Python reads every item on the right
before it binds any name on the left (``a, b = b, a``).  The numba stage
stores the targets one after another; a target bound first must not change
what a later one gets (fuzz seed 700089: ``w, y = w_new, w``, the carries
at the end of a loop's turn, gave ``y`` the new ``w``: a silently wrong
value under jit and jit(vmap)).  Oracles: the function run eagerly, eager
grad, central differences, a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def swap_in_a_loop(x):
    a, b = x, 2.0 * x
    for _ in range(3):
        a, b = b, a
        a = a + 0.5 * b
    return np.sum(a * b)


def rotation_in_a_loop(x):
    a, b, c = x, np.sin(x), np.cos(x)
    for _ in range(4):
        a, b, c = b, c, a * 1.1
    return np.sum(a + 2.0 * b + 3.0 * c)


def old_value_kept_in_a_while(x):
    """700089, shrunk: the loop's carries are ``w, y = w_new, w``."""
    w = np.tanh(np.sum(x * x))
    y = 0.0
    while w < 0.65:
        y = w
        w = w + 0.3 + 0.1 * np.sin(w)
    return y - (x - w)


def new_and_old_at_once(x):
    s = np.sum(x)
    t = 0.0
    s, t = s * 0.5 + 1.0, s
    return s * t + np.sum(x * t)


def nested_targets(x):
    a, b, c = x[0], x[1], x[2]
    for _ in range(2):
        (a, b), c = (c, a), b * 1.5
    return a * b + c


def old_value_kept_in_a_for_over_an_array(x):
    prev, cur = 0.0, 0.0
    for xi in x:
        prev, cur = cur, 0.5 * cur + xi
    return cur * prev + cur


def containers_swapped_in_a_loop(x):
    p, q = (x, 2.0 * x), (3.0 * x, x + 1.0)
    for _ in range(3):
        p, q = q, (p[0] * 0.5, p[1])
    return p[0] + 2.0 * p[1] + 3.0 * q[0] + 4.0 * q[1]


CASES = [swap_in_a_loop, rotation_in_a_loop, old_value_kept_in_a_while, new_and_old_at_once,
         nested_targets, old_value_kept_in_a_for_over_an_array, containers_swapped_in_a_loop]
X = np.array([0.3, -0.45, 0.2])


def _scalar(f):
    return lambda x: np.sum(f(x))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jit_equals_eager(f):
    assert_tree_allclose(tx.jit(f)(X), f(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad_and_jit_grad_equal_differences(f):
    loss = _scalar(f)
    expected = numerical_grad(loss, (X,), 0)
    assert_tree_allclose(tx.grad(loss)(X), expected, rtol=1e-6, atol=1e-8)
    assert_tree_allclose(tx.jit(tx.grad(loss))(X), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jit_vmap_equals_a_loop_over_examples(f):
    xs = np.stack([X, X[::-1] * 0.8, X + 0.1])
    expected = np.stack([f(x) for x in xs])
    assert_tree_allclose(tx.jit(tx.vmap(f))(xs), expected, rtol=1e-12, atol=1e-12)
