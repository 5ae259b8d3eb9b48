"""Which axes of a compiled array have size 1, where the code needs it.

``np.squeeze(a)`` without ``axis`` drops the axes of size 1, so its
result's rank depends on sizes, and a Numba type must know the rank.  The
numba stage otherwise keeps sizes a run-time matter (one compile serves
every size); JAX's answer, specialising on shapes, is taken only as far as
needed: a function that squeezes without ``axis`` is specialised on which
axes of its array arguments have size 1 (part of its jit signature, see
``Jitted._signature``), and the specialiser carries that fact from the
arguments to the squeeze through the assignments between them.

A fact is a tuple with one entry per axis: True (size 1), False (not 1) or
None (not known).  Facts flow through broadcasting arithmetic, ufuncs
(and ``vmath``'s elementwise functions),
``expand_dims`` and ``squeeze``; anything else gives no fact, and a squeeze
whose operand has no complete fact is a located error asking for ``axis=``.
A fact read for a squeeze must hold on every path: every assignment of its
variable must give the fact it had before (a loop carry then keeps it by
induction, both sides of a branch agree), else the squeeze fails (``check``).
"""
import ast

import numpy as np

from .. import runtime
from .specialize.signals import SpecializationError


def needs_unit_axes(function_node):
    """Whether the python stage squeezes without ``axis`` (``np.squeeze(a)``,
    ``a.squeeze()``): only then is the signature specialised on size-1 axes."""
    for node in ast.walk(function_node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "squeeze" and len(node.args) <= 1 and \
                not any(k.arg == "axis" for k in node.keywords):
            return True
    return False


def of_value(value):
    """The fact of an argument: its size-1 axes (a number: no axes)."""
    return tuple(n == 1 for n in np.shape(value))


def broadcast(a, b):
    """The fact of a NumPy broadcast of operands with facts ``a`` and ``b``."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (True,) * (n - len(a)) + tuple(a)
    b = (True,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x is False or y is False:
            out.append(False)          # the other is 1 or equal: not 1
        elif x is True and y is True:
            out.append(True)
        else:
            out.append(None)
    return tuple(out)


def _resolve(s, func):
    """The object a call's ``func`` node names in the numba module."""
    if isinstance(func, ast.Name):
        return s.bound.get(func.id, s.globals.get(func.id))
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = s.bound.get(func.value.id, s.globals.get(func.value.id))
        return getattr(base, func.attr, None)
    return None


def _literal_axes(node):
    """The constant ``axis`` argument as a tuple of ints (None if not constant)."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    axes = (value,) if isinstance(value, int) else tuple(value)
    return axes if all(isinstance(a, int) for a in axes) else None


def infer(s, node, used=None):
    """The fact of the expression ``node`` (None: not known).  ``used``
    collects the variables whose facts it read."""
    # local import: the Numba runtime loads at the first specialisation, not with tangent_x
    from . import numba_runtime
    if isinstance(node, ast.Constant):
        return () if isinstance(node.value, (int, float, complex, bool)) else None
    if isinstance(node, ast.Name):
        fact = s.units.get(node.id)
        if fact is not None and used is not None:
            used.add(node.id)
        return fact
    if isinstance(node, ast.UnaryOp):
        return infer(s, node.operand, used)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
        return broadcast(infer(s, node.left, used), infer(s, node.right, used))
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return broadcast(infer(s, node.left, used), infer(s, node.comparators[0], used))
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    fn = _resolve(s, node.func)
    # local import: vmath's Numba kernels load at the first specialisation, not with tangent_x
    from . import vmath
    if getattr(fn, "__module__", None) == vmath.__name__ and len(node.args) == 1:
        return infer(s, node.args[0], used)        # np.tanh ... as vectorisable loops
    if isinstance(fn, np.ufunc) and len(node.args) == fn.nin:
        fact = ()
        for a in node.args:
            fact = broadcast(fact, infer(s, a, used))
        return fact
    if fn is numba_runtime.expand_dims and len(node.args) == 2:
        inner, axes = infer(s, node.args[0], used), _literal_axes(node.args[1])
        if inner is None or axes is None:
            return None
        n = len(inner) + len(axes)
        new = {a % n for a in axes}
        rest = iter(inner)
        return tuple(True if d in new else next(rest) for d in range(n))
    if fn is numba_runtime.squeeze and len(node.args) == 2:
        inner, axes = infer(s, node.args[0], used), _literal_axes(node.args[1])
        if inner is None or axes is None or not inner:
            return None
        gone = {a % len(inner) for a in axes}
        return tuple(u for d, u in enumerate(inner) if d not in gone)
    if fn in (runtime.stop_gradient, np.copy, np.ascontiguousarray) and len(node.args) == 1:
        return infer(s, node.args[0], used)
    return None


def record(s, stmt):
    """After ``stmt`` is emitted: the fact of each variable it assigns (a
    variable's every fact is kept, for ``check``)."""
    if s.units is None:
        return
    if isinstance(stmt, (ast.If, ast.While)):
        return               # their bodies' statements were emitted (and recorded) one by one
    simple = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], ast.Name)
    stored = stmt.target if isinstance(stmt, ast.For) else stmt
    for node in ast.walk(stored):       # (every store counts: ``check`` counts them)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            fact = infer(s, stmt.value) if simple else None
            s.units_history.setdefault(node.id, []).append(fact)
            if fact is None:
                s.units.pop(node.id, None)
            else:
                s.units[node.id] = fact


def check(s, code, params):
    """Every fact a squeeze read holds on every path: each assignment of its
    variable gives the fact it had before (so a loop carry keeps it
    inductively, and both sides of a branch agree), and every assignment
    in the code was seen."""
    if not s.units_used:
        return
    stores = {}
    for stmt in code:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
    for name, where in s.units_used.items():
        facts = list(s.units_history.get(name, []))
        if name in params:
            facts.append(s.param_units.get(name))
        if len(facts) != stores.get(name, 0) + (name in params) or \
                any(f is None or f != facts[0] for f in facts):
            raise SpecializationError(
                "np.squeeze without axis of a variable whose size-1 axes may differ "
                "between its assignments (a loop carry, a branch): the result's rank is "
                "not known", where, "pass axis= to np.squeeze")
