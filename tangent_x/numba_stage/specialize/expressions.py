"""Expressions evaluated on abstract values: what is known is computed
now, containers are indexed now, the rest is re-emitted (array indices
bounds-checked, masks and ``@`` through ``numba_runtime``)."""
import ast
import builtins
import operator

import numpy as np

from ... import runtime
from . import calls
from .signals import NeedUnroll
from .syntax import is_simple
from .values import Const, Dyn, Expr, Stale, Steps, Tape, Zero, as_av, describe, is_container, \
    is_namedtuple, is_numeric_array, truth_of

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
          ast.Invert: operator.invert}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


class Expressions:
    """Mixin of ``Specializer``: expressions other than calls."""

    def eval(self, node, hint="value"):
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            self.fail(f"the expression {ast.unparse(node)} cannot be compiled")
        return method(node)

    def eval_Constant(self, node):
        return Const(node.value)

    def eval_Name(self, node):
        if node.id in self.env:
            if isinstance(self.env[node.id], Stale):
                self.fail_list_versions(self.env[node.id].tape)
            return self.env[node.id]
        if node.id in self.globals:
            value = self.globals[node.id]
            if isinstance(value, (dict, list, tuple)):
                return Const(value)
            if is_numeric_array(value):
                return self.outside_array(value, node.id)
            return Const(value, node)
        if hasattr(builtins, node.id):
            return Const(getattr(builtins, node.id), node)
        self.fail(f"the name {node.id} is not defined")

    def eval_Tuple(self, node):
        return tuple(self.materialize(self.eval(e)) for e in node.elts)

    def eval_List(self, node):
        return [self.materialize(self.eval(e)) for e in node.elts]

    def eval_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            key = self.eval(k)
            if not isinstance(key, Const):
                self.fail("a dict key computed at run time cannot be compiled")
            out[key.value] = self.materialize(self.eval(v))
        return out

    def eval_Slice(self, node):
        parts = [self.eval(p) if p is not None else Const(None)
                 for p in (node.lower, node.upper, node.step)]
        if all(isinstance(p, Const) for p in parts):
            return Const(slice(*(p.value for p in parts)))
        return Expr(ast.Slice(*[None if (isinstance(p, Const) and p.value is None)
                                else self.render(p) for p in parts]))

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        if isinstance(base, tuple) and is_namedtuple(base):
            return getattr(base, node.attr)
        if isinstance(base, Const):
            try:
                value = getattr(base.value, node.attr)
            except AttributeError:
                self.fail(f"{describe(base)} has no attribute {node.attr}")
            if isinstance(value, np.ndarray):
                return Const(value)
            return Const(value, node if base.node is not None else None)
        if is_container(base):
            self.fail(f"{describe(base)} has no attribute {node.attr}")
        if node.attr == "ndim" and isinstance(base, Dyn) and base.name in self.ranks:
            return Const(self.ranks[base.name])
        return Expr(ast.Attribute(value=self.render(base), attr=node.attr, ctx=ast.Load()))

    def eval_Subscript(self, node):
        base = self.eval(node.value)
        index = self.eval(node.slice)
        if isinstance(base, Steps):
            if isinstance(index, Const) and isinstance(index.value, slice):
                return base.sliced(self, index.value)
            if isinstance(index, Const) and isinstance(index.value, int):
                return base.item(self, index.value)
            self.fail("indexing a scan's per-step cotangents with a run-time index cannot "
                      "be compiled")
        if is_container(base) or (isinstance(base, Const) and
                                  isinstance(base.value, (dict, list, tuple))):
            if not isinstance(index, Const):
                raise NeedUnroll(getattr(node.value, "id", "?"), self.where())
            container = base.value if isinstance(base, Const) else base
            try:
                item = container[index.value]
            except (KeyError, IndexError, TypeError) as exc:
                self.fail(f"{describe(base)}[{index.value!r}] fails: {exc}")
            if isinstance(base, Const):
                if is_numeric_array(item):
                    return self.outside_array(item, getattr(node.value, "id", "item"))
                return as_av(item)
            return item
        if isinstance(base, Tape) and is_container(base.template):
            if isinstance(index, Const) and isinstance(index.value, slice):
                return self.tape_slice(base, index.value)   # ``pairs[::-1]``
            return self.tape_item(base, index)
        if isinstance(base, Zero):
            return Zero(Expr(ast.Subscript(value=self.render(base.like), slice=self.render(index),
                                           ctx=ast.Load())))
        if isinstance(base, Const) and isinstance(index, Const) and \
                not isinstance(base.value, np.ndarray):
            try:
                return as_av(base.value[index.value])
            except (KeyError, IndexError, TypeError) as exc:
                self.fail(f"{describe(base)}[{index.value!r}] fails: {exc}",
                          "this index is out of range for the static values given")
        if isinstance(index, list) and index and all(
                isinstance(c, Const) and isinstance(c.value, (int, np.integer)) for c in index):
            index = Const([c.value for c in index])
        if isinstance(index, Const) and isinstance(index.value, list):
            index = Const(np.asarray(index.value))        # x[[0, 2, 2]]: an index array
        if isinstance(index, Const) and index.value is Ellipsis:
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            return Expr(ast.Call(func=self.global_name(numba_runtime.whole, "whole"),
                                 args=[self.render(base)], keywords=[]))
        if isinstance(base, Const) and isinstance(base.value, range):
            r = base.value
            return Expr(ast.parse(f"{r.start} + ({ast.unparse(self.render(index))}) * {r.step}",
                                  mode="eval").body)
        if isinstance(base, Dyn) and base.name in self.ranges:
            handlers, _ = calls.registries()
            return handlers[runtime.iteration_item](self, [base, index], {})
        if isinstance(base, Expr) and not is_simple(base.node):
            base = self.materialize(base, "indexed")
        if isinstance(index, Dyn) and index.name in self.masks:
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            return Expr(ast.Call(func=self.global_name(numba_runtime.mask_select,
                                                       "mask_select"),
                                 args=[self.render(base), self.checked(base, index)],
                                 keywords=[]))
        return Expr(ast.Subscript(value=self.render(base), slice=self.checked(base, index),
                                  ctx=ast.Load()))

    def checked(self, base, index):
        """The index node of ``base[index]``, wrapped in
        ``checked(base, index)`` (see bounds.py: compiled code reads past
        an array's end without a word) unless every part of it is a slice,
        ``None`` or ``...``, which select nothing out of range."""
        node = self.render(index, "index")
        parts = list(index) if isinstance(index, tuple) else [index]
        if isinstance(index, Const) and isinstance(index.value, tuple):
            parts = [Const(v) for v in index.value]
        if all(isinstance(p, Const) and (p.value is None or p.value is Ellipsis or
                                         isinstance(p.value, slice)) or
               isinstance(p, Expr) and isinstance(p.node, ast.Slice) for p in parts):
            return node
        from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
        return ast.Call(func=self.global_name(numba_runtime.checked, "checked"),
                        args=[self.render(base), node], keywords=[])

    def eval_Index(self, node):     # pragma: no cover - Python < 3.9
        return self.eval(node.value)

    def eval_BinOp(self, node):
        return self.binop(self.eval(node.left), node.op, self.eval(node.right))

    def binop(self, a, op, b):
        if isinstance(a, Const) and isinstance(b, Const):
            return self.fold(lambda x, y: _BINOPS[type(op)](x, y), [a, b])
        if isinstance(op, ast.Add) and (is_container(a) or is_container(b)):
            if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                return a + b
        for side in (a, b):
            if isinstance(side, dict):
                self.fail(f"arithmetic on the container {describe(side)}")
        if isinstance(op, ast.MatMult):
            # ``a @ b`` as numba_runtime.matmul: matrix products in our kernel
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            return Expr(ast.Call(func=self.global_name(numba_runtime.matmul, "matmul"),
                                 args=[self.render(a), self.render(b)], keywords=[]))
        return Expr(ast.BinOp(left=self.render(a), op=op, right=self.render(b)))

    def eval_UnaryOp(self, node):
        a = self.eval(node.operand)
        if isinstance(a, Const):
            return self.fold(lambda x: _UNARY[type(node.op)](x), [a])
        if isinstance(node.op, ast.Not) and is_container(a):
            return Const(not a)
        return Expr(ast.UnaryOp(op=node.op, operand=self.render(a)))

    def eval_Compare(self, node):
        values = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
        if all(isinstance(v, Const) for v in values):
            def compare(*vs):
                for op, x, y in zip(node.ops, vs, vs[1:]):
                    if not _COMPARE[type(op)](x, y):
                        return False
                return True
            return self.fold(compare, values)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            a, b = values
            if isinstance(b, Const) and b.value is None:
                result = isinstance(a, Const) and a.value is None
                return Const(result if isinstance(node.ops[0], ast.Is) else not result)
        if any(is_container(v) for v in values):
            self.fail("comparison of containers cannot be compiled")
        return Expr(ast.Compare(left=self.render(values[0]), ops=node.ops,
                                comparators=[self.render(v) for v in values[1:]]))

    def eval_BoolOp(self, node):
        values = []
        for v in node.values:
            value = self.eval(v)
            if isinstance(value, Const):
                truth = bool(value.value)
                if isinstance(node.op, ast.And) and not truth:
                    return value if not values else self._boolop(node, values + [value])
                if isinstance(node.op, ast.Or) and truth:
                    return value if not values else self._boolop(node, values + [value])
                continue
            values.append(value)
        if not values:
            return self.eval(node.values[-1])
        return self._boolop(node, values)

    def _boolop(self, node, values):
        if len(values) == 1:
            return values[0]
        return Expr(ast.BoolOp(op=node.op, values=[self.render(v) for v in values]))

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if isinstance(test, Const) or is_container(test):
            return self.eval(node.body if truth_of(test) else node.orelse)
        return Expr(ast.IfExp(test=self.render(test), body=self.render(self.eval(node.body)),
                              orelse=self.render(self.eval(node.orelse))))

    def eval_JoinedStr(self, node):
        return Const("")
