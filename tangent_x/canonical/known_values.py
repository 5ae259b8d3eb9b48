"""Values known when transforming, read off the equations already emitted.

A ``while`` loop whose first test holds on entry (``w = np.tanh(-0.6)``
before ``while w < 0.3``) runs at least one turn, which decides what its
carries may be after it (``loops.note_first_values``).  The test is
evaluated here without emitting anything or taking names: constants, and
elementwise primitives or operators of them emitted in the current block,
folded as NumPy computes them; comparisons only where the two sides are
clearly apart (a compiled function may compute the last bits otherwise).
Where the first test is not known to hold, ``note_first_values`` records
that the carries may still be their first values after the loop.  Mixed
into ``converter.Converter``."""
import operator

import gast
import numpy as np

from ..core import ir


class KnownValues:
    """Mixed into ``converter.Converter``."""

    def first_test(self, scope, test):
        """The value of a ``while`` loop's test on entry, where the numbers
        it reads are known when transforming (``w = np.tanh(-0.6)`` before
        ``while w < 0.3``), else None.  Nothing is emitted and no name is
        taken: the equations already emitted are read, and folded only
        where they are elementwise functions of numbers."""
        def value(node):
            if isinstance(node, gast.Constant):
                return node.value
            if isinstance(node, gast.Name):
                return self.known_number(scope.locals.get(node.id))
            if isinstance(node, gast.UnaryOp) and type(node.op) in _UNARY:
                return _UNARY[type(node.op)](value(node.operand))
            if isinstance(node, gast.BinOp) and type(node.op) in _BINARY:
                return _BINARY[type(node.op)](value(node.left), value(node.right))
            if isinstance(node, gast.Compare):
                left, out = value(node.left), True
                for op, right in zip(node.ops, node.comparators):
                    right = value(right)
                    out = out and _BINARY[type(op)](left, right) if type(op) in _BINARY else None
                    left = right
                return out
            if isinstance(node, gast.BoolOp):
                vals = [value(v) for v in node.values]
                if any(v is None for v in vals):
                    return None
                return all(vals) if isinstance(node.op, gast.And) else any(vals)
            return None
        out = value(test)
        return bool(out) if isinstance(out, (bool, np.bool_)) else None

    def known_number(self, atom, depth=0):
        """A real number ``atom`` is known to hold when transforming: a
        constant, or an elementwise primitive (or an operator, or ``len``
        of a ``range``...) of such values emitted in the current block;
        None otherwise."""
        if isinstance(atom, gast.Constant):
            v = atom.value
            return v if type(v) in (int, float, bool) else None
        if not ir.is_name(atom) or depth > 20:
            return None
        eqn = next((e for e in reversed(self.eqns) if atom.id in e.outs), None)
        if eqn is None or eqn.kwargs or eqn.params or eqn.prim.fn is None or not (
                eqn.prim.elementwise or eqn.prim.kind in ("binop", "unaryop", "compare")
                or eqn.prim.name in _BUILTINS):
            return None
        args = [self.known_number(a, depth + 1) for a in eqn.args]
        if any(a is None for a in args):
            return None
        try:
            with np.errstate(all="ignore"):
                out = eqn.prim.fn(*args)
        except (ArithmeticError, TypeError, ValueError):
            return None
        if isinstance(out, np.generic) and out.dtype.kind in "biuf" and out.ndim == 0:
            out = out.item()
        if type(out) is range:      # (only as what len() reads)
            return out
        return out if type(out) in (int, float, bool) and out == out else None

    def note_first_values(self, carry_names, inits, results, ran=None):
        """A carry the loop rebinds is still its first value when the loop
        runs no turn (``acc = x`` before ``while ...: acc = f(x)``): after
        the loop it may be that very array, decided at run time, as an
        ``if``'s result may (``emit_cond``), so changing it in place while
        the first value is read later is refused (``check_joined``).
        Before, ``acc *= v`` there changed ``x`` or not as the turns went,
        and every transform followed one case (fuzz seed 310003).

        ``ran``: for a ``for`` loop, a function emitting the test that it
        ran a turn (``start < stop``): the carry after the loop is then a
        join on that test (``rejoins``: a change in place is followed),
        where the turns surely rebind it to a value of its own."""
        for c, init, r in zip(carry_names, inits, results):
            if ir.is_name(init) and not ir.is_name(r, c):
                sources = self._may_alias.get(init.id, set()) | {init.id}
                self._may_alias.setdefault(c, set()).update(sources)
                if ran is not None and ir.is_name(r) and r.id != init.id and not (
                        {c, init.id} & self._may_alias.get(r.id, set())):
                    self._joins[c] = (ran, [None, init], self.eqns)


_BUILTINS = {"builtins.range", "builtins.len", "builtins.min", "builtins.max", "builtins.abs"}


def _none_safe(fn):
    return lambda *a: None if any(x is None for x in a) else _try(fn, *a)


def _try(fn, *a):
    try:
        return fn(*a)
    except (ArithmeticError, TypeError, ValueError):
        return None


_UNARY = {gast.USub: _none_safe(operator.neg), gast.UAdd: _none_safe(operator.pos),
          gast.Not: _none_safe(operator.not_)}
def _clear(fn):
    """A comparison decided only when its sides are clearly apart: numbers
    folded here by NumPy may differ in the last bits from those a compiled
    function computes at run time."""
    def compare(a, b):
        if isinstance(a, float) or isinstance(b, float):
            if abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)):
                return None
        return fn(a, b)
    return compare


_BINARY = {op: _none_safe(fn) for op, fn in [
    (gast.Add, operator.add), (gast.Sub, operator.sub), (gast.Mult, operator.mul),
    (gast.Div, operator.truediv), (gast.Pow, operator.pow)]}
_BINARY.update({op: _none_safe(_clear(fn)) for op, fn in [
    (gast.Lt, operator.lt), (gast.LtE, operator.le), (gast.Gt, operator.gt),
    (gast.GtE, operator.ge), (gast.Eq, operator.eq), (gast.NotEq, operator.ne)]})
