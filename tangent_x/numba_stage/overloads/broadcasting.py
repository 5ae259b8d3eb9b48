"""Implementations of the runtime's broadcasting helpers: ``unbroadcast``
(a cotangent summed back to its operand's shape), ``broadcast_like``,
``unreduce``, ``shaped``, ``is_array``, ``inplace_result``, ``with_real``.  Each is one
flat generated function (see ``kernels.loops``)."""
import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime
from ..kernels.allocation import zeros_view
from ..kernels.common import CACHED, is_array
from .assigned import assigned
from ..kernels.loops import (axes_tuple, broadcast_fill, fill_lines, flat_function, keep_shape,
                             sum_to_lines)


def _same_or(contiguous, otherwise):
    """Lines returning ``g`` when it already has ``x``'s shape (as it is when
    C-ordered, known when compiling; else a C-ordered copy), else
    ``otherwise`` with ``shape = x.shape``."""
    same = "g" if contiguous else "np.ascontiguousarray(g)"
    return ["if g.shape == x.shape:", f"    return {same}", "shape = x.shape",
            *otherwise, "return out"]


@overload(runtime.unbroadcast)
def _unbroadcast(g, x):
    if isinstance(x, types.NoneType):
        # that carry typed before the loop's assignments are: resolved once
        # they are (typed as a number here, it would clash with the array)
        return None
    if isinstance(x, types.Optional):
        # a loop's carry that starts unbound, read back from a tape: the
        # forward pass ran arithmetic on it, so here it holds a value
        return lambda g, x: runtime.unbroadcast(g, assigned(x))
    if not is_array(g):
        if not is_array(x):
            return lambda g, x: g
        return flat_function(
            "unbroadcast", "g, x",
            ["shape = x.shape", *fill_lines(None, x.ndim, dtype="dtype"), "return out"],
            {"dtype": as_dtype(getattr(g, "number", g))})   # (a WeakNumber: its number's)
    if not is_array(x):
        return lambda g, x: np.sum(g)
    gn, xn = g.ndim, x.ndim
    if xn > gn:
        return flat_function("unbroadcast", "g, x",
                             ["shape = x.shape", *fill_lines(gn, xn), "return out"])
    if gn == xn:
        return flat_function("unbroadcast", "g, x",
                             _same_or(g.layout == "C", sum_to_lines(gn, xn)))
    return flat_function("unbroadcast", "g, x",
                         ["shape = x.shape", *sum_to_lines(gn, xn), "return out"])


@overload(runtime.shaped, jit_options=CACHED)
def _shaped(shape):
    if len(shape) == 0:
        return lambda shape: 0.0
    return lambda shape: zeros_view(shape)


@overload(runtime.is_array)
def _is_array_of(x):
    answer = is_array(x)       # a constant of the type: LLVM drops the other branch
    return lambda x: answer


@overload(runtime.inplace_result)
def _inplace_result(new, old):
    if is_array(old) and (not is_array(new) or new.dtype != old.dtype):
        dtype = as_dtype(old.dtype)
        return lambda new, old: np.asarray(new).astype(dtype)
    return lambda new, old: new


@overload(runtime.with_real)
def _with_real(base, real):
    if is_array(base) and isinstance(base.dtype, types.Complex):
        dtype = as_dtype(base.dtype)
        return lambda base, real: (real + 1j * np.imag(base)).astype(dtype)
    return lambda base, real: real


@overload(runtime.broadcast_like)
def _broadcast_like(t, ans):
    if not is_array(ans):
        return lambda t, ans: t
    if not is_array(t):
        return flat_function(
            "broadcast_like", "t, ans",
            ["shape = ans.shape", *fill_lines(None, ans.ndim, "t", dtype="dtype"), "return out"],
            {"dtype": as_dtype(t)})
    fill = ["shape = ans.shape", *fill_lines(t.ndim, ans.ndim, "t", dtype="t.dtype"),
            "return out"]
    if t.ndim != ans.ndim:
        return flat_function("broadcast_like", "t, ans", fill)
    same = "t" if t.layout == "C" else "np.ascontiguousarray(t)"
    return flat_function("broadcast_like", "t, ans",
                         ["if t.shape == ans.shape:", f"    return {same}", *fill])


@overload(runtime.unreduce)
def _unreduce(g, x, axis=None, keepdims=False):
    if isinstance(x, types.Optional):         # (as unbroadcast's x)
        return lambda g, x, axis=None, keepdims=False: \
            runtime.unreduce(g, assigned(x), axis, keepdims)
    if not is_array(x):
        return lambda g, x, axis=None, keepdims=False: g
    xn = x.ndim
    params = "g, x, axis=None, keepdims=False"
    if not is_array(g):
        return flat_function(
            "unreduce", params,
            ["shape = x.shape", *fill_lines(None, xn, dtype="dtype"), "return out"],
            {"dtype": as_dtype(getattr(g, "number", g))})   # (a WeakNumber: its number's)
    if g.ndim == xn:
        return flat_function("unreduce", params,
                             ["shape = x.shape", *fill_lines(xn, xn), "return out"])
    fill = broadcast_fill(xn, xn)
    keep = keep_shape(xn)
    to_tuple = register_jitable(axes_tuple(axis, xn))

    def impl(g, x, axis=None, keepdims=False):
        shape = keep(x.shape, to_tuple(axis))
        return fill(np.ascontiguousarray(g).reshape(shape), x.shape, g.dtype)
    return impl
