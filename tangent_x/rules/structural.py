"""Rules for indexing, attribute access and building containers."""
import gast
import numpy as np

from ..core import ir
from ..runtime import (index_zero, last_writes, unattr, unbroadcast, unindex,  # noqa: F401
                       stop_gradient, scan_unslice, unstack_steps, cotangent_item, item_cotangent,
                       attr_cotangent, dense, rejoin, scan_slice, stack_steps,
                       unconcatenate)
from . import adjoint, adjoint_maker, tangent, tangent_maker


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
    import copy
    dotted = copy.copy(eqn)
    dotted.args = [_dot_or_zeros(fwd, a) for a in eqn.args]
    dotted.kwargs = {k: _dot_or_zeros(fwd, v) for k, v in eqn.kwargs.items()}
    dotted.outs = [fwd.new_dot(eqn.out)]
    from ..python_stage import lower
    return lower.lower([eqn]) + lower.lower([dotted])


@tangent_maker("index_set", "index_add")
def _(eqn, fwd):
    """``x[i] = v`` updates the tangent the same way: ``x_dot[i] = v_dot``."""
    import copy
    from ..python_stage import lower
    x, index, v = eqn.args
    dotted = copy.copy(eqn)
    dotted.args = [_dot_or_zeros(fwd, x), index, _dot_or_zeros(fwd, v)]
    dotted.outs = [fwd.new_dot(eqn.out)]
    return lower.lower([eqn]) + lower.lower([dotted])


@tangent_maker("custom_jvp_call")
def _(eqn, fwd):
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
    from ..errors import TransformError
    raise TransformError(f"can't apply forward-mode autodiff (jvp) to the custom_vjp "
                         f"function {eqn.params['label']}", eqn.origin,
                         "give it a custom_jvp rule instead, or use reverse mode")
