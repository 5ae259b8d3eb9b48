"""A loop that changes in place the array it iterates over.

Python's iteration reads the array as it is at each step, changes made by
earlier steps included: ``for v in y: if v < c: y *= y`` squares the items
not yet read too.  Every transform read the items from the array as it was
before the loop (fuzz seed 421282: a wrong value in every mode).  ``for v
in y`` now carries ``y`` and reads each item from it; where the changed
array is iterated another way (``zip``, ``enumerate``) the loop is refused,
located, with the fix.  References: the function on copies, a loop over
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


Y = [np.array([-0.9, 0.2, -0.8]), np.array([0.3, -0.7, -0.95]), np.array([0.5, 0.1, 0.2])]


@pytest.mark.parametrize("f", [squares_what_it_iterates, halves_an_item_it_reads_later])
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


def test_a_changed_array_iterated_through_zip_is_refused_located():
    for run in (lambda: tx.jit(zips_what_it_changes)(Y[0].copy()),
                lambda: tx.vmap(zips_what_it_changes)(np.stack(Y)),
                lambda: tx.grad(lambda v: np.sum(zips_what_it_changes(v)))(Y[0].copy())):
        with pytest.raises(tx.TransformError) as error:
            run()
        message = str(error.value)
        assert "test_iterated_in_place.py:" in message
        assert "changes in place the array 'y' while iterating over it" in message
        assert "y.copy()" in message
