"""Helpers shared by the forward (tangent) rules.

A linear op's tangent is the same op applied to the tangent of the argument
it is linear in (``np.reshape(x_dot, (4, 3))``); ``linear`` registers that
rule, for the rule modules of every family.  A multilinear op's tangent is a
sum of such calls (``product_rule``), and a primitive whose best tangent
depends on the form of the call registers one template per form
(``tangent_case``).  Ops with a reverse refusal (a form without a derivative
rule, ``out=``...) refuse in forward mode too.
"""
import gast

from ..core import ir
from ..core.templates import TangentTemplate
from ..errors import TransformError
from .registry import ADJOINT, TANGENT, name_of, tangent_maker
from .arithmetic import Cases, Refusal


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
    primal = ir.spell(eqn)
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
    return primal + ir.spell(dotted)


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
            name = name_of(key)
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
    primal = ir.spell(eqn)
    if not terms:
        return primal
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return primal + [gast.Assign(targets=[ir.name(fwd.new_dot(eqn.out), gast.Store())],
                                 value=total, type_comment=None)]
