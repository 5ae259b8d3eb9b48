"""Batching rules of ops whose value is the same for every example: shape
queries (``np.shape``, ``len``, ``np.ndim``, ``np.size``), what the code
asks of a value (``is_array``, ``is_view_of``, a scan's length) and the
run-time checks (``assert``, grad's scalar-output check, has_aux's pair).

None of them carries a gradient (the primitives are not differentiable), so
the batching rule is their only rule.
"""
import gast

from ..core import ir, primitives as P
from .registry import batching
from .batching_util import all_batched, call, constant_atom, per_example_shape, query, respell


@batching("shape")
def batch_shape(eqn, b):
    if len(eqn.args) != 1 or b.shape(eqn.args[0]) is None or \
            b.shape(eqn.args[0]).kind != "array":
        return None
    return query(eqn, b, per_example_shape(eqn.args[0]))


@batching("builtins.len")
def batch_length(eqn, b):
    shape = b.shape(eqn.args[0])
    if shape is not None and shape.kind in ("list", "tuple", "dict"):
        return query(eqn, b, ir.expr_of(eqn))      # a container's length is every example's
    if shape is None or shape.kind != "array":
        return None
    return query(eqn, b, gast.Subscript(value=call("np.shape", eqn.args[0]),
                                         slice=ir.const(1), ctx=gast.Load()))


@batching("ndim")
def batch_ndim(eqn, b):
    if b.shape(eqn.args[0]) is None or b.shape(eqn.args[0]).kind != "array":
        return None
    return query(eqn, b, gast.BinOp(left=call("np.ndim", eqn.args[0]), op=gast.Sub(),
                                     right=ir.const(1)))


@batching("size")
def batch_size_query(eqn, b):
    if len(eqn.args) != 1 or b.shape(eqn.args[0]) is None or \
            b.shape(eqn.args[0]).kind != "array":
        return None
    return query(eqn, b, call("int", call("np.prod", per_example_shape(eqn.args[0]))))


@batching("is_array")
def batch_is_array(eqn, b):
    """Whether one example's value is an array (``x op= v`` then changes it
    in place) or a number: the same for every example, as the probe saw it
    (an example of a batched vector is a number)."""
    shape = b.shape(eqn.args[0])
    if shape is None or shape.kind != "array" or shape.ndarray is None:
        return None
    b.mark(eqn.out, False)
    return ir.spell(ir.Eqn(eqn.outs, P.get("assign"), [ir.const(shape.ndarray)],
                           origin=eqn.origin))


@batching("is_view_of")
def batch_is_view_of(eqn, b):
    """Whether NumPy's ``reshape``/``ravel`` made a view: taken on the batch
    (a view of every example exactly when the batched result is one of the
    batched array), the same for every example."""
    view, base = eqn.args
    if b.batched(view) != b.batched(base):
        return None
    b.mark(eqn.out, False)
    return respell(eqn)


@batching("scan_length")
def batch_scan_length(eqn, b):
    """A scan's length is its inputs' leading size per example: axis 1."""
    xs = eqn.args[0]
    if not all_batched(b.flag(xs)) or any(b.batched(a) for a in eqn.args[1:]):
        return None
    example = call("lane_item", xs, ir.const(0))
    b.mark(eqn.out, False)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("scan_length", example, *eqn.args[1:]),
                        type_comment=None)]


@batching("check_grad_output")
def batch_check_grad_output(eqn, b):
    """grad's check of one example's output (``vmap(grad(f))``: each example
    must be a scalar, as without vmap; the batch axis is vmap's)."""
    y = eqn.args[0]
    if b.rank(y) == 0:
        return []
    example = gast.Subscript(value=ir.clone(y), slice=ir.const(0), ctx=gast.Load())
    return [gast.Expr(value=call("check_grad_output", example))]


@batching("check_aux_pair")
def batch_check_aux_pair(eqn, b):
    """Whether the output is a pair does not depend on the batch."""
    return [gast.Expr(value=call("check_aux_pair", eqn.args[0]))]


@batching("check")
def batch_check(eqn, b):
    """``assert`` under vmap: every example is checked, the first failing
    one reported with its own values (``check_lanes``)."""
    ok, error, template, *parts = eqn.args
    if not b.batched(ok):
        ok = call("broadcast_lanes", ok, b.batch_size)
    flags = constant_atom(tuple(bool(b.batched(p)) for p in parts))
    return [gast.Expr(value=call("check_lanes", ok, error, template, flags, *parts))]
