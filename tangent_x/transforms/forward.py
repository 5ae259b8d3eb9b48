"""Forward mode: canonical function -> one pass computing values and tangents.

Each equation is followed by its tangent (``y_dot``) when one of its inputs
has one; the tangent rule is a template whose terms for inputs without a
tangent are left out, so no zero tangents are built.  Control flow carries
tangents along: an ``if`` computes the tangent of each output in each
branch, a loop carries ``(x, x_dot)`` for the carries that can hold one.
Nothing needs a tape.
"""
import gast

from ..core import ir
from ..analysis.activity import loop_active_carries
from ..core.builders import assign, call
from ..core import lower
from ..core.lower import Block
from ..errors import TransformError
from ..rules import TANGENT, load_all
from ..core.fold import fold_ones
from ..core.templates import TangentTemplate


def _zeros_like(atom):
    return call("zeros_like", atom)


def _is_scalar_const(atom):
    return isinstance(atom, gast.Constant) or (
        isinstance(atom, gast.Attribute) and ir.is_name(atom.value, "np"))


class Forward:
    def __init__(self, namer, dots, env_extra=None):
        load_all()
        self.namer = namer
        self.dots = dict(dots)       # variable -> name of its tangent
        self.env_extra = {} if env_extra is None else env_extra   # rules to bind

    def dot_of(self, atom):
        if ir.is_name(atom) and atom.id in self.dots:
            return ir.name(self.dots[atom.id])
        return None

    def dot_or_zeros(self, atom):
        dot = self.dot_of(atom)
        return dot if dot is not None else _zeros_like(atom)

    def new_dot(self, var):
        name_ = self.namer.tangent(var)
        self.dots[var] = name_
        return name_

    # --- equations ----------------------------------------------------------

    def stmts(self, eqns):
        out = []
        for eqn in eqns:
            out += self.eqn(eqn)
        return out

    def eqn(self, eqn):
        kind = eqn.prim.kind
        active = any(ir.is_name(a) and a.id in self.dots
                     for a in ir.names_atoms(eqn)) or (eqn.reads() & set(self.dots))
        if kind == "cond":
            return self.cond(eqn) if active else lower.lower([eqn])
        if kind in ("while", "for_range"):
            return self.loop(eqn) if active else lower.lower([eqn])
        primal = lower.lower([eqn])
        if not active or ir.kept_for_effect(eqn) or not eqn.prim.differentiable \
                and eqn.prim.kind != "opaque" and eqn.prim.kind != "custom":
            # (a call kept for what it does has no value to give a tangent)
            return primal
        rule = TANGENT.get(eqn.prim.name)
        if rule is None:
            label = eqn.params.get("label", eqn.prim.name)
            raise TransformError(f"no forward-mode (jvp) rule for {label}", eqn.origin,
                                 "use NumPy functions tangent_x knows, or give the "
                                 "function a custom_jvp")
        if isinstance(rule, TangentTemplate):
            stmts, expr = rule.instantiate_tangent(ir.name(eqn.out), eqn, self.namer,
                                                   self.dot_of)
            stmts = [fold_ones(s) for s in stmts]
            if expr is None:
                return primal
            expr = fold_ones(expr)
            present = ir.names_in(expr)
            if eqn.prim.broadcasting and any(
                    self.dot_of(a) is None and not _is_scalar_const(a)
                    and not (ir.is_name(a) and a.id in present) for a in eqn.args):
                # an operand without a tangent (and absent from it) may have
                # been the one that set the result's shape
                expr = call("broadcast_like", expr, ir.name(eqn.out))
            return primal + stmts + [assign(self.new_dot(eqn.out), expr)]
        made = rule(eqn, self)
        return made if made is not None else primal

    def cond(self, eqn):
        branches = []
        out_dots = {}
        active_outs = []
        bodies = eqn.params["branches"]
        inner_states = []
        for body in bodies:
            inner = Forward(self.namer, self.dots, self.env_extra)
            stmts = inner.stmts(body.eqns)
            inner_states.append((inner, stmts))
        for k, o in enumerate(eqn.outs):
            if any(inner.dot_of(body.results[k]) is not None
                   for (inner, _), body in zip(inner_states, bodies)):
                active_outs.append(k)
                out_dots[o] = self.namer.tangent(o)
        for (inner, stmts), body in zip(inner_states, bodies):
            stmts = stmts + lower.assign_many(eqn.outs, body.results)
            stmts += lower.assign_many([out_dots[eqn.outs[k]] for k in active_outs],
                                       [inner.dot_or_zeros(body.results[k])
                                        for k in active_outs])
            branches.append(stmts or [gast.Pass()])
        self.dots.update(out_dots)
        return lower.IF.fill(test=eqn.args[0], body=branches[0], orelse=branches[1])

    def loop(self, eqn):
        carry = list(eqn.params["carry"])
        body = eqn.params["body"]
        inits = eqn.args[len(eqn.args) - len(carry):]
        active = [c for c in carry if c in loop_active_carries(eqn, set(self.dots))]
        carry_dots = {c: self.namer.tangent(c) for c in active}
        inner = Forward(self.namer, {**self.dots, **carry_dots}, self.env_extra)
        body_stmts = inner.stmts(body.eqns)
        updates = lower.assign_many(
            carry + [carry_dots[c] for c in active],
            list(body.results) + [inner.dot_or_zeros(body.results[carry.index(c)])
                                  for c in active])
        setup = lower.assign_many(carry + [carry_dots[c] for c in active],
                                  list(inits) + [self.dot_or_zeros(inits[carry.index(c)])
                                                 for c in active])
        if eqn.prim.kind == "for_range":
            loop = lower.FOR.fill(index=eqn.params["index"],
                                  iterations=lower.range_call(*eqn.args[:3]),
                                  body=body_stmts + updates)
        else:
            cond = eqn.params["cond"]
            loop = lower.WHILE_TRUE.fill(cond=lower.lower(cond.eqns), pred=cond.results[0],
                                         body=body_stmts + updates)
        self.dots.update(carry_dots)
        return setup + loop


def jvp_blocks(fn, namer, dots):
    """Statements of the forward pass with tangents; the output's tangent."""
    fwd = Forward(namer, dots)
    blocks = []
    for eqn in fn.eqns:
        stmts = fwd.eqn(eqn)
        if blocks and blocks[-1].origin is eqn.origin:
            blocks[-1].stmts.extend(stmts)
        else:
            blocks.append(Block(stmts, eqn.origin))
    return blocks, fwd
