"""An in-place change after a loop of a variable that held another array
before it.

``acc = x`` before a loop that rebinds ``acc`` (``acc = f(x)``): after the
loop ``acc`` is ``x`` itself when the loop ran no turn, another array when
it ran, decided at run time.  ``acc *= v`` there changes ``x`` in the first
case only, which no functional form follows, so where ``x`` is read later
every transform refuses it at that line (before: every transform followed
one case and gave a wrong value when the other ran; fuzz seed 310003).
Where ``x`` is not read again, the change is ``acc``'s alone and runs.
Since session 16, after a ``for`` loop the change is followed: ``acc`` is
a join on whether the loop ran (``canonical/rejoins.py``); after a
``while`` loop it is still refused.
The references are the untransformed function and central differences."""
import numpy as np
import pytest

import tangent_x as tx

X = np.linspace(0.1, 1.0, 3)


def reads_first_value_later(x, n):
    acc = x
    for i in range(n):
        acc = np.tanh(x) ** 3
    acc *= 2.0
    return x * acc


def while_reads_first_value_later(x, n):
    acc = x
    w = np.tanh(0.32)
    while w < 0.04:
        acc = np.tanh(x) ** 3
        w = w + 0.3
    acc[0] = 5.0
    return x * acc


def first_value_not_read_later(x, n):
    acc = x
    for i in range(n):
        acc = np.tanh(x) ** 3 + acc
    acc *= 2.0
    return np.sin(acc)


TRANSFORMS = {
    "grad": lambda f, x, n: tx.grad(lambda v: np.sum(f(v, n)))(x),
    "jvp": lambda f, x, n: tx.jvp(lambda v: f(v, n), (x,), (x,))[0],
    "vmap": lambda f, x, n: tx.vmap(f, in_axes=(0, None))(x[None], n),
    "jit": lambda f, x, n: tx.jit(f)(x, n),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("n", [0, 2])
def test_after_a_for_loop_that_may_run_no_turn_the_change_follows_whether_it_ran(transform, n):
    """``for i in range(n)`` with ``n`` a run-time number (vmap, jit) or
    folded in (grad, jvp): ``acc`` after the loop is a join on ``0 < n``
    (``rejoins``), so ``acc[0] = 5.0`` changes ``x`` exactly where the loop
    ran no turn.  It was refused (the while loop below still is)."""
    want = reads_first_value_later(X.copy(), n)
    got = TRANSFORMS[transform](reads_first_value_later, X.copy(), n)
    if transform == "grad":
        def loss(x):
            return np.sum(reads_first_value_later(x.copy(), n))
        eye = np.eye(3) * 1e-6
        want = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_allclose(got[0] if transform == "vmap" else got, want, rtol=1e-14)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_a_change_in_place_of_what_may_be_the_first_value_is_refused(transform):
    """A ``while`` loop's first test is not computed before it: refused."""
    with pytest.raises(tx.TransformError) as error:
        TRANSFORMS[transform](while_reads_first_value_later, X.copy(), 0)
    message = str(error.value)
    assert "test_inplace_after_loop.py:" in message
    assert "a loop that may run no turn" in message and ".copy()" in message


@pytest.mark.parametrize("n", [0, 2])
def test_a_change_in_place_no_one_reads_again_runs(n):
    want = first_value_not_read_later(X.copy(), n)
    np.testing.assert_allclose(tx.jit(first_value_not_read_later)(X.copy(), n), want,
                               rtol=1e-14)
    got = tx.vmap(first_value_not_read_later, in_axes=(0, None))(X[None].copy(), n)
    np.testing.assert_allclose(got[0], want, rtol=1e-14)

    def loss(x):
        return np.sum(first_value_not_read_later(x, n))
    g = tx.grad(loss)(X.copy())
    eye = np.eye(3) * 1e-6
    fd = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def always_runs(x):
    acc = x
    for i in range(2):
        acc = np.tanh(x) ** 3 + acc
    acc *= 2.0
    return x * acc


def test_a_loop_that_always_runs_leaves_no_doubt():
    """``range(2)``: the loop runs, so ``acc`` is never ``x`` after it."""
    want = always_runs(X.copy())
    np.testing.assert_allclose(tx.jit(always_runs)(X.copy()), want, rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(always_runs)(X[None].copy())[0], want, rtol=1e-14)
    np.testing.assert_allclose(tx.jvp(always_runs, (X.copy(),), (X.copy(),))[0], want,
                               rtol=1e-14)


def test_a_trip_count_known_when_transforming_decides():
    """grad and jvp fold the Python int ``n`` in (``range(2)`` runs); vmap
    and jit keep it a run-time number and join on ``0 < n``: all equal
    eager."""
    want = reads_first_value_later(X.copy(), 2)
    for name in ("jvp", "vmap", "jit"):
        got = TRANSFORMS[name](reads_first_value_later, X.copy(), 2)
        np.testing.assert_allclose(got[0] if name == "vmap" else got, want, rtol=1e-14)
    g = TRANSFORMS["grad"](reads_first_value_later, X.copy(), 2)

    def loss(x):
        return np.sum(reads_first_value_later(x.copy(), 2))
    eye = np.eye(3) * 1e-6
    fd = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def while_runs_first_turn(x):
    acc = x
    w = np.tanh(np.arctan(-0.62))       # a number known when transforming
    while w < 0.31:
        acc = 0.7 * acc + 0.3 * (acc * w)
        w = w + 0.3 + 0.1 * np.sin(np.sum(acc))
    acc -= 1.0 / (1.0 + np.exp(-acc))
    acc *= -0.65 * x
    return acc * np.tanh(w)


def test_a_while_whose_first_test_is_known_to_hold_leaves_no_doubt():
    """The test on entry is decided when transforming (fuzz seed 330035,
    refused before): the loop runs, so ``acc`` is never ``x`` after it and
    the in-place changes are ``acc``'s alone."""
    want = while_runs_first_turn(X.copy())
    for name in ("jvp", "vmap", "jit"):
        got = TRANSFORMS[name](lambda x, n: while_runs_first_turn(x), X.copy(), None)
        np.testing.assert_allclose(got[0] if name == "vmap" else got, want, rtol=1e-13)
    g = TRANSFORMS["grad"](lambda x, n: while_runs_first_turn(x), X.copy(), None)

    def loss(x):
        return np.sum(while_runs_first_turn(x.copy()))
    eye = np.eye(3) * 1e-6
    fd = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def breaks_out_of_a_known_range(x, y):
    acc = y if np.mean(y) >= 0.43 else 2.0 * y    # y's array on one path
    for i in range(1):                            # runs: a loop with a break
        acc = 0.7 * acc + 0.3 * (1.11 + y)       # (a while, written by exits)
        if np.sum(acc) > -0.44:
            break
    y += x                                        # acc is not y any more
    return y + acc


@pytest.mark.parametrize("y", [np.array([1.0, 2.0, 0.5]), np.array([0.1, 0.2, -0.3])],
                         ids=["passed-through", "computed"])
def test_a_loop_with_a_break_over_a_known_range_leaves_no_doubt(y):
    """Fuzz seed 401525: ``exits`` writes the loop as ``while not broken and
    k < len(range(1))``; that first test is now folded (``len`` of a
    ``range`` known when transforming), and the carry after the loop is its
    result, no longer checked as its first value (it was refused)."""
    want = breaks_out_of_a_known_range(X.copy(), y.copy())
    got = tx.jvp(breaks_out_of_a_known_range, (X.copy(), y.copy()), (X, y))[0]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    got = tx.vmap(breaks_out_of_a_known_range, in_axes=(None, 0))(X.copy(), np.stack([y, y]))
    np.testing.assert_allclose(got, [want, want], rtol=1e-14)

    def loss(x, v):
        return np.sum(np.sin(breaks_out_of_a_known_range(x.copy(), v.copy())))
    g = tx.grad(loss, argnums=(0, 1))(X.copy(), y.copy())
    eye = np.eye(3) * 1e-6
    for i, at in enumerate([lambda e: (X + e, y), lambda e: (X, y + e)]):
        fd = np.array([(loss(*at(e)) - loss(*at(-e))) / 2e-6 for e in eye])
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-9)



def after_zip(x, z):
    acc = x
    for a, b in zip(z, z * 2.0):       # runs no turn when z is empty
        acc = np.tanh(x) * a + b
    acc *= 2.0                         # x too, where the loop ran no turn
    return x * acc


def before_zip_changed(x, z):
    acc = x
    for a in z:
        acc = np.tanh(x) * a
    x *= 3.0                           # acc too, where the loop ran no turn
    return x + acc


def rebinds_on_one_path(x, z):
    acc = x
    for a in z:
        if a > 0.0:                    # acc may still be x after turns
            acc = np.tanh(x) * a
    acc *= 2.0
    return x * acc


@pytest.mark.parametrize("f", [after_zip, before_zip_changed])
@pytest.mark.parametrize("z", [np.array([0.5, -0.3]), np.zeros(0)], ids=["turns", "no-turn"])
def test_after_a_loop_over_items_the_change_follows_whether_it_ran(f, z):
    """Fuzz seeds 410249 and 400397 (loops over ``zip``, refused): the
    carry after the loop is a join on ``0 < len``; every transform equals
    eager, the gradient differences."""
    want = f(X.copy(), z.copy())
    np.testing.assert_allclose(tx.jit(f)(X.copy(), z.copy()), want, rtol=1e-14)
    np.testing.assert_allclose(tx.jvp(f, (X.copy(), z.copy()), (X, z))[0], want, rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(f, in_axes=(0, None))(np.stack([X, 2 * X]), z.copy()),
                               [want, f(2 * X, z.copy())], rtol=1e-14)

    def loss(x):
        return np.sum(np.sin(f(x.copy(), z.copy())))
    eye = np.eye(3) * 1e-6
    fd = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(tx.grad(loss)(X.copy()), fd, rtol=1e-6, atol=1e-9)


def test_a_loop_that_rebinds_on_one_path_leaves_the_doubt_refused():
    with pytest.raises(tx.TransformError, match="a loop that may run no turn"):
        tx.jit(rebinds_on_one_path)(X.copy(), np.array([0.5, -0.3]))
