"""A variable assigned on only one path of an ``if``, read after it: Python
raises UnboundLocalError when the other path was taken, and so must
compiled code.  (Numba reads a variable never assigned as zero: jit
returned 0.0 and jit(grad) a zero gradient, silently wrong numbers.)"""
import numpy as np
import pytest

import tangent_x as tx


def scalar_branch(x):
    if x > 0:
        y = x * 2.0
    return y


def array_branch(x):
    s = np.sum(x)
    if s > 0:
        y = x * 2.0
    return np.sum(y * y)


def read_inside_too(x):
    if x > 0:
        y = x * 2.0
        z = y + 1.0
    else:
        z = x
    return z * y


CASES = [(scalar_branch, 1.5, -1.5), (array_branch, np.ones(3), -np.ones(3)),
         (read_inside_too, 0.5, -0.5)]


@pytest.mark.parametrize("fn, taken, not_taken", CASES,
                         ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("transform", ["jit", "jit_grad"])
def test_compiled_code_raises_where_python_does(fn, taken, not_taken, transform):
    compiled = tx.jit(fn) if transform == "jit" else tx.jit(tx.grad(fn))
    eager = fn if transform == "jit" else tx.grad(fn)
    np.testing.assert_allclose(compiled(taken), eager(taken))
    with pytest.raises(UnboundLocalError):
        eager(not_taken)
    with pytest.raises(UnboundLocalError):
        compiled(not_taken)
    # and the path that assigns it still runs after the failure
    np.testing.assert_allclose(compiled(taken), eager(taken))
