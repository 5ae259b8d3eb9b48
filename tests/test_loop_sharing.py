"""Names a loop does not carry that share an array it changes in place.

Inside a loop body, a name bound to the first value of a carried array
the loop changes only in place (a caller's, one read by a local
function through its closure, a view of it, the array it is a view of)
is that array as the turn has it (``LoopSharing.live_value``); a
function's loop changing an array of an enclosing function carries it
under its name (``carry_sharing``); a loop whose turns leave a name as
it came in gives back its first value, aliases and all
(``Loops.bind_outputs``).  Each was a silently wrong value (fuzz seeds
741525, 760155 and 740601; the closure cases were found writing these
tests).
Each case: the value (eagerly, jit disabled, and compiled), grad against
central differences, vmap and vmap(grad) against a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _sharing_checks import X0, numpy_of, value_and_grad, vmap_against_a_loop

W = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])


def an_alias_read_by_a_closure(x):
    y = x * 1.0
    z = y
    def h():
        return np.sum(z * z)
    t = 0.0
    for i in range(3):
        y[0] += 0.5 * y[1]
        t = t + h()
    return t + np.sum(y * W)


def the_callers_array_read_by_a_closure(x):
    c = x * 1.0
    def g(p):
        t = 0.0
        for j in range(2):
            p *= 1.5
            t = t + np.sum(c * W)
        return t
    t = g(c)
    return np.sum(c * W) + t


def a_helper_reading_it_in_another_helpers_loop(x):
    c = x * 1.0
    def h(q):
        if np.sum(x) < 10.0:
            q[0] = np.sum(c * c) * q[-1]
        return np.sum(q)
    def g(p):
        for j in range(2):
            h(p)
        return 0.0
    g(c)
    return np.sum(c * W)


def a_view_of_it_read(x):
    c = x * 1.0
    row = c[1:]
    def g(p):
        t = 0.0
        for j in range(2):
            p *= 1.25
            t = t + np.sum(row * row)
        return t
    t = g(c)
    return np.sum(c * W) + t


def a_transpose_of_it_read(x):
    c = x * 1.0
    t = c.T
    def g(p):
        s = 0.0
        for j in range(2):
            p *= 1.1
            s = s + np.sum(t[0] * t[1])
        return s
    s = g(c)
    return np.sum(c * W) + s


def the_array_a_row_passed_belongs_to(x):
    c = x * 1.0
    def g(q):
        for i in range(2):
            q[0] = np.sum(c * W) * q[-1]
        return np.sum(q)
    g(c[1])
    return np.sum(c * W)


def an_enclosing_functions_array_changed(x):
    y = x * 1.0
    def h(q):
        q *= 1.5
    def g():
        for i in range(2):
            h(y)
        return 0.0
    g()
    return np.sum(y * W)


def an_enclosing_functions_item_written(x):
    y = x * 1.0
    def g():
        i = 0
        while i < 2:
            y[0] += np.sum(y[1])
            i += 1
        return np.sum(y)
    t = g()
    return np.sum(y * W) + t


def an_enclosing_functions_alias_read(x):
    y = x * 1.0
    z = y
    def g():
        for i in range(2):
            y[0] += z[1]
        return 0.0
    for j in range(2):
        g()
    return np.sum(z * W)


def read_in_a_loop_inside_another_loop(x):
    # fuzz seed 760155: ``c`` read in ``h``'s loop, inside ``g``'s loop,
    # each carrying the array: ``c`` is ``q`` as ``h``'s turn has it
    c = x * 1.0
    def h(q):
        for i in range(2):
            q[0] = 0.5 * np.sum(c * W) * q[-1]
        return np.sum(q)
    def g(p):
        for j in range(2):
            h(p)
        return 0.0
    g(c)
    return np.sum(c * W)


def rebound_only_after_a_break(x):
    c = x * 1.0
    acc = c
    w = np.tanh(x[0, 0])
    while w < 1.12:
        if -1.04 <= 0.38:      # known: every turn ends here
            break
        acc = 0.7 * acc
        w = w + 0.3
    c += c                     # ``acc`` is still ``c``'s array
    return np.sum(acc * W) + w


CASES = [an_alias_read_by_a_closure, the_callers_array_read_by_a_closure,
         a_helper_reading_it_in_another_helpers_loop, a_view_of_it_read,
         a_transpose_of_it_read, the_array_a_row_passed_belongs_to,
         an_enclosing_functions_array_changed, an_enclosing_functions_item_written,
         an_enclosing_functions_alias_read, read_in_a_loop_inside_another_loop,
         rebound_only_after_a_break]


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_grad(f, sign):
    value_and_grad(f, sign)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_and_vmap_of_grad_against_a_loop(f):
    vmap_against_a_loop(f)


def a_sibling_view_read(x):
    c = x * 1.0
    r = c[0]
    def g(p):
        s = 0.0
        for j in range(2):
            p *= 1.1
            s = s + np.sum(r)
        return s
    s = g(c[0:2])
    return np.sum(c) + s


def test_a_view_sharing_it_otherwise_is_refused_where_it_is_read():
    with pytest.raises(tx.TransformError) as e:
        tx.grad(a_sibling_view_read)(X0)
    text = str(e.value)
    assert "test_loop_sharing.py" in text and "'r' shares memory with 'p'" in text
    assert "take 'r' again inside the loop" in text
    assert numpy_of(a_sibling_view_read)(X0) != 0.0     # (NumPy runs it)


@pytest.mark.slow        # Numba compiles: CI's slow step
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_compiled_grad_equals_eager(f):
    np.testing.assert_allclose(tx.jit(tx.grad(f))(X0.copy()), tx.grad(f)(X0.copy()),
                               rtol=1e-10)
