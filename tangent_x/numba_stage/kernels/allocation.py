"""``empty``: a C-ordered array allocated by Numba's own allocation code,
lowered in place where it is called (what every helper allocates with)."""
from numba import types
from numba.extending import intrinsic


@intrinsic
def empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)`` (C-ordered), lowered in place by Numba's
    own allocation code.  Why not ``np.empty``: Numba's is an overload,
    i.e. one more compiled function for every (shape, dtype) type, linked
    into and compiled again in every caller (four of them, ~0.35 s, in the
    cold compile of the benchmark's MLP gradient); this costs nothing to
    compile.  The runtime's helpers allocate with it."""
    from numba.np.arrayobj import _empty_nd_impl, _parse_shape
    if isinstance(shape, types.Integer):
        ndim = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                    for t in shape):
        ndim = len(shape)
    else:
        return None
    if isinstance(dtype, types.DType):
        item = dtype.dtype
    elif isinstance(dtype, types.NumberClass):
        item = dtype.instance_type
    else:
        return None
    arrtype = types.Array(item, ndim, "C")

    def codegen(context, builder, sig, args):
        shapes = _parse_shape(context, builder, sig.args[0], args[0])
        return _empty_nd_impl(context, builder, arrtype, shapes)._getvalue()
    return arrtype(shape, dtype), codegen
