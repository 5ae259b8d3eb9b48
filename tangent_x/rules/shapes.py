"""Rules for shape ops: each moves entries without changing them, so its
adjoint moves the cotangent back (reshape back, transpose back, split what
was joined, sum what was copied).

Sequence-taking ops (``concatenate``, ``stack``, ``hstack``, ``vstack``)
receive their sequence as one argument, packed by an equation of its own;
their rules return a *list* of cotangents, one per item, and the packing
rule hands item i to the i-th array.
"""
import numpy as np

from ..runtime import (cotangent_item, dense, index_zero, last_writes, tree_add,  # noqa: F401
                       unbroadcast, unconcatenate, undiagonal, unhstack, unindex, unrepeat,
                       unstack, untile)
from . import adjoint
from .arithmetic import adjoint_case, passed


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
# A linear op's tangent is the same op applied to the tangent of the argument
# it is linear in (``np.reshape(x_dot, (4, 3))``); ``linear`` registers that
# rule, here and in the other rule modules.  Ops with a reverse refusal (a
# form without a derivative rule, ``out=``...) refuse in forward mode too.

import gast  # noqa: E402

from ..core import ir
from ..python_stage import lower  # noqa: E402
from ..errors import TransformError  # noqa: E402
from ..core.templates import TangentTemplate  # noqa: E402
from . import ADJOINT, TANGENT, _name, tangent_maker  # noqa: E402
from .arithmetic import Cases, Refusal  # noqa: E402


def refuse_like_reverse(eqn):
    """Raise the reverse rule's refusal for this form of the call, if any."""
    rule = ADJOINT.get(eqn.prim.name)
    if isinstance(rule, Cases):
        for when, case in rule.cases:
            if isinstance(case, Refusal) and when(eqn):
                raise TransformError(case.message, eqn.origin, case.hint)


def _slot(eqn, position, keyword):
    """Where the call passes a parameter: ("arg", i), ("kw", name) or None."""
    if position is not None and position < len(eqn.args):
        return ("arg", position)
    if keyword is not None and keyword in eqn.kwargs:
        return ("kw", keyword)
    return None


def same_op_on_tangents(eqn, fwd, params, drop=()):
    """Statements for ``eqn`` and its tangent when the op is (jointly) linear
    in the arguments ``params`` ((position, keyword) pairs): the same call
    with each of those replaced by its tangent (zeros for an argument without
    one) and the other arguments unchanged.  ``drop`` lists parameters that
    only offset the result (``np.sum(x, initial=1.0)``): left out of the
    tangent's call (a positional one becomes 0)."""
    primal = lower.lower([eqn])
    args, kwargs = list(eqn.args), dict(eqn.kwargs)
    found = False
    for position, keyword in params:
        slot = _slot(eqn, position, keyword)
        if slot is None:
            continue
        atom = args[slot[1]] if slot[0] == "arg" else kwargs[slot[1]]
        found = found or fwd.dot_of(atom) is not None
        if slot[0] == "arg":
            args[slot[1]] = fwd.dot_or_zeros(atom)
        else:
            kwargs[slot[1]] = fwd.dot_or_zeros(atom)
    if not found:
        return primal
    for position, keyword in drop:
        slot = _slot(eqn, position, keyword)
        if slot is not None and slot[0] == "arg":
            args[slot[1]] = ir.const(0)
        elif slot is not None:
            del kwargs[slot[1]]
    dotted = ir.Eqn([fwd.new_dot(eqn.out)], eqn.prim, args, kwargs, eqn.params, eqn.origin)
    return primal + lower.lower([dotted])


def linear(*keys, args=((0, "a"),), drop=()):
    """Register "the same op on the tangents" as the forward rule of ``keys``,
    which are linear in ``args`` ((position, keyword) pairs)."""
    def rule(eqn, fwd):
        refuse_like_reverse(eqn)
        return same_op_on_tangents(eqn, fwd, args, drop)
    tangent_maker(*keys)(rule)
    return rule


class TangentCases(TangentTemplate):
    """Forward templates of one primitive, each guarded by a test on the
    equation (like ``arithmetic.Cases``); the reverse rule's refusals apply."""

    def __init__(self):            # no template of its own: see ``tangent_case``
        self.cases = []

    def instantiate_tangent(self, ans, eqn, namer, dot_of):
        refuse_like_reverse(eqn)
        for when, template in self.cases:
            if when is None or when(eqn):
                return template.instantiate_tangent(ans, eqn, namer, dot_of)
        raise TypeError(f"no tangent template matches {eqn!r}")


def tangent_case(*keys, when=None):
    """Register one forward template of ``keys``, used when ``when(eqn)`` holds
    (register the unguarded one last)."""
    def register(fn):
        template = TangentTemplate(fn, "_dot")
        for key in keys:
            name = _name(key)
            rule = TANGENT.get(name)
            if not isinstance(rule, TangentCases):
                rule = TANGENT[name] = TangentCases()
            rule.cases.append((when, template))
        return fn
    return register


def call_like(eqn, args, kwargs=None):
    """The call of ``eqn``'s primitive on other arguments, as an expression."""
    kwargs = eqn.kwargs if kwargs is None else kwargs
    return ir.expr_of(ir.Eqn([], eqn.prim, ir.clone(list(args)),
                             {k: ir.clone(v) for k, v in kwargs.items()},
                             eqn.params, eqn.origin))


def product_rule(eqn, fwd, slots, extra=None):
    """Statements for ``eqn`` and its tangent when the op is linear in each
    argument position of ``slots`` separately (multilinear): one copy of the
    call per argument with a tangent, that argument replaced by it.
    ``extra(eqn, fwd)`` may add terms (a list of expressions)."""
    terms = []
    for k in slots:
        dot = fwd.dot_of(eqn.args[k])
        if dot is not None:
            args = list(eqn.args)
            args[k] = dot
            terms.append(call_like(eqn, args))
    if extra is not None:
        terms += extra(eqn, fwd)
    primal = lower.lower([eqn])
    if not terms:
        return primal
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return primal + [gast.Assign(targets=[ir.name(fwd.new_dot(eqn.out), gast.Store())],
                                 value=total, type_comment=None)]


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
    primal = lower.lower([eqn])
    acc_dot, g_dot = fwd.dot_of(acc), fwd.dot_of(g_in)
    if g_dot is None:
        if acc_dot is None:
            return primal
        return primal + lower.assign_many([fwd.new_dot(eqn.out)], [acc_dot])
    dotted = ir.Eqn([fwd.new_dot(eqn.out)], eqn.prim, [fwd.dot_or_zeros(acc), index, g_dot],
                    {}, eqn.params, eqn.origin)
    return primal + lower.lower([dotted])

# ``for item in items`` reads ``iteration_item(items, k)``: the same call on
# the tangent gives the k-th item's tangent, and for a dict (whose iteration
# yields its keys) the key itself, where ``items_dot[k]`` would fail.
# (Replaces the getitem-style rule registered in structural.py.)
linear("iteration_item", args=((0, "items"),))
