"""Activity analysis: which variables a derivative flows through.

A variable is *active* when it depends on a differentiated input
(``forward_active``) and influences the differentiated output
(``activity``); only active variables get a cotangent or a tangent, so no
zero derivatives are ever built.  Flags, counters and indices stay
inactive.
"""
from ..core import ir


def differentiable(eqn):
    """Whether a derivative may flow through ``eqn``.  An opaque call (no
    rule known) counts as differentiable, so that a gradient needing it
    fails loudly instead of silently being zero."""
    return eqn.prim.differentiable or eqn.prim.kind == "opaque"


def forward_active(eqns, active):
    """``active`` plus every variable of ``eqns`` that depends on it.

    Precise through control flow: an ``if`` output is active only if a
    branch's value for it is, a loop's carry only if its start value or the
    body makes it so (a fixed point).  Flags, counters and indices stay
    inactive and never get cotangents."""
    active = set(active)
    for eqn in eqns:
        if not differentiable(eqn) or not eqn.reads() & active:
            continue
        kind = eqn.prim.kind
        if kind == "cond":
            for body in eqn.params["branches"]:
                inner = forward_active(body.eqns, active)
                active.update(o for o, r in zip(eqn.outs, body.results)
                              if ir.names_in(r) & inner)
        elif kind in ("while", "for_range"):
            active.update(loop_active_carries(eqn, active))
        else:
            active.update(eqn.outs)
    return active


def loop_active_carries(eqn, active):
    """The carried variables of a loop that can hold a derivative: active at
    the start, or made active by the body (a fixed point)."""
    carry = list(eqn.params["carry"])
    body = eqn.params["body"]
    inits = eqn.args[len(eqn.args) - len(carry):]
    result = {c for c, a in zip(carry, inits) if ir.names_in(a) & active}
    while True:
        inner = forward_active(body.eqns, active | result)
        grown = result | {c for c, r in zip(carry, body.results) if ir.names_in(r) & inner}
        if grown == result:
            return result
        result = grown


def activity(eqns, wrt, roots):
    """Variables that depend on ``wrt`` *and* influence one of ``roots``.

    Compound equations are a whole for the second half (what influences
    the roots); their bodies get their own analysis when their adjoint is
    built."""
    active = forward_active(eqns, wrt)
    needed = set(roots)
    for eqn in reversed(eqns):
        if set(eqn.outs) & needed and differentiable(eqn):
            needed |= eqn.reads() & active
    return active & needed
