"""jit(grad) of a list filled in a loop and read item by item: the
cotangent of such a run-time list is a list as long (``unindex`` and
``tree_add`` of lists in ``numba_stage/overloads``), for lists of plain
numbers and of arrays, checked against finite differences and eager
code.  (Before: lists of numbers did not compile, and a list of arrays
read at two items gave a wrong gradient under jit.)"""
import numpy as np

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def numbers(x):
    out = []
    for i in range(3):
        out.append(x * i + 1.0)
    squares = [x * x * i for i in range(4)]       # a comprehension is the same loop
    return out[0] + out[1] * out[-1] + squares[3] - squares[1] * squares[2]


def arrays(x):
    out = []
    for i in range(3):
        out.append(np.sin(x) * (i + 1.0))
    return np.sum(out[-1] * out[1] + out[0])


def test_jit_grad_of_a_list_of_numbers_built_in_a_loop():
    for x in (0.9, -1.3):
        expected = numerical_grad(numbers, (x,), 0)
        assert_tree_allclose(tx.grad(numbers)(x), expected, rtol=1e-7, atol=1e-8)
        assert_tree_allclose(tx.jit(tx.grad(numbers))(x), tx.grad(numbers)(x),
                             rtol=1e-13, atol=1e-13)


def test_jit_grad_of_a_list_of_arrays_read_at_two_items():
    x = np.array([1.5, 2.0, -0.3])
    expected = numerical_grad(arrays, (x,), 0)
    assert_tree_allclose(tx.grad(arrays)(x), expected, rtol=1e-7, atol=1e-8)
    assert_tree_allclose(tx.jit(tx.grad(arrays))(x), expected, rtol=1e-7, atol=1e-8)
