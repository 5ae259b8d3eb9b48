"""Numba helpers of the compiled loop over examples (``lane_loop``).

Two jobs, each for a per-example result that is an array of any rank or a
number: ``lane_buffer`` allocates the batched result from the first
example's (its shape and dtype are known only once an example has run:
value-dependent shapes are allowed, as long as every example agrees), and
``set_lane`` writes one example into it.  The copy is an element loop, not
``buf[k] = value``: Numba's slice assignment costs seconds of compile the
first time a process uses it, and the loop is what it would run anyway.
A result Numba types as optional (a value returned from inside a loop:
None until that return runs) is its value, or a located error when an
example's result is None.
"""
import numpy as np
from numba.core import types
from numba.extending import overload

from .overloads.assigned import optional_value

__all__ = ["lane_buffer", "set_lane", "RAGGED"]


def lane_buffer(first, batch_size):
    """An uninitialised ``(batch_size,) + shape(first)`` array of ``first``'s dtype."""
    first = np.asarray(first)
    return np.empty((batch_size,) + first.shape, first.dtype)


def set_lane(buf, k, value):
    """``buf[k] = value``; returns 1 (and writes nothing) when ``value``'s
    shape is not the examples' before it, else 0.  A count, not an
    exception: an exception raised inside a ``prange`` loop does not reach
    the caller, so the driver sums these and raises after the loop."""
    if np.shape(value) != buf.shape[1:]:
        return 1
    buf[k] = value
    return 0


RAGGED = ("vmap: the examples' results have different shapes (or some are None); a "
          "batched result needs one shape for every example")
NO_VALUE = "vmap: the first example's result is None; a batched result needs a value"


@overload(lane_buffer)
def _lane_buffer(first, batch_size):
    if isinstance(first, types.Optional):
        def maybe(first, batch_size):
            if first is None:
                raise ValueError(NO_VALUE)
            return lane_buffer(optional_value(first), batch_size)
        return maybe
    if isinstance(first, types.Array):
        return lambda first, batch_size: np.empty((batch_size,) + first.shape, first.dtype)
    return lambda first, batch_size: np.full(batch_size, first)


@overload(set_lane)
def _set_lane(buf, k, value):
    if isinstance(value, types.Optional):
        def maybe(buf, k, value):
            if value is None:       # no value where example 0 had one
                return 1
            return set_lane(buf, k, optional_value(value))
        return maybe
    if not isinstance(value, types.Array):
        def scalar(buf, k, value):
            buf[k] = value
            return 0
        return scalar

    def impl(buf, k, value):
        if value.shape != buf.shape[1:]:
            return 1
        row = buf[k].reshape(value.size)
        flat = np.ascontiguousarray(value).reshape(value.size)
        for j in range(value.size):
            row[j] = flat[j]
        return 0
    return impl
