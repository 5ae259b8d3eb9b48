"""A loop that changes in place the array it iterates over.

Python's iteration reads the array as it is at each step, changes made by
earlier steps included: ``for v in y: if v < c: y *= y`` squares the items
not yet read too.  Every transform read the items from the array as it was
before the loop (fuzz seed 421282: a wrong value in every mode).  ``for v
in y`` now carries ``y`` and reads each item from it, and so do ``zip``,
``enumerate`` and ``reversed`` of ``y`` by name (they were refused: fuzz
seed 491172); where the changed array is iterated another way (through an
alias) or also rebound, the loop is refused, located, with the fix.  References: the function on copies, a loop over
examples, central differences."""
import numpy as np
import pytest

import tangent_x as tx


def squares_what_it_iterates(y):
    for v in y:
        if v < -0.63:
            y *= y                  # later items are read squared
    return y


def halves_an_item_it_reads_later(y):
    for v in y:
        if v < -0.63:
            y[2] = 0.5 * y[2]       # the third item is read halved
    return y * 1.0


def zips_what_it_changes(y):
    for v, w in zip(y, y):
        if v < -0.63:
            y *= y
    return y


def enumerates_what_it_changes(y):
    s = 0.0
    for k, v in enumerate(y):
        if k + 1 < len(y):
            y[k + 1] += v * 0.5     # the next item is read changed
        s = s + v * v
    return y * s


def reverses_what_it_changes(y):
    for v in reversed(y):
        y[0] = y[0] * v + 0.25
    return y * 1.0


def zips_rows_it_scales(x):
    s = 0.0 * x[0]
    for row, w in zip(x, np.cos(x[:, 0])):
        x *= 1.5                    # later rows are read scaled
        s = s + row * w
    return s


def zips_a_slice_it_scales(y):
    s = 0.0
    for v, w in zip(y, y[::-1]):    # the slice is a view Python reads changed
        y *= 1.5
        s = s + v * w
    return s


def zips_through_an_alias(y):
    w = y
    s = 0.0
    for v, u in zip(w, y * 2.0):
        y *= 0.9
        s = s + v * u
    return s


def zips_and_rebinds(y):
    for v, w in zip(y, y):
        if v < -0.63:
            y *= y
        y = y + 1.0                 # the iteration goes on over the old array
    return y


Y = [np.array([-0.9, 0.2, -0.8]), np.array([0.3, -0.7, -0.95]), np.array([0.5, 0.1, 0.2])]


@pytest.mark.parametrize("f", [squares_what_it_iterates, halves_an_item_it_reads_later,
                               zips_what_it_changes, enumerates_what_it_changes,
                               reverses_what_it_changes])
def test_items_are_read_from_the_changed_array(f):
    for y in Y:
        want = f(y.copy())
        np.testing.assert_allclose(tx.jit(f)(y.copy()), want, rtol=1e-14)
        np.testing.assert_allclose(tx.jvp(f, (y.copy(),), (np.ones(3),))[0], want, rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(f)(np.stack(Y)), [f(y.copy()) for y in Y], rtol=1e-14)

    def loss(v):
        return np.sum(np.sin(f(v.copy())))
    for y in Y:
        eye = np.eye(3) * 1e-6
        fd = np.array([(loss(y + e) - loss(y - e)) / 2e-6 for e in eye])
        np.testing.assert_allclose(tx.grad(loss)(y.copy()), fd, rtol=1e-6, atol=1e-9)


def test_rows_zipped_from_the_changed_array():
    X = np.array([[0.5, -0.3], [0.8, 0.1], [0.3, 0.3]])
    want = zips_rows_it_scales(X.copy())
    np.testing.assert_allclose(tx.jit(zips_rows_it_scales)(X.copy()), want, rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(zips_rows_it_scales)(np.stack([X, -X])),
                               [want, zips_rows_it_scales(-X)], rtol=1e-14)

    def loss(v):
        return np.sum(np.sin(zips_rows_it_scales(v.copy())))
    eye = np.eye(6).reshape(6, 3, 2) * 1e-6
    fd = np.array([(loss(X + e) - loss(X - e)) / 2e-6 for e in eye]).reshape(3, 2)
    np.testing.assert_allclose(tx.grad(loss)(X.copy()), fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", [zips_through_an_alias, zips_and_rebinds,
                               zips_a_slice_it_scales])
def test_a_changed_array_iterated_another_way_is_refused_located(f):
    for run in (lambda: tx.jit(f)(Y[0].copy()),
                lambda: tx.vmap(f)(np.stack(Y)),
                lambda: tx.grad(lambda v: np.sum(f(v)))(Y[0].copy())):
        with pytest.raises(tx.TransformError) as error:
            run()
        message = str(error.value)
        assert "test_iterated_in_place.py:" in message
        assert "changes in place the array 'y' while iterating over it" in message
        assert "y.copy()" in message
