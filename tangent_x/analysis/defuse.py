"""Def/use: the names a generated statement binds, reads and updates.

The one place that says what a statement of generated Python defines and
uses.  Liveness (``liveness``) and the python stage's passes read these
facts rather than walking statements themselves.  (The canonicaliser has
its own reading of *user* code, ``canonical.controlflow.stored_names``,
which also knows about nested functions.)
"""
import gast

from ..core import ir


def defs_uses(stmt):
    """(names a simple statement binds, names it reads, whether it must stay
    whatever is live: an effect).  Updates ``x[i] = v``, ``np.add.at(x, ...)``
    and ``x += v`` bind ``x`` and read it."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        value = ir.walk(stmt.value)          # (walked once: names read and changed)
        uses = {n.id for n in value if type(n) is gast.Name and not isinstance(n.ctx, gast.Store)}
        if isinstance(target, gast.Subscript) and ir.is_name(target.value):
            base = target.value.id
            return {base}, uses | ir.names_in(target.slice) | {base}, False
        if isinstance(target, gast.Tuple) and all(ir.is_name(e) for e in target.elts):
            return {e.id for e in target.elts}, uses, False
        if ir.is_name(target):       # x = t.pop() also updates t
            return {target.id} | _mutated(value), uses, False
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


def _mutated(nodes):
    """Names whose object a mutating method call among ``nodes`` changes
    (``t`` in ``t.pop()``): the statement must stay while ``t`` is live."""
    return {n.func.value.id for n in nodes
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


def target_names(node):
    """Every name under an assignment target (``a, (b, c)``)."""
    return {n.id for n in ir.walk_names(node)}


def assigned_targets(stmt):
    """The target nodes of an assignment, augmented assignment or ``for``."""
    if isinstance(stmt, gast.Assign):
        return stmt.targets
    if isinstance(stmt, gast.AugAssign):
        return [stmt.target]
    if isinstance(stmt, gast.For):
        return [stmt.target]
    return []


def names_with_ctx(node, ctx):
    """The names under ``node`` whose context is ``ctx`` (``gast.Load``, ``gast.Store``)."""
    return {n.id for n in ir.walk_names(node) if isinstance(n.ctx, ctx)}


def mentioned_names(stmts):
    """Every name the statements mention, read or bound (nested bodies
    included): what a generated module must import or define."""
    names = set()
    for stmt in stmts:
        names |= {n.id for n in ir.walk_names(stmt)}
    return names


def bound_names(stmts):
    """Names the statements bind (at any depth, nested bodies included)."""
    names = set()
    for stmt in stmts:
        names |= names_with_ctx(stmt, gast.Store)
    return names


def binding_counts(stmts):
    """How many times each name is bound in ``stmts`` (nested bodies included)."""
    counts = {}
    for stmt in stmts:
        for node in ir.walk_names(stmt):
            if isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def own_names(stmt):
    """The Name nodes of a statement outside its nested bodies, reads before
    binds (``x = x + 1`` reads ``x`` first)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return ir.walk_names(stmt.test)
    if isinstance(stmt, gast.For):
        return ir.walk_names(stmt.iter) + ir.walk_names(stmt.target)
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        stores = [n for t in targets for n in ir.walk_names(t)]
        loads = ir.walk_names(stmt.value) + [n for n in stores if not
                                             isinstance(n.ctx, gast.Store)]
        return loads + [n for n in stores if isinstance(n.ctx, gast.Store)]
    return ir.walk_names(stmt)
