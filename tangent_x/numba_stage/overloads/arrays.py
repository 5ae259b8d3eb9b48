"""NumPy's array queries and constructors, compiled cheaply: ``ndim``,
``size`` (lowered in place), ``array``, ``clip`` of numbers and arrays,
``full_like`` of numbers and arrays."""
import numpy as np
from numba import types
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array

from ..kernels.common import CACHED, is_array
from .assigned import assigned


def clip(a, a_min, a_max):
    return np.clip(a, a_min, a_max)


@overload(clip, jit_options=CACHED)
def _clip(a, a_min, a_max):
    if is_array(a):
        return lambda a, a_min, a_max: np.clip(a, a_min, a_max)

    def scalar(a, a_min, a_max):
        v = a
        if a_min is not None and v < a_min:
            v = a_min
        if a_max is not None and v > a_max:
            v = a_max
        return v
    return scalar


def full_like(a, fill_value):
    return np.full_like(a, fill_value)


@overload(full_like, jit_options=CACHED)
def _full_like(a, fill_value):
    """``np.zeros_like``, ``np.ones_like``, ``np.full_like`` (specialize's
    rewrite): of a number, a number of its type, not Numba's 0-d array.
    NumPy's 0-d array computes as that number; as a compiled variable
    (a loop's carry starting at ``np.zeros_like(x[0])``) a 0-d array and
    a number are two types, which Numba cannot join."""
    if is_array(a):
        return lambda a, fill_value: np.full_like(a, fill_value)
    if isinstance(a, (types.Number, types.Boolean)):
        kind = a

        def number(a, fill_value):
            return kind(fill_value)
        return number


def ndim(a):
    return np.ndim(a)


@overload(ndim, jit_options=CACHED)
def _ndim(a):
    if isinstance(a, types.Optional):
        # a loop's variable that starts unbound, read where it holds a
        # value (see indexing.unindex): the value's, not a number's
        return lambda a: ndim(assigned(a))
    n = a.ndim if is_array(a) else 0
    return lambda a: n


def size(a):
    return np.size(a)


@intrinsic
def _size(typingctx, a):
    """``a.size``, 1 for a number, lowered in place (Numba's ``np.size`` is
    two compiled functions per type: ``np.asarray`` and the size; the
    rules' ``np.size(a) / np.size(ans)`` of a mean is in every MLP loss)."""
    def codegen(context, builder, sig, args):
        if is_array(sig.args[0]):
            return make_array(sig.args[0])(context, builder, args[0]).nitems
        return context.get_constant(types.intp, 1)
    if is_array(a) or isinstance(a, (types.Number, types.Boolean)):
        return types.intp(a), codegen
    return None


@overload(size)
def _size_overload(a):
    if isinstance(a, types.Optional):          # (as ndim's)
        return lambda a: _size(assigned(a))
    return lambda a: _size(a)


def array(object):
    """``np.array(object)``: a copy of an array, or an array of a tuple of
    numbers or of a tuple or list of equally shaped arrays."""
    return np.array(object)


@overload(array, jit_options=CACHED)
def _array(object):
    if is_array(object):
        return lambda object: object.copy()
    if isinstance(object, types.BaseTuple) and len(object) and \
            all(is_array(t) for t in object):
        return lambda object: np.stack(object)
    if isinstance(object, types.List) and is_array(object.dtype):
        return lambda object: np.stack(object)      # (overloads.array_lists)
    if isinstance(object, (types.Number, types.Boolean)):
        return lambda object: np.full((), object)
    return lambda object: np.array(object)
