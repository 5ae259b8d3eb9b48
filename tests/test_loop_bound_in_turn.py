"""A name a loop binds on one path of an ``if`` and reads on every turn:
the next turn reads the value the last turn left (fuzz seed 481437, where
grad used an unbound placeholder on the turns the ``if`` was not taken and
raised UnboundLocalError where Python ran).  The loop carries the name from
unbound; compiled code reads it back from the tape as an optional value."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def every_other_turn(x):
    s = 0.0 * x
    for i in range(4):
        if i % 2 == 0:
            t = x * (i + 1.0)
        s = s + t * x
    return np.sum(s)


def until_large(x):
    s = 0.0 * x
    k = 0
    while k < 5:
        if np.sum(s) < 3.0:
            t = x * (k + 1.0)
        s = s + np.sin(t)
        k += 1
    return np.sum(s)


def number_carry(x):
    acc = 0.1 * np.sum(x)
    for i in range(3):
        if np.sum(x * x) >= 0.5 * i:
            v = np.sum(np.cos(x)) * i
            x = x * 0.5
        acc = 0.7 * acc + 0.3 * v
    return acc


def first_turn_unbound(x):
    s = 0.0
    for i in range(3):
        if np.sum(x) * i > 0.1:       # (a test known only at run time)
            t = x * i
        s = s + t
    return s


def defines_a_helper_each_turn(x):
    # a ``def`` in a loop that breaks, beside a local function: liveness
    # counted ``g`` as read after the loop, carried it and refused
    # (fuzz seed 501538)
    acc = x
    k = 0
    while k < 4:
        c = acc * 1.5

        def g():
            return c[1]
        v = g()
        acc = acc + np.sin(v) * x
        if np.sum(acc) > 3.0:
            break
        k += 1
    return np.sum(acc)


CASES = [every_other_turn, until_large, number_carry, defines_a_helper_each_turn]
POINTS = [np.array([0.3, 0.7, 1.1]), np.array([1.3, -0.4, 0.9]), np.array([[0.2], [0.5]])]


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
@pytest.mark.parametrize("point", range(len(POINTS)))
def test_grad_matches_finite_differences(fn, point):
    x = POINTS[point]
    assert_tree_allclose(tx.grad(fn)(x), numerical_grad(fn, (x,)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tx.jvp(fn, (x,), (np.ones_like(x),))[0], fn(x))


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_vmap_matches_a_loop_over_examples(fn):
    X = np.stack([POINTS[0], 2.0 * POINTS[0], POINTS[1]])
    np.testing.assert_allclose(tx.vmap(fn)(X), [fn(r) for r in X])
    np.testing.assert_allclose(tx.vmap(tx.grad(fn))(X), [tx.grad(fn)(r) for r in X])


@pytest.mark.slow
@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_jit_matches_eager(fn):
    x = POINTS[1]
    np.testing.assert_allclose(tx.jit(fn)(x), fn(x))
    np.testing.assert_allclose(tx.jit(tx.grad(fn))(x), tx.grad(fn)(x))


def test_a_first_turn_that_does_not_bind_raises_as_python_does():
    x = np.array([0.5, 1.5])
    with pytest.raises(UnboundLocalError):
        first_turn_unbound(x)
    with pytest.raises(UnboundLocalError):
        tx.grad(lambda x: np.sum(first_turn_unbound(x)))(x)
    with pytest.raises(UnboundLocalError):
        tx.jit(first_turn_unbound)(x)
