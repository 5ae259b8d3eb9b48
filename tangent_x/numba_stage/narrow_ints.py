"""Integers narrower than 32 bits in float arithmetic, typed as NumPy types them.

Why: NumPy computes ``np.exp`` (and every ufunc with float loops only) of an
int16 or uint16 array in float32, and of an int8, uint8 or bool one in
float16; it divides integers (``img / 255``) in float64.  Numba takes the
first float loop it supports instead: ``np.exp(int16)`` is float64 under
Numba, ``np.sin(int8)`` float32, and ``uint8 / uint8`` float32.  So when a
call signature has integer leaves narrower than 32 bits (``small_ints``),
the numba stage spells each operand of those ufuncs ``float_operand(x)``
(cast to float32 for 16-bit integers; for 8-bit integers a compile-time
refusal, as Numba has no float16 arithmetic) and the left operand of a
division ``division_operand(a, b)`` (cast to float64 when both are
integers).  Eagerly both are the operand itself (see
``overloads.promotion``).
"""
import ast

import numpy as np

from .weak_scalars import cheap, copy_load


def small_ints(leaves):
    """Whether an argument leaf holds integers narrower than 32 bits, or
    bools (``np.exp`` of a mask is float16 in NumPy)."""
    return any(isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "biu" and
               leaf.dtype.itemsize < 4 for leaf in leaves)


def _float_only(name):
    """Whether ``np.<name>`` is a ufunc with float loops only (``exp``,
    ``arctan2``; not ``add`` or ``floor``), giving one output."""
    fn = getattr(np, name, None)
    return isinstance(fn, np.ufunc) and fn.nout == 1 and all(
        c in "efdgFDGO" for t in fn.types for c in t.split("->")[0]) and \
        all(t.split("->")[1] not in "?" for t in fn.types)


def spell(stmts, module_names, float_helper="float_operand",
          division_helper="division_operand"):
    """Spell the operands of float-only ufuncs (``module_names``: the names
    bound to numpy and to vmath) and of divisions in ``stmts`` (changed in
    place) with the helpers.  Returns the helpers used."""
    spelling = _Spell(module_names, float_helper, division_helper)
    for stmt in stmts:
        spelling.visit(stmt)
    return spelling.used


def _is_literal(node):
    return isinstance(node, ast.Constant) or isinstance(node, ast.UnaryOp) and \
        isinstance(node.operand, ast.Constant)


class _Spell(ast.NodeTransformer):
    def __init__(self, module_names, float_helper, division_helper):
        self.module_names = module_names
        self.float_helper, self.division_helper = float_helper, division_helper
        self.used = set()

    def call(self, helper, *args):
        self.used.add(helper)
        return ast.Call(func=ast.Name(id=helper, ctx=ast.Load()), args=list(args), keywords=[])

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in self.module_names and _float_only(func.attr) and \
                not node.keywords:
            node.args = [a if _is_literal(a) or isinstance(a, ast.Starred) else
                         ast.copy_location(self.call(self.float_helper, a), a)
                         for a in node.args]
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Div) or (_is_literal(node.left) and
                                                 _is_literal(node.right)):
            return node
        # the operand cast is the one whose partner can be read twice
        if cheap(node.right):
            node.left = ast.copy_location(
                self.call(self.division_helper, node.left, copy_load(node.right)), node.left)
        elif cheap(node.left):
            node.right = ast.copy_location(
                self.call(self.division_helper, node.right, copy_load(node.left)), node.right)
        return node

