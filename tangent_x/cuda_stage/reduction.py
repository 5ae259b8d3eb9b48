"""Sums over the batch that a function asks for, found in its source.

``jit(lambda P, X: np.sum(pex(P, X), axis=0), target="cuda")``, where
``pex = vmap(grad(loss), in_axes=(None, 0))``, asks for the sum of the
per-example gradients, not for the batch of them.  ``match`` reads the
function's source (as every transform does, ``canonical.parser``) and, where
its whole body is ``np.sum(V(params), axis=0)`` or ``np.mean(...)`` of a
vmapped ``V`` called on the function's own parameters in order, returns
``BatchReduction``: the kernel then adds each thread's result into one
output with ``cuda.atomic.add`` (``kernel_text``) and no array of
per-example results is made.  A function of another shape is not a
reduction (``None``); one that is nearly one (other arguments, another
axis) is a located error saying what the kernel takes.
"""
import ast

import gast
import numpy as np

from ..canonical.parser import parse
from ..errors import TransformError
from .kernel_text import HINT

__all__ = ["BatchReduction", "match", "REDUCTIONS"]

REDUCTIONS = ("sum", "mean")


class BatchReduction:
    """``op`` (``"sum"`` or ``"mean"``) over axis 0 of ``vmapped``'s results;
    ``origin``: the user's line that asks for it."""

    def __init__(self, vmapped, op, origin, name):
        self.vmapped = vmapped
        self.op = op
        self.origin = origin
        self.name = name


def match(fun, is_vmapped, whole=False):
    """``fun``'s ``BatchReduction``, or None when its body is no reduction
    over a vmapped function's batch.  ``is_vmapped(value)``: whether a
    value is a ``vmap`` of a function (the api's ``Vmapped``); ``whole``:
    ``np.sum(V(...))`` without ``axis`` is one too (the function is
    differentiated, so its per-example results are numbers)."""
    try:
        parsed = parse(fun)
    except TransformError:
        return None
    node = parsed.node
    if isinstance(node, gast.Lambda):
        expr = node.body
    else:
        body = [s for s in node.body if not (isinstance(s, gast.Expr) and
                                             isinstance(s.value, gast.Constant))]
        if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
            return None
        expr = body[0].value
    scope = dict(parsed.globals)
    scope.update(parsed.closure)
    if not (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute) and
            expr.func.attr in REDUCTIONS and isinstance(expr.func.value, gast.Name) and
            scope.get(expr.func.value.id) is np and len(expr.args) == 1 and
            isinstance(expr.args[0], gast.Call)):
        return None
    inner = expr.args[0]
    params = [a.id for a in node.args.args]
    vmapped = _value(inner.func, scope, params)
    if not is_vmapped(vmapped):
        return None
    origin = parsed.origin(expr)
    op = expr.func.attr

    def refuse(message):
        raise TransformError(f"a CUDA kernel cannot run this reduction: {message}", origin,
                             HINT)

    keywords = {k.arg: k.value for k in expr.keywords}
    axis = keywords.pop("axis", None)
    if keywords or axis is None and not whole or axis is not None and \
            not (isinstance(axis, gast.Constant) and axis.value == 0):
        refuse(f"np.{op} over the batch takes axis=0 and no other option, in a kernel "
               f"(np.{op}(f(...), axis=0))")
    if vmapped.out_axes != 0:
        refuse(f"the vmapped function's results have out_axes={vmapped.out_axes!r}; a "
               "kernel sums the batch axis 0 (the default out_axes)")
    if inner.keywords or [getattr(a, "id", None) for a in inner.args] != params or \
            node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
        refuse(f"the vmapped function must be called on {parsed.name}'s own parameters, "
               f"in order ({', '.join(params)})")
    return BatchReduction(vmapped, op, origin, getattr(vmapped._fun, "__name__", "f"))


def _value(node, scope, params):
    """The value ``node`` names, where it is a name or attribute chain (or a
    call of those, e.g. ``vmap(grad(loss), in_axes=(None, 0))``) resolved in
    the function's globals and closure; None otherwise."""
    used = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    if used & set(params) or any(isinstance(n, (gast.Lambda, gast.NamedExpr))
                                 for n in gast.walk(node)):
        return None
    if not all(n in scope for n in used):
        return None
    try:
        code = compile(ast.unparse(gast.gast_to_ast(node)), "<tangent_x reduction>", "eval")
        return eval(code, dict(scope))         # names the user's module already binds
    except Exception:      # not a value known before the call: no reduction
        return None


def reduce_constant(value, size, op):
    """A result that is the same in every example (a constant, a symbolic
    zero), reduced as NumPy reduces ``size`` copies of it."""
    copies = np.broadcast_to(value, (size,) + np.shape(value))
    return np.sum(copies, axis=0) if op == "sum" else np.mean(copies, axis=0)
