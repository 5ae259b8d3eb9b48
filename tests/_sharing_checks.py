"""Checks shared by the tests of arrays shared between names
(``test_shared_members.py``, ``test_helper_branches.py``): the value
against NumPy (eagerly with jit disabled, optionally compiled), grad
against central differences, vmap and vmap(grad) against a loop over
examples.  Every function takes one (2, 3) array and returns a number."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad

X0 = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
BATCH = np.array([[[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]],
                  [[-0.6, 0.2, -0.9], [-1.0, 0.8, 0.1]]])


def numpy_of(f):
    """``f`` on a fresh float copy (it may change its argument in place)."""
    return lambda x: f(np.array(x, dtype=float))


def value_and_grad(f, sign, compiled=False):
    x = sign * X0
    before = x.copy()
    ref = numpy_of(f)
    with tx.disable_jit():
        assert tx.jit(f)(x) == pytest.approx(ref(x), rel=1e-12)
    if compiled:
        assert tx.jit(f)(x) == pytest.approx(ref(x), rel=1e-12)
    np.testing.assert_allclose(tx.grad(f)(x), numerical_grad(ref, (x,)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(x, before)       # the caller's array is untouched


def vmap_against_a_loop(f):
    ref = numpy_of(f)
    np.testing.assert_allclose(tx.vmap(f)(BATCH), [ref(b) for b in BATCH], rtol=1e-12)
    np.testing.assert_allclose(tx.vmap(tx.grad(f))(BATCH),
                               [numerical_grad(ref, (b,)) for b in BATCH],
                               rtol=1e-6, atol=1e-6)
