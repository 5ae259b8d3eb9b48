"""Under jit, a variable that NumPy gives two kinds of value on two paths.

Compiled code gives a variable one type.  Where an ``if`` leaves a number
in a variable on one path and an array on the other, or integers on one
path and floats on the other, no one type follows NumPy on every path
(making the number an array changes ``np.sum(a)``; making the integers
floats changes the dtype of what the integer path returns), so jit,
jit(grad) and jit(vmap) refuse it with a located error naming the user's
assignments and what to write, never a value of another dtype.  Each
expected value is the plain function's."""
import glob
import os

import numpy as np
import pytest

import tangent_x as tx
from tangent_x.cachedir import cache_dir

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


def test_float32_on_one_path_float64_on_the_other_returned_in_its_path_dtype():
    # the join shows only at the return: compiled with the path's dtype kept
    # beside the result (numba_stage.result_dtypes), not widened, not refused
    x32 = X.astype(np.float32)
    f = tx.jit(float32_or_float64)
    for y in (np.array(1.475, dtype=np.float32), np.array(-1.0, dtype=np.float32)):
        want = float32_or_float64(x32, y)
        for _ in range(2):
            got = f(x32, y)
            assert np.result_type(got) == np.result_type(want) and got == want
    assert np.result_type(f(x32, np.array(1.475, dtype=np.float32))) == np.float32
    # float64 arguments: one dtype on both paths, compiled as it is
    y64 = np.array(1.475)
    got = f(X, y64)
    assert np.result_type(got) == np.float64 and got == float32_or_float64(X, y64)


def number_then_arrays_in_a_loop(x):
    acc = 0
    for i in range(x.shape[0]):
        acc = acc + x * x[i]
    return acc


def test_a_loop_carry_started_as_a_number_that_becomes_an_array_runs_its_first_turn_apart():
    """Numba refuses the join of the number and the arrays: the loop's
    first iteration then runs before the loop (Loops.peel), as Python runs
    it, so the loop carries arrays; a loop with no iteration, whose NumPy
    result is the number, is refused at the user's line when it runs."""
    # float32: the start is spelled weak_number(0) (weak_scalars)
    for x in (X, X.astype(np.float32)):
        got, want = tx.jit(number_then_arrays_in_a_loop)(x), number_then_arrays_in_a_loop(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(tx.TransformError) as error:
        tx.jit(number_then_arrays_in_a_loop)(X[:0])
    _assert_names_the_assignments(error, "ran no iteration")


# Only where the widening shows: a join of numbers of two types is followed
# through Numba's typed IR (numba_stage/joins.py).  Where every reader
# computes NumPy's numbers in NumPy's dtype (``x * k`` with a float64 ``x``,
# ``k // 2`` then times a float64, a comparison, ``int(k)``, a float32
# promoted by a float64 array) the join compiles; where the joined type
# reaches a result (returned, float32 arithmetic done in float64) it is
# refused at the user's assignments, naming the line where it shows.

def harmless_joins(x, y32):
    k = 1
    j = 2
    if x[0] > 0:
        k = 2.5
        j = 3.5
    z = y32 * np.float32(2.0)
    if x[1] > 0:
        z = x[1] * 1.0
    a = x * k
    b = x * (j // 2)
    c = x[int(k)]
    d = x * z
    if j > 2.5:
        e = x * 2.0
    else:
        e = x * 3.0
    return a, b, c, d, e


def harmless_loss(x, y32):
    a, b, c, d, e = harmless_joins(x, y32)
    return np.sum(a * b) + c * np.sum(d * e)


PATHS = [X, -X, X * np.array([1.0, -1.0, 1.0]), X * np.array([-1.0, 1.0, 1.0])]


def _same_dtypes_and_values(got, want):
    for g, w in zip(got, want):
        assert np.result_type(g) == np.result_type(w)
        np.testing.assert_array_equal(g, w)


def test_joins_whose_widening_does_not_show_compile_and_equal_eager():
    f = tx.jit(harmless_joins)
    y32 = np.float32(0.75)
    for x in PATHS:
        _same_dtypes_and_values(f(x, y32), harmless_joins(x, y32))
    # a second wrapper: the signature comes back from Numba's disk cache,
    # its verdict from beside the module
    f = tx.jit(harmless_joins)
    _same_dtypes_and_values(f(PATHS[2], y32), harmless_joins(PATHS[2], y32))


def int_or_float_into_a_ufunc(x):
    w = np.tanh(1 if x[0] > 0 else 0.5) + np.tanh(2 if x[1] > 0 else x[2])
    return w * x


def int_or_float_in_a_loop(x):
    acc = np.cos(1.0)
    out = x * 0.0
    for i in range(2):
        w = np.tanh(i if x[0] > 0 else acc)
        out = out + w * x
        acc = 0.7 * acc + 0.3 * x[1]
    return out


@pytest.mark.parametrize("fn", [int_or_float_into_a_ufunc, int_or_float_in_a_loop],
                         ids=lambda f: f.__name__)
def test_an_int_or_float_join_read_by_a_compiled_ufunc_does_not_show(fn):
    """``np.tanh`` of an int on one path and a float on the other gives
    float64 either way, as Numba's widened float does; compiled, np.tanh is
    ``vmath``'s kernel, which ``joins`` now reads as the ufunc (fuzz seed
    631152 was refused in every jit mode)."""
    f = tx.jit(fn)
    for x in PATHS:        # (vmath's tanh is within an ulp of NumPy's)
        assert f(x).dtype == fn(x).dtype
        np.testing.assert_allclose(f(x), fn(x), rtol=1e-15, atol=1e-16)
    g = tx.jit(tx.grad(lambda x: np.sum(fn(x))))
    for x in PATHS:
        np.testing.assert_allclose(g(x), tx.grad(lambda x: np.sum(fn(x)))(x), rtol=1e-13)


def test_jit_grad_through_joins_whose_widening_does_not_show():
    y32 = np.float32(0.75)
    f, g = tx.jit(tx.grad(harmless_loss)), tx.grad(harmless_loss)
    for x in PATHS:
        got, want = f(x, y32), g(x, y32)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-14)
        # and the derivative itself: central differences
        h = 1e-6
        for i in range(3):
            e = np.zeros(3)
            e[i] = h
            fd = (harmless_loss(x + e, y32) - harmless_loss(x - e, y32)) / (2 * h)
            assert got[i] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def floor_divided(x):
    k = 2
    if x[0] > 0:
        k = 3.5
    return k // 2          # eagerly an int on the path of k = 2


def float32_widened(x, y32):
    z = y32 * np.float32(2.0)
    if x[0] > 0:
        z = x[1] * 1.0
    return y32 * z         # eagerly float32 times float32 on the path of y32


def test_float32_arithmetic_after_a_join_runs_each_path_as_its_own():
    # each path's code after the if is its own (specialize/splitting.py):
    # y32 * z in float32 on the first path, as NumPy computes it
    f = tx.jit(float32_widened)
    for x in (-X, X):
        want = float32_widened(x, np.float32(0.75))
        got = f(x, np.float32(0.75))
        assert np.result_type(got) == np.result_type(want)
        assert got == want
    assert np.result_type(f(-X, np.float32(0.75))) == np.float32


@pytest.mark.parametrize("fn, args, assigned, shown", [
    (floor_divided, (-X,), ("k = 2", "k = 3.5"), "return k // 2")], ids=["int_result"])
def test_joins_whose_widening_shows_are_refused_where_they_show(fn, args, assigned, shown):
    want = fn(*args)
    assert np.result_type(want) in (np.int64, np.float32)      # what jit would not give
    for _ in range(2):         # the second: a new wrapper, the signature from the disk cache
        with pytest.raises(tx.TransformError) as error:
            tx.jit(fn)(*args)
        _assert_names_the_assignments(error, "numbers and float64 numbers", *assigned)
        assert "would change what test_jit_join_refusals.py:" in str(error.value)
        assert shown in str(error.value)
    if fn is floor_divided:
        # the verdict kept beside the cached module gone: typed again, uncached
        kept = glob.glob(os.path.join(cache_dir(), "floor_divided_numba_*.joins-*.json"))
        assert kept
        for path in kept:
            os.remove(path)
        with pytest.raises(tx.TransformError) as error:
            tx.jit(fn)(*args)
        _assert_names_the_assignments(error, "numbers and float64 numbers", *assigned)


def test_a_join_that_shows_in_each_example_of_jit_vmap_splits_its_paths():
    # fuzz seed 98064 (jit_vmap): the loop over examples calls the example's
    # compiled code, whose joins are checked as jit's; refused until its
    # paths were split (session 20), now each example computes in its own
    # dtype: float32 where every example takes the float32 path
    y32 = np.float32(0.75)
    for xs in (np.stack([-X, -X]), np.stack([-X, X])):
        want = np.stack([float32_widened(x, y32) for x in xs])
        got = tx.jit(tx.vmap(float32_widened, in_axes=(0, None)))(xs, y32)
        assert got.dtype == want.dtype == tx.vmap(float32_widened, in_axes=(0, None))(
            xs, y32).dtype
        np.testing.assert_array_equal(got, want)
    assert want.dtype == np.float64 and got.dtype == np.float64


def float32_array_or_float64_array(x):
    if np.sum(x) > 0.5:
        return np.cos(x)                 # float32 for a float32 x
    return np.cos(x) * np.array([0.5, -0.25, 1.0])       # float64


def float32_array_or_float64_array_then_float64(x, w):
    if np.sum(x) > 0.5:
        a = np.cos(x)
    else:
        a = np.cos(x) * np.array([0.5, -0.25, 1.0])
    return a * w                         # float64 either way (w is float64)


def float32_array_or_float64_array_then_sin(x):
    if np.sum(x) > 0.5:
        a = np.cos(x)
    else:
        a = np.cos(x) * np.array([0.5, -0.25, 1.0])
    return np.sin(a)                     # in float32 on the first path


@pytest.mark.parametrize("transform", ["jit", "jit_vmap"])
def test_float32_and_float64_arrays_at_an_if_computed_on_per_path(transform):
    """Numba refuses a variable holding float32 arrays on one path and
    float64 arrays on the other; cast to float64 (``widen_dtype``), NumPy's
    float32 path would be computed on in float64 (``np.sin``), which is
    refused (fuzz seed 300053 gave float64 for NumPy's float32); the paths
    are then split (specialize/splitting.py), in jit and in each example of
    jit(vmap)'s loop: each path computes in its own dtype."""
    x32 = X.astype(np.float32)
    f = {"jit": tx.jit(float32_array_or_float64_array_then_sin),
         "jit_vmap": tx.jit(tx.vmap(float32_array_or_float64_array_then_sin,
                                    method="loop"))}[transform]
    for x in (x32, -x32):
        arg = np.stack([x, x]) if transform == "jit_vmap" else x
        want = float32_array_or_float64_array_then_sin(x)
        got = f(arg)
        got = got[1] if transform == "jit_vmap" else got
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-15)


def test_float32_and_float64_arrays_at_an_if_returned_in_the_path_dtype():
    # jit alone returns each path's array in that path's dtype (result_dtypes)
    x32 = X.astype(np.float32)
    f = tx.jit(float32_array_or_float64_array)
    for x in (x32, -x32):
        want = float32_array_or_float64_array(x)
        for _ in range(2):
            got = f(x)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert f(x32).dtype == np.float32


def test_float32_and_float64_arrays_at_an_if_compile_where_the_cast_does_not_show():
    x32, w = X.astype(np.float32), np.array([1.5, 2.0, -1.0])
    f = tx.jit(float32_array_or_float64_array_then_float64)
    for x in (x32, -x32):
        want = float32_array_or_float64_array_then_float64(x, w)
        got = f(x, w)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-15)


def draws_from_numpy(x):
    return x + np.random.normal(0.0, 1.0, 3)


_RNG = np.random.default_rng(0)


def draws_from_a_generator(x):
    return x + _RNG.normal(0.0, 1.0, 3)


@pytest.mark.parametrize("fn", [draws_from_numpy, draws_from_a_generator])
def test_numpy_random_under_jit_is_refused_not_folded(fn):
    """A draw from NumPy's random state has no compiled form that shares
    the state: folding it when compiling gave the same numbers at every
    call, where eager code draws new ones."""
    first, second = fn(np.zeros(3)), fn(np.zeros(3))
    assert not np.array_equal(first, second)
    with pytest.raises(tx.TransformError) as error:
        tx.jit(fn)(np.zeros(3))
    message = str(error.value)
    assert "test_jit_join_refusals.py:" in message and "random" in message
    assert "tangent_x.random" in message
