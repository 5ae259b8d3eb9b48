"""Stacking and its adjoints: ``stack_items`` (a scan's stacked outputs),
``np.stack`` and ``np.concatenate`` of a run-time list of arrays,
``unstack`` and ``unconcatenate`` (the cotangents of ``np.stack`` and
``np.concatenate``)."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ... import runtime
from ..kernels.common import CACHED, is_array, is_none
from ..kernels.loops import jitable_from_source


@overload(np.stack, jit_options=CACHED)
def _stack_numbers(arrays, axis=0):
    """``np.stack`` of a list or tuple of numbers (Numba's own takes arrays
    only): the 1-d array of them, as NumPy gives (``max(vals)`` of a list
    is ``np.max(np.stack(vals))``; a list of arrays: array_lists)."""
    if not (isinstance(axis, int) or is_none(axis) or (
            isinstance(axis, types.IntegerLiteral) and axis.literal_value == 0)
            or isinstance(axis, types.Omitted)):
        return None
    if not (isinstance(arrays, (types.List, types.UniTuple))
            and isinstance(arrays.dtype, (types.Integer, types.Float, types.Boolean))):
        return None
    dtype = as_dtype(arrays.dtype)

    def impl(arrays, axis=0):
        out = np.empty(len(arrays), dtype)
        for k in range(len(arrays)):
            out[k] = arrays[k]
        return out
    return impl


@overload(runtime.unstack, jit_options=CACHED)
def _unstack(g, axis=0):
    if is_array(g) and g.ndim == 1 and (isinstance(axis, int) or is_none(axis) or (
            isinstance(axis, types.IntegerLiteral) and axis.literal_value == 0)):
        # the cotangents of a list of numbers are numbers
        return lambda g, axis=0: [g[i] for i in range(g.shape[0])]
    if isinstance(axis, int) or is_none(axis) or (
            isinstance(axis, types.IntegerLiteral) and axis.literal_value == 0):
        return lambda g, axis=0: [np.ascontiguousarray(g[i]) for i in range(g.shape[0])]

    if not isinstance(axis, types.Integer):
        raise TypingError("unstack: axis must be an int")

    def impl(g, axis=0):
        moved = np.moveaxis(g, axis, 0)
        return [np.ascontiguousarray(moved[i]) for i in range(moved.shape[0])]
    return impl


_BLOCK_CACHE = {}


def _block(ndim):
    """``g`` sliced ``start:stop`` along a run-time ``axis`` (one branch per axis)."""
    if ndim not in _BLOCK_CACHE:
        lines = ["def block(g, axis, start, stop):"]
        for d in range(ndim):
            index = ", ".join([":"] * d + ["start:stop"])
            lines.append(f"    if axis == {d}:")
            lines.append(f"        return np.ascontiguousarray(g[{index}])")
        lines.append("    return np.ascontiguousarray(g[start:stop])")
        _BLOCK_CACHE[ndim] = jitable_from_source("\n".join(lines), "block")
    return _BLOCK_CACHE[ndim]


@overload(runtime.unconcatenate, jit_options=CACHED)
def _unconcatenate(g, arrays, axis=0):
    if not is_array(g) or is_none(axis) or not isinstance(
            arrays, (types.List, types.UniTuple)) or not is_array(arrays.dtype):
        raise TypingError("unconcatenate: compiled for a list of arrays of one rank and an "
                          "integer axis")
    block = _block(g.ndim)
    ndim = g.ndim

    def impl(g, arrays, axis=0):
        ax = axis % ndim
        # extents from sizes, pieces shaped like their arrays: vstack/hstack
        # first promote 1-d arrays to 2-d (see runtime.unconcatenate)
        across = g.size // g.shape[ax] if g.shape[ax] else 1
        out = []
        start = 0
        for x in arrays:
            stop = start + x.size // max(across, 1)
            out.append(block(g, ax, start, stop).reshape(x.shape))
            start = stop
        return out
    return impl


def stack_items(items, n, reverse):
    """``np.stack(items[:n])`` (``reverse``: last item first) for a list of
    equally shaped arrays or of numbers: a scan's stacked outputs."""
    items = list(items[:n])
    if reverse:
        items = items[::-1]
    return np.stack([np.asarray(i) for i in items])


@overload(stack_items, jit_options=CACHED)
def _stack_items(items, n, reverse):
    item = items.dtype
    if is_array(item):
        def impl(items, n, reverse):
            first = items[0]
            out = np.empty((n,) + first.shape, first.dtype)
            for k in range(n):
                out[n - 1 - k if reverse else k] = items[k]
            return out
        return impl

    dtype = as_dtype(item)

    def impl_numbers(items, n, reverse):
        out = np.empty(n, dtype)
        for k in range(n):
            out[n - 1 - k if reverse else k] = items[k]
        return out
    return impl_numbers
