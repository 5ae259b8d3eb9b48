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


def _defs_and_uses(stmt):
    """(names a statement defines, names it reads, whether it must stay)."""
    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        return set(), {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)}, True
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        uses = ir.names_in(stmt.value)
        if isinstance(target, gast.Subscript):        # x[i] = v updates x
            base = target.value.id
            return {base}, uses | ir.names_in(target.slice) | {base}, False
        if isinstance(target, gast.Tuple):
            return {e.id for e in target.elts}, uses, False
        return {target.id}, uses, False
    call = getattr(stmt, "value", None)
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
            and call.func.attr == "at" and call.args and ir.is_name(call.args[0]):
        base = call.args[0].id                        # np.add.at(x, i, v) updates x
        return {base}, ir.names_in(stmt), False
    return set(), ir.names_in(stmt), True


def eliminate_dead_code(blocks, live):
    """Drop statements whose results are never read.  ``live``: names read at the end."""
    live = set(live)
    for block in reversed(blocks):
        kept = []
        for stmt in reversed(block.stmts):
            defs, uses, effect = _defs_and_uses(stmt)
            if effect or defs & live:
                if not _is_update(stmt):
                    live -= defs
                live |= uses
                kept.append(stmt)
        block.stmts = kept[::-1]
    return blocks


def _is_update(stmt):
    """``x[i] = v`` and ``np.add.at(x, i, v)`` modify x rather than define it."""
    if isinstance(stmt, gast.Assign):
        return isinstance(stmt.targets[0], gast.Subscript)
    call = getattr(stmt, "value", None)
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "at"
