"""Under jit, results have the dtypes NumPy gives eagerly: Python numbers
next to narrow arrays are weak (NEP 50; numba_stage/weak_scalars.py), and
narrow scalar results come back as NumPy scalars of their type."""
import numpy as np
import pytest

import tangent_x as tx


def affine_tanh(x):
    y = np.tanh(x) * 0.5 + 1.0
    return np.sum(y ** 2)


def relu_mix(x):
    return np.maximum(x, 0.0) * 2.0 + np.where(x > 0, x, 0.1) - np.clip(x, -0.5, 0.5)


def one_minus_square(x):
    return 1.0 - x * x / 3


def scalar_chain(x):
    s = np.sum(x) * 0.25
    return s + 1.0


def integer_arithmetic(i):
    return (i * 3 + 1) // 2 - i.shape[0]


def mixed(x, y):
    return x * 0.5 + y


def mask_scale(x):
    return 2.0 * (x > 0) + x * 0.1


# A loop carry started as a Python number (weak: float32 once the loop adds
# a float32).  Compiled, Numba joined the int64 start with the loop's
# float32 as float64 (weak_scalars._weaken_loop_starts).

def accumulate_items(x):
    s = 0
    for v in x:
        s = s + v * 0.5
    return s


CASES = [
    (accumulate_items, (np.linspace(-1, 1, 5, dtype=np.float32),)),
    (affine_tanh, (np.linspace(-1, 1, 5, dtype=np.float32),)),
    (affine_tanh, (np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),)),
    (relu_mix, (np.linspace(-1, 1, 7, dtype=np.float32),)),
    (one_minus_square, (np.linspace(-1, 1, 4, dtype=np.float32),)),
    (one_minus_square, (np.linspace(-1, 1, 4).astype(np.complex64),)),
    (scalar_chain, (np.linspace(-1, 1, 4, dtype=np.float32),)),
    (integer_arithmetic, (np.arange(5, dtype=np.int32),)),
    (integer_arithmetic, (np.arange(5, dtype=np.int16),)),
    (mixed, (np.ones(3, np.float32), np.ones(3))),          # float64 wins
    (mixed, (np.ones(3, np.float32), np.ones(3, np.float32))),
    (mask_scale, (np.linspace(-1, 1, 5, dtype=np.float32),)),
]


def _dtype(value):
    return np.asarray(value).dtype, type(value)


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_jit_gives_numpys_dtypes(fn, args):
    eager = fn(*args)
    jitted = tx.jit(fn)(*args)
    assert _dtype(jitted) == _dtype(eager)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_jit_grad_of_float32_keeps_float32(transform):
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    eager = getattr(tx, transform)(affine_tanh)(x)
    jitted = tx.jit(getattr(tx, transform)(affine_tanh))(x)
    for a, b in zip(tx.tree_util.tree_leaves(jitted), tx.tree_util.tree_leaves(eager)):
        assert _dtype(a) == _dtype(b)
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_float32_arithmetic_stays_float32_inside_the_compiled_code():
    """Not only cast at the end: the compiled code computes in float32."""
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    jitted = tx.jit(one_minus_square)
    jitted(x)
    text = tx.jit(one_minus_square).numba_source(x)
    assert "weak_scalar(1.0, " in text
    assert "weak_scalar" not in tx.jit(one_minus_square).numba_source(x.astype(np.float64))


def test_fast_path_casts_scalars_too():
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    jitted = tx.jit(scalar_chain)
    first, second = jitted(x), jitted(x)          # the second call takes the fast path
    assert type(first) is type(second) is np.float32


# --- names holding Python numbers are weak too ----------------------------------
# A ``range`` counter and a name assigned only numbers and arithmetic among
# them hold Python numbers in the source, so NumPy keeps float32 next to
# them (fuzz seed 66: ``acc = acc + 0.1 * i`` with a float32 ``acc``).

def counter_times_float(x):
    acc = x * 1.0
    for i in range(3):
        acc = acc + 0.1 * i
        acc = 0.7 * acc + 0.3 * np.tanh(acc)
    return acc * acc


def doubling_while(x):
    s = 1.0
    while s < np.sum(np.abs(x)) * 3:
        s = s * 2.0
    return s * x + np.sum(x)


def counter_power(x):
    out = x
    for k in range(1, 3):
        out = out + x ** k / (k + 1)
    return np.sum(out * out)


WEAK_NAME_CASES = [counter_times_float, doubling_while, counter_power]
F32_BATCH = np.linspace(-1.5, 1.5, 12, dtype=np.float32).reshape(4, 3)


def _same_leaves(got, want, rtol=2e-6):
    got_leaves = tx.tree_util.tree_leaves(got)
    want_leaves = tx.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("fn", WEAK_NAME_CASES, ids=lambda f: f.__name__)
def test_jit_keeps_float32_next_to_names_holding_python_numbers(fn):
    x = F32_BATCH[1]
    _same_leaves(tx.jit(fn)(x), fn(x))


@pytest.mark.parametrize("method", ["vectorize", "loop"])
@pytest.mark.parametrize("fn", WEAK_NAME_CASES, ids=lambda f: f.__name__)
def test_jit_vmap_keeps_float32_as_a_loop_over_examples(fn, method):
    want = np.stack([np.asarray(fn(x)) for x in F32_BATCH])
    _same_leaves(tx.jit(tx.vmap(fn, method=method))(F32_BATCH), want)


@pytest.mark.parametrize("fn", [counter_times_float, counter_power],
                         ids=lambda f: f.__name__)
def test_jit_grad_keeps_float32_as_eager_grad(fn):
    def loss(x):
        return np.sum(fn(x))
    x = F32_BATCH[2]
    eager = tx.grad(loss)(x)
    assert eager.dtype == np.float32
    _same_leaves(tx.jit(tx.grad(loss))(x), eager, rtol=1e-5)


# --- a variable whose arrays NumPy gives two dtypes ------------------------------
# ``acc`` is float32 before the loop and float64 once a float64 array meets it
# in the loop (fuzz seeds 170, 186): Numba types a variable once and refused
# it ("Cannot unify array(float32, ...) and array(float64, ...)"); now every
# assignment of it is cast to the common dtype, the one NumPy ends with.

def grows_in_loop(x):
    acc = x - (-0.27)
    for i in range(3):
        c = np.ones(3) * 0.5
        acc = 0.7 * acc + 0.3 * (x * c)
    return acc * 2.0


def test_jit_widens_a_variable_whose_dtype_grows_in_a_loop():
    x = F32_BATCH[1]
    jitted = tx.jit(grows_in_loop)
    _same_leaves(jitted(x), grows_in_loop(x), rtol=1e-5)
    assert "widen_dtype(" in jitted.numba_source()


def test_jit_grad_of_a_widened_variable_as_eager_grad():
    def loss(x):
        return np.sum(np.sin(grows_in_loop(x)))
    x = F32_BATCH[2]
    eager = tx.grad(loss)(x)
    assert eager.dtype == np.float32
    _same_leaves(tx.jit(tx.grad(loss))(x), eager, rtol=1e-5)


@pytest.mark.parametrize("method", ["vectorize", "loop"])
def test_jit_vmap_of_a_widened_variable_as_a_loop_over_examples(method):
    want = np.stack([grows_in_loop(x) for x in F32_BATCH])
    _same_leaves(tx.jit(tx.vmap(grows_in_loop, method=method))(F32_BATCH), want, rtol=1e-5)


# --- vmap's lanes of a Python number under jit -----------------------------------
# ``acc = 0.0`` before ``acc = acc + np.sum(x) * 0.5``: vectorised code gives
# the carry its batch axis with ``broadcast_lanes(0.0, n)``, eagerly
# ``lanes.WeakLanes`` (float32 once a float32 sum meets it).  Compiled, the
# lanes were a float64 array and the carry stayed float64.

def accumulate_sum(x):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum(x) * 0.5
    return acc


def accumulate_int(x):
    n = 0
    for i in range(3):
        n = n + np.sum(x)
    return n


@pytest.mark.parametrize("method", ["vectorize", "loop"])
@pytest.mark.parametrize("fn", [accumulate_sum, accumulate_int], ids=lambda f: f.__name__)
def test_jit_vmap_of_a_carry_starting_as_a_python_number(fn, method):
    want = np.stack([np.asarray(fn(x)) for x in F32_BATCH])
    assert want.dtype == np.float32
    jitted = tx.jit(tx.vmap(fn, method=method))
    _same_leaves(jitted(F32_BATCH), want)
    if method == "vectorize":
        assert jitted.strategy(F32_BATCH) == "batched"
        assert "weak_scalar(broadcast_lanes(" in jitted.numba_source()


# --- a shared 0-d argument in the compiled loop over examples -------------------
# Jitted gives a 0-d array to compiled code as the number it holds; the
# loop's driver passed it on as a 0-d array, so the example's code (compiled
# for the number) met an array where a loop carried its number: "Cannot
# unify array(float32, 0d, C) and float32" (fuzz seed 219).

def carried_scalar(x, y):
    for k in range(2):
        x = 0.7 * x + 0.3 * np.cos(x)
    return x * y


@pytest.mark.parametrize("method", ["vectorize", "loop"])
def test_jit_vmap_with_a_shared_0d_argument_as_a_loop_over_examples(method):
    x = np.asarray(0.4, np.float32)
    ys = F32_BATCH[:, :2]
    want = np.stack([carried_scalar(x, y) for y in ys])
    assert want.dtype == np.float32
    got = tx.jit(tx.vmap(carried_scalar, in_axes=(None, 0), method=method))(x, ys)
    _same_leaves(got, want)


# --- a Python-number carry scaled by a Python number in a loop ----------------
# ``k = 0.0`` then ``k = 0.5 * k + np.sum(t)`` over float32 ``t``: in NumPy
# ``0.5 * k`` of two Python numbers stays a Python number, so ``k`` is
# float32 after the first turn.  Compiled, ``weak_scalar(0.5, k)`` of the
# weak start was a float64 and the carry widened to float64 (fuzz seed
# 264, a loop over a list, which the specialiser does not unroll).

def decayed_sum_over_list(x):
    items = []
    for i in range(3):
        items.append(x * (1.0 + i))
    k = 0.0
    for t in items:
        k = 0.5 * k + np.sum(t)
    return k


def decayed_sum_while(x):
    k = 0.0
    i = 0
    while i < x.shape[0]:
        k = 0.5 * k - 2.0 * k + np.sum(x[i])
        i = i + 1
    return k


@pytest.mark.parametrize("fn", [decayed_sum_over_list, decayed_sum_while],
                         ids=lambda f: f.__name__)
# jit(vmap) of decayed_sum_while is still float64 (open: tests/fuzz_regressions/open/README.md)
def test_jit_keeps_a_python_number_carry_weak_when_scaled_by_a_number(fn):
    x = np.linspace(-1.0, 2.0, 4).astype(np.float32)
    want = fn(x)
    assert np.asarray(want).dtype == np.float32
    got = tx.jit(fn)(x)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if fn is decayed_sum_over_list:
        want_batch = np.stack([np.asarray(fn(row)) for row in F32_BATCH])
        _same_leaves(tx.jit(tx.vmap(fn))(F32_BATCH), want_batch, rtol=1e-5)


def small_int_arithmetic(x):
    return (np.exp(x) * 2, np.tanh(x) + np.log1p(x), np.arctan2(x, x + 1),
            x / 255, x / (x + 1), np.sqrt(x / 3))


def small_int_division(x):
    return x / 255, x / (x + 1), np.sqrt(x / 3)


@pytest.mark.parametrize("dtype,fn", [(np.int16, small_int_arithmetic),
                                      (np.uint16, small_int_arithmetic),
                                      (np.uint8, small_int_division)])
def test_integers_narrower_than_32_bits_in_float_functions_as_numpy(dtype, fn):
    """NumPy computes float-only ufuncs of int16 in float32 and divides
    integers in float64; Numba took float64 for np.exp(int16) and float32
    for uint8 / uint8 (narrow_ints).  uint8 in a float-only ufunc is
    float16 in NumPy: refused, located (below)."""
    x = (np.arange(12).reshape(3, 4) * 7 % 50 + 1).astype(dtype)
    per_example = [np.stack(outs) for outs in zip(*[fn(row) for row in x])]
    for got, want in zip(tx.jit(fn)(x[0]), fn(x[0])):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-7 if want.dtype == np.float32 else 1e-15)
    for got, want in zip(tx.jit(tx.vmap(fn))(x), per_example):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-7 if want.dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
def test_float16_results_of_small_integers_are_refused_under_jit(dtype):
    def fn(x):
        return np.exp(x) * 2
    x = np.arange(3).astype(dtype)
    assert fn(x).dtype == np.float16        # NumPy's
    with pytest.raises(tx.TransformError) as error:
        tx.jit(fn)(x)
    message = str(error.value)
    assert "test_jit_dtypes.py:" in message and "float16" in message
    assert "astype(np.float32)" in message
