"""Under jit, a variable that NumPy gives two kinds of value on two paths.

Compiled code gives a variable one type.  Where an ``if`` leaves a number
in a variable on one path and an array on the other, or integers on one
path and floats on the other, no one type follows NumPy on every path
(making the number an array changes ``np.sum(a)``; making the integers
floats changes the dtype of what the integer path returns), so jit,
jit(grad) and jit(vmap) refuse it with a located error naming the user's
assignments and what to write, never a value of another dtype.  Each
expected value is the plain function's."""
import numpy as np
import pytest

import tangent_x as tx

X = np.array([0.3, 0.9, -0.2])


def number_or_array(x, y):
    if np.sum(x) > 0.5:
        a = x * 2.0
    else:
        a = 1.5
    return np.sum(a * y)


def ints_or_floats(x):
    i = np.arange(3)
    if np.sum(x) > 0:
        i = i * x
    return np.sum(i)


def _assert_names_the_assignments(error, *texts):
    message = str(error.value)
    assert "test_jit_join_refusals.py:" in message
    for text in texts:
        assert text in message
    assert "without jit" in message


@pytest.mark.parametrize("transform", ["jit", "jit_grad", "jit_vmap"])
def test_number_on_one_path_array_on_the_other_is_refused_at_its_assignments(transform):
    assert number_or_array(X, 0.7) == pytest.approx(np.sum(X * 2.0 * 0.7))
    assert number_or_array(-X, 0.7) == pytest.approx(1.05)   # eagerly both paths run
    f = {"jit": tx.jit(number_or_array), "jit_grad": tx.jit(tx.grad(number_or_array)),
         "jit_vmap": tx.jit(tx.vmap(number_or_array, in_axes=(0, None)))}[transform]
    x = np.stack([X, -X]) if transform == "jit_vmap" else X
    with pytest.raises(tx.TransformError) as error:
        f(x, 0.7)
    _assert_names_the_assignments(error, "'a' holds 1-d arrays and numbers on different paths",
                                  "a = x * 2.0", "a = 1.5", "np.full")


@pytest.mark.parametrize("transform", ["jit", "jit_vmap"])
def test_integers_on_one_path_floats_on_the_other_are_refused(transform):
    assert ints_or_floats(-X).dtype == np.int64      # the path that keeps integers
    f = tx.jit(ints_or_floats) if transform == "jit" else tx.jit(tx.vmap(ints_or_floats))
    x = np.stack([-X, -X]) if transform == "jit_vmap" else -X
    with pytest.raises(tx.TransformError) as error:
        f(x)
    _assert_names_the_assignments(error, "'i' holds int64 arrays and float64 arrays on different paths",
                                  "i = np.arange(3)", "i = i * x", "np.arange(3.0)")
