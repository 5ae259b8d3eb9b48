"""A call's arguments as compiled code takes them: flat leaves, a cache key.

Compiled code takes arrays and numbers; containers (dict, list, tuple,
namedtuple) are flattened into their leaves, static arguments folded in as
constants.  The key tells apart what needs a new specialisation: static
values, structure, each leaf's type (an array's dtype and rank, and its
size-1 axes for code that squeezes them, see ``unit_axes``).
"""
import numbers

import numpy as np

from ..core.naming import Namer
from ..errors import call_site
from .compile_errors import JitError
from .specialize import Const, Dyn
from .unit_axes import of_value
from .narrow_ints import small_ints
from .weak_scalars import mixed_kinds, needs_weak_scalars

__all__ = ["Signature"]


class Signature:
    """One call's signature (``full``: also the abstract arguments the
    specialiser takes, their leaves named; else the key and leaves only,
    which a call whose key is cached needs: a pytree of six leaves,
    16 -> 6 us).

    After ``of``: ``key``, ``leaves``, ``avs`` (None unless ``full``), and,
    when ``full``, ``ranks`` (leaf name -> an array's rank, which the
    specialiser folds in), ``units`` (leaf name -> its size-1 axes, or
    None where the code does not need them) and ``weak`` (a leaf is
    narrow: Python numbers are typed as NumPy would, see weak_scalars)."""

    def __init__(self, what, with_units, full=True):
        self.what = what              # "jit(f)", for messages
        self.with_units = with_units  # size-1 axes are part of the signature
        self.full = full
        self.names = Namer() if full else None
        self.ranks = {}
        self.units = {} if with_units else None
        self.weak = False
        # integers next to narrow floats ("int_float", weak_scalars.mixed_kinds),
        # integers narrower than 32 bits ("small_ints", narrow_ints)
        self.mixed = frozenset()
        self.numbers = set()    # leaves holding a Python number (weak in NumPy: NEP 50)
        self.key = self.leaves = self.avs = None

    def of(self, bound):
        """Flatten ``bound`` ({parameter: (value, static?)})."""
        key, leaves, avs = [], [], []
        for name, (value, static) in bound.items():
            if static:
                try:
                    hash(value)
                except TypeError:
                    raise JitError(
                        f"static argument '{name}' of {self.what} is a "
                        f"{type(value).__name__}, which is not hashable",
                        call_site(), "pass a hashable value (a tuple instead of a list, "
                        "a frozen mapping instead of a dict), or do not mark it static"
                    ) from None
                key.append(("static", name, type(value), value))
                avs.append(Const(value))
            else:
                av, k = self._flatten(value, name, leaves, name)
                key.append(k)
                avs.append(av)
        if self.full:
            self.weak = needs_weak_scalars(leaves)     # (dtypes are in the key)
            self.mixed = frozenset(
                [kind for kind, holds in (("int_float", self.weak and mixed_kinds(leaves)),
                                          ("small_ints", small_ints(leaves))) if holds])
        self.key, self.leaves, self.avs = tuple(key), leaves, (avs if self.full else None)
        return self

    def _flatten(self, value, path, leaves, hint):
        full = self.full
        if isinstance(value, dict):
            items, keys = {}, []
            for k, v in value.items():
                if not isinstance(k, (str, int)):
                    raise self._bad_leaf(path, k, "has a key of type " + type(k).__name__)
                av, sub = self._flatten(v, f"{path}[{k!r}]" if full else None, leaves,
                                        f"{hint}_{k}" if full else None)
                items[k] = av
                keys.append((k, sub))
            return items, (type(value), tuple(keys))
        if isinstance(value, (list, tuple)):
            items, keys = [], []
            for i, v in enumerate(value):
                av, sub = self._flatten(v, f"{path}[{i}]" if full else None, leaves,
                                        f"{hint}_{i}" if full else None)
                items.append(av)
                keys.append(sub)
            if hasattr(type(value), "_fields"):
                return type(value)(*items), (type(value), tuple(keys))
            return type(value)(items), (type(value), tuple(keys))
        if value is None:
            return Const(None), None
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                raise self._bad_leaf(path, value, f"is an array of dtype {value.dtype}")
            if not value.dtype.isnative:
                # Numba types native byte order only: a big-endian array
                # enters as its native copy (NumPy's arithmetic on it gives
                # native results too; the argument is never written)
                value = value.astype(value.dtype.newbyteorder("="))
            # a 0-d array enters as the number it holds (its dtype kept): NumPy's
            # arithmetic gives numbers from 0-d arrays, so a path that computes
            # and a path that passes the argument on then agree in type
            leaves.append(value[()] if value.ndim == 0 else value)
            units = of_value(value) if self.with_units else None
            if full:
                name = self._leaf_name(hint)
                self.ranks[name] = value.ndim        # the specialiser folds x.ndim
                if units is not None:
                    self.units[name] = units
            av = Dyn(name) if full else None
            if units is not None:
                return av, (value.dtype.char, value.ndim, units)
            return av, (value.dtype.char, value.ndim)
        if isinstance(value, (bool, numbers.Number, np.generic)) and not isinstance(value, str):
            if isinstance(value, np.generic) and value.dtype.kind not in "biufc":
                raise self._bad_leaf(path, value, f"has dtype {value.dtype}")
            leaves.append(value)
            if not full:
                return None, type(value)
            name = self._leaf_name(hint)
            if self.units is not None:
                self.units[name] = ()
            if type(value) in (int, float, complex):
                self.numbers.add(name)
            return Dyn(name), type(value)
        raise self._bad_leaf(path, value, f"is a {type(value).__name__}")

    def _leaf_name(self, hint):
        return self.names.fresh(str(hint) or "leaf")

    def _bad_leaf(self, path, value, what):
        return JitError(
            f"{self.what}: argument {path} {what} ({_short(value)}); compiled code "
            "takes arrays, numbers and containers (dict, list, tuple, namedtuple) of them",
            call_site(), "mark it static (static_argnums=/static_argnames=), flatten it, "
            "or run without jit (tx.disable_jit())")


def _short(value, limit=50):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
