"""The pieces of a vmapped function's generated code, which ``vmap.build``
assembles: the flags saying which arguments are batched, the vectorised
body (the batching rules, ``transforms/batching.py``) or the loop over
examples, the last step moving the batch to ``out_axes``, and the probing
context an inner ``vmap`` of a named axis is specialised in."""
import contextlib

import gast
import numpy as np

from .. import tree_util
from ..core import ir, lower
from ..core.builders import assign, call
from ..core.naming import Namer
from ..errors import TransformError
from ..lax import collectives
from ..parallel import SoloGroup, perform
from ..transforms.batching import Batcher, any_batched, flag_leaves


def flag_of(arg, axes):
    """Batched flag of an argument: a bool, or a list/dict of flags."""
    if isinstance(arg, dict):
        return {k: flag_of(arg[k], axes[k]) for k in arg}
    if isinstance(arg, (tuple, list)):
        return [flag_of(a, x) for a, x in zip(arg, axes)]
    return axes is not None


def first_lane_access(param, arg, axes):
    """An expression reaching the first mapped leaf of ``param``."""
    node = ir.name(param)
    while isinstance(arg, (dict, list, tuple)):
        keys = list(arg) if isinstance(arg, dict) else range(len(arg))
        for k in keys:
            if any(a is not None for a in tree_util.tree_leaves(
                    axes[k], is_leaf=lambda v: v is None)):
                node = gast.Subscript(value=node, slice=ir.const(k), ctx=gast.Load())
                arg, axes = arg[k], axes[k]
                break
    return node


def leaf_tuple(values):
    return gast.Tuple(elts=[ir.const(v) for v in values], ctx=gast.Load())


class Opaque:
    """Stands for a function vmap cannot read (tangent_x's own Python drivers,
    such as jacfwd's loop over basis vectors): only the loop strategy applies."""

    def __init__(self, fun, n):
        self.name = getattr(fun, "__name__", "fn")
        self.params = self.positional = [f"arg{i}" for i in range(n)]
        self.defaults, self.kwonly, self.kw_defaults = [], [], {}
        self.origin = None
        self.deps = ()
        self.env = {}
        self.namer = Namer(self.params + ["batch_size", "results", "stacked", "k"])

    def default_names(self):
        return set()


def probing(axis_name, size):
    """While probing one example: collectives over ``axis_name`` answer as
    if every example held this one's values (right shapes and dtypes)."""
    if axis_name is None:
        return contextlib.nullcontext()
    group = SoloGroup(size)
    return collectives._bind_axis(axis_name, lambda op, x, name, **p: perform(group, op, x, p))


def vectorized_body(fn, namer, flags, shapes, batch_size, axis_name=None):
    """The batching rules' code for every equation, in blocks by origin."""
    batcher = Batcher(namer, flags, shapes, ir.name(batch_size), fn.env, axis_name)
    blocks = []
    for eqn in fn.eqns:
        stmts = batcher.eqn(eqn)
        if blocks and blocks[-1].origin is eqn.origin and eqn.origin is not None:
            blocks[-1].stmts.extend(stmts)
        else:
            blocks.append(lower.Block(stmts, eqn.origin))
    return batcher, blocks


def loop_body(fn, inner, params, args, flags, batch_size, blocks, namer):
    """``results.append(f(x[k], W))`` for every example ``k``: the loop strategy
    (the three names fresh: a parameter may be called ``k``)."""
    k, results, stacked = namer.fresh("k"), namer.fresh("results"), namer.fresh("stacked")
    call_args = []
    for p, arg in zip(params, args):
        flag = flags[p]
        # each call gets arrays of its own: the function may change its
        # arguments in place (``w *= 2``), which must reach neither the
        # caller's batch nor the next example's shared value
        own = type(arg) is np.ndarray and (np.ndim(arg) >= 2 or not any_batched(flag))
        leaves = tree_util.tree_leaves(arg)
        if len(leaves) == 1 and leaves[0] is arg:        # an array or a number
            if not any_batched(flag):
                call_args.append(call("np.copy", ir.name(p)) if own else ir.name(p))
            else:
                item = gast.Subscript(value=ir.name(p), slice=ir.name(k), ctx=gast.Load())
                call_args.append(call("np.copy", item) if own else item)
        else:        # a container: its leaves' items, or shared, copied (``lane_item``)
            leaf_flags = ([flag] * len(leaves) if isinstance(flag, bool)
                          else tree_util.tree_leaves(flag))
            call_args.append(call("lane_item", ir.name(p), ir.name(k), gast.Tuple(
                elts=[gast.Constant(value=bool(b), kind=None) for b in leaf_flags],
                ctx=gast.Load())))
    callee = fn.name if fn.name.isidentifier() and fn.name not in params else "fn"
    loop = gast.For(target=ir.name(k, gast.Store()),
                    iter=call("range", ir.name(batch_size)),
                    body=[gast.Expr(value=gast.Call(
                        func=gast.Attribute(value=ir.name(results), attr="append",
                                            ctx=gast.Load()),
                        args=[gast.Call(func=ir.name(callee), args=call_args,
                                        keywords=[gast.keyword(arg=p, value=ir.name(p))
                                                  for p in fn.kwonly])], keywords=[]))],
                    orelse=[], type_comment=None)
    stmts = [assign(results, gast.List(elts=[], ctx=gast.Load())), loop,
             assign(stacked, call("stack_lanes", ir.name(results)))]
    blocks.append(lower.Block(stmts, None, f"one call of {fn.name} per example"))
    return ir.name(stacked), True, None, {callee: inner}


def finish(fn, result, out_flag, result_shape, out_axes, batch_size, blocks, namer):
    """Give shared outputs the batch axis and move it to ``out_axes``."""
    spec_leaves = tree_util.tree_leaves(out_axes, is_leaf=lambda v: v is None)
    if isinstance(out_flag, bool) and (out_axes is None or isinstance(out_axes, int)):
        stmts = []
        if out_axes is None:
            if out_flag:
                raise TransformError("vmap has mapped output but out_axes is None",
                                     fn.origin, "pass out_axes=0 (or the axis you want) "
                                     "for outputs that differ between examples")
            return result
        if not out_flag:
            name = namer.fresh("shared_lanes")
            stmts.append(assign(name, call("broadcast_lanes", result,
                                             ir.name(batch_size))))
            result = ir.name(name)
        if out_axes != 0:
            name = namer.fresh("moved")
            stmts.append(assign(name, call("np.moveaxis", result, ir.const(0),
                                             ir.const(out_axes))))
            result = ir.name(name)
        if stmts:
            blocks.append(lower.Block(stmts, None, "the batch axis of the result"))
        return result
    flat_flags = flag_leaves(out_flag, result_shape)
    if out_axes is None or isinstance(out_axes, int):
        axes = [out_axes] * len(flat_flags)
    else:
        axes = list(spec_leaves)
        if len(axes) != len(flat_flags):
            raise TransformError(f"vmap out_axes {out_axes!r} does not match the structure "
                                 "of the result", fn.origin,
                                 "give one axis per output, or a single int")
    for f, a in zip(flat_flags, axes):
        if a is None and f:
            raise TransformError("vmap has mapped output but out_axes is None", fn.origin,
                                 "pass an axis for outputs that differ between examples")
    if all(flat_flags) and all(a == 0 for a in axes):
        return result
    name = namer.fresh("result")
    blocks.append(lower.Block([assign(name, call(
        "finish_lanes", result, leaf_tuple(flat_flags), leaf_tuple(axes),
        ir.name(batch_size)))], None, "the batch axis of every result"))
    return ir.name(name)
