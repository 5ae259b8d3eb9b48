"""Products: ``dot``, ``inner`` and ``matmul`` (two float64 matrices in the
kernel of ``kernels.gemm``), the adjoints of the runtime's products, and the
accumulating forms ``acc += matmul_adjoint(...)`` written into an owned
accumulator.  Operands of two dtypes (float32 weights, float64 biases or
cotangents; integer arrays) are first cast to the dtype NumPy gives their
product (``_promoted``): Numba's products take one float dtype only."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime
from ..kernels.allocation import empty
from ..kernels.common import CACHED, is_array
from ..kernels.dtypes import cast, integer_product, is_inexact, needs_cast, result_dtype
from ..kernels.gemm import kernel_product, product, product_lhs, product_rhs
from .assigned import assigned


def dot(a, b):
    """``np.dot``; compiled with float operands (Numba's needs them)."""
    return np.dot(a, b)


def _promoted(x, y):
    """The scalar type (``np.float32``...) to cast the factors ``x`` and
    ``y`` (Numba types) of a product to before Numba multiplies them: the
    dtype NumPy gives their product, when they are not both of it already
    or it is not a float or complex one (Numba's products need that); else
    None."""
    dtype = result_dtype(x, y)
    if dtype is None or is_inexact(dtype) and not (needs_cast(x, dtype) or needs_cast(y, dtype)):
        return None
    return dtype.type


@overload(dot, jit_options=CACHED)
def _dot(a, b):
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda a, b: a * b
    if a.ndim > 2 or b.ndim > 2:
        raise TypingError("np.dot of arrays with more than 2 dimensions is not compiled yet")
    promoted = _promoted(a, b)
    if promoted is not None:
        return _promoting_product(dot, promoted)
    if kernel_product(a, b):
        return product
    return lambda a, b: np.dot(a, b)


def _promoting_product(function, dtype):
    """``function(a, b)`` of the factors cast to ``dtype`` (see ``_promoted``);
    integer and boolean products by a loop (``kernels.dtypes``)."""
    if is_inexact(np.dtype(dtype)):
        return lambda a, b: function(cast(a, dtype), cast(b, dtype))
    return lambda a, b: integer_product(cast(a, dtype), cast(b, dtype))


def inner(a, b):
    return np.inner(a, b)


@overload(inner, jit_options=CACHED)
def _inner(a, b):
    if isinstance(a, types.Optional) or isinstance(b, types.Optional):    # (as transpose's)
        return lambda a, b: inner(assigned(a), assigned(b))
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda a, b: a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: dot(a, b.T)
    raise TypingError("np.inner of arrays with more than 2 dimensions is not compiled yet")


def matmul(a, b):
    """``a @ b`` (``np.matmul``); compiled by Numba too, two float64 matrices
    in tangent_x's kernel (see ``kernels.gemm``), anything else as Numba's ``@``."""
    return np.matmul(a, b)


@overload(matmul, jit_options=CACHED)
def _matmul(a, b):
    promoted = _promoted(a, b) if is_array(a) and is_array(b) else None
    if promoted is not None and a.ndim <= 2 and b.ndim <= 2:
        return _promoting_product(matmul, promoted)
    if kernel_product(a, b):
        return product
    return lambda a, b: a @ b


def may_call_kernel(objects):
    """Whether compiled code calling ``objects`` may call the kernel."""
    users = (matmul, dot, runtime.matmul_adjoint_lhs, runtime.matmul_adjoint_rhs,
             runtime.dot_adjoint_lhs, runtime.dot_adjoint_rhs, runtime.inner_adjoint_lhs,
             runtime.inner_adjoint_rhs)
    return any(obj is user for obj in objects for user in users)


# Matrix products of two matrices run in ``matmul``'s kernel (see there).

def _outer(u, v):
    """A jitable ``np.outer`` of the vectors typed ``u`` and ``v``, as a loop
    nest: Numba's ``np.outer`` goes through its generic broadcasting ufunc
    and costs several times more (it is the rank-one cotangent of every
    matrix-vector product, once per step of a loop)."""
    dtype = np.result_type(as_dtype(u.dtype), as_dtype(v.dtype))

    @register_jitable
    def outer(u, v):
        out = empty((u.shape[0], v.shape[0]), dtype)
        for i in range(u.shape[0]):
            ui = u[i]
            for j in range(v.shape[0]):
                out[i, j] = ui * v[j]
        return out
    return outer


@overload(runtime.matmul_adjoint_lhs, jit_options=CACHED)
def _matmul_adjoint_lhs(g, a, b):
    if not (is_array(a) and is_array(b)):
        raise TypingError("matmul of non-arrays")
    promoted = _promoted(g, b)
    if promoted is not None and is_inexact(np.dtype(promoted)):
        # the cotangent is NumPy's product of g and b (a's dtype plays no part)
        return lambda g, a, b: runtime.matmul_adjoint_lhs(cast(g, promoted), a,
                                                          cast(b, promoted))
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * b
    if b.ndim == 1 and a.ndim == 2:
        outer = _outer(g, b)
        return lambda g, a, b: outer(g, b)
    if a.ndim == 1 and b.ndim == 2:
        return lambda g, a, b: np.dot(b, g)
    if a.ndim == 2 and b.ndim == 2:
        if kernel_product(g, b):
            return product_lhs
        return lambda g, a, b: matmul(g, b.T)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")


@overload(runtime.matmul_adjoint_rhs, jit_options=CACHED)
def _matmul_adjoint_rhs(g, a, b):
    if not (is_array(a) and is_array(b)):
        raise TypingError("matmul of non-arrays")
    promoted = _promoted(g, a)
    if promoted is not None and is_inexact(np.dtype(promoted)):
        return lambda g, a, b: runtime.matmul_adjoint_rhs(cast(g, promoted),
                                                          cast(a, promoted), b)
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * a
    if a.ndim == 1 and b.ndim == 2:
        outer = _outer(a, g)
        return lambda g, a, b: outer(a, g)
    if a.ndim == 2 and b.ndim == 1:
        return lambda g, a, b: np.dot(a.T, g)
    if a.ndim == 2 and b.ndim == 2:
        if kernel_product(a, g):
            return product_rhs
        return lambda g, a, b: matmul(a.T, g)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")


def add_matmul_adjoint_lhs(acc, g, a, b):
    """``acc + matmul_adjoint_lhs(g, a, b)``, added into ``acc`` when it is
    an array (the caller owns it: see ``specialize.Specializer.owns``)."""
    acc += runtime.matmul_adjoint_lhs(g, a, b)
    return acc


def add_matmul_adjoint_rhs(acc, g, a, b):
    """``acc + matmul_adjoint_rhs(g, a, b)``, added into ``acc`` when it is
    an array."""
    acc += runtime.matmul_adjoint_rhs(g, a, b)
    return acc


def _add_outer(acc, u, v):
    """A jitable ``acc += np.outer(u, v)`` (same shapes) without the
    product's temporary; else None."""
    if not (is_array(acc) and acc.ndim == 2 and is_array(u) and is_array(v)
            and u.ndim == 1 and v.ndim == 1):
        return None

    @register_jitable
    def add_outer(acc, u, v):
        m, n = acc.shape
        if u.shape[0] != m or v.shape[0] != n:
            return False
        for i in range(m):
            ui = u[i]
            row = acc[i]         # a row view: the inner loop vectorises
            for j in range(n):
                row[j] += ui * v[j]
        return True
    return add_outer


def _overload_accumulating(adder, helper, operands):
    """Compile ``adder`` (``acc += helper(g, a, b)``): where the adjoint is
    an outer product, ``operands(g, a, b)`` gives ``(matrix, u, v)`` (the
    differentiated matrix, and the adjoint ``np.outer(u, v)``), added into
    ``acc`` without the product's temporary; else the helper's result is
    added.  ``operands`` is plain Python, applied to the types too."""
    pick = register_jitable(operands)

    @overload(adder, jit_options=CACHED)
    def _typed(acc, g, a, b):
        matrix, u, v = operands(g, a, b)
        add_outer = _add_outer(acc, u, v) if is_array(matrix) and matrix.ndim == 2 else None
        if add_outer is None:
            return _add_fallback(helper, acc)

        def impl(acc, g, a, b):
            _, u, v = pick(g, a, b)
            if not add_outer(acc, u, v):
                acc += helper(g, a, b)
            return acc
        return impl


# d(a @ b)/da for a vector b is np.outer(g, b); d(a @ b)/db for a vector a, np.outer(a, g)
_overload_accumulating(add_matmul_adjoint_lhs, runtime.matmul_adjoint_lhs,
                       lambda g, a, b: (a, g, b))
_overload_accumulating(add_matmul_adjoint_rhs, runtime.matmul_adjoint_rhs,
                       lambda g, a, b: (b, a, g))


def _add_fallback(helper, acc):
    if is_array(acc):
        def into(acc, g, a, b):
            acc += helper(g, a, b)
            return acc
        return into
    return lambda acc, g, a, b: acc + helper(g, a, b)


# Helpers whose contribution ``acc += helper(...)`` can be written straight
# into an owned accumulator (``specialize`` spells the update with these).
ACCUMULATING = {runtime.matmul_adjoint_lhs: add_matmul_adjoint_lhs,
                runtime.matmul_adjoint_rhs: add_matmul_adjoint_rhs}


@overload(runtime.dot_adjoint_lhs, jit_options=CACHED)
def _dot_adjoint_lhs(g, a, b):
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * b, a)
    return lambda g, a, b: runtime.matmul_adjoint_lhs(g, a, b)


@overload(runtime.dot_adjoint_rhs, jit_options=CACHED)
def _dot_adjoint_rhs(g, a, b):
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * a, b)
    return lambda g, a, b: runtime.matmul_adjoint_rhs(g, a, b)


@overload(runtime.inner_adjoint_lhs, jit_options=CACHED)
def _inner_adjoint_lhs(g, a, b):
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * b, a)
    if a.ndim == 1 and b.ndim == 1:
        return lambda g, a, b: g * b
    if b.ndim == 1:
        return lambda g, a, b: np.outer(g, b)
    return lambda g, a, b: runtime.matmul_adjoint_lhs(g, a, b.T)


@overload(runtime.inner_adjoint_rhs, jit_options=CACHED)
def _inner_adjoint_rhs(g, a, b):
    if not is_array(a) or not is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * a, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda g, a, b: g * a
    if a.ndim == 1:
        return lambda g, a, b: np.outer(g, a)
    return lambda g, a, b: runtime.matmul_adjoint_rhs(g, a, b.T).T
