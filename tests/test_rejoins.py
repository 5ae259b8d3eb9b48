"""In-place changes of a value an ``if`` passed through on one path only.

``b = y`` on one path, another value on the other; then ``y *= v`` changes
``b`` where that path ran (NumPy: the same array).  Every transform follows
it with a join on the ``if``'s own predicate (``canonical/rejoins.py``);
before, it was refused.  Checked against the untransformed function on
copies, central differences, a loop over examples whose examples take both
paths, and eager against jit."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax
from _fd import numerical_grad


def changes_the_source(x, y):
    if np.sum(x) > 0.3:
        b = np.arctan(np.cos(y))
    else:
        b = y                           # b is y's array on this path
    y *= y + x
    return (0.62 + b) * y


def changes_the_join_twice(x, y):
    if np.sum(x) > 0.3:
        b = np.arctan(np.cos(y))
    else:
        b = y
    b -= x                              # changes y where b is y
    b *= 2.0
    y *= 3.0                            # changes b where b is y
    return (0.62 + b) * y


def writes_an_item(x, y):
    b = y if np.sum(x) > 0.3 else 2.0 * y
    y[1] = x[0] * 3.0
    y *= 2.0
    return b * x + y


def lax_cond_passes_through(x, y):
    operand = x if np.max(y) < -0.41 else y      # a join passed on by another
    l1 = lax.cond(np.sum(x) <= 0.3, lambda a: x + a, lambda a: a, operand)
    l1 -= 1.0 / (1.0 + np.exp(-y))
    return l1 * y + x


def lax_switch_passes_through(x, y):
    s = np.sum(x * y)
    l1 = lax.switch(0 if s < -0.1 else (1 if s < 0.3 else 2),
                    [lambda a: np.arctan(x), lambda a: x, lambda a: x ** 3], y)
    x -= 0.5 * x * y
    return l1 * x


def changes_a_sibling(x, y):
    # ``y`` and ``b`` are both the first ``y`` on the second path: changing
    # the join ``y`` changes ``b`` there (fuzz seed 491467, wrong in vmap)
    if np.sum(x) > 0.3:
        y = 0.7 * y + 0.3 * x
        b = np.cos(y)
    else:
        b = y
    y -= 0.5 * x
    return b * y


def changes_a_sibling_item(x, y):
    if np.sum(x) > 0.3:
        b = y
    elif np.sum(x) > -1.0:
        y = y * x
        b = 2.0 * y
    else:
        b = np.sin(y)
    y[0] = x[1] * 3.0
    b *= 1.5                           # changes y where b is the first y
    return b + y


def lax_cond_on_a_constant(x, y):
    # a test known when transforming takes its branch, as an ``if`` does
    # (its join of ``y`` with ``y`` was refused: fuzz seed 490179)
    l1 = lax.cond(0.01 > -0.62, lambda a: (y if np.mean(y) < -0.9 else y), lambda a: x, y)
    l2 = lax.switch(7, [lambda a: a * 2.0, lambda a: x, lambda a: y], x)
    y -= 0.5 * x
    return l1 * l2 + y


def same_value_on_both_paths(x, y):
    # ``b`` is ``y`` whichever branch runs: no join, the change is y's
    if np.sum(x) > 0.3:
        b = y
        c = 2.0 * x
    else:
        b = y
        c = np.sin(x)
    b[1:] *= c[:2]
    d = x if np.max(y) < 0.0 else x
    d -= 0.5 * y                        # changes x
    return b * c + y * x


FUNCTIONS = [same_value_on_both_paths, changes_the_source, changes_the_join_twice, writes_an_item,
             lax_cond_passes_through, lax_switch_passes_through, changes_a_sibling,
             changes_a_sibling_item, lax_cond_on_a_constant]
X = [np.array([0.2, -0.4, 0.7]), np.array([-1.0, 0.5, -2.0]), np.array([0.9, 0.3, -0.1]),
     np.array([0.1, 0.2, 0.05])]
Y = [np.array([0.3, 0.6, -0.2]), np.array([-0.7, -0.5, -0.9]), np.array([-0.5, -0.6, -0.45]),
     np.array([1.2, -0.3, 0.8])]


def eager(f, x, y):
    return f(x.copy(), y.copy())


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_values_follow_numpy_on_every_path(f):
    _values(f, compiled=True)


def _values(f, compiled):
    for x, y in zip(X, Y):
        want = eager(f, x, y)
        if compiled:
            np.testing.assert_allclose(tx.jit(f)(x.copy(), y.copy()), want, rtol=1e-14)
        out, _ = tx.jvp(f, (x.copy(), y.copy()), (np.ones(3), np.ones(3)))
        np.testing.assert_allclose(out, want, rtol=1e-14)
    got = tx.vmap(f)(np.stack(X), np.stack(Y))
    np.testing.assert_allclose(got, [eager(f, x, y) for x, y in zip(X, Y)], rtol=1e-14)
    if compiled:
        got = tx.jit(tx.vmap(f))(np.stack(X), np.stack(Y))
        np.testing.assert_allclose(got, [eager(f, x, y) for x, y in zip(X, Y)], rtol=1e-14)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_derivatives_equal_differences(f):
    _derivatives(f, compiled=True)


def _derivatives(f, compiled):
    def loss(x, y):
        return np.sum(np.sin(eager(f, x, y)))

    for x, y in zip(X, Y):
        g = tx.grad(lambda a, b: np.sum(np.sin(f(a, b))), argnums=(0, 1))(x.copy(), y.copy())
        for i in (0, 1):
            np.testing.assert_allclose(g[i], numerical_grad(loss, (x, y), i),
                                       rtol=1e-6, atol=1e-8)
        if compiled:
            jg = tx.jit(tx.grad(lambda a, b: np.sum(np.sin(f(a, b))), argnums=(0, 1)))(
                x.copy(), y.copy())
            for i in (0, 1):
                np.testing.assert_allclose(jg[i], g[i], rtol=1e-12, atol=1e-14)
        _, t = tx.jvp(f, (x.copy(), y.copy()), (np.ones(3), np.zeros(3)))
        eps = 1e-6
        fd = (eager(f, x + eps, y) - eager(f, x - eps, y)) / (2 * eps)
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)


def changes_a_number(x, t):
    b = t if np.sum(x) > 0.3 else 2.0 * t
    t *= 2.0                           # a Python number: b is not changed
    return b * x + t


def test_a_number_passed_through_is_not_changed():
    for x in X:
        want = changes_a_number(x.copy(), 0.7)
        np.testing.assert_allclose(tx.jit(changes_a_number)(x.copy(), 0.7), want, rtol=1e-14)
    got = tx.vmap(changes_a_number, in_axes=(0, None))(np.stack(X), 0.7)
    np.testing.assert_allclose(got, [changes_a_number(x.copy(), 0.7) for x in X], rtol=1e-14)
    g = tx.grad(lambda x: np.sum(changes_a_number(x, 0.7)))(X[0].copy())
    np.testing.assert_allclose(g, numerical_grad(
        lambda x: np.sum(changes_a_number(x.copy(), 0.7)), (X[0],), 0), rtol=1e-6)


def passed_through_by_a_hidden_test(x, y):
    if np.sum(x) > 0.3:
        if np.sum(y) > 0.0:            # a test computed inside the branch
            b = y
        else:
            b = 2.0 * y
    else:
        b = 3.0 * y
    y *= 2.0
    return b + y


def a_view_on_one_path(x, y):
    if np.sum(x) > 0.3:
        b = y[::2]                      # a view of y on this path
    else:
        b = y[:2] * 3.0
    y *= 2.0 + x                        # changes b where it is y's view
    y[1] = 5.0 * y[0]
    return np.sum(b * b) + y * x


def a_view_changed_on_one_path(x, y):
    b = y[1:] if np.sum(x) > 0.3 else x[:2] * 3.0
    b *= 2.0 + x[1:]                    # writes into y where b is its view
    return np.sum(b * b) + y * x


def a_view_in_a_switch(x, y):
    s = np.sum(y)
    b = lax.switch(0 if s < -0.5 else (1 if s < 0.5 else 2),
                   [lambda a: np.cos(a), lambda a: a - 0.49, lambda a: x[::2]], y[:2] * 1.4)
    if np.sum(x) > 0.0:
        b -= np.sin(y[:2])              # writes into x where b is x[::2]
        c = x
    else:
        c = y
    return np.sum(b) + c * y


def changed_in_a_later_if(x, y):
    if np.sum(x) > 0.3:
        b = y[1:]
    else:
        b = x[:2] * 3.0
    if np.sum(y) > -1.0:
        y *= 3.0 + x                    # inside another if's body
    else:
        b -= 1.0
    return np.sum(b * b) * x + y * y


def a_nested_view(x, y):
    z = y * 1.0
    if np.sum(x) > -0.6:
        b = z[::-1] if np.sum(y) > 0.0 else x * 2.0   # its test inside the branch
    else:
        b = x * z
    if np.sum(x) < 5.0:
        z -= b[::-1]
    return b * b + z * x


def a_view_of_a_temporary(x, y):
    def helper(q):
        if np.max(q[0]) > -0.5:
            b = q[:, ::-1] if np.sum(y) > 0.0 else q * 2.0
        else:
            b = q + 1.0
        if np.sum(x) > -0.6:
            q -= b[:, ::-1] * x
        return b[0] * q[1]
    return helper((np.ones((2, 3)) * 0.71 * y)[::-1])


def a_row_or_a_number_on_one_path(x, y):
    m = np.stack([x, y]) * 1.0
    s = np.sum(y)
    b = lax.switch(0 if s < -0.5 else (1 if s < 0.5 else 2),
                   [lambda a: a * 0.46, lambda a: 1.05 - a, lambda a: m[-1]], x * x)
    n = x[-1] if np.sum(x) > 0.3 else y[0] * 2.0      # a number: shares nothing
    m *= m                              # changes b where it is m's row
    x *= 2.0
    return b * n + m[0]


def a_view_of_a_view_on_one_path(x, y):
    m = np.stack([x, y]) * 1.0
    if np.sum(x) > 0.3:
        b = m[::-1][-1]                 # m's first row, through a temporary view
    else:
        b = x * 3.0
    m *= 2.0 + y                        # changes b where it is that row (fuzz seed 640185)
    b += 1.0                            # and then m there
    return b * x + m[1] + m[0]


VIEWS = [a_view_of_a_view_on_one_path, a_row_or_a_number_on_one_path, passed_through_by_a_hidden_test, a_view_on_one_path, a_view_changed_on_one_path,
         a_view_in_a_switch, changed_in_a_later_if, a_nested_view, a_view_of_a_temporary]


@pytest.mark.parametrize("f", VIEWS, ids=lambda f: f.__name__)
def test_views_and_nested_tests_follow_numpy_on_every_path(f):
    """A branch gave a view of the value changed later (fuzz seeds 610472,
    621274), the test of a nested ``if`` is computed inside a branch, the
    change is inside a later ``if``'s body: followed, where before each was
    refused.  Values of jit, jvp, vmap and jit(vmap), and the derivatives,
    as ``test_values_follow_numpy_on_every_path`` and
    ``test_derivatives_equal_differences`` check them."""
    paths = {tuple(np.sign([np.sum(x) - 0.3, np.sum(y)])) for x, y in zip(X, Y)}
    assert len(paths) >= 3             # the examples take several paths
    _values(f, compiled=False)
    _derivatives(f, compiled=False)


@pytest.mark.slow        # Numba compiles: CI's slow step
@pytest.mark.parametrize("f", VIEWS, ids=lambda f: f.__name__)
def test_views_and_nested_tests_under_jit(f):
    """The same under jit, jit(vmap) and jit(grad), against eager."""
    _values(f, compiled=True)
    _derivatives(f, compiled=True)


def changed_back_then_the_base(x, y):
    b = y[1:] if np.sum(x) > 0.3 else x[:2] * 3.0
    b *= 2.0
    y += 1.0                           # b is a view of the y written back into
    return np.sum(b * b) + y * x


def changed_back_twice(x, y):
    b = y[1:] if np.sum(x) > 0.3 else x[:2] * 3.0
    b *= 2.0
    b += x[:2]
    return np.sum(b * b) + y * x


def changed_in_a_later_loop(x, y):
    b = y[1:] if np.sum(x) > 0.3 else x[:2] * 3.0
    for _ in range(2):
        y *= 3.0                       # a loop would have to carry b
    return np.sum(b * b) + y * x


@pytest.mark.parametrize("f", [changed_back_then_the_base, changed_back_twice,
                               changed_in_a_later_loop], ids=lambda f: f.__name__)
def test_what_is_not_followed_is_still_refused_located(f):
    """A second change after a write-back through a view on one path, and a
    change inside a later loop: refused at the user's line, never another
    value (the write-back's join is not followed again; a loop body would
    have to carry the join)."""
    for transform in (tx.jit, lambda g: tx.grad(lambda a, b: np.sum(g(a, b)))):
        with pytest.raises(tx.TransformError) as error:
            transform(f)(X[0].copy(), Y[0].copy())
        message = str(error.value)
        assert "test_rejoins.py:" in message and "also names on one path only" in message


def rows_of_a_choice(x, z):
    # ``z if ... else z`` is ``z``: its rows are z's, changed in place (fuzz seed 122)
    for r, s in zip((z if np.sum(x) > 0.0 else z), z):
        r += x * s
    return z * x


def test_rows_of_a_choice_of_one_array_change_it():
    z = np.array([[0.3, -0.2, 0.5], [1.1, 0.4, -0.7]])
    for x in (np.array([0.4, -0.1, 0.2]), np.array([-0.4, -0.1, 0.2])):
        want = rows_of_a_choice(x.copy(), z.copy())
        np.testing.assert_allclose(tx.jit(rows_of_a_choice)(x.copy(), z.copy()), want,
                                   rtol=1e-14)

        def loss(a, b):
            return np.sum(np.sin(rows_of_a_choice(a.copy(), b.copy())))
        g = tx.grad(lambda a, b: np.sum(np.sin(rows_of_a_choice(a, b))), argnums=(0, 1))(
            x.copy(), z.copy())
        for i in (0, 1):
            np.testing.assert_allclose(g[i], numerical_grad(loss, (x, z), i),
                                       rtol=1e-6, atol=1e-8)
    xs = np.array([[0.4, -0.1, 0.2], [-0.4, -0.1, 0.2]])
    got = tx.vmap(rows_of_a_choice, in_axes=(0, None))(xs, z.copy())
    np.testing.assert_allclose(got, [rows_of_a_choice(x.copy(), z.copy()) for x in xs],
                               rtol=1e-14)
