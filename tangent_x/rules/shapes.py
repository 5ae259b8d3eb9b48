"""Rules for shape ops: each moves entries without changing them, so its
adjoint moves the cotangent back (reshape back, transpose back, split what
was joined, sum what was copied).

Sequence-taking ops (``concatenate``, ``stack``, ``hstack``, ``vstack``)
receive their sequence as one argument, packed by an equation of its own;
their rules return a *list* of cotangents, one per item, and the packing
rule hands item i to the i-th array.

Under vmap (batching rules, below the forward ones) a shape op shifts its
axis arguments past the batch axis, and a shape argument gains the batch
size in front.
"""
import gast
import numpy as np

from ..core import ir, primitives as P
from ..runtime import (cotangent_item, dense, index_zero, last_writes, tree_add,  # noqa: F401
                       unbroadcast, unconcatenate, undiagonal, unhstack, unindex, unrepeat,
                       unstack, untile)
from .registry import adjoint, batching, tangent_maker
from .arithmetic import adjoint_case, passed
from .batching_util import (NO_VALUE, all_lanes, bound_args, call, constant_atom, elementwise,
                            exact_or, expanded, full_flag, indexed_rank, lane_index, lanes_axes,
                            respell, shift_axis, spread_index, static_value, with_args)
from .forward_util import linear


@adjoint(np.reshape)
def _(g, ans, a, shape=None, order="C"):
    a_bar = np.reshape(g, np.shape(a), order=order)


@adjoint(np.ravel)
def _(g, ans, a, order="C"):
    a_bar = np.reshape(g, np.shape(a), order=order)


@adjoint(np.squeeze, np.expand_dims)
def _(g, ans, a, axis=None):
    a_bar = np.reshape(g, np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def _(g, ans, a):
    a_bar = np.reshape(g, np.shape(a))


@adjoint_case(np.transpose, when=passed(1, "axes"))
def _(g, ans, a, axes=None):
    a_bar = np.transpose(g, np.argsort(axes))


@adjoint_case(np.transpose)
def _(g, ans, a, axes=None):
    a_bar = np.transpose(g)


@adjoint(np.swapaxes)
def _(g, ans, a, axis1, axis2):
    a_bar = np.swapaxes(g, axis1, axis2)


@adjoint(np.moveaxis)
def _(g, ans, a, source, destination):
    a_bar = np.moveaxis(g, destination, source)


@adjoint(np.flip)
def _(g, ans, m, axis=None):
    m_bar = np.flip(g, axis=axis)


@adjoint(np.broadcast_to)
def _(g, ans, array, shape, subok=False):
    array_bar = unbroadcast(g, array)


@adjoint(np.concatenate)
def _(g, ans, arrays, axis=0):
    arrays_bar = unconcatenate(g, arrays, axis=axis)


@adjoint(np.stack)
def _(g, ans, arrays, axis=0):
    arrays_bar = unstack(g, axis=axis)


@adjoint(np.vstack)
def _(g, ans, tup):
    tup_bar = unconcatenate(g, tup)


@adjoint(np.hstack)
def _(g, ans, tup):
    tup_bar = unhstack(g, tup)


@adjoint(np.tile)
def _(g, ans, A, reps):
    A_bar = untile(g, A, reps)


@adjoint(np.repeat)
def _(g, ans, a, repeats, axis=None):
    a_bar = unrepeat(g, a, repeats, axis=axis)


@adjoint(np.diagonal)
def _(g, ans, a, offset=0, axis1=0, axis2=1):
    a_bar = undiagonal(g, a, offset=offset, axis1=axis1, axis2=axis2)


# --- the helpers shape rules emit, so derivative code can be differentiated -----
# Each is linear in its cotangent argument ``g_in``; its adjoint is the
# forward op it undoes.

@adjoint(unbroadcast)
def _(g, ans, g_in, x):
    """Summing to a shape and broadcasting to it are each other's transpose."""
    g_in_bar = unbroadcast(g, g_in)


@adjoint(unstack)
def _(g, ans, g_in, axis=0):
    g_in_bar = np.stack(dense(g, ans), axis=axis)


@adjoint(untile)
def _(g, ans, g_in, A, reps):
    g_in_bar = np.tile(g, reps)


@adjoint(unrepeat)
def _(g, ans, g_in, a, repeats, axis=None):
    g_in_bar = np.repeat(g, repeats, axis=axis)


@adjoint(undiagonal)
def _(g, ans, g_in, a, offset=0, axis1=0, axis2=1):
    g_in_bar = np.diagonal(g, offset=offset, axis1=axis1, axis2=axis2)


@adjoint(unindex)
def _(g, ans, x, index, g_in):
    """Scattering into zeros is transposed by gathering (structural rules emit
    it); a container's cotangent may hold a symbolic zero there."""
    g_in_bar = cotangent_item(g, index, g_in)


@adjoint(index_zero)
def _(g, ans, g_in, index):
    g_in_bar = index_zero(g, index)


@adjoint(last_writes)
def _(g, ans, items, index, like):
    items_bar = last_writes(g, index, like)


@adjoint(tree_add)
def _(g, ans, a, b):
    a_bar = g
    b_bar = g


# --- forward mode ------------------------------------------------------------
# Linear ops: the same op on the tangents (``forward_util.linear``).

linear(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.transpose, np.swapaxes,
       np.moveaxis, np.repeat, np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d)
linear(np.flip, args=((0, "m"),))
linear(np.broadcast_to, args=((0, "array"),))
linear(np.concatenate, np.stack, args=((0, "arrays"),))
linear(np.vstack, np.hstack, args=((0, "tup"),))
linear(np.tile, args=((0, "A"),))

# Runtime helpers: each is linear in its cotangent argument (the others give
# shapes, indices or axes), or jointly linear in its containers' items.
linear(unbroadcast, unstack, untile, unrepeat, undiagonal, index_zero, last_writes,
       "unconcatenate",
       "unhstack", "unstack_steps", "cotangent_item", args=((0, "g"),))
linear(unindex, "unattr", "scan_unslice", args=((2, "g"),))
linear("broadcast_like", args=((0, "t"),))
linear("inplace_result", args=((0, "new"),))
linear("with_real", args=((1, "real"),))
linear("item_cotangent", args=((2, "like"),))
linear("rejoin", args=((0, "cts"),))
linear("with_item", args=((0, "items"), (2, "value")))
linear(tree_add, args=((0, "a"), (1, "b")))
linear("scan_slice", args=((0, "xs"),))
linear("appended", args=((0, "items"), (1, "item")))
linear("stack_steps", "dense", args=((0, "items"),))


@tangent_maker("add_at")
def _(eqn, fwd):
    """``acc[index] += g`` in place: the tangent accumulates the same way.

    Generated code calls ``add_at`` only on accumulators it allocated (zeros,
    with no tangent, then carried through a loop), so ``acc``'s tangent is
    zeros allocated here or that loop carry's: as private as ``acc`` itself."""
    acc, index, g_in = eqn.args
    primal = ir.spell(eqn)
    acc_dot, g_dot = fwd.dot_of(acc), fwd.dot_of(g_in)
    if g_dot is None:
        if acc_dot is None:
            return primal
        return primal + ir.spell(ir.Eqn([fwd.new_dot(eqn.out)], P.get("assign"),
                                            [acc_dot], origin=eqn.origin))
    dotted = ir.Eqn([fwd.new_dot(eqn.out)], eqn.prim, [fwd.dot_or_zeros(acc), index, g_dot],
                    {}, eqn.params, eqn.origin)
    return primal + ir.spell(dotted)

# ``for item in items`` reads ``iteration_item(items, k)``: the same call on
# the tangent gives the k-th item's tangent, and for a dict (whose iteration
# yields its keys) the key itself, where ``items_dot[k]`` would fail.
# (Replaces the getitem-style rule registered in structural.py.)
linear("iteration_item", args=((0, "items"),))


# --- batching ----------------------------------------------------------------

def _shape_value(b, atom):
    value = static_value(b, atom)
    if value is NO_VALUE:
        shape = b.shape(atom)
        if shape is not None and shape.value is not None and not b.batched(atom):
            return "dynamic", shape.value
        return None, None
    return "static", value


def _lanes_shape(b, atom):
    """``(batch_size,) + shape`` for a per-example shape atom."""
    how, value = _shape_value(b, atom)
    if how is None:
        return None
    if isinstance(value, int):
        return gast.Tuple(elts=[b.batch_size, atom], ctx=gast.Load())
    if how == "static":
        return gast.Tuple(elts=[b.batch_size] + [ir.const(v) for v in value], ctx=gast.Load())
    return gast.BinOp(left=gast.Tuple(elts=[b.batch_size], ctx=gast.Load()), op=gast.Add(),
                      right=atom)


@batching("reshape")
def batch_reshape(eqn, b):
    bound = bound_args(eqn)
    if bound is None:
        return None
    if b.batched(bound["shape"]) or "order" in eqn.kwargs:
        return None
    shape = _lanes_shape(b, bound["shape"])
    if shape is None:
        return None
    b.mark(eqn.out)
    return with_args(eqn, shape=shape)


@batching("ravel")
def batch_ravel(eqn, b):
    if len(eqn.args) > 1 or eqn.kwargs:
        return None
    b.mark(eqn.out)
    value = call("np.reshape", eqn.args[0],
                 gast.Tuple(elts=[b.batch_size, ir.const(-1)], ctx=gast.Load()))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


@batching("transpose")
def batch_transpose(eqn, b):
    bound = bound_args(eqn)
    if bound is None:
        return None
    rank = b.rank(bound["a"])
    axes = static_value(b, bound.get("axes", ir.const(None)))
    if rank is None or axes is NO_VALUE:
        how, axes = _shape_value(b, bound.get("axes"))
        if rank is None or how is None:
            return None
    if axes is None:
        new = (0,) + tuple(range(rank, 0, -1))
    else:
        new = (0,) + tuple((a % rank) + 1 for a in axes)
    b.mark(eqn.out)
    return with_args(eqn, axes=constant_atom(new))


def _axis_rule(*params, defaults=None, none_is_every_axis=False):
    """Shape ops whose only batching change is shifting axis parameters
    (``none_is_every_axis``: ``axis=None`` means every axis, as for flip)."""
    def rule(eqn, b):
        bound = bound_args(eqn)
        if bound is None:
            return None
        first = next(iter(bound.values()))
        rank = b.rank(first)
        if rank is None or any(b.batched(v) for k, v in bound.items() if v is not first):
            return None
        changes = {}
        for p in params:
            atom = bound.get(p)
            value = static_value(b, atom) if atom is not None else \
                (defaults or {}).get(p, NO_VALUE)
            if value is None and none_is_every_axis:
                changes[p] = constant_atom(lanes_axes(rank))
            elif value is None or value is NO_VALUE:
                return None
            else:
                changes[p] = constant_atom(shift_axis(value, rank))
        b.mark(eqn.out)
        return with_args(eqn, **changes)
    return rule


# np.atleast_{1,2,3}d of one example of per-example rank r: the new axes
# NumPy adds (a leading one, and atleast_3d's trailing one), counted in
# batched coordinates (axis 0 the batch)
_ATLEAST_AXES = {
    ("atleast_1d", 0): (1,),
    ("atleast_2d", 0): (1, 2), ("atleast_2d", 1): (1,),
    ("atleast_3d", 0): (1, 2, 3), ("atleast_3d", 1): (1, 3), ("atleast_3d", 2): (3,),
}


def _atleast(eqn, b):
    if len(eqn.args) != 1 or eqn.kwargs:
        return None
    rank = b.rank(eqn.args[0])
    if rank is None:
        return None
    axes = _ATLEAST_AXES.get((eqn.prim.name, rank), ())
    b.mark(eqn.out)
    value = eqn.args[0] if not axes else call(
        "np.expand_dims", eqn.args[0], constant_atom(axes if len(axes) > 1 else axes[0]))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    batching(_name)(_atleast)

batching("swapaxes")(_axis_rule("axis1", "axis2"))
batching("moveaxis")(_axis_rule("source", "destination"))
batching("expand_dims")(_axis_rule("axis"))
batching("squeeze")(_axis_rule("axis"))
batching("flip")(_axis_rule("axis", defaults={"axis": None}, none_is_every_axis=True))
batching("diagonal")(_axis_rule("axis1", "axis2", defaults={"axis1": 0, "axis2": 1}))
batching("trace")(_axis_rule("axis1", "axis2", defaults={"axis1": 0, "axis2": 1}))
batching("repeat")(_axis_rule("axis"))


@batching("broadcast_to")
def batch_broadcast_to(eqn, b):
    bound = bound_args(eqn)
    if bound is None:
        return None
    x, shape = bound["array"], bound["shape"]
    rank = b.rank(x)
    how, value = _shape_value(b, shape)
    if rank is None or how is None or b.batched(shape):
        return None
    target = 1 if isinstance(value, int) else len(value)
    x = expanded(b, x, rank, target)
    b.mark(eqn.out)
    return with_args(eqn, array=x, shape=_lanes_shape(b, shape))


@batching("concatenate", "stack")
def batch_join(eqn, b):
    bound = bound_args(eqn)
    if bound is None:
        return None
    items = bound["arrays"]
    axis = static_value(b, bound.get("axis", ir.const(0)))
    shape = b.shape(items)
    if axis is NO_VALUE or axis is None or shape is None or shape.kind not in ("list", "tuple") \
            or not ir.is_name(items):
        return None
    items = all_lanes(b, items)
    b.mark(eqn.out)
    return with_args(eqn, arrays=items, axis=ir.const(shift_axis(axis, None)))


@batching("hstack", "vstack")
def batch_hvstack(eqn, b):
    items = eqn.args[0]
    shape = b.shape(items)
    if len(eqn.args) > 1 or eqn.kwargs or shape is None or not shape.items or \
            shape.kind not in ("list", "tuple") or not ir.is_name(items):
        return None
    rank = shape.items[0].ndim
    if rank is None:
        return None
    items = all_lanes(b, items)
    b.mark(eqn.out)
    if eqn.prim.name == "hstack":
        prim, axis = "concatenate", 1 if rank <= 1 else 2
        if rank == 0:
            prim = "stack"
    else:
        prim, axis = ("stack", 1) if rank <= 1 else ("concatenate", 1)
    return ir.spell(ir.Eqn(eqn.outs, P.get(prim), [items], {"axis": ir.const(axis)}))


@batching("unbroadcast")
def batch_unbroadcast(eqn, b):
    g, x = eqn.args
    rg, rx = b.rank(g), b.rank(x)
    if rg is None or rx is None:
        return None
    b.mark(eqn.out)
    if b.batched(x) and b.batched(g) and rg == rx:
        return respell(eqn)
    if b.batched(g):
        value = call("unbroadcast_lanes", g, x, **({"x_batched": ir.const(True)}
                                                   if b.batched(x) else {}))
        return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                            type_comment=None)]
    return None


@batching("tree_add")
def batch_tree_add(eqn, b):
    """Cotangents of the same value: same per-example shapes, so a shared and a
    batched one add by broadcasting, leaf by leaf."""
    x, y = eqn.args
    if b.shape(x) is not None and b.shape(x).kind == "array":
        return elementwise(eqn, b)
    # the flag must say exactly which leaves of the sum are batched: a
    # container of a batched and a shared cotangent plus a shared one (a
    # symbolic zero's ``unindex``, flagged False) keeps its shared leaf
    # shared, and whatever reads the sum per example (``map_lanes``) relies
    # on that
    flag = exact_or(b.flag(x), b.flag(y))
    if flag is None:
        return None
    # a symbolic zero (None) flagged batched plus a shared value is that
    # shared value: where one side is batched as a whole and the other
    # shared as a whole, the shared side gets the batch first (fuzz seed
    # 541009: a list's cotangent carried by a loop, a None item in it, read
    # per example after a shared zeros_like was added).  (A flag leaf by
    # leaf comes from the probe's shapes, which a list a loop changes in
    # length does not keep: those sums stay as they are.)
    args = list(eqn.args)
    if flag is True:
        for i, a in enumerate(args):
            if ir.is_name(a) and b.flag(a) is False:
                args[i] = b.let(f"{a.id}_lanes", call("broadcast_lanes", a, b.batch_size))
    b.mark(eqn.out, flag)
    return respell(eqn, args)


@batching("unindex")
def batch_unindex(eqn, b):
    """Zeros like ``x`` with ``g`` at ``index``: a container keeps its slots'
    flags; an array gets the index shifted past the batch axis."""
    x, idx, g = eqn.args
    shape = b.shape(x)
    if shape is None:
        return None
    if shape.kind != "array":
        key = static_value(b, idx)
        if b.batched(idx) or key is NO_VALUE:
            return None
        flag = full_flag(shape, False)
        try:
            flag[key] = b.flag(g)
        except (IndexError, KeyError, TypeError):
            return None
        b.mark(eqn.out, flag)
        return respell(eqn)
    rx = b.rank(x)
    if rx is None:
        return None
    if not b.batched(x):
        x = b.let(f"{x.id}_lanes" if ir.is_name(x) else "x_lanes",
                  call("broadcast_lanes", x, b.batch_size))
    idx = spread_index(b, idx)
    new = lane_index(b, idx, True)
    if new is None:
        return None
    if b.batched(g):
        target, rg = indexed_rank(b, idx, rx), b.rank(g)
        if target is None or rg is None or not ir.is_name(g):
            return None
        g = expanded(b, g, rg, target)
    b.mark(eqn.out)
    return respell(eqn, [x, new, g])


# cotangents of ``a @ b`` per example, as einsum specs: (rank a, rank b) ->
