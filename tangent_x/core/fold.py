"""Constant folding of generated expressions: the seed's ones, numbers.

Rules are instantiated with the cotangent ``1.0`` when the output is the
scalar being differentiated; folding ``1.0 * e`` away keeps generated code
free of ``x * 1.0``.  The transforms fold each instantiated rule as they
emit it (``fold_ones``); the peephole pass folds again once shapes and
constants are known (``fold_binop``, ``fold_unaryop``).
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


def _keeps_float(node, ints):
    """Whether ``1.0 * node`` must stay: ``node`` names a value that may be an
    int (``ints``: such names, or None for every name).  A cotangent has
    the floating type of its primal (as in JAX): ``s_bar = 1.0 * i`` folded
    to ``s_bar = i`` would make it an int, and a loop that then makes it a
    float gives one variable two types (which Numba cannot compile)."""
    return isinstance(node, gast.Name) and (ints is None or node.id in ints)


def fold_binop(node, ints=frozenset()):
    """The folding of one ``BinOp`` whose operands are already folded;
    ``ints``: names that may hold ints, whose ``1.0 *`` stays (None: every
    name's does, for a pass that cannot tell yet)."""
    if _number(node.left) and _number(node.right) and type(node.op) in _FOLD:
        return ir.const(_FOLD[type(node.op)](node.left.value, node.right.value))
    if isinstance(node.op, gast.Pow) and _number(node.right) and node.right.value == 1:
        return node.left
    if isinstance(node.op, gast.Mult):
        if _is_one(node.left) and not _keeps_float(node.right, ints):
            return _as_float(node.right)
        if _is_one(node.right) and not _keeps_float(node.left, ints):
            return _as_float(node.left)
    if isinstance(node.op, gast.Div) and _is_one(node.right) and \
            not _keeps_float(node.left, ints):
        return _as_float(node.left)
    return node


def fold_unaryop(node):
    """The folding of one ``UnaryOp`` whose operand is already folded."""
    if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
            and isinstance(node.operand.value, (int, float)) \
            and not isinstance(node.operand.value, bool):
        return ir.const(-node.operand.value)
    return node


class _FoldOnes(gast.NodeTransformer):
    def __init__(self, ints):
        self.ints = ints

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return fold_binop(node, self.ints)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return fold_unaryop(node)


def fold_ones(node, ints=frozenset()):
    """Fold the ones of ``node`` (see ``fold_binop`` for ``ints``)."""
    return _FoldOnes(ints).visit(node)
