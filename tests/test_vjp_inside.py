"""``tx.vjp(f, *primals)`` inside a transformed function
(``canonical/pullbacks.py``): the pair ``(out, pullback)``, the pullback
called on a cotangent, all of it differentiated, vmapped and compiled
again.  Checked against finite differences and the untransformed
function (which runs ``tx.vjp`` eagerly)."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

X = np.array([0.3, -0.5, 0.8])
W = np.array([[0.2, 0.1, -0.3], [0.5, -0.4, 0.1]])


def f(x):
    return np.sin(x) * x


def layer(w, x):
    return np.tanh(w @ x)


def indexed(x):
    return tx.vjp(f, x)[1](np.ones(3))[0].sum()


def unpacked(x):
    y, pullback = tx.vjp(f, x)
    (ct,) = pullback(y)
    return np.sum(ct ** 2) + np.sum(y)


def two_primals(w, x):
    y, pullback = tx.vjp(layer, w, x)
    gw, gx = pullback(np.cos(y))
    return np.sum(gw * w) + np.sum(gx)


def test_vjp_inside_grad():
    assert indexed(X) == pytest.approx(np.sum(np.cos(X) * X + np.sin(X)), rel=1e-14)
    for fn in (indexed, unpacked):
        assert tx.value_and_grad(fn)(X)[0] == pytest.approx(fn(X), rel=1e-14)
        assert_tree_allclose(tx.grad(fn)(X), numerical_grad(fn, (X,), 0),
                             rtol=1e-6, atol=1e-8)
    assert_tree_allclose(tx.grad(two_primals, argnums=(0, 1))(W, X),
                         numerical_grad(two_primals, (W, X), (0, 1)), rtol=1e-6, atol=1e-8)
    xs = np.stack([X, -X, 0.5 * X])
    assert_tree_allclose(tx.vmap(tx.grad(unpacked))(xs),
                         np.stack([numerical_grad(unpacked, (x,), 0) for x in xs]),
                         rtol=1e-6, atol=1e-8)


def test_vjp_inside_jit():
    assert_tree_allclose(tx.jit(tx.grad(two_primals, argnums=(0, 1)))(W, X),
                         numerical_grad(two_primals, (W, X), (0, 1)), rtol=1e-6, atol=1e-8)


def test_vjp_inside_with_aux_is_located():
    def aux(x):
        return tx.vjp(lambda x: (f(x), x), x, has_aux=True)[0]
    with pytest.raises(tx.TransformError, match="has_aux=True") as info:
        tx.grad(lambda x: np.sum(aux(x)))(X)
    assert "test_vjp_inside.py:" in str(info.value)
