"""A transformed function's own Python int/bool arguments, and the lengths
of its tuple/list arguments, fold in where a recursion's depth hangs on
them (``tangent_x/api/specialised.py``), as JAX's tracing sees them:
``tx.grad(power)(x, 3)``, ``tx.grad(apply)(layers, x)`` with ``apply``
recursing on ``layers[1:]``.  A new value gets code of its own; an array
argument deciding the depth is refused at its line
(test_comprehensions_recursion.py).  Checked against finite differences,
closed forms and the untransformed function, eagerly and under jit."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

X = np.array([0.3, 0.7, -0.4, 1.1])


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def power_sum(x, n):
    return np.sum(power(x, n))


def signed(x, n, flip):
    y = power(x, n)
    return np.sum(-y if flip else y)


def test_grad_of_a_recursion_on_an_int_argument():
    for n in (3, 4, 3, 0):     # each value its own code; 3 again reuses it
        assert_tree_allclose(tx.grad(power_sum)(X, n), n * X ** (n - 1) if n else 0 * X,
                             rtol=1e-12, atol=1e-12)
    assert tx.grad(power)(2.0, n=5) == pytest.approx(80.0, rel=1e-14)   # by keyword
    assert tx.hessian(power)(2.0, 3) == pytest.approx(12.0, rel=1e-14)
    # an int argument deciding a shape needs no specialisation (it is a run-time value)
    tiled = tx.grad(lambda x, n: np.sum(np.tile(x, n) ** 2))
    assert_tree_allclose(tiled(X, 3), 6 * X, rtol=1e-14, atol=1e-14)
    value, grad = tx.value_and_grad(signed)(X, 3, True)
    assert value == pytest.approx(-np.sum(X ** 3), rel=1e-14)
    assert_tree_allclose(grad, numerical_grad(lambda x: signed(x, 3, True), (X,), 0),
                         rtol=1e-6, atol=1e-8)
    assert_tree_allclose(tx.grad(signed)(X, 2, False), 2 * X, rtol=1e-12, atol=1e-12)
    primal, tangent = tx.jvp(lambda x: power_sum(x, 3), (X,), (np.ones(4),))
    assert tangent == pytest.approx(np.sum(3 * X ** 2), rel=1e-13)
    assert_tree_allclose(tx.vmap(tx.grad(power), in_axes=(0, None))(X, 3), 3 * X ** 2,
                         rtol=1e-12, atol=1e-12)
    text = tx.source(tx.grad(power_sum), example_args=(X, 3))
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert "specialised on n=3" in text and not any("power(" in line for line in code)


def test_jit_of_a_recursion_on_an_int_argument():
    g = tx.jit(tx.grad(power_sum))
    for n in (3, 4, 3):
        assert_tree_allclose(g(X, n), n * X ** (n - 1), rtol=1e-12, atol=1e-12)
    assert tx.jit(power)(2.0, 3) == 8.0
    assert_tree_allclose(tx.jit(tx.vmap(tx.grad(power), in_axes=(0, None)))(X, 4),
                         4 * X ** 3, rtol=1e-12, atol=1e-12)


# --- recursion and while loops over a tuple/list argument -------------------------

LAYERS = (np.array([[0.5, -0.2, 0.1, 0.3], [0.1, 0.3, -0.4, 0.2], [0.2, 0.0, 0.6, -0.1]]),
          np.array([[0.4, -0.3, 0.2], [0.1, 0.5, -0.2]]),
          np.array([[0.7, -0.6]]))


def apply(layers, x):
    return x if not layers else apply(layers[1:], np.tanh(layers[0] @ x))


def apply_loss(layers, x):
    return np.sum(apply(layers, x) ** 2)


def while_loss(layers, x):
    while layers:
        w, layers = layers[0], layers[1:]
        x = np.tanh(w @ x)
    return np.sum(x ** 2)


def by_hand(layers, x):
    for w in layers:
        x = np.tanh(w @ x)
    return np.sum(x ** 2)


def _fd_layers(layers, x):
    return [numerical_grad(lambda w: by_hand(layers[:i] + (w,) + layers[i + 1:], x), (w,), 0)
            for i, w in enumerate(layers)]


def test_recursion_over_a_tuple_argument():
    x = np.array([0.3, -0.7, 1.1, 0.2])
    assert apply_loss(LAYERS, x) == pytest.approx(by_hand(LAYERS, x), rel=1e-14)
    assert_tree_allclose(tx.grad(apply_loss, argnums=1)(LAYERS, x),
                         numerical_grad(lambda x: by_hand(LAYERS, x), (x,), 0),
                         rtol=1e-6, atol=1e-8)
    grads = tx.grad(apply_loss)(LAYERS, x)
    assert isinstance(grads, tuple) and len(grads) == 3
    assert_tree_allclose(list(grads), _fd_layers(LAYERS, x), rtol=1e-6, atol=1e-8)
    # a list, and a shorter tuple: code of their own
    assert_tree_allclose(tx.grad(apply_loss, argnums=1)(list(LAYERS[1:]), x[:3]),
                         numerical_grad(lambda x: by_hand(LAYERS[1:], x), (x[:3],), 0),
                         rtol=1e-6, atol=1e-8)
    assert_tree_allclose(list(tx.grad(while_loss)(LAYERS, x)), _fd_layers(LAYERS, x),
                         rtol=1e-6, atol=1e-8)


def test_recursion_and_while_over_a_tuple_argument_jit():
    x = np.array([0.3, -0.7, 1.1, 0.2])
    expected = _fd_layers(LAYERS, x)
    for fn in (apply_loss, while_loss):
        grads = tx.jit(tx.grad(fn, argnums=(0, 1)))(LAYERS, x)
        assert_tree_allclose(list(grads[0]), expected, rtol=1e-6, atol=1e-8)
        assert_tree_allclose(grads[1], numerical_grad(lambda x: by_hand(LAYERS, x), (x,), 0),
                             rtol=1e-6, atol=1e-8)
    assert tx.jit(while_loss)(LAYERS, x) == pytest.approx(by_hand(LAYERS, x), rel=1e-13)
