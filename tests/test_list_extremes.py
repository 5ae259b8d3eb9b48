"""``max``/``min`` of a Python list (found by the program generator, seed
194): the list is stacked into an array, and the cotangent that reaches the
list must be a list again, one item per item.  Before, the stacking was
``np.asarray`` whose adjoint handed the list an array cotangent, which
``jacrev`` and ``vmap(grad)`` then added to the list's other cotangents item
by item along the wrong axis (an IndexError in generated code).  Checked
against central finite differences and a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def smallest(x):
    pairs = list(zip(np.linspace(-1.0, 1.0, 3), np.cos(np.linspace(0.0, 1.0, 3))))
    lst = [x * u * w for u, w in pairs]
    return min(lst) + 0.5 * lst[1]


def largest_numbers(x):
    vals = []
    for v in x:
        vals.append(v * v - v)
    return max(vals) * vals[-1]


@pytest.mark.parametrize("fn, x", [
    (smallest, -0.761), (smallest, 0.3),
    (largest_numbers, np.array([0.4, -1.3, 2.1, 0.7])),
])
def test_grad_jacrev_jvp_of_an_extreme_of_a_list(fn, x):
    expected = numerical_grad(fn, (x,))
    assert_tree_allclose(tx.grad(fn)(x), expected)
    assert_tree_allclose(tx.jacrev(fn)(x), expected)
    assert_tree_allclose(tx.jacfwd(fn)(x), expected)


@pytest.mark.parametrize("fn, xs", [
    (smallest, np.array([-0.761, 0.3, 1.2])),
    (largest_numbers, np.array([[0.4, -1.3, 2.1], [0.7, 0.2, -0.9]])),
])
def test_vmap_grad_of_an_extreme_of_a_list(fn, xs):
    expected = np.stack([numerical_grad(fn, (x,)) for x in xs])
    np.testing.assert_allclose(tx.vmap(tx.grad(fn))(xs), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tx.vmap(fn)(xs), [fn(x) for x in xs], rtol=1e-14)


def test_jit_grad_of_the_min_of_a_list_of_numbers():
    for x in (-0.761, 0.3):
        assert_tree_allclose(tx.jit(tx.grad(smallest))(x), numerical_grad(smallest, (x,)))
