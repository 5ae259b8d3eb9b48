"""A fused elementwise kernel's statements as one expression, in the form
of Numba's own array expressions (``(op, [operands])``), so that
``joins`` follows a joined value through a kernel's call as through
Numba's array expressions."""
import ast
import operator

import numpy as np

__all__ = ["Weak", "kernel_expression"]


class Weak:
    """A Python number in a fused kernel (``weak_scalar(0.5, x)``): as
    NumPy types it beside the other operand, eagerly and compiled alike."""

    def __init__(self, value):
        self.value = value


_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.USub: operator.neg, ast.UAdd: operator.pos,
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _number(node):
    """The Python int or float a kernel's expression spells (``-0.4``), or None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if type(value) in (int, float) else None


def kernel_expression(kernel, args):
    """A fused kernel's statements (``fused._Fused``: ``params``,
    ``targets``, ``trees``, ``reduce``) called on the variables ``args``,
    as one expression in the form of Numba's array expressions
    (``join_operations.array_expression``), or None where a statement is not an
    operator, a NumPy ufunc or a Python number."""
    env = dict(zip(kernel.params, args))

    def build(node):
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if _number(node) is not None:
            return Weak(_number(node))
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return (_OPERATORS[type(node.op)], [build(node.left), build(node.right)])
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return (_OPERATORS[type(node.op)], [build(node.operand)])
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                type(node.ops[0]) in _OPERATORS:
            return (_OPERATORS[type(node.ops[0])],
                    [build(node.left), build(node.comparators[0])])
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if isinstance(func, ast.Name) and func.id == "weak_scalar" and node.args:
                number = _number(node.args[0])
                if number is not None:
                    return Weak(number)
            # (``vmath.tanh``: np.tanh compiled as a kernel, NumPy's dtypes)
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    func.value.id in ("np", "vmath") and \
                    isinstance(getattr(np, func.attr, None), np.ufunc):
                return (getattr(np, func.attr), [build(a) for a in node.args])
        raise LookupError(ast.unparse(node))

    try:
        for target, tree in zip(kernel.targets, kernel.trees[:-1]):
            env[target] = build(tree)
        out = build(kernel.trees[-1])
    except LookupError:
        return None
    return (np.sum, [out]) if kernel.reduce else out
