"""``np.<ufunc>.at`` compiled (``add_at``, ``minimum_at``, ``maximum_at``,
``multiply_at``), and the helpers of ``x.at[index].min/max/multiply`` and
their adjoints built on them."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype, from_dtype

from ... import runtime
from ..bounds import checked, check_integer
from ..kernels.common import CACHED, is_array
from .scatter import MAXIMUM, MINIMUM, MULTIPLY, row_scatter, selects_rows


def add_at(a, indices, b):
    """``np.add.at(a, indices, b)`` (unbuffered: repeated indices add up)."""
    np.add.at(a, indices, b)


@overload(add_at, jit_options=CACHED)
def _add_at_ufunc(a, indices, b):
    if isinstance(indices, (types.Integer, types.SliceType)):
        def basic(a, indices, b):
            a[checked(a, indices)] += b
        return basic

    def scatter(a, indices, b):
        a += runtime.unindex(a, indices, b)
    return scatter


def minimum_at(a, indices, b):
    """``np.minimum.at(a, indices, b)`` (every value at a repeated index counts)."""
    np.minimum.at(a, indices, b)


def maximum_at(a, indices, b):
    """``np.maximum.at(a, indices, b)``."""
    np.maximum.at(a, indices, b)


def multiply_at(a, indices, b):
    """``np.multiply.at(a, indices, b)``."""
    np.multiply.at(a, indices, b)


def _ufunc_at_overload(op):
    """The compiled ``np.<ufunc>.at``: a basic index (which cannot repeat) in
    one vectorised step, a 1-d integer array or a boolean mask on axis 0 one
    selected row at a time, in order, so repeated rows combine."""
    def impl_for(a, indices, b):
        if not is_array(a):
            raise TypingError("np.<ufunc>.at needs an array to update")
        if isinstance(indices, (types.Integer, types.SliceType)):
            if op == MINIMUM:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = np.minimum(a[indices], b)
            elif op == MAXIMUM:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = np.maximum(a[indices], b)
            else:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = a[indices] * b
            return basic
        if not selects_rows(indices):
            raise TypingError("np.minimum.at / np.maximum.at / np.multiply.at: only "
                              "integers, slices, 1-d integer arrays and boolean masks are "
                              "compiled")
        return row_scatter(indices, op)
    return impl_for


for _helper, _op in ((minimum_at, MINIMUM), (maximum_at, MAXIMUM),
                    (multiply_at, MULTIPLY)):
    overload(_helper, jit_options=CACHED)(_ufunc_at_overload(_op))


def _as_slice_index(index, n):
    """An integer index as the one-row slice it selects (``[i]`` -> ``[i:i+1]``)."""
    return None


@overload(_as_slice_index, jit_options=CACHED)
def _as_slice_index_impl(index, n):
    def impl(index, n):
        check_integer(index, n)
        i = index + n if index < 0 else index
        return slice(i, i + 1)
    return impl


def _index_overload(fn, selected):
    """Helpers of ``x.at[index].<op>(v)`` for the index kinds the compiled
    ``np.<ufunc>.at`` takes; an integer index runs as its one-row slice
    (``selected``: the result is shaped like ``x[index]``, so its one row
    is taken; otherwise it is shaped like ``x``)."""
    def make(x, index, *rest):
        if not is_array(x):
            raise TypingError(f"{fn.__name__}: x must be an array")
        if isinstance(index, types.Integer) and selected:
            def one(x, index, *rest):
                return fn(x, _as_slice_index(index, x.shape[0]), *rest)[0]
            return one
        if isinstance(index, types.Integer):
            def whole_x(x, index, *rest):
                return fn(x, _as_slice_index(index, x.shape[0]), *rest)
            return whole_x
        if not (isinstance(index, types.SliceType) or is_array(index) and (
                index.ndim == 1 or isinstance(index.dtype, types.Boolean))):
            raise TypingError(f"{fn.__name__}: only integers, slices, 1-d integer arrays and "
                              "boolean masks are compiled")

        def general(x, index, *rest):
            return fn(x, index, *rest)
        return general
    return make


@register_jitable
def _extremum_winners(x, index, v, ans):
    won_x = (x == ans) * 1.0
    chosen = ans[index]
    won_v = (v == chosen) * 1.0
    count = won_x + runtime.unindex(ans, index, won_v)
    count = np.where(count == 0, 1.0, count)
    return won_x, won_v, count


@register_jitable
def _share_x(x, index, v, ans):
    won_x, won_v, count = _extremum_winners(x, index, v, ans)
    return won_x / count


@register_jitable
def _share_v(x, index, v, ans):
    won_x, won_v, count = _extremum_winners(x, index, v, ans)
    return won_v / count[index]


@register_jitable
def _others_at(x, index, v):
    chosen = x[index] * 1.0
    vb = chosen * 0.0 + v
    zero = vb == 0
    n_zero = runtime.unindex(x, index, zero * 1.0)
    safe = np.where(zero, 1.0, vb)
    nonzero_product = np.ones(x.shape)
    multiply_at(nonzero_product, index, safe)
    base = (x * nonzero_product)[index]
    n_zero_k = n_zero[index]
    return np.where(zero, np.where(n_zero_k == 1, base, 0.0),
                    np.where(n_zero_k == 0, base / safe, 0.0))


overload(runtime.extremum_share_x, jit_options=CACHED)(_index_overload(_share_x, False))
overload(runtime.extremum_share_v, jit_options=CACHED)(_index_overload(_share_v, True))
overload(runtime.product_others_at, jit_options=CACHED)(_index_overload(_others_at, True))


def _updated_copy_overload(update):
    """``min_index``/``max_index``/``mul_index``: a copy of ``x`` in the
    common dtype, then the compiled ``np.<ufunc>.at``."""
    def make(x, index, value):
        if not is_array(x):
            raise TypingError("x.at[index] updates need an array")
        value_dtype = as_dtype(value.dtype if is_array(value) else value)
        dtype = from_dtype(np.result_type(as_dtype(x.dtype), value_dtype))

        def impl(x, index, value):
            out = np.empty(x.shape, dtype)
            out[...] = x
            update(out, index, value)
            return out
        return impl
    return make


for _helper, _at in ((runtime.min_index, minimum_at), (runtime.max_index, maximum_at),
                     (runtime.mul_index, multiply_at)):
    overload(_helper, jit_options=CACHED)(_updated_copy_overload(_at))
