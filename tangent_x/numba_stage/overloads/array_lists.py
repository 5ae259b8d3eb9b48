"""NumPy's joins of a list of arrays (``np.stack``, ``np.concatenate``,
``np.array`` of a list a loop filled), which Numba's own take as tuples
only.  A compiled list holds arrays of one dtype and rank (Numba types its
items once), so the result's dtype and rank are NumPy's; the shapes are
checked when the code runs, with NumPy's messages."""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..kernels.common import CACHED, is_array, is_none


def _array_list(arrays):
    """Whether ``arrays`` is the Numba type of a list of arrays."""
    return isinstance(arrays, types.List) and is_array(arrays.dtype)


def _static_axis(axis, ndim, name):
    """The axis of a join, a constant in ``range(ndim)`` (``ndim``: the
    result's rank): Numba's typing needs it to order the result's axes."""
    if axis is None or isinstance(axis, types.Omitted) and axis.value in (0, None):
        return 0
    if isinstance(axis, types.Omitted):
        value = axis.value
    elif isinstance(axis, types.IntegerLiteral):
        value = axis.literal_value
    elif isinstance(axis, int):
        value = axis
    else:
        raise TypingError(f"{name} of a list of arrays: compiled for a constant axis")
    if not -ndim <= value < ndim:
        raise TypingError(f"{name}: axis {value} is out of bounds for an array of "
                          f"dimension {ndim}")
    return value % ndim


def _moved(ndim, axis):
    """The axes order putting axis 0 at ``axis`` (a transpose's argument)."""
    order = list(range(1, ndim))
    order.insert(axis, 0)
    return tuple(order)


@overload(np.stack, jit_options=CACHED)
def _stack_arrays(arrays, axis=0):
    """``np.stack`` of a list of equally shaped arrays."""
    if not _array_list(arrays):
        return None
    ndim = arrays.dtype.ndim + 1
    at = _static_axis(axis, ndim, "np.stack")
    order = _moved(ndim, at)

    def impl(arrays, axis=0):
        n = len(arrays)
        if n == 0:
            raise ValueError("need at least one array to stack")
        first = arrays[0]
        out = np.empty((n,) + first.shape, first.dtype)
        for k in range(n):
            if arrays[k].shape != first.shape:
                raise ValueError("all input arrays must have the same shape")
            out[k] = arrays[k]
        if at == 0:
            return out
        return np.ascontiguousarray(np.transpose(out, order))
    return impl


@overload(np.concatenate, jit_options=CACHED)
def _concatenate_arrays(arrays, axis=0):
    """``np.concatenate`` of a list of arrays of one rank (at least 1) whose
    shapes agree but along ``axis``."""
    if not _array_list(arrays):
        return None
    if is_none(axis):
        return None
    ndim = arrays.dtype.ndim
    if ndim == 0:
        raise TypingError("zero-dimensional arrays cannot be concatenated")
    at = _static_axis(axis, ndim, "np.concatenate")
    order = _moved(ndim, at)
    back = tuple(order.index(d) for d in range(ndim))     # axis ``at`` first

    def impl(arrays, axis=0):
        n = len(arrays)
        if n == 0:
            raise ValueError("need at least one array to concatenate")
        first = np.transpose(arrays[0], back)
        total = 0
        for k in range(n):
            moved = np.transpose(arrays[k], back)
            if moved.shape[1:] != first.shape[1:]:
                raise ValueError("all the input array dimensions except for the "
                                 "concatenation axis must match exactly")
            total += moved.shape[0]
        out = np.empty((total,) + first.shape[1:], first.dtype)
        start = 0
        for k in range(n):
            moved = np.transpose(arrays[k], back)
            out[start:start + moved.shape[0]] = moved
            start += moved.shape[0]
        if at == 0:
            return out
        return np.ascontiguousarray(np.transpose(out, order))
    return impl


@overload(np.array, jit_options=CACHED)
def _np_array_of_list(object):
    if _array_list(object):
        return lambda object: np.stack(object)
    return None


@overload(np.asarray, jit_options=CACHED)
def _asarray_of_list(a):
    if _array_list(a):
        return lambda a: np.stack(a)
    return None
