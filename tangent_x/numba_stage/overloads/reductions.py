"""Reductions over several axes (``sum_axes``, ``mean_axes_keepdims`` ...:
``np.sum(x, axis=(0, 2), keepdims=True)`` spelled as a helper, the flag in
its name because a Numba type must know the result's rank), each a loop
nest generated per rank; and ``prod_others``, the product of the other
entries."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime
from ..kernels.allocation import empty
from ..kernels.common import CACHED, count_axes, is_array, is_none
from ..kernels.loops import axes_tuple, function_from_source, index_text, keep_shape, loop_nest
from .assigned import assigned


_REDUCE_CACHE = {}
_INIT = {"sum": "0", "prod": "1", "max": "-np.inf", "min": "np.inf"}
_STEP = {"sum": "acc + v", "prod": "acc * v", "max": "v if v > acc or v != v else acc",
         "min": "v if v < acc or v != v else acc"}


def _reduce_kernel(op, xn, naxes, keepdims, dtype_expr):
    """A loop nest reducing ``a`` (xn dims) over ``axes`` with ``op``."""
    key = (op, xn, naxes, keepdims, dtype_expr)
    if key in _REDUCE_CACHE:
        return _REDUCE_CACHE[key]
    keep = keep_shape(xn)
    n_out = xn if keepdims else xn - naxes
    lines = ["def reduce(a, axes):",
             "    shape = a.shape",
             "    kshape = keep(shape, axes)",
             f"    out = np.full(kshape, {_INIT[op]}, {dtype_expr})"]
    if xn:
        oidx = index_text([f"0 if kshape[{d}] == 1 else i{d}" for d in range(xn)])
        aidx = ", ".join(f"i{d}" for d in range(xn))
        nest = loop_nest(xn, "shape", f"acc = out[{oidx}]")
        indent = "    " * (xn + 1)
        lines += nest + [f"{indent}v = a[{aidx}]", f"{indent}out[{oidx}] = {_STEP[op]}"]
    else:
        lines.append("    acc = out[()]")
        lines.append("    v = a[()]")
        lines.append(f"    out[()] = {_STEP[op]}")
    if keepdims:
        lines.append("    return out")
    elif n_out == 0:
        lines.append("    return out.reshape(-1)[0]")
    else:
        lines.append(f"    kept = empty({n_out}, np.int64)")
        lines.append("    j = 0")
        lines.append(f"    for d in range({xn}):")
        lines.append("        red = False")
        lines.append("        for ax in axes:")
        lines.append(f"            if ax % {xn} == d:")
        lines.append("                red = True")
        lines.append("        if not red:")
        lines.append("            kept[j] = shape[d]")
        lines.append("            j += 1")
        parts = [f"kept[{d}]" for d in range(n_out)]
        lines.append("    return out.reshape((" + ", ".join(parts) +
                     ("," if n_out == 1 else "") + "))")
    fn = register_jitable(function_from_source("\n".join(lines), "reduce", {"keep": keep}))
    _REDUCE_CACHE[key] = fn
    return fn


def _dtype_expr(op, a):
    if op in ("sum", "prod"):
        if isinstance(a.dtype, (types.Boolean, types.Integer)):
            return "np.int64"
    return "a.dtype"


# The eager helpers, ``np.<op>(a, axis=axes[, keepdims=True])``, and their overloads.

def _define_keepdims(op, eager_op):
    def eager(a, axes):
        return eager_op(a, axes, True)
    eager.__name__ = f"{op}_axes_keepdims"
    eager.__doc__ = f"``np.{op}(a, axis=axes, keepdims=True)``; compiled by Numba too."
    return eager


def _reduction_overload(eager, op, keep):
    @overload(eager, jit_options=CACHED)
    def _ov(a, axes):
        if isinstance(a, types.Optional):
            # a loop's variable that starts unbound, read where it holds a
            # value (see indexing.unindex): reduced as the value, not a number
            return lambda a, axes: eager(assigned(a), axes)
        if not is_array(a):
            return lambda a, axes: a
        kernel = _reduce_kernel(op, a.ndim, count_axes(axes, a.ndim), keep, _dtype_expr(op, a))
        to_tuple = register_jitable(axes_tuple(axes, a.ndim))
        return lambda a, axes: kernel(a, to_tuple(axes))


def _define_drop(op):
    def eager(a, axes):
        return getattr(np, op)(a, axis=axes)
    eager.__name__ = f"{op}_axes"
    eager.__doc__ = f"``np.{op}(a, axis=axes)``; compiled by Numba too."
    return eager


for _op in ("sum", "prod", "max", "min"):
    _drop = _define_drop(_op)
    _keep = _define_keepdims(_op, lambda a, axes, k, _o=_op: getattr(np, _o)(
        a, axis=axes, keepdims=k))
    _reduction_overload(_drop, _op, False)
    _reduction_overload(_keep, _op, True)
    globals()[f"{_op}_axes"] = _drop
    globals()[f"{_op}_axes_keepdims"] = _keep


def _mean_like(keep):
    def mean(a, axes):
        return np.mean(a, axis=axes, keepdims=keep)

    @overload(mean, jit_options=CACHED)
    def _ov(a, axes):
        if isinstance(a, types.Optional):          # (as _reduction_overload's)
            return lambda a, axes: mean(assigned(a), axes)
        if not is_array(a):
            return lambda a, axes: a
        dtype = "a.dtype" if isinstance(a.dtype, types.Float) else "np.float64"
        kernel = _reduce_kernel("sum", a.ndim, count_axes(axes, a.ndim), keep, dtype)
        to_tuple = register_jitable(axes_tuple(axes, a.ndim))
        # the count in the sum's dtype: a float32 mean stays float32, as
        # NumPy's (Numba makes float32 / float64 a float64; fuzz seed 581477)
        cast = as_dtype(a.dtype).type if isinstance(a.dtype, types.Float) else np.float64

        def impl(a, axes):
            total = kernel(a, to_tuple(axes))
            return total / cast(a.size / max(np.size(total), 1))
        return impl
    return mean


mean_axes = _mean_like(False)
mean_axes.__name__ = "mean_axes"
mean_axes_keepdims = _mean_like(True)
mean_axes_keepdims.__name__ = "mean_axes_keepdims"


def _var_like(keep, root):
    def var(a, axes):
        out = np.var(a, axis=axes, keepdims=keep)
        return np.sqrt(out) if root else out

    @overload(var, jit_options=CACHED)
    def _ov(a, axes):
        if isinstance(a, types.Optional):          # (as _reduction_overload's)
            return lambda a, axes: var(assigned(a), axes)
        if not is_array(a):
            return lambda a, axes: 0.0 * a
        final = mean_axes_keepdims if keep else mean_axes

        def impl(a, axes):
            centered = a - mean_axes_keepdims(a, axes)
            out = final(centered * centered, axes)
            return np.sqrt(out) if root else out
        return impl
    return var


var_axes, var_axes_keepdims = _var_like(False, False), _var_like(True, False)
std_axes, std_axes_keepdims = _var_like(False, True), _var_like(True, True)
for _f, _n in ((var_axes, "var_axes"), (var_axes_keepdims, "var_axes_keepdims"),
               (std_axes, "std_axes"), (std_axes_keepdims, "std_axes_keepdims")):
    _f.__name__ = _n


def _var_all(root):
    def var(a):
        return np.std(a) if root else np.var(a)

    @overload(var, jit_options=CACHED)
    def _ov(a):
        if isinstance(a, types.Optional):          # (as _reduction_overload's)
            return lambda a: var(assigned(a))
        if not is_array(a):
            return lambda a: 0.0 * a
        # Numba's np.var gives float64 for float32 and complex64; NumPy the
        # real type of the array's own precision
        narrow = a.dtype in (types.float32, types.complex64)
        if root:
            return (lambda a: np.float32(np.std(a))) if narrow else (lambda a: np.std(a))
        return (lambda a: np.float32(np.var(a))) if narrow else (lambda a: np.var(a))
    var.__doc__ = f"``np.{'std' if root else 'var'}(a)`` of a whole array, in NumPy's dtype."
    return var


var_all, std_all = _var_all(False), _var_all(True)
var_all.__name__, std_all.__name__ = "var_all", "std_all"


@overload(runtime.prod_others, jit_options=CACHED)
def _prod_others(a, axis=None):
    if not is_array(a) or not (is_none(axis) or a.ndim == 1):
        raise TypingError("prod_others over an axis is not compiled yet")

    def impl(a, axis=None):
        flat = np.ascontiguousarray(a).reshape(-1)
        n = flat.size
        out = empty(n, flat.dtype)
        before = 1.0
        for i in range(n):
            out[i] = before
            before *= flat[i]
        after = 1.0
        for i in range(n - 1, -1, -1):
            out[i] *= after
            after *= flat[i]
        return out.reshape(a.shape)
    return impl
