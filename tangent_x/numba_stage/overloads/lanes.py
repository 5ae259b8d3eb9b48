"""vmap's lane helpers (arrays and numbers; pytrees are flattened by jit):
``broadcast_lanes``, ``select_lanes``, ``unbroadcast_lanes``, and
``WeakLanes``, the type of the lanes of a Python number."""
import numpy as np
from numba import literally, types
from numba.core.datamodel.models import ArrayModel
from numba.core.datamodel.registry import register_default
from numba.core.imputils import impl_ret_borrowed, lower_cast
from numba.extending import intrinsic, overload, register_jitable
from numba.core.errors import TypingError
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


@overload(runtime.number_lanes)
def _number_lanes(x, kind):
    """``float(v)`` ... of each lane: ``WeakLanes`` of float64, int64, bool."""
    name = getattr(kind, "literal_value", None)
    if not is_array(x) or name not in ("float", "int", "bool"):
        return None
    dtype = {"float": np.float64, "int": np.int64, "bool": np.bool_}[name]
    return lambda x, kind: as_weak_lanes(np.ascontiguousarray(x).astype(dtype))


# the start of select_lanes' refusal of sides of two kinds (compile_errors reads it)
SELECT_KINDS = "the two sides of a batched branch hold different kinds of numbers"


@overload(runtime.select_lanes)
def _select_lanes(pred, on_true, on_false):
    """Lane ``k`` of ``on_true`` where ``pred[k]``, else of ``on_false``: one
    loop over the lanes and the elements of each (no slice assignment)."""
    if not is_array(pred):
        return None
    sides = [t.type if isinstance(t, types.Optional) else t for t in (on_true, on_false)]
    if all(is_array(t) or isinstance(t, types.Number) for t in sides):
        kinds = {as_dtype(getattr(t, "dtype", t)).kind for t in sides}
        if len(kinds - {"b"}) > 1 or kinds == {"b", "f"} or kinds == {"b", "c"}:
            # eagerly the lanes take the dtype of the side every lane took:
            # compiled code has one, so no path can be followed exactly
            raise TypingError(f"{SELECT_KINDS}: integers on one side of a batched "
                              f"branch and floats on the other ({sides[0]}, {sides[1]})")
    if isinstance(on_true, types.Optional) or isinstance(on_false, types.Optional):
        # a side computed only where some lane takes it (``a and b``: ``b``
        # is None where no lane reads it, fuzz seed 570052)
        def impl_optional(pred, on_true, on_false):
            if on_true is None:
                if np.any(pred):
                    raise ValueError("select_lanes: a lane takes a side that was not computed")
                return _select_present(pred, on_false, on_false)
            if on_false is None:
                if not np.all(pred):
                    raise ValueError("select_lanes: a lane takes a side that was not computed")
                return _select_present(pred, on_true, on_true)
            return _select_present(pred, on_true, on_false)
        return impl_optional
    return lambda pred, on_true, on_false: _select_present(pred, on_true, on_false)


def _select_present(pred, on_true, on_false):
    """``select_lanes`` of sides that hold values (Numba casts an optional
    side to its value here, where it is not None)."""


@overload(_select_present)
def _select_present_impl(pred, on_true, on_false):
    if isinstance(on_true, types.Optional) or isinstance(on_false, types.Optional):
        return None     # (Numba then types the call with the values, cast where it is made)
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


@register_jitable
def _sum_into_lanes(g, out, lead, shape):
    """Add every element of the C-contiguous ``g`` (batch axis first) into
    its place in ``out`` (batch axis, then ``shape``): ``lead`` axes after
    the batch axis are summed, and a size-1 axis of ``shape`` takes index 0."""
    n = g.shape[0]
    flat_g = g.reshape(g.size)
    flat_out = out.reshape(out.size)
    per_out = out.size // n if n else 0
    for k in range(g.size):
        rest = k
        place = 0
        stride = 1
        for d in range(g.ndim - 1, 0, -1):
            i = rest % g.shape[d]
            rest //= g.shape[d]
            axis = d - 1 - lead
            if axis >= 0:
                if shape[axis] != 1:
                    place += i * stride
                stride *= shape[axis]
        flat_out[rest * per_out + place] += flat_g[k]


@overload(runtime.unbroadcast_lanes)
def _unbroadcast_lanes(g, x, x_batched=False):
    """A batched cotangent ``g`` summed, lane by lane, to the shape of one
    example of ``x`` (see the runtime's): ranks are known now, which axes
    of ``x`` have size 1 is not, so the general case is one pass over
    ``g``'s elements adding each into its place.  A cotangent already of
    the example's shape is returned as it is."""
    if not is_array(g):
        return None
    if isinstance(x_batched, bool):       # omitted: the default
        batched = x_batched
    elif isinstance(x_batched, types.Omitted):
        batched = bool(x_batched.value)
    elif isinstance(x_batched, types.BooleanLiteral):
        batched = bool(x_batched.literal_value)
    elif isinstance(x_batched, types.Boolean):
        return lambda g, x, x_batched=False: literally(x_batched)
    else:
        return None
    x_rank = (x.ndim if is_array(x) else 0) - (1 if batched else 0)
    lead = g.ndim - 1 - x_rank
    if x_rank == 0:
        def per_lane_sum(g, x, x_batched=False):
            gc = np.ascontiguousarray(g)
            n = gc.shape[0]
            return gc.reshape((n, gc.size // n if n else 0)).sum(axis=1)
        return per_lane_sum
    if lead < 0:
        def widen(g, x, x_batched=False):
            # a cotangent of lower rank than the example: broadcast up to it
            shape = np.shape(x)[1:] if batched else np.shape(x)
            gc = np.ascontiguousarray(g)
            n = gc.shape[0]
            out = np.empty((n,) + shape, gc.dtype)
            flat_g = gc.reshape(gc.size)
            flat_out = out.reshape(out.size)
            per_out = out.size // n if n else 0
            per_g = gc.size // n if n else 0
            for k in range(out.size):
                b = k // per_out
                flat_out[k] = flat_g[b * per_g + (k - b * per_out) % per_g]
            return out
        return widen

    def summed(g, x, x_batched=False):
        shape = np.shape(x)[1:] if batched else np.shape(x)
        gc = np.ascontiguousarray(g)
        out = np.zeros((gc.shape[0],) + shape, gc.dtype)
        _sum_into_lanes(gc, out, lead, shape)
        return out
    if lead == 0 and g.layout == "C":
        def maybe_as_it_is(g, x, x_batched=False):
            shape = np.shape(x)[1:] if batched else np.shape(x)
            if g.shape[1:] == shape:
                return g
            out = np.zeros(g.shape[:1] + shape, g.dtype)
            _sum_into_lanes(g, out, lead, shape)
            return out
        return maybe_as_it_is
    return summed
