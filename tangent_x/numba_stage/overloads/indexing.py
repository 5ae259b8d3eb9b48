"""Indexing helpers: ``unindex`` (the cotangent of ``x[index]``, scattered
into zeros), ``add_at``, ``index_zero``, ``last_writes`` (only a repeated
index's last write counts), ``is_view_of``, ``cotangent_item``, and
``mask_select`` / ``mask_assign`` for a boolean mask of any rank."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ... import runtime
from ..bounds import checked, position
from ..kernels.allocation import empty
from ..kernels.common import CACHED, is_array
from ..kernels.dtypes import result_dtype
from .assigned import assigned
from .cotangents import as_item
from .scatter import ADD, row_scatter, selects_rows


@overload(runtime.unindex, jit_options=CACHED)
def _unindex(x, index, g):
    if isinstance(x, types.Optional):
        # a loop's variable that starts unbound, read back from a tape in
        # the backward pass: here it holds a value (typed as a non-array,
        # the cotangent was g itself: fuzz seed 671560)
        return lambda x, index, g: runtime.unindex(assigned(x), index, g)
    if isinstance(x, types.List):
        return _unindex_list(x, index, g)
    if not is_array(x):
        return lambda x, index, g: g
    # NumPy's dtype of x and g together, as the eager helper's zeros have
    dtype = (result_dtype(x, g) or np.dtype(np.float64)).type
    if isinstance(index, (types.Integer, types.SliceType, types.BaseTuple,
                          types.EllipsisType)) and not (
            isinstance(index, types.BaseTuple) and any(is_array(t) for t in index)):
        def impl(x, index, g):
            z = np.zeros(x.shape, dtype)
            z[checked(x, index)] = g
            return z
        return impl

    if not selects_rows(index):
        raise TypingError("unindex: only integers, slices, 1-d integer arrays and boolean "
                          "masks are compiled")
    add_rows = row_scatter(index, ADD)

    def scatter(x, index, g):
        z = np.zeros(x.shape, dtype)
        add_rows(z, index, g)
        return z
    return scatter


def _unindex_list(x, index, g):
    """The cotangent of item ``index`` of a run-time list (one filled in a
    loop): a list as long, zeros but ``g`` at ``index`` (a list is not an
    array: its cotangent is never ``g`` itself)."""
    if isinstance(index, types.SliceType) and isinstance(g, types.List):
        def sliced(x, index, g):
            # ``parts[::-1]``: g's items back at the positions they came from
            out = [runtime.zeros_like(x[i]) for i in range(len(x))]
            start, stop, step = index.indices(len(x))
            j = 0
            for k in range(start, stop, step):
                out[k] = runtime.tree_add(out[k], g[j])
                j += 1
            return out
        return sliced
    if not isinstance(index, types.Integer):
        raise TypingError("unindex: a list's cotangent is compiled for an integer index "
                          "or a slice only")
    item = x.dtype
    if isinstance(item, (types.BaseTuple, types.List)):
        def tuples(x, index, g):
            # a list of tuples or lists: each item's zeros, g added at the index
            k = index + len(x) if index < 0 else index
            out = [runtime.zeros_like(x[i]) for i in range(len(x))]
            out[k] = runtime.tree_add(out[k], g)
            return out
        return tuples
    dtype = (result_dtype(item, g) or np.dtype(np.float64)).type
    if is_array(item):
        def arrays(x, index, g):
            k = index + len(x) if index < 0 else index
            out = [np.zeros(x[i].shape, dtype) for i in range(len(x))]
            out[k] = out[k] + g     # (g broadcast to the item's shape, its dtype kept)
            return out
        return arrays

    def numbers(x, index, g):
        k = index + len(x) if index < 0 else index
        out = [dtype(0) for i in range(len(x))]
        out[k] = dtype(g)
        return out
    return numbers


@overload(runtime.add_at, jit_options=CACHED)
def _add_at(acc, index, g):
    if isinstance(acc, types.Optional):       # (as unindex's x)
        return lambda acc, index, g: runtime.add_at(assigned(acc), index, g)
    if isinstance(acc, types.List) and isinstance(index, types.Integer):
        def items(acc, index, g):
            # the cotangent of a run-time list: g added to item ``index``
            # (``acc + g`` would join a list to it)
            k = position(index, len(acc))
            acc[k] = as_item(runtime.tree_add(acc[k], g), acc[k])
            return acc
        return items
    if not is_array(acc):
        return lambda acc, index, g: acc + g
    if isinstance(index, (types.Integer, types.SliceType)):
        def impl(acc, index, g):
            acc[checked(acc, index)] += g
            return acc
        return impl

    def general(acc, index, g):
        return acc + runtime.unindex(acc, index, g)
    return general


@overload(runtime.index_zero, jit_options=CACHED)
def _index_zero(g, index):
    if is_array(index) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:
        def masked(g, index):
            out = np.copy(g)
            mask_assign(out, index, 0.0)
            return out
        return masked

    def impl(g, index):
        out = np.copy(g)
        out[checked(g, index)] = 0
        return out
    return impl


@register_jitable
def _memory_extent(a):
    """The first and one-past-last byte addresses ``a`` reaches."""
    lo = np.int64(a.ctypes.data)
    hi = lo
    for i in range(a.ndim):
        step = (a.shape[i] - 1) * a.strides[i]
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + a.itemsize


@overload(runtime.is_view_of, jit_options=CACHED)
def _is_view_of(view, base):
    if not (is_array(view) and is_array(base)):
        return lambda view, base: False

    def impl(view, base):
        if view.size == 0 or base.size == 0:
            return False
        lo, hi = _memory_extent(view)
        base_lo, base_hi = _memory_extent(base)
        return lo < base_hi and base_lo < hi
    return impl


@overload(runtime.last_writes, jit_options=CACHED)
def _last_writes(items, index, like):
    if not (is_array(index) and not isinstance(index.dtype, types.Boolean)):
        if isinstance(index, types.BaseTuple) and any(is_array(t) for t in index):
            def general(items, index, like):    # one index array among slices and ints
                order = np.arange(items.size).reshape(items.shape)
                last = np.empty(like.shape, np.intp)
                last[index] = order
                return np.where(last[index] == order, items, 0.0)
            return general
        return lambda items, index, like: items     # no integer array: nothing repeats
    if index.ndim != 1:
        raise TypingError("last_writes: only 1-d integer index arrays are compiled")

    def impl(items, index, like):
        n = like.shape[0]
        last = np.empty(n, np.intp)         # only written positions are read
        for j in range(index.size):
            k = index[j]
            last[k + n if k < 0 else k] = j
        out = np.ascontiguousarray(items)
        copied = False
        for j in range(index.size):
            k = index[j]
            if last[k + n if k < 0 else k] != j:     # a later write overwrote this one
                if not copied:
                    out = out.copy()
                    copied = True
                rows = out.reshape(index.size, -1)
                for r in range(rows.shape[1]):
                    rows[j, r] = 0
        return out
    return impl


@overload(runtime.cotangent_item, jit_options=CACHED)
def _cotangent_item(g, key, like):
    return lambda g, key, like: g[key]


def mask_select(x, mask):
    """``x[mask]`` for a boolean ``mask`` of any rank (Numba's own takes 1-d)."""
    return x[mask]


@overload(mask_select, jit_options=CACHED)
def _mask_select(x, mask):
    if is_array(mask) and mask.ndim == 1:
        return lambda x, mask: x[mask]

    def impl(x, mask):
        flat_mask = np.ascontiguousarray(mask).reshape(-1)
        row = x.size // max(flat_mask.size, 1)
        flat_x = np.ascontiguousarray(x).reshape(-1)
        out = empty(np.count_nonzero(flat_mask) * row, x.dtype)
        j = 0
        for i in range(flat_mask.size):
            if flat_mask[i]:
                for r in range(row):
                    out[j] = flat_x[i * row + r]
                    j += 1
        if row == 1:
            return out.reshape((out.size,) + x.shape[mask.ndim:mask.ndim])
        return out.reshape((out.size // row,) + x.shape[mask.ndim:])
    return impl


def mask_assign(x, mask, v):
    """``x[mask] = v`` in place, for a boolean ``mask`` of any rank."""
    x[mask] = v


@overload(mask_assign, jit_options=CACHED)
def _mask_assign(x, mask, v):
    v_array = is_array(v)

    def impl(x, mask, v):
        flat_mask = np.ascontiguousarray(mask).reshape(-1)
        row = x.size // max(flat_mask.size, 1)
        flat_x = x.reshape(-1)
        if v_array:
            flat_v = np.ascontiguousarray(v).reshape(-1)
        else:
            flat_v = np.full(1, v)
        n = flat_v.size
        j = 0
        for i in range(flat_mask.size):
            if flat_mask[i]:
                for r in range(row):
                    flat_x[i * row + r] = flat_v[j % n]
                    j += 1
    return impl
