"""Calls of NumPy primitives by other spellings that give Python numbers.

``math.sqrt(d)`` is NumPy's ``sqrt`` primitive, whose result is a NumPy
float64 scalar: strong next to a float32 array under NEP 50, where
Python's float is weak (``x32 / math.sqrt(d)`` would come out float64), and
no index (``x[math.floor(t)]``).  So a call of a ``math`` function or of
``round`` is the primitive, then the Python number Python gives
(``float(...)``/``int(...)``, which vmap batches as lanes of Python numbers).
Mixed into nothing: ``calls.Calls.call_object`` calls ``primitive_call``.
"""
import builtins
import math
import types

import gast
import numpy as np

from ..core import ir, primitives as P
from ..core.naming import base_name


# ``math`` functions give Python floats (``floor``, ``ceil`` and ``trunc``
# ints), and ``round(x)`` an int (``round(x, n)`` a float for a float): each
# is its NumPy primitive, whose result is then made the Python number it is
# in Python.  NumPy's would be a NumPy float64 scalar: strong next to a
# float32 array (``x / math.sqrt(d)`` float64), and no index (``x[round(t)]``).
_MATH_INTS = {"floor", "ceil", "trunc"}


def _python_number(obj, args, kwargs):
    """``float`` or ``int``: the Python type a call of ``obj`` returns when
    it is a ``math`` function or ``round``, else None."""
    if obj is builtins.round:
        return int if len(args) == 1 and not kwargs else None
    if getattr(obj, "__module__", None) == "math" or \
            (isinstance(obj, types.BuiltinFunctionType) and getattr(obj, "__self__", None) is math):
        return int if obj.__name__ in _MATH_INTS else float
    return None

def primitive_call(conv, obj, prim, args, kwargs, target):
    """The equation of a call of ``obj``, a spelling of primitive ``prim``
    (``conv``: the converter).  ``math`` functions and ``round`` give the
    Python number Python gives (``_python_number``); ``abs``/``pow``/
    ``round`` of number literals fold; ``math.log(x, base)`` is a ratio."""
    if obj in (builtins.abs, builtins.pow, builtins.round) and not kwargs and all(
            isinstance(a, gast.Constant) and type(a.value) in (int, float) for a in args):
        return ir.const(obj(*[a.value for a in args]))   # abs(-2.0): a Python float
    if obj is math.log and len(args) == 2 and not kwargs:
        # math.log(x, base) is log(x) / log(base) (np.log's second
        # argument is its output array)
        logs = [conv.emit(prim, [a], base=base_name("log", a)) for a in args]
        args, prim = [conv.emit(P.lookup(np.divide), logs, base="log")], P.lookup(float)
        return conv.emit(prim, args, target=target, base="log")
    kind = _python_number(obj, args, kwargs)
    if kind is not None:
        # math.sqrt(d), round(t): NumPy's function, then the Python
        # number Python's gives (weak next to float32, an int index)
        value = conv.emit(prim, args, kwargs, base=base_name(
            prim.name.split(".")[-1], *args[:1]))
        return conv.emit(P.lookup(kind), [value], target=target,
                         base=base_name(prim.name.split(".")[-1], *args[:1]))
    return conv.emit(prim, args, kwargs, target=target,
                     base=base_name(prim.name.split(".")[-1], *args[:1]))
