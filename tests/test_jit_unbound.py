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


def while_binding_a_generator_variable(x):
    # fuzz seed 580239, shrunk: 't' (the generator's variable, named in the
    # function's scope) is carried by the while loop from unbound; the
    # gradient counted the loop's turns on t's tape, whose first push is
    # the unbound placeholder, which compiled code cannot put on a list of
    # the tuples the later turns push
    w = 0.1
    while w < 0.76:
        pairs = []
        for i in range(3):
            pairs.append((i * 1.5, 0.3 - i))
        k = sum(t[0] - t[1] for t in pairs[::-1])
        x = 0.7 * x + 0.3 * x * k
        w = w + 0.3 + 0.1 * np.sin(np.min(x))
    return np.sum(x)


def test_grad_of_a_while_loop_counts_turns_on_a_bound_carry():
    x = np.array([0.5, -0.2, 0.3])
    g = tx.grad(while_binding_a_generator_variable)
    want = g(x)
    np.testing.assert_allclose(tx.jit(g)(x), want, rtol=1e-12)
    eps = 1e-6
    fd = [(while_binding_a_generator_variable(x + eps * e) -
           while_binding_a_generator_variable(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(want, fd, rtol=1e-6)
    assert "t_tape" not in tx.source(g)       # a tape nothing pops is dropped
