"""A helper changing its caller's array in place inside a loop of its own.

The loop carries the helper's parameter; after it, every name of the
calling scopes that shared the array the loop started from is the loop's
result (``LoopSharing.changed_outside``): the caller's name, an alias, a
view of it the caller holds, the array a passed row belongs to.  Where
the change is made by a helper called inside another helper's loop, that
loop is converted again carrying the name it passed (``carry_sharing``).
Before, the caller's array was left unchanged in every transform, a
silently wrong value (fuzz seed 730217).  Each case: the value (eagerly,
jit disabled, and compiled), grad against central differences, vmap and
vmap(grad) against a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad
from _sharing_checks import X0, numpy_of, value_and_grad, vmap_against_a_loop

W = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])


def item_write_in_a_for(x):
    def h(q):
        for i in range(2):
            q[0] += q[1]
        return 1.0
    h(x)
    return np.sum(x * W)


def op_assign_in_a_while(x):
    def h(q):
        i = 0
        while i < 2:
            q += 0.5 * q * q
            i += 1
        return np.sum(q)
    s = h(x)
    return np.sum(x * W) + s


def a_row_passed(x):
    def h(q):
        for i in range(3):
            q[0] = 0.5 * q[-1] + q[0]
        return 0.0
    h(x[1])
    return np.sum(x * W)


def a_view_the_caller_holds(x):
    row = x[0]
    def h(q):
        for i in range(2):
            q *= 1.5
        return 0.0
    h(x)
    return np.sum(row * W[1]) + np.sum(x * W)


def an_alias_passed(x):
    y = x
    def h(q):
        for i in range(2):
            q[1] = q[0] * q[1]
        return 0.0
    h(y)
    return np.sum(x * W)


def called_in_the_callers_loop(x):
    def h(q):
        for i in range(2):
            q -= 0.25 * q
        return 0.0
    for j in range(2):
        h(x)
    return np.sum(x * W)


def called_in_another_helpers_loop(x):
    def h(q):
        for i in range(2):
            q *= 1.25
        return 0.0
    def g(p):
        for j in range(2):
            h(p)
        return 0.0
    g(x)
    return np.sum(x * W)


def a_branch_in_another_helpers_loop(x):
    def h(q):
        if np.sum(q) > 0.0:
            q -= q * q
        return np.sum(q)
    def g(p):
        for j in range(2):
            h(p)
        return 0.0
    g(x[1])
    return np.sum(x * W)


def a_loop_ended_by_break(x):
    def h(q):
        i = 0
        while True:
            q *= 1.1
            i += 1
            if i > 2:
                break
        return np.sum(q)
    s = h(x)
    return np.sum(x * W) + s


def over_the_rows(x):
    def h(q):
        for r in q:
            r += r * r
        return 0.0
    h(x)
    return np.sum(x * W)


def rebound_after_the_change(x):
    def h(q):
        for i in range(2):
            q[0] += q[1]
            q = q * 2.0         # the caller's array is changed in the first turn only
        return np.sum(q)
    s = h(x)
    return np.sum(x * W) + s


CASES = [item_write_in_a_for, op_assign_in_a_while, a_row_passed, a_view_the_caller_holds,
         an_alias_passed, called_in_the_callers_loop, called_in_another_helpers_loop,
         a_branch_in_another_helpers_loop, a_loop_ended_by_break, over_the_rows,
         rebound_after_the_change]


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_grad(f, sign):
    value_and_grad(f, sign)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_and_vmap_of_grad_against_a_loop(f):
    vmap_against_a_loop(f)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp_against_finite_differences(f):
    t = np.array([[0.5, -1.0, 0.25], [1.0, 0.3, -0.7]])
    value, tangent = tx.jvp(f, (X0,), (t,))
    ref = numpy_of(f)
    assert value == pytest.approx(ref(X0), rel=1e-12)
    fd = np.sum(numerical_grad(ref, (X0,)) * t)
    assert tangent == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_a_number_passed_stays_the_callers_number():
    # ``q += q`` rebinds a number: the caller's ``s`` is not changed
    def f(x):
        s = 2.0 * x[0, 0]
        def h(q):
            for i in range(2):
                q += 1.5 * q
            return q
        t = h(s)
        return s * x[1, 1] + t
    ref = numpy_of(f)
    assert tx.jit(f)(X0) == pytest.approx(ref(X0), rel=1e-12)
    np.testing.assert_allclose(tx.grad(f)(X0), numerical_grad(ref, (X0,)), rtol=1e-6, atol=1e-6)


def discarded_calls(x):
    np.sum(x)                    # a statement whose value nothing reads

    def h(q):
        for i in range(2):
            q[0] = 2.0 * q[-1]
        return np.sum(q)         # discarded by the caller, then computed again below
    h(x)
    return np.sum(x) + np.sum(x * W)


def test_a_discarded_call_has_no_tangent_and_is_not_reused():
    # forward mode gave the out-less equation a tangent (a crash), and
    # ``np.sum(x)`` reused the discarded ``np.sum(q)``'s undefined name
    ref = numpy_of(discarded_calls)
    t = np.ones_like(X0)
    value, tangent = tx.jvp(discarded_calls, (X0,), (t,))
    assert value == pytest.approx(ref(X0), rel=1e-12)
    assert tangent == pytest.approx(np.sum(numerical_grad(ref, (X0,))), rel=1e-6)
    np.testing.assert_allclose(tx.jacfwd(discarded_calls)(X0), numerical_grad(ref, (X0,)),
                               rtol=1e-6, atol=1e-6)
    value_and_grad(discarded_calls, 1.0)
    vmap_against_a_loop(discarded_calls)


@pytest.mark.slow        # Numba compiles: CI's slow step
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_compiled_grad_equals_eager(f):
    np.testing.assert_allclose(tx.jit(tx.grad(f))(X0.copy()), tx.grad(f)(X0.copy()),
                               rtol=1e-10)
