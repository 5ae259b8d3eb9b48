"""Liveness over generated Python, loops and branches included.

Generated code is straight-line statements plus ``if``/``for``/``while``
(with ``break`` and ``continue``).  A variable is *live* after a statement
when some path from there reads it before redefining it; a statement whose
results are not live (and that has no effect) is dead.  Liveness here is
the "strongly live" kind: a dead statement's operands do not become live
because of it, so whole chains of unused work go at once -- such as the
copies a loop makes of a carried value that nothing reads after the loop,
or the forward values a backward loop recomputes and no adjoint reads.
Loops iterate to a fixed point (a value read in the next iteration is live
at the end of the body).

``walk`` computes it and hands every simple statement, with the names live
after it, to a callback that may drop or replace it; the python stage's
passes are such callbacks (``passes.dce``, ``passes.inplace``).  What each
statement binds and reads comes from ``defuse``.
"""
import gast

from ..core import ir
from .defuse import defs_uses, is_update, target_names


class _Loop:
    def __init__(self, exit_live, head_live):
        self.exit_live, self.head_live = exit_live, head_live


def walk(stmts, live_out, visit=None):
    """Names live before ``stmts`` given ``live_out`` after them.

    With ``visit(stmt, live_after) -> list of statements or None``, every
    simple statement that is live is offered to it (None keeps it; a list
    replaces it), and dead ones are dropped; ``stmts`` is edited in place.
    """
    return _block(stmts, frozenset(live_out), None, visit, None)


def _block(stmts, live, loop, visit, memo):
    """Backward over ``stmts``; ``visit`` None means analysis only.
    ``memo`` (analysis only: nothing changes the statements meanwhile) keeps
    each simple statement's ``defs_uses`` while a loop's liveness iterates
    to its fixed point, so loops nested k deep do not read their innermost
    statements afresh on every round of every loop around them."""
    kept = []
    for stmt in reversed(stmts):
        live, replacement = _stmt(stmt, live, loop, visit, memo)
        if visit is not None:
            if replacement is None:
                continue
            kept.extend(reversed(replacement))
    if visit is not None:
        stmts[:] = kept[::-1]
    return live


def _stmt(stmt, live, loop, visit, memo):
    """(live before ``stmt``, the statements to keep in its place or None)."""
    if isinstance(stmt, gast.Return):
        return frozenset(ir.names_in(stmt.value)), [stmt]
    if isinstance(stmt, gast.Break):
        return (loop.exit_live if loop else live), [stmt]
    if isinstance(stmt, gast.Continue):
        return (loop.head_live if loop else live), [stmt]
    if isinstance(stmt, gast.Pass):
        return live, []
    if isinstance(stmt, gast.If):
        return _if(stmt, live, loop, visit, memo)
    if isinstance(stmt, (gast.For, gast.While)):
        return _loop(stmt, live, visit, memo)
    if memo is None:
        defs, uses, effect = defs_uses(stmt)
    else:
        found = memo.get(id(stmt))      # (the statement kept: its id stays its own)
        if found is None:
            found = memo[id(stmt)] = (stmt, defs_uses(stmt))
        defs, uses, effect = found[1]
    if not effect and not defs & live:
        return live, None                              # dead
    before = live if is_update(stmt) else live - defs
    result = [stmt]
    if visit is not None:
        replaced = visit(stmt, live)
        if replaced is not None:
            result = replaced
    return frozenset(before | uses), result


def _if(stmt, live, loop, visit, memo):
    body = _block(stmt.body, live, loop, visit, memo)
    orelse = _block(stmt.orelse, live, loop, visit, memo)
    test = ir.names_in(stmt.test)
    if visit is not None and not stmt.body and not stmt.orelse:
        return live, None
    if visit is not None and not stmt.body:
        stmt.test = gast.UnaryOp(op=gast.Not(), operand=stmt.test)
        stmt.body, stmt.orelse = stmt.orelse, []
    return frozenset(body | orelse | test), [stmt]


def _loop(stmt, live, visit, memo):
    """Iterate the body's liveness to a fixed point at the loop head."""
    is_for = isinstance(stmt, gast.For)
    after = _block(stmt.orelse, live, None, visit, memo) if stmt.orelse else live
    fixed = set() if is_for else ir.names_in(stmt.test)
    target = target_names(stmt.target) if is_for else set()
    head = frozenset(after | fixed)
    rounds = {} if memo is None else memo
    while True:
        body = _block(stmt.body, head, _Loop(live, head), None, rounds)
        new = frozenset(head | (body - target))
        if new == head:
            break
        head = new
    if visit is not None:
        _block(stmt.body, head, _Loop(live, head), visit, None)
        if not stmt.body:
            if is_for and not stmt.orelse and not target & live:
                return frozenset(after | ir.names_in(stmt.iter)), None
            stmt.body = [gast.Pass()]
    before = head | (ir.names_in(stmt.iter) if is_for else set())
    return frozenset(before), [stmt]


def walk_blocks(blocks, live_out, visit=None):
    """``walk`` over a function's blocks (``lower.Block``), last to first."""
    live = frozenset(live_out)
    for block in reversed(blocks):
        live = walk(block.stmts, live, visit)
    return live
