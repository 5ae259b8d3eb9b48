"""Helpers of the backward pass meeting a value Numba types as optional.

A loop's variable first bound inside the loop starts as None in compiled
code (``numba_stage/optional.py``); read back from a tape in the backward
pass it is typed optional although it holds a value there.  A helper that
decides by the type whether it was given an array took such a value for a
number: ``unindex`` returned the cotangent of ``c[-1]`` unscattered, so
``z_bar += ...`` added it to every row (fuzz seed 671560, a silently wrong
jit(grad)).  Oracles: the helpers on the plain array, eager grad and
central differences."""
import numba
import numpy as np
import pytest

import tangent_x as tx
import tangent_x.numba_stage.numba_runtime  # noqa: F401  (the helpers' Numba forms)
from tangent_x.numba_stage.numba_runtime import (
    array, broadcast_to, clip, dot, expand_dims, inner, max_axes, mean_axes, mean_axes_keepdims,
    moveaxis, ndim, repeat, reshape, size, std_all, sum_axes, tile, transpose, var_axes)
from tangent_x.runtime import add_at, dot_adjoint_lhs, unbroadcast, unindex, unreduce
from _fd import assert_tree_allclose, numerical_grad

Z = np.arange(6.0).reshape(2, 3) + 1.0
HELPERS = {
    "unindex_row": lambda c: unindex(c, -1, np.ones(3)),
    "unindex_item": lambda c: unindex(c, (0, 1), 2.0),
    "unindex_slice": lambda c: unindex(c, slice(0, 1), np.ones((1, 3))),
    "unreduce_all": lambda c: unreduce(2.0, c),
    "unreduce_axis": lambda c: unreduce(np.ones(3), c, 0),
    "unbroadcast": lambda c: unbroadcast(np.ones((2, 3)), c),
    "add_at_row": lambda c: add_at(c, 1, np.ones(3)),
    "sum_axes": lambda c: sum_axes(c, (0,)),
    "max_axes": lambda c: max_axes(c, (1,)),
    "mean_axes": lambda c: mean_axes(c, (0,)),
    "mean_axes_keepdims": lambda c: mean_axes_keepdims(c, (1,)),
    "var_axes": lambda c: var_axes(c, (0,)),
    "std_all": lambda c: std_all(c),
    "ndim": lambda c: ndim(c),
    "size": lambda c: size(c),
    "transpose": lambda c: transpose(c, (1, 0)),
    "transpose_all": lambda c: transpose(c, None),
    "inner": lambda c: inner(c, np.ones((4, 3))),
}


def _given_an_optional(helper_call):
    """Compiled ``helper_call(c)`` with ``c`` typed optional: None, then
    bound to the argument when ``flag``, as a loop's variable is."""
    body = numba.njit(helper_call)

    @numba.njit
    def optional(z, flag):
        c = None
        if flag:
            c = z
        return body(c)
    return optional


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_a_helper_given_an_optional_array_treats_it_as_the_array(name):
    expected = HELPERS[name](Z.copy())       # the eager helper on the array
    got = _given_an_optional(HELPERS[name])(Z.copy(), True)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(numba.njit(HELPERS[name])(Z.copy()), expected)


def closure_in_nested_loops(x, z):
    """The shrunk seed: ``c`` is first bound in the inner loop (a closure
    reading it keeps it a variable of its own)."""
    for j in range(1):
        for i in range(2):
            c = z * 1.0
            def g():
                return c
            x = x + c[-1]
    return np.sum(x * x)


def closure_item_update_in_a_while(x, z):
    w = 0.4
    while w < 0.64:
        for i in x:
            c = z[:, ::-1] * 1.0
            def row():
                return c[1]
            v = row()
            c[0] = w * c[-1]
            x = 0.7 * x + 0.3 * c[-1] + 0.1 * v
        z = 0.7 * z + 0.3 * (z + z)
        w = w + 0.3
    return np.sum(x * x)


def sum_of_a_row_first_bound_in_a_loop(x, z):
    for j in range(2):
        for i in range(2):
            c = np.sin(z) * 1.0
            def g():
                return c
            x = x * 0.5 + np.sum(c[0]) + np.mean(c, axis=0) + np.std(c)
    return np.sum(x * x)


X = np.array([-0.58628604, -0.76711153, -1.07368718])
ZZ = np.array([[-0.72983098, 0.11590526, 1.22773849], [0.67386662, 0.73199489, -1.44049901]])


@pytest.mark.parametrize("fun", [closure_in_nested_loops, closure_item_update_in_a_while,
                                 sum_of_a_row_first_bound_in_a_loop], ids=lambda f: f.__name__)
def test_jit_grad_of_a_value_first_bound_in_a_loop(fun):
    compiled = tx.jit(tx.grad(fun, argnums=(0, 1)))(X, ZZ)
    assert_tree_allclose(compiled, tx.grad(fun, argnums=(0, 1))(X, ZZ), rtol=1e-12, atol=1e-14)
    for k in (0, 1):
        np.testing.assert_allclose(compiled[k], numerical_grad(fun, (X, ZZ), k),
                                   rtol=1e-6, atol=1e-8)


A = np.arange(6.0).reshape(2, 3) + 1.0
NOT_YET = {
    "dot_adjoint_lhs": lambda c: dot_adjoint_lhs(np.ones((2, 2)) * 0.5, c, A.T.copy()),
    "dot": lambda c: dot(c, A.T.copy()),
    "reshape": lambda c: reshape(c, (3, 2)),
    "broadcast_to": lambda c: broadcast_to(c, (2, 2, 3)),
    "expand_dims": lambda c: expand_dims(c, 0),
    "clip": lambda c: clip(c, 2.0, 4.0),
    "tile": lambda c: tile(c, (1, 2)),
    "repeat": lambda c: repeat(c, 2, 0),
    "moveaxis": lambda c: moveaxis(c, 0, 1),
    "array": lambda c: array(c),
}


@pytest.mark.slow      # ~15 s each of Numba failing to type them
@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_a_helper_not_yet_unwrapping_an_optional_array_raises_and_gives_no_wrong_value(name):
    """The helpers optional.py lists as not unwrapping an optional value:
    given one, each fails (to compile, or at run time) and never returns
    another value than the array's (the audit behind 671560 found two that
    did: transpose and inner, above).  When one is fixed, it joins HELPERS."""
    expected = numba.njit(NOT_YET[name])(A.copy())
    try:
        got = _given_an_optional(NOT_YET[name])(A.copy(), True)
    except (numba.core.errors.TypingError, ValueError):
        return
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)
