"""``tuple(items)`` of a list the function built (program generator, CI
seeds 42, 95, 248): the tuple of the same items, its derivative each item's.
Before, it was an opaque call to ``tuple`` -- "no forward-mode (jvp) rule
for tuple" under jvp and jacfwd, and "no derivative rule" under grad when
the list had not been appended to (whether it was taken for a list built
in the code was looked up by the user's name, not the value's).  Against
central finite differences and a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def appended(x):
    lst = []
    for i in range(3):
        lst.append(x * (i + 1.0))
    t = tuple(lst)
    return np.sum(t[0] * t[2]) + np.sum(t[-1])


def literal(x):
    lst = [x, 2.0 * np.sin(x)]
    t = tuple(lst)
    u = tuple(t)
    return np.sum(u[0] * t[-1])


X = np.array([0.3, -1.2])


@pytest.mark.parametrize("fn", [appended, literal])
def test_tuple_of_a_list(fn):
    expected = numerical_grad(fn, (X,))
    assert_tree_allclose(tx.grad(fn)(X), expected)
    assert_tree_allclose(tx.jacfwd(fn)(X), expected)
    value, tangent = tx.jvp(fn, (X,), (np.array([1.0, -0.5]),))
    np.testing.assert_allclose(value, fn(X), rtol=1e-15)
    np.testing.assert_allclose(tangent, expected @ np.array([1.0, -0.5]), rtol=1e-6)
    xs = np.stack([X, X + 1.0])
    np.testing.assert_allclose(tx.vmap(tx.grad(fn))(xs),
                               np.stack([numerical_grad(fn, (x,)) for x in xs]),
                               rtol=1e-6, atol=1e-8)
