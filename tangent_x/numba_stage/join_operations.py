"""How one operation reads a joined value: NumPy's dtype of its result on a
path against Numba's of the joined one, judged on samples of each.

``joins`` follows a value that Numba holds in a joined type (a float64
where NumPy's path holds a float32, an int ...) forward through Numba's
typed IR; for each statement reading it, ``operation`` (and, for Numba's
fused array expressions and the fused kernels of ``fused.py``,
``array_expression``) says whether the result is clean (the same numbers
in the same dtype), divergent in turn (the same number in another dtype,
or a cotangent's value in a wider float dtype), or shows the join.  The
rules are ``joins``' module doc's."""
import operator

import numpy as np
from numba.core import ir, types
from numba.np.numpy_support import as_dtype

from .kernel_expressions import Weak as _Weak

__all__ = ["Eager", "number_dtype", "dtype_ndim", "is_weak", "operation", "array_expression"]

# Operations on integers whose value Numba's float computation keeps exactly
# (for integers below 2**53): the result is the same number in a float dtype.
_INTEGER_EXACT = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                  operator.iadd, operator.isub, operator.imul, operator.ifloordiv,
                  operator.imod, operator.neg, operator.pos, abs,
                  np.add, np.subtract, np.multiply, np.floor_divide, np.remainder,
                  np.negative, np.positive, np.absolute, np.maximum, np.minimum,
                  np.fmax, np.fmin}

_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
                np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal}


class Eager:
    """What NumPy holds where Numba holds a joined value: its ``dtype``
    and whether it is a Python number (``weak``)."""

    def __init__(self, dtype, weak, cotangent=False):
        self.dtype, self.weak = np.dtype(dtype), weak
        # a cotangent's value (or one computed from it): Numba may compute
        # it in a wider float dtype than NumPy's path (see the module doc)
        self.cotangent = cotangent

    def sample(self, ndim=0):
        if ndim:
            return np.full((1,) * ndim, 3, dtype=self.dtype)
        if self.weak:
            return {"b": True, "i": 3, "u": 3, "f": 1.5, "c": 1.5 + 0.5j}[self.dtype.kind]
        return self.dtype.type(3)

    def key(self):
        return (self.dtype.str, self.weak, self.cotangent)


def number_dtype(ty):
    """The dtype of a Numba number type (a literal: its type; an optional
    number, a value a loop's ``return`` may have set: its number's), or
    None."""
    if isinstance(ty, types.Optional):
        ty = ty.type
    ty = getattr(ty, "number", ty)                 # weak_number's WeakNumber
    if isinstance(ty, types.Literal):
        ty = getattr(ty, "literal_type", None)
    if isinstance(ty, (types.Number, types.Boolean)):
        try:
            return as_dtype(ty)
        except (NotImplementedError, TypeError):
            return None
    return None


def dtype_ndim(ty):
    """(dtype, ndim) of a Numba number or array type (or an optional one), or None."""
    if isinstance(ty, types.Optional):
        ty = ty.type
    if isinstance(ty, types.Array):
        try:
            return as_dtype(ty.dtype), ty.ndim
        except (NotImplementedError, TypeError):
            return None
    dtype = number_dtype(ty)
    return None if dtype is None else (dtype, 0)


def is_weak(name, ty, definitions):
    """Whether the variable ``name`` holds a Python number eagerly: a
    literal, or ``weak_number(...)``, or a copy of one."""
    seen = set()
    while True:
        if type(ty).__name__ == "WeakNumber" or isinstance(ty, types.Literal):
            return True
        value = definitions.get(name)
        if isinstance(value, ir.Const):
            return isinstance(value.value, (bool, int, float, complex))
        if not isinstance(value, ir.Var) or value.name in seen:
            return False
        seen.add(value.name)
        name = value.name



def _operand_kinds(var, divergent, typemap, definitions):
    """[(eager sample, Numba's sample)] for the operand ``var``."""
    ty = typemap.get(var.name)
    dn = dtype_ndim(ty)
    if dn is None:
        return None
    numba_sample = Eager(dn[0], False).sample(dn[1])
    if var.name in divergent:
        return [(e.sample(dn[1]), numba_sample, e) for e in divergent[var.name]]
    weak = dn[1] == 0 and is_weak(var.name, ty, definitions)
    constant = _constant(var.name, definitions) if weak else None
    if constant is not None:        # (its value: see _exact)
        return [(constant, numba_sample, False)]
    return [(Eager(dn[0], weak).sample(dn[1]), numba_sample, False)]


def _constant(name, definitions):
    """The Python int or float the variable ``name`` holds as a constant
    (or a copy of one), or None."""
    seen = set()
    while name not in seen:
        seen.add(name)
        value = definitions.get(name)
        if isinstance(value, ir.Const):
            return value.value if type(value.value) in (int, float) else None
        if not isinstance(value, ir.Var):
            return None
        name = value.name
    return None


def _exact(combo, dtype):
    """Whether every operand of ``combo`` that is not divergent is a
    Python number ``dtype`` holds exactly: a float32 value compared with
    ``-0.75`` compares alike in float32 (NumPy) and float64 (Numba), where
    ``0.1``, rounded to float32 first, may not."""
    try:
        return all(type(e) in (int, float) and dtype.kind in "fc" and complex(dtype.type(e)) == e
                   for e, _, d in combo if not d)
    except (OverflowError, ValueError):
        return False


def operation(fn, operands, target, divergent, typemap, definitions):
    kinds = [_operand_kinds(v, divergent, typemap, definitions) for v in operands]
    if any(k is None for k in kinds):
        return False
    return _judge(fn, kinds, dtype_ndim(typemap.get(target)), target)


def _judge(fn, kinds, result, target):
    """None, (target, NumPy's types), or False (see ``_through``) for ``fn``
    applied to operands each given as [(eager sample, Numba's sample,
    whether divergent)], giving Numba's ``result`` (dtype, ndim)."""
    if result is None:
        return False
    combos = [[]]
    for options in kinds:
        combos = [c + [o] for c in combos for o in options]
    out = {}
    for combo in combos:
        eager = [e for e, _, _ in combo]
        # the divergent operands hold integers: Numba's floats hold them exactly
        exact = all(np.result_type(e).kind in "biu" for e, _, d in combo if d)
        with np.errstate(all="ignore"):
            try:
                got = np.result_type(fn(*eager))
                if fn in _COMPARISONS or got.kind == "b" and result[0].kind == "b":
                    comparing = np.result_type(*eager)
                    numba_comparing = np.result_type(*[n for _, n, _ in combo])
            except Exception:
                return False
        if fn in _COMPARISONS or got.kind == "b" and result[0].kind == "b":
            if comparing != numba_comparing and not (exact and comparing.kind in "biu") and \
                    not _exact(combo, comparing):
                return False
            continue
        if got == result[0]:
            continue
        cotangent = any(getattr(d, "cotangent", False) for _, _, d in combo)
        if exact and fn in _INTEGER_EXACT and got.kind in "biu" and result[0].kind in "fc":
            weak = result[1] == 0 and all(isinstance(e, (bool, int)) for e in eager)
            out[(got.str, weak)] = Eager(got, weak, cotangent)
            continue
        if cotangent and got.kind == result[0].kind and got.kind in "fc" and \
                np.promote_types(got, result[0]) == result[0]:
            # a cotangent's float32 arithmetic done in float64 (module doc)
            out[(got.str, False)] = Eager(got, False, True)
            continue
        return False
    return (target, list(out.values())) if out else None


def array_expression(expr, target, divergent, typemap, definitions):
    """``_judge`` through each operation of Numba's fused array expression
    ``expr`` (``(op, [operands])``, operands variables, constants or
    expressions again), each operand as [(eager sample, Numba's sample,
    whether divergent)]."""
    def walk(node):
        if isinstance(node, ir.Var):
            return _operand_kinds(node, divergent, typemap, definitions)
        if isinstance(node, ir.Const):
            return [(node.value, np.asarray(node.value)[()], False)]
        if isinstance(node, _Weak):
            return [(node.value, node.value, False)]
        fn, args = node
        kinds = [walk(a) for a in args]
        if any(k is None for k in kinds):
            return None
        with np.errstate(all="ignore"):
            try:
                numba_value = fn(*[k[0][1] for k in kinds])
                if not any(d for k in kinds for _, _, d in k):
                    return [(fn(*[k[0][0] for k in kinds]), numba_value, False)]
            except Exception:
                return None
        result = (np.result_type(numba_value), np.ndim(numba_value))
        verdict = _judge(fn, kinds, result, "")
        if verdict is False:
            return None
        if verdict is None:
            return [(numba_value, numba_value, False)]
        return [(e.sample(result[1]), numba_value, e) for e in verdict[1]]
    kinds = walk(expr)
    if kinds is None:
        return False
    if not any(d for _, _, d in kinds):
        return None
    return target, [Eager(np.result_type(e), False, getattr(d, "cotangent", False))
                    for e, _, d in kinds if d]
