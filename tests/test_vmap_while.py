"""vmap through while loops, of the function and of its gradient: the
gradient's tapes pushed and popped once per step (no per-lane copies, so
the cost is linear in the steps), cotangent shapes for every mix of
batched and shared arguments and state ranks, and lanes that stop at
different steps.  Expected values come from a Python loop of ``tx.grad``
over the examples, itself checked against central differences."""
import os
import sys

import numpy as np
import pytest

import tangent_x as tx
from tangent_x.runtime.lanes import unbroadcast_lanes
from tangent_x.runtime import unbroadcast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fd import numerical_grad  # noqa: E402

BATCH = 3


def rhs(y, k):
    return -k * y + np.sin(y)


def rk4_step(y, k, h):
    k1 = rhs(y, k)
    k2 = rhs(y + 0.5 * h * k1, k)
    k3 = rhs(y + 0.5 * h * k2, k)
    k4 = rhs(y + h * k3, k)
    return y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(y0, k, n):
    """RK4 steps of ``y' = -k y + sin(y)``, as many as ``n`` (shared)."""
    y = y0
    h = 0.01
    i = 0
    while i < n:
        y = rk4_step(y, k, h)
        i = i + 1
    return np.sum(y * y)


def integrate_until(y0, k, T):
    """RK4 steps until ``t`` reaches ``T``: a stop that may differ per example."""
    y = y0
    h = 0.01
    t = 0.0
    while t < T:
        y = rk4_step(y, k, h)
        t = t + h
    return np.sum(y * y)


def _example(value, axis, b):
    return value if axis is None else value[b]


def _per_example(fn, args, in_axes):
    """``fn`` called on each example, results stacked (tuples leafwise)."""
    outs = [fn(*[_example(a, ax, b) for a, ax in zip(args, in_axes)])
            for b in range(BATCH)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def _check(actual, expected):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _check(a, e)
        return
    assert np.shape(actual) == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


_STATES = [(BATCH,), (BATCH, 3), (BATCH, 3, 2)]   # a number, a vector, a matrix per example


def _args(state, k_batched, stop):
    rng = np.random.default_rng(len(state) + 10 * k_batched)
    y0 = rng.random(state)
    k = 0.5 + rng.random(BATCH) if k_batched else 0.7
    return y0, k, stop


@pytest.mark.parametrize("state", _STATES)
@pytest.mark.parametrize("k_batched", [False, True])
@pytest.mark.parametrize("fn,stop", [(integrate, 6), (integrate_until, 0.05)])
def test_vmap_grad_of_loop_with_a_shared_stop(state, k_batched, fn, stop):
    args = _args(state, k_batched, stop)
    in_axes = (0, 0 if k_batched else None, None)
    grad = tx.grad(fn, argnums=(0, 1))
    _check(tx.vmap(grad, in_axes=in_axes)(*args), _per_example(grad, args, in_axes))
    _check(tx.vmap(fn, in_axes=in_axes)(*args), _per_example(fn, args, in_axes))


@pytest.mark.parametrize("state", _STATES[:2])
@pytest.mark.parametrize("k_batched", [False, True])
def test_vmap_grad_of_loop_whose_lanes_stop_at_different_steps(state, k_batched):
    y0, k, _ = _args(state, k_batched, None)
    stops = np.array([0.03, 0.07, 0.05])
    in_axes = (0, 0 if k_batched else None, 0)
    grad = tx.grad(integrate_until, argnums=(0, 1))
    args = (y0, k, stops)
    _check(tx.vmap(grad, in_axes=in_axes)(*args), _per_example(grad, args, in_axes))
    _check(tx.vmap(integrate_until, in_axes=in_axes)(*args),
           _per_example(integrate_until, args, in_axes))


@pytest.mark.parametrize("state", [(), (3,), (3, 2)])
def test_the_per_example_reference_against_finite_differences(state):
    rng = np.random.default_rng(7)
    y0 = rng.random(state) if state else 0.4
    dy0, dk = tx.grad(integrate, argnums=(0, 1))(y0, 0.7, 6)
    ny0, nk = numerical_grad(lambda y, k: integrate(y, k, 6), (y0, 0.7), argnum=(0, 1))
    np.testing.assert_allclose(dy0, ny0, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk, nk, rtol=1e-6, atol=1e-8)


def test_tapes_are_pushed_and_popped_once_per_step():
    """No tape goes through the per-example fallback (re-flattening the
    whole tape at every step was quadratic in the steps): the tape of the
    state holds batched arrays, the tapes of shapes per-example shapes."""
    f = tx.vmap(tx.grad(integrate, argnums=(0, 1)), in_axes=(0, 0, None))
    y0, k, n = _args((BATCH, 3), True, 4)
    f(y0, k, n)
    code = tx.source(f)
    assert "map_lanes" not in code
    assert "broadcast_lanes(y_tape" not in code
    assert ".append(y)" in code and ".pop()" in code


@pytest.mark.parametrize("g_shape,x_shape", [((), (3,)), ((4,), (3, 4)), ((2, 3), (3,)),
                                             ((3, 4), (1, 4)), ((3,), ())])
def test_unbroadcast_lanes_is_unbroadcast_per_example(g_shape, x_shape):
    """A shared ``x``; a cotangent of lower rank than ``x`` (a folded seed) is
    broadcast up, as the per-example ``unbroadcast`` does."""
    rng = np.random.default_rng(1)
    g = rng.random((BATCH,) + g_shape)
    x = np.ones(x_shape)
    expected = np.stack([np.broadcast_to(unbroadcast(g[b], x), x_shape) for b in range(BATCH)])
    _check(np.asarray(unbroadcast_lanes(g, x)), expected)


def test_unbroadcast_lanes_of_a_batched_operand_of_lower_rank():
    rng = np.random.default_rng(2)
    g = rng.random((BATCH, 2, 1, 4))
    x = np.ones((BATCH, 1, 4))
    _check(unbroadcast_lanes(g, x, x_batched=True),
           np.stack([unbroadcast(g[b], x[b]) for b in range(BATCH)]))


def test_loop_strategy_with_a_parameter_named_k():
    """The per-example loop's own names never capture a parameter."""
    def scale(x, k):
        return x * k
    x, k = np.arange(6.0).reshape(BATCH, 2), np.array([1.0, 2.0, 3.0])
    _check(tx.vmap(scale, method="loop")(x, k), x * k[:, None])


def drain(x, w):
    """``while items:`` popping a list of batched items until it is empty:
    the list's truth is its length, every example's."""
    items = [x * w, np.sin(x)]
    items.append(x * x)
    acc = items[0] * 0.0
    while items:
        acc = 0.5 * acc + items.pop() * w
    return np.sum(np.tanh(acc))


def last_if_any(x, w, n):
    """``if items:`` on a list of batched items, of a shared length ``n``."""
    items = [np.sin(x * w) for _ in range(n)]
    s = 0.1 * w
    if items:
        s = s + np.sum(items.pop() ** 2)
    if not items:
        s = s * w
    return s


def last_if_bool(x, w, n):
    """``bool(items)``: the list's length too."""
    items = [np.sin(x * w) for _ in range(n)]
    s = 0.1 * w
    if bool(items):
        s = s + np.sum(items[-1] ** 2)
    return s


_LIST_TRUTH = [(drain, ()), (last_if_any, (2,)), (last_if_any, (1,)), (last_if_any, (0,)),
               (last_if_bool, (2,)), (last_if_bool, (0,))]


@pytest.mark.parametrize("state", [(BATCH,), (BATCH, 3)])
@pytest.mark.parametrize("w_batched", [False, True])
@pytest.mark.parametrize("fn,rest", _LIST_TRUTH)
def test_vmap_grad_of_the_truth_of_a_list(state, w_batched, fn, rest):
    """Fuzz seeds 170046 and 170137: the list's batched items made its truth
    read as per-lane; the loop's fixed point then flagged the list as its
    probe's final value (empty) and the popped item as shared."""
    rng = np.random.default_rng(len(state) + 10 * w_batched)
    x = rng.random(state)
    x[1] = 0.0      # an example whose items are zeros: falsy as arrays, not as a list
    w = 0.5 + rng.random(BATCH) if w_batched else 0.7
    args = (x, w) + rest
    in_axes = (0, 0 if w_batched else None) + (None,) * len(rest)
    grad = tx.grad(fn, argnums=(0, 1))
    _check(tx.vmap(grad, in_axes=in_axes)(*args), _per_example(grad, args, in_axes))
    _check(tx.vmap(fn, in_axes=in_axes)(*args), _per_example(fn, args, in_axes))


@pytest.mark.parametrize("fn,rest", _LIST_TRUTH)
def test_the_list_truth_reference_against_finite_differences(fn, rest):
    x = np.array([0.3, -0.8, 1.1])
    dx, dw = tx.grad(fn, argnums=(0, 1))(x, 0.7, *rest)
    nx, nw = numerical_grad(lambda a, b: fn(a, b, *rest), (x, 0.7), argnum=(0, 1))
    np.testing.assert_allclose(dx, nx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dw, nw, rtol=1e-6, atol=1e-8)
