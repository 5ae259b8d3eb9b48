"""Review of elementwise fusion (numba_stage.fusion / fused): programs
whose fused kernels once gave another result than the statements they
replace.  Each is compared with eager NumPy (the untransformed function)
and with the same jit compiled without fusion (``fuse = False``)."""
import numba
import numpy as np

import tangent_x as tx
from tangent_x.numba_stage.fused import _Fused, elementwise
from tangent_x.numba_stage.numba_runtime import weak_scalar


def _unfused(f):
    j = tx.jit(f)
    j.fuse = False
    return j


def int_powers(x, y):
    a = x ** y
    b = a * a + x * y - y
    return b


def test_integer_powers_run_as_written_with_numpys_wraparound():
    """An integer raised to an integer power runs as written (fused.py):
    the statements' own ``x ** y``, whose int64 result wraps as NumPy's.
    The as-written statements were once read from the kernel's tree after
    ``/`` and ``**`` had been rewritten in it to the scalar ufuncs, and
    Numba's ``np.power`` of integer arrays goes through floats: 7 ** 63
    came out 2898552624600762368, NumPy's is 2898552624600762295."""
    for dtype in (np.int64, np.int32):
        x = np.arange(2, 8).astype(dtype)
        y = np.array([0, 1, 2, 3, 40, 63 if dtype == np.int64 else 31]).astype(dtype)
        compiled = tx.jit(int_powers)
        assert "@elementwise" in compiled.numba_source(x, y)
        want = int_powers(x, y)
        got = compiled(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, _unfused(int_powers)(x, y))


def nested_division(a, b):
    c = a * b
    return (c / b) ** 2


def test_the_statements_as_written_keep_their_operators():
    """``as_written`` is exactly the code before fusion: ``/`` and ``**``
    stay operators there (only the fused loop spells them as ufuncs)."""
    from numba import types
    f = _Fused(nested_division, False)
    assert f.written == ["c = a * b"] and f.written_result == "(c / b) ** 2"
    stmts, result = f._element_form((types.Array(types.float64, 1, "C"), types.float64))
    assert stmts == [f"c = {f.q}e0 * b"]
    assert result == f"{f.q}np.power({f.q}np.true_divide(c, b), 2)"


def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _mul(a, b):
    return a * b


def _div(a, b):
    return a / b


def _pow(a, b):
    return a ** b


def _negate(a, b):
    return -a + b


def test_the_fused_element_type_is_the_statements_type():
    """Wherever a kernel fuses, its element type is the dtype of the
    statements run on the arrays (what they compute without fusion): for
    every operation and pair of float arrays and numbers.  The shortcut for
    float arrays (type the numbers only) once held int64 numbers next to
    float32 arrays too, where Numba's arrays stay float32 and its numbers
    give float64."""
    from numba import types
    from tangent_x.numba_stage.fused import _infer
    numbers = [types.float32, types.float64, types.int64, types.int32]
    arrays = [types.Array(d, 1, "C") for d in (types.float32, types.float64, types.int64)]
    checked = 0
    for fn in (_add, _sub, _mul, _div, _pow, _negate):
        fused = _Fused(fn, False)
        for a in arrays:
            for b in numbers + arrays:
                for argtypes in ((a, b), (b, a)):
                    element = fused.fusable(argtypes)
                    if element is None:
                        continue
                    _, on_arrays = _infer(fn, argtypes)
                    assert element == on_arrays.dtype, (fn.__name__, argtypes)
                    checked += 1
    assert checked > 100


def count_scaled(x):
    n = int(np.sum(x > 0))
    y = x * x + x * n - 1.0
    return y


def test_an_int64_count_next_to_float32_keeps_float32():
    """``int(...)`` is a Python int, weak next to float32 (NumPy: float32);
    compiled it is an int64 number, with which Numba's arrays stay float32:
    the fused kernel gave float64."""
    x = np.linspace(-1.0, 2.0, 12, dtype=np.float32).reshape(3, 4)
    compiled = tx.jit(count_scaled)
    assert "@elementwise" in compiled.numba_source(x)
    got, want = compiled(x), count_scaled(x)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, _unfused(count_scaled)(x))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def divided_by_a_count(x, f):
    n = np.sum(x > 0)
    y = f / n
    return x * y + x * x


def test_arithmetic_of_numbers_alone_is_the_statements():
    """In the fused loop ``/`` and ``**`` run as NumPy's ufuncs on the
    elements of arrays (the arrays' own per-element loops), but an
    operation of numbers alone runs as written: ``np.true_divide`` of a
    float32 and an int64 is float32 where ``/`` (and NumPy's float32
    scalar over an int64 one) gives float64 -- the kernel once rounded
    ``f / n`` to float32, 3.41250001 where NumPy has 3.4125."""
    x = np.linspace(1.0, 2.0, 5)
    f = np.float32(1.0)
    compiled = tx.jit(divided_by_a_count)
    assert "@elementwise" in compiled.numba_source(x, f)
    got, want = compiled(x, f), divided_by_a_count(x, f)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_array_equal(got, _unfused(divided_by_a_count)(x, f))


def numbers_then_arrays(x, f, n):
    y = f / n
    z = n ** f
    return x * y + x / z


def test_numbers_alone_in_a_kernel_called_from_numba():
    """The same at the kernel's level, for ``/`` and ``**``: the fused map
    is the statements compiled as written."""
    from numba import types
    kernel = _Fused(numbers_then_arrays, False)
    argtypes = (types.Array(types.float64, 1, "C"), types.float32, types.int64)
    assert kernel.fusable(argtypes) == types.float64
    stmts, result = kernel._element_form(argtypes)
    assert stmts == ["y = f / n", "z = n ** f"]
    assert result == f"{kernel.q}e0 * y + {kernel.q}np.true_divide({kernel.q}e0, z)"
    fused = elementwise(numbers_then_arrays)
    run = numba.njit(lambda x, f, n: fused(x, f, n))
    x = np.linspace(1.0, 2.0, 7)
    got = run(x, np.float32(1.0), 3)
    want = numba.njit(numbers_then_arrays)(x, np.float32(1.0), 3)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def strong_lanes(acc, x):
    a = weak_scalar(acc, x) * x
    return a * a + a


def test_weak_scalar_of_a_strong_array_stays_strong():
    """``weak_scalar(acc, x)`` (a vmap carry that starts as the lanes of a
    Python number) is the array itself once ``acc`` is a strong array: a
    float64 ``acc`` times a float32 ``x`` is float64.  On one element the
    helper sees a number, which it casts to float32: the float-arrays
    shortcut (typing the numbers only) took that for the statements'
    type, and the kernel computed in float32."""
    fused = elementwise(strong_lanes)
    run = numba.njit(lambda acc, x: fused(acc, x))
    acc = np.linspace(0.1, 1.0, 5) / 3.0
    x = np.linspace(1.0, 2.0, 5).astype(np.float32)
    got, want = run(acc, x), numba.njit(strong_lanes)(acc, x)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, want)
