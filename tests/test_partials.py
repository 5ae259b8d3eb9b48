"""functools.partial under every transform, as in JAX (#19 item 1): the
bound arguments are closed over (never differentiated, shared by vmap,
passed to compiled code at each call); argnums and in_axes count the
arguments the partial leaves."""
from functools import partial

import numpy as np
import pytest

import tangent_x as tx

from _fd import assert_tree_allclose, numerical_grad

W = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
B = np.array([0.1, -0.2])
X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


def predict(w, b, x, scale=1.0):
    return scale * np.tanh(x @ w + b)


def loss(w, x, *, power=2):
    return np.sum(predict(w, B, x) ** power)


def test_vmap_of_a_partial_shares_the_bound_arguments():
    got = tx.vmap(partial(predict, W, B))(X)
    assert_tree_allclose(got, np.stack([predict(W, B, x) for x in X]), rtol=1e-12)
    got = tx.vmap(partial(predict, W, B, scale=2.0))(X)
    assert_tree_allclose(got, np.stack([predict(W, B, x, 2.0) for x in X]), rtol=1e-12)


def test_grad_of_a_partial_differentiates_the_arguments_it_leaves():
    x = X[1]
    got = tx.grad(partial(loss, x=x))(W)            # bound by keyword: w is left
    assert_tree_allclose(got, numerical_grad(lambda w: loss(w, x), (W,), 0), rtol=1e-6)
    got = tx.grad(partial(loss, W))(x)              # bound positionally: x is left
    assert_tree_allclose(got, numerical_grad(lambda v: loss(W, v), (x,), 0), rtol=1e-6)
    got = tx.grad(partial(loss, W, power=3))(x)
    assert_tree_allclose(got, numerical_grad(lambda v: loss(W, v, power=3), (x,), 0),
                         rtol=1e-6)


def _total(w, b, x):
    return np.sum(predict(w, b, x))


def test_value_and_grad_argnums_count_the_parameters_left():
    value, grads = tx.value_and_grad(partial(_total, W), argnums=1)(B, X[0])
    assert_tree_allclose(value, _total(W, B, X[0]), rtol=1e-12)
    assert_tree_allclose(grads, numerical_grad(lambda x: _total(W, B, x), (X[0],), 0),
                         rtol=1e-6)
    gb, gx = tx.grad(partial(_total, W), argnums=(0, 1))(B, X[0])
    assert_tree_allclose(gb, numerical_grad(lambda b: _total(W, b, X[0]), (B,), 0), rtol=1e-6)


def test_per_example_gradients_with_partial_under_jit():
    per_example = tx.jit(tx.vmap(tx.grad(partial(loss, W))))
    got = per_example(X)
    want = np.stack([tx.grad(lambda v: loss(W, v))(x) for x in X])
    assert_tree_allclose(got, want, rtol=1e-10)


def test_jit_of_a_partial_sees_a_bound_array_changed_in_place():
    w = W.copy()
    f = tx.jit(partial(predict, w, B))
    assert_tree_allclose(f(X[0]), predict(W, B, X[0]), rtol=1e-12)
    w *= 2.0
    assert_tree_allclose(f(X[0]), predict(2.0 * W, B, X[0]), rtol=1e-12)


def test_nested_partials_and_a_partial_of_a_lambda():
    f = partial(partial(predict, W), B)
    assert_tree_allclose(tx.vmap(f)(X), np.stack([predict(W, B, x) for x in X]), rtol=1e-12)
    g = partial(lambda a, x: np.sum(a * x * x), 3.0)
    assert_tree_allclose(tx.grad(g)(X[0]), 6.0 * X[0], rtol=1e-12)


def _star(*xs):
    return sum(xs)


def test_a_partial_leaving_star_args_is_a_clear_error():
    with pytest.raises(tx.TransformError, match=r"\*xs"):
        tx.grad(partial(_star, 1.0))(2.0)
