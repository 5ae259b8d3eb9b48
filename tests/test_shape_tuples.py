"""Reductions of shape tuples (``np.prod(x.shape)``, ``np.sum``, ``len``,
``max``/``min``) as JAX code writes them: eagerly, under grad and vmap, and
under jit, where Numba has these reductions for arrays only."""
import numpy as np
import pytest

import tangent_x as tx

from _fd import assert_tree_allclose, numerical_grad


def flatten_by_prod(x):
    return x.reshape((np.prod(x.shape),)) * 2.0


def size_arithmetic(x):
    n = np.sum(x.shape) + len(x.shape) + max(x.shape) + np.prod(x.shape[1:]) + min(x.shape)
    return x * n + np.max(x.shape) - np.min(x.shape)


def rows_by_prod(x):
    return np.sum(np.sin(x.reshape(-1, int(np.prod(x.shape[1:])))), axis=1)


def empty_prod_is_one(x):
    return x * np.prod(x.shape[2:]) + np.sum(x.shape[2:])


FUNCTIONS = [flatten_by_prod, size_arithmetic, rows_by_prod, empty_prod_is_one]
SHAPES = [(2, 3), (1, 4), (3, 1)]


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_jit_matches_numpy(fn, shape):
    x = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    got, want = tx.jit(fn)(x), fn(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert_tree_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_grad_eager_and_jit_match_differences(fn):
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)

    def loss(x):
        return np.sum(fn(x) ** 2)
    want = numerical_grad(loss, (x,), 0)
    assert_tree_allclose(tx.grad(loss)(x), want, rtol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(loss))(x), want, rtol=1e-6)


@pytest.mark.parametrize("fn", [flatten_by_prod, size_arithmetic])
def test_vmap_matches_a_loop(fn):
    xs = np.linspace(-1.0, 1.0, 12).reshape(2, 2, 3)
    want = np.stack([fn(x) for x in xs])
    assert_tree_allclose(tx.vmap(fn)(xs), want, rtol=1e-12)
