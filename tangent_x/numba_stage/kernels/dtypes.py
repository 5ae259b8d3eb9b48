"""NumPy's result dtype of operands given by their Numba types, and the
casts to it: what every implementation whose operands may differ in dtype
(float32 weights next to float64 biases, a float64 cotangent next to a
float32 operand, an integer array next to a float one) asks before it
calls a Numba function that needs one dtype (``np.dot``, ``@``) or that
promotes otherwise than NumPy (Numba types float32 times int64 as float32,
NumPy as float64)."""
import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .common import CACHED, is_array


def numpy_dtype(t):
    """The NumPy dtype of a value of Numba type ``t`` (an array's element
    type, or a number's own), or None for anything else."""
    item = t.dtype if is_array(t) else t
    if isinstance(item, (types.Number, types.Boolean)):
        return as_dtype(item)
    return None


def result_dtype(*ts):
    """``np.result_type`` of values of Numba types ``ts`` (numbers typed by
    Numba are NumPy scalars, i.e. strong: a Python number next to a narrow
    array was already made weak, see ``numba_stage.weak_scalars``), or None
    when one of them is not a number or an array of numbers."""
    dtypes = [numpy_dtype(t) for t in ts]
    if not dtypes or any(d is None for d in dtypes):
        return None
    return np.result_type(*dtypes)


def is_inexact(dtype):
    """Whether the NumPy ``dtype`` is a float or a complex one."""
    return dtype is not None and dtype.kind in "fc"


def needs_cast(t, dtype):
    """Whether a value of Numba type ``t`` is not already of ``dtype``."""
    return numpy_dtype(t) != dtype


def cast(x, dtype):
    """``x`` (an array or a number) as ``dtype``: itself when it has it."""
    if isinstance(x, np.ndarray):
        return x if x.dtype == dtype else x.astype(dtype)
    return np.dtype(dtype).type(x)


@overload(cast, jit_options=CACHED)
def _cast(x, dtype):
    target = getattr(dtype, "dtype", None) or getattr(dtype, "instance_type", None)
    if is_array(x):
        if x.dtype == target:
            return lambda x, dtype: x
        return lambda x, dtype: x.astype(dtype)
    if x == target:
        return lambda x, dtype: x
    return lambda x, dtype: dtype(x)


def integer_product(a, b):
    """``a @ b`` for integer or boolean arrays of one dtype, at most 2-d
    (Numba's ``np.dot`` and ``@`` take floats and complex numbers only):
    a loop, exact as NumPy's integer product is."""
    return np.matmul(a, b)


@register_jitable
def _product_2d(A, B, dtype):
    if A.shape[1] != B.shape[0]:
        raise ValueError("matmul: the operands' inner dimensions differ")
    out = np.zeros((A.shape[0], B.shape[1]), dtype)
    for i in range(A.shape[0]):
        for k in range(A.shape[1]):
            aik = A[i, k]
            for j in range(B.shape[1]):
                out[i, j] += aik * B[k, j]
    return out


@register_jitable
def _nonzero(x):
    return x != 0


@register_jitable
def _same(x):
    return x


@overload(integer_product, jit_options=CACHED)
def _integer_product(a, b):
    # booleans: a product of counts, nonzero where any term is (NumPy's or of ands)
    boolean = a.dtype == types.boolean
    work = np.int64 if boolean else as_dtype(a.dtype)
    finish = _nonzero if boolean else _same
    if a.ndim == 1 and b.ndim == 1:
        def impl(a, b):
            out = _product_2d(np.ascontiguousarray(a).reshape((1, a.shape[0])),
                              np.ascontiguousarray(b).reshape((b.shape[0], 1)), work)
            return finish(out[0, 0])
    elif a.ndim == 1:
        def impl(a, b):
            out = _product_2d(np.ascontiguousarray(a).reshape((1, a.shape[0])), b, work)
            return finish(out[0])
    elif b.ndim == 1:
        def impl(a, b):
            out = _product_2d(a, np.ascontiguousarray(b).reshape((b.shape[0], 1)), work)
            return finish(np.ascontiguousarray(out[:, 0]))
    else:
        def impl(a, b):
            return finish(_product_2d(a, b, work))
    return impl
