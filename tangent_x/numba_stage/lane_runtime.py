"""Numba helpers of the compiled loop over examples (``lane_loop``).

Two jobs, each for a per-example result that is an array of any rank or a
number: ``lane_buffer`` allocates the batched result from the first
example's (its shape and dtype are known only once an example has run:
value-dependent shapes are allowed, as long as every example agrees), and
``set_lane`` writes one example into it.  The copy is an element loop, not
``buf[k] = value``: Numba's slice assignment costs seconds of compile the
first time a process uses it, and the loop is what it would run anyway.
"""
import numpy as np
from numba.core import types
from numba.extending import overload

__all__ = ["lane_buffer", "set_lane"]


def lane_buffer(first, batch_size):
    """An uninitialised ``(batch_size,) + shape(first)`` array of ``first``'s dtype."""
    first = np.asarray(first)
    return np.empty((batch_size,) + first.shape, first.dtype)


def set_lane(buf, k, value):
    """``buf[k] = value``, after checking that ``value`` has the shape of
    the examples before it."""
    if np.shape(value) != buf.shape[1:]:
        raise ValueError(_RAGGED)
    buf[k] = value


_RAGGED = ("vmap: the examples' results have different shapes; a batched result "
           "needs one shape for every example")


@overload(lane_buffer)
def _lane_buffer(first, batch_size):
    if isinstance(first, types.Array):
        return lambda first, batch_size: np.empty((batch_size,) + first.shape, first.dtype)
    return lambda first, batch_size: np.full(batch_size, first)


@overload(set_lane)
def _set_lane(buf, k, value):
    if not isinstance(value, types.Array):
        def scalar(buf, k, value):
            buf[k] = value
        return scalar

    def impl(buf, k, value):
        if value.shape != buf.shape[1:]:
            raise ValueError(_RAGGED)
        row = buf[k].reshape(value.size)
        flat = np.ascontiguousarray(value).reshape(value.size)
        for j in range(value.size):
            row[j] = flat[j]
    return impl
