"""Python numbers stay Python numbers under every transform.

``math.sqrt(d)``, ``round(t)``, ``math.floor(t)``, ``float(s)`` and ``int(s)``
give Python numbers, which NumPy types as weak (NEP 50): ``x32 /
math.sqrt(2.0)`` is float32, and ``x[math.floor(t)]`` an index.  tangent_x
computes them with NumPy's functions, whose results are NumPy float64
scalars (strong: float64 results), so each is made the Python number again;
under vmap a batched ``float(s)`` is the lanes of Python numbers
(``number_lanes``), weak lane by lane.  The references are the
untransformed function, a per-example loop and central differences.
"""
import math

import numpy as np
import pytest

import tangent_x as tx
from test_jit_dtypes import decayed_sum_while as carry_scaled   # k = 0.5 * k - 2.0 * k + ...


def scaled(x):
    return x / math.sqrt(2.0)


def rounded(x):
    return x * round(2.6)


def floor_index(x):
    return x[math.floor(1.7)] * x


def abs_number(x):
    return x * abs(-2.0) + pow(2, 3) * x


def float_of_sum(x):
    return x * float(np.sqrt(np.sum(x * x)))


def int_of_sum(x):
    return x * int(np.floor(np.sum(x)))


def math_of_array_value(x):
    return x * math.exp(float(np.sum(x)) * 0.1) + math.log1p(float(x[0] * x[0]))


def log_base(x):
    """math.log(x, base) (np.log's second argument is its output array: a
    TypeError from inside generated code before)."""
    return x * math.log(8.0, 2.0) + math.log(float(x[0] * x[0]) + 2.0, 3.0) * x


FUNCTIONS = [scaled, rounded, floor_index, abs_number, float_of_sum, int_of_sum,
             math_of_array_value, log_base]
X32 = np.array([[0.3, 1.2, 0.7], [1.1, -0.4, 0.9]], dtype=np.float32)


def _check(out, ref):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_value_and_dtype_eager_transforms(fn):
    x = X32[0]
    ref = fn(x)
    _check(tx.jvp(fn, (x,), (np.ones_like(x),))[0], ref)
    _check(tx.vjp(fn, x)[0], ref)
    per_example = np.stack([fn(row) for row in X32])
    _check(tx.vmap(fn)(X32), per_example)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_value_and_dtype_jit(fn):
    _check(tx.jit(fn)(X32[0]), fn(X32[0]))
    _check(tx.jit(tx.vmap(fn))(X32), np.stack([fn(row) for row in X32]))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_against_differences(fn):
    x = np.array([0.3, 1.2, 0.7])

    def loss(v):
        return np.sum(np.sin(fn(v)))
    g = tx.grad(loss)(x)
    eye = np.eye(3) * 1e-6
    fd = np.array([(loss(x + e) - loss(x - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
    per_example = np.stack([tx.grad(loss)(row) for row in X32.astype(np.float64)])
    np.testing.assert_allclose(tx.vmap(tx.grad(loss))(X32.astype(np.float64)), per_example,
                               rtol=1e-12)


def test_float32_gradient_of_lanes_stays_float32():
    """jit(vmap(grad)) seeds its cotangent with the lanes of 1.0: weak, so
    a float32 input gives a float32 gradient (it gave float64)."""
    def loss(x):
        return np.sum(np.sin(x) * x)
    out = tx.jit(tx.vmap(tx.grad(loss)))(X32)
    ref = np.stack([tx.grad(loss)(row) for row in X32])
    _check(out, ref)


def carry_sliced(x):
    k = 0.0
    i = 0
    while i < x.shape[0]:
        k = 0.5 * k - 2.0 * k + np.sum(x[i:])
        i = i + 1
    return k


@pytest.mark.parametrize("fn", [carry_scaled, carry_sliced], ids=lambda f: f.__name__)
def test_while_carry_of_a_python_number_under_jit_vmap(fn):
    """A carry started as ``0.0`` and scaled by numbers in a while loop:
    arithmetic among the lanes of Python numbers stays weak, so the float32
    sum decides its dtype (jit(vmap) gave float64); reading ``x[i:]`` in it
    compiled to ``v = i:``, a SyntaxError (the slice was bound to a name)."""
    per_example = np.array([fn(row) for row in X32])
    _check(tx.jit(tx.vmap(fn))(X32), per_example)
    _check(tx.vmap(fn)(X32), per_example)
    _check(tx.jit(fn)(X32[0]), fn(X32[0]))


def numbers_kept_in_a_list(x):
    pairs = []
    for i in range(3):
        pairs.append((x * i, i * 0.5))
    a, b = pairs[2]
    return np.sum(a) * b + pairs[1][1] * x


def test_python_numbers_kept_in_a_list_stay_weak_under_jit():
    """A Python number appended to a list and read back is still a Python
    number: next to float32 values it is float32 (compiled, the list held
    float64s, strong: the result was a float64)."""
    x = X32[0]
    _check(tx.jit(numbers_kept_in_a_list)(x), numbers_kept_in_a_list(x))
    _check(tx.jit(tx.vmap(numbers_kept_in_a_list))(X32),
           np.stack([numbers_kept_in_a_list(row) for row in X32]))


def counter_from_a_range_with_a_break(x):
    for i in range(3):
        x = x + 0.1 * i                 # i: a Python int, weak
        if np.max(x) > 0.5:
            break
    return x


def test_vmap_keeps_a_range_counter_weak_lane_by_lane():
    """Fuzz seed 410610: the break makes the loop a ``while`` whose lanes
    stop at different turns, its counter read lane by lane (``map_lanes``);
    those lanes held int64, strong, so ``x32 + 0.1 * i`` became float64.
    Lanes of Python numbers are now ``WeakLanes``."""
    xs = np.array([[0.1, 0.2], [0.6, 0.1], [-0.3, 0.2]], dtype=np.float32)
    want = np.stack([counter_from_a_range_with_a_break(x) for x in xs])
    got = tx.vmap(counter_from_a_range_with_a_break)(xs)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def changes_a_0d_array_in_place(x, z):
    w = np.tanh(x)                      # a NumPy float32 scalar, then float64
    for _ in range(3):
        z -= w                          # z stays a float32 0-d array
        w = w + 0.3 + 0.1 * np.sin(np.float64(0.5))
    return z


def test_an_in_place_change_keeps_a_0d_array_an_array_of_its_dtype():
    """Fuzz seed 410792: ``z_new = z - w`` of a 0-d array is a NumPy scalar,
    which the transformed code then rebound at the next ``z -= w`` (float64
    once ``w`` was): NumPy writes into the 0-d array, float32 throughout."""
    x, z = np.array(-0.65, dtype=np.float32), np.array(1.057, dtype=np.float32)
    want = changes_a_0d_array_in_place(x.copy(), z.copy())
    assert isinstance(want, np.ndarray) and want.dtype == np.float32
    for value in (tx.jvp(changes_a_0d_array_in_place, (x.copy(), z.copy()),
                         (np.ones_like(x), np.ones_like(z)))[0],
                  tx.value_and_grad(changes_a_0d_array_in_place, argnums=(0, 1))(
                      x.copy(), z.copy())[0]):
        assert np.asarray(value).dtype == np.float32
        np.testing.assert_allclose(value, want, rtol=1e-6)


def pairs_with_a_counter(x):
    pairs = []
    for i in range(2):
        pairs.append((x, i))            # the counter: a Python int
    return sum(np.sum(t[0]) - t[1] for t in pairs[::-1])


def test_vmap_keeps_a_counter_kept_beside_an_array_weak():
    """Fuzz seed 420508: a tuple of a batched array and a shared counter
    is given the batch (``finish_lanes``), which made the counter int64
    lanes, strong: ``np.sum(x32) - i`` became float64."""
    xs = np.array([[0.89, 1.37, 0.55], [0.1, 0.2, 0.3]], dtype=np.float32)
    want = np.stack([pairs_with_a_counter(x) for x in xs])
    got = tx.vmap(pairs_with_a_counter)(xs)
    assert type(got) is np.ndarray and got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def number_chosen_per_example_then_doubled(x, y):
    k = 0.5 if np.max(y) > 0.0 else 1.5        # a Python number, per example
    k += k                                      # rebound, as a number is
    n = 1 if np.max(y) > 0.0 else 2
    n += 0.5                                    # an int becomes a float
    return x[-1] + k + n


def test_op_assign_of_a_number_chosen_per_example_stays_a_weak_number():
    """Fuzz seed 430453 (after ``inplace_result`` began keeping 0-d arrays
    arrays): ``k += k`` of vmap's lanes of a Python number made them a
    plain float64 array, and ``x32[-1] + k`` float64; ``n += 0.5`` of int
    lanes would have been cast back to int.  Lanes of numbers are rebound."""
    xs = np.array([[0.98, -0.82, -0.03], [0.1, 0.2, 0.3]], dtype=np.float32)
    ys = np.array([[0.37, -0.36], [-0.2, -0.1]], dtype=np.float32)
    want = np.stack([number_chosen_per_example_then_doubled(x, y) for x, y in zip(xs, ys)])
    got = tx.vmap(number_chosen_per_example_then_doubled)(xs, ys)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def number_or_array_per_example(y):
    a = 0.5 if y > 0.0 else y          # a Python number, or the float32 value
    return 0.6 * y + 0.4 * a


def test_vmap_of_a_number_on_one_path_and_a_float32_on_the_other_stays_float32():
    """Fuzz seed 441852: ``select_lanes`` of lanes of a Python number and
    float32 lanes gave float64 (``np.where`` promotes); every example's
    code has float32 there."""
    ys = np.array([0.74, -0.3, 0.2], dtype=np.float32)
    want = np.stack([number_or_array_per_example(y) for y in ys])
    got = tx.vmap(number_or_array_per_example)(ys)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
