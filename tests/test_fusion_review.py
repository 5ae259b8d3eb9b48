"""Review of elementwise fusion (numba_stage.fusion / fused): programs
whose fused kernels once gave another result than the statements they
replace.  Each is compared with eager NumPy (the untransformed function)
and with the same jit compiled without fusion (``fuse = False``)."""
import numba
import numpy as np

import tangent_x as tx
from tangent_x.numba_stage.fused import _Fused, elementwise


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
    f = _Fused(nested_division, False)
    assert f.written == ["c = a * b"] and f.written_result == "(c / b) ** 2"
    assert "power" in f.result and "true_divide" in f.result
