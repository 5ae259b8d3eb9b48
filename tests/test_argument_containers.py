"""Tuple, list and dict arguments whose items change in place.

The code is built knowing which arguments are containers (as JAX traces
the structure of its arguments): an item changed in place is written back
as a container's item, not as an array's row.  Before, ``for p, g in
zip(params, grads): p -= lr * g`` returned the parameters unchanged (jit,
grad, vmap), and ``W, b = params; W -= v`` of a tuple argument crashed.
Each case: the value against NumPy (eagerly and compiled), grad against
central differences, vmap against a loop over examples."""
import copy

import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad

P = [np.array([1.0, 2.0, -0.5]), np.array([3.0, -1.0, 0.25])]
G = [np.array([0.5, 0.5, 1.0]), np.array([1.0, 1.0, -2.0])]


def sgd_zip(params, grads):
    for p, g in zip(params, grads):
        p -= 0.1 * g
    return params[0] * params[1]


def sgd_enumerate(params, grads):
    for i, p in enumerate(params):
        p *= float(i + 2)
    return params[0] * params[1] + grads[0]


def sgd_plain(params, grads):
    for p in params:
        p *= 2.0
    return params[0] * params[1] - grads[1]


def tuple_unpacked(params, grads):
    W, b = params
    W -= 0.1 * grads[0]
    return W * b + params[0]


def dict_item(params, grads):
    d = {"w": params[0], "b": params[1]}
    return dict_argument(d, grads)


def dict_argument(d, grads):
    d["w"] -= 0.5 * grads[0]
    for key in ("w", "b"):
        d[key] *= 2.0
    return d["w"] * d["b"]


CASES = [sgd_zip, sgd_enumerate, sgd_plain, tuple_unpacked, dict_item]


def fresh(kind):
    return kind(a.copy() for a in P), [a.copy() for a in G]


def reference(f, params, grads):
    return f(copy.deepcopy(params), copy.deepcopy(grads))


@pytest.mark.parametrize("kind", [list, tuple])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_eager_and_compiled(f, kind):
    params, grads = fresh(kind)
    want = reference(f, params, grads)
    with tx.disable_jit():
        np.testing.assert_allclose(tx.jit(f)(params, grads), want, rtol=1e-12)
    np.testing.assert_allclose(tx.jit(f)(params, grads), want, rtol=1e-12)
    np.testing.assert_array_equal(params[0], P[0])      # the caller's arrays untouched


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad_against_differences(f):
    params, grads = fresh(list)

    def loss(params, grads):
        return np.sum(f(params, grads))
    got = tx.grad(loss, argnums=(0, 1))(params, grads)
    want = numerical_grad(lambda p, g: reference(loss, p, g), (params, grads), argnum=(0, 1))
    for a, b in zip(got, want):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-8)
    assert type(got[0]) is list


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_against_a_loop(f):
    params, grads = fresh(list)
    batched = [np.stack([p, 2.0 * p]) for p in params]
    got = tx.vmap(f, in_axes=([0, 0], None))(batched, grads)
    for b in range(2):
        want = reference(f, [p[b] for p in batched], grads)
        np.testing.assert_allclose(got[b], want, rtol=1e-12)
