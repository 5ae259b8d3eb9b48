"""A transformed function that calls, inside, a transform whose code is
specialised to its arguments' structure (a vmapped function, a Jacobian):
called again with other ranks or shapes, its derivative must follow them.
Before, the outer code kept the inner code of the first call: wrong numbers
(vmap inside grad) or errors raised in generated code (a Jacobian inside
grad) on the second shape."""
import numpy as np
import pytest

import tangent_x as tx

SHAPES = [(3,), (3, 2), (4, 2, 2), (1,), (3,)]

V = tx.vmap(lambda r: np.sum(np.sin(r) * r))


def through_vmap(w):
    return np.sum(V(w) ** 2)


J = tx.jacrev(lambda w: np.sin(w) * w)


def through_jacobian(w):
    return np.sum(J(w.ravel()) ** 2)


def _weighted_sin(p):
    return np.sin(p["w"]) * p["b"]


JD = tx.jacrev(_weighted_sin)


def through_dict_jacobian(w):
    jac = JD({"w": w.ravel(), "b": w.ravel() ** 2})
    return np.sum(jac["w"]) + np.sum(jac["b"] ** 2)


def _fd(f, w, eps=1e-6):
    out = np.zeros(w.size)
    for i in range(w.size):
        e = np.zeros(w.size)
        e[i] = eps
        out[i] = (f(w + e.reshape(w.shape)) - f(w - e.reshape(w.shape))) / (2 * eps)
    return out.reshape(w.shape)


def _point(shape):
    return np.linspace(0.1, 1.0, int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("f", [through_vmap, through_jacobian, through_dict_jacobian])
def test_grad_follows_the_inner_transform_across_shapes(f):
    g = tx.grad(f)
    for shape in SHAPES:
        w = _point(shape)
        np.testing.assert_allclose(g(w), _fd(f, w), atol=1e-6, err_msg=str(shape))


@pytest.mark.parametrize("f", [through_vmap, through_jacobian])
def test_vmap_of_grad_follows_the_inner_transform_across_shapes(f):
    vg = tx.vmap(tx.grad(f))
    for shape in SHAPES:
        w = _point(shape)
        rows = np.stack([w, 2.0 * w])
        want = np.stack([_fd(f, w), _fd(f, 2.0 * w)])
        np.testing.assert_allclose(vg(rows), want, atol=1e-6, err_msg=str(shape))


def test_jit_of_grad_follows_the_inner_transform_across_ranks():
    jg = tx.jit(tx.grad(through_vmap))
    for shape in [(3,), (3, 2), (3,)]:
        w = _point(shape)
        np.testing.assert_allclose(jg(w), _fd(through_vmap, w), atol=1e-6,
                                   err_msg=str(shape))
