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


@intrinsic
def zeros_view(typingctx, shape):
    """``np.broadcast_to(0.0, shape)`` (read-only float64 zeros, every
    stride 0, no memory per element), lowered in place: a view of one
    constant zero.  Why not ``np.broadcast_to``: Numba's is a compiled
    function per shape type with two more under it (~0.8 s of a cold first
    call per rank, on the loaded 2-CPU machine of session 13)."""
    from llvmlite import ir
    from numba.core import cgutils
    from numba.np.arrayobj import make_array, populate_array
    if not (isinstance(shape, types.BaseTuple) and len(shape) > 0 and
            all(isinstance(t, types.Integer) for t in shape)):
        return None
    ndim = len(shape)
    arrtype = types.Array(types.float64, ndim, "A", readonly=True)

    def codegen(context, builder, sig, args):
        zero = cgutils.global_constant(builder, "tangent_x_zeros_view_zero",
                                       ir.Constant(ir.DoubleType(), 0.0))
        intp = context.get_value_type(types.intp)
        shapes = [context.cast(builder, v, t, types.intp)
                  for v, t in zip(cgutils.unpack_tuple(builder, args[0], ndim), shape)]
        ary = make_array(arrtype)(context, builder)
        populate_array(ary, data=builder.bitcast(zero, ary.data.type),
                       shape=cgutils.pack_array(builder, shapes, ty=intp),
                       strides=cgutils.pack_array(builder, [ir.Constant(intp, 0)] * ndim, ty=intp),
                       itemsize=context.get_constant(types.intp, 8), meminfo=None)
        return ary._getvalue()
    return arrtype(shape), codegen
