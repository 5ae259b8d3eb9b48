"""Loops whose sharing of arrays changes after the first turn, peeled.

``acc = x`` before a loop that changes ``x`` in place and rebinds ``acc``:
in the first turn the change reaches ``acc`` too, in the later turns not.
No one functional form of the loop's body follows both, so such loops
were refused.  The loop is now peeled (``canonical/loops.py``): its first
turn is straight-line code inside ``if test:``, where the sharing is
followed as anywhere, and the loop after it starts with the names apart.
A rebinding on one path of the body only still leaves the later turns in
doubt: refused, located (in the loop after the peeled turn, ``acc`` is
``x`` on one path of the first turn's ``if``).  References: the untransformed function (on
copies), a loop over examples, central differences."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad


def shared_in_the_first_turn(x):
    acc = x
    w = np.sum(x) * 0.1
    while w < 0.41:                  # runs for some inputs only
        x *= np.cos(acc)             # the first turn changes acc's array too
        acc = 0.7 * acc + 0.3 * x
        w = w + 0.3
    return np.sin(acc) + x


def sharing_after_a_rebind_on_one_path(x):
    acc = x
    w = np.sum(x) * 0.1
    while w < 0.41:
        x *= np.cos(acc)
        if w > 0.2:
            acc = 0.7 * acc + 0.3 * x
        w = w + 0.3
    return np.sin(acc) + x


def eager(f, x):
    return f(np.array(x, dtype=float))


def along_ones(f, x, eps=1e-6):
    """Central differences of ``f`` (on copies) along the direction of ones."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


XS = [np.array([0.2, -0.4, 0.7]), np.array([-1.0, 0.5, -2.0]), np.array([3.0, 2.0, 1.0])]


@pytest.mark.parametrize("x", XS, ids=["one-turn", "turns", "no-turn"])
def test_a_peeled_loop_equals_eager_and_differences(x):
    want = eager(shared_in_the_first_turn, x)
    np.testing.assert_allclose(tx.jit(shared_in_the_first_turn)(x.copy()), want, rtol=1e-14)
    y, t = tx.jvp(shared_in_the_first_turn, (x.copy(),), (np.ones(3),))
    np.testing.assert_allclose(y, want, rtol=1e-14)

    def loss(v):
        return np.sum(shared_in_the_first_turn(v.copy()) ** 2)
    g = tx.grad(loss)(x.copy())
    np.testing.assert_allclose(g, numerical_grad(loss, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(tx.grad(loss))(x.copy()), g, rtol=1e-12)
    np.testing.assert_allclose(t, along_ones(shared_in_the_first_turn, x), rtol=1e-6,
                               atol=1e-8)


def test_a_peeled_loop_under_vmap_equals_a_loop_over_examples():
    X = np.stack(XS)
    want = np.stack([eager(shared_in_the_first_turn, x) for x in XS])
    np.testing.assert_allclose(tx.vmap(shared_in_the_first_turn)(X.copy()), want, rtol=1e-14)
    np.testing.assert_allclose(tx.jit(tx.vmap(shared_in_the_first_turn))(X.copy()), want,
                               rtol=1e-14)

    def loss(v):
        return np.sum(shared_in_the_first_turn(v.copy()) ** 2)
    per_example = np.stack([numerical_grad(loss, (x,), 0) for x in XS])
    np.testing.assert_allclose(tx.vmap(tx.grad(loss))(X.copy()), per_example,
                               rtol=1e-6, atol=1e-8)


def test_the_callers_array_is_left_alone():
    x = XS[1].copy()
    tx.grad(lambda v: np.sum(shared_in_the_first_turn(v)))(x)
    tx.jit(shared_in_the_first_turn)(x)
    np.testing.assert_array_equal(x, XS[1])


def test_a_rebind_on_one_path_is_still_refused_located():
    f = sharing_after_a_rebind_on_one_path
    for run in (lambda: tx.grad(lambda v: np.sum(f(v)))(XS[0].copy()),
                lambda: tx.vmap(f)(np.stack(XS)),
                lambda: tx.jit(f)(XS[0].copy())):
        with pytest.raises(tx.TransformError) as error:
            run()
        assert "test_peeled_loops.py:" in str(error.value)
        assert "'x *= ...' would change in place the array that 'acc' also names on one " \
            "path only" in str(error.value)


def shared_on_one_path_then_changed_in_a_loop(x):
    acc = x
    if np.sum(x) > 0.2:
        acc = 0.7 * acc
    for i in range(2):
        x *= np.cos(acc)             # changes acc's array where the if did not run
    return acc + x


def shared_on_one_path_then_changed_in_a_while(x):
    acc = x
    if np.sum(x) > 0.2:
        acc = 0.7 * acc
    w = 0.0
    while w < 2.0:
        x *= np.cos(acc)
        w += 1.0
    return acc + x


@pytest.mark.parametrize("f", [shared_on_one_path_then_changed_in_a_loop,
                               shared_on_one_path_then_changed_in_a_while])
def test_a_loop_changing_what_a_branch_shared_on_one_path_is_refused(f):
    """Found while peeling: in a loop's body the carried ``x`` had a name
    of its own, so changing it in place was not checked against ``acc``,
    which an ``if`` before the loop left sharing ``x``'s array on one path:
    every transform followed one path (a wrong value on the other).  A
    carry-in is now checked as the value it starts from."""
    for transform in (tx.jvp, tx.jit, tx.vmap):
        with pytest.raises(tx.TransformError) as error:
            if transform is tx.jvp:
                tx.jvp(f, (XS[1].copy(),), (np.ones(3),))
            elif transform is tx.vmap:
                tx.vmap(f)(np.stack(XS))
            else:
                tx.jit(f)(XS[1].copy())
        assert "test_peeled_loops.py:" in str(error.value)
        assert "also names on one path only" in str(error.value)


def for_shared_in_the_first_turn(x, n):
    acc = x
    for i in range(n):
        x *= np.cos(acc) + 0.1 * i     # the first turn changes acc's array too
        acc = 0.7 * acc + 0.3 * x
    return np.sin(acc) + x


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_peeled_range_loop_equals_eager_and_differences(n):
    """``for i in range(n)``: peeled as ``if 0 < n: i = 0; body; for i in
    range(0 + 1, n, 1): body``.  grad and jvp fold the Python int ``n`` in
    (the ``if`` is decided), vmap and jit keep it a run-time number."""
    x = XS[0]
    want = for_shared_in_the_first_turn(x.copy(), n)
    np.testing.assert_allclose(tx.jit(for_shared_in_the_first_turn)(x.copy(), n), want,
                               rtol=1e-14)
    got = tx.vmap(for_shared_in_the_first_turn, in_axes=(0, None))(np.stack(XS), n)
    np.testing.assert_allclose(got, [for_shared_in_the_first_turn(v.copy(), n) for v in XS],
                               rtol=1e-14)

    def loss(v):
        return np.sum(for_shared_in_the_first_turn(v.copy(), n) ** 2)
    g = tx.grad(loss)(x.copy())
    np.testing.assert_allclose(g, numerical_grad(loss, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(tx.grad(loss))(x.copy()), g, rtol=1e-12)
    y, t = tx.jvp(lambda v: for_shared_in_the_first_turn(v, n), (x.copy(),), (np.ones(3),))
    np.testing.assert_allclose(y, want, rtol=1e-14)
    np.testing.assert_allclose(t, along_ones(lambda v: for_shared_in_the_first_turn(v, n), x),
                               rtol=1e-6, atol=1e-8)
