"""Index updates vmap runs one example at a time (an index that differs per
example: ``set_index`` and ``add_index`` per lane), then differentiated
again: values against a loop over examples, gradients of the vmapped sum
against finite differences of that loop."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def add_at_own_index(x, v):
    i = np.argmax(x)                   # a different index in each example
    y = x.at[i].add(v * v)
    return np.sin(y) * v


def add_at_own_index_plain(x, v):       # NumPy's spelling: the reference
    i = np.argmax(x)
    y = np.array(x)
    np.add.at(y, i, v * v)
    return np.sin(y) * v


def set_at_own_index(x, v):
    i = np.argmin(x)
    y = x * 1.0
    y[i] = v * x[0]
    return y * y


def add_at_repeated(x, v):
    idx = np.array([0, 0, 1]) + (np.sum(x) > 0)
    return x.at[idx].add(v)


def add_at_repeated_plain(x, v):
    idx = np.array([0, 0, 1]) + (np.sum(x) > 0)
    y = np.array(x)
    np.add.at(y, idx, v)
    return y


@pytest.mark.parametrize("fn, plain", [(add_at_own_index, add_at_own_index_plain),
                                       (set_at_own_index, set_at_own_index),
                                       (add_at_repeated, add_at_repeated_plain)])
def test_per_example_index_updates(fn, plain):
    rng = np.random.default_rng(7)
    xs, vs = rng.normal(size=(4, 3)), rng.normal(size=4)

    def loop(xs, vs):
        return np.stack([plain(xs[k].copy(), vs[k]) for k in range(len(vs))])
    assert_tree_allclose(tx.vmap(fn)(xs, vs), loop(xs, vs), rtol=1e-12, atol=1e-12)

    def total(xs, vs):
        return np.sum(tx.vmap(fn)(xs, vs) ** 2)

    def total_loop(xs, vs):
        return np.sum(loop(xs, vs) ** 2)
    grads = tx.grad(total, argnums=(0, 1))(xs, vs)
    for argnum in (0, 1):
        assert_tree_allclose(grads[argnum], numerical_grad(total_loop, (xs, vs), argnum),
                             rtol=1e-6, atol=1e-7)
    tangents = (rng.normal(size=xs.shape), rng.normal(size=vs.shape))
    _, out_dot = tx.jvp(total, (xs, vs), tangents)
    want = sum(np.sum(g * t) for g, t in zip(grads, tangents))
    assert out_dot == pytest.approx(want, rel=1e-9)


def add_at_own_index_loss(x, v):
    return np.sum(add_at_own_index(x, v))


def add_at_own_index_plain_loss(x, v):
    return np.sum(add_at_own_index_plain(x, v))


def test_gradient_code_with_add_at_transformed_again():
    """The gradient of ``x.at[i].add(v)`` is written with ``np.add.at``;
    vmap, jvp and grad of that code must read it as the update it is (it
    was dropped as an effect: vmap(grad) gave another example's numbers)."""
    rng = np.random.default_rng(8)
    xs, vs = rng.normal(size=(4, 3)), rng.normal(size=4)
    g = tx.grad(add_at_own_index_loss, argnums=(0, 1))
    got = tx.vmap(g)(xs, vs)
    for k in range(4):
        for argnum in (0, 1):
            assert_tree_allclose(got[argnum][k], numerical_grad(
                add_at_own_index_plain_loss, (xs[k], vs[k]), argnum), rtol=1e-6, atol=1e-7)
    # forward over reverse: a Hessian-vector product against differences of g
    x, v, t = xs[0], vs[0], rng.normal(size=3)
    _, hvp = tx.jvp(lambda x: g(x, v)[0], (x,), (t,))
    eps = 1e-6
    want = (g(x + eps * t, v)[0] - g(x - eps * t, v)[0]) / (2 * eps)
    assert_tree_allclose(hvp, want, rtol=1e-5, atol=1e-6)
