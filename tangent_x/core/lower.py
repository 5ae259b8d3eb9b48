"""Lowering: compound equations become real ``if``/``for``/``while`` code.

Loops stay loops: a ``for_range`` equation is a Python ``for`` over
``range``, a ``while`` equation a Python ``while``, a ``cond`` an ``if``.
Carried variables are assigned before the loop and updated at the end of
its body.  When a reverse pass needs it, ``tapes`` names a list per carried
variable onto which the forward loop pushes the carry at the start of each
iteration (``h_tape.append(h)``): the readable tape (plus, for a body value
the backward loop reads only for its shape, a list of its shapes).
Control flow is written as quoted code (``quoted.py``).  Generated
statements travel in ``Block``s: those of one user line, with its origin.
"""
import gast

from . import ir
from .builders import assign, call
from .quoted import quote


class Block:
    """Statements generated from one user line (or one rule application):
    the unit transforms produce and the python stage renders, with the
    comment that ties it to that line."""

    def __init__(self, stmts, origin=None, comment=None):
        self.stmts = list(stmts)
        self.origin = origin
        self.comment = comment


def assign_many(targets, values):
    """``a, b = x, y`` when one value reads another target, else one line each."""
    pairs = [(t, v) for t, v in zip(targets, values) if not ir.is_name(v, t)]
    if not pairs:
        return []
    if len(pairs) > 1 and any(ir.names_in(v) & {t for t, _ in pairs} for _, v in pairs):
        return [gast.Assign(
            targets=[gast.Tuple(elts=[ir.name(t, gast.Store()) for t, _ in pairs],
                                ctx=gast.Store())],
            value=gast.Tuple(elts=[v for _, v in pairs], ctx=gast.Load()),
            type_comment=None)]
    return [assign(t, v) for t, v in pairs]


def range_call(start, stop, step):
    one = isinstance(step, gast.Constant) and step.value == 1
    zero = isinstance(start, gast.Constant) and start.value == 0
    args = [stop] if (one and zero) else ([start, stop] if one else [start, stop, step])
    return call("range", *args)


def lower(eqns, tapes=None):
    """Statements for ``eqns``; ``tapes(eqn)`` -> {carry: tape name} or None.
    Each statement made for an equation carries its origin (``ORIGIN``),
    so lines inside a loop or branch map to the user's own line, not only
    to the one the whole block came from (see ``python_stage.emit``)."""
    out = []
    for eqn in eqns:
        kind = eqn.prim.kind
        if kind == "cond":
            made = lower_cond(eqn, tapes)
        elif kind == "while":
            made = lower_while(eqn, tapes)
        elif kind == "for_range":
            made = lower_for(eqn, tapes)
        elif kind == "custom" and tapes and tapes(eqn):
            made = lower_custom_fwd(eqn, tapes(eqn))
        else:
            made = ir.spell(eqn)
        if eqn.origin is not None:
            for stmt in made:
                if getattr(stmt, ORIGIN, None) is None:
                    setattr(stmt, ORIGIN, eqn.origin)
        out += made
    return out


ORIGIN = ir.ORIGIN


IF = quote("""
    if test:
        body
    else:
        orelse
""")
IF_NOT = quote("""
    if not test:
        body
""")


def lower_cond(eqn, tapes):
    body, orelse = [lower(body.eqns, tapes) + assign_many(eqn.outs, body.results)
                    for body in eqn.params["branches"]]
    return IF.fill(test=eqn.args[0], body=body, orelse=orelse)


NEW_TAPE = quote("tape = []")
PUSH = quote("tape.append(value)")
PUSH_SHAPE = quote("tape.append(np.shape(value))")


def _push(eqn, tapes):
    """(tape setup, pushes at the start of an iteration, pushes at its end).

    A loop's tapes hold its carried variables, pushed as an iteration
    starts, and the shapes of body values the backward loop reads only for
    their shape (``np.shape(x)``, pushed once ``x`` is computed)."""
    names = tapes(eqn) if tapes else None
    if not names:
        return [], [], []
    setup = [NEW_TAPE.stmt(tape=t) for t in names.values()]
    carry = set(eqn.params["carry"])
    push = [PUSH.stmt(tape=t, value=c) for c, t in names.items() if c in carry]
    shapes = [PUSH_SHAPE.stmt(tape=t, value=x) for x, t in names.items() if x not in carry]
    return setup, push, shapes


WHILE = quote("""
    while test:
        body
""")
WHILE_TRUE = quote("""
    while True:
        cond
        if not pred:
            break
        body
""")


def lower_while(eqn, tapes):
    carry = list(eqn.params["carry"])
    cond, body = eqn.params["cond"], eqn.params["body"]
    setup, push, shapes = _push(eqn, tapes)
    pred = cond.results[0]
    inner = push + lower(body.eqns, tapes) + shapes + assign_many(carry, body.results)
    if not cond.eqns:
        loop = WHILE.fill(test=pred, body=inner)
    elif len(cond.eqns) == 1 and cond.eqns[0].prim.kind in ("compare", "unaryop") \
            and ir.is_name(pred, cond.eqns[0].out):
        loop = WHILE.fill(test=ir.expr_of(cond.eqns[0]), body=inner)
    else:
        loop = WHILE_TRUE.fill(cond=lower(cond.eqns, tapes), pred=pred, body=inner)
    return assign_many(carry, eqn.args) + setup + loop


FOR = quote("""
    for index in iterations:
        body
""")


def lower_for(eqn, tapes):
    start, stop, step = eqn.args[:3]
    carry = list(eqn.params["carry"])
    body = eqn.params["body"]
    setup, push, shapes = _push(eqn, tapes)
    inner = push + lower(body.eqns, tapes) + shapes + assign_many(carry, body.results)
    loop = FOR.fill(index=eqn.params["index"], iterations=range_call(start, stop, step),
                    body=inner)
    return assign_many(carry, eqn.args[3:]) + setup + loop


def lower_custom_fwd(eqn, residuals):
    """``out, out_residuals = f_fwd(*args)``: a custom_vjp's forward rule."""
    target = gast.Tuple(elts=[ir.name(eqn.out, gast.Store()), ir.name(residuals, gast.Store())],
                        ctx=gast.Store())
    return [assign(target, call(ir.name(eqn.params["fwd"]), *eqn.args))]
