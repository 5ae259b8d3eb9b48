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
after it, to a callback that may drop or replace it; ``eliminate_dead_code``
and ``inplace.reuse_dead_lists`` are the two callbacks.
"""
import gast

from ..core import ir


def defs_uses(stmt):
    """(names a simple statement binds, names it reads, whether it must stay
    whatever is live: an effect).  Updates ``x[i] = v``, ``np.add.at(x, ...)``
    and ``x += v`` bind ``x`` and read it."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        uses = ir.names_in(stmt.value)
        if isinstance(target, gast.Subscript) and ir.is_name(target.value):
            base = target.value.id
            return {base}, uses | ir.names_in(target.slice) | {base}, False
        if isinstance(target, gast.Tuple) and all(ir.is_name(e) for e in target.elts):
            return {e.id for e in target.elts}, uses, False
        if ir.is_name(target):       # x = t.pop() also updates t
            return {target.id} | _mutated(stmt.value), uses, False
        return set(), uses | ir.names_in(target), True
    if isinstance(stmt, gast.AugAssign) and ir.is_name(stmt.target):
        return {stmt.target.id}, ir.names_in(stmt.value) | {stmt.target.id}, False
    call = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) and \
            isinstance(call.func, gast.Attribute) and call.func.attr == "at" \
            and call.args and ir.is_name(call.args[0]):
        base = call.args[0].id                        # np.add.at(x, i, v) updates x
        return {base}, ir.names_in(stmt), False
    return set(), ir.names_in(stmt), True


# methods that change the object they are called on
_MUTATING = frozenset("pop append extend insert remove clear update setdefault popitem "
                      "sort reverse fill put resize".split())


def _mutated(node):
    """Names whose object a mutating method call in ``node`` changes
    (``t`` in ``t.pop()``): the statement must stay while ``t`` is live."""
    return {n.func.value.id for n in ir.walk(node)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and n.func.attr in _MUTATING and ir.is_name(n.func.value)}


def is_update(stmt):
    """``x[i] = v``, ``x += v`` and ``np.add.at(x, i, v)`` modify ``x``
    rather than bind it afresh: ``x`` stays live before them."""
    if isinstance(stmt, gast.Assign):
        return isinstance(stmt.targets[0], gast.Subscript)
    if isinstance(stmt, gast.AugAssign):
        return True
    call = getattr(stmt, "value", None)
    return isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) and \
        isinstance(call.func, gast.Attribute) and call.func.attr == "at"


def _target_names(node):
    return {n.id for n in ir.walk_names(node)}


class _Loop:
    def __init__(self, exit_live, head_live):
        self.exit_live, self.head_live = exit_live, head_live


def walk(stmts, live_out, visit=None):
    """Names live before ``stmts`` given ``live_out`` after them.

    With ``visit(stmt, live_after) -> list of statements or None``, every
    simple statement that is live is offered to it (None keeps it; a list
    replaces it), and dead ones are dropped; ``stmts`` is edited in place.
    """
    return _block(stmts, frozenset(live_out), None, visit)


def _block(stmts, live, loop, visit):
    """Backward over ``stmts``; ``visit`` None means analysis only."""
    kept = []
    for stmt in reversed(stmts):
        live, replacement = _stmt(stmt, live, loop, visit)
        if visit is not None:
            if replacement is None:
                continue
            kept.extend(reversed(replacement))
    if visit is not None:
        stmts[:] = kept[::-1]
    return live


def _stmt(stmt, live, loop, visit):
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
        return _if(stmt, live, loop, visit)
    if isinstance(stmt, (gast.For, gast.While)):
        return _loop(stmt, live, visit)
    defs, uses, effect = defs_uses(stmt)
    if not effect and not defs & live:
        return live, None                              # dead
    before = live if is_update(stmt) else live - defs
    result = [stmt]
    if visit is not None:
        replaced = visit(stmt, live)
        if replaced is not None:
            result = replaced
    return frozenset(before | uses), result


def _if(stmt, live, loop, visit):
    body = _block(stmt.body, live, loop, visit)
    orelse = _block(stmt.orelse, live, loop, visit)
    test = ir.names_in(stmt.test)
    if visit is not None and not stmt.body and not stmt.orelse:
        return live, None
    if visit is not None and not stmt.body:
        stmt.test = gast.UnaryOp(op=gast.Not(), operand=stmt.test)
        stmt.body, stmt.orelse = stmt.orelse, []
    return frozenset(body | orelse | test), [stmt]


def _loop(stmt, live, visit):
    """Iterate the body's liveness to a fixed point at the loop head."""
    is_for = isinstance(stmt, gast.For)
    after = _block(stmt.orelse, live, None, visit) if stmt.orelse else live
    fixed = set() if is_for else ir.names_in(stmt.test)
    target = _target_names(stmt.target) if is_for else set()
    head = frozenset(after | fixed)
    while True:
        body = _block(stmt.body, head, _Loop(live, head), None)
        new = frozenset(head | (body - target))
        if new == head:
            break
        head = new
    if visit is not None:
        _block(stmt.body, head, _Loop(live, head), visit)
        if not stmt.body:
            if is_for and not stmt.orelse and not target & live:
                return frozenset(after | ir.names_in(stmt.iter)), None
            stmt.body = [gast.Pass()]
    before = head | (ir.names_in(stmt.iter) if is_for else set())
    return frozenset(before), [stmt]


def walk_blocks(blocks, live_out, visit=None):
    """``walk`` over a function's blocks (``emit.Block``), last to first."""
    live = frozenset(live_out)
    for block in reversed(blocks):
        live = walk(block.stmts, live, visit)
    return live


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
