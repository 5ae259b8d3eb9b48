"""A loop whose items are views, changed in place through the loop's target.

``for row in z[:]: row += v`` changes ``z``: each row is a view of a view
of it.  So do ``w = z; for row in w``, ``zip(z[::1], z)``,
``enumerate(z[:])`` and ``zip(z if c else z, z)`` (fuzz seed 122).  These
gave the rows' changes away silently (a wrong value in jit, jvp, vmap and
grad) until the sequence was bound to a name of its own
(``iteration.named_sequences``), the arrays items come from were carried
(``sequences_changed``) and aliases changed through items stayed one array
(``mutation.update_if_array``).  Every function runs on 2-d ``z`` (rows are
views, the change reaches ``z``) and 1-d ``z`` (items are numbers, nothing
changes), checked against NumPy on copies, central differences, a loop
over examples and eager against jit.
"""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad


def slice_of_it(x, z):
    for r in z[:]:
        r += x[0] * r
    return z * x


def alias_of_it(x, z):
    w = z
    for r in w:
        r *= np.sin(x[1])
    return z + w * x


def view_then_loop(x, z):
    w = z[::-1]
    for r in w:
        r -= 0.5 * x[2]
    return z * np.cos(x)


def zip_of_a_view(x, z):
    for r, s in zip(z[::1], z):
        r += x[0] * s
    return z * x


def enumerate_a_view(x, z):
    for i, r in enumerate(z[:]):
        r *= x[1] + i
    return z * x


def reversed_zip(x, z):
    for r, s in zip(reversed(z), z):
        r += 0.25 * x[2] * s
    return z * x


def choice_of_one_array(x, z):
    for r, s in zip((z if np.sum(x) > 0.0 else z), z):
        r += x[0] * s
    return z * x


def columns_of_it(x, z):
    for c in z.T:
        c *= x[0]
    return z * x[1]


def flipped(x, z):
    for r in np.flip(z, 0):
        r += x[2]
    return z * x


def items_of_items(x, z):
    for r in z[:]:
        for e in r:
            e *= 2.0                    # a number: changes nothing
        r[0] = x[1] * r[1]
    return z * x


def overlapping_sequences(x, z):
    out = 0.0
    for i, (r, s) in enumerate(zip(z[1:], z[:-1])):
        r -= 0.5 * s * x[i]             # s of the next turn is this turn's r
        out = out + np.sum(r)
    return z * out


def rows_of_a_column_view(x, z):
    w = z[:, :2]
    for r in w:
        r[:] = r * x[0]
    return z + x


def rows_times_a_vector(x, z):
    for r, s in zip(z[:], z):
        r += x * s                      # (a number item would become an array)
    return z * x


FUNCTIONS = [slice_of_it, alias_of_it, view_then_loop, zip_of_a_view, enumerate_a_view,
             reversed_zip, choice_of_one_array, columns_of_it, flipped, items_of_items,
             overlapping_sequences, rows_of_a_column_view, rows_times_a_vector]
X = [np.array([0.4, -0.1, 0.2]), np.array([-0.3, -0.2, 0.6])]
Z2 = np.array([[0.3, -0.2, 0.5], [1.1, 0.4, -0.7], [-0.6, 0.9, 0.2]])
Z1 = np.array([0.3, -0.2, 0.5])


def eager(f, x, z):
    return f(x.copy(), z.copy())


def loss_of(f):
    return lambda x, z: np.sum(np.sin(f(x, z)))


CASES = [(f, z) for f in FUNCTIONS for z in (Z2, Z1)
         if z.ndim == 2 or f not in (rows_times_a_vector, columns_of_it, flipped,
                                     items_of_items, rows_of_a_column_view)]
IDS = [f"{f.__name__}-{'rows' if z.ndim == 2 else 'numbers'}" for f, z in CASES]


@pytest.mark.parametrize("f, z", CASES, ids=IDS)
def test_values_follow_numpy(f, z):
    for x in X:
        want = eager(f, x, z)
        changed = z.copy()
        f(x.copy(), changed)
        assert np.array_equal(changed, z) == (z.ndim == 1)     # NumPy changed 2-d z
        out, _ = tx.jvp(f, (x.copy(), z.copy()), (np.ones(3), np.ones_like(z)))
        np.testing.assert_allclose(out, want, rtol=1e-14)
    got = tx.vmap(f, in_axes=(0, None))(np.stack(X), z.copy())
    np.testing.assert_allclose(got, [eager(f, x, z) for x in X], rtol=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("f, z", CASES, ids=IDS)
def test_jit_equals_eager(f, z):
    for x in X:
        np.testing.assert_allclose(tx.jit(f)(x.copy(), z.copy()), eager(f, x, z), rtol=1e-14)
        g = tx.grad(loss_of(f), argnums=(0, 1))(x.copy(), z.copy())
        jg = tx.jit(tx.grad(loss_of(f), argnums=(0, 1)))(x.copy(), z.copy())
        for i in (0, 1):
            np.testing.assert_allclose(jg[i], g[i], rtol=1e-12, atol=1e-14)
    got = tx.jit(tx.vmap(f, in_axes=(0, None)))(np.stack(X), z.copy())
    np.testing.assert_allclose(got, [eager(f, x, z) for x in X], rtol=1e-14)


@pytest.mark.parametrize("f, z", CASES, ids=IDS)
def test_derivatives_equal_differences(f, z):
    def loss(x, zz):
        return np.sum(np.sin(eager(f, x, zz)))

    for x in X:
        g = tx.grad(loss_of(f), argnums=(0, 1))(x.copy(), z.copy())
        for i in (0, 1):
            np.testing.assert_allclose(g[i], numerical_grad(loss, (x, z), i),
                                       rtol=1e-6, atol=1e-8)
        _, t = tx.jvp(f, (x.copy(), z.copy()), (np.ones(3), np.zeros_like(z)))
        eps = 1e-6
        fd = (eager(f, x + eps, z) - eager(f, x - eps, z)) / (2 * eps)
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)
    gs = tx.vmap(tx.grad(loss_of(f)), in_axes=(0, None))(np.stack(X), z.copy())
    for x, g in zip(X, gs):
        np.testing.assert_allclose(g, numerical_grad(loss, (x, z), 0), rtol=1e-6, atol=1e-8)


def test_a_number_item_that_becomes_an_array():
    # 1-d z: each item is a number, ``r += x * s`` makes it an array and z
    # stays as it was; every eager transform follows NumPy
    x = X[0]
    want = eager(rows_times_a_vector, x, Z1)
    np.testing.assert_allclose(want, Z1 * x)
    out, t = tx.jvp(rows_times_a_vector, (x.copy(), Z1.copy()), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(out, want, rtol=1e-14)
    np.testing.assert_allclose(t, Z1, rtol=1e-14)
    g = tx.grad(loss_of(rows_times_a_vector), argnums=(0, 1))(x.copy(), Z1.copy())

    def loss(a, b):
        return np.sum(np.sin(eager(rows_times_a_vector, a, b)))
    for i in (0, 1):
        np.testing.assert_allclose(g[i], numerical_grad(loss, (x, Z1), i), rtol=1e-6, atol=1e-8)
    # compiled code types the write-back of an array item too, which a
    # number item cannot take: refused, at the loop
    from tangent_x.numba_stage.compile_errors import JitError
    with pytest.raises(JitError, match=r"test_iterated_views.py:\d+: Numba cannot compile"):
        tx.jit(rows_times_a_vector)(x.copy(), Z1.copy())
