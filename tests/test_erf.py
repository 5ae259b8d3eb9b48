"""erf and erfc (#19 item 11): SciPy's ufuncs are primitives, reached as
``scipy.special.erf``/``erfc``, ``tx.lax.erf``/``erfc`` and through
``tx.nn.gelu(approximate=False)``.  Gradients and tangents against finite
differences on several shapes (scalars, size-1 axes, broadcasting against
a row), vmap against a loop, jit against eager (Numba: ``math.erf`` per
element)."""
import numpy as np
import pytest
from scipy import special

import tangent_x as tx
from tangent_x import nn

from _fd import assert_tree_allclose, numerical_grad


def _weights(y):
    return np.arange(1.0, 1.0 + np.size(y)).reshape(np.shape(y))


def erf_of(x):
    y = special.erf(x * 1.3 - 0.2)
    return np.sum(y * _weights(y))


def erfc_of(x):
    y = tx.lax.erfc(x) * np.cos(x)
    return np.sum(y * _weights(y))


def erf_broadcast(x):
    row = np.array([0.5, -1.0, 2.0])
    y = special.erfc(x * row) + tx.lax.erf(row)     # x of shape (n, 1) or (): broadcast
    return np.sum(y * _weights(y))


def gelu_exact(x):
    y = nn.gelu(x, approximate=False)
    return np.sum(y * _weights(y))


FUNCTIONS = [erf_of, erfc_of, gelu_exact]
SHAPES = [(), (1,), (4,), (2, 3), (3, 1)]


def _x(shape):
    n = int(np.prod(shape))
    return np.linspace(-1.7, 2.1, n).reshape(shape) if shape else 0.6


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_grad_and_jvp_match_differences(fn, shape):
    x = _x(shape)
    want = numerical_grad(fn, (x,), 0)
    assert_tree_allclose(tx.grad(fn)(x), want, rtol=1e-6, atol=1e-9)
    v = np.cos(np.arange(np.size(x))).reshape(np.shape(x)) if shape else 0.7
    _, t = tx.jvp(fn, (x,), (v,))
    np.testing.assert_allclose(t, np.sum(want * v), rtol=1e-6)


@pytest.mark.parametrize("shape", [(), (1, 1), (3, 1)])
def test_broadcasting_against_a_row(shape):
    x = _x(shape)
    assert_tree_allclose(tx.grad(erf_broadcast)(x), numerical_grad(erf_broadcast, (x,), 0),
                         rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_vmap_of_grad_matches_a_loop(fn):
    xs = np.linspace(-2.0, 2.0, 12).reshape(4, 3)
    g = tx.grad(fn)
    assert_tree_allclose(tx.vmap(g)(xs), np.stack([g(e) for e in xs]), rtol=1e-12)
    assert_tree_allclose(tx.vmap(fn)(xs), np.array([fn(e) for e in xs]), rtol=1e-12)


def test_second_derivative_matches_differences():
    d = tx.grad(lambda x: special.erf(x))
    for x in (-1.5, 0.0, 0.8):
        want = numerical_grad(d, (x,), 0)
        np.testing.assert_allclose(tx.grad(lambda x: special.erf(x) * 1.0)(x),
                                   2.0 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-12)
        np.testing.assert_allclose(tx.grad(d)(x), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_jit_matches_eager(shape):
    x = _x(shape)
    for fn in (gelu_exact, erf_broadcast):
        assert_tree_allclose(tx.jit(fn)(x), fn(x), rtol=1e-12)
        assert_tree_allclose(tx.jit(tx.grad(fn))(x), tx.grad(fn)(x), rtol=1e-12)


def test_jit_keeps_float32_and_takes_ints():
    x32 = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    out = tx.jit(lambda x: special.erfc(x))(x32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, special.erfc(x32), rtol=1e-6)
    ints = np.arange(-2, 3)
    np.testing.assert_allclose(tx.jit(lambda n: special.erf(n) * 1.0)(ints),
                               special.erf(ints), rtol=1e-15)


def test_jit_of_vmap_of_grad_matches_eager():
    xs = np.linspace(-2.0, 2.0, 12).reshape(4, 3)
    f = tx.vmap(tx.grad(gelu_exact))
    assert_tree_allclose(tx.jit(f)(xs), f(xs), rtol=1e-12)
