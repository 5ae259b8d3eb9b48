"""vmap's loop over examples (its strategy where an operation has no
batched form) gives each call arrays of its own: a function that changes
an argument in place (``w *= 2.0``) changed, before, the caller's batch
and, for a shared argument, the value the next example saw (a wrong
number from the second example on).  Found by the program generator's
containers (seed 150012: starred unpacking has no batched form)."""
import numpy as np

import tangent_x as tx


def scaled(y, w):
    a, *rest = (0.5, y)          # no batched form: vmap loops over examples
    k = a + sum(rest)
    w *= 2.0
    y *= y
    return y * w + k


def test_a_shared_argument_changed_in_place_is_the_same_for_every_example():
    ys, w = np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.5, -1.5])
    ys0, w0 = ys.copy(), w.copy()
    got = tx.vmap(scaled, in_axes=(0, None))(ys, w)
    expected = np.stack([scaled(y.copy(), w.copy()) for y in ys0])
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    np.testing.assert_array_equal(ys, ys0)      # the caller's arrays as they were
    np.testing.assert_array_equal(w, w0)


def test_a_batched_argument_on_another_axis_is_not_changed():
    ys, ws = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.linspace(0.2, 1.2, 6).reshape(3, 2)
    ys0, ws0 = ys.copy(), ws.copy()
    got = tx.vmap(scaled, in_axes=(1, 0))(ys, ws)
    expected = np.stack([scaled(ys0[:, i].copy(), ws0[i].copy()) for i in range(3)])
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    np.testing.assert_array_equal(ys, ys0)
    np.testing.assert_array_equal(ws, ws0)
