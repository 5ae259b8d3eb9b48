"""Shape functions compiled with the options Numba's NumPy lacks:
``transpose``, ``squeeze`` and ``expand_dims`` by axis, ``moveaxis``,
``broadcast_to``, ``reshape``, ``cumsum``, ``flip``, ``whole``; and the
eager forms of ``tile``, ``diagonal`` and ``repeat`` (implemented, with
``cumsum`` and ``flip`` along an axis, in ``shape_ops``)."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..kernels.common import CACHED, count_axes, is_array, is_none
from ..kernels.loops import axes_tuple, broadcast_fill, function_from_source
from .assigned import assigned


def transpose(a, axes):
    """``np.transpose(a, axes)``; compiled by Numba too."""
    return np.transpose(a, axes)


@overload(transpose, jit_options=CACHED)
def _transpose(a, axes):
    if isinstance(a, types.Optional):
        # a loop's variable that starts unbound, read where it holds a value
        # (see indexing.unindex): taken for a number, it came back untransposed
        return lambda a, axes: transpose(assigned(a), axes)
    if not is_array(a):
        return lambda a, axes: a
    if is_none(axes):
        return lambda a, axes: np.transpose(a)
    return lambda a, axes: np.transpose(a, axes)


def squeeze(a, axis):
    """``np.squeeze(a, axis)``; compiled by Numba too (``axis=None`` needs the
    sizes, so it is only compiled when they are 1 by rank: see the overload)."""
    return np.squeeze(a, axis)


@overload(squeeze, jit_options=CACHED)
def _squeeze(a, axis):
    if not is_array(a):
        return lambda a, axis: a
    xn = a.ndim
    if is_none(axis):
        raise TypingError("np.squeeze without axis has a result rank that depends on the "
                          "sizes; pass axis=")
    naxes = count_axes(axis, xn)
    n_out = xn - naxes
    to_tuple = register_jitable(axes_tuple(axis, xn))
    parts = ", ".join(f"kept[{d}]" for d in range(n_out)) + ("," if n_out == 1 else "")
    src = "\n".join([
        "def sq(a, axes):",
        f"    kept = empty({max(n_out, 1)}, np.int64)",
        "    j = 0",
        f"    for d in range({xn}):",
        "        red = False",
        "        for ax in axes:",
        f"            if ax % {xn} == d:",
        "                red = True",
        "        if not red:",
        "            kept[j] = a.shape[d]",
        "            j += 1",
        f"    return np.ascontiguousarray(a).reshape(({parts}))"])
    sq = register_jitable(function_from_source(src, "sq"))
    return lambda a, axis: sq(a, to_tuple(axis))


def expand_dims(a, axis):
    """``np.expand_dims(a, axis)`` (axis may be a tuple); compiled by Numba too."""
    return np.expand_dims(a, axis)


@overload(expand_dims, jit_options=CACHED)
def _expand_dims(a, axis):
    xn = a.ndim if is_array(a) else 0
    naxes = count_axes(axis, xn)
    n_out = xn + naxes
    to_tuple = register_jitable(axes_tuple(axis, n_out))
    parts = ", ".join(f"shape[{d}]" for d in range(n_out)) + ("," if n_out == 1 else "")
    src = "\n".join([
        "def ex(a, axes):",
        "    arr = np.asarray(a)",
        f"    new = np.zeros({n_out}, np.bool_)",
        "    for ax in axes:",
        f"        new[ax % {n_out}] = True",
        f"    shape = empty({n_out}, np.int64)",
        "    j = 0",
        f"    for d in range({n_out}):",
        "        if new[d]:",
        "            shape[d] = 1",
        "        else:",
        "            shape[d] = arr.shape[j]",
        "            j += 1",
        f"    return np.ascontiguousarray(arr).reshape(({parts}))"])
    ex = register_jitable(function_from_source(src, "ex"))
    return lambda a, axis: ex(a, to_tuple(axis))


def moveaxis(a, source, destination):
    return np.moveaxis(a, source, destination)


@overload(moveaxis, jit_options=CACHED)
def _moveaxis(a, source, destination):
    return lambda a, source, destination: np.moveaxis(a, source, destination)


def broadcast_to(array, shape):
    """``np.broadcast_to`` (a writable copy when compiled)."""
    return np.broadcast_to(array, shape)


@overload(broadcast_to, jit_options=CACHED)
def _broadcast_to(array, shape):
    n = len(shape) if isinstance(shape, types.BaseTuple) else 1
    if not is_array(array):
        return lambda array, shape: np.full(shape, array)
    fill = broadcast_fill(array.ndim, n)
    return lambda array, shape: fill(array, shape, array.dtype)


def cumsum(a, axis):
    return np.cumsum(a, axis)


@overload(cumsum, jit_options=CACHED)
def _cumsum(a, axis):
    if is_none(axis):
        return lambda a, axis: np.cumsum(a)
    if is_array(a) and a.ndim == 1:
        return lambda a, axis: np.cumsum(a)
    raise TypingError("np.cumsum with axis on a multi-dimensional array is not compiled yet")


def flip(m, axis):
    return np.flip(m, axis)


@overload(flip, jit_options=CACHED)
def _flip(m, axis):
    if is_none(axis):
        return lambda m, axis: np.flip(m)
    if is_array(m) and m.ndim == 1:
        return lambda m, axis: m[::-1]
    raise TypingError("np.flip with axis on a multi-dimensional array is not compiled yet")


def reshape(a, shape):
    """``np.reshape``; compiled on a contiguous copy when the array is a view
    Numba cannot reshape in place."""
    return np.reshape(a, shape)


@overload(reshape, jit_options=CACHED)
def _reshape(a, shape):
    if not is_array(a):
        return lambda a, shape: np.full(shape, a) if False else np.array([a]).reshape(shape)
    if isinstance(shape, types.Integer):
        return lambda a, shape: np.ascontiguousarray(a).reshape((shape,))
    return lambda a, shape: np.ascontiguousarray(a).reshape(shape)


def whole(x):
    """``x[...]``: the whole array (a view), spelled for Numba."""
    return x[...]


@overload(whole, jit_options=CACHED)
def _whole(x):
    if is_array(x) and x.ndim == 0:
        return lambda x: x.reshape(1).reshape(())
    if is_array(x):
        return lambda x: x[:]
    return lambda x: x


# Implemented in shape_ops (which imports these):

def tile(A, reps):
    """``np.tile(A, reps)``; compiled by Numba too (see ``shape_ops``)."""
    return np.tile(A, reps)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` (a copy when compiled; see ``shape_ops``)."""
    return np.diagonal(a, offset, axis1, axis2)


def repeat(a, repeats, axis):
    """``np.repeat(a, repeats, axis)`` with an axis (see ``shape_ops``)."""
    return np.repeat(a, repeats, axis)
