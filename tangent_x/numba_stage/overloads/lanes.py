"""vmap's lane helpers (arrays and numbers; pytrees are flattened by jit):
``broadcast_lanes``, ``select_lanes``, and ``WeakLanes``, the type of the
lanes of a Python number."""
import numpy as np
from numba import types
from numba.core.datamodel.models import ArrayModel
from numba.core.datamodel.registry import register_default
from numba.core.imputils import impl_ret_borrowed, lower_cast
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

from ... import runtime
from ..kernels.allocation import empty
from ..kernels.common import is_array
from ..kernels.loops import broadcast_fill


class WeakLanes(types.Array):
    """Numba's type of ``broadcast_lanes`` of a Python number (eagerly
    ``lanes.WeakLanes``): lanes each holding a Python number, weak in NumPy's
    sense.  A loop carry that starts as one (``acc = 0.0`` before ``acc =
    acc + np.sum(x)``) is typed first as these lanes, then as the array the
    loop makes of them: the two unify to the latter, its dtype included (a
    float32 sum keeps the carry float32, as NumPy does), and the first lanes
    are cast to it where they meet (``weak_scalar`` of the lanes, and the
    loop's entry)."""

    def __init__(self, dtype, ndim, layout):
        super().__init__(dtype, ndim, layout, name=f"weak_lanes({dtype}, {ndim}d, {layout})")

    def unify(self, typingctx, other):
        if not isinstance(other, types.Array) or other.ndim != self.ndim:
            return None
        if isinstance(other, WeakLanes):
            dtype = typingctx.unify_pairs(self.dtype, other.dtype)
            if dtype is None:
                return None
            return WeakLanes(dtype, self.ndim, self.layout if self.layout == other.layout
                             else "A")
        if other.layout == self.layout:
            return types.Array(other.dtype, other.ndim, other.layout)
        return types.Array(other.dtype, other.ndim, "A")


register_default(WeakLanes)(ArrayModel)


@intrinsic
def as_weak_lanes(typingctx, arr):
    """``arr`` (a fresh array) typed as ``WeakLanes``: the same data."""
    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])
    return WeakLanes(arr.dtype, arr.ndim, arr.layout)(arr), codegen


@lower_cast(WeakLanes, types.Array)
def _weak_lanes_to_array(context, builder, fromty, toty, val):
    plain = types.Array(fromty.dtype, fromty.ndim, fromty.layout)
    if fromty.dtype == toty.dtype:
        return context.cast(builder, val, plain, toty) if plain != toty else val
    dtype = as_dtype(toty.dtype)

    def convert(a):
        return a.astype(dtype)
    out_type = types.Array(toty.dtype, fromty.ndim, "C")
    res = context.compile_internal(builder, convert, out_type(plain), [val])
    return context.cast(builder, res, out_type, toty) if out_type != toty else res


@overload(runtime.broadcast_lanes)
def _broadcast_lanes(x, batch_size):
    if not is_array(x):
        return lambda x, batch_size: np.full(batch_size, x)
    fill = broadcast_fill(x.ndim, x.ndim + 1)
    return lambda x, batch_size: fill(x, (batch_size,) + x.shape, x.dtype)


@overload(runtime.select_lanes)
def _select_lanes(pred, on_true, on_false):
    """Lane ``k`` of ``on_true`` where ``pred[k]``, else of ``on_false``: one
    loop over the lanes and the elements of each (no slice assignment)."""
    if not is_array(pred):
        return None
    if not is_array(on_true) and not is_array(on_false):
        return lambda pred, on_true, on_false: np.where(pred, on_true, on_false)

    if not is_array(on_true) or not is_array(on_false):
        return None        # vmap gives both sides the batch axis first (lanes_of)

    def impl(pred, on_true, on_false):
        a = np.ascontiguousarray(on_true)
        b = np.ascontiguousarray(on_false)
        out = empty(a.shape, a.dtype)
        n = pred.shape[0]
        per = a.size // n if n else 0
        flat = out.reshape(a.size)
        fa = a.reshape(a.size)
        fb = b.reshape(b.size)
        for k in range(n):
            take = pred[k]
            for j in range(per):
                i = k * per + j
                flat[i] = fa[i] if take else fb[i]
        return out
    return impl
