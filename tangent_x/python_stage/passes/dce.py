"""Dead-code elimination over generated Python.

Statements whose results nothing reads go, inside loops and branches too
(the liveness of ``analysis.liveness``), and so do tapes that are pushed
and popped for nothing.
"""
import gast

from ...core import ir
from ...analysis.liveness import walk_blocks


def eliminate_dead_code(blocks, live_out):
    """Drop the statements of ``blocks`` (nested ones included) whose results
    are never read; ``live_out``: names read at the end."""
    walk_blocks(blocks, live_out, lambda stmt, live: None)
    return blocks


def _is_new_list(stmt):
    """``t = []``: the name ``t``, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            ir.is_name(stmt.targets[0]) and isinstance(stmt.value, gast.List) and \
            not stmt.value.elts:
        return stmt.targets[0].id
    return None


def _list_use(stmt):
    """How a statement uses a list by name, when that is all it does:
    ``("append", t)`` for ``t.append(v)``, ``("pop", t)`` for ``x = t.pop()``
    (a name ``x``), else None."""
    call = getattr(stmt, "value", None)
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            ir.is_name(call.func.value)):
        return None
    if isinstance(stmt, gast.Expr) and call.func.attr == "append":
        return "append", call.func.value.id
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            ir.is_name(stmt.targets[0]) and call.func.attr == "pop" and not call.args:
        return "pop", call.func.value.id
    return None


def drop_unread_tapes(blocks, live_out):
    """Drop the lists made here (``t = []``) that only pushes and pops
    touch and whose popped values nothing reads (the name appears nowhere
    else, so no alias can read the list either); True if any was.  Why: the
    reverse transform tapes every carried variable of a loop, and where the
    backward pass rebuilds one otherwise (``lax.scan``'s list of outputs,
    sliced rather than popped) the tape is pushed and popped for nothing.
    A list read at the end (``live_out``: the forward half of a ``vjp``
    returns its tapes) is kept.
    ``eliminate_dead_code`` cannot see it: each pop keeps the tape live for
    the pop of the next iteration.  Under jit a tape of growing lists is
    also a type Numba has no name for."""
    stmts = [stmt for block in blocks for stmt in _all_stmts(block.stmts)]
    made = {name for name in map(_is_new_list, stmts) if name}
    if not made:
        return False
    occurrences = {}
    for stmt in (stmt for block in blocks for stmt in block.stmts):   # nested ones inside
        for node in ir.walk(stmt):
            if ir.is_name(node) and node.id in made:
                occurrences[node.id] = occurrences.get(node.id, 0) + 1
    accounted = {}
    for stmt in stmts:
        use = _list_use(stmt)
        name = _is_new_list(stmt) or (use[1] if use else None)
        if name in made:
            accounted[name] = accounted.get(name, 0) + 1
    candidates = {name for name in made if occurrences.get(name) == accounted.get(name)
                  and name not in live_out}     # a residual handed to the backward pass
    read = set()

    def note(stmt, live):
        use = _list_use(stmt)
        if use and use[0] == "pop" and use[1] in candidates and stmt.targets[0].id in live:
            read.add(use[1])
    if candidates:
        walk_blocks(blocks, live_out, note)
    dead = candidates - read
    for block in blocks:
        _drop(block.stmts, dead)
    return bool(dead)


def _all_stmts(stmts):
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            yield from _all_stmts(getattr(stmt, field, None) or [])


def _drop(stmts, dead):
    kept = []
    for stmt in stmts:
        use = _list_use(stmt)
        if (_is_new_list(stmt) or (use[1] if use else None)) in dead:
            continue
        for field in ("body", "orelse"):
            body = getattr(stmt, field, None)
            if body:
                _drop(body, dead)
                if field == "body" and not body:
                    body.append(gast.Pass())
        kept.append(stmt)
    stmts[:] = kept
