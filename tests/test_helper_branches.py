"""A helper changing its caller's array in place inside an ``if``.

The ``if`` joins the caller's names too (``branches.caller_joins``): on the
path that changed the array, the caller's name is the changed array; on the
other, the array as it was.  These were refused (the largest class of the
generator's refusals).  A change inside a loop of the helper:
``test_helper_loops.py``.  Each case: the value (eagerly, jit disabled, and
compiled), grad against central differences, vmap and vmap(grad) against
a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad
from _sharing_checks import numpy_of, value_and_grad, vmap_against_a_loop

W = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])


def changed_in_one_branch_each(x):
    def h(z):
        if np.sum(z) > 0.0:
            z *= 2.0
        else:
            z[0, 0] = 3.0 * z[1, 1]
        return np.sum(z)
    s = h(x)
    return np.sum(x * W) + s


def changed_before_a_return(x):
    def h(z):
        if np.sum(z) > 0.0:
            z -= 1.0
            return 1.0
        return 2.0
    s = h(x)
    return np.sum(x * W) * s


def alias_in_the_caller(x):
    y = x
    def h(z):
        if np.max(z) > 0.5:
            z += z * z
    h(x)
    return np.sum(y * W)


def through_a_second_helper(x):
    def g(z):
        z *= 1.5
    def h(z):
        if np.sum(z) > 0.0:
            g(z)
    h(x)
    return np.sum(x * W)


def nested_ifs(x):
    def h(z):
        if np.sum(z) > 0.0:
            if z[0, 0] > 0.0:
                z[1] = z[0] * 2.0
            else:
                z *= -1.0
    w = x * 1.0
    h(w)
    return np.sum(w * W) + np.sum(x)


CASES = [changed_in_one_branch_each, changed_before_a_return, alias_in_the_caller,
         through_a_second_helper, nested_ifs]


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_grad(f, sign):
    value_and_grad(f, sign, compiled=True)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_and_vmap_of_grad_against_a_loop(f):
    vmap_against_a_loop(f)


def changed_in_a_loop_of_the_helper(x):
    def h(z):
        for i in range(2):
            if np.sum(z) > 0.0:
                z *= 0.5
            z = z + 1.0         # rebound after: the caller's array is the first turn's only
    h(x)
    return np.sum(x * W)


def test_a_change_in_a_loop_of_the_helper_is_right_or_refused_where_it_is():
    x = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
    f = changed_in_a_loop_of_the_helper
    try:
        got = tx.grad(f)(x)
    except tx.TransformError as e:
        assert "test_helper_branches.py" in str(e) and ("'z'" in str(e) or "'x'" in str(e))
        return
    np.testing.assert_allclose(got, numerical_grad(numpy_of(f), (x,)), rtol=1e-6, atol=1e-6)


@pytest.mark.slow        # Numba compiles: CI's slow step
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_compiled_grad_equals_eager(f):
    x = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
    np.testing.assert_allclose(tx.jit(tx.grad(f))(x.copy()), tx.grad(f)(x.copy()), rtol=1e-10)
