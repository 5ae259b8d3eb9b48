"""np.atleast_1d/2d/3d (#19 item 11): derivative rules (the adjoint reshapes
back; the tangent is the same op), the batching rule (the axes NumPy adds,
in batched coordinates: atleast_3d of a vector adds one before and one
after it), and numbers under jit."""
import numpy as np
import pytest

import tangent_x as tx

from _fd import assert_tree_allclose, numerical_grad


def _weights(y):
    return np.arange(1.0, 1.0 + y.size).reshape(y.shape)


def at1(x):
    y = np.atleast_1d(x)
    return np.sum(np.sin(y) * _weights(y))


def at2(x):
    y = np.atleast_2d(x)
    return np.sum(np.sin(y) * _weights(y))


def at3(x):
    y = np.atleast_3d(x)
    return np.sum(np.sin(y) * _weights(y))


def at3_shape(x):
    return np.atleast_3d(x * 2.0)


FUNCTIONS = [at1, at2, at3]
SHAPES = [(), (3,), (1,), (2, 3), (2, 1, 3)]


def _x(shape):
    return np.linspace(0.1, 0.9, int(np.prod(shape))).reshape(shape) if shape else 0.4


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_grad_and_jvp_match_differences(fn, shape):
    x = _x(shape)
    want = numerical_grad(fn, (x,), 0)
    assert_tree_allclose(tx.grad(fn)(x), want, rtol=1e-6)
    _, t = tx.jvp(fn, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.sum(want), rtol=1e-6)


@pytest.mark.parametrize("fn", FUNCTIONS + [at3_shape])
@pytest.mark.parametrize("shape", SHAPES)
def test_vmap_and_vmap_grad_match_a_loop(fn, shape):
    x = np.asarray(_x(shape))
    xs = np.stack([x, x * 0.5, x + 0.1])
    assert_tree_allclose(tx.vmap(fn)(xs), np.stack([fn(e) for e in xs]), rtol=1e-12)
    if fn is not at3_shape:
        g = tx.grad(fn)
        assert_tree_allclose(tx.vmap(g)(xs), np.stack([g(e) for e in xs]), rtol=1e-12)


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_jit_matches_eager(fn, shape):
    x = _x(shape)
    assert_tree_allclose(tx.jit(fn)(x), fn(x), rtol=1e-12)
    assert_tree_allclose(tx.jit(tx.grad(fn))(x), tx.grad(fn)(x), rtol=1e-12)


def write_through_atleast_2d(x):
    y = np.atleast_2d(x)
    y[0, 0] = 5.0 * x[1]          # y is a view of x: x[0] changes
    return np.sum(x * x)


def write_through_atleast_3d(x):
    y = np.atleast_3d(x)
    y[0, 1, 0] = 3.0 * x[0]
    return np.sum(np.sin(x) * y[0, :, 0])


def write_into_atleast_1d_of_a_number(s, x):
    y = np.atleast_1d(s)          # a new array: the number s is not changed
    y[0] = 2.0 * x[0]
    return s * np.sum(y * x)


@pytest.mark.parametrize("fn", [write_through_atleast_2d, write_through_atleast_3d])
def test_a_write_into_the_view_changes_the_array(fn):
    x = np.array([1.2, 2.1, 0.3])
    assert_tree_allclose(tx.grad(fn)(x), numerical_grad(fn, (x,), 0), rtol=1e-6)
    xs = np.stack([x, 2.0 * x, x - 1.0])
    assert_tree_allclose(tx.vmap(fn)(xs), np.array([fn(e.copy()) for e in xs]), rtol=1e-12)
    assert_tree_allclose(tx.jit(fn)(x), fn(x.copy()), rtol=1e-12)


def test_a_write_into_atleast_1d_of_a_number_leaves_the_number():
    fn, x = write_into_atleast_1d_of_a_number, np.array([1.2, 2.1, 0.3])
    want = (numerical_grad(fn, (0.7, x), 0), numerical_grad(fn, (0.7, x), 1))
    assert_tree_allclose(tx.grad(fn, argnums=(0, 1))(0.7, x), want, rtol=1e-6)
