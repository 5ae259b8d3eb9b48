"""Python-stage cleanup: fold the seed's ones, drop dead code.

Rules are instantiated with the cotangent ``1.0`` when the output is the
scalar being differentiated; folding ``1.0 * e`` away keeps generated code
free of ``x * 1.0``.  Dead-code elimination removes forward computations
that neither the result nor the backward pass reads.
"""
import gast

from . import ir


def _is_one(node):
    return isinstance(node, gast.Constant) and type(node.value) is float and node.value == 1.0


def _as_float(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return ir.const(float(node.value))
    return node


_FOLD = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
         gast.Mult: lambda a, b: a * b}


def _number(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


class _FoldOnes(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if _number(node.left) and _number(node.right) and type(node.op) in _FOLD:
            return ir.const(_FOLD[type(node.op)](node.left.value, node.right.value))
        if isinstance(node.op, gast.Pow) and _number(node.right) and node.right.value == 1:
            return node.left
        if isinstance(node.op, gast.Mult):
            if _is_one(node.left):
                return _as_float(node.right)
            if _is_one(node.right):
                return _as_float(node.left)
        if isinstance(node.op, gast.Div) and _is_one(node.right):
            return _as_float(node.left)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.operand.value, (int, float)) \
                and not isinstance(node.operand.value, bool):
            return ir.const(-node.operand.value)
        return node


def fold_ones(node):
    return _FoldOnes().visit(node)


# methods that change the object they are called on: an assignment of
# their result (``x = x_tape.pop()``) must stay even when ``x`` is dead
_MUTATING = frozenset("pop append extend insert remove clear update setdefault popitem "
                      "sort reverse fill put resize".split())


def _mutates(node):
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
               and n.func.attr in _MUTATING for n in gast.walk(node))


def _has_call(node, allowed=()):
    return any(isinstance(n, gast.Call) and not (isinstance(n.func, gast.Name)
                                                 and n.func.id in allowed)
               for n in gast.walk(node))


def _defs_and_uses(stmt):
    """(names a simple statement defines, names it reads, whether it must stay)."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        uses = ir.names_in(stmt.value)
        effect = _mutates(stmt.value)
        if isinstance(target, gast.Subscript):        # x[i] = v updates x
            base = target.value.id
            return {base}, uses | ir.names_in(target.slice) | {base}, effect
        if isinstance(target, gast.Tuple):
            return {e.id for e in target.elts}, uses, effect
        return {target.id}, uses, effect
    call = getattr(stmt, "value", None)
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
            and call.func.attr == "at" and call.args and ir.is_name(call.args[0]):
        base = call.args[0].id                        # np.add.at(x, i, v) updates x
        return {base}, ir.names_in(stmt), False
    return set(), ir.names_in(stmt), True


def eliminate_dead_code(blocks, live):
    """Drop statements whose results are never read.  ``live``: names read at the end.

    Loops and branches are entered: the backward pass of a loop replays the
    forward body to recover the values its adjoint reads, and whatever of
    that replay the adjoint does not read goes (``sin_x = np.sin(x)`` of a
    step whose derivative needs only ``np.cos(x)``)."""
    live = set(live)
    for block in reversed(blocks):
        block.stmts, live = _prune(block.stmts, live, None)
    return blocks


def _prune(stmts, live, loop):
    """(the statements of ``stmts`` that matter, names live before them),
    given the names live after them.  ``loop``: (names live after the
    enclosing loop, names live at the end of its body), for ``break`` and
    ``continue``.  Builds new compound statements; never edits its input."""
    live = set(live)
    kept = []
    for stmt in reversed(stmts):
        if isinstance(stmt, (gast.For, gast.While)):
            stmt, live = _prune_loop(stmt, live)
            if stmt is not None:
                kept.append(stmt)
            continue
        if isinstance(stmt, gast.If):
            body, live_body = _prune(stmt.body, live, loop)
            orelse, live_else = _prune(stmt.orelse, live, loop)
            if not body and not orelse and not _has_call(stmt.test):
                continue
            test = stmt.test
            if not body:
                body, orelse = orelse, []
                test = gast.UnaryOp(op=gast.Not(), operand=test)
            kept.append(gast.If(test=test, body=body, orelse=orelse))
            live = live_body | live_else | ir.names_in(stmt.test)
            continue
        if isinstance(stmt, (gast.Break, gast.Continue)) and loop is not None:
            live = set(loop[0] if isinstance(stmt, gast.Break) else loop[1])
            kept.append(stmt)
            continue
        defs, uses, effect = _defs_and_uses(stmt)
        if effect or defs & live:
            if not _is_update(stmt):
                live -= defs
            live |= uses
            kept.append(stmt)
    return kept[::-1], live


def _prune_loop(stmt, live_after):
    """(the loop without its dead statements, or None when nothing of it
    matters; names live before it).  Liveness around a loop is a least
    fixed point: live at the end of the body is what is live after the
    loop, what its header reads, and what the next iteration reads before
    writing; it is grown until stable, the body pruned afresh each time."""
    is_for = isinstance(stmt, gast.For)
    header = ir.names_in(stmt.iter if is_for else stmt.test)
    live_end = set(live_after) | header
    while True:
        body, live_start = _prune(stmt.body, live_end, (set(live_after), live_end))
        if live_start <= live_end:
            break
        live_end |= live_start
    live_before = set(live_after) | header | live_start
    if not is_for:
        return gast.While(test=stmt.test, body=body or [gast.Pass()], orelse=[]), live_before
    if not body and not _has_call(stmt.iter, ("range", "reversed", "len")):
        return None, set(live_after)
    live_before -= ir.names_in(stmt.target) - set(live_after)
    return gast.For(target=stmt.target, iter=stmt.iter, body=body or [gast.Pass()],
                    orelse=[], type_comment=None), live_before


def _is_update(stmt):
    """``x[i] = v`` and ``np.add.at(x, i, v)`` modify x rather than define it."""
    if isinstance(stmt, gast.Assign):
        return isinstance(stmt.targets[0], gast.Subscript)
    call = getattr(stmt, "value", None)
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "at"
