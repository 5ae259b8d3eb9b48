"""The scatter of selected rows, one home for ``unindex``'s cotangent and the
compiled ``np.<ufunc>.at``: values combined into the rows of an array
that an integer array or a boolean mask selects, one selected row at a
time, in order, so that repeated rows combine."""
import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..bounds import checked
from ..kernels.common import CACHED, is_array

# how a value meets the row's: np.minimum, np.maximum, np.multiply, +
MINIMUM, MAXIMUM, MULTIPLY, ADD = 0, 1, 2, 3


def _flat_rows(b, m, trailing):
    """``b`` broadcast to ``m`` rows of shape ``trailing`` (the selection of
    an index array or mask), flat; a number: one entry."""
    return None


@overload(_flat_rows, jit_options=CACHED)
def _flat_rows_impl(b, m, trailing):
    if is_array(b):
        def rows(b, m, trailing):
            target = (m,) + trailing
            out = np.empty(target, b.dtype)
            out[...] = np.broadcast_to(b, target)
            return out.reshape(-1)
        return rows
    return lambda b, m, trailing: np.full(1, b)


@register_jitable
def _combine(op, old, new):
    if op == MULTIPLY:
        return old * new
    if old != old or new != new:        # NaN propagates, as np.minimum does
        return old + new
    if op == MINIMUM:
        return min(old, new)
    return max(old, new)


@register_jitable(inline="always")
def _added(op, old, new):
    return old + new


def selects_rows(index):
    """Whether ``row_scatter`` takes the index of Numba type ``index``: a 1-d
    integer array, or a boolean mask (over as many leading axes as it has)."""
    return is_array(index) and (index.ndim == 1 or isinstance(index.dtype, types.Boolean))


def row_scatter(index, op):
    """The function ``scatter(a, indices, b)`` for an index of Numba type
    ``index`` (see ``selects_rows``): ``b`` broadcast to the rows of ``a``
    that ``indices`` selects, each combined into ``a`` by ``op`` (ADD, or the
    ufunc MINIMUM, MAXIMUM, MULTIPLY), one selected row at a time, in order.
    Inlined where another implementation calls it (no compiled function of
    its own), or an implementation itself."""
    mask = isinstance(index.dtype, types.Boolean)
    lead = index.ndim if mask else 1        # axes the index selects over
    combine = _added if op == ADD else _combine

    # named as np.<ufunc>.at's arguments: it is that overload's implementation
    def scatter(a, indices, b):
        checked(a, indices)
        af = a.reshape(-1)
        flat_index = np.ascontiguousarray(indices).reshape(-1)
        row = af.size // max(a.shape[0] if not mask else flat_index.size, 1)
        m = flat_index.size if not mask else np.sum(flat_index)
        bf = _flat_rows(b, m, a.shape[lead:])   # b broadcast to the selected rows
        n = bf.size
        j = 0
        for i in range(flat_index.size):
            if mask:
                if not flat_index[i]:
                    continue
                k = i
            else:
                k = flat_index[i]
                if k < 0:
                    k += a.shape[0]
            for r in range(row):
                af[k * row + r] = combine(op, af[k * row + r], bf[(j * row + r) % n])
            j += 1
    return register_jitable(inline="always")(scatter)
