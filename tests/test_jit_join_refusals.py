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


# Numbers of two types at an ``if``: Numba unifies them without a word (an
# int and a float become a float; float32 and float64 become float64), so
# the compiled function would return another dtype than NumPy's on one path.
# Refused at the user's assignments (numba_stage/joins.py), also when the
# signature comes back from Numba's disk cache (a second call).

def int_or_float(x):
    a = 2
    if x[0] > 0:
        a = x[0] * 1.5
    return a


def float32_or_float64(x, y):
    # fuzz seed 98064 (jit, jit_vmap), shrunk: float32 eagerly on the else path
    y = y - 1.43
    if y < -0.84:
        y = np.log(1.0 + np.arctan(-0.78) * np.arctan(-0.78))    # np.float64
    else:
        return -y
    return y


def test_int_on_one_path_float_on_the_other_is_refused_not_widened():
    assert type(int_or_float(-X)) is int              # eagerly the int path keeps its int
    f = tx.jit(int_or_float)
    for _ in range(2):
        with pytest.raises(tx.TransformError) as error:
            f(-X)
        _assert_names_the_assignments(error, "'a' holds int64 numbers and float64 numbers",
                                      "a = 2", "a = x[0] * 1.5")


def test_float32_on_one_path_float64_on_the_other_is_refused_not_widened():
    x32, y32 = X.astype(np.float32), np.array(1.475, dtype=np.float32)
    assert float32_or_float64(x32, y32).dtype == np.float32
    f = tx.jit(float32_or_float64)
    with pytest.raises(tx.TransformError) as error:
        f(x32, y32)
    _assert_names_the_assignments(error, "holds float32 numbers and float64 numbers")
    # float64 arguments: one dtype on both paths, compiled as it is
    y64 = np.array(1.475)
    got = f(X, y64)
    assert np.result_type(got) == np.float64 and got == float32_or_float64(X, y64)


def number_then_arrays_in_a_loop(x):
    acc = 0
    for i in range(x.shape[0]):
        acc = acc + x * x[i]
    return acc


def test_a_loop_carry_started_as_a_number_that_becomes_an_array_is_refused():
    # float32: the start is spelled weak_number(0) (weak_scalars), still refused as such
    with pytest.raises(tx.TransformError) as error:
        tx.jit(number_then_arrays_in_a_loop)(X.astype(np.float32))
    _assert_names_the_assignments(error, "'acc' holds 1-d arrays and numbers", "acc = 0")
