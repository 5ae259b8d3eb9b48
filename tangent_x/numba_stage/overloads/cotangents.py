"""The runtime's small cotangent helpers: ``zeros_like`` (of a value that
may be None too), ``check_grad_output``, ``stop_gradient``, ``tree_add`` (and ``as_item``,
a cotangent stored into a list of them), ``iteration_item``."""
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import lower_builtin, overload, type_callable
from numba.np.numpy_support import as_dtype

from ... import runtime
from ...runtime.checks import integer_output_message
from ..kernels.common import CACHED, is_array
from .assigned import optional_value


@overload(runtime.zeros_like, jit_options=CACHED)
def _zeros_like(x):
    if isinstance(x, types.Optional):
        # A value that may still be None (a return value not yet assigned,
        # read only where it was): its zero is the zero of its type.
        inner = x.type
        if is_array(inner):
            # Eagerly the zero of None is None, a symbolic zero no
            # arithmetic reads: here a zero of the array's type that
            # broadcasts (shape (1, ..., 1)) stands in for it.
            ones, dtype = (1,) * inner.ndim, as_dtype(inner.dtype)

            def optional_array(x):
                if x is None:
                    return np.zeros(ones, dtype)
                return np.zeros_like(optional_value(x))
            return optional_array

        def optional(x):
            if x is None:
                return 0.0
            return 0.0 * x
        return optional
    if isinstance(x, types.NoneType):
        # a variable started as None, typed before the loop's assignments
        # are: resolved once they are (a None known when specialising is
        # zero there, see specialize/container_calls.py)
        return None
    if is_array(x):
        return None            # lowered in place: see ``_zeros_like_array``
    if isinstance(x, types.List):
        # a list filled in a loop: a list as long of its items' zeros
        return lambda x: [runtime.zeros_like(x[i]) for i in range(len(x))]
    if isinstance(x, types.BaseTuple):
        # item by item (Numba has no map over a tuple of mixed types)
        if len(x) == 0:
            return lambda x: ()
        return lambda x: (runtime.zeros_like(x[0]),) + runtime.zeros_like(x[1:])
    if isinstance(x, types.Integer) or isinstance(x, types.Boolean):
        return lambda x: 0.0
    return lambda x: 0.0 * x


@type_callable(runtime.zeros_like)
def _zeros_like_array_type(context):
    def typer(x):
        if is_array(x):      # (an integer's cotangent is a float zero, as eagerly)
            dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) \
                else types.float64
            return types.Array(dtype, x.ndim, "C")
    return typer


@lower_builtin(runtime.zeros_like, types.Array)
def _zeros_like_array(context, builder, sig, args):
    """The zeros of an array (C-ordered, as ``np.zeros_like`` of the arrays
    the numba stage sees), allocated and cleared in place: no compiled
    function of its own (an overload calling ``np.zeros_like`` was two, ~0.5 s
    of a cold first call per rank on the loaded 2-CPU machine of session 13)."""
    # local import: Numba's array internals, needed only when lowering
    from numba.np.arrayobj import _empty_nd_impl, make_array
    (aryty,), (ary,) = sig.args, args
    shapes = cgutils.unpack_tuple(builder, make_array(aryty)(context, builder, ary).shape,
                                  aryty.ndim)
    out = _empty_nd_impl(context, builder, sig.return_type, shapes)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(
        context.get_data_type(sig.return_type.dtype)))
    cgutils.memset(builder, out.data, builder.mul(itemsize, out.nitems), 0)
    return out._getvalue()


@overload(runtime.check_grad_output, jit_options=CACHED)
def _check_grad_output(y, still_int=False):
    if isinstance(y, (types.Optional, types.NoneType)):
        def maybe_none(y, still_int=False):
            if y is None:
                raise TypeError("Gradient only defined for scalar-output functions. "
                                "Output was None.")
        return maybe_none
    if is_array(y) and y.ndim > 0:
        message = ("Gradient only defined for scalar-output functions. "
                   f"Output was an array of {y.ndim} dimension{'s' if y.ndim > 1 else ''}.")

        def impl(y, still_int=False):
            raise TypeError(message)
        return impl
    if isinstance(getattr(y, "dtype", y), (types.Integer, types.Boolean)):
        message = integer_output_message(
            "bool" if isinstance(getattr(y, "dtype", y), types.Boolean) else
            str(getattr(y, "dtype", y)))

        def integer_output(y, still_int=False):
            raise TypeError(message)
        return integer_output
    if isinstance(getattr(y, "dtype", y), types.Complex):
        def complex_output(y, still_int=False):
            raise TypeError("grad requires real-valued outputs (output dtype that is a "
                            "sub-dtype of np.floating); tangent_x differentiates real "
                            "values only")
        return complex_output
    if isinstance(still_int, (types.Omitted, bool)):
        return lambda y, still_int=False: None
    message = integer_output_message("int64")

    def float_or_still_int(y, still_int=False):
        # a float to Numba, Python's int where the loop never assigned it
        if still_int:
            raise TypeError(message)
    return float_or_still_int


@overload(runtime.stop_gradient, jit_options=CACHED)
def _stop_gradient(x):
    return lambda x: x


@overload(runtime.tree_add, jit_options=CACHED)
def _tree_add(a, b):
    if isinstance(a, types.NoneType):
        return lambda a, b: b
    if isinstance(b, types.NoneType):
        return lambda a, b: a
    if isinstance(a, types.List) and isinstance(b, types.List):
        def items(a, b):
            # the cotangents of a run-time list add item by item (a + b of
            # two lists would join them)
            if len(a) != len(b):
                raise ValueError("cannot add the cotangents of lists of different lengths")
            return [runtime.tree_add(a[i], b[i]) for i in range(len(a))]
        return items
    if isinstance(a, types.BaseTuple) and _sequence(b):
        # an item of a list of lists (kept as a tuple of its items) and its
        # cotangent as a list, or as an array's row (``np.array(m)``'s)
        if len(a) == 0:
            return lambda a, b: ()
        return lambda a, b: (runtime.tree_add(a[0], b[0]),) + runtime.tree_add(a[1:], b[1:])
    if isinstance(a, types.List) and is_array(b) and b.ndim >= 1:
        # a list's cotangent and an array's made from it (``np.array(items)``)
        def rows(a, b):
            if len(a) != b.shape[0]:
                raise ValueError("cannot add the cotangents of a list and an array of "
                                 "different lengths")
            return [runtime.tree_add(a[i], b[i]) for i in range(len(a))]
        return rows
    if _sequence(a) and isinstance(b, (types.BaseTuple, types.List)):
        return lambda a, b: runtime.tree_add(b, a)
    if isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple) and len(a) == len(b):
        # an item of a list of tuples (a + b of two tuples would join them)
        if len(a) == 0:
            return lambda a, b: ()
        return lambda a, b: (runtime.tree_add(a[0], b[0]),) + runtime.tree_add(a[1:], b[1:])
    return lambda a, b: a + b


def _sequence(t):
    return isinstance(t, types.List) or is_array(t) and t.ndim >= 1


@overload(runtime.iteration_item, jit_options=CACHED)
def _iteration_item(items, k):
    return lambda items, k: items[k]


def as_item(g, like):
    """(compiled code only) The cotangent ``g`` in the float dtypes of
    ``like``, the item of a list of cotangents it replaces: a compiled
    list's items have one type, where NumPy's list holds whatever the sum
    gave (a float32 item plus a float64 cotangent is float64 there).  The
    gradient is cast to its argument's dtype in the end either way, as in
    JAX, whose cotangents have their primal's dtype; the two differ by
    float32's rounding of the intermediate sum (``joins``' module doc)."""
    return g


@overload(as_item, jit_options=CACHED)
def _as_item(g, like):
    if isinstance(g, types.BaseTuple) and isinstance(like, types.BaseTuple) and \
            len(g) == len(like):
        if len(g) == 0:
            return lambda g, like: ()
        return lambda g, like: (as_item(g[0], like[0]),) + as_item(g[1:], like[1:])
    if is_array(g) and is_array(like) and g.ndim == like.ndim and g.dtype != like.dtype and \
            _floats(g.dtype, like.dtype):
        dtype = as_dtype(like.dtype)
        return lambda g, like: g.astype(dtype)
    if isinstance(g, types.Number) and isinstance(like, types.Number) and g != like and \
            _floats(g, like):
        dtype = as_dtype(like)
        return lambda g, like: dtype.type(g)
    return lambda g, like: g


def _floats(a, b):
    """Whether the Numba number types ``a`` and ``b`` are both real floats
    or both complex (a cast between them keeps the value's kind)."""
    return isinstance(a, types.Float) and isinstance(b, types.Float) or \
        isinstance(a, types.Complex) and isinstance(b, types.Complex)
