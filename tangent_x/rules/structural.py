"""Rules for indexing, attribute access and building containers (and the
lists a loop pushes onto: tapes).  Under vmap an index gains a leading
``:`` (or lane indices where it differs per example), and a container's
flag says which of its items are batched."""
import copy

import gast
import numpy as np

from ..core import ir
from ..errors import TransformError
from ..runtime import (index_zero, last_writes, unattr, unbroadcast, unindex,  # noqa: F401
                       stop_gradient, scan_unslice, unstack_steps, cotangent_item, item_cotangent,
                       attr_cotangent, dense, rejoin, scan_slice, stack_steps,
                       unconcatenate)
from .registry import adjoint, adjoint_maker, batching, tangent, tangent_maker
from .batching_util import (NO_VALUE, all_batched, all_lanes, any_batched, call, constant_atom,
                            expanded, full_flag, indexed_rank, item_flag, lane_index,
                            per_example_shape, query, respell, spread_index, static_value)


@adjoint("getitem")
def _(g, ans, x, index):
    x_bar = unindex(x, index, g)


@adjoint("iteration_item")
def _(g, ans, items, k):
    items_bar = unindex(items, k, g)


@adjoint("getattr")
def _(g, ans, x, *, attr):
    x_bar = unattr(x, attr, g)


@adjoint("index_set")
def _(g, ans, x, index, v):
    """Where a repeated index is written twice, the last write is kept:
    only its value receives the cotangent."""
    x_bar = index_zero(g, index)
    v_bar = unbroadcast(last_writes(g[index], index, g), v)


@adjoint("with_item")
def _(g, ans, items, key, value):
    items_bar = index_zero(g, key)
    value_bar = cotangent_item(g, key, value)


@adjoint("assign", "dict_copy", "list_copy", "list_to_tuple")
def _(g, ans, x):
    x_bar = g


@adjoint_maker("tuple", "list", "namedtuple")
def _(g, eqn, rev=None):
    """Item i of a packed sequence receives item i of its cotangent."""
    out = {i: _item(g, ir.const(i), a) for i, a in enumerate(eqn.args)}
    if eqn.prim.name == "namedtuple":
        out.update({("kw", k): _item(g, ir.const(list(eqn.params["cls"]._fields).index(k)),
                                     v)
                    for k, v in eqn.kwargs.items()})
    return out


@adjoint_maker("dict")
def _(g, eqn, rev=None):
    return {i: _item(g, ir.const(k), a) for i, (k, a) in enumerate(zip(eqn.params["keys"],
                                                                      eqn.args))}


def _item(g, key, like=None):
    """Item ``key`` of a container's cotangent, which may hold symbolic
    zeros (None) for items that received no gradient."""
    if like is None:
        return gast.Subscript(value=g, slice=key, ctx=gast.Load())
    return gast.Call(func=ir.name("cotangent_item"), args=[g, key, like], keywords=[])


@adjoint("index_add")
def _(g, ans, x, index, v):
    x_bar = g
    v_bar = unbroadcast(g[index], v)


@adjoint_maker("custom_vjp_call")
def _(g, eqn, rev):
    """Call the user's bwd with the residuals fwd saved."""
    obj = eqn.params["obj"]
    nondiff, _ = obj.split(eqn.args)
    cotangents = rev.namer.fresh(f"{eqn.out}_cotangents")
    call = gast.Call(func=ir.name(eqn.params["bwd"]),
                     args=list(nondiff) + [ir.name(rev.tape_names(eqn)), g], keywords=[])
    return _distribute(cotangents, call, obj, eqn)


@adjoint_maker("custom_jvp_call")
def _(g, eqn, rev):
    """Transpose the custom_jvp rule's tangent map (see custom.py)."""
    obj = eqn.params["obj"]
    cotangents = rev.namer.fresh(f"{eqn.out}_cotangents")
    call = gast.Call(func=ir.name("custom_jvp_cotangents"),
                     args=[ir.name(eqn.params["callee"]),
                           gast.Tuple(elts=list(eqn.args), ctx=gast.Load()), g],
                     keywords=[])
    return _distribute(cotangents, call, obj, eqn)


def _distribute(name_, call, obj, eqn):
    stmt = gast.Assign(targets=[ir.name(name_, gast.Store())], value=call, type_comment=None)
    diff_positions = [i for i in range(len(eqn.args)) if i not in obj.nondiff_argnums]
    return [stmt], {i: _item(ir.name(name_), ir.const(k))
                    for k, i in enumerate(diff_positions)}


@adjoint("scan_slice")
def _(g, ans, xs, k):
    xs_bar = scan_unslice(xs, k, g)


# Helpers that generated derivative code calls, so that it differentiates again.

@adjoint("cotangent_item")
def _(g, ans, g_in, key, like):
    g_in_bar = item_cotangent(g_in, key, g)


@adjoint("item_cotangent")
def _(g, ans, g_in, key, like):
    like_bar = cotangent_item(g, key, like)


@adjoint("dense")
def _(g, ans, items, like):
    items_bar = g


@adjoint("rejoin")
def _(g, ans, cts, g_in, arrays, axis=0):
    cts_bar = unconcatenate(g, arrays, axis)


@adjoint("unattr")
def _(g, ans, x, attr, g_in):
    g_in_bar = attr_cotangent(g, attr, g_in)


@adjoint("unconcatenate")
def _(g, ans, g_in, arrays, axis=0):
    g_in_bar = rejoin(g, g_in, arrays, axis)


@adjoint("unhstack")
def _(g, ans, g_in, tup):
    g_in_bar = rejoin(g, g_in, tup, 0 if np.ndim(g_in) == 1 else 1)


@adjoint("scan_unslice")
def _(g, ans, xs, k, g_in):
    g_in_bar = scan_slice(g, k)


@adjoint("unstack_steps")
def _(g, ans, g_in, items, reverse=False):
    g_in_bar = stack_steps(dense(g, ans), reverse)


@adjoint("broadcast_like")
def _(g, ans, t, like):
    t_bar = unbroadcast(g, t)


@adjoint("inplace_result")
def _(g, ans, new, old):
    new_bar = g


@adjoint("with_real")
def _(g, ans, base, real):
    """(A real ``base``: the result is ``real`` itself.)"""
    real_bar = g


@adjoint("appended")
def _(g, ans, items, item):
    items_bar = g[:-1]
    item_bar = cotangent_item(g, -1, item)


@adjoint("stack_steps")
def _(g, ans, items, reverse=False):
    items_bar = unstack_steps(g, items, reverse)


@adjoint("add_at")
def _(g, ans, acc, index, g_in):
    acc_bar = g
    g_in_bar = unbroadcast(g[index], g_in)


# --- forward mode ------------------------------------------------------------

@tangent("getitem")
def _(ans, x, index):
    ans_dot = x_dot[index]


@tangent("getattr")
def _(ans, x, *, attr):
    ans_dot = getattr(x_dot, attr)


@tangent("assign", "stop_gradient", "dict_copy", "list_copy", "list_to_tuple")
def _(ans, x):
    ans_dot = x_dot


def _dot_or_zeros(fwd, atom):
    return fwd.dot_or_zeros(atom)


@tangent_maker("tuple", "list", "dict", "namedtuple")
def _(eqn, fwd):
    """The tangent of a container is the container of tangents."""
    dotted = copy.copy(eqn)
    dotted.args = [_dot_or_zeros(fwd, a) for a in eqn.args]
    dotted.kwargs = {k: _dot_or_zeros(fwd, v) for k, v in eqn.kwargs.items()}
    dotted.outs = [fwd.new_dot(eqn.out)]
    return ir.spell(eqn) + ir.spell(dotted)


@tangent_maker("index_set", "index_add")
def _(eqn, fwd):
    """``x[i] = v`` updates the tangent the same way: ``x_dot[i] = v_dot``."""
    x, index, v = eqn.args
    dotted = copy.copy(eqn)
    dotted.args = [_dot_or_zeros(fwd, x), index, _dot_or_zeros(fwd, v)]
    dotted.outs = [fwd.new_dot(eqn.out)]
    return ir.spell(eqn) + ir.spell(dotted)


@tangent_maker("custom_jvp_call")
def custom_jvp_call(eqn, fwd):
    """Call the user's rule: ``out, out_dot = rule(primals, tangents)``."""
    obj = eqn.params["obj"]
    nondiff, primals = obj.split(eqn.args)
    rule = fwd.namer.fresh(f"{obj.__name__}_jvp_rule")
    fwd.env_extra[rule] = obj.jvp
    out_dot = fwd.new_dot(eqn.out)
    call = gast.Call(func=ir.name(rule), args=list(nondiff) + [
        gast.Tuple(elts=list(primals), ctx=gast.Load()),
        gast.Tuple(elts=[_dot_or_zeros(fwd, p) for p in primals], ctx=gast.Load())],
        keywords=[])
    target = gast.Tuple(elts=[ir.name(eqn.out, gast.Store()), ir.name(out_dot, gast.Store())],
                        ctx=gast.Store())
    return [gast.Assign(targets=[target], value=call, type_comment=None)]


@tangent_maker("custom_vjp_call")
def _(eqn, fwd):
    if getattr(eqn.params["obj"], "jvp", None) is not None:
        return custom_jvp_call(eqn, fwd)      # a pmapped function: pmap of the jvp
    raise TransformError(f"can't apply forward-mode autodiff (jvp) to the custom_vjp "
                         f"function {eqn.params['label']}", eqn.origin,
                         "give it a custom_jvp rule instead, or use reverse mode")


# --- batching ----------------------------------------------------------------

@batching("tuple", "list", "namedtuple")
def batch_pack(eqn, b):
    b.mark(eqn.out, [b.flag(a) for a in eqn.args])
    return respell(eqn)


@batching("dict")
def batch_pack_dict(eqn, b):
    b.mark(eqn.out, {k: b.flag(a) for k, a in zip(eqn.params["keys"], eqn.args)})
    return respell(eqn)


@batching("getitem")
def batch_getitem(eqn, b):
    x, idx = eqn.args
    shape = b.shape(x)
    if shape is None:
        return None
    if shape.kind not in ("array",):
        if b.batched(idx) or shape.kind not in ("list", "tuple", "dict"):
            # (another kind: the probe's example never gave it a value, its
            # placeholder stood there -- an array in the other examples)
            return None
        flag = item_flag(b.flag(x), static_value(b, idx))
        if flag is None:
            return None
        b.mark(eqn.out, flag)
        return respell(eqn)
    idx = spread_index(b, idx)
    new = lane_index(b, idx, b.batched(x))
    if new is None:
        return None
    b.mark(eqn.out)
    return respell(eqn, [x, new])


@batching("index_set", "index_add", "index_min", "index_max", "index_mul")
def batch_index_set(eqn, b):
    x, idx, v = eqn.args
    if eqn.params.get("container") in ("dict", "list", "tuple"):
        return batch_with_item(eqn, b)
    rx = b.rank(x)
    if rx is None:
        return None
    if not b.batched(x):
        x = b.let(f"{x.id}_lanes", call("broadcast_lanes", x, b.batch_size))
    idx = spread_index(b, idx)
    new = lane_index(b, idx, True)
    if new is None:
        return None
    if b.batched(v):
        target = indexed_rank(b, idx, rx)
        rv = b.rank(v)
        if target is None or rv is None or not ir.is_name(v):
            return None
        v = expanded(b, v, rv, target)
    b.mark(eqn.out)
    return respell(eqn, [x, new, v])


@batching("with_item")
def batch_with_item(eqn, b):
    """A container with one slot replaced: the slot takes the new value's flag."""
    x, idx, v = eqn.args
    if b.batched(idx):
        return None
    key = static_value(b, idx)
    flag = b.flag(x)
    if isinstance(flag, bool) and b.shape(x) is not None:   # every item shared, or batched
        flag = full_flag(b.shape(x), flag)
    if key is NO_VALUE or not isinstance(flag, (dict, list)):
        if any_batched(flag) != any_batched(b.flag(v)):
            return None
        b.mark(eqn.out, any_batched(flag))
        return respell(eqn)
    flag = dict(flag) if isinstance(flag, dict) else list(flag)
    try:
        flag[key] = b.flag(v)
    except (IndexError, TypeError):
        return None
    b.mark(eqn.out, flag)
    return respell(eqn)


@batching("getattr")
def batch_getattr(eqn, b):
    attr = eqn.params["attr"]
    shape = b.shape(eqn.args[0])
    if shape is not None and shape.fields and attr in shape.fields:     # a namedtuple field
        flag = item_flag(b.flag(eqn.args[0]), shape.fields.index(attr))
        if flag is None:
            return None
        b.mark(eqn.out, flag)
        return respell(eqn)
    if shape is None or shape.kind != "array":
        return None
    if attr == "dtype":
        b.mark(eqn.out, False)
        return respell(eqn)
    if attr in ("real", "imag"):
        b.mark(eqn.out)
        return respell(eqn)
    if attr == "T":
        rank = shape.ndim
        b.mark(eqn.out)
        return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                            value=call("np.transpose", eqn.args[0],
                                       constant_atom((0,) + tuple(range(rank, 0, -1)))),
                            type_comment=None)]
    if attr == "shape":
        return query(eqn, b, per_example_shape(eqn.args[0]))
    if attr == "ndim":
        return query(eqn, b, gast.BinOp(left=call("np.ndim", eqn.args[0]), op=gast.Sub(),
                                         right=ir.const(1)))
    return None


@batching("inplace_result")
def batch_inplace_result(eqn, b):
    """A cast to the dtype of ``old``: batched as ``new`` is."""
    new, old = eqn.args
    if not b.batched(new) or eqn.kwargs:
        return None
    b.mark(eqn.out, b.flag(new))
    return respell(eqn)


@batching("with_real")
def batch_with_real(eqn, b):
    """Elementwise in ``base`` and ``real``, which have one shape per example:
    batched where either is (a shared ``base`` broadcasts against a batched
    ``real``; a shared ``real`` in a batched ``base`` goes per example)."""
    base, real = eqn.args
    if b.batched(base) and not b.batched(real):
        return None
    b.mark(eqn.out, b.flag(real))
    return respell(eqn)


# --- tapes: lists pushed and popped in loops --------------------------------------
#
# A list whose every item is batched has the flag True: it is a plain list of
# batched arrays, one per push, so pushing and popping stay one list operation
# per step (``tape[-1]`` and ``tape[:-1]`` keep the flag through ``getitem``),
# and its length is the same in every example.

@batching("appended")
def batch_appended(eqn, b):
    items, item = eqn.args
    if not b.batched(item) and not b.batched(items):
        return None
    if not all_batched(b.flag(items)):
        if not ir.is_name(items):
            return None
        items = all_lanes(b, items) if isinstance(b.flag(items), list) else \
            b.let(f"{items.id}_lanes", call("broadcast_lanes", items, b.batch_size))
    shape = b.shape(item)
    item, setup = b.lanes_of(item, True if shape is None else full_flag(shape), "item")
    b.stmts_out += setup
    b.mark(eqn.out, True)
    return respell(eqn, [items, item])
